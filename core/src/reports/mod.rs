//! The reports: every report is reached by its interface name with the
//! query-string parameters of its HTTP endpoint (strings) and an `as_of`,
//! and answers JSON in the interface's response shape. Python, Node, the
//! service and the CLI all call [`Ledger::report`]; which report reads
//! which parameters is the [`Report`] registry's.

pub(crate) mod cashflow;
mod churn_scheduled;
mod cohort;
mod customers;
pub(crate) mod daily_totals;
mod event_parts;
pub(crate) mod events;
pub(crate) mod filters;
mod invoices;
pub(crate) mod leads;
pub(crate) mod movement_table;
pub(crate) mod mrr;
mod mrr_parts;
mod mrr_rows;
mod params;
pub(crate) mod partial;
mod registry;
mod request;
pub mod result;
mod scheduled;
pub mod schema;
pub(crate) mod series;
mod snapshot;
mod summary;
mod tables;
pub mod transactions;
mod unpaid;
mod variables;

pub use params::{ReportParam, near_miss};
pub use partial::ReportPartial;
pub use registry::Report;
pub use result::{ReportTable, TableColumn};
pub use schema::{Column, Kind, MoneyIn, ReportSchema};

use crate::error::Result;
use crate::ledger::Ledger;
use chrono::{DateTime, Utc};
use serde_json::Value;
use std::collections::BTreeMap;

/// Query parameters of a report, as strings (the HTTP query string).
pub type ReportParams = BTreeMap<String, String>;

/// The names of every report, in registry order.
pub fn report_names() -> Vec<&'static str> {
    Report::all().iter().map(|report| report.name).collect()
}

/// The columns of the report `name` (see [`mod@schema`]).
///
/// # Errors
///
/// [`Error::UnknownReport`](crate::Error::UnknownReport) for a name the
/// registry does not know.
pub fn schema(name: &str) -> Result<ReportSchema> {
    Ok(Report::find(name)?.schema())
}

/// Every report with its parameters and columns, in registry order:
/// `[{name, parameters: [{name, accepts}], columns: {shape, columns}}]`.
pub fn catalogue() -> Value {
    Value::Array(Report::all().iter().map(Report::describe).collect())
}

impl Ledger {
    /// Runs the report `name` (see [`report_names`]) with HTTP query
    /// parameters at `as_of`; the answer is JSON in the interface's response
    /// shape for that report.
    ///
    /// # Errors
    ///
    /// [`Error::UnknownReport`](crate::Error::UnknownReport) for a name the registry does not know;
    /// [`Error::UnknownParameter`](crate::Error::UnknownParameter) for a parameter the report does not read
    /// (naming a near miss when there is one); [`Error::InvalidQuery`](crate::Error::InvalidQuery) for a
    /// value it cannot use; [`Error::MissingFxRate`](crate::Error::MissingFxRate) when a conversion to the
    /// base currency lacks a rate.
    ///
    /// # Examples
    ///
    /// ```
    /// # use serde_json::json;
    /// # use submetrics::{Ledger, Settings};
    /// # let mut ledger = Ledger::new(Settings::default());
    /// # ledger.upsert_plans(&[json!({"id": "m", "name": "Monthly", "billing_freq": "month", "currency": "USD"})]);
    /// # ledger.upsert_customers(&[json!({"id": "acme", "name": "Acme"})]);
    /// # ledger.upsert_invoices(&[json!({"id": "inv-1", "customer_id": "acme", "type": "subscription",
    /// #     "plan_id": "m", "invoice_date": "2024-01-15", "amount": 5000, "currency": "USD"})]);
    /// use submetrics::ReportParams;
    ///
    /// let as_of = submetrics::parse_as_of("2024-02-01", ledger.settings())?;
    /// let params = ReportParams::from([
    ///     ("date".to_string(), "20240101-20240131".to_string()),
    ///     ("interval".to_string(), "month".to_string()),
    /// ]);
    /// let mrr = ledger.report("mrr", &params, as_of)?;
    /// assert_eq!(mrr["result"][0]["total_mrr"], 5000);
    /// assert_eq!(ledger.report("mrr", &ReportParams::from([("intervall".into(), "month".into())]), as_of)
    ///     .unwrap_err().code(), "invalid_query");
    /// assert_eq!(ledger.report("nope", &params, as_of).unwrap_err().code(), "unknown_report");
    /// # Ok::<(), submetrics::Error>(())
    /// ```
    pub fn report(&self, name: &str, params: &ReportParams, as_of: DateTime<Utc>) -> Result<Value> {
        Report::find(name)?.run(self, params, as_of)
    }
}
