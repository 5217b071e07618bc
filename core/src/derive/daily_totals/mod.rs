//! Per-day totals of every customer in the base currency: what an unfiltered
//! `mrr` series needs, alone or broken down by movement subtype, kept beside
//! the cached replays so that a report reads a few thousand days instead of
//! every customer's movements.
//!
//! Every figure is a sum over customers, so the totals are stored as per-day
//! changes that one customer's replay adds or takes back: after a write only
//! the customers it touched are patched. The MRR total converts each
//! customer's MRR in each currency at the day's rate (at the `as_of` rate for
//! later days), exactly as `SeriesSpec::add_customer` (in the reports) does per customer
//! (SEMANTICS section 5). Churned customers (paying at a period's start, not
//! at its end) depend on both ends of a period, so they are counted at query
//! time from each customer's paying runs.

mod figures;

use super::movements::{Movement, MovementKind, MovementSubtype};
use super::timeline::Replay;
use crate::error::Result;
use crate::fx::FxTable;
use crate::money::{Cents, Currency, Total};
use crate::period::{DateRange, Period};
use chrono::NaiveDate;
use figures::DayFigures;
use foldhash::fast::FixedState;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;

/// One period's figures in the report currency: sums over customers, so
/// the figures of disjoint sets of customers add up ([`PeriodStats::add`]).
/// Amounts are exact [`Total`]s, checked into cents when a report answers.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PeriodStats {
    pub new: Total,
    pub expansion: Total,
    pub contraction: Total,
    pub churn: Total,
    pub reactivation: Total,
    pub new_customers: i64,
    pub expansion_customers: i64,
    pub contraction_customers: i64,
    pub churn_customers: i64,
    pub reactivation_customers: i64,
    pub customers_diff: i64,
    pub start_mrr: Total,
    pub total_mrr: Total,
    pub start_customers: i64,
    pub total_customers: i64,
    /// Customers paying at the period start and not at its end.
    pub churned: i64,
    /// Every movement of the period in the report currency, including those
    /// a `category` or `subtype` filter leaves out of the columns: what the
    /// FX adjustment is measured against.
    pub all_movements: Total,
}

impl PeriodStats {
    /// The sum of the movement columns.
    pub fn movements(&self) -> Total {
        self.new + self.expansion + self.contraction + self.churn + self.reactivation
    }

    /// What conversion leaves unexplained: end - start - every movement
    /// (a movement filter narrows the columns, not the FX adjustment).
    pub fn fx_adjustment(&self) -> Total {
        self.total_mrr - self.start_mrr - self.all_movements
    }

    pub fn add(&mut self, other: &PeriodStats) {
        self.new += other.new;
        self.expansion += other.expansion;
        self.contraction += other.contraction;
        self.churn += other.churn;
        self.reactivation += other.reactivation;
        self.new_customers += other.new_customers;
        self.expansion_customers += other.expansion_customers;
        self.contraction_customers += other.contraction_customers;
        self.churn_customers += other.churn_customers;
        self.reactivation_customers += other.reactivation_customers;
        self.customers_diff += other.customers_diff;
        self.start_mrr += other.start_mrr;
        self.total_mrr += other.total_mrr;
        self.start_customers += other.start_customers;
        self.total_customers += other.total_customers;
        self.churned += other.churned;
        self.all_movements += other.all_movements;
    }
}

/// A customer's run of paying days, stored under the day it stops paying:
/// paying at the end of `start` through the day before the stop; `later`
/// holds the customer's later runs (their start and their stop, if any).
#[derive(Debug, Clone, PartialEq, Eq)]
struct PayingRun {
    start: NaiveDate,
    later: Vec<(NaiveDate, Option<NaiveDate>)>,
}

impl PayingRun {
    /// Whether the customer of this run pays at the end of `day`, after the run.
    fn pays_later_on(&self, day: NaiveDate) -> bool {
        self.later
            .iter()
            .any(|(start, stop)| *start <= day && stop.is_none_or(|stop| day < stop))
    }
}

/// A change of one customer's MRR in a currency other than the base, over
/// one day (several movements of the day collapse into one change).
#[derive(Debug, Clone, Copy)]
struct ForeignChange {
    day: usize,
    currency: Currency,
    before: Cents,
    after: Cents,
}

/// The per-day totals of every customer's replay at one `as_of` day.
#[derive(Debug, Clone)]
pub(crate) struct DailyTotals {
    base: Currency,
    as_of_day: NaiveDate,
    /// The first day covered: days before it hold nothing.
    origin: NaiveDate,
    /// Per day from `origin`: what the day changes.
    changes: Vec<DayFigures>,
    /// Per day from `origin`: the totals at the day's end (`changes` summed).
    levels: Vec<DayFigures>,
    /// Per day from `origin`: the paying runs that stop that day.
    stops: Vec<Vec<PayingRun>>,
}

/// One customer's contribution, gathered before it is added to the totals.
#[derive(Debug, Default)]
struct Contribution {
    changes: Vec<(usize, DayFigures)>,
    stops: Vec<(usize, PayingRun)>,
    foreign: Vec<ForeignChange>,
}

impl DailyTotals {
    /// The totals of every replay, in `base`, for reports at `as_of_day`.
    /// Fails only when an exchange rate the totals need is missing.
    pub(crate) fn build<'r>(
        replays: impl IntoIterator<Item = &'r Replay>,
        base: Currency,
        fx: &FxTable,
        as_of_day: NaiveDate,
    ) -> Result<DailyTotals> {
        let customers: Vec<&[Movement]> = replays
            .into_iter()
            .map(|r| r.movements.as_slice())
            .filter(|m| !m.is_empty())
            .collect();
        let origin = customers
            .iter()
            .map(|m| m[0].date)
            .min()
            .unwrap_or(as_of_day)
            .min(as_of_day);
        let last = customers
            .iter()
            .filter_map(|m| m.last().map(|m| m.date))
            .max()
            .unwrap_or(as_of_day)
            .max(as_of_day);
        let days = (last - origin).num_days() as usize + 1;
        let mut totals = DailyTotals {
            base,
            as_of_day,
            origin,
            changes: vec![DayFigures::default(); days],
            levels: Vec::new(),
            stops: vec![Vec::new(); days],
        };
        // Customers add up independently: slices of them on every core.
        let empty = || (vec![DayFigures::default(); days], Vec::new(), Vec::new());
        let (changes, stops, foreign) = customers
            .par_chunks(4096)
            .fold(empty, |(mut changes, mut stops, mut foreign), part| {
                let mut contribution = Contribution::default();
                for movements in part {
                    totals.contribution(movements, &mut contribution);
                    for (day, figures) in contribution.changes.drain(..) {
                        changes[day] += figures;
                    }
                    stops.append(&mut contribution.stops);
                    foreign.append(&mut contribution.foreign);
                }
                (changes, stops, foreign)
            })
            .reduce(empty, |mut into, mut from| {
                for (a, b) in into.0.iter_mut().zip(from.0) {
                    *a += b;
                }
                into.1.append(&mut from.1);
                into.2.append(&mut from.2);
                into
            });
        totals.changes = changes;
        for (day, run) in stops {
            totals.stops[day].push(run);
        }
        totals.sweep_foreign(foreign, fx)?;
        totals.cumulate();
        Ok(totals)
    }

    pub(crate) fn as_of_day(&self) -> NaiveDate {
        self.as_of_day
    }

    /// Replaces customers' old replays by their new ones (either may be
    /// absent). Returns `Ok(false)` when a new replay reaches outside the
    /// covered days, and the totals must be built again.
    pub(crate) fn patch<'r>(
        &mut self,
        customers: impl IntoIterator<Item = (Option<&'r Replay>, Option<&'r Replay>)>,
        fx: &FxTable,
    ) -> Result<bool> {
        let mut contribution = Contribution::default();
        for (old, new) in customers {
            for (replay, sign) in [(old, -1), (new, 1)] {
                let Some(replay) = replay else { continue };
                if !self.contribution(&replay.movements, &mut contribution) {
                    return Ok(false);
                }
                self.add(&mut contribution, sign, fx)?;
            }
        }
        self.cumulate();
        Ok(true)
    }

    /// The stats of each period of a series, as summing
    /// `SeriesSpec::add_customer` over every customer gives them (daily
    /// conversion into the base currency, nothing filtered).
    pub(crate) fn period_stats(&self, range: &DateRange, periods: &[Period]) -> Vec<PeriodStats> {
        self.period_levels(range, periods)
            .map(|(before, end, start_level, end_level)| PeriodStats {
                start_mrr: start_level.total_mrr(),
                total_mrr: end_level.total_mrr(),
                start_customers: start_level.paying(),
                total_customers: end_level.paying(),
                churned: self.churned(before, end),
                ..(end_level - start_level).movement_stats()
            })
            .collect()
    }

    /// For each subtype some customer moved by, the stats of each period of
    /// a series of that subtype's movements alone, as summing
    /// `SeriesSpec::add_customer` kept to the subtype over every customer
    /// gives them: its movement columns only (a breakdown by subtype shares
    /// the report's totals with every group).
    pub(crate) fn subtype_stats(
        &self,
        range: &DateRange,
        periods: &[Period],
    ) -> Vec<(MovementSubtype, Vec<PeriodStats>)> {
        let everything = self.levels.last().copied().unwrap_or_default();
        let moved: Vec<DayFigures> = self
            .period_levels(range, periods)
            .map(|(_, _, start_level, end_level)| end_level - start_level)
            .collect();
        MovementSubtype::ALL
            .into_iter()
            .filter(|subtype| everything.moves_by(*subtype))
            .map(|subtype| {
                let stats = moved.iter().map(|m| m.subtype_stats(subtype)).collect();
                (subtype, stats)
            })
            .collect()
    }

    /// Each period's day before it and last day, with the totals at the
    /// end of both.
    fn period_levels<'p>(
        &'p self,
        range: &DateRange,
        periods: &'p [Period],
    ) -> impl Iterator<Item = (NaiveDate, NaiveDate, DayFigures, DayFigures)> + 'p {
        let mut before = range.start.pred_opt().unwrap_or(range.start);
        periods.iter().map(move |period| {
            let levels = (
                before,
                period.end,
                self.level(before),
                self.level(period.end),
            );
            before = period.end;
            levels
        })
    }

    /// The totals at the end of `day`.
    fn level(&self, day: NaiveDate) -> DayFigures {
        if day < self.origin {
            return DayFigures::default();
        }
        let index = ((day - self.origin).num_days() as usize).min(self.levels.len() - 1);
        self.levels[index]
    }

    /// Customers paying at the end of `start` and not at the end of `end`:
    /// each is counted at the stop of its run holding `start` (the first
    /// stop after `start`), if that stop is no later than `end` and no later
    /// run of it holds `end`.
    fn churned(&self, start: NaiveDate, end: NaiveDate) -> i64 {
        if end < self.origin {
            return 0;
        }
        let first = self.index(start).map_or(0, |i| i + 1);
        let last = self.index(end).unwrap_or(self.stops.len() - 1);
        let Some(runs) = self.stops.get(first..=last) else {
            return 0;
        };
        runs.iter()
            .flatten()
            .filter(|run| run.start <= start && !run.pays_later_on(end))
            .count() as i64
    }

    /// The index of a covered day; `None` before the origin, the last index
    /// after the end.
    fn index(&self, day: NaiveDate) -> Option<usize> {
        (day >= self.origin)
            .then(|| ((day - self.origin).num_days() as usize).min(self.changes.len() - 1))
    }

    /// The index of `day` when it is covered.
    fn covered(&self, day: NaiveDate) -> Option<usize> {
        let index = (day - self.origin).num_days();
        (index >= 0 && (index as usize) < self.changes.len()).then_some(index as usize)
    }

    /// Gathers one customer's contribution from its movements (sorted by
    /// day). `false` when a movement falls outside the covered days.
    fn contribution(&self, movements: &[Movement], into: &mut Contribution) -> bool {
        // The customer's MRR per currency so far, and at the start of the day.
        let mut amounts: Vec<(Currency, Cents)> = Vec::new();
        let mut day_start: Vec<(Currency, Cents)> = Vec::new();
        // Paying runs so far: (start, stop day and its index when stopped).
        let mut runs: Vec<(NaiveDate, Option<(NaiveDate, usize)>)> = Vec::new();
        let mut last_counted: Option<(NaiveDate, MovementKind)> = None;
        let mut rest = movements;
        while let Some(first) = rest.first() {
            let day = first.date;
            let Some(index) = self.covered(day) else {
                return false;
            };
            let count = rest.iter().take_while(|m| m.date == day).count();
            let (today, later) = rest.split_at(count);
            rest = later;
            day_start.clone_from(&amounts);
            let mut figures = DayFigures::default();
            // The subtypes the customer moved by this day, a bit each.
            let mut subtypes_seen = 0u32;
            for m in today {
                let first_of_kind = last_counted != Some((day, m.kind));
                last_counted = Some((day, m.kind));
                let subtype = 1 << m.subtype.index();
                figures.add_movement(m, first_of_kind, subtypes_seen & subtype == 0);
                subtypes_seen |= subtype;
                if m.currency == self.base {
                    figures.add_total_mrr(Total::from(m.mrr_change));
                }
                match amounts.iter_mut().find(|(c, _)| *c == m.currency) {
                    Some((_, amount)) => *amount += m.mrr_change,
                    None => amounts.push((m.currency, m.mrr_change)),
                }
            }
            for &(currency, after) in amounts.iter().filter(|(c, _)| *c != self.base) {
                let before = day_start
                    .iter()
                    .find(|(c, _)| *c == currency)
                    .map_or(0, |(_, a)| *a);
                if before != after {
                    into.foreign.push(ForeignChange {
                        day: index,
                        currency,
                        before,
                        after,
                    });
                }
            }
            let paying = amounts.iter().any(|(_, a)| *a > 0);
            let was_paying = runs.last().is_some_and(|(_, stop)| stop.is_none());
            if paying && !was_paying {
                figures.add_paying(1);
                runs.push((day, None));
            } else if !paying && was_paying {
                figures.add_paying(-1);
                if let Some((_, stop)) = runs.last_mut() {
                    *stop = Some((day, index));
                }
            }
            into.changes.push((index, figures));
        }
        for (i, (start, stop)) in runs.iter().enumerate() {
            if let Some((_, index)) = stop {
                let later = runs[i + 1..]
                    .iter()
                    .map(|(start, stop)| (*start, stop.map(|(day, _)| day)))
                    .collect();
                into.stops.push((
                    *index,
                    PayingRun {
                        start: *start,
                        later,
                    },
                ));
            }
        }
        true
    }

    /// Adds (`sign` 1) or takes back (-1) one gathered contribution,
    /// converting its foreign MRR day by day; leaves `contribution` empty.
    fn add(&mut self, contribution: &mut Contribution, sign: i64, fx: &FxTable) -> Result<()> {
        for (day, figures) in contribution.changes.drain(..) {
            self.changes[day] += figures.scaled(sign);
        }
        for (day, run) in contribution.stops.drain(..) {
            if sign > 0 {
                self.stops[day].push(run);
            } else if let Some(i) = self.stops[day].iter().position(|r| *r == run) {
                self.stops[day].swap_remove(i);
            }
        }
        let mut currencies: Vec<Currency> =
            contribution.foreign.iter().map(|c| c.currency).collect();
        currencies.sort();
        currencies.dedup();
        for currency in currencies {
            // The converted MRR changes on the customer's own days and, while
            // it holds an amount, on every day a rate changes.
            let own: Vec<&ForeignChange> = contribution
                .foreign
                .iter()
                .filter(|c| c.currency == currency)
                .collect();
            let mut days: Vec<usize> = self.rate_days(fx, currency, own[0].day + 1);
            days.extend(own.iter().map(|c| c.day));
            days.sort_unstable();
            days.dedup();
            let (mut amount, mut converted, mut next) = (0, 0, 0);
            for day in days {
                while let Some(change) = own.get(next).filter(|c| c.day == day) {
                    amount = change.after;
                    next += 1;
                }
                let now = fx.convert(amount, currency, self.base, self.rate_date(day))?;
                let change = Total::from(now) - Total::from(converted);
                self.changes[day].add_total_mrr(change * sign);
                converted = now;
            }
        }
        contribution.foreign.clear();
        Ok(())
    }

    /// Adds every customer's MRR in currencies other than the base, day by
    /// day per currency: the customers holding each amount are counted, so a
    /// new rate converts each distinct amount once.
    fn sweep_foreign(&mut self, mut changes: Vec<ForeignChange>, fx: &FxTable) -> Result<()> {
        changes.sort_unstable_by_key(|c| (c.currency, c.day));
        for currency_changes in changes.chunk_by(|a, b| a.currency == b.currency) {
            let currency = currency_changes[0].currency;
            let first_day = currency_changes[0].day;
            let rate_days = self.rate_days(fx, currency, first_day + 1);
            let mut days = rate_days.clone();
            days.extend(currency_changes.iter().map(|c| c.day));
            days.sort_unstable();
            days.dedup();
            let mut holders: HashMap<Cents, i64, FixedState> = HashMap::default();
            let mut cache: HashMap<Cents, Cents, FixedState> = HashMap::default();
            let mut rate_date = self.rate_date(first_day);
            let (mut total, mut next, mut next_rate) = (Total::ZERO, 0, 0);
            for day in days {
                let before = total;
                if rate_days.get(next_rate) == Some(&day) {
                    next_rate += 1;
                    rate_date = self.rate_date(day);
                    cache.clear();
                    total = Total::ZERO;
                    for (&amount, &count) in &holders {
                        let converted = fx.convert(amount, currency, self.base, rate_date)?;
                        total += Total::from(converted) * count;
                    }
                }
                let mut convert = |amount: Cents| -> Result<Cents> {
                    if let Some(&converted) = cache.get(&amount) {
                        return Ok(converted);
                    }
                    let converted = fx.convert(amount, currency, self.base, rate_date)?;
                    cache.insert(amount, converted);
                    Ok(converted)
                };
                while let Some(change) = currency_changes.get(next).filter(|c| c.day == day) {
                    next += 1;
                    for (amount, delta) in [(change.before, -1), (change.after, 1)] {
                        if amount == 0 {
                            continue;
                        }
                        total += Total::from(convert(amount)?) * delta;
                        let count = holders.entry(amount).or_insert(0);
                        *count += delta;
                        if *count == 0 {
                            holders.remove(&amount);
                        }
                    }
                }
                self.changes[day].add_total_mrr(total - before);
            }
        }
        Ok(())
    }

    /// Covered days from `from` on (and not after `as_of`) on which the rate
    /// of `currency` against the base changes.
    fn rate_days(&self, fx: &FxTable, currency: Currency, from: usize) -> Vec<usize> {
        let mut days: Vec<usize> = fx
            .rate_days(currency)
            .chain(fx.rate_days(self.base))
            .filter(|day| *day <= self.as_of_day)
            .filter_map(|day| self.covered(day))
            .filter(|index| *index >= from)
            .collect();
        days.sort_unstable();
        days.dedup();
        days
    }

    /// The date whose rates convert a covered day's totals: the day itself,
    /// or `as_of` for later days.
    fn rate_date(&self, index: usize) -> NaiveDate {
        (self.origin + chrono::Days::new(index as u64)).min(self.as_of_day)
    }

    fn cumulate(&mut self) {
        let mut level = DayFigures::default();
        self.levels = self
            .changes
            .iter()
            .map(|change| {
                level += *change;
                level
            })
            .collect();
    }
}
