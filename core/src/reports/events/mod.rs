//! Event series: the one implementation of the series, `-summary`, `-table`
//! and `-detail` patterns for reports that count dated events (leads,
//! transactions, failed payments, refunds, payment attempts).
//!
//! A report names where its [`Event`]s come from ([`EventSource`]: a
//! customer's at a time), each with a local day, a type (the
//! `selected-type` values of its `-detail` report) and an amount. This
//! module does the rest the same way for every report, walking the
//! customers on every core (see `walk`):
//!
//! - **series**: events are bucketed into the periods of the `date` range
//!   (`interval`, default month, aligned as in the `mrr` report); per period
//!   and type a [`Bucket`] holds the count and the amount in the report
//!   currency; the report's [`Family::figures`] turns a period's buckets
//!   into its JSON fields.
//! - **summary**: the same figures for the period holding `as_of` (up to
//!   `as_of`) and the whole period before it, with the change between them
//!   (`change`: current - previous; `change_percent`: 100 x change /
//!   |previous|, `null` when previous is 0 or either value is `null`).
//! - **table**: the series pivoted for display, one row per metric of
//!   [`Family::metrics`] and one column per period, in the shape of the
//!   `mrr-table` report (`{currency, columns, rows: [{metric, label,
//!   values}]}`).
//! - **detail**: the events behind one period (`selected-date`, any day of
//!   the period, aligned to `interval`) and one type (`selected-type`),
//!   newest first, ties by customer id then event id.
//!
//! Rules common to every event report: events after the `as_of` instant
//! have not happened and are left out; customers are selected by the shared
//! customer filters ([`CustomerFilter`]); the `currency` filter keeps
//! amounts in the listed currencies; amounts convert into `baseCurrency`
//! (default the account's base currency) at the rate of the event's day, or
//! at `fx_date` (default the range start) with `fix_fx=true`. A family
//! without amounts (the funnel, [`Family::money`]) reads none of those.

use super::ReportParams;
pub(crate) use super::answer::Cell;
use super::answer::{MetricRow, PerInterval, Pivot, ReportAnswer, Series, Single};
use crate::error::{Error, Result};
use crate::money::{Cents, Currency, Total};
use crate::period::Period;
use crate::query::Query;
use chrono::NaiveDate;
use serde::ser::SerializeMap;
use serde::{Deserialize, Serialize};
use std::borrow::Cow;
use std::collections::BTreeMap;

mod request;
#[cfg(test)]
mod tests;
mod walk;

pub use request::{EventRequest, Reading, Span};
pub(crate) use walk::EventSource;

/// One dated, typed occurrence a report counts. `source` is what the
/// report needs to write the event's detail row. Its ids are borrowed from
/// the ledger wherever it holds them.
#[derive(Debug, Clone)]
pub struct Event<'a, T> {
    /// The local day (account time zone) the event happened on.
    pub date: NaiveDate,
    /// The event's type: one of its family's `types`, or an internal key a
    /// report counts without offering it as a `selected-type`.
    pub kind: &'static str,
    /// Amount in `currency` (a number of days for duration events).
    pub amount: Cents,
    pub currency: Currency,
    /// `amount` in the report currency.
    pub amount_base: Cents,
    pub customer_id: &'a str,
    /// The event's own id (transaction, invoice or customer id), for ties.
    pub id: Cow<'a, str>,
    pub source: T,
}

/// Count and amount of one type of event in one period.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Bucket {
    pub count: i64,
    /// Sum of `amount_base` (report currency).
    pub amount: Total,
}

/// The buckets of one period, by event type: sums, so the tallies of
/// disjoint sets of customers add up ([`Tally::merge`]).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Tally {
    buckets: BTreeMap<Cow<'static, str>, Bucket>,
}

impl Tally {
    pub fn add(&mut self, kind: &'static str, amount: Cents) {
        let bucket = self.buckets.entry(Cow::Borrowed(kind)).or_default();
        bucket.count += 1;
        bucket.amount += amount;
    }

    pub fn merge(&mut self, other: Tally) {
        for (kind, b) in other.buckets {
            let bucket = self.buckets.entry(kind).or_default();
            bucket.count += b.count;
            bucket.amount += b.amount;
        }
    }

    pub fn bucket(&self, kind: &str) -> Bucket {
        self.buckets.get(kind).copied().unwrap_or_default()
    }

    pub fn count(&self, kind: &str) -> i64 {
        self.bucket(kind).count
    }

    #[cfg(test)]
    pub fn amount(&self, kind: &str) -> Total {
        self.bucket(kind).amount
    }

    /// The sums of count and amount over several types.
    pub fn total(&self, kinds: &[&str]) -> Bucket {
        kinds.iter().fold(Bucket::default(), |sum, kind| {
            let b = self.bucket(kind);
            Bucket {
                count: sum.count + b.count,
                amount: sum.amount + b.amount,
            }
        })
    }
}

/// What makes one report family: its selectable types and how a period's
/// tally reads as figures.
pub struct Family {
    /// `selected-type` values with display labels, in display order.
    pub types: &'static [(&'static str, &'static str)],
    /// The figures shown by `-table` and compared by `-summary`, in order.
    pub metrics: &'static [Metric],
    /// A period's figures.
    pub figures: fn(&Tally) -> Figures,
    /// Whether its events carry amounts. A family of counts alone (the
    /// funnel) reads no `baseCurrency`, `fix_fx`, `fx_date` or `currency`.
    pub money: bool,
}

/// A figure a family's `-table` shows and `-summary` compares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Metric {
    /// A field of [`Family::figures`] and its label.
    One(&'static str, &'static str),
    /// Each of the family's `types` (the amount of that type), labelled
    /// as there.
    Types,
}

impl Family {
    /// The metrics as (field, label), [`Metric::Types`] spelled out.
    pub fn metrics(&self) -> Vec<(&'static str, &'static str)> {
        let mut out = Vec::new();
        for metric in self.metrics {
            match metric {
                Metric::One(name, label) => out.push((*name, *label)),
                Metric::Types => out.extend_from_slice(self.types),
            }
        }
        out
    }
}

/// `a` then `b`, as one list of `N` types with their labels.
pub(crate) const fn labels<const N: usize>(
    a: &[(&'static str, &'static str)],
    b: &[(&'static str, &'static str)],
) -> [(&'static str, &'static str); N] {
    assert!(a.len() + b.len() == N, "N is the total length");
    let mut out = [("", ""); N];
    let mut i = 0;
    while i < N {
        out[i] = if i < a.len() { a[i] } else { b[i - a.len()] };
        i += 1;
    }
    out
}

/// The names of labelled types.
pub(crate) const fn names<const N: usize>(
    labelled: &[(&'static str, &'static str); N],
) -> [&'static str; N] {
    let mut out = [""; N];
    let mut i = 0;
    while i < N {
        out[i] = labelled[i].0;
        i += 1;
    }
    out
}

/// A figure of a period: a count or an amount in cents of the report's
/// currency (exact, whatever the sum), a rate or another real number, or
/// nothing (null).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Figure {
    Int(Total),
    Real(f64),
    Null,
}

impl Figure {
    /// The number, `None` for [`Figure::Null`].
    fn number(self) -> Option<f64> {
        match self {
            Figure::Int(value) => Some(value.as_f64()),
            Figure::Real(value) => Some(value),
            Figure::Null => None,
        }
    }
}

impl From<Total> for Figure {
    fn from(value: Total) -> Figure {
        Figure::Int(value)
    }
}

impl From<i64> for Figure {
    fn from(value: i64) -> Figure {
        Figure::Int(Total::from(value))
    }
}

impl From<Option<f64>> for Figure {
    fn from(value: Option<f64>) -> Figure {
        value.map_or(Figure::Null, Figure::Real)
    }
}

/// A period's figures in order, each a field name and a [`Figure`]: what a
/// family computes from a tally, answered as [`Cells`].
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Figures(Vec<(String, Figure)>);

impl Figures {
    /// Sets the figure `name`: in its place when already set, else last.
    pub fn set(&mut self, name: impl Into<String>, value: impl Into<Figure>) {
        let (name, value) = (name.into(), value.into());
        match self.0.iter_mut().find(|(n, _)| *n == name) {
            Some(slot) => slot.1 = value,
            None => self.0.push((name, value)),
        }
    }

    /// The figure `name`.
    pub fn get(&self, name: &str) -> Option<Figure> {
        self.0.iter().find(|(n, _)| n == name).map(|(_, v)| *v)
    }

    /// The figures as cells: a count or amount beyond 64-bit cents is
    /// [`Error::OutOfRange`], `what` naming it from its field name.
    pub fn cells(&self, what: impl Fn(&str) -> String) -> Result<Cells> {
        let cell = |(name, figure): &(String, Figure)| {
            let cell = match *figure {
                Figure::Int(value) => Cell::Int(value.cents(|| what(name))?),
                Figure::Real(value) => Cell::Real(value),
                Figure::Null => Cell::Null,
            };
            Ok((name.clone(), cell))
        };
        Ok(Cells(self.0.iter().map(cell).collect::<Result<_>>()?))
    }
}

/// A period's figures as answered, each a field name and a number: amounts
/// in cents of the report's currency, counts, rates in percent (null over
/// nothing). Serialized as an object.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Cells(Vec<(String, Cell)>);

impl Cells {
    /// The cell of figure `name`.
    pub fn get(&self, name: &str) -> Option<Cell> {
        self.0.iter().find(|(n, _)| n == name).map(|(_, v)| *v)
    }
}

impl Serialize for Cells {
    fn serialize<S: serde::Serializer>(
        &self,
        serializer: S,
    ) -> std::result::Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.0.len()))?;
        for (name, value) in &self.0 {
            map.serialize_entry(name, value)?;
        }
        map.end()
    }
}

/// `100 x part / whole`, `None` (null) when `whole` is 0.
pub fn percent(part: i64, whole: i64) -> Option<f64> {
    (whole != 0).then(|| 100.0 * part as f64 / whole as f64)
}

impl<'a> EventRequest<'a> {
    /// A period's figures as answered; `at` is the JSON path to them in a
    /// summary (`current.`), empty in a series.
    fn period_figures(
        &self,
        period: Option<&Period>,
        at: &str,
        figures: &Figures,
    ) -> Result<PeriodFigures> {
        let currency = self.currency;
        let what = |name: &str| match period {
            Some(p) => format!(
                "the `{at}{name}` of the period {} to {} in {currency}",
                p.start, p.end
            ),
            None => format!("the `{at}{name}` in {currency}"),
        };
        Ok(PeriodFigures {
            date: period.map(|p| p.start),
            end_date: period.map(|p| p.end),
            figures: figures.cells(what)?,
        })
    }

    fn head(&self) -> PerInterval {
        PerInterval {
            currency: self.currency,
            interval: self.interval.as_str(),
        }
    }

    /// The series of the period tallies: `{currency, interval, result:
    /// [{date, end_date, ...figures}]}`.
    pub fn series_of(&self, family: &Family, tallies: Vec<Tally>) -> Result<ReportAnswer> {
        let result = self
            .periods
            .iter()
            .zip(tallies)
            .map(|(period, tally)| self.period_figures(Some(period), "", &(family.figures)(&tally)))
            .collect::<Result<_>>()?;
        Ok(Series {
            head: self.head(),
            result,
        }
        .into())
    }

    /// The summary of the period tallies (requires
    /// [`Span::CurrentAndPrevious`]): `{currency, interval, current,
    /// previous, change, change_percent}`.
    pub fn summary_of(&self, family: &Family, tallies: Vec<Tally>) -> Result<ReportAnswer> {
        let mut figures: Vec<Figures> = tallies.iter().map(family.figures).collect();
        let current = figures.pop().unwrap_or_default();
        let previous = figures.pop().unwrap_or_default();
        let mut change = Figures::default();
        let mut change_percent = Figures::default();
        for (metric, _) in family.metrics() {
            let (now, before) = (current.get(metric), previous.get(metric));
            let (diff, pct) = match (
                now.and_then(Figure::number),
                before.and_then(Figure::number),
            ) {
                (Some(now_f), Some(before_f)) => {
                    let diff = match (now, before) {
                        (Some(Figure::Int(a)), Some(Figure::Int(b))) => Figure::Int(a - b),
                        _ => Figure::Real(now_f - before_f),
                    };
                    let pct =
                        (before_f != 0.0).then(|| 100.0 * (now_f - before_f) / before_f.abs());
                    (diff, Figure::from(pct))
                }
                _ => (Figure::Null, Figure::Null),
            };
            change.set(metric, diff);
            change_percent.set(metric, pct);
        }
        let n = self.periods.len();
        let period = |i: Option<usize>| i.and_then(|i| self.periods.get(i));
        let currency = self.currency;
        let summary = EventSummary {
            currency,
            interval: self.interval.as_str(),
            current: self.period_figures(period(n.checked_sub(1)), "current.", &current)?,
            previous: self.period_figures(period(n.checked_sub(2)), "previous.", &previous)?,
            change: change.cells(|name| format!("the `change.{name}` in {currency}"))?,
            change_percent: change_percent
                .cells(|name| format!("the `change_percent.{name}` in {currency}"))?,
        };
        Ok(Single {
            currency: Some(currency),
            value: summary,
        }
        .into())
    }

    /// The pivot of the period tallies: `{currency, interval, columns,
    /// rows: [{metric, label, values}]}`.
    pub fn table_of(&self, family: &Family, tallies: Vec<Tally>) -> Result<ReportAnswer> {
        let figures: Vec<Cells> = self
            .periods
            .iter()
            .zip(&tallies)
            .map(|(period, tally)| {
                let figures = self.period_figures(Some(period), "", &(family.figures)(tally))?;
                Ok(figures.figures)
            })
            .collect::<Result<_>>()?;
        let rows = family
            .metrics()
            .into_iter()
            .map(|(metric, label)| MetricRow {
                metric,
                movement: None,
                label,
                values: figures
                    .iter()
                    .map(|f| f.get(metric).unwrap_or(Cell::Null))
                    .collect(),
            })
            .collect();
        Ok(Pivot {
            head: self.head(),
            columns: self.periods.iter().map(|p| p.start).collect(),
            rows,
        }
        .into())
    }
}

/// A period of an event series or summary: its bounds (absent for a
/// summary period the range does not have), then the family's figures.
#[derive(Serialize)]
struct PeriodFigures {
    #[serde(skip_serializing_if = "Option::is_none")]
    date: Option<NaiveDate>,
    #[serde(skip_serializing_if = "Option::is_none")]
    end_date: Option<NaiveDate>,
    #[serde(flatten)]
    figures: Cells,
}

/// An event `-summary`: the current and the previous period's figures and
/// the change between them, in the family's units and in percent.
#[derive(Serialize)]
struct EventSummary {
    currency: Currency,
    interval: &'static str,
    current: PeriodFigures,
    previous: PeriodFigures,
    change: Cells,
    change_percent: Cells,
}

/// Reads `selected-type` among the family's types: required unless
/// `optional` (then `None` lists every type).
pub fn selected_type(
    params: &ReportParams,
    family: &Family,
    optional: bool,
) -> Result<Option<&'static str>> {
    let names: Vec<&'static str> = family.types.iter().map(|(t, _)| *t).collect();
    match Query::new(params).optional_choice("selected-type", &names)? {
        None if !optional => Err(Error::query(
            "selected-type",
            format!("is required (one of {})", names.join(", ")),
        )),
        chosen => Ok(chosen),
    }
}
