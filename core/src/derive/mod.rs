//! What the records imply: each customer's timeline of subscription events
//! ([`timeline`]), its replay at an `as_of` into daily movements
//! ([`movements`]), the cache of every customer's replay ([`replays`]) and
//! the per-day totals kept beside it ([`daily_totals`]).
//!
//! [`Derived`] is what the layers above read: the store's records plus the
//! replay cache, borrowed. It answers the store's reads (it dereferences to
//! the store) and the derived ones (replays, per-day totals, a customer's
//! lifecycle fields); it writes nothing.

pub(crate) mod daily_totals;
pub(crate) mod movements;
mod profile;
pub(crate) mod replays;
pub(crate) mod timeline;

pub use movements::{Movement, MovementKind, MovementSubtype, PlanList};
pub use profile::{CurrentSubscription, CustomerMovements, CustomerProfile, CustomerStatus};
pub use timeline::{Replay, ReplayWindow, SubscriptionState};

pub(crate) use daily_totals::{DailyTotals, PeriodStats};
pub(crate) use replays::{ReplayCache, ReplaySet, replay_list};

use crate::store::Store;
use std::ops::Deref;
use std::sync::Mutex;

/// The replay cache as a ledger holds it: empty until the first read.
pub(crate) type CacheCell = Mutex<Option<ReplayCache>>;

/// A store and its replay cache, borrowed for reading: what reports and
/// queries compute from. Reads of records go to the store; replays come
/// from the cache, which a read fills or patches (behind its lock).
#[derive(Clone, Copy)]
pub(crate) struct Derived<'a> {
    store: &'a Store,
    cache: &'a CacheCell,
}

impl<'a> Derived<'a> {
    /// A view of `store` whose replays are cached in `cache`.
    pub(crate) fn new(store: &'a Store, cache: &'a CacheCell) -> Derived<'a> {
        Derived { store, cache }
    }

    /// The store this view reads.
    pub(crate) fn store(&self) -> &'a Store {
        self.store
    }
}

impl Deref for Derived<'_> {
    type Target = Store;

    fn deref(&self) -> &Store {
        self.store
    }
}
