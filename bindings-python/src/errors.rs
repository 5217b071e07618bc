//! The one mapping from core errors to the Python exceptions of
//! `submetrics.errors`, each carrying `code`, `record_id` and `field`.

use pyo3::prelude::*;
use submetrics::Error;

/// The exception class name for each core error code (the core's error
/// enum is non-exhaustive: a future code maps to the base class).
fn class_name(error: &Error) -> &'static str {
    match error.code() {
        "invalid_record" => "InvalidRecordError",
        "not_found" => "NotFoundError",
        "conflict" => "ConflictError",
        "unknown_report" => "UnknownReportError",
        "invalid_query" => "InvalidQueryError",
        "invalid_setting" => "InvalidSettingError",
        "missing_fx_rate" => "MissingFxRateError",
        _ => "SubmetricsError",
    }
}

/// The Python exception for a core error.
pub fn to_py_err(py: Python<'_>, error: Error) -> PyErr {
    let build = || -> PyResult<PyErr> {
        let class = py
            .import("submetrics.errors")?
            .getattr(class_name(&error))?;
        let instance = class.call1((error.to_string(), error.record_id(), error.field()))?;
        Ok(PyErr::from_value(instance))
    };
    build().unwrap_or_else(|e| e)
}
