//! The one mapping from core errors to the Python exceptions of
//! `submetrics.errors`, each carrying `code`, `record_id` and `field`. The
//! class is chosen by `submetrics.errors._from_core` from the code (a code
//! newer than the Python module gives the base class, still carrying it).

use pyo3::prelude::*;
use submetrics::Error;

/// The Python exception for a core error.
pub fn to_py_err(py: Python<'_>, error: Error) -> PyErr {
    let build = || -> PyResult<PyErr> {
        let instance = py.import("submetrics.errors")?.call_method1(
            "_from_core",
            (
                error.code(),
                error.to_string(),
                error.record_id(),
                error.field(),
            ),
        )?;
        Ok(PyErr::from_value(instance))
    };
    build().unwrap_or_else(|e| e)
}
