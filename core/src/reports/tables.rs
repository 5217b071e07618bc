//! Pivot tables for display: one row per metric, one column per period.
//!
//! Shape: `{currency, columns: [period start...], rows: [{metric, label,
//! values: [one per column]}]}`. `mrr-table` pivots the `mrr` report
//! (same parameters but `breakdown`); `mrr-table-subtypes` gives one row per movement
//! subtype (MRR moved by that subtype in each period) with a last row of
//! the total MRR.

use super::ReportParams;
use super::answer::{Cell, InCurrency, MetricRow, Pivot, ReportAnswer};
use super::mrr::{MrrRow, MrrSeries, period_row};
use super::partial::Body;
use crate::derive::Derived;
use crate::derive::movements::MovementSubtype;
use crate::error::Result;
use crate::money::Total;
use crate::period::Period;
use chrono::{DateTime, Utc};

/// A metric of a pivot: its name, its label and its value in a period.
type Metric<R> = (&'static str, &'static str, fn(&R) -> Cell);

/// The metrics of `mrr-table`, in order (each a column of the `mrr`
/// report).
const MRR_TABLE_ROWS: &[Metric<MrrRow>] = &[
    ("total_mrr", "MRR", |r| r.total_mrr.into()),
    ("total_arr", "ARR", |r| r.total_arr.into()),
    ("total_customers", "Customers", |r| r.total_customers.into()),
    ("new", "New MRR", |r| r.new.into()),
    ("expansion", "Expansion MRR", |r| r.expansion.into()),
    ("contraction", "Contraction MRR", |r| r.contraction.into()),
    ("churn", "Churned MRR", |r| r.churn.into()),
    ("reactivation", "Reactivation MRR", |r| {
        r.reactivation.into()
    }),
    ("fx_adjustment", "FX adjustment", |r| r.fx_adjustment.into()),
    ("mrr_diff", "Net MRR change", |r| r.mrr_diff.into()),
    ("customers_diff", "Net customer change", |r| {
        r.customers_diff.into()
    }),
    ("arpa", "ARPA", |r| r.arpa.into()),
    ("asp", "ASP", |r| r.asp.into()),
    ("customer_churn_rate", "Customer churn rate (%)", |r| {
        r.customer_churn_rate.into()
    }),
    ("mrr_churn_rate", "MRR churn rate (%)", |r| {
        r.mrr_churn_rate.into()
    }),
    ("net_mrr_churn_rate", "Net MRR churn rate (%)", |r| {
        r.net_mrr_churn_rate.into()
    }),
    ("nrr", "Net revenue retention (%)", |r| r.nrr.into()),
    ("quick_ratio", "Quick ratio", |r| r.quick_ratio.into()),
    ("ltv", "LTV", |r| r.ltv.into()),
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
) -> Result<ReportAnswer> {
    mrr_table_value(&MrrSeries::compute_by(ledger, params, as_of, None)?)
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
) -> Result<ReportAnswer> {
    mrr_table_value(&MrrSeries::finish(shape, params, as_of, None, body)?)
}

fn mrr_table_value(series: &MrrSeries) -> Result<ReportAnswer> {
    let periods: Vec<MrrRow> = (0..series.periods.len())
        .map(|i| period_row(series, i))
        .collect::<Result<_>>()?;
    let rows = MRR_TABLE_ROWS
        .iter()
        .map(|&(metric, label, value)| MetricRow {
            metric,
            movement: None,
            label,
            values: periods.iter().map(value).collect(),
        })
        .collect();
    Ok(table(series, rows))
}

pub(super) fn mrr_table_subtypes(
    ledger: &Derived<'_>,
    params: &ReportParams,
    as_of: DateTime<Utc>,
) -> Result<ReportAnswer> {
    subtypes_value(&MrrSeries::compute_by(
        ledger,
        params,
        as_of,
        Some("subtype"),
    )?)
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
) -> Result<ReportAnswer> {
    subtypes_value(&MrrSeries::finish(
        shape,
        params,
        as_of,
        Some("subtype"),
        body,
    )?)
}

fn subtypes_value(series: &MrrSeries) -> Result<ReportAnswer> {
    // A row's value in a period as cents, named when beyond 64-bit cents.
    let cell = |metric: &str, period: &Period, total: Total| {
        let what = || {
            let (start, end) = (period.start, period.end);
            format!(
                "the `{metric}` row of the period {start} to {end} in {}",
                series.currency
            )
        };
        total.cents(what).map(Cell::Int)
    };
    let mut rows: Vec<MetricRow> = SUBTYPE_ROWS
        .iter()
        .map(|(subtype, label)| {
            let values = series.periods.iter().enumerate().map(|(i, period)| {
                let moved = series
                    .groups
                    .get(subtype.as_str())
                    .map_or(Total::ZERO, |(_, group)| group.stats[i].movements());
                cell(subtype.as_str(), period, moved)
            });
            Ok(MetricRow {
                metric: subtype.as_str(),
                movement: Some(Some(subtype.kind().as_str())),
                label,
                values: values.collect::<Result<_>>()?,
            })
        })
        .collect::<Result<_>>()?;
    let totals = series.periods.iter().zip(&series.total.stats);
    rows.push(MetricRow {
        metric: "total_mrr",
        movement: Some(None),
        label: "MRR",
        values: totals
            .map(|(period, s)| cell("total_mrr", period, s.total_mrr))
            .collect::<Result<_>>()?,
    });
    Ok(table(series, rows))
}

fn table(series: &MrrSeries, rows: Vec<MetricRow>) -> ReportAnswer {
    Pivot {
        head: InCurrency {
            currency: series.currency,
        },
        columns: series.periods.iter().map(|p| p.start).collect(),
        rows,
    }
    .into()
}
