//! Conversions between Python objects and JSON values, report parameters
//! and instants from Python arguments, and write results to Python.

use pyo3::exceptions::PyTypeError;
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{
    PyBool, PyDateTime, PyDict, PyFloat, PyFrozenSet, PyInt, PyList, PyMapping, PySet, PyString,
    PyTuple,
};
use serde_json::Value;
use submetrics::WriteReport;

/// A Python object as JSON, read as records are ([`crate::records`]): any
/// mapping as an object, any sequence but str and bytes as an array,
/// strings, numbers, booleans, `None`, and anything with `isoformat()` as
/// its ISO text. `what` names the argument in errors, which name the field
/// too (`the patch of customer acme: field `custom_variables.x`: nan is not
/// a finite number`); nesting deeper than 128 levels (a dict holding
/// itself) is an error, not a crash.
pub fn to_json(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<Value> {
    crate::records::value(obj, what)
}

/// Runs `build`, which makes many Python containers, with Python's cyclic
/// garbage collector paused (when it runs): every few hundred new dicts and
/// lists would set off a collection that walks the objects alive so far and
/// frees none of them; a large answer (every movement of a ledger) spent
/// most of its time there.
pub fn with_gc_paused<T>(py: Python<'_>, build: impl FnOnce() -> PyResult<T>) -> PyResult<T> {
    let gc = py.import("gc")?;
    let _resume = if gc.call_method0("isenabled")?.is_truthy()? {
        gc.call_method0("disable")?;
        ResumeGc(Some(gc))
    } else {
        ResumeGc(None)
    };
    build()
}

/// Turns the garbage collector back on when dropped, also when the build
/// fails or unwinds.
struct ResumeGc<'py>(Option<Bound<'py, PyModule>>);

impl Drop for ResumeGc<'_> {
    fn drop(&mut self) {
        if let Some(gc) = self.0.take() {
            // `gc.enable()` sets a flag and cannot fail.
            let _ = gc.call_method0("enable");
        }
    }
}

/// A JSON value as plain Python objects (dict, list, str, int, float, bool,
/// None), built with the garbage collector paused ([`with_gc_paused`]).
pub fn to_py<'py>(py: Python<'py>, value: &Value) -> PyResult<Bound<'py, PyAny>> {
    with_gc_paused(py, || value_to_py(py, value))
}

fn value_to_py<'py>(py: Python<'py>, value: &Value) -> PyResult<Bound<'py, PyAny>> {
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
                list.append(value_to_py(py, item)?)?;
            }
            list.into_any()
        }
        Value::Object(map) => {
            let dict = PyDict::new(py);
            for (key, item) in map {
                dict.set_item(key, value_to_py(py, item)?)?;
            }
            dict.into_any()
        }
    })
}

/// Report parameter names written with dashes over HTTP; Python keywords
/// use underscores.
const DASHED: &[&str] = &["selected-date", "selected-type", "breakdown-value"];

/// A parameter value as its query-string text: text as given, numbers as
/// `str()` writes them, booleans `true`/`false`, dates and datetimes ISO
/// (numpy's scalars and `Decimal`s as the plain values they stand for),
/// and a list, tuple or set of those space-separated (an item holding a
/// space or comma quoted, see `submetrics::reports::list_text`). Anything else (a
/// dict, bytes, a list of lists, an object of no such kind) is a
/// `TypeError`: its `str()` would filter on text nobody wrote.
fn param_text(value: &Bound<'_, PyAny>) -> PyResult<String> {
    let is_list = value.cast::<PyList>().is_ok()
        || value.cast::<PyTuple>().is_ok()
        || value.cast::<PySet>().is_ok()
        || value.cast::<PyFrozenSet>().is_ok();
    if !is_list {
        return scalar_text(value);
    }
    let parts: Vec<String> = value
        .try_iter()?
        .map(|item| scalar_text(&item?))
        .collect::<PyResult<_>>()?;
    Ok(submetrics::reports::list_text(parts))
}

/// One value of a parameter as text (see [`param_text`]).
fn scalar_text(value: &Bound<'_, PyAny>) -> PyResult<String> {
    if let Ok(b) = value.cast::<PyBool>() {
        return Ok(if b.is_true() { "true" } else { "false" }.to_string());
    }
    if let Ok(s) = value.cast::<PyString>() {
        return s.extract::<String>();
    }
    if value.cast::<PyInt>().is_ok() || value.cast::<PyFloat>().is_ok() {
        return value.str()?.extract::<String>();
    }
    if value.hasattr("isoformat")? {
        return value.call_method0("isoformat")?.extract();
    }
    if let Some(plain) = crate::scalars::plain(value)? {
        return scalar_text(&plain);
    }
    Err(PyTypeError::new_err(format!(
        "a parameter value is text, a number, a boolean, a date or a list of those, got {}",
        value.get_type().name()?
    )))
}

/// Report parameters as the core reads them, plus the names of those given
/// as datetimes: their ISO instants are turned into the ledger-time-zone day
/// by the core ([`Params::resolve`]) once the ledger is at hand.
pub struct Params {
    pub params: submetrics::ReportParams,
    instants: Vec<String>,
}

impl Params {
    /// The parameters with every datetime made its day in the ledger's time zone.
    pub fn resolve(
        mut self,
        ledger: &submetrics::Ledger,
    ) -> submetrics::Result<submetrics::ReportParams> {
        for name in self.instants {
            if let Some(text) = self.params.get(&name) {
                let day = ledger.param_day(&name, text)?;
                self.params.insert(name, day.to_string());
            }
        }
        Ok(self.params)
    }
}

/// Text arguments read by [`text_arg`], each naming its argument; they
/// dereference to their text.
macro_rules! text_arguments {
    ($($(#[$doc:meta])* $name:ident = $field:literal;)*) => {$(
        $(#[$doc])*
        pub struct $name(String);

        impl<'a, 'py> FromPyObject<'a, 'py> for $name {
            type Error = PyErr;

            fn extract(obj: pyo3::Borrowed<'a, 'py, PyAny>) -> PyResult<Self> {
                text_arg(&obj, $field).map($name)
            }
        }

        impl std::ops::Deref for $name {
            type Target = str;

            fn deref(&self) -> &str {
                &self.0
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(&self.0)
            }
        }
    )*};
}

text_arguments! {
    /// An id argument.
    IdArg = "id";
    /// A report's name argument.
    NameArg = "name";
    /// The data source a listing keeps.
    SourceArg = "source";
    /// The customer a listing keeps.
    CustomerArg = "customer";
}

/// The text of the argument `field`: anything but a string, or a string
/// holding a surrogate code point (not Unicode text), is a `TypeError`
/// naming it, as `id: holds a lone UTF-16 surrogate (\uD800), ...`.
fn text_arg(obj: &Bound<'_, PyAny>, field: &str) -> PyResult<String> {
    let text = obj.cast::<PyString>().map_err(|_| {
        let kind = obj
            .get_type()
            .name()
            .map_or_else(|_| "?".to_string(), |name| name.to_string());
        PyTypeError::new_err(format!("{field}: must be a str, got {kind}"))
    })?;
    text.to_cow()
        .map(|text| text.into_owned())
        .map_err(|error| crate::records::not_unicode(text, error, &format!("{field}: ")))
}

/// A report parameter's name; one holding a surrogate code point (not
/// Unicode text) is a `TypeError` naming it with the surrogate escaped.
fn param_name(key: &Bound<'_, PyAny>) -> PyResult<String> {
    let Ok(text) = key.cast::<PyString>() else {
        return key.extract();
    };
    text.to_cow()
        .map(|name| name.into_owned())
        .map_err(|error| {
            let prefix = format!("parameter name `{}`: ", crate::records::escaped(text));
            crate::records::not_unicode(text, error, &prefix)
        })
}

/// The parameters of the query `view` from an optional mapping and keyword
/// arguments. A `None` value means the parameter's default and is left
/// out, but its name must be one `view` reads: the core checks every name
/// ([`submetrics::reports::check_param_names`]). A parameter given in both
/// is an `InvalidQueryError` naming it.
pub fn params(
    py: Python<'_>,
    given: Option<&Bound<'_, PyAny>>,
    kwargs: Option<&Bound<'_, PyDict>>,
    view: submetrics::reports::ParamView<'_>,
) -> PyResult<Params> {
    let mut out = Params {
        params: submetrics::ReportParams::new(),
        instants: Vec::new(),
    };
    let given = match given.filter(|g| !g.is_none()) {
        Some(g) => Some(
            g.cast::<PyMapping>()
                .map_err(|_| PyTypeError::new_err("report parameters must be a mapping"))?
                .items()?,
        ),
        None => None,
    };
    let keywords = kwargs.map(|k| k.items());
    let mut unset = Vec::new();
    for (source, is_keyword) in [(given, false), (keywords, true)] {
        for item in source.iter().flat_map(|list| list.iter()) {
            let (key, value): (Bound<'_, PyAny>, Bound<'_, PyAny>) = item.extract()?;
            let mut name = param_name(&key)?;
            if is_keyword {
                let dashed = name.replace('_', "-");
                if DASHED.contains(&dashed.as_str()) {
                    name = dashed;
                }
            }
            if value.is_none() {
                unset.push(name);
                continue;
            }
            if out.params.contains_key(&name) {
                let error = submetrics::Error::InvalidQuery {
                    param: name,
                    reason: "is given both in params and as a keyword; give it once".to_string(),
                };
                return Err(crate::errors::to_py_err(py, error));
            }
            if value.cast::<PyDateTime>().is_ok() {
                out.instants.push(name.clone());
            }
            let text = param_text(&value).map_err(|e| {
                PyTypeError::new_err(format!("parameter `{name}`: {}", e.value(value.py())))
            })?;
            out.params.insert(name, text);
        }
    }
    submetrics::reports::check_param_names(view, &out.params, &unset)
        .map_err(|error| crate::errors::to_py_err(py, error))?;
    Ok(out)
}

/// An optional instant as text for the core: a datetime (naive means UTC)
/// or a date as ISO text, or the text given; `None` means now.
pub fn instant_text(value: Option<&Bound<'_, PyAny>>) -> PyResult<Option<String>> {
    value.filter(|v| !v.is_none()).map(param_text).transpose()
}

/// The instant of [`instant_text`]'s text: a bare date is the end of that day
/// in the ledger's time zone (the core decides); absent is now.
pub fn as_of(
    text: Option<&str>,
    settings: &submetrics::Settings,
) -> submetrics::Result<chrono::DateTime<chrono::Utc>> {
    match text {
        None => Ok(chrono::Utc::now()),
        Some(text) => submetrics::parse_as_of(text, settings),
    }
}

/// Page bounds read by [`count_arg`], each naming its argument.
macro_rules! count_arguments {
    ($($(#[$doc:meta])* $name:ident = $field:literal;)*) => {$(
        $(#[$doc])*
        pub struct $name(pub usize);

        impl<'a, 'py> FromPyObject<'a, 'py> for $name {
            type Error = PyErr;

            fn extract(obj: pyo3::Borrowed<'a, 'py, PyAny>) -> PyResult<Self> {
                count_arg(&obj, $field).map($name)
            }
        }
    )*};
}

count_arguments! {
    /// A list's `limit`.
    LimitArg = "limit";
    /// A list's `offset`.
    OffsetArg = "offset";
}

/// The whole number of 0 or more the argument `field` holds; anything
/// else (a bool, a float, a text, a negative number) is an
/// `InvalidQueryError` naming it, as the reports' `limit` is.
fn count_arg(obj: &Bound<'_, PyAny>, field: &str) -> PyResult<usize> {
    let count = (!obj.is_instance_of::<PyBool>())
        .then(|| obj.extract::<usize>().ok())
        .flatten();
    count.ok_or_else(|| {
        let shown = obj
            .repr()
            .map_or_else(|_| "?".to_string(), |text| text.to_string());
        let error = submetrics::Error::InvalidQuery {
            param: field.to_string(),
            reason: format!("`{shown}` is not a whole number of 0 or more"),
        };
        crate::errors::to_py_err(obj.py(), error)
    })
}

/// The page a list call asks for: `limit` (the core's page size when not
/// given) and `offset`.
pub fn page_bounds(limit: Option<LimitArg>, offset: Option<OffsetArg>) -> (usize, usize) {
    (
        limit.map_or(submetrics::Ledger::DEFAULT_LIST_LIMIT, |limit| limit.0),
        offset.map_or(0, |offset| offset.0),
    )
}

/// The per-record results of a write as a list of dicts `{id,
/// import_status, import_error}` (`import_error` only for a rejected record).
pub fn results(py: Python<'_>, report: WriteReport) -> PyResult<Bound<'_, PyAny>> {
    with_gc_paused(py, || {
        let list = PyList::empty(py);
        for result in report.results {
            let dict = PyDict::new(py);
            dict.set_item(intern!(py, "id"), result.id.as_str())?;
            match result.import_error {
                None => dict.set_item(intern!(py, "import_status"), intern!(py, "inserted"))?,
                Some(error) => {
                    dict.set_item(intern!(py, "import_status"), intern!(py, "error"))?;
                    dict.set_item(intern!(py, "import_error"), error)?;
                }
            }
            list.append(dict)?;
        }
        Ok(list.into_any())
    })
}
