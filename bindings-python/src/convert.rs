//! Conversions between Python objects and JSON values, and report
//! parameters and instants from Python arguments.

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};
use serde_json::{Map, Number, Value};

/// A Python object as JSON: dicts, lists and tuples, strings, numbers,
/// booleans, `None`, and anything with `isoformat()` (datetime, date) as
/// its ISO text.
pub fn to_json(obj: &Bound<'_, PyAny>) -> PyResult<Value> {
    if obj.is_none() {
        return Ok(Value::Null);
    }
    if let Ok(b) = obj.cast::<PyBool>() {
        return Ok(Value::Bool(b.is_true()));
    }
    if obj.cast::<PyInt>().is_ok() {
        return match obj.extract::<i64>() {
            Ok(i) => Ok(Value::Number(i.into())),
            Err(_) => Err(PyTypeError::new_err(format!(
                "integer {obj} does not fit in 64 bits"
            ))),
        };
    }
    if let Ok(f) = obj.cast::<PyFloat>() {
        return Number::from_f64(f.value())
            .map(Value::Number)
            .ok_or_else(|| PyTypeError::new_err(format!("{obj} is not a finite number")));
    }
    if let Ok(s) = obj.cast::<PyString>() {
        return Ok(Value::String(s.extract::<String>()?));
    }
    if let Ok(dict) = obj.cast::<PyDict>() {
        let mut map = Map::new();
        for (key, value) in dict.iter() {
            let key: String = key
                .cast::<PyString>()
                .map_err(|_| {
                    PyTypeError::new_err(format!("dictionary keys must be strings, got {key}"))
                })?
                .extract()?;
            map.insert(key, to_json(&value)?);
        }
        return Ok(Value::Object(map));
    }
    if let Ok(list) = obj.cast::<PyList>() {
        return list
            .iter()
            .map(|item| to_json(&item))
            .collect::<PyResult<Vec<_>>>()
            .map(Value::Array);
    }
    if let Ok(tuple) = obj.cast::<PyTuple>() {
        return tuple
            .iter()
            .map(|item| to_json(&item))
            .collect::<PyResult<Vec<_>>>()
            .map(Value::Array);
    }
    if obj.hasattr("isoformat")? {
        return Ok(Value::String(obj.call_method0("isoformat")?.extract()?));
    }
    Err(PyTypeError::new_err(format!(
        "cannot convert {} to JSON",
        obj.get_type().name()?
    )))
}

/// A JSON value as plain Python objects (dict, list, str, int, float, bool, None).
pub fn to_py<'py>(py: Python<'py>, value: &Value) -> PyResult<Bound<'py, PyAny>> {
    Ok(match value {
        Value::Null => py.None().into_bound(py),
        Value::Bool(b) => PyBool::new(py, *b).to_owned().into_any(),
        Value::Number(n) => match (n.as_i64(), n.as_f64()) {
            (Some(i), _) => i.into_pyobject(py)?.into_any(),
            (None, Some(f)) => f.into_pyobject(py)?.into_any(),
            _ => py.None().into_bound(py),
        },
        Value::String(s) => PyString::new(py, s).into_any(),
        Value::Array(items) => {
            let list = PyList::empty(py);
            for item in items {
                list.append(to_py(py, item)?)?;
            }
            list.into_any()
        }
        Value::Object(map) => {
            let dict = PyDict::new(py);
            for (key, item) in map {
                dict.set_item(key, to_py(py, item)?)?;
            }
            dict.into_any()
        }
    })
}

/// One record or a list of records.
pub fn records(obj: &Bound<'_, PyAny>) -> PyResult<Vec<Value>> {
    match to_json(obj)? {
        Value::Array(items) => Ok(items),
        Value::Object(map) => Ok(vec![Value::Object(map)]),
        _ => Err(PyTypeError::new_err(
            "expected a record (dict) or a list of records",
        )),
    }
}

/// Report parameter names written with dashes over HTTP; Python keywords
/// use underscores.
const DASHED: &[&str] = &["selected-date", "selected-type", "breakdown-value"];

/// A parameter value as its query-string text: booleans `true`/`false`,
/// lists space-separated, dates ISO, everything else `str()`.
fn param_text(value: &Bound<'_, PyAny>) -> PyResult<String> {
    if let Ok(b) = value.cast::<PyBool>() {
        return Ok(if b.is_true() { "true" } else { "false" }.to_string());
    }
    if let Ok(s) = value.cast::<PyString>() {
        return s.extract::<String>();
    }
    if value.cast::<PyList>().is_ok() || value.cast::<PyTuple>().is_ok() {
        let parts: Vec<String> = value
            .try_iter()?
            .map(|item| param_text(&item?))
            .collect::<PyResult<_>>()?;
        return Ok(parts.join(" "));
    }
    if value.hasattr("isoformat")? {
        return value.call_method0("isoformat")?.extract();
    }
    value.str()?.extract::<String>()
}

/// Report parameters from an optional dict and keyword arguments (keywords
/// win); `None` values are left out.
pub fn params(
    given: Option<&Bound<'_, PyDict>>,
    kwargs: Option<&Bound<'_, PyDict>>,
) -> PyResult<submetrics::ReportParams> {
    let mut out = submetrics::ReportParams::new();
    for (source, is_keyword) in [(given, false), (kwargs, true)] {
        for (key, value) in source.into_iter().flat_map(|d| d.iter()) {
            if value.is_none() {
                continue;
            }
            let mut name: String = key.extract()?;
            if is_keyword {
                let dashed = name.replace('_', "-");
                if DASHED.contains(&dashed.as_str()) {
                    name = dashed;
                }
            }
            out.insert(name, param_text(&value)?);
        }
    }
    Ok(out)
}

/// An optional instant: a datetime (naive means UTC), a date (its end in the
/// ledger's time zone), or ISO text; `None` is now.
pub fn as_of(
    value: Option<&Bound<'_, PyAny>>,
    settings: &submetrics::Settings,
) -> PyResult<chrono::DateTime<chrono::Utc>> {
    let Some(value) = value.filter(|v| !v.is_none()) else {
        return Ok(chrono::Utc::now());
    };
    let text = param_text(value)?;
    submetrics::parse_as_of(&text, settings).map_err(|e| crate::errors::to_py_err(value.py(), e))
}
