//! `mrr`: the period table of MRR, movements, customers and the rates built
//! on them (SEMANTICS section 7), with filters and breakdowns.
//!
//! Breakdowns group customers by a customer-level key (their main plan and
//! its billing frequency and pricing model, payment method, country, custom
//! variables, age at `as_of`), so entries add up to the total; `currency`
//! splits each customer's MRR by currency; `subtype` splits only the
//! movement columns (its totals are the report's totals).

use super::ReportParams;
use super::answer::{Head, ReportAnswer, Series};
pub(crate) use super::mrr_parts::Part;
pub use super::mrr_rows::customer_churn_rate;
pub(super) use super::mrr_rows::{Groups, breakdown_param, merge_groups};
pub(super) use super::mrr_rows::{MrrRow, period_row};
use super::mrr_rows::{
    add_entries_to_total, add_movement_columns, breakdown_entry, mean, share_totals, spec_copy,
};
use super::mrr_spans::Spans;
use super::request::SeriesRequest;
use super::runs::fold_runs;
use super::series::{Conversion, PeriodStats, SeriesSpec};
use crate::derive::DailyTotals;
use crate::derive::Derived;
use crate::derive::ReplaySet;
use crate::derive::movements::{Movement, MovementKind, MovementSubtype};
use crate::derive::timeline::Replay;
use crate::error::Result;
use crate::ids::CustomerId;
use crate::money::Currency;
use crate::period::{DateRange, Period, PeriodInterval};
use crate::query::Query;
use crate::query::filters::{CustomerFacts, CustomerFilter, breakdown_value, currency_filter};
use chrono::{DateTime, Months, NaiveDate, Utc};
use rayon::prelude::*;
use serde::Serialize;
use std::collections::BTreeMap;
use std::sync::Arc;

/// Breakdown keys of the `mrr` report.
pub const BREAKDOWNS: &[&str] = &[
    "plan",
    "currency",
    "billing_freq",
    "pricing_model",
    "payment_method",
    "subtype",
    "market",
    "country",
    "industry",
    "age",
    "size",
];

const CATEGORIES: &[&str] = &["new", "expansion", "contraction", "churn", "reactivation"];
const SUBTYPES: &[&str] = &[
    "new",
    "new_from_trial",
    "expansion",
    "upgrade",
    "contraction",
    "downgrade",
    "cancellation",
    "refund",
    "lapse",
    "reactivation",
];

/// A computed mrr series: the periods, the total figures and, per breakdown
/// value, the same figures for that group.
pub struct MrrSeries {
    pub currency: Currency,
    pub breakdown: Option<&'static str>,
    pub periods: Vec<Period>,
    pub total: GroupSeries,
    /// Breakdown value -> (label, figures).
    pub groups: BTreeMap<String, (String, GroupSeries)>,
}

/// The figures of one group: per period, its stats and the two averages
/// that need history before the range.
#[derive(Debug, Clone, Default)]
pub struct GroupSeries {
    pub stats: Vec<PeriodStats>,
    /// Mean customer churn rate of each period and the 5 before it.
    pub churn_avg: Vec<Option<f64>>,
    /// Mean monthly customer churn rate of the 6 months ending at each period end.
    pub monthly_churn: Vec<Option<f64>>,
}

/// A customer the report counts: its movements and, for a customer-level
/// breakdown, its group (value, label).
struct Selected<'r> {
    movements: &'r [Movement],
    group: Option<(String, String)>,
}

/// Parameters that decide an mrr series.
pub(super) struct Request<'a> {
    pub(super) range: DateRange,
    pub(super) interval: PeriodInterval,
    currency: Currency,
    conversion: Conversion,
    filter: CustomerFilter,
    currencies: Vec<Currency>,
    kinds: Vec<MovementKind>,
    subtypes: Vec<MovementSubtype>,
    breakdown: Option<&'static str>,
    pub(super) ledger: &'a Derived<'a>,
    as_of: DateTime<Utc>,
    pub(super) as_of_day: NaiveDate,
}

/// The `mrr` report.
pub(super) fn mrr(
    ledger: &Derived<'_>,
    params: &ReportParams,
    as_of: DateTime<Utc>,
) -> Result<ReportAnswer> {
    mrr_answer(&MrrSeries::compute(ledger, params, as_of)?)
}

/// The head of the `mrr` answer: its currency and breakdown key.
#[derive(Serialize)]
struct MrrHead {
    currency: Currency,
    breakdown: Option<&'static str>,
}

impl Head for MrrHead {
    fn currency(&self) -> Option<Currency> {
        Some(self.currency)
    }
}

/// The `mrr` answer: a row per period, with its breakdown groups when
/// asked.
pub(super) fn mrr_answer(series: &MrrSeries) -> Result<ReportAnswer> {
    let result = (0..series.periods.len())
        .map(|i| {
            let mut row = period_row(series, i)?;
            if series.breakdown.is_some() {
                let entries = series
                    .groups
                    .iter()
                    .map(|(key, (label, group))| {
                        // Subtype entries split movements only: their totals,
                        // and so their FX adjustment, are the report's.
                        let fx_adjustment = (series.breakdown == Some("subtype"))
                            .then(|| series.total.stats[i].fx_adjustment());
                        Ok((
                            key.clone(),
                            breakdown_entry(series, key, label, group, i, fx_adjustment)?,
                        ))
                    })
                    .collect::<Result<_>>()?;
                row.breakdown = Some(entries);
            }
            Ok(row)
        })
        .collect::<Result<Vec<MrrRow>>>()?;
    Ok(Series {
        head: MrrHead {
            currency: series.currency,
            breakdown: series.breakdown,
        },
        result,
    }
    .into())
}

impl MrrSeries {
    /// Reads the parameters of the `mrr` report and computes its series.
    pub fn compute(
        ledger: &Derived<'_>,
        params: &ReportParams,
        as_of: DateTime<Utc>,
    ) -> Result<MrrSeries> {
        MrrSeries::compute_by(ledger, params, as_of, breakdown_param(params)?)
    }

    /// Computes the series of the `mrr` report's parameters other than
    /// `breakdown`, broken down by `breakdown` (a key of [`BREAKDOWNS`]).
    pub fn compute_by(
        ledger: &Derived<'_>,
        params: &ReportParams,
        as_of: DateTime<Utc>,
        breakdown: Option<&'static str>,
    ) -> Result<MrrSeries> {
        Request::read(ledger, params, as_of, breakdown, true)?.compute()
    }
}

impl<'a> Request<'a> {
    /// Reads the request; `filters` false leaves the customer filter empty
    /// (finishing a partial reads only the shape of the request).
    pub(super) fn read(
        ledger: &'a Derived<'a>,
        params: &ReportParams,
        as_of: DateTime<Utc>,
        breakdown: Option<&'static str>,
        filters: bool,
    ) -> Result<Request<'a>> {
        let q = Query::new(params);
        let settings = ledger.settings();
        let as_of_day = as_of.with_timezone(&settings.timezone).date_naive();
        let series = SeriesRequest::read(&q, settings, as_of_day)?;
        let request = Request {
            range: series.range,
            interval: series.interval,
            currency: series.currency,
            conversion: series.conversion,
            filter: if filters {
                CustomerFilter::from_params(ledger, params)?
            } else {
                CustomerFilter::default()
            },
            currencies: currency_filter(params)?,
            kinds: q
                .choices("category", CATEGORIES)?
                .iter()
                .filter_map(|k| MovementKind::parse(k))
                .collect(),
            subtypes: q
                .choices("subtype", SUBTYPES)?
                .iter()
                .filter_map(|s| MovementSubtype::parse(s))
                .collect(),
            breakdown,
            ledger,
            as_of,
            as_of_day,
        };
        Ok(request)
    }
}

impl Request<'_> {
    fn compute(&self) -> Result<MrrSeries> {
        let spans = self.spans();
        let part = self.part(&spans)?;
        Ok(self.assemble(&spans, part))
    }

    /// The stats of every group over the three spans, over this ledger's
    /// customers.
    pub(super) fn part(&self, spans: &Spans) -> Result<Part> {
        let series = [
            (&self.range, spans.main.as_slice()),
            (&spans.history_range, spans.history.as_slice()),
            (&spans.months_range, spans.months.as_slice()),
        ];
        let [main, history, months] = match self.daily_totals() {
            Some(totals) => series.map(|(range, list)| {
                let mut groups =
                    Groups::from([(None, (String::new(), totals.period_stats(range, list)))]);
                if self.breakdown == Some("subtype") {
                    for (subtype, stats) in totals.subtype_stats(range, list) {
                        let name = subtype.as_str().to_string();
                        groups.insert(Some(name.clone()), (name, stats));
                    }
                }
                groups
            }),
            None => {
                let replays = self.ledger.replays(self.as_of)?;
                let selected = self.select(&replays);
                self.group_stats(series, &selected)?
            }
        };
        Ok(Part {
            main,
            history,
            months,
        })
    }

    /// The series from the stats of every customer.
    pub(super) fn assemble(&self, spans: &Spans, mut part: Part) -> MrrSeries {
        if self.breakdown == Some("subtype") {
            for groups in [&mut part.main, &mut part.history, &mut part.months] {
                share_totals(groups);
            }
        }
        let week_start = self.ledger.settings().week_start();
        let month = |d: NaiveDate| PeriodInterval::Month.align(d, week_start);
        let Spans {
            main,
            history,
            clipped,
            months,
            ..
        } = spans;
        let (main_stats, history_stats, month_stats) = (&part.main, &part.history, &part.months);

        let assemble = |key: &Option<String>| -> GroupSeries {
            let stats = main_stats
                .get(key)
                .map(|(_, s)| s.clone())
                .unwrap_or_else(|| vec![PeriodStats::default(); main.len()]);
            let before = history_stats
                .get(key)
                .map(|(_, s)| s.clone())
                .unwrap_or_else(|| vec![PeriodStats::default(); history.len()]);
            let monthly = month_stats
                .get(key)
                .map(|(_, s)| s.clone())
                .unwrap_or_else(|| vec![PeriodStats::default(); months.len()]);
            // The rates of whole periods: a clipped first period's is that
            // of the whole period, the history's last.
            let skipped = usize::from(*clipped);
            let rates: Vec<Option<f64>> = before
                .iter()
                .chain(stats.iter().skip(skipped))
                .map(customer_churn_rate)
                .collect();
            let churn_avg = (0..stats.len())
                .map(|i| {
                    let at = (i + before.len()).saturating_sub(skipped);
                    mean(&rates[at.saturating_sub(5)..=at])
                })
                .collect();
            let monthly_rates: Vec<(NaiveDate, Option<f64>)> = months
                .iter()
                .zip(monthly.iter())
                .map(|(p, s)| (p.start, customer_churn_rate(s)))
                .collect();
            let monthly_churn = main
                .iter()
                .map(|p| {
                    // Months after `as_of` have not happened: a period
                    // that ends later reads the 6 months ending at it.
                    let last = month(p.end.min(self.as_of_day));
                    let first = last.checked_sub_months(Months::new(5)).unwrap_or(last);
                    let window: Vec<Option<f64>> = monthly_rates
                        .iter()
                        .filter(|(start, _)| *start >= first && *start <= last)
                        .map(|(_, r)| *r)
                        .collect();
                    mean(&window)
                })
                .collect();
            GroupSeries {
                stats,
                churn_avg,
                monthly_churn,
            }
        };
        let total = assemble(&None);
        let groups = main_stats
            .iter()
            .filter_map(|(key, (label, _))| {
                key.as_ref()
                    .map(|k| (k.clone(), (label.clone(), assemble(key))))
            })
            .collect();
        MrrSeries {
            currency: self.currency,
            breakdown: self.breakdown,
            periods: main.clone(),
            total,
            groups,
        }
    }

    /// The ledger's per-day totals, when they answer this request: every
    /// customer, every currency and movement, no breakdown but by subtype,
    /// converted day by day into the base currency. `None` sends the request through the
    /// per-customer path (which also reports any error with its context).
    fn daily_totals(&self) -> Option<Arc<DailyTotals>> {
        let everything = self.conversion == Conversion::Daily
            && self.currency == self.ledger.settings().base_currency
            && self.filter.is_empty()
            && self.currencies.is_empty()
            && self.kinds.is_empty()
            && self.subtypes.is_empty()
            && matches!(self.breakdown, None | Some("subtype"));
        everything
            .then(|| self.ledger.daily_totals(self.as_of).ok())
            .flatten()
    }

    /// The customers the filter keeps, each with its movements and, for a
    /// customer-level breakdown, its group; gathered once for the three
    /// series of a report. Customer facts are read only when a filter or a
    /// breakdown needs them.
    fn select<'r>(&self, replays: &'r ReplaySet) -> Vec<Selected<'r>> {
        let ledger = self.ledger;
        let customer_breakdown = self
            .breakdown
            .filter(|b| *b != "currency" && *b != "subtype");
        let needs_facts = !self.filter.is_empty() || customer_breakdown.is_some();
        let customers: Vec<(&CustomerId, &Replay)> = replays
            .iter()
            .filter(|(_, replay)| !replay.movements.is_empty())
            .map(|(id, replay)| (id, &**replay))
            .collect();
        customers
            .into_par_iter()
            .filter_map(|(customer_id, replay)| {
                if !needs_facts {
                    return Some(Selected {
                        movements: &replay.movements,
                        group: None,
                    });
                }
                let customer = ledger.customer(customer_id.as_str())?;
                let facts = CustomerFacts::gather(ledger, customer, Some(replay), self.as_of);
                if !self.filter.matches(ledger, &facts, self.as_of_day) {
                    return None;
                }
                Some(Selected {
                    movements: &replay.movements,
                    group: customer_breakdown
                        .map(|key| breakdown_value(ledger, key, &facts, self.as_of_day)),
                })
            })
            .collect()
    }

    /// The stats of every group over each of `series` (a range and its
    /// periods): key `None` is the total, `Some(value)` a breakdown entry
    /// (with its label). One pass over the customers fills every series, so
    /// each customer's movements are read while they are in cache.
    fn group_stats<const N: usize>(
        &self,
        series: [(&DateRange, &[Period]); N],
        selected: &[Selected],
    ) -> Result<[Groups; N]> {
        let base = self.ledger.settings().base_currency;
        let specs = series.map(|(range, list)| SeriesSpec {
            range: *range,
            periods: list,
            currency: self.currency,
            conversion: self.conversion,
            fx: self.ledger.fx(),
            currencies: &self.currencies,
            kinds: &self.kinds,
            subtypes: &self.subtypes,
            as_of_day: self.as_of_day,
        });
        let empty = || -> [Groups; N] {
            specs.each_ref().map(|spec| {
                Groups::from([(
                    None,
                    (
                        String::new(),
                        vec![PeriodStats::default(); spec.periods.len()],
                    ),
                )])
            })
        };
        // Customers add up independently: runs of them on every core,
        // merged in order (so an error is the first customer's).
        let runs = fold_runs(selected, empty, |outs, customer| {
            for (spec, out) in specs.iter().zip(outs.iter_mut()) {
                self.add_to_groups(spec, customer, base, out)?;
            }
            Ok(())
        })?;
        let mut total = empty();
        for outs in runs {
            for (into, from) in total.iter_mut().zip(outs) {
                merge_groups(into, from);
            }
        }
        if selected.iter().any(|customer| customer.group.is_some()) {
            total.iter_mut().for_each(add_entries_to_total);
        }
        Ok(total)
    }

    /// Adds one customer to the total and to its breakdown groups of `out`.
    /// A customer-level breakdown (plan, country, ...) adds the customer to
    /// its group alone: the groups are added into the total once, at the
    /// end ([`add_entries_to_total`]).
    fn add_to_groups(
        &self,
        spec: &SeriesSpec,
        customer: &Selected,
        base: Currency,
        out: &mut Groups,
    ) -> Result<()> {
        let movements = customer.movements;
        if let Some((value, label)) = &customer.group {
            let entry = out.entry(Some(value.clone())).or_insert_with(|| {
                (
                    label.clone(),
                    vec![PeriodStats::default(); spec.periods.len()],
                )
            });
            return spec.add_customer(movements, base, &mut entry.1);
        }
        spec.add_customer(movements, base, &mut out.get_mut(&None).expect("total").1)?;
        match self.breakdown {
            None => {}
            Some("currency") => {
                let mut currencies: Vec<Currency> = movements.iter().map(|m| m.currency).collect();
                currencies.sort();
                currencies.dedup();
                for currency in currencies
                    .into_iter()
                    .filter(|c| self.currencies.is_empty() || self.currencies.contains(c))
                {
                    let only = [currency];
                    let one = SeriesSpec {
                        currencies: &only,
                        ..spec_copy(spec)
                    };
                    let entry = out
                        .entry(Some(currency.as_str().to_string()))
                        .or_insert_with(|| {
                            (
                                currency.as_str().to_string(),
                                vec![PeriodStats::default(); spec.periods.len()],
                            )
                        });
                    one.add_customer(movements, base, &mut entry.1)?;
                }
            }
            Some("subtype") => {
                let mut subtypes: Vec<MovementSubtype> =
                    movements.iter().map(|m| m.subtype).collect();
                subtypes.sort_by_key(|s| s.as_str());
                subtypes.dedup();
                for subtype in subtypes
                    .into_iter()
                    .filter(|s| self.subtypes.is_empty() || self.subtypes.contains(s))
                {
                    let only = [subtype];
                    let one = SeriesSpec {
                        subtypes: &only,
                        ..spec_copy(spec)
                    };
                    let entry = out
                        .entry(Some(subtype.as_str().to_string()))
                        .or_insert_with(|| {
                            (
                                subtype.as_str().to_string(),
                                vec![PeriodStats::default(); spec.periods.len()],
                            )
                        });
                    let mut movement_only = vec![PeriodStats::default(); spec.periods.len()];
                    one.add_customer(movements, base, &mut movement_only)?;
                    for (into, from) in entry.1.iter_mut().zip(movement_only.iter()) {
                        add_movement_columns(into, from);
                    }
                }
            }
            // A customer-level breakdown without a group for this customer.
            Some(_) => {}
        }
        Ok(())
    }
}
