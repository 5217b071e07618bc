//! What one day changes in the per-day totals, or (cumulated) the totals at
//! a day's end. Movements are summed by subtype, so that a breakdown by
//! subtype reads the totals too; a kind's amount is the sum of its
//! subtypes', but its customers are counted of their own (a customer
//! moving by two subtypes of one kind on a day counts once for the kind).

use super::PeriodStats;
use crate::derive::movements::{Movement, MovementKind, MovementSubtype};
use crate::money::Total;
use std::ops::{AddAssign, Sub};

const KINDS: usize = MovementKind::ALL.len();
const SUBTYPES: usize = MovementSubtype::ALL.len();

/// Where each amount is in [`DayFigures`]: movement amounts in the base
/// currency by subtype ([`MovementSubtype::ALL`] order), then every
/// customer's MRR converted into the base currency at the day's rate (at
/// the `as_of` rate after `as_of`).
const AMOUNTS: usize = 0;
const TOTAL_MRR: usize = AMOUNTS + SUBTYPES;
const AMOUNT_FIGURES: usize = TOTAL_MRR + 1;

/// Where each count is in [`DayFigures`]: customers with a movement of
/// each kind ([`MovementKind::ALL`] order) and of each subtype, the
/// customer count changes the movements of each subtype carry, the
/// movements of each subtype (a subtype any customer moved by has its group
/// in a breakdown by subtype, whatever the periods asked), and the
/// customers paying (MRR above zero in some currency).
const CUSTOMERS: usize = 0;
const SUBTYPE_CUSTOMERS: usize = CUSTOMERS + KINDS;
const COUNT_CHANGES: usize = SUBTYPE_CUSTOMERS + SUBTYPES;
const ROWS: usize = COUNT_CHANGES + SUBTYPES;
const PAYING: usize = ROWS + SUBTYPES;
const COUNT_FIGURES: usize = PAYING + 1;

/// The figures of a day in two flat arrays (see [`AMOUNTS`] and
/// [`CUSTOMERS`] for what each is), so that adding two days is two loops
/// over numbers. Amounts are exact 128-bit sums (see [`Total`]): a level
/// sums every movement since the first day, far more than any one period,
/// and a period's figures are the difference of two levels. Counts of
/// customers and rows stay far inside 64 bits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct DayFigures {
    amounts: [i128; AMOUNT_FIGURES],
    counts: [i64; COUNT_FIGURES],
}

impl Default for DayFigures {
    fn default() -> DayFigures {
        DayFigures {
            amounts: [0; AMOUNT_FIGURES],
            counts: [0; COUNT_FIGURES],
        }
    }
}

impl DayFigures {
    /// Adds one movement of a customer's day. `first_of_kind` and
    /// `first_of_subtype` say whether it is the customer's first of its
    /// kind, and of its subtype, that day: the customer is counted once
    /// for each.
    pub(super) fn add_movement(
        &mut self,
        m: &Movement,
        first_of_kind: bool,
        first_of_subtype: bool,
    ) {
        let subtype = m.subtype.index();
        self.amounts[AMOUNTS + subtype] += i128::from(m.mrr_change_base_currency);
        let counts = &mut self.counts;
        counts[CUSTOMERS + m.kind.index()] += i64::from(first_of_kind);
        counts[SUBTYPE_CUSTOMERS + subtype] += i64::from(first_of_subtype);
        counts[COUNT_CHANGES + subtype] += i64::from(m.customer_count_change);
        counts[ROWS + subtype] += 1;
    }

    /// The movement columns of these figures (of a period: the level at its
    /// end less the level before it), every subtype counted.
    pub(super) fn movement_stats(&self) -> PeriodStats {
        let amounts = &self.amounts[AMOUNTS..AMOUNTS + SUBTYPES];
        let mut stats = PeriodStats {
            customers_diff: self.counts[COUNT_CHANGES..COUNT_CHANGES + SUBTYPES]
                .iter()
                .sum(),
            all_movements: Total::exact(amounts.iter().sum()),
            ..PeriodStats::default()
        };
        for kind in MovementKind::ALL {
            let amount = MovementSubtype::ALL
                .iter()
                .zip(amounts)
                .filter(|(subtype, _)| subtype.kind() == kind)
                .map(|(_, amount)| amount)
                .sum();
            let customers = self.counts[CUSTOMERS + kind.index()];
            set_column(&mut stats, kind, Total::exact(amount), customers);
        }
        stats
    }

    /// The movement columns of one subtype's movements alone, as a series
    /// kept to that subtype counts them: its amount and customers in its
    /// kind's columns, and the customer count changes it carries.
    pub(super) fn subtype_stats(&self, subtype: MovementSubtype) -> PeriodStats {
        let s = subtype.index();
        let mut stats = PeriodStats {
            customers_diff: self.counts[COUNT_CHANGES + s],
            ..PeriodStats::default()
        };
        let amount = Total::exact(self.amounts[AMOUNTS + s]);
        set_column(
            &mut stats,
            subtype.kind(),
            amount,
            self.counts[SUBTYPE_CUSTOMERS + s],
        );
        stats
    }

    /// Whether any movement of `subtype` is counted in these figures.
    pub(super) fn moves_by(&self, subtype: MovementSubtype) -> bool {
        self.counts[ROWS + subtype.index()] != 0
    }

    /// Customers paying at the end of the day (a change of them, for a
    /// day's change).
    pub(super) fn paying(&self) -> i64 {
        self.counts[PAYING]
    }

    /// Every customer's MRR in the base currency (a change of it, for a
    /// day's change).
    pub(super) fn total_mrr(&self) -> Total {
        Total::exact(self.amounts[TOTAL_MRR])
    }

    /// Adds to the paying customers (one started or stopped paying).
    pub(super) fn add_paying(&mut self, customers: i64) {
        self.counts[PAYING] += customers;
    }

    /// Adds to the MRR in the base currency.
    pub(super) fn add_total_mrr(&mut self, amount: Total) {
        self.amounts[TOTAL_MRR] += i128::from(amount);
    }

    /// Each figure combined with the same figure of `other`.
    fn combined(
        mut self,
        other: DayFigures,
        amounts: impl Fn(i128, i128) -> i128,
        counts: impl Fn(i64, i64) -> i64,
    ) -> DayFigures {
        for (figure, theirs) in self.amounts.iter_mut().zip(other.amounts) {
            *figure = amounts(*figure, theirs);
        }
        for (figure, theirs) in self.counts.iter_mut().zip(other.counts) {
            *figure = counts(*figure, theirs);
        }
        self
    }

    /// Every figure times `sign` (1, or -1 to take a contribution back).
    pub(super) fn scaled(self, sign: i64) -> DayFigures {
        let wide = i128::from(sign);
        self.combined(
            DayFigures::default(),
            |figure, _| figure * wide,
            |figure, _| figure * sign,
        )
    }
}

/// Sets the amount and customers of `kind`'s movement columns.
fn set_column(stats: &mut PeriodStats, kind: MovementKind, amount: Total, customers: i64) {
    let (amount_column, customers_column) = match kind {
        MovementKind::New => (&mut stats.new, &mut stats.new_customers),
        MovementKind::Expansion => (&mut stats.expansion, &mut stats.expansion_customers),
        MovementKind::Contraction => (&mut stats.contraction, &mut stats.contraction_customers),
        MovementKind::Churn => (&mut stats.churn, &mut stats.churn_customers),
        MovementKind::Reactivation => (&mut stats.reactivation, &mut stats.reactivation_customers),
    };
    *amount_column = amount;
    *customers_column = customers;
}

/// In place: the totals add up a customer-day at a time, and a copy of
/// both arrays for each would cost more than the adding.
impl AddAssign for DayFigures {
    fn add_assign(&mut self, other: DayFigures) {
        for (figure, theirs) in self.amounts.iter_mut().zip(other.amounts) {
            *figure += theirs;
        }
        for (figure, theirs) in self.counts.iter_mut().zip(other.counts) {
            *figure += theirs;
        }
    }
}

impl Sub for DayFigures {
    type Output = DayFigures;
    fn sub(self, other: DayFigures) -> DayFigures {
        self.combined(other, |a, b| a - b, |a, b| a - b)
    }
}
