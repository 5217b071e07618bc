//! The reports: every report is reached by its interface name with the
//! query-string parameters of its HTTP endpoint (strings) and an `as_of`,
//! and answers JSON in the interface's response shape. Python, Node, the
//! service and the CLI all call [`Ledger::report`]; which report reads
//! which parameters is the [`Report`] registry's.

pub(crate) mod cashflow;
mod cohort;
mod customers;
pub(crate) mod daily_totals;
pub(crate) mod events;
pub(crate) mod filters;
mod invoices;
pub(crate) mod leads;
pub(crate) mod movement_table;
pub(crate) mod mrr;
mod registry;
mod scheduled;
pub(crate) mod series;
mod snapshot;
mod summary;
mod tables;
pub mod transactions;

pub use registry::{Report, ReportParam, near_miss};

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

/// Every report with its parameters, in registry order: `[{name,
/// parameters: [{name, accepts}]}]`.
pub fn catalogue() -> Value {
    Value::Array(Report::all().iter().map(Report::describe).collect())
}

impl Ledger {
    /// Runs the report `name` with HTTP query parameters at `as_of`. An
    /// unknown report is [`crate::Error::UnknownReport`]; a parameter the
    /// report does not read is [`crate::Error::UnknownParameter`].
    pub fn report(&self, name: &str, params: &ReportParams, as_of: DateTime<Utc>) -> Result<Value> {
        Report::find(name)?.run(self, params, as_of)
    }
}
