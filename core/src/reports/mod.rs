//! The report registry: every report is reached by its interface name with
//! the query-string parameters of its HTTP endpoint (strings) and an `as_of`,
//! and answers JSON in the interface's response shape. Python, Node, the
//! service and the CLI all call [`Ledger::report`].

pub mod cashflow;
mod cohort;
mod customers;
pub(crate) mod daily_totals;
pub mod events;
pub mod filters;
mod invoices;
pub mod leads;
pub mod movement_table;
pub mod mrr;
mod scheduled;
pub mod series;
mod snapshot;
mod summary;
mod tables;
pub mod transactions;

use crate::error::{Error, Result};
use crate::ledger::Ledger;
use chrono::{DateTime, Utc};
use serde_json::Value;
use std::collections::BTreeMap;

/// Query parameters of a report, as strings (the HTTP query string).
pub type ReportParams = BTreeMap<String, String>;

type ReportFn = fn(&Ledger, &ReportParams, DateTime<Utc>) -> Result<Value>;

/// Every report name with its function, in the order the interface lists them.
const REPORTS: &[(&str, ReportFn)] = &[
    ("summary", summary::summary),
    ("mrr", mrr::mrr),
    ("cmrr-summary", scheduled::cmrr_summary),
    ("cohort", cohort::cohort),
    ("churn-scheduled", scheduled::churn_scheduled),
    (
        "churn-scheduled-movements",
        scheduled::churn_scheduled_movements,
    ),
    (
        "churn-scheduled-summary",
        scheduled::churn_scheduled_summary,
    ),
    ("map", snapshot::map),
    ("customer-concentration", snapshot::concentration),
    ("custom-variables", snapshot::custom_variables),
    ("movement-table", movement_table::movement_table),
    ("invoices-detail", invoices::invoices_detail),
    ("mrr-table", tables::mrr_table),
    ("mrr-table-subtypes", tables::mrr_table_subtypes),
    ("leads", leads::leads),
    ("leads-days", leads::leads_days),
    ("leads-summary", leads::leads_summary),
    ("leads-table", leads::leads_table),
    ("transactions", transactions::transactions),
    ("transactions-detail", transactions::transactions_detail),
    ("transactions-summary", transactions::transactions_summary),
    ("transactions-table", transactions::transactions_table),
    ("cashflow-failed-payments", cashflow::failed_payments),
    (
        "cashflow-failed-payments-detail",
        cashflow::failed_payments_detail,
    ),
    (
        "cashflow-failed-payments-summary",
        cashflow::failed_payments_summary,
    ),
    (
        "cashflow-failed-payments-table",
        cashflow::failed_payments_table,
    ),
    ("cashflow-refunds", cashflow::refunds),
    ("cashflow-refunds-detail", cashflow::refunds_detail),
    ("cashflow-refunds-table", cashflow::refunds_table),
    ("cashflow-failure-rate", cashflow::failure_rate),
    (
        "cashflow-failure-rate-summary",
        cashflow::failure_rate_summary,
    ),
    ("cashflow-outstanding-unpaid", cashflow::outstanding_unpaid),
];

/// The names of every report, in registry order.
pub fn report_names() -> Vec<&'static str> {
    REPORTS.iter().map(|(name, _)| *name).collect()
}

impl Ledger {
    /// Runs the report `name` with HTTP query parameters at `as_of`.
    pub fn report(&self, name: &str, params: &ReportParams, as_of: DateTime<Utc>) -> Result<Value> {
        let (_, run) = REPORTS
            .iter()
            .find(|(known, _)| *known == name)
            .ok_or_else(|| Error::UnknownReport {
                name: name.to_string(),
                known: report_names().join(", "),
            })?;
        run(self, params, as_of)
    }
}
