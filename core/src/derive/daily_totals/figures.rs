//! What one day changes in the per-day totals, or (cumulated) the totals at
//! a day's end. Movements are summed by subtype, so that a breakdown by
//! subtype reads the totals too; a kind's amount is the sum of its
//! subtypes', but its customers are counted of their own (a customer
//! moving by two subtypes of one kind on a day counts once for the kind).

use super::PeriodStats;
use crate::derive::movements::{Movement, MovementKind, MovementSubtype};
use crate::money::Total;
use std::ops::{Add, Sub};

const KINDS: usize = MovementKind::ALL.len();
const SUBTYPES: usize = MovementSubtype::ALL.len();

/// Where each figure is in [`DayFigures`]: movement amounts in the base
/// currency by subtype ([`MovementSubtype::ALL`] order), customers with a
/// movement of each kind ([`MovementKind::ALL`] order) and of each subtype,
/// the customer count changes the movements of each subtype carry, the
/// movements of each subtype (a subtype any customer moved by has its group
/// in a breakdown by subtype, whatever the periods asked), the customers
/// paying (MRR above zero in some currency), and every customer's MRR
/// converted into the base currency at the day's rate (at the `as_of` rate
/// after `as_of`).
const AMOUNTS: usize = 0;
const CUSTOMERS: usize = AMOUNTS + SUBTYPES;
const SUBTYPE_CUSTOMERS: usize = CUSTOMERS + KINDS;
const COUNT_CHANGES: usize = SUBTYPE_CUSTOMERS + SUBTYPES;
const ROWS: usize = COUNT_CHANGES + SUBTYPES;
const PAYING: usize = ROWS + SUBTYPES;
const TOTAL_MRR: usize = PAYING + 1;
const FIGURES: usize = TOTAL_MRR + 1;

/// The figures of a day in one flat array (see [`AMOUNTS`] for what each
/// is), so that adding two days is one loop over numbers. They are exact
/// 128-bit sums (see [`Total`]): the levels sum every movement since the
/// first day, far more than any one period, and a period's figures are the
/// difference of two levels.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct DayFigures([i128; FIGURES]);

impl Default for DayFigures {
    fn default() -> DayFigures {
        DayFigures([0; FIGURES])
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
        let figures = &mut self.0;
        figures[AMOUNTS + subtype] += i128::from(m.mrr_change_base_currency);
        figures[CUSTOMERS + m.kind.index()] += i128::from(first_of_kind);
        figures[SUBTYPE_CUSTOMERS + subtype] += i128::from(first_of_subtype);
        figures[COUNT_CHANGES + subtype] += i128::from(m.customer_count_change);
        figures[ROWS + subtype] += 1;
    }

    /// The movement columns of these figures (of a period: the level at its
    /// end less the level before it), every subtype counted.
    pub(super) fn movement_stats(&self) -> PeriodStats {
        let amounts = self.section(AMOUNTS, SUBTYPES);
        let mut stats = PeriodStats {
            customers_diff: count(self.section(COUNT_CHANGES, SUBTYPES).iter().sum()),
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
            let customers = self.0[CUSTOMERS + kind.index()];
            set_column(&mut stats, kind, Total::exact(amount), count(customers));
        }
        stats
    }

    /// The movement columns of one subtype's movements alone, as a series
    /// kept to that subtype counts them: its amount and customers in its
    /// kind's columns, and the customer count changes it carries.
    pub(super) fn subtype_stats(&self, subtype: MovementSubtype) -> PeriodStats {
        let s = subtype.index();
        let mut stats = PeriodStats {
            customers_diff: count(self.0[COUNT_CHANGES + s]),
            ..PeriodStats::default()
        };
        let (amount, customers) = (self.0[AMOUNTS + s], self.0[SUBTYPE_CUSTOMERS + s]);
        set_column(
            &mut stats,
            subtype.kind(),
            Total::exact(amount),
            count(customers),
        );
        stats
    }

    /// Whether any movement of `subtype` is counted in these figures.
    pub(super) fn moves_by(&self, subtype: MovementSubtype) -> bool {
        self.0[ROWS + subtype.index()] != 0
    }

    /// Customers paying at the end of the day (a change of them, for a
    /// day's change).
    pub(super) fn paying(&self) -> i64 {
        count(self.0[PAYING])
    }

    /// Every customer's MRR in the base currency (a change of it, for a
    /// day's change).
    pub(super) fn total_mrr(&self) -> Total {
        Total::exact(self.0[TOTAL_MRR])
    }

    /// Adds to the paying customers (one started or stopped paying).
    pub(super) fn add_paying(&mut self, customers: i64) {
        self.0[PAYING] += i128::from(customers);
    }

    /// Adds to the MRR in the base currency.
    pub(super) fn add_total_mrr(&mut self, amount: Total) {
        self.0[TOTAL_MRR] += i128::from(amount);
    }

    /// The `len` figures from `start`.
    fn section(&self, start: usize, len: usize) -> &[i128] {
        &self.0[start..start + len]
    }

    /// Each figure combined with the same figure of `other`.
    fn combined(mut self, other: DayFigures, combine: impl Fn(i128, i128) -> i128) -> DayFigures {
        for (figure, theirs) in self.0.iter_mut().zip(other.0) {
            *figure = combine(*figure, theirs);
        }
        self
    }

    /// Every figure times `sign` (1, or -1 to take a contribution back).
    pub(super) fn scaled(self, sign: i64) -> DayFigures {
        self.combined(DayFigures::default(), |figure, _| figure * i128::from(sign))
    }
}

/// A count of customers or movement rows: far inside 64 bits, as no ledger
/// holds 2^63 rows.
fn count(figure: i128) -> i64 {
    figure as i64
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

impl Add for DayFigures {
    type Output = DayFigures;
    fn add(self, other: DayFigures) -> DayFigures {
        self.combined(other, |a, b| a + b)
    }
}

impl Sub for DayFigures {
    type Output = DayFigures;
    fn sub(self, other: DayFigures) -> DayFigures {
        self.combined(other, |a, b| a - b)
    }
}
