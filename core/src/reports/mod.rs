//! The reports: every report is reached by its interface name with the
//! query-string parameters of its HTTP endpoint (strings) and an `as_of`,
//! and computes one typed answer (its rows as structs: cents, counts,
//! percents, dates), rendered as JSON in the interface's response shape or
//! as a [`ReportTable`]. Python, Node, the
//! service and the CLI all call [`Ledger::report`](crate::Ledger::report);
//! which report reads which parameters is the [`Report`] registry's. A report
//! reads the records and replays through the derive layer's view, never the
//! ledger itself.

mod answer;
pub(crate) mod cashflow;
mod churn_scheduled;
mod cohort;
mod customers;
mod event_parts;
pub(crate) mod events;
mod invoices;
pub(crate) mod leads;
pub(crate) mod movement_table;
pub(crate) mod mrr;
mod mrr_parts;
mod mrr_rows;
mod mrr_spans;
mod params;
pub(crate) mod partial;
mod registry;
mod request;
pub mod result;
pub(crate) mod row_cells;
pub(crate) mod row_keys;
mod runs;
mod scheduled;
pub mod schema;
pub(crate) mod series;
mod snapshot;
mod summary;
pub(crate) mod table_csv;
mod tables;
pub mod transactions;
mod unpaid;
mod variables;

pub use crate::query::{ReportParam, list_items, list_text, near_miss};
pub use partial::ReportPartial;
pub use registry::Report;
pub use result::{ReportTable, TableColumn};
pub use schema::{Column, Kind, MoneyIn, ReportSchema};

pub use crate::query::ReportParams;

use crate::error::Result;
use serde_json::Value;

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

/// The fields of the answer of report `name` beside its rows (see
/// [`Report::beside`]).
///
/// # Errors
///
/// [`Error::UnknownReport`](crate::Error::UnknownReport) for a name the
/// registry does not know.
pub fn beside_rows(name: &str) -> Result<&'static [Column]> {
    Ok(Report::find(name)?.beside())
}

/// Every report with its parameters and columns, in registry order:
/// `[{name, parameters: [{name, accepts}], columns: {shape, columns}}]`.
pub fn catalogue() -> Value {
    Value::Array(Report::all().iter().map(Report::describe).collect())
}

/// The query parameters the analytics customer list reads (besides
/// `as_of`), in the order its catalogue lists them.
pub fn customer_list_params() -> Vec<ReportParam> {
    params::CUSTOMER_LIST.concat()
}

/// The filters the movement listing reads (besides `as_of`).
pub fn movement_params() -> Vec<ReportParam> {
    crate::query::MOVEMENT_LISTING.concat()
}

/// The query parameters one customer's analytics view reads (besides
/// `as_of`).
pub fn customer_detail_params() -> Vec<ReportParam> {
    params::CUSTOMER_DETAIL.concat()
}

/// A query whose parameter names [`check_param_names`] checks: a report by
/// its name, the movement listing, the analytics customer list or one
/// customer's analytics view.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ParamView<'a> {
    /// The report of this name ([`Report::find`]).
    Report(&'a str),
    /// The movement listing ([`MovementFilter::from_params`](crate::MovementFilter::from_params)).
    Movements,
    /// The analytics customer list ([`Ledger::analytics_customers`](crate::Ledger::analytics_customers)).
    Customers,
    /// One customer's analytics view ([`Ledger::analytics_customer`](crate::Ledger::analytics_customer)).
    Customer,
}

/// Refuses a parameter name the query `view` does not read, among those
/// `given` with a value and those left `unset` (a binding's `None`,
/// `undefined` or `null`, which means the parameter's default): the first
/// in name order, with the [`Error::UnknownParameter`](crate::Error::UnknownParameter)
/// running the query gives for an unknown name with a value. An unset name
/// is left out of the query, so it is only ever checked here: without this
/// check a misspelt parameter set to "its default" would pass silently.
///
/// # Errors
///
/// [`Error::UnknownReport`](crate::Error::UnknownReport) for a report name
/// the registry does not know; [`Error::UnknownParameter`](crate::Error::UnknownParameter)
/// for a name the view does not read.
pub fn check_param_names(
    view: ParamView<'_>,
    given: &ReportParams,
    unset: &[String],
) -> Result<()> {
    let (name, groups) = match view {
        ParamView::Report(name) => {
            let report = Report::find(name)?;
            (report.name, report.groups())
        }
        ParamView::Movements => ("movements", crate::query::MOVEMENT_LISTING),
        ParamView::Customers => ("customers", params::CUSTOMER_LIST),
        ParamView::Customer => ("customer", params::CUSTOMER_DETAIL),
    };
    let names: std::collections::BTreeSet<&str> =
        given.keys().chain(unset).map(String::as_str).collect();
    crate::query::check_names(name, groups, names.into_iter())
}
