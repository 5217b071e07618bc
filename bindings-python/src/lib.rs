//! The native module `submetrics._native`: the core's ledger and reports
//! for Python. Conversions only; every rule lives in the core.

mod arrow;
mod convert;
mod errors;
mod ledger;
mod movement_dicts;
mod partials;
mod records;
mod scalars;

use pyo3::prelude::*;

/// The module's own allocations (ledgers, results, the Arrow arrays it
/// answers) go to mimalloc, as in the service and the CLI: the system
/// allocator spends more time than the engine on a bulk load's many small
/// blocks from every core. Python's objects keep Python's allocator.
#[global_allocator]
static ALLOCATOR: submetrics_allocator::Mimalloc = submetrics_allocator::Mimalloc;

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    submetrics_allocator::keep_freed_memory_longer();
    m.add_class::<ledger::Ledger>()?;
    m.add_function(wrap_pyfunction!(ledger::report_names, m)?)?;
    m.add_function(wrap_pyfunction!(ledger::report_table, m)?)?;
    m.add_function(wrap_pyfunction!(partials::merge_partials, m)?)?;
    m.add_function(wrap_pyfunction!(partials::finish_partial, m)?)?;
    m.add_function(wrap_pyfunction!(records::records_json, m)?)?;
    m.add_function(wrap_pyfunction!(records::value_json, m)?)?;
    Ok(())
}
