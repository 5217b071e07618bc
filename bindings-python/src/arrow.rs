//! Arrow data in and out through the Arrow PyCapsule interface: a
//! `pyarrow.Table` or `RecordBatch`, a polars DataFrame, or anything else
//! with `__arrow_c_stream__`/`__arrow_c_array__`, read without copying; a
//! pandas DataFrame by way of `pyarrow.Table.from_pandas` (a named index,
//! as `set_index("id")` leaves the ids, is a column of its name, and one
//! named like a column is refused; an unnamed one is left out). pyarrow data with a buffer off its alignment is copied aligned
//! first (`submetrics/_arrow.py`). Results go back as `pyarrow.Table`s.

use crate::convert::with_gc_paused;
use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3_arrow::PyTable;
use pyo3_arrow::input::AnyRecordBatch;

/// The record batches of `obj` when it is Arrow data (or a pandas
/// DataFrame), else `None` (records as dicts); `kind` (`customer`,
/// `fx_rate`, ...) names the records in errors. The collector is paused
/// meanwhile: the alignment check wraps every chunk and buffer of a table in
/// a Python object, tens of thousands for a large table, and with the
/// collector running those set off collections that walk every object the
/// caller holds (0.4 s for a table of 10M rows beside 700k dicts).
pub fn batches(obj: &Bound<'_, PyAny>, kind: &'static str) -> PyResult<Option<Vec<RecordBatch>>> {
    let py = obj.py();
    // A pandas frame first, though pandas 2.2 and later also export Arrow
    // themselves: their columns backed by pyarrow arrays (as a Dask shuffle
    // leaves them) cross as they lie, off their alignment, unless the
    // table they make is checked like any pyarrow data.
    let arrow = if is_pandas_frame(obj)? {
        let kwargs = pyo3::types::PyDict::new(py);
        kwargs.set_item("preserve_index", named_index(obj, kind)?)?;
        py.import("pyarrow")?
            .getattr("Table")?
            .call_method("from_pandas", (obj,), Some(&kwargs))?
    } else if is_polars_frame(obj)? {
        py.import("submetrics._arrow")?
            .call_method1("polars_without_null_columns", (obj,))?
    } else if obj.hasattr("__arrow_c_stream__")? || obj.hasattr("__arrow_c_array__")? {
        obj.clone()
    } else {
        return Ok(None);
    };
    with_gc_paused(py, || {
        // pyarrow data may hold buffers at any address (see `_arrow.py`).
        let arrow = if is_pyarrow_data(&arrow)? {
            py.import("submetrics._arrow")?
                .call_method1("aligned", (arrow,))?
        } else {
            arrow
        };
        let reader = arrow.extract::<AnyRecordBatch>()?.into_reader()?;
        let batches = reader
            .collect::<Result<Vec<RecordBatch>, _>>()
            .map_err(|e| PyValueError::new_err(format!("reading Arrow data: {e}")))?;
        Ok(Some(batches))
    })
}

/// Whether a pandas frame's index has names: then its named levels are
/// columns of those names (`set_index("id")`), data the caller gave; an
/// unnamed index (the default range, or what a filter leaves) holds no
/// field of a record. A level named like a column is an `InvalidRecordError`
/// naming it: pyarrow would rename the level `__index_level_0__`, a column
/// no record reads, and one of the two would be lost unseen.
fn named_index(frame: &Bound<'_, PyAny>, kind: &'static str) -> PyResult<bool> {
    let names = frame.getattr("index")?.getattr("names")?;
    let columns = frame.getattr("columns")?;
    let mut named = false;
    for name in names.try_iter()? {
        let name = name?;
        if name.is_none() {
            continue;
        }
        named = true;
        if columns.contains(&name)? {
            let error = submetrics::Error::InvalidRecord {
                kind,
                id: "?".to_string(),
                field: name.str()?.to_string(),
                reason: "is the name of both the DataFrame's index and one of its columns; \
                    give it once (drop or rename one, or `reset_index(drop=True)` to leave \
                    the index out)"
                    .to_string(),
            };
            return Err(crate::errors::to_py_err(frame.py(), error));
        }
    }
    Ok(named)
}

/// Whether `obj` is a `pyarrow.Table` or `RecordBatch`.
fn is_pyarrow_data(obj: &Bound<'_, PyAny>) -> PyResult<bool> {
    let kind = obj.get_type();
    let module: String = kind.getattr("__module__")?.extract()?;
    let name = kind.name()?;
    Ok(module.starts_with("pyarrow") && (name == "Table" || name == "RecordBatch"))
}

/// Whether `obj` is a polars DataFrame.
fn is_polars_frame(obj: &Bound<'_, PyAny>) -> PyResult<bool> {
    let kind = obj.get_type();
    let module: String = kind.getattr("__module__")?.extract()?;
    Ok(module.starts_with("polars") && kind.name()? == "DataFrame")
}

/// Whether `obj` is a pandas DataFrame (pandas before 3 has no Arrow
/// capsule of its own).
fn is_pandas_frame(obj: &Bound<'_, PyAny>) -> PyResult<bool> {
    let kind = obj.get_type();
    let module: String = kind.getattr("__module__")?.extract()?;
    Ok(module.starts_with("pandas") && kind.name()? == "DataFrame")
}

/// A record batch as a `pyarrow.Table` (pyarrow must be installed), made
/// with the collector paused: the first table a process makes imports
/// pyarrow's modules, whose objects set off collections that walk every
/// object the caller holds.
pub fn to_pyarrow(py: Python<'_>, batch: RecordBatch) -> PyResult<Bound<'_, PyAny>> {
    let schema = batch.schema();
    to_pyarrow_table(py, schema, vec![batch])
}

/// Record batches of one schema as one `pyarrow.Table`, a chunk per batch
/// (see [`to_pyarrow`]).
pub fn to_pyarrow_table(
    py: Python<'_>,
    schema: SchemaRef,
    batches: Vec<RecordBatch>,
) -> PyResult<Bound<'_, PyAny>> {
    let table = PyTable::try_new(batches, schema)?;
    with_gc_paused(py, || table.into_pyarrow(py))
}
