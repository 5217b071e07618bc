//! The native addon behind the npm package `submetrics`: the core's ledger
//! and reports for Node. Conversions only; every rule lives in the core.

mod convert;
mod errors;
mod exact;
pub mod ledger;
mod records;
mod tasks;

/// The addon's own allocations (ledgers, results, the Arrow streams it
/// answers) go to mimalloc, as in the service and the CLI: the system
/// allocator spends more time than the engine on a bulk load's many small
/// blocks from every core. JavaScript values keep V8's allocator.
#[global_allocator]
static ALLOCATOR: submetrics_allocator::Mimalloc = submetrics_allocator::Mimalloc;
