//! The derived state of a ledger: every customer's replay at an `as_of`,
//! cached with the instants it serves, and the full replay that fills it.

use super::position_list::PositionList;
use super::{Ledger, Records};
use crate::error::{Error, Result};
use crate::ids::{CustomerId, PlanId};
use crate::timeline::{Replay, ReplayWindow, Timeline};
use chrono::{DateTime, Utc};
use foldhash::fast::FixedState;
use indexmap::map::{RawEntryApiV1, raw_entry_v1::RawEntryMut};
use rayon::prelude::*;
use std::collections::HashSet;
use std::hash::BuildHasher;
use std::sync::{Arc, Mutex};

/// Replays of every customer at one `as_of`, sorted by customer id, shared
/// by the reports of a query.
pub(crate) type ReplaySet = Arc<Records<CustomerId, Arc<Replay>>>;

/// The replays at the `as_of` instants of `window`. Replays depend only on the
/// customer's records, the settings and the FX table: a write marks the
/// customers it touches stale, and the next read replays only them; a
/// settings or FX change drops the cache.
#[derive(Debug)]
pub(crate) struct ReplayCache {
    pub(super) set: ReplaySet,
    /// Where every replay of `set` holds: the `as_of` instants it serves.
    pub(super) window: ReplayWindow,
    pub(super) stale: HashSet<CustomerId, FixedState>,
    /// Every replay is out of date (settings or FX changed): the next read
    /// replays every customer.
    pub(super) outdated: bool,
    /// The per-day totals of `set`, once a report asked for them.
    pub(super) daily: Option<Arc<crate::reports::daily_totals::DailyTotals>>,
}

/// One customer's replay from a full replay, with what ordering and
/// storing it needs.
struct Replayed {
    prefix: [u8; 16],
    /// The id's hash in the replay set.
    hash: u64,
    id: CustomerId,
    window: ReplayWindow,
    replay: Arc<Replay>,
}

/// Frees the replays a full replay replaces, beside the replay. A reader may
/// still hold them: they are then freed after it.
pub(crate) fn free_replays(replays: Option<ReplayCache>) {
    let Some(Ok(replays)) = replays.map(|cache| Arc::try_unwrap(cache.set)) else {
        return;
    };
    drop(replays);
}

impl Ledger {
    /// Drops every cached replay, so the next read replays every customer
    /// from its invoices (what a settings or FX change does). The replays are
    /// freed beside that full replay.
    pub fn forget_replays(&mut self) {
        if let Some(cache) = self
            .replay_cache
            .get_mut()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
        {
            cache.outdated = true;
        }
    }

    /// Marks customers whose records changed, for the next read to replay.
    pub(super) fn mark_stale(&mut self, customers: impl IntoIterator<Item = CustomerId>) {
        let cache = self
            .replay_cache
            .get_mut()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Some(cache) = cache {
            cache.stale.extend(customers);
        }
    }

    fn build_timeline_of(&self, id: &CustomerId, invoices: &PositionList) -> Timeline {
        let plans = |plan: &PlanId| self.plans.get(plan);
        Timeline::build(
            id.clone(),
            self.invoices_at(invoices.as_slice()),
            invoices.ids_ascending(),
            &plans,
            &self.settings,
        )
    }

    /// The customer's timeline, built from its invoices: `None` for a
    /// customer without a record or without any event.
    pub(crate) fn timeline(&self, id: &str) -> Option<Timeline> {
        let (index, id, _) = self.customers.get_full(id)?;
        let invoices = self.invoices_by_customer.get(index)?;
        Some(self.build_timeline_of(id, invoices)).filter(|timeline| !timeline.is_empty())
    }

    /// Every customer's replay at `as_of` in customer id order, and the
    /// window where all of them hold. Each core builds a stretch of
    /// customers' timelines straight from their invoice positions and
    /// replays each at once, so no timeline outlives its replay. Every
    /// customer with invoices has a record (an invoice needs its customer,
    /// and deleting a customer deletes its invoices), so no customer lookup
    /// is needed. The results land in one list, a slot per customer, where
    /// each core writes its own (collecting an unknown number would gather
    /// pieces and copy them into one list after, on one core); the first
    /// error found is kept aside. The cores also hash each id for the set,
    /// which is then filled in one pass that reads no id again.
    pub(super) fn replay_all(
        &self,
        as_of: DateTime<Utc>,
    ) -> Result<(Records<CustomerId, Arc<Replay>>, ReplayWindow)> {
        let hasher = FixedState::default();
        let lists = &self.invoices_by_customer;
        let failure: Mutex<Option<Error>> = Mutex::new(None);
        let mut replays: Vec<Option<Replayed>> = Vec::new();
        (0..lists.len())
            .into_par_iter()
            .map(|k| {
                let (id, _) = self.customers.get_index(k)?;
                let timeline = self.build_timeline_of(id, &lists[k]);
                if timeline.is_empty() {
                    return None;
                }
                match timeline.simulate(as_of, as_of, &self.settings, &self.fx) {
                    // Each with its id's sort prefix and hash, taken while
                    // the string is in cache (ordering by id then reads
                    // strings only on equal prefixes), and its window, so
                    // narrowing the cache's window reads no replay again.
                    Ok(replay) => Some(Replayed {
                        prefix: id.sort_prefix(),
                        hash: hasher.hash_one(id),
                        id: id.clone(),
                        window: replay.window,
                        replay: Arc::new(replay),
                    }),
                    Err(error) => {
                        failure
                            .lock()
                            .unwrap_or_else(|poisoned| poisoned.into_inner())
                            .get_or_insert(error);
                        None
                    }
                }
            })
            .collect_into_vec(&mut replays);
        if let Some(error) = failure
            .into_inner()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
        {
            return Err(error);
        }
        // Customers without a replay sort last.
        replays.par_sort_unstable_by(|a, b| match (a, b) {
            (Some(a), Some(b)) => a.prefix.cmp(&b.prefix).then_with(|| a.id.cmp(&b.id)),
            (Some(_), None) => std::cmp::Ordering::Less,
            (None, Some(_)) => std::cmp::Ordering::Greater,
            (None, None) => std::cmp::Ordering::Equal,
        });
        let replayed = replays.iter().map_while(Option::as_ref);
        let mut window = ReplayWindow::default();
        let mut count = 0;
        for replayed in replayed {
            window.narrow(&replayed.window);
            count += 1;
        }
        let mut set = Records::with_capacity_and_hasher(count, hasher);
        for Replayed {
            hash, id, replay, ..
        } in replays.into_iter().map_while(|replayed| replayed)
        {
            // Customer ids are distinct: the entry is vacant without
            // comparing ids.
            if let RawEntryMut::Vacant(entry) = set.raw_entry_mut_v1().from_hash(hash, |_| false) {
                entry.insert_hashed_nocheck(hash, id, replay);
            }
        }
        Ok((set, window))
    }
}
