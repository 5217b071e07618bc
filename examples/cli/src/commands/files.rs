//! Reading exported records from a directory. A collection's records are in
//! `<collection>.<format>`, or split over several files
//! `<collection>-<part>.<format>` (read in name order), in these formats:
//! - `.json`: an array, an object with the collection's key, a list
//!   response with `data` (as the Stripe API answers), or a page of the
//!   data API as `submetrics data <kind> list --format json` writes it
//!   (`{"result": {"list": [...]}}`);
//! - `.jsonl` (or `.ndjson`): one record per line; invoice lines go to the
//!   engine as text, read without building a JSON tree;
//! - `.parquet`: one record per row, a column per field (Arrow types as the
//!   engine reads them: strings, numbers, dates, timestamps, lists,
//!   structs);
//! - `.csv`: a header of field names, as `submetrics exports` writes it,
//!   cells typed as the core's [`submetrics::csv`] says (the service reads
//!   CSV bodies the same way). A CSV file of plain columns is read straight
//!   into columns; one with object or list cells or `custom_variables.<key>`
//!   columns record by record.
//!
//! So what the client exports, `local` reads back.

use crate::error::{CliError, Result};
use arrow_array::builder::StringBuilder;
use arrow_array::{
    ArrayRef, Float64Array, Int64Array, RecordBatch, StringArray, TimestampSecondArray,
};
use arrow_schema::{Field, Schema};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The formats a collection's file may have, by extension.
const EXTENSIONS: &[&str] = &["json", "jsonl", "ndjson", "csv", "parquet"];

/// Rows per record batch read from a CSV or Parquet file.
const BATCH_ROWS: usize = 1 << 16;

/// The records of one file, in the shape the engine takes them fastest.
pub enum Records {
    /// Records as JSON values.
    Values(Vec<Value>),
    /// A JSONL file's text, one invoice per non-blank line.
    Lines(String),
    /// Rows of record batches, one record per row.
    Batches(Vec<RecordBatch>),
}

impl Records {
    /// How many records (a line count for [`Records::Lines`]).
    pub fn len(&self) -> usize {
        match self {
            Records::Values(values) => values.len(),
            Records::Lines(text) => lines(text).count(),
            Records::Batches(batches) => batches.iter().map(RecordBatch::num_rows).sum(),
        }
    }
}

/// The non-blank lines of a JSONL text.
pub fn lines(text: &str) -> impl Iterator<Item = &str> {
    text.lines().filter(|line| !line.trim().is_empty())
}

/// The files holding `collection` in `dir`: `<collection>.<ext>` and
/// `<collection>-<part>.<ext>`, in name order.
fn files_of(dir: &Path, collection: &str) -> Result<Vec<(PathBuf, &'static str)>> {
    let entries = std::fs::read_dir(dir)
        .map_err(|e| CliError::Io(format!("cannot read {}: {e}", dir.display())))?;
    let mut files = Vec::new();
    for entry in entries.flatten() {
        let path = entry.path();
        let Some(name) = path.file_name().and_then(|n| n.to_str()) else {
            continue;
        };
        let Some((stem, extension)) = name.rsplit_once('.') else {
            continue;
        };
        let Some(extension) = EXTENSIONS.iter().find(|e| **e == extension) else {
            continue;
        };
        let part = stem
            .strip_prefix(collection)
            .is_some_and(|rest| rest.is_empty() || rest.starts_with('-'));
        if part && path.is_file() {
            files.push((path, *extension));
        }
    }
    files.sort();
    Ok(files)
}

/// The records of one collection, file by file (none when no file holds it).
/// Invoices from JSONL stay text for the engine to read.
pub fn read(dir: &Path, collection: &str) -> Result<Vec<(PathBuf, Records)>> {
    files_of(dir, collection)?
        .into_iter()
        .map(|(path, extension)| {
            let records = read_file(&path, extension, collection)?;
            Ok((path, records))
        })
        .collect()
}

/// Every record of one collection as JSON values (small collections such as
/// FX rates, whatever their format).
pub fn read_values(dir: &Path, collection: &str) -> Result<Records> {
    let mut values = Vec::new();
    for (path, records) in read(dir, collection)? {
        match records {
            Records::Values(more) => values.extend(more),
            Records::Lines(text) => {
                for (i, line) in text.lines().enumerate() {
                    if !line.trim().is_empty() {
                        values.push(serde_json::from_str(line).map_err(|e| {
                            CliError::usage(format!("{} line {}: {e}", path.display(), i + 1))
                        })?);
                    }
                }
            }
            Records::Batches(batches) => return Ok(Records::Batches(batches)),
        }
    }
    Ok(Records::Values(values))
}

fn read_file(path: &Path, extension: &str, collection: &str) -> Result<Records> {
    if extension == "parquet" {
        return read_parquet(path);
    }
    let text = std::fs::read_to_string(path)
        .map_err(|e| CliError::Io(format!("cannot read {}: {e}", path.display())))?;
    let bad =
        |line: usize, e: String| CliError::usage(format!("{} line {line}: {e}", path.display()));
    match extension {
        "json" => {
            match serde_json::from_str::<Value>(&text).map_err(|e| bad(e.line(), e.to_string()))? {
                Value::Array(items) => Ok(Records::Values(items)),
                Value::Object(mut map) => match (
                    map.remove(collection).or_else(|| map.remove("data")),
                    map.remove("result"),
                ) {
                    (Some(Value::Array(items)), _) => Ok(Records::Values(items)),
                    (None, Some(Value::Object(mut page))) => match page.remove("list") {
                        Some(Value::Array(items)) => Ok(Records::Values(items)),
                        _ => Err(bad(
                            1,
                            "expected {\"result\": {\"list\": [...]}}".to_string(),
                        )),
                    },
                    _ => Err(bad(
                        1,
                        format!(
                            "expected an array, {{\"{collection}\": [...]}} or {{\"result\": {{\"list\": [...]}}}}"
                        ),
                    )),
                },
                _ => Err(bad(1, "expected an array of records".to_string())),
            }
        }
        "jsonl" | "ndjson" if collection == "invoices" => Ok(Records::Lines(text)),
        "jsonl" | "ndjson" => text
            .lines()
            .enumerate()
            .filter(|(_, line)| !line.trim().is_empty())
            .map(|(i, line)| serde_json::from_str(line).map_err(|e| bad(i + 1, e.to_string())))
            .collect::<Result<Vec<Value>>>()
            .map(Records::Values),
        _ => csv_file(&text).map_err(|(line, e)| bad(line, e)),
    }
}

/// The record batches of a Parquet file.
fn read_parquet(path: &Path) -> Result<Records> {
    let bad = |e: String| CliError::usage(format!("{}: {e}", path.display()));
    let file = std::fs::File::open(path)
        .map_err(|e| CliError::Io(format!("cannot read {}: {e}", path.display())))?;
    let reader = parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(file)
        .map_err(|e| bad(e.to_string()))?
        .with_batch_size(BATCH_ROWS)
        .build()
        .map_err(|e| bad(e.to_string()))?;
    let batches = reader
        .collect::<std::result::Result<Vec<RecordBatch>, _>>()
        .map_err(|e| bad(e.to_string()))?;
    Ok(Records::Batches(batches))
}

/// A CSV file's rows (RFC 4180: quoted fields may hold commas, quotes and
/// line breaks), the header first; blank lines are skipped.
fn csv_rows(text: &str) -> std::result::Result<Vec<csv::StringRecord>, (usize, String)> {
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .from_reader(text.as_bytes());
    let mut rows = Vec::new();
    for row in reader.records() {
        let row = row.map_err(|e| {
            let line = e.position().map_or(0, |p| p.line() as usize);
            (line, csv_error(&e))
        })?;
        if row.iter().any(|cell| !cell.is_empty()) {
            rows.push(row);
        }
    }
    Ok(rows)
}

/// A CSV error without the reader's position (the caller names the line).
fn csv_error(error: &csv::Error) -> String {
    match error.kind() {
        csv::ErrorKind::Utf8 { err, .. } => format!("not UTF-8: {err}"),
        csv::ErrorKind::Io(err) => err.to_string(),
        _ => error.to_string(),
    }
}

/// A CSV file as records: straight into columns when every column is a
/// plain field, else record by record.
fn csv_file(text: &str) -> std::result::Result<Records, (usize, String)> {
    let rows = csv_rows(text)?;
    let Some((header, body)) = rows.split_first() else {
        return Ok(Records::Values(Vec::new()));
    };
    check_widths(header, body)?;
    let plain = header
        .iter()
        .all(|name| !submetrics::csv::JSON_FIELDS.contains(&name) && !name.contains('.'));
    match plain.then(|| csv_batches(header, body)).flatten() {
        Some(batches) => Ok(Records::Batches(batches)),
        None => submetrics::csv::records_by_line(text).map(Records::Values),
    }
}

/// Every row has as many fields as the header (line numbers as the file
/// counts them: the header is line 1).
fn check_widths(
    header: &csv::StringRecord,
    body: &[csv::StringRecord],
) -> std::result::Result<(), (usize, String)> {
    for row in body {
        if row.len() != header.len() {
            let line = row.position().map_or(0, |p| p.line() as usize);
            return Err((
                line,
                format!("{} fields where the header has {}", row.len(), header.len()),
            ));
        }
    }
    Ok(())
}

/// Plain CSV columns as record batches: text columns, except a numeric
/// field whose cells are all numbers (`Int64`, or `Float64` with a
/// fraction) and a date field whose cells are all whole numbers (Unix
/// seconds, a UTC timestamp column). Empty cells are nulls. `None` when a
/// date field mixes whole numbers with other text (read record by record
/// instead).
fn csv_batches(header: &csv::StringRecord, body: &[csv::StringRecord]) -> Option<Vec<RecordBatch>> {
    body.chunks(BATCH_ROWS)
        .map(|rows| {
            let mut fields = Vec::with_capacity(header.len());
            let mut columns = Vec::with_capacity(header.len());
            for (i, name) in header.iter().enumerate() {
                let mut text = StringBuilder::with_capacity(rows.len(), rows.len() * 8);
                for row in rows {
                    match row.get(i) {
                        Some(cell) if !cell.is_empty() => text.append_value(cell),
                        _ => text.append_null(),
                    }
                }
                let column = typed_column(name, text.finish())?;
                fields.push(Field::new(name, column.data_type().clone(), true));
                columns.push(column);
            }
            RecordBatch::try_new(Arc::new(Schema::new(fields)), columns).ok()
        })
        .collect()
}

/// Every cell of `text` parsed (nulls stay null), or `None` when one does
/// not parse or is refused by `keep`.
fn parse_all<T: std::str::FromStr>(
    text: &StringArray,
    keep: impl Fn(&T) -> bool,
) -> Option<Vec<Option<T>>> {
    text.iter()
        .map(|cell| match cell {
            None => Some(None),
            Some(cell) => cell.parse::<T>().ok().filter(&keep).map(Some),
        })
        .collect()
}

/// A text column typed by its field (see [`csv_batches`]).
fn typed_column(field: &str, text: StringArray) -> Option<ArrayRef> {
    let numeric = submetrics::csv::NUMERIC_FIELDS.contains(&field);
    let date = submetrics::csv::DATE_FIELDS.contains(&field);
    if numeric || date {
        if let Some(whole) = parse_all::<i64>(&text, |_| true) {
            if date {
                return Some(Arc::new(
                    TimestampSecondArray::from(whole).with_timezone("UTC"),
                ));
            }
            return Some(Arc::new(Int64Array::from(whole)));
        }
        if numeric && let Some(fractions) = parse_all::<f64>(&text, |f| f.is_finite()) {
            return Some(Arc::new(Float64Array::from(fractions)));
        }
        if date
            && text
                .iter()
                .flatten()
                .any(|cell| cell.parse::<i64>().is_ok())
        {
            return None;
        }
    }
    Some(Arc::new(text))
}
