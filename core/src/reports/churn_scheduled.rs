//! The scheduled-churn reports: `churn-scheduled` (per period),
//! `churn-scheduled-movements` (the churns of one period) and
//! `churn-scheduled-summary` (this period, the next, and their change), over
//! the scheduled changes of [`super::scheduled`].

use super::ReportParams;
use super::answer::{Listing, NoHead, PerInterval, ReportAnswer, Series, Single};
use super::partial::rows::{KeyPart, ListPart, Row, Scalar, SumsPart, TopRows};
use super::partial::{Body, wrong_body};
use super::request::Breakdown;
use super::scheduled::{Request, Scheduled, ScheduledRow, ScheduledView, row, scheduled};
use crate::derive::Derived;
use crate::derive::movements::MovementKind;
use crate::error::{Error, Result};
use crate::money::{Cents, Currency, Total};
use crate::period::{DateRange, PeriodInterval, periods};
use crate::query::filters::{CustomerFacts, breakdown_value};
use crate::query::{ListDefaults, Order, Query, Sorting};
use chrono::{DateTime, Datelike, Duration, NaiveDate, Utc};
use serde::Serialize;

/// `sort` and `order` of the listed churns: by date, latest first (the
/// list is not paged).
const LIST: ListDefaults = ListDefaults {
    sorts: &["date", "mrr_change", "customer_name"],
    sort: "date",
    order: Order::Desc,
    limit: usize::MAX,
    max_limit: None,
};

/// The `selected-type` values of `churn-scheduled-movements`: the interval
/// whose period `selected-date` picks.
const SELECTED_TYPES: [&str; 5] = [
    "day_churn",
    "week_churn",
    "month_churn",
    "quarter_churn",
    "year_churn",
];

/// The scheduled churns only.
fn churns<'a>(
    ledger: &'a Derived<'a>,
    params: &ReportParams,
    as_of: DateTime<Utc>,
    req: &Request,
) -> Result<Vec<Scheduled<'a>>> {
    Ok(scheduled(ledger, params, as_of, req)?
        .into_iter()
        .filter(|s| s.movement.kind == MovementKind::Churn)
        .collect())
}

/// Sums of scheduled churn: (customers, MRR).
fn totals(rows: &[&Scheduled]) -> (Total, Total) {
    let customers = rows
        .iter()
        .map(|s| -i64::from(s.movement.customer_count_change))
        .sum();
    (customers, rows.iter().map(|s| s.base).sum())
}

/// Scheduled churn's customers and MRR of one period (or all of it), as
/// counts and cents; `what` names where they are.
fn churn_figures(sums: &[Total], what: &dyn Fn(&str) -> String) -> Result<(i64, Cents)> {
    Ok((
        sums[0].cents(|| what("customers"))?,
        sums[1].cents(|| what("churn"))?,
    ))
}

/// `churn-scheduled`: scheduled churn per period, from the `as_of` day
/// through a year ahead unless `date` says otherwise.
pub(super) struct ChurnScheduled;

impl ScheduledView for ChurnScheduled {
    const NAME: &'static str = "churn-scheduled";

    fn part(
        ledger: &Derived<'_>,
        params: &ReportParams,
        as_of: DateTime<Utc>,
        req: &Request,
    ) -> Result<Body> {
        let series = ChurnSeries::read(ledger, params, req)?;
        Ok(Body::Sums(
            series.part(&churns(ledger, params, as_of, req)?),
        ))
    }

    fn value(
        shape: &Derived<'_>,
        params: &ReportParams,
        req: &Request,
        body: Body,
    ) -> Result<ReportAnswer> {
        let series = ChurnSeries::read(shape, params, req)?;
        match body {
            Body::Sums(part) if part.sums.len() == 2 * series.list.len() => {
                series.value(req, &part)
            }
            other => Err(wrong_body(Self::NAME, &other)),
        }
    }
}

/// The periods of `churn-scheduled`.
struct ChurnSeries {
    interval: PeriodInterval,
    range: DateRange,
    list: Vec<crate::period::Period>,
}

impl ChurnSeries {
    fn read(ledger: &Derived<'_>, params: &ReportParams, req: &Request) -> Result<ChurnSeries> {
        let q = Query::new(params);
        let interval = q.interval(PeriodInterval::Month)?;
        let range = match q.text("date") {
            Some(_) => q.date_range(req.as_of_day)?,
            None => DateRange {
                start: req.as_of_day,
                end: req.as_of_day + Duration::days(365),
            },
        };
        let list = periods(&range, interval, ledger.settings().week_start());
        Ok(ChurnSeries {
            interval,
            range,
            list,
        })
    }

    /// Per period: the customers and the MRR of the scheduled churn.
    fn part(&self, rows: &[Scheduled]) -> SumsPart {
        let mut sums = Vec::with_capacity(2 * self.list.len());
        for p in &self.list {
            let inside: Vec<&Scheduled> = rows
                .iter()
                .filter(|s| {
                    s.movement.date >= p.first_counted_day(&self.range) && s.movement.date <= p.end
                })
                .collect();
            let (customers, mrr) = totals(&inside);
            sums.extend([customers, mrr]);
        }
        SumsPart {
            sums,
            rows: TopRows::default(),
        }
    }

    fn value(&self, req: &Request, part: &SumsPart) -> Result<ReportAnswer> {
        let result = self
            .list
            .iter()
            .zip(part.sums.chunks(2))
            .map(|(p, sums)| {
                let what = |figure: &str| {
                    let (start, end, currency) = (p.start, p.end, req.currency);
                    format!("the `{figure}` of the period {start} to {end} in {currency}")
                };
                let (customers, churn) = churn_figures(sums, &what)?;
                Ok(ChurnRow {
                    date: p.start,
                    end_date: p.end,
                    customers,
                    churn,
                })
            })
            .collect::<Result<_>>()?;
        let head = PerInterval {
            currency: req.currency,
            interval: self.interval.as_str(),
        };
        Ok(Series { head, result }.into())
    }
}

/// `churn-scheduled-movements`: the scheduled churn rows, newest first
/// unless `sort` (date, mrr_change, customer_name) and `order` say
/// otherwise; `selected-date` with `selected-type` (`month_churn`, ...)
/// keeps one period of that interval.
pub(super) struct ChurnScheduledMovements;

impl ScheduledView for ChurnScheduledMovements {
    const NAME: &'static str = "churn-scheduled-movements";

    fn part(
        ledger: &Derived<'_>,
        params: &ReportParams,
        as_of: DateTime<Utc>,
        req: &Request,
    ) -> Result<Body> {
        Ok(Body::List(movements_part(ledger, params, as_of, req)?))
    }

    fn value(_: &Derived<'_>, _: &ReportParams, _: &Request, body: Body) -> Result<ReportAnswer> {
        match body {
            Body::List(part) => Ok(Listing {
                head: NoHead,
                count: part.rows.count as usize,
                list: part.rows.into_page::<ScheduledRow>(0, usize::MAX)?,
            }
            .into()),
            other => Err(wrong_body(Self::NAME, &other)),
        }
    }
}

/// The rows of `churn-scheduled-movements`, keyed by the requested order
/// then customer id, day, currency and place.
fn movements_part(
    ledger: &Derived<'_>,
    params: &ReportParams,
    as_of: DateTime<Utc>,
    req: &Request,
) -> Result<ListPart> {
    let q = Query::new(params);
    let week_start = ledger.settings().week_start();
    let mut interval = q.interval(PeriodInterval::Month)?;
    if let Some(name) = q.optional_choice("selected-type", &SELECTED_TYPES)? {
        let selected = PeriodInterval::parse(name.trim_end_matches("_churn")).unwrap_or(interval);
        // The type names its period: an `interval` that says another is refused.
        if q.text("interval").is_some() && selected != interval {
            return Err(Error::query(
                "selected-type",
                format!(
                    "`{name}` lists {} periods, but `interval` asks for another",
                    selected.as_str()
                ),
            ));
        }
        interval = selected;
    }
    let selected = q
        .date("selected-date")?
        .map(|d| interval.align(d, week_start));
    let group = Breakdown::group_from_query(&q)?;
    let Sorting { by: sort, order } = Sorting::read(&q, &LIST)?;
    let mut rows = churns(ledger, params, as_of, req)?;
    rows.retain(|s| selected.is_none_or(|p| interval.align(s.movement.date, week_start) == p));
    if let Some((key, wanted)) = group {
        rows.retain(|s| {
            let value = match key {
                "currency" => s.movement.currency.as_str().to_lowercase(),
                "subtype" => s.movement.subtype.as_str().to_string(),
                _ => {
                    let replay = ledger.replays(as_of).ok();
                    let replay = replay
                        .as_ref()
                        .and_then(|r| r.get(&s.customer.id))
                        .map(|r| &**r);
                    let facts = CustomerFacts::gather(ledger, s.customer, replay, as_of);
                    breakdown_value(ledger, key, &facts, req.as_of_day)
                        .0
                        .to_lowercase()
                }
            };
            value == wanted
        });
    }
    let list: Vec<Row> = rows
        .iter()
        .map(|s| {
            let primary = match sort {
                "mrr_change" => Scalar::Int(s.base.into()),
                "customer_name" => Scalar::Text(s.customer.name.to_string()),
                _ => Scalar::Int(s.movement.date.num_days_from_ce().into()),
            };
            let mut key = vec![
                KeyPart::new(primary, order == Order::Desc),
                KeyPart::text(s.customer.id.as_str()),
            ];
            key.extend(s.key().into_iter().skip(2).collect::<Vec<_>>());
            key.insert(2, KeyPart::int(s.movement.date.num_days_from_ce()));
            let written = row(ledger, s, Some(interval.align(s.movement.date, week_start)));
            Row::new(key, written)
        })
        .collect();
    Ok(ListPart {
        found: Default::default(),
        rows: TopRows::new(list, usize::MAX),
    })
}

/// `churn-scheduled-summary`: all scheduled churn, the part in the current
/// `interval` period (after `as_of`) and in the next one, and the change.
pub(super) struct ChurnScheduledSummary;

impl ScheduledView for ChurnScheduledSummary {
    const NAME: &'static str = "churn-scheduled-summary";

    fn part(
        ledger: &Derived<'_>,
        params: &ReportParams,
        as_of: DateTime<Utc>,
        req: &Request,
    ) -> Result<Body> {
        Ok(Body::Sums(summary_part(ledger, params, as_of, req)?))
    }

    fn value(
        shape: &Derived<'_>,
        params: &ReportParams,
        req: &Request,
        body: Body,
    ) -> Result<ReportAnswer> {
        match body {
            Body::Sums(part) if part.sums.len() == 6 => summary_value(shape, params, req, &part),
            other => Err(wrong_body(Self::NAME, &other)),
        }
    }
}

/// The current and next periods of `churn-scheduled-summary`.
fn summary_periods(
    ledger: &Derived<'_>,
    params: &ReportParams,
    req: &Request,
) -> Result<(PeriodInterval, NaiveDate, NaiveDate)> {
    let interval = Query::new(params).interval(PeriodInterval::Month)?;
    let current = interval.align(req.as_of_day, ledger.settings().week_start());
    Ok((interval, current, interval.next(current)))
}

/// Scheduled churn (customers, MRR): all of it, in the current period and
/// in the next.
fn summary_part(
    ledger: &Derived<'_>,
    params: &ReportParams,
    as_of: DateTime<Utc>,
    req: &Request,
) -> Result<SumsPart> {
    let (interval, current, next) = summary_periods(ledger, params, req)?;
    let week_start = ledger.settings().week_start();
    let rows = churns(ledger, params, as_of, req)?;
    let in_period = |start: NaiveDate| -> Vec<&Scheduled> {
        rows.iter()
            .filter(|s| interval.align(s.movement.date, week_start) == start)
            .collect()
    };
    let all: Vec<&Scheduled> = rows.iter().collect();
    let (customers, mrr) = totals(&all);
    let (current_customers, current_mrr) = totals(&in_period(current));
    let (next_customers, next_mrr) = totals(&in_period(next));
    Ok(SumsPart {
        sums: vec![
            customers,
            mrr,
            current_customers,
            current_mrr,
            next_customers,
            next_mrr,
        ],
        rows: TopRows::default(),
    })
}

/// Scheduled churn in a period (or all of it): customers lost and their
/// MRR in cents of the report's currency.
#[derive(Serialize)]
struct ChurnRow {
    date: NaiveDate,
    end_date: NaiveDate,
    customers: i64,
    churn: Cents,
}

/// The `churn-scheduled-summary` answer.
#[derive(Serialize)]
struct ChurnSummaryAnswer {
    currency: Currency,
    summary: ChurnSummary,
}

/// All scheduled churn, the current and next periods' and the change
/// between them.
#[derive(Serialize)]
struct ChurnSummary {
    customers: i64,
    churn: Cents,
    current: ChurnRow,
    next: ChurnRow,
    change: ChurnChange,
}

#[derive(Serialize)]
struct ChurnChange {
    customers: i64,
    churn: Cents,
}

fn summary_value(
    ledger: &Derived<'_>,
    params: &ReportParams,
    req: &Request,
    part: &SumsPart,
) -> Result<ReportAnswer> {
    let (interval, current, next) = summary_periods(ledger, params, req)?;
    let currency = req.currency;
    let figures = |at: &str, sums: &[Total]| {
        churn_figures(sums, &|figure| format!("the `{at}{figure}` in {currency}"))
    };
    let (customers, churn) = figures("", &part.sums[0..2])?;
    let period = |at: &str, date: NaiveDate, sums: &[Total]| -> Result<ChurnRow> {
        let (customers, churn) = figures(at, sums)?;
        Ok(ChurnRow {
            date,
            end_date: interval.next(date).pred_opt().unwrap_or(date),
            customers,
            churn,
        })
    };
    let (now, then) = (&part.sums[2..4], &part.sums[4..6]);
    let change = [then[0] - now[0], then[1] - now[1]];
    let change = figures("change.", &change)?;
    let summary = ChurnSummary {
        customers,
        churn,
        current: period("current.", current, now)?,
        next: period("next.", next, then)?,
        change: ChurnChange {
            customers: change.0,
            churn: change.1,
        },
    };
    Ok(Single {
        currency: Some(req.currency),
        value: ChurnSummaryAnswer {
            currency: req.currency,
            summary,
        },
    }
    .into())
}

#[cfg(test)]
mod tests {
    use crate::Ledger;
    use crate::model::Settings;
    use crate::query::params;

    #[test]
    fn selected_type_names_the_interval_of_the_selected_period() {
        let ledger = Ledger::new(Settings::default());
        let as_of = "2024-06-01T00:00:00Z".parse().unwrap();
        let run = |value: &str| {
            let p = params(&[("selected-type", value), ("selected-date", "2024-07-10")]);
            ledger.report("churn-scheduled-movements", &p, as_of)
        };
        assert_eq!(run("week_churn").unwrap()["result"]["count"], 0);
        let error = run("month").unwrap_err();
        assert_eq!(
            error.to_string(),
            "parameter `selected-type`: `month` is not one of day_churn, week_churn, month_churn, quarter_churn, year_churn"
        );
    }
}
