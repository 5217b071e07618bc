//! The native module `submetrics._native`: the core's ledger and reports
//! for Python. Conversions only; every rule lives in the core.

mod arrow;
mod convert;
mod errors;
mod ledger;
mod partials;

use pyo3::prelude::*;

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<ledger::Ledger>()?;
    m.add_function(wrap_pyfunction!(ledger::report_names, m)?)?;
    m.add_function(wrap_pyfunction!(ledger::report_table, m)?)?;
    m.add_function(wrap_pyfunction!(partials::merge_partials, m)?)?;
    m.add_function(wrap_pyfunction!(partials::finish_partial, m)?)?;
    Ok(())
}
