//! Pivot tables for display: one row per metric, one column per period.
//!
//! Shape: `{currency, columns: [period start...], rows: [{metric, label,
//! values: [one per column]}]}`. `mrr-table` pivots the `mrr` report
//! (same parameters but `breakdown`); `mrr-table-subtypes` gives one row per movement
//! subtype (MRR moved by that subtype in each period) with a last row of
//! the total MRR.

use super::ReportParams;
use super::mrr::{MrrSeries, period_row};
use super::partial::Body;
use crate::derive::Derived;
use crate::derive::movements::MovementSubtype;
use crate::error::Result;
use chrono::{DateTime, Utc};
use serde_json::{Value, json};

/// Rows of `mrr-table`: the metric (a field of an mrr period) and its label.
pub const MRR_TABLE_ROWS: &[(&str, &str)] = &[
    ("total_mrr", "MRR"),
    ("total_arr", "ARR"),
    ("total_customers", "Customers"),
    ("new", "New MRR"),
    ("expansion", "Expansion MRR"),
    ("contraction", "Contraction MRR"),
    ("churn", "Churned MRR"),
    ("reactivation", "Reactivation MRR"),
    ("fx_adjustment", "FX adjustment"),
    ("mrr_diff", "Net MRR change"),
    ("customers_diff", "Net customer change"),
    ("arpa", "ARPA"),
    ("asp", "ASP"),
    ("customer_churn_rate", "Customer churn rate (%)"),
    ("mrr_churn_rate", "MRR churn rate (%)"),
    ("net_mrr_churn_rate", "Net MRR churn rate (%)"),
    ("nrr", "Net revenue retention (%)"),
    ("quick_ratio", "Quick ratio"),
    ("ltv", "LTV"),
];

/// Subtypes in display order, with labels.
const SUBTYPE_ROWS: &[(MovementSubtype, &str)] = &[
    (MovementSubtype::New, "New"),
    (MovementSubtype::NewFromTrial, "New from trial"),
    (MovementSubtype::Expansion, "Expansion"),
    (MovementSubtype::Upgrade, "Upgrade"),
    (MovementSubtype::Contraction, "Contraction"),
    (MovementSubtype::Downgrade, "Downgrade"),
    (MovementSubtype::Cancellation, "Churn: cancellation"),
    (MovementSubtype::Refund, "Churn: refund"),
    (MovementSubtype::Lapse, "Churn: lapse"),
    (MovementSubtype::Reactivation, "Reactivation"),
];

pub(super) fn mrr_table(
    ledger: &Derived<'_>,
    params: &ReportParams,
    as_of: DateTime<Utc>,
) -> Result<Value> {
    Ok(mrr_table_value(&MrrSeries::compute_by(
        ledger, params, as_of, None,
    )?))
}

pub(super) fn mrr_table_partial(
    ledger: &Derived<'_>,
    params: &ReportParams,
    as_of: DateTime<Utc>,
) -> Result<Body> {
    MrrSeries::partial(ledger, params, as_of, None)
}

pub(super) fn mrr_table_finish(
    shape: &Derived<'_>,
    params: &ReportParams,
    as_of: DateTime<Utc>,
    body: Body,
) -> Result<Value> {
    Ok(mrr_table_value(&MrrSeries::finish(
        shape, params, as_of, None, body,
    )?))
}

fn mrr_table_value(series: &MrrSeries) -> Value {
    let periods: Vec<Value> = (0..series.periods.len())
        .map(|i| period_row(&series.periods[i], &series.total, i))
        .collect();
    let rows: Vec<Value> = MRR_TABLE_ROWS
        .iter()
        .map(|(metric, label)| {
            let values: Vec<Value> = periods.iter().map(|p| p[*metric].clone()).collect();
            json!({"metric": metric, "label": label, "values": values})
        })
        .collect();
    table(series, rows)
}

pub(super) fn mrr_table_subtypes(
    ledger: &Derived<'_>,
    params: &ReportParams,
    as_of: DateTime<Utc>,
) -> Result<Value> {
    Ok(subtypes_value(&MrrSeries::compute_by(
        ledger,
        params,
        as_of,
        Some("subtype"),
    )?))
}

pub(super) fn mrr_table_subtypes_partial(
    ledger: &Derived<'_>,
    params: &ReportParams,
    as_of: DateTime<Utc>,
) -> Result<Body> {
    MrrSeries::partial(ledger, params, as_of, Some("subtype"))
}

pub(super) fn mrr_table_subtypes_finish(
    shape: &Derived<'_>,
    params: &ReportParams,
    as_of: DateTime<Utc>,
    body: Body,
) -> Result<Value> {
    Ok(subtypes_value(&MrrSeries::finish(
        shape,
        params,
        as_of,
        Some("subtype"),
        body,
    )?))
}

fn subtypes_value(series: &MrrSeries) -> Value {
    let mut rows: Vec<Value> = SUBTYPE_ROWS
        .iter()
        .map(|(subtype, label)| {
            let values: Vec<Value> = (0..series.periods.len())
                .map(|i| {
                    let moved = series
                        .groups
                        .get(subtype.as_str())
                        .map_or(0, |(_, group)| group.stats[i].movements());
                    json!(moved)
                })
                .collect();
            json!({
                "metric": subtype.as_str(),
                "type": subtype.kind().as_str(),
                "label": label,
                "values": values,
            })
        })
        .collect();
    rows.push(json!({
        "metric": "total_mrr",
        "type": null,
        "label": "MRR",
        "values": series.total.stats.iter().map(|s| s.total_mrr).collect::<Vec<_>>(),
    }));
    table(series, rows)
}

fn table(series: &MrrSeries, rows: Vec<Value>) -> Value {
    let columns: Vec<String> = series.periods.iter().map(|p| p.start.to_string()).collect();
    json!({
        "currency": series.currency.as_str(),
        "columns": columns,
        "rows": rows,
    })
}
