//! Report partials between Python workers: merging them and finishing a
//! merged one. The bytes are the core's binary form
//! (`submetrics::ReportPartial::to_bytes`).

use crate::convert::to_py;
use crate::errors::to_py_err;
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use submetrics::ReportPartial;

/// Every partial of the iterable merged into one partial.
#[pyfunction]
pub fn merge_partials<'py>(
    py: Python<'py>,
    partials: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyBytes>> {
    let mut all: Vec<Vec<u8>> = Vec::new();
    for item in partials.try_iter()? {
        all.push(item?.extract::<Vec<u8>>()?);
    }
    let merged = py
        .detach(|| {
            let partials = all
                .iter()
                .map(|bytes| ReportPartial::from_bytes(bytes))
                .collect::<submetrics::Result<Vec<_>>>()?;
            ReportPartial::merge_all(partials).map(|p| p.to_bytes())
        })
        .map_err(|e| to_py_err(py, e))?;
    Ok(PyBytes::new(py, &merged))
}

/// The report of a (merged) partial: the dict ``Ledger.report`` answers.
#[pyfunction]
pub fn finish_partial<'py>(py: Python<'py>, partial: &[u8]) -> PyResult<Bound<'py, PyAny>> {
    let finished = py
        .detach(|| ReportPartial::from_bytes(partial)?.finish())
        .map_err(|e| to_py_err(py, e))?;
    to_py(py, &finished)
}
