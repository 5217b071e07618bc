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
use super::filters::{CustomerFacts, CustomerFilter, currency_filter};
use super::series::{Conversion, PeriodStats, SeriesSpec};
use crate::error::Result;
use crate::ledger::Ledger;
use crate::movements::MovementKind;
use crate::period::{DateRange, PeriodInterval, periods};
use crate::query::Query;
use chrono::{DateTime, NaiveDate, Utc};
use serde_json::{Value, json};
use std::collections::BTreeMap;

pub(super) fn cohort(
    ledger: &Ledger,
    params: &ReportParams,
    as_of: DateTime<Utc>,
) -> Result<Value> {
    let q = Query::new(params);
    let settings = ledger.settings();
    let week_start = settings.week_start();
    let as_of_day = as_of.with_timezone(&settings.timezone).date_naive();
    let range = q.date_range(as_of_day)?;
    let interval = q.interval(PeriodInterval::Month)?;
    let metric = q.choice("metric", &["customers", "mrr"], "customers")?;
    let currency = q.base_currency(settings)?;
    let conversion = if q.flag("fix_fx")? {
        Conversion::Fixed(q.date("fx_date")?.unwrap_or(range.start))
    } else {
        Conversion::Daily
    };
    let filter = CustomerFilter::from_params(ledger, params)?;
    let currencies = currency_filter(params)?;
    let base = settings.base_currency;
    let last_day = as_of_day.max(range.start);

    // Cohort start -> the members' replays.
    let replays = ledger.replays(as_of)?;
    let mut cohorts: BTreeMap<NaiveDate, Vec<&crate::timeline::Replay>> = BTreeMap::new();
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
            if !filter.matches(
                ledger,
                &CustomerFacts::gather(ledger, customer, Some(replay), as_of),
                as_of_day,
            ) {
                continue;
            }
        }
        cohorts
            .entry(interval.align(first.date, week_start))
            .or_default()
            .push(replay);
    }

    let mut result = Vec::new();
    for (start, members) in &cohorts {
        let span = DateRange {
            start: *start,
            end: last_day.max(*start),
        };
        let list = periods(&span, interval, week_start);
        let spec = SeriesSpec {
            range: span,
            periods: &list,
            currency,
            conversion,
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
        let (size, size_mrr) = stats
            .first()
            .map_or((0, 0), |s| (s.total_customers, s.total_mrr));
        let percent = |part: i64, whole: i64| -> Value {
            if whole == 0 {
                Value::Null
            } else {
                json!(100.0 * part as f64 / whole as f64)
            }
        };
        let cells: Vec<Value> = list
            .iter()
            .zip(stats.iter())
            .enumerate()
            .map(|(offset, (p, s))| {
                let (value, pct) = if metric == "mrr" {
                    (s.total_mrr, percent(s.total_mrr, size_mrr))
                } else {
                    (s.total_customers, percent(s.total_customers, size))
                };
                json!({
                    "offset": offset,
                    "date": p.start.to_string(),
                    "customers": s.total_customers,
                    "mrr": s.total_mrr,
                    "customers_percent": percent(s.total_customers, size),
                    "mrr_percent": percent(s.total_mrr, size_mrr),
                    "value": value,
                    "percent": pct,
                })
            })
            .collect();
        result.push(json!({
            "cohort": start.to_string(),
            "new_customers": members.len(),
            "customers": size,
            "mrr": size_mrr,
            "periods": cells,
        }));
    }
    Ok(json!({
        "currency": currency.as_str(),
        "interval": interval.as_str(),
        "metric": metric,
        "result": result,
    }))
}
