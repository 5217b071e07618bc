//! `cohort`: customers grouped by the period of their first payment (their
//! first day with MRR), followed period by period until `as_of`.
//!
//! For each cohort and each period offset (0 is the cohort's own period):
//! the customers still paying at the period's end and their MRR, both also
//! as a percentage of the cohort at the end of its first period. `metric`
//! (`customers`, default, or `mrr`) picks which of them `value` and
//! `percent` repeat for display. Cohorts start in the `date` range (default
//! the 365 days ending at `as_of`); `interval` is day to year (default
//! month); the usual customer filters and `baseCurrency`, `fix_fx`,
//! `fx_date` apply as in the mrr report.

use super::ReportParams;
use super::answer::{Head, ReportAnswer, Series};
use super::partial::{Body, wrong_body};
use super::request::SeriesRequest;
use super::series::{Conversion, PeriodStats, SeriesSpec};
use crate::derive::Derived;
use crate::derive::movements::MovementKind;
use crate::error::Result;
use crate::money::{Cents, Currency, Total};
use crate::period::{DateRange, Period, PeriodInterval, periods};
use crate::query::Query;
use crate::query::filters::{CustomerFilter, currency_filter};
use chrono::{DateTime, NaiveDate, Utc};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The request of a cohort report.
struct Request {
    range: DateRange,
    interval: PeriodInterval,
    metric: &'static str,
    currency: Currency,
    conversion: Conversion,
    week_start: chrono::Weekday,
    as_of_day: NaiveDate,
}

impl Request {
    fn read(ledger: &Derived<'_>, params: &ReportParams, as_of: DateTime<Utc>) -> Result<Request> {
        let q = Query::new(params);
        let settings = ledger.settings();
        let as_of_day = as_of.with_timezone(&settings.timezone).date_naive();
        let SeriesRequest {
            range,
            interval,
            currency,
            conversion,
        } = SeriesRequest::read(&q, settings, as_of_day)?;
        let metric = q.choice("metric", &["customers", "mrr"], "customers")?;
        Ok(Request {
            range,
            interval,
            metric,
            currency,
            conversion,
            week_start: settings.week_start(),
            as_of_day,
        })
    }

    /// The periods a cohort starting at `start` is followed through.
    fn periods_of(&self, start: NaiveDate) -> (DateRange, Vec<Period>) {
        let last_day = self.as_of_day.max(self.range.start);
        let span = DateRange {
            start,
            end: last_day.max(start),
        };
        let list = periods(&span, self.interval, self.week_start);
        (span, list)
    }
}

/// The cohort table's sums over a ledger's customers: per cohort (by its
/// start), its members and the period stats of their MRR.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Part {
    cohorts: BTreeMap<NaiveDate, (i64, Vec<PeriodStats>)>,
}

impl Part {
    pub(crate) fn merge(mut self, other: Part) -> Part {
        for (start, (members, stats)) in other.cohorts {
            match self.cohorts.get_mut(&start) {
                Some((mine, own)) => {
                    *mine += members;
                    for (into, from) in own.iter_mut().zip(stats.iter()) {
                        into.add(from);
                    }
                }
                None => {
                    self.cohorts.insert(start, (members, stats));
                }
            }
        }
        self
    }
}

pub(super) fn cohort(
    ledger: &Derived<'_>,
    params: &ReportParams,
    as_of: DateTime<Utc>,
) -> Result<ReportAnswer> {
    let request = Request::read(ledger, params, as_of)?;
    let part = compute(ledger, params, as_of, &request)?;
    render(&request, part)
}

pub(super) fn partial(
    ledger: &Derived<'_>,
    params: &ReportParams,
    as_of: DateTime<Utc>,
) -> Result<Body> {
    let request = Request::read(ledger, params, as_of)?;
    Ok(Body::Cohort(compute(ledger, params, as_of, &request)?))
}

pub(super) fn finish(
    shape: &Derived<'_>,
    params: &ReportParams,
    as_of: DateTime<Utc>,
    body: Body,
) -> Result<ReportAnswer> {
    match body {
        Body::Cohort(part) => render(&Request::read(shape, params, as_of)?, part),
        other => Err(wrong_body("cohort", &other)),
    }
}

fn compute(
    ledger: &Derived<'_>,
    params: &ReportParams,
    as_of: DateTime<Utc>,
    request: &Request,
) -> Result<Part> {
    let filter = CustomerFilter::from_params(ledger, params)?;
    let currencies = currency_filter(params)?;
    let base = ledger.settings().base_currency;
    let (range, interval, as_of_day) = (request.range, request.interval, request.as_of_day);

    // Cohort start -> the members' replays.
    let replays = ledger.replays(as_of)?;
    let mut cohorts: BTreeMap<NaiveDate, Vec<&crate::derive::timeline::Replay>> = BTreeMap::new();
    for (id, replay) in replays.iter() {
        let Some(first) = replay
            .movements
            .iter()
            .find(|m| m.kind == MovementKind::New)
        else {
            continue;
        };
        if !range.contains(first.date) {
            continue;
        }
        if !filter.is_empty() {
            let Some(customer) = ledger.customer(id.as_str()) else {
                continue;
            };
            if !filter.keeps(ledger, customer, Some(replay), as_of, as_of_day) {
                continue;
            }
        }
        cohorts
            .entry(interval.align(first.date, request.week_start))
            .or_default()
            .push(replay);
    }

    let mut part = Part::default();
    for (start, members) in &cohorts {
        let (span, list) = request.periods_of(*start);
        let spec = SeriesSpec {
            range: span,
            periods: &list,
            currency: request.currency,
            conversion: request.conversion,
            fx: ledger.fx(),
            currencies: &currencies,
            kinds: &[],
            subtypes: &[],
            as_of_day,
        };
        let mut stats = vec![PeriodStats::default(); list.len()];
        for replay in members {
            spec.add_customer(&replay.movements, base, &mut stats)?;
        }
        part.cohorts.insert(*start, (members.len() as i64, stats));
    }
    Ok(part)
}

/// The head of the `cohort` answer.
#[derive(Serialize)]
struct CohortHead {
    currency: Currency,
    interval: &'static str,
    metric: &'static str,
}

impl Head for CohortHead {
    fn currency(&self) -> Option<Currency> {
        Some(self.currency)
    }
}

/// One cohort: its period, how many customers started in it, and its
/// customers and MRR at the end of its first period.
#[derive(Serialize)]
struct CohortRow {
    cohort: NaiveDate,
    new_customers: i64,
    customers: i64,
    mrr: Cents,
    periods: Vec<CohortCell>,
}

/// A cohort in one period: who still pays and their MRR, each also in
/// percent of the cohort's first period; `value` and `percent` repeat the
/// requested metric's.
#[derive(Serialize)]
struct CohortCell {
    offset: usize,
    date: NaiveDate,
    customers: i64,
    mrr: Cents,
    customers_percent: Option<f64>,
    mrr_percent: Option<f64>,
    value: i64,
    percent: Option<f64>,
}

fn render(request: &Request, part: Part) -> Result<ReportAnswer> {
    let metric = request.metric;
    let mut result = Vec::new();
    for (start, (members, stats)) in &part.cohorts {
        let (_, list) = request.periods_of(*start);
        // The MRR of the cohort's customers in one of its periods, as cents.
        let mrr_of = |period: &Period, total: Total| {
            total.cents(|| {
                format!(
                    "the `mrr` of cohort {start} in the period {} to {} in {}",
                    period.start, period.end, request.currency
                )
            })
        };
        let (size, size_mrr) = match (list.first(), stats.first()) {
            (Some(first), Some(s)) => (s.total_customers, mrr_of(first, s.total_mrr)?),
            _ => (0, 0),
        };
        let percent =
            |part: i64, whole: i64| (whole != 0).then(|| 100.0 * part as f64 / whole as f64);
        let periods = list
            .iter()
            .zip(stats.iter())
            .enumerate()
            .map(|(offset, (p, s))| {
                let mrr = mrr_of(p, s.total_mrr)?;
                let (value, pct) = if metric == "mrr" {
                    (mrr, percent(mrr, size_mrr))
                } else {
                    (s.total_customers, percent(s.total_customers, size))
                };
                Ok(CohortCell {
                    offset,
                    date: p.start,
                    customers: s.total_customers,
                    mrr,
                    customers_percent: percent(s.total_customers, size),
                    mrr_percent: percent(mrr, size_mrr),
                    value,
                    percent: pct,
                })
            })
            .collect::<Result<_>>()?;
        result.push(CohortRow {
            cohort: *start,
            new_customers: *members,
            customers: size,
            mrr: size_mrr,
            periods,
        });
    }
    Ok(Series {
        head: CohortHead {
            currency: request.currency,
            interval: request.interval.as_str(),
            metric,
        },
        result,
    }
    .into())
}
