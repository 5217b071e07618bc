//! The native addon behind the npm package `submetrics`: the core's ledger
//! and reports for Node. Conversions only; every rule lives in the core.

mod convert;
mod errors;
pub mod ledger;
mod records;
mod tasks;
