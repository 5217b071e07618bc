//! Derived reads at an explicit `as_of`: movements, one customer's replay,
//! MRR, subscriptions and lifecycle fields, and the analytics customer
//! views.

use super::Ledger;
use crate::derive::{CurrentSubscription, CustomerMovements, CustomerProfile, Movement, Replay};
use crate::error::Result;
use crate::money::{Cents, Currency};
use crate::query::{MovementFilter, ReportParams};
use chrono::{DateTime, Datelike, Utc};
use rayon::prelude::*;
use serde_json::Value;
use std::collections::BTreeMap;
use std::sync::Arc;

impl Ledger {
    /// One customer's replay at `as_of` (an empty replay for a customer
    /// without subscription history).
    ///
    /// # Errors
    ///
    /// [`Error::NotFound`](crate::Error::NotFound) when there is no such customer; [`Error::MissingFxRate`](crate::Error::MissingFxRate) when the
    /// customer pays in several currencies and a day's rate is missing.
    pub fn replay(&self, customer: &str, as_of: DateTime<Utc>) -> Result<Replay> {
        self.derived().replay(customer, as_of)
    }

    /// Every customer's movements at `as_of`, read in place from the cached
    /// replays: customer by customer in id order, each customer's rows by
    /// date then currency. For consumers that aggregate rows rather than
    /// list them (monthly totals, say): it skips the copy and the ordering
    /// by date that [`Ledger::movements`] makes of every row.
    ///
    /// # Errors
    ///
    /// [`Error::MissingFxRate`](crate::Error::MissingFxRate) when a customer paying in several currencies needs a rate the
    /// FX table lacks.
    pub fn customer_movements(&self, as_of: DateTime<Utc>) -> Result<CustomerMovements> {
        Ok(CustomerMovements::new(self.derived().replays(as_of)?))
    }

    /// A customer's MRR per currency at the instant `at`, as known at `as_of`
    /// (a lapse counts only once `as_of` is past its grace period).
    ///
    /// # Errors
    ///
    /// [`Error::NotFound`](crate::Error::NotFound) when there is no such customer.
    pub fn customer_mrr_at(
        &self,
        customer: &str,
        at: DateTime<Utc>,
        as_of: DateTime<Utc>,
    ) -> Result<BTreeMap<Currency, Cents>> {
        Ok(self
            .derived()
            .replay_until(customer, at, as_of)?
            .mrr_by_currency())
    }

    /// The customer's paying subscriptions at `as_of` (MRR above 0), in the
    /// order their latest invoices applied.
    ///
    /// # Errors
    ///
    /// [`Error::NotFound`](crate::Error::NotFound) when there is no such customer.
    ///
    /// # Examples
    ///
    /// ```
    /// # use serde_json::json;
    /// # use submetrics::{Ledger, Settings};
    /// # let mut ledger = Ledger::new(Settings::default());
    /// # ledger.upsert_plans(&[json!({"id": "m", "name": "Monthly", "billing_freq": "month", "currency": "USD"})]);
    /// # ledger.upsert_customers(&[json!({"id": "acme", "name": "Acme"})]);
    /// # ledger.upsert_invoices(&[json!({"id": "inv-1", "customer_id": "acme", "type": "subscription",
    /// #     "plan_id": "m", "invoice_date": "2024-01-15", "amount": 5000, "currency": "USD"})]);
    /// let as_of = submetrics::parse_as_of("2024-01-31", ledger.settings())?;
    /// let subscriptions = ledger.current_subscriptions("acme", as_of)?;
    /// assert_eq!(subscriptions.len(), 1);
    /// assert_eq!(subscriptions[0].plan_id.as_str(), "m");
    /// assert_eq!(subscriptions[0].mrr, 5000);
    /// # Ok::<(), submetrics::Error>(())
    /// ```
    pub fn current_subscriptions(
        &self,
        customer: &str,
        as_of: DateTime<Utc>,
    ) -> Result<Vec<CurrentSubscription>> {
        let derived = self.derived();
        let replay = derived.replay(customer, as_of)?;
        Ok(derived.paying_subscriptions(&replay))
    }

    /// The customer's derived lifecycle fields at `as_of`: its status, when
    /// its trial and paid subscription started, its cancellation, its MRR per
    /// currency. Values the customer record gives fill in where the invoices
    /// say nothing.
    ///
    /// # Errors
    ///
    /// [`Error::NotFound`](crate::Error::NotFound) when there is no such customer.
    ///
    /// # Examples
    ///
    /// ```
    /// # use serde_json::json;
    /// # use submetrics::{Ledger, Settings};
    /// # let mut ledger = Ledger::new(Settings::default());
    /// # ledger.upsert_plans(&[json!({"id": "m", "name": "Monthly", "billing_freq": "month", "currency": "USD"})]);
    /// # ledger.upsert_customers(&[json!({"id": "acme", "name": "Acme"})]);
    /// # ledger.upsert_invoices(&[json!({"id": "inv-1", "customer_id": "acme", "type": "subscription",
    /// #     "plan_id": "m", "invoice_date": "2024-01-15", "amount": 5000, "currency": "USD"})]);
    /// use submetrics::CustomerStatus;
    ///
    /// let as_of = submetrics::parse_as_of("2024-01-31", ledger.settings())?;
    /// let profile = ledger.customer_profile("acme", as_of)?;
    /// assert_eq!(profile.status, CustomerStatus::Active);
    /// assert_eq!(profile.mrr.values().sum::<i64>(), 5000);
    /// # Ok::<(), submetrics::Error>(())
    /// ```
    pub fn customer_profile(
        &self,
        customer: &str,
        as_of: DateTime<Utc>,
    ) -> Result<CustomerProfile> {
        let derived = self.derived();
        let replay = derived.replay(customer, as_of)?;
        Ok(derived.profile_of(customer, &replay))
    }

    /// The analytics customer list (`GET /customers`).
    pub fn analytics_customers(
        &self,
        params: &ReportParams,
        as_of: DateTime<Utc>,
    ) -> Result<Value> {
        self.derived().analytics_customers(params, as_of)
    }

    /// The analytics detail of one customer (`GET /customers/{id}`).
    pub fn analytics_customer(
        &self,
        id: &str,
        params: &ReportParams,
        as_of: DateTime<Utc>,
    ) -> Result<Value> {
        self.derived().analytics_customer(id, params, as_of)
    }

    /// Movements up to and including the day of `as_of`, ordered by date,
    /// then customer id, then currency, kept by `filter`.
    ///
    /// # Errors
    ///
    /// [`Error::NotFound`](crate::Error::NotFound) when the filter names a customer that does not
    /// exist; [`Error::MissingFxRate`](crate::Error::MissingFxRate) when a customer paying in several
    /// currencies needs a rate the FX table lacks.
    ///
    /// # Examples
    ///
    /// ```
    /// # use serde_json::json;
    /// # use submetrics::{Ledger, Settings};
    /// # let mut ledger = Ledger::new(Settings::default());
    /// # ledger.upsert_plans(&[json!({"id": "m", "name": "Monthly", "billing_freq": "month", "currency": "USD"})]);
    /// # ledger.upsert_customers(&[json!({"id": "acme", "name": "Acme"})]);
    /// # ledger.upsert_invoices(&[json!({"id": "inv-1", "customer_id": "acme", "type": "subscription",
    /// #     "plan_id": "m", "invoice_date": "2024-01-15", "amount": 5000, "currency": "USD"})]);
    /// use submetrics::{MovementFilter, MovementKind};
    ///
    /// let as_of = submetrics::parse_as_of("2024-03-31", ledger.settings())?;
    /// let movements = ledger.movements(as_of, &MovementFilter::default())?;
    /// assert_eq!(movements.len(), 2); // new on 2024-01-15, churn when the month lapsed
    /// assert_eq!(movements[0].kind, MovementKind::New);
    /// assert_eq!(movements[0].mrr_change, 5000);
    /// assert_eq!(movements[1].kind, MovementKind::Churn);
    /// # Ok::<(), submetrics::Error>(())
    /// ```
    pub fn movements(
        &self,
        as_of: DateTime<Utc>,
        filter: &MovementFilter,
    ) -> Result<Vec<Movement>> {
        self.with_movements(as_of, filter, |rows| {
            if rows.len() < PARALLEL_ROWS {
                return rows.iter().map(|&row| row.clone()).collect();
            }
            (0..rows.len())
                .into_par_iter()
                .map(|k| {
                    warm_block_at(rows, k);
                    rows[k].clone()
                })
                .collect()
        })
    }

    /// Calls `each` with the rows of [`Ledger::movements`], in its order,
    /// borrowed where the replays hold them: the rows of one customer
    /// copied, every customer's not.
    pub(crate) fn with_movements<R>(
        &self,
        as_of: DateTime<Utc>,
        filter: &MovementFilter,
        each: impl FnOnce(&[&Movement]) -> R,
    ) -> Result<R> {
        let keep = |m: &Movement| {
            filter.from.is_none_or(|d| m.date >= d)
                && filter.to.is_none_or(|d| m.date <= d)
                && (filter.kinds.is_empty() || filter.kinds.contains(&m.kind))
        };
        // Rows come customer by customer in id order, each customer's by date
        // then currency: a stable sort on the date alone orders them by
        // (date, customer, currency).
        let Some(id) = &filter.customer else {
            let set = self.derived().replays(as_of)?;
            let replays: Vec<&Arc<Replay>> = set.values().collect();
            return Ok(each(&by_date(&replays, keep)));
        };
        let replay = self.derived().replay(id.as_str(), as_of)?;
        let mut rows: Vec<&Movement> = replay.movements.iter().filter(|m| keep(m)).collect();
        rows.sort_by_key(|m| m.date);
        Ok(each(&rows))
    }
}

/// Every replay's kept rows by date (stable: in the replays' order within a
/// date), borrowed. Rows span few days against their number, so they are
/// placed by counting the rows of each day (two sequential passes over the
/// (day, row) pairs) rather than sorted by comparison; rows spread over
/// more days than there are rows are sorted.
fn by_date<'a>(
    replays: &[&'a Arc<Replay>],
    keep: impl Fn(&Movement) -> bool + Sync,
) -> Vec<&'a Movement> {
    let mut dated: Vec<(i32, &Movement)> = replays
        .par_iter()
        .flat_map_iter(|r| {
            r.movements
                .iter()
                .filter(|m| keep(m))
                .map(|m| (m.date.num_days_from_ce(), m))
        })
        .collect();
    let Some((first_day, last_day)) = dated
        .iter()
        .map(|(day, _)| (*day, *day))
        .reduce(|(first, last), (day, _)| (first.min(day), last.max(day)))
    else {
        return Vec::new();
    };
    let days =
        usize::try_from(i64::from(last_day) - i64::from(first_day) + 1).unwrap_or(usize::MAX);
    if days > dated.len().max(DAYS_COUNTED) {
        dated.par_sort_by_key(|(day, _)| *day);
        return dated.into_iter().map(|(_, row)| row).collect();
    }
    let slot = |day: i32| (day - first_day) as usize;
    // Where each day's rows start in the listing.
    let mut next = vec![0usize; days];
    for (day, _) in &dated {
        next[slot(*day)] += 1;
    }
    let mut start = 0;
    for place in &mut next {
        let rows = *place;
        *place = start;
        start += rows;
    }
    let mut listing = vec![dated[0].1; dated.len()];
    for (day, row) in dated {
        let place = &mut next[slot(day)];
        listing[*place] = row;
        *place += 1;
    }
    listing
}

/// Rows spread over up to this many days are counted into place even when
/// they are fewer than the days (a few years of days cost little to count).
const DAYS_COUNTED: usize = 1 << 16;

/// Listings of more rows than this are copied on every core.
const PARALLEL_ROWS: usize = 4096;

/// Rows are read in blocks of this many: small enough that a block's rows
/// stay in cache while they are copied, large enough that its misses
/// overlap (32 to 128 measure the same).
const WARMED_ROWS: usize = 64;

/// When `k` starts a block of [`WARMED_ROWS`] rows, reads every row of the
/// block and its customer id's length in two tight loops, so that their
/// cache misses are in flight together, before the rows are copied one by
/// one (a loop that copies a row at a time waits for each miss in turn).
/// Rows sorted by date are spread over every customer's replay; with these
/// reads, copying them or writing them as columns takes half the time at
/// 10M invoices.
pub(crate) fn warm_block_at(rows: &[&Movement], k: usize) {
    if !k.is_multiple_of(WARMED_ROWS) {
        return;
    }
    let block = &rows[k.min(rows.len())..rows.len().min(k + WARMED_ROWS)];
    let mut touched = 0usize;
    for row in block {
        touched ^= row.mrr_change as usize ^ row.plans_after.len();
    }
    for row in block {
        touched ^= row.customer_id.as_str().len();
    }
    std::hint::black_box(touched);
}
