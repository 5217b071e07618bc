//! Python records read field by field into the core's record trees
//! ([`Json`]), with no `serde_json::Value` in between: the same values as
//! [`crate::convert::to_json`] reads (mappings as objects, sequences but
//! str and bytes as arrays, anything with `isoformat()` as its ISO text) and
//! the same errors, strings copied once into an arena that lives for the
//! call. numpy's scalars and `Decimal`s read as the plain values they
//! stand for ([`crate::scalars::plain`]). Nesting deeper than 128 levels
//! (which a dict holding itself reaches) is an error.

use bumpalo::Bump;
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{
    PyBool, PyByteArray, PyBytes, PyDict, PyFloat, PyInt, PyList, PyMapping, PySequence, PyString,
    PyTuple,
};
use serde_json::Number;
use std::borrow::Cow;
use submetrics::model::Json;

/// Nesting levels a call may hold, the argument itself counted.
const MAX_DEPTH: u32 = 128;

/// One record (any mapping) or a sequence of records, as record trees.
pub fn records<'b>(obj: &Bound<'_, PyAny>, arena: &'b Bump) -> PyResult<Vec<Json<'b>>> {
    expect_records(obj)?;
    if obj.cast::<PyMapping>().is_ok() {
        let record = tree(obj, arena, MAX_DEPTH).map_err(|m| m.into_error("the record"))?;
        return Ok(vec![record]);
    }
    obj.try_iter()?
        .enumerate()
        .map(|(index, item)| record(&item?, index, arena))
        .collect()
}

/// Any argument (a patch, settings, options) as JSON, read as a record is;
/// an error names `what` and the field.
pub fn value(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<serde_json::Value> {
    let arena = Bump::new();
    tree(obj, &arena, MAX_DEPTH)
        .map(|tree| tree.to_value())
        .map_err(|m| m.into_error(what))
}

/// Record `index` of a sequence as a record tree; an error names it.
fn record<'b>(item: &Bound<'_, PyAny>, index: usize, arena: &'b Bump) -> PyResult<Json<'b>> {
    tree(item, arena, MAX_DEPTH - 1).map_err(|m| m.into_error(&format!("records[{index}]")))
}

/// A value that cannot be read, with where it sits in its record.
struct Misread {
    /// The keys and indexes from the value up to the record, innermost
    /// first.
    steps: Vec<Step>,
    error: PyErr,
}

enum Step {
    Key(String),
    Index(usize),
}

impl From<PyErr> for Misread {
    fn from(error: PyErr) -> Misread {
        Misread {
            steps: Vec::new(),
            error,
        }
    }
}

impl Misread {
    fn at(mut self, step: Step) -> Misread {
        self.steps.push(step);
        self
    }

    /// The error naming `record` and the field, as `record 3 of the
    /// sequence: field `custom_variables.seats[0]`: ...`. Errors of our
    /// own (`TypeError`) and the values' (`ValueError`) are named; any
    /// other exception a value raised (from its `isoformat()`, say) passes
    /// through as it is.
    fn into_error(self, record: &str) -> PyErr {
        Python::attach(|py| {
            let kind = self.error.get_type(py);
            let named = kind.is(py.get_type::<PyTypeError>())
                || kind.is(py.get_type::<pyo3::exceptions::PyValueError>());
            if !named {
                return self.error;
            }
            let mut field = String::new();
            for step in self.steps.iter().rev() {
                match step {
                    Step::Key(key) if field.is_empty() => field.push_str(key),
                    Step::Key(key) => {
                        field.push('.');
                        field.push_str(key);
                    }
                    Step::Index(index) => field.push_str(&format!("[{index}]")),
                }
            }
            let reason = self.error.value(py).to_string();
            let message = if field.is_empty() {
                format!("{record}: {reason}")
            } else {
                format!("{record}: field `{field}`: {reason}")
            };
            PyErr::from_type(kind, message)
        })
    }
}

/// Refuses an argument that holds no records: anything but a mapping or a
/// sequence (str and bytes are not sequences of records here), naming
/// what records may be.
pub fn expect_records(obj: &Bound<'_, PyAny>) -> PyResult<()> {
    let text = obj.cast::<PyString>().is_ok()
        || obj.cast::<PyBytes>().is_ok()
        || obj.cast::<PyByteArray>().is_ok();
    if obj.cast::<PyMapping>().is_ok() || (!text && obj.cast::<PySequence>().is_ok()) {
        Ok(())
    } else {
        Err(not_records(obj))
    }
}

/// The error of an argument that holds no records; for a lazy frame (one
/// with a `collect` method, as polars' `LazyFrame`), how to get its data.
pub fn not_records(obj: &Bound<'_, PyAny>) -> PyErr {
    let kind = obj
        .get_type()
        .name()
        .map_or_else(|_| "?".to_string(), |name| name.to_string());
    let lazy = obj
        .getattr("collect")
        .is_ok_and(|collect| collect.is_callable());
    let hint = if lazy {
        ", which holds no data until collected: pass its `.collect()`"
    } else {
        ""
    };
    PyTypeError::new_err(format!(
        "expected records: a mapping, a sequence of mappings, or Arrow data (a pyarrow \
         Table or RecordBatch, a pandas or polars DataFrame, any object with \
         __arrow_c_stream__); got {kind}{hint}"
    ))
}

/// The records of an argument (see [`records`]) a chunk at a time: a list
/// by items, anything else whole.
pub struct Chunks<'py, 'b> {
    obj: Bound<'py, PyAny>,
    arena: &'b Bump,
    /// The next item of a list to read.
    next: usize,
    done: bool,
}

impl<'py, 'b> Chunks<'py, 'b> {
    pub fn new(obj: &Bound<'py, PyAny>, arena: &'b Bump) -> Chunks<'py, 'b> {
        Chunks {
            obj: obj.clone(),
            arena,
            next: 0,
            done: false,
        }
    }

    /// The next `size` records at most; `None` once every one is read.
    pub fn next_chunk(&mut self, size: usize) -> PyResult<Option<Vec<Json<'b>>>> {
        if self.done {
            return Ok(None);
        }
        let Ok(list) = self.obj.cast::<PyList>() else {
            self.done = true;
            return records(&self.obj, self.arena).map(Some);
        };
        let end = list.len().min(self.next.saturating_add(size));
        if self.next >= end {
            self.done = true;
            return Ok(None);
        }
        let mut chunk = Vec::with_capacity(end - self.next);
        for index in self.next..end {
            chunk.push(record(&list.get_item(index)?, index, self.arena)?);
        }
        self.next = end;
        Ok(Some(chunk))
    }
}

/// A Python value as a record tree; `depth` is how many levels of arrays
/// and objects it may still open.
fn tree<'b>(obj: &Bound<'_, PyAny>, arena: &'b Bump, depth: u32) -> Result<Json<'b>, Misread> {
    if obj.is_none() {
        return Ok(Json::Null);
    }
    if let Ok(b) = obj.cast::<PyBool>() {
        return Ok(Json::Bool(b.is_true()));
    }
    if obj.cast::<PyInt>().is_ok() {
        return match obj.extract::<i64>() {
            Ok(i) => Ok(Json::Number(i.into())),
            Err(_) => {
                Err(PyTypeError::new_err(format!("integer {obj} does not fit in 64 bits")).into())
            }
        };
    }
    if let Ok(f) = obj.cast::<PyFloat>() {
        return Number::from_f64(f.value())
            .map(Json::Number)
            .ok_or_else(|| PyTypeError::new_err(format!("{obj} is not a finite number")).into());
    }
    if let Ok(s) = obj.cast::<PyString>() {
        return Ok(Json::String(Cow::Borrowed(text(s, arena)?)));
    }
    if depth == 0 {
        return Err(PyTypeError::new_err(format!(
            "records nest deeper than {MAX_DEPTH} levels (or hold themselves)"
        ))
        .into());
    }
    let depth = depth - 1;
    if let Ok(dict) = obj.cast::<PyDict>() {
        let mut fields = Vec::with_capacity(dict.len());
        for (key, value) in dict.iter() {
            let key = key.cast::<PyString>().map_err(|_| {
                PyTypeError::new_err(format!("dictionary keys must be strings, got {key}"))
            })?;
            let key = text(key, arena)?;
            let value = tree(&value, arena, depth).map_err(|m| m.at(Step::Key(key.into())))?;
            fields.push((Cow::Borrowed(key), value));
        }
        return Ok(Json::Object(fields));
    }
    if let Ok(list) = obj.cast::<PyList>() {
        let mut items = Vec::with_capacity(list.len());
        for (index, item) in list.iter().enumerate() {
            items.push(tree(&item, arena, depth).map_err(|m| m.at(Step::Index(index)))?);
        }
        return Ok(Json::Array(items));
    }
    if let Ok(tuple) = obj.cast::<PyTuple>() {
        return items(tuple.iter().map(Ok), arena, depth);
    }
    if obj.hasattr("isoformat")? {
        let iso = obj.call_method0("isoformat")?;
        let iso = iso
            .cast::<PyString>()
            .map_err(|_| PyTypeError::new_err(format!("{obj}.isoformat() is not a string")))?;
        return Ok(Json::String(Cow::Borrowed(text(iso, arena)?)));
    }
    if let Ok(mapping) = obj.cast::<PyMapping>() {
        let mut fields: Vec<(Cow<'b, str>, Json<'b>)> = Vec::new();
        for item in mapping.items()?.iter() {
            let (key, value): (Bound<'_, PyAny>, Bound<'_, PyAny>) = item.extract()?;
            let key = key.cast::<PyString>().map_err(|_| {
                PyTypeError::new_err(format!("mapping keys must be strings, got {key}"))
            })?;
            let key = text(key, arena)?;
            let value = tree(&value, arena, depth).map_err(|m| m.at(Step::Key(key.into())))?;
            // A repeated key keeps its first place and its last value.
            match fields.iter_mut().find(|(k, _)| *k == key) {
                Some((_, existing)) => *existing = value,
                None => fields.push((Cow::Borrowed(key), value)),
            }
        }
        return Ok(Json::Object(fields));
    }
    let is_bytes = obj.cast::<PyBytes>().is_ok() || obj.cast::<PyByteArray>().is_ok();
    if !is_bytes && obj.cast::<PySequence>().is_ok() {
        return items(obj.try_iter()?, arena, depth);
    }
    if let Some(plain) = crate::scalars::plain(obj)? {
        return tree(&plain, arena, depth);
    }
    Err(PyTypeError::new_err(format!("cannot convert {} to JSON", obj.get_type().name()?)).into())
}

/// The items of a sequence as an array tree, an error naming its index.
fn items<'py, 'b>(
    items: impl Iterator<Item = PyResult<Bound<'py, PyAny>>>,
    arena: &'b Bump,
    depth: u32,
) -> Result<Json<'b>, Misread> {
    items
        .enumerate()
        .map(|(index, item)| tree(&item?, arena, depth).map_err(|m| m.at(Step::Index(index))))
        .collect::<Result<Vec<_>, _>>()
        .map(Json::Array)
}

/// A string's UTF-8 text, copied into the arena; one holding a lone
/// surrogate is not Unicode text (a `TypeError` naming it, where the record
/// and field are then named).
fn text<'b>(s: &Bound<'_, PyString>, arena: &'b Bump) -> PyResult<&'b str> {
    let bytes = s.encode_utf8().map_err(|error| not_unicode(s, error, ""))?;
    let text = std::str::from_utf8(bytes.as_bytes())
        .map_err(|e| PyTypeError::new_err(format!("a string is not UTF-8: {e}")))?;
    Ok(arena.alloc_str(text))
}

/// The code points of `s`, surrogates included (a Python string holds them
/// one by one: two in a row are not a pair).
fn code_points(s: &Bound<'_, PyString>) -> Vec<u32> {
    s.call_method1("encode", ("utf-32-le", "surrogatepass"))
        .ok()
        .and_then(|encoded| {
            let bytes = encoded.cast::<PyBytes>().ok()?.as_bytes().to_vec();
            Some(
                bytes
                    .chunks_exact(4)
                    .map(|point| u32::from_le_bytes([point[0], point[1], point[2], point[3]]))
                    .collect(),
            )
        })
        .unwrap_or_default()
}

/// `\uD800` for a surrogate code point, which UTF-8 cannot write.
fn surrogate_escape(point: u32) -> Option<String> {
    (0xD800..=0xDFFF)
        .contains(&point)
        .then(|| format!("\\u{point:04X}"))
}

/// The error of a string `s` UTF-8 could not write (`error`): when it holds
/// a surrogate code point, a `TypeError` naming the first, after `prefix`
/// (`id: `, or nothing where the record and field are named after);
/// `error` as it is otherwise.
pub fn not_unicode(s: &Bound<'_, PyString>, error: PyErr, prefix: &str) -> PyErr {
    match code_points(s).into_iter().find_map(surrogate_escape) {
        Some(unit) => PyTypeError::new_err(format!(
            "{prefix}holds a lone UTF-16 surrogate ({unit}), which is not Unicode text"
        )),
        None => error,
    }
}

/// The text of `s` with each surrogate code point written `\uD800`.
pub fn escaped(s: &Bound<'_, PyString>) -> String {
    code_points(s)
        .into_iter()
        .map(|point| {
            surrogate_escape(point)
                .unwrap_or_else(|| char::from_u32(point).map_or_else(String::new, String::from))
        })
        .collect()
}

/// Records (one mapping or a sequence of them) as the JSON text of an
/// array, read as the ledger's `upsert_*` read them: the same values and the
/// same `TypeError`s naming the record and field. The service client sends
/// it as a request body, so that a record means the same to both.
#[pyfunction]
pub fn records_json<'py>(
    py: Python<'py>,
    records: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, pyo3::types::PyBytes>> {
    let arena = Bump::new();
    let trees = self::records(records, &arena)?
        .iter()
        .map(Json::to_value)
        .collect();
    json_bytes(py, &serde_json::Value::Array(trees))
}

/// Any argument (a patch, a replacing record) as JSON text, read as
/// [`value`] reads it for the ledger; an error names `what` and the field.
#[pyfunction]
pub fn value_json<'py>(
    py: Python<'py>,
    obj: &Bound<'py, PyAny>,
    what: &str,
) -> PyResult<Bound<'py, pyo3::types::PyBytes>> {
    json_bytes(py, &value(obj, what)?)
}

fn json_bytes<'py>(
    py: Python<'py>,
    value: &serde_json::Value,
) -> PyResult<Bound<'py, pyo3::types::PyBytes>> {
    let text = serde_json::to_vec(value).map_err(|e| PyTypeError::new_err(e.to_string()))?;
    Ok(pyo3::types::PyBytes::new(py, &text))
}
