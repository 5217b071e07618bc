//! MRR movements (SEMANTICS section 4): the customer's MRR at the end of a day
//! compared with the end of the day before, classified as new, expansion,
//! contraction, churn or reactivation, with a subtype saying why.

use crate::error::Result;
use crate::fx::FxTable;
use crate::ids::{CustomerId, PlanId};
use crate::money::{Cents, Currency, Total};
use chrono::NaiveDate;
use serde::{Deserialize, Serialize};
use smallvec::SmallVec;
use std::collections::{BTreeMap, BTreeSet};

/// The five kinds of MRR movement.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MovementKind {
    /// MRR went from 0 to above 0 for a customer that never paid before (+1 customer).
    New,
    /// A paying customer's MRR went up.
    Expansion,
    /// A paying customer's MRR went down, staying above 0.
    Contraction,
    /// A paying customer's MRR went to 0 (-1 customer).
    Churn,
    /// MRR went from 0 to above 0 for a customer that paid on an earlier day (+1 customer).
    Reactivation,
}

impl MovementKind {
    /// Every kind, in the order reports list them.
    pub const ALL: [MovementKind; 5] = [
        MovementKind::New,
        MovementKind::Expansion,
        MovementKind::Contraction,
        MovementKind::Churn,
        MovementKind::Reactivation,
    ];

    /// The kind's place in [`MovementKind::ALL`] (the order they are declared in).
    pub(crate) fn index(self) -> usize {
        self as usize
    }

    /// The interface name: `new`, `expansion`, `contraction`, `churn` or `reactivation`.
    pub fn as_str(&self) -> &'static str {
        match self {
            MovementKind::New => "new",
            MovementKind::Expansion => "expansion",
            MovementKind::Contraction => "contraction",
            MovementKind::Churn => "churn",
            MovementKind::Reactivation => "reactivation",
        }
    }

    /// The kind with exactly this interface name (case-sensitive), else `None`.
    pub fn parse(name: &str) -> Option<MovementKind> {
        MovementKind::ALL.into_iter().find(|k| k.as_str() == name)
    }
}

/// Why a movement happened.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MovementSubtype {
    /// A new customer that had no trial first.
    New,
    /// A zero-amount subscription invoice (a trial) came before the first payment.
    NewFromTrial,
    /// MRR went up on the same set of paying plans.
    Expansion,
    /// The set of paying plans changed that day.
    Upgrade,
    /// MRR went down on the same set of paying plans.
    Contraction,
    /// The set of paying plans changed that day.
    Downgrade,
    /// A cancellation invoice, or a zero-amount invoice on a paying subscription.
    Cancellation,
    /// A refund took MRR to 0 (when refunds reduce MRR).
    Refund,
    /// No renewal within the grace period.
    Lapse,
    /// The only subtype of a reactivation.
    Reactivation,
}

impl MovementSubtype {
    /// Every subtype, grouped by kind in [`MovementKind::ALL`] order.
    pub const ALL: [MovementSubtype; 10] = [
        MovementSubtype::New,
        MovementSubtype::NewFromTrial,
        MovementSubtype::Expansion,
        MovementSubtype::Upgrade,
        MovementSubtype::Contraction,
        MovementSubtype::Downgrade,
        MovementSubtype::Cancellation,
        MovementSubtype::Refund,
        MovementSubtype::Lapse,
        MovementSubtype::Reactivation,
    ];

    /// The subtype's place in [`MovementSubtype::ALL`] (the order they are
    /// declared in).
    pub(crate) fn index(self) -> usize {
        self as usize
    }

    /// The interface name, snake_case (`new_from_trial`, ...).
    pub fn as_str(&self) -> &'static str {
        match self {
            MovementSubtype::New => "new",
            MovementSubtype::NewFromTrial => "new_from_trial",
            MovementSubtype::Expansion => "expansion",
            MovementSubtype::Upgrade => "upgrade",
            MovementSubtype::Contraction => "contraction",
            MovementSubtype::Downgrade => "downgrade",
            MovementSubtype::Cancellation => "cancellation",
            MovementSubtype::Refund => "refund",
            MovementSubtype::Lapse => "lapse",
            MovementSubtype::Reactivation => "reactivation",
        }
    }

    /// The subtype with exactly this interface name (case-sensitive), else `None`.
    pub fn parse(name: &str) -> Option<MovementSubtype> {
        MovementSubtype::ALL
            .into_iter()
            .find(|k| k.as_str() == name)
    }

    /// The movement kind this subtype belongs to.
    pub fn kind(&self) -> MovementKind {
        match self {
            MovementSubtype::New | MovementSubtype::NewFromTrial => MovementKind::New,
            MovementSubtype::Expansion | MovementSubtype::Upgrade => MovementKind::Expansion,
            MovementSubtype::Contraction | MovementSubtype::Downgrade => MovementKind::Contraction,
            MovementSubtype::Cancellation | MovementSubtype::Refund | MovementSubtype::Lapse => {
                MovementKind::Churn
            }
            MovementSubtype::Reactivation => MovementKind::Reactivation,
        }
    }
}

/// The plans of a customer's paying subscriptions, sorted by id. Most
/// customers pay for one plan, which is held inline: a movement row is
/// built, cloned and dropped without allocating.
pub type PlanList = SmallVec<[PlanId; 1]>;

/// One movement row: one customer, one day, one currency.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Movement {
    /// Local day in the ledger's time zone.
    pub date: NaiveDate,
    /// The customer whose MRR moved.
    pub customer_id: CustomerId,
    /// What the change was, from the day-end MRR before and after in the base currency.
    #[serde(rename = "type")]
    pub kind: MovementKind,
    /// Why it happened; always a subtype of `kind`.
    pub subtype: MovementSubtype,
    /// In the movement's own currency; negative for contraction and churn.
    pub mrr_change: Cents,
    /// `mrr_change` converted to the base currency at the day's rate.
    pub mrr_change_base_currency: Cents,
    /// +1 new or reactivation, -1 churn, else 0 (carried by one row per day).
    pub customer_count_change: i32,
    /// The change in the summed quantity of the customer's paying subscriptions in this
    /// currency.
    pub quantity_change: i64,
    /// The currency of `mrr_change`; a customer paying in several currencies has one row per
    /// currency that changed.
    pub currency: Currency,
    /// Plans of the customer's paying subscriptions at the end of the day before.
    pub plans_before: PlanList,
    /// Plans of the customer's paying subscriptions at the end of the day.
    pub plans_after: PlanList,
}

/// A customer's paying state: MRR, quantity and plans of its paying
/// subscriptions (the public, final form of a replay).
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Snapshot {
    /// MRR per currency (currencies with MRR 0 are absent).
    pub mrr: BTreeMap<Currency, Cents>,
    /// Summed quantity of paying subscriptions per currency.
    pub quantity: BTreeMap<Currency, i64>,
    /// Plans of the paying subscriptions.
    pub plans: BTreeSet<PlanId>,
}

/// The paying state at the end of one day during a replay: a reusable buffer
/// (cleared and refilled each day) with plans as indexes into the timeline's
/// sorted plan table. A customer almost always pays in one currency on one
/// or two plans, which it holds without allocating.
///
/// The MRR of a currency is summed over subscriptions exactly; a movement
/// reads it only as 64-bit cents ([`DayState::get`]), so that every running
/// sum of a customer's movements in one currency fits them too.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct DayState {
    /// (currency, MRR, quantity), sorted by currency.
    totals: SmallVec<[(Currency, Total, i64); 1]>,
    /// Plan indexes, sorted and distinct.
    plans: SmallVec<[u32; 2]>,
}

impl DayState {
    /// Refills from subscriptions given as (MRR, currency, plan index, quantity);
    /// only subscriptions with MRR above 0 count.
    #[inline]
    pub fn fill(
        &mut self,
        subscriptions: impl Iterator<Item = (Cents, Option<Currency>, Option<u32>, i64)>,
    ) {
        self.totals.clear();
        self.plans.clear();
        for (mrr, currency, plan, quantity) in subscriptions {
            if mrr <= 0 {
                continue;
            }
            if let Some(currency) = currency {
                match self.totals.iter_mut().find(|(c, _, _)| *c == currency) {
                    Some(entry) => {
                        entry.1 += mrr;
                        entry.2 += quantity;
                    }
                    None => self.totals.push((currency, Total::from(mrr), quantity)),
                }
            }
            if let Some(plan) = plan {
                self.plans.push(plan);
            }
        }
        // Most days hold one currency and one plan, already in order.
        if self.totals.len() > 1 {
            self.totals.sort_unstable_by_key(|(c, _, _)| *c);
        }
        if self.plans.len() > 1 {
            self.plans.sort_unstable();
            self.plans.dedup();
        }
    }

    /// Whether both states hold the same MRR in every currency, so no row
    /// moves between them: a day that only changed quantities or plans at
    /// the same price. Totals hold only currencies with MRR above 0, sorted,
    /// so the states agree exactly when their lists of (currency, MRR) do.
    #[inline]
    fn same_mrr_as(&self, other: &DayState) -> bool {
        self.totals.len() == other.totals.len()
            && self
                .totals
                .iter()
                .zip(&other.totals)
                .all(|((c1, m1, _), (c2, m2, _))| c1 == c2 && m1 == m2)
    }

    /// Whether any subscription pays.
    pub fn is_paying(&self) -> bool {
        self.totals.iter().any(|(_, mrr, _)| *mrr > Total::ZERO)
    }

    /// The MRR and quantity in `currency` on the day of `change`; an MRR
    /// beyond 64-bit cents is [`Error::OutOfRange`](crate::Error::OutOfRange)
    /// naming the customer.
    fn get(&self, currency: Currency, change: &DayChange) -> Result<(Cents, i64)> {
        let Some((_, mrr, quantity)) = self.totals.iter().find(|(c, _, _)| *c == currency) else {
            return Ok((0, 0));
        };
        Ok((mrr_cents(currency, *mrr, change)?, *quantity))
    }

    /// The MRR of every currency converted into `base` on the day (as it
    /// is when the day holds one currency), summed exactly.
    fn total_in(
        &self,
        change: &DayChange,
        base: Currency,
        fx: &FxTable,
        single: bool,
    ) -> Result<Total> {
        let mut total = Total::ZERO;
        for &(currency, mrr, _) in &self.totals {
            let mrr = mrr_cents(currency, mrr, change)?;
            total += if single {
                mrr
            } else {
                fx.convert(mrr, currency, base, change.date)?
            };
        }
        Ok(total)
    }
}

/// A customer's MRR in `currency` on the day of `change` as cents; beyond
/// 64-bit cents it is [`Error::OutOfRange`](crate::Error::OutOfRange)
/// naming the customer.
fn mrr_cents(currency: Currency, mrr: Total, change: &DayChange) -> Result<Cents> {
    mrr.cents(|| {
        format!(
            "the MRR of customer `{}` in {currency} on {}",
            change.customer_id, change.date
        )
    })
}

/// What happened during a day, for choosing subtypes.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct DayCauses {
    pub cancellation: bool,
    pub refund: bool,
    pub lapse: bool,
}

/// The context of one day's comparison.
pub(crate) struct DayChange<'a> {
    pub customer_id: &'a CustomerId,
    pub date: NaiveDate,
    pub before: &'a DayState,
    pub after: &'a DayState,
    /// The timeline's plan table that `DayState` plan indexes point into.
    pub plans: &'a [PlanId],
    pub causes: DayCauses,
    /// The customer had MRR above 0 at the end of an earlier day.
    pub paid_before: bool,
    /// A zero-amount subscription invoice preceded the first payment.
    pub trial_before: bool,
}

/// Classifies one day's change into movement rows, appended to `rows` (none
/// when nothing moved). Multi-currency customers are classified on the sum
/// converted into `base` at the day's rate and get one row per currency that
/// changed. A day that changed only quantities or plans at the same MRR
/// moves nothing, and returns before any work.
#[inline]
pub(crate) fn classify(
    change: &DayChange,
    base: Currency,
    fx: &FxTable,
    rows: &mut Vec<Movement>,
) -> Result<()> {
    if change.before.same_mrr_as(change.after) {
        return Ok(());
    }
    classify_mrr_change(change, base, fx, rows)
}

/// [`classify`] for a day whose MRR changed in some currency.
fn classify_mrr_change(
    change: &DayChange,
    base: Currency,
    fx: &FxTable,
    rows: &mut Vec<Movement>,
) -> Result<()> {
    let (before, after) = (change.before, change.after);
    // The currencies either side holds, sorted and distinct: most days
    // compare one currency with itself or with nothing.
    let currencies: SmallVec<[Currency; 2]> = match (&before.totals[..], &after.totals[..]) {
        ([(only, _, _)], []) | ([], [(only, _, _)]) => SmallVec::from_slice(&[*only]),
        ([(one, _, _)], [(other, _, _)]) if one == other => SmallVec::from_slice(&[*one]),
        _ => {
            let mut all: SmallVec<[Currency; 2]> = SmallVec::new();
            for (currency, _, _) in before.totals.iter().chain(&after.totals) {
                if !all.contains(currency) {
                    all.push(*currency);
                }
            }
            all.sort_unstable();
            all
        }
    };
    let single = currencies.len() == 1;
    let a = before.total_in(change, base, fx, single)?;
    let b = after.total_in(change, base, fx, single)?;
    let zero = Total::ZERO;
    let plans_changed = before.plans != after.plans;
    let subtype_for = |delta: Cents| -> MovementSubtype {
        if a <= zero && b > zero {
            if change.paid_before {
                MovementSubtype::Reactivation
            } else if change.trial_before {
                MovementSubtype::NewFromTrial
            } else {
                MovementSubtype::New
            }
        } else if a > zero && b <= zero {
            if change.causes.cancellation {
                MovementSubtype::Cancellation
            } else if change.causes.refund {
                MovementSubtype::Refund
            } else {
                MovementSubtype::Lapse
            }
        } else if b > a || (b == a && delta > 0) {
            if plans_changed {
                MovementSubtype::Upgrade
            } else {
                MovementSubtype::Expansion
            }
        } else if plans_changed {
            MovementSubtype::Downgrade
        } else {
            MovementSubtype::Contraction
        }
    };
    let count_change = match (a > zero, b > zero) {
        (false, true) => 1,
        (true, false) => -1,
        _ => 0,
    };
    // Written straight into the pushed row: a list built aside and moved in
    // costs more than filling it in place.
    let write_names = |state: &DayState, names: &mut PlanList| {
        for plan in &state.plans {
            if let Some(id) = change.plans.get(*plan as usize) {
                names.push(id.clone());
            }
        }
    };
    // One row per currency that moved; the first carries the count change.
    let mut first = true;
    for currency in currencies {
        let (mrr_before, quantity_before) = before.get(currency, change)?;
        let (mrr_after, quantity_after) = after.get(currency, change)?;
        // Both are 0 or more, so their difference fits.
        let delta = mrr_after - mrr_before;
        if delta == 0 {
            continue;
        }
        let subtype = subtype_for(delta);
        rows.push(Movement {
            date: change.date,
            customer_id: change.customer_id.clone(),
            kind: subtype.kind(),
            subtype,
            mrr_change: delta,
            mrr_change_base_currency: fx.convert(delta, currency, base, change.date)?,
            customer_count_change: if first { count_change } else { 0 },
            quantity_change: quantity_after - quantity_before,
            currency,
            plans_before: PlanList::new(),
            plans_after: PlanList::new(),
        });
        first = false;
        if let Some(row) = rows.last_mut() {
            write_names(before, &mut row.plans_before);
            write_names(after, &mut row.plans_after);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_and_subtypes_are_indexed_by_their_place_in_all() {
        for (i, kind) in MovementKind::ALL.into_iter().enumerate() {
            assert_eq!(kind.index(), i);
        }
        for (i, subtype) in MovementSubtype::ALL.into_iter().enumerate() {
            assert_eq!(subtype.index(), i);
        }
    }

    fn state(subscriptions: &[(Cents, &str, u32, i64)]) -> DayState {
        let mut state = DayState::default();
        state.fill(subscriptions.iter().map(|&(mrr, code, plan, quantity)| {
            (mrr, Currency::parse(code), Some(plan), quantity)
        }));
        state
    }

    fn rows_between(before: &DayState, after: &DayState) -> Vec<Movement> {
        let customer_id = CustomerId::from("c");
        let plans = [PlanId::from("basic"), PlanId::from("pro")];
        // Two dollars a euro.
        let mut fx = FxTable::new(Currency::USD);
        fx.insert([crate::fx::FxRate {
            date: NaiveDate::from_ymd_opt(2024, 1, 1).unwrap(),
            currency: Currency::parse("EUR").unwrap(),
            rate: rust_decimal::Decimal::new(5, 1),
        }]);
        let mut rows = Vec::new();
        classify(
            &DayChange {
                customer_id: &customer_id,
                date: NaiveDate::from_ymd_opt(2024, 3, 1).unwrap(),
                before,
                after,
                plans: &plans,
                causes: DayCauses::default(),
                paid_before: true,
                trial_before: false,
            },
            Currency::USD,
            &fx,
            &mut rows,
        )
        .unwrap();
        rows
    }

    #[test]
    fn a_day_that_changes_only_quantity_or_plans_at_the_same_mrr_moves_nothing() {
        let before = state(&[(1000, "USD", 0, 1)]);
        assert!(rows_between(&before, &state(&[(1000, "USD", 0, 3)])).is_empty());
        assert!(
            rows_between(&before, &state(&[(600, "USD", 0, 1), (400, "USD", 1, 2)])).is_empty()
        );
    }

    #[test]
    fn a_customer_mrr_beyond_64_bit_cents_in_one_currency_is_refused_naming_it() {
        let customer_id = CustomerId::from("c");
        let before = DayState::default();
        let change = |after: &DayState| {
            let mut rows = Vec::new();
            let fx = FxTable::new(Currency::USD);
            classify(
                &DayChange {
                    customer_id: &customer_id,
                    date: NaiveDate::from_ymd_opt(2024, 3, 1).unwrap(),
                    before: &before,
                    after,
                    plans: &[PlanId::from("p")],
                    causes: DayCauses::default(),
                    paid_before: false,
                    trial_before: false,
                },
                Currency::USD,
                &fx,
                &mut rows,
            )
            .map(|()| rows.iter().map(|r| r.mrr_change).collect::<Vec<_>>())
        };
        // Two subscriptions summing to exactly the largest 64-bit amount.
        let half = i64::MAX / 2;
        let at_most = state(&[(half, "USD", 0, 1), (half + 1, "USD", 0, 1)]);
        assert_eq!(change(&at_most), Ok(vec![i64::MAX]));
        let beyond = state(&[(half + 1, "USD", 0, 1), (half + 1, "USD", 0, 1)]);
        assert_eq!(
            change(&beyond).unwrap_err().to_string(),
            "the MRR of customer `c` in USD on 2024-03-01 is outside the range of 64-bit cents \
             (at most 9223372036854775807 either way)"
        );
    }

    #[test]
    fn the_same_amount_in_another_currency_or_beside_another_is_a_move() {
        let before = state(&[(1000, "USD", 0, 1)]);
        let in_euros = rows_between(&before, &state(&[(1000, "EUR", 0, 1)]));
        let changes: Vec<(Currency, Cents, MovementSubtype)> = in_euros
            .iter()
            .map(|row| (row.currency, row.mrr_change, row.subtype))
            .collect();
        assert_eq!(
            changes,
            [
                (
                    Currency::parse("EUR").unwrap(),
                    1000,
                    MovementSubtype::Expansion
                ),
                // The day is classified on the converted sum, which grew.
                (Currency::USD, -1000, MovementSubtype::Expansion),
            ]
        );
        let beside = rows_between(&before, &state(&[(1000, "USD", 0, 1), (1000, "EUR", 1, 1)]));
        let changes: Vec<(Currency, Cents, Cents)> = beside
            .iter()
            .map(|row| (row.currency, row.mrr_change, row.mrr_change_base_currency))
            .collect();
        assert_eq!(changes, [(Currency::parse("EUR").unwrap(), 1000, 2000)]);
    }
}
