//! The derived state of a ledger: every customer's replay at an `as_of`,
//! cached with the instants it serves, and the full replay that fills it.

use super::daily_totals::DailyTotals;
use super::timeline::{Replay, ReplayWindow, Timeline};
use super::{CacheCell, Derived};
use crate::error::{Error, Result};
use crate::ids::{CustomerId, PlanId};
use crate::store::{PositionList, Records, Stale, Store};
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

/// Every customer of a replay set with its replay, in customer id order:
/// the list walks over runs of customers take.
pub(crate) fn replay_list(set: &ReplaySet) -> Vec<(&CustomerId, &Replay)> {
    set.iter().map(|(id, replay)| (id, &**replay)).collect()
}

/// The replays at the `as_of` instants of `window`. Replays depend only on the
/// customer's records, the settings and the FX table: a write marks the
/// customers it touches stale, and the next read replays only them; a
/// settings or FX change drops the cache.
#[derive(Debug)]
pub(crate) struct ReplayCache {
    set: ReplaySet,
    /// Where every replay of `set` holds: the `as_of` instants it serves.
    window: ReplayWindow,
    stale: HashSet<CustomerId, FixedState>,
    /// Every replay is out of date (settings or FX changed): the next read
    /// replays every customer.
    outdated: bool,
    /// The per-day totals of `set`, once a report asked for them.
    daily: Option<Arc<DailyTotals>>,
}

impl ReplayCache {
    /// Takes in what writes to the store changed: their customers are
    /// replayed at the next read, everyone after a settings or FX change.
    pub(crate) fn invalidate(cache: &mut CacheCell, stale: Stale) {
        let cache = cache
            .get_mut()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Some(cache) = cache {
            cache.outdated |= stale.all;
            if cache.stale.is_empty() {
                cache.stale = stale.customers;
            } else {
                cache.stale.extend(stale.customers);
            }
        }
    }
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

/// The customer's timeline from its invoice positions.
fn build_timeline_of(store: &Store, id: &CustomerId, invoices: &PositionList) -> Timeline {
    let plans = |plan: &PlanId| store.plans.get(plan);
    Timeline::build(
        id.clone(),
        store.invoices_at(invoices.as_slice()),
        invoices.ids_ascending(),
        &plans,
        &store.settings,
    )
}

/// The customer's timeline, built from its invoices: `None` for a customer
/// without a record or without any event.
pub(crate) fn timeline(store: &Store, id: &str) -> Option<Timeline> {
    let (index, id, _) = store.customers.get_full(id)?;
    let invoices = store.invoices_by_customer.get(index)?;
    Some(build_timeline_of(store, id, invoices)).filter(|timeline| !timeline.is_empty())
}

/// Every customer's replay at `as_of` in customer id order, and the window
/// where all of them hold. Each core builds a stretch of customers'
/// timelines straight from their invoice positions and replays each at
/// once, so no timeline outlives its replay. Every customer with invoices
/// has a record (an invoice needs its customer, and deleting a customer
/// deletes its invoices), so no customer lookup is needed. The results land
/// in one list, a slot per customer, where each core writes its own
/// (collecting an unknown number would gather pieces and copy them into one
/// list after, on one core); the first error found is kept aside. The cores
/// also hash each id for the set, which is then filled in one pass that
/// reads no id again.
fn replay_all(
    store: &Store,
    as_of: DateTime<Utc>,
) -> Result<(Records<CustomerId, Arc<Replay>>, ReplayWindow)> {
    let hasher = FixedState::default();
    let lists = &store.invoices_by_customer;
    let failure: Mutex<Option<Error>> = Mutex::new(None);
    let mut replays: Vec<Option<Replayed>> = Vec::new();
    (0..lists.len())
        .into_par_iter()
        .map(|k| {
            let (id, _) = store.customers.get_index(k)?;
            let timeline = build_timeline_of(store, id, &lists[k]);
            if timeline.is_empty() {
                return None;
            }
            match timeline.simulate(as_of, as_of, &store.settings, &store.fx) {
                // Each with its id's sort prefix and hash, taken while the
                // string is in cache (ordering by id then reads strings only
                // on equal prefixes), and its window, so narrowing the
                // cache's window reads no replay again.
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
    // Customers stored in id order (ids that count up) need no sort.
    let mut replays: Vec<Replayed> = replays.into_iter().flatten().collect();
    let by_id = |a: &Replayed, b: &Replayed| a.prefix.cmp(&b.prefix).then_with(|| a.id.cmp(&b.id));
    if !replays.is_sorted_by(|a, b| by_id(a, b).is_le()) {
        replays.par_sort_unstable_by(by_id);
    }
    let mut window = ReplayWindow::default();
    for replayed in &replays {
        window.narrow(&replayed.window);
    }
    let mut set = Records::with_capacity_and_hasher(replays.len(), hasher);
    for Replayed {
        hash, id, replay, ..
    } in replays
    {
        // Customer ids are distinct: the entry is vacant without comparing ids.
        if let RawEntryMut::Vacant(entry) = set.raw_entry_mut_v1().from_hash(hash, |_| false) {
            entry.insert_hashed_nocheck(hash, id, replay);
        }
    }
    Ok((set, window))
}

/// Replays the cache's stale customers again at `as_of`, which the cache's
/// window holds (removing those without a timeline), in place unless a
/// reader still holds the set, and patches the per-day totals with them
/// (dropping the totals when they cannot be patched). The cache's window
/// then holds only where the new replays hold too.
fn patch_cache(store: &Store, cached: &mut ReplayCache, as_of: DateTime<Utc>) -> Result<()> {
    let stale: Vec<CustomerId> = cached.stale.drain().collect();
    let old: Vec<Option<Arc<Replay>>> =
        stale.iter().map(|id| cached.set.get(id).cloned()).collect();
    let set = Arc::make_mut(&mut cached.set);
    for id in &stale {
        let position = set.binary_search_keys(id);
        match timeline(store, id.as_str()) {
            Some(timeline) => {
                let replay = timeline.simulate(as_of, as_of, &store.settings, &store.fx)?;
                cached.window.narrow(&replay.window);
                let replay = Arc::new(replay);
                match position {
                    Ok(i) => set[i] = replay,
                    Err(i) => {
                        set.shift_insert(i, id.clone(), replay);
                    }
                }
            }
            None => {
                if let Ok(i) = position {
                    set.shift_remove_index(i);
                }
            }
        }
    }
    if let Some(daily) = cached.daily.as_mut() {
        let changes = stale
            .iter()
            .zip(&old)
            .map(|(id, old)| (old.as_deref(), set.get(id).map(|replay| &**replay)));
        if !matches!(Arc::make_mut(daily).patch(changes, &store.fx), Ok(true)) {
            cached.daily = None;
        }
    }
    Ok(())
}

impl Derived<'_> {
    /// Every customer's replay at `as_of`, computed in parallel and cached.
    /// The cache serves any `as_of` at which the same events apply and lie
    /// ahead for every customer (a service asking at "now" reuses it until
    /// an event's time passes); after a write only the customers it touched
    /// are replayed again.
    pub(crate) fn replays(&self, as_of: DateTime<Utc>) -> Result<ReplaySet> {
        let store = self.store();
        let mut cache = self
            .cache
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        // A few stale customers are patched in; many mean a full replay.
        if let Some(cached) = cache.as_mut()
            && !cached.outdated
            && cached.window.contains(as_of)
            && cached.stale.len() <= (cached.set.len() / 8).max(64)
        {
            if !cached.stale.is_empty()
                && let Err(error) = patch_cache(store, cached, as_of)
            {
                *cache = None;
                return Err(error);
            }
            return Ok(Arc::clone(&cached.set));
        }
        let old = cache.take();
        let ((), replayed) = rayon::join(move || free_replays(old), || replay_all(store, as_of));
        let (set, window) = replayed?;
        let set: ReplaySet = Arc::new(set);
        *cache = Some(ReplayCache {
            set: Arc::clone(&set),
            window,
            stale: HashSet::default(),
            outdated: false,
            daily: None,
        });
        Ok(set)
    }

    /// The per-day totals of every customer at `as_of` (see
    /// [`DailyTotals`]): built from the cached replays the first time a day
    /// asks for them, and patched along with the replays after writes.
    pub(crate) fn daily_totals(&self, as_of: DateTime<Utc>) -> Result<Arc<DailyTotals>> {
        let set = self.replays(as_of)?;
        let as_of_day = as_of.with_timezone(&self.settings.timezone).date_naive();
        let mut cache = self
            .cache
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        // Another reader may have moved the cache to another `as_of` meanwhile.
        let cached = cache.as_mut().filter(|c| Arc::ptr_eq(&c.set, &set));
        if let Some(daily) = cached
            .as_ref()
            .and_then(|c| c.daily.as_ref())
            .filter(|d| d.as_of_day() == as_of_day)
        {
            return Ok(Arc::clone(daily));
        }
        let built = Arc::new(DailyTotals::build(
            set.values().map(|replay| &**replay),
            self.settings.base_currency,
            &self.fx,
            as_of_day,
        )?);
        if let Some(cached) = cached {
            cached.daily = Some(Arc::clone(&built));
        }
        Ok(built)
    }

    /// One customer's replay at `as_of` (an empty replay for a customer
    /// without subscription history); [`Error::NotFound`] when there is no
    /// such customer.
    pub(crate) fn replay(&self, customer: &str, as_of: DateTime<Utc>) -> Result<Replay> {
        self.replay_until(customer, as_of, as_of)
    }

    /// One customer's replay of the events up to `at`, as known at `as_of`.
    pub(crate) fn replay_until(
        &self,
        customer: &str,
        at: DateTime<Utc>,
        as_of: DateTime<Utc>,
    ) -> Result<Replay> {
        if self.customer(customer).is_none() {
            return Err(Error::NotFound {
                kind: crate::model::Customer::KIND,
                id: customer.to_string(),
            });
        }
        match timeline(self.store(), customer) {
            Some(timeline) => timeline.simulate(at, as_of, &self.settings, &self.fx),
            None => Ok(Replay::default()),
        }
    }
}
