//! Reading exported records from a directory. A collection's records are in
//! `<collection>.<format>`, or split over several files
//! `<collection>-<part>.<format>` (read in name order), in these formats:
//! - `.json`: an array, an object with the collection's key, or a page of
//!   the data API as `submetrics data <kind> list --format json` writes it
//!   (`{"result": {"list": [...]}}`);
//! - `.jsonl` (or `.ndjson`): one record per line; invoice lines go to the
//!   engine as text, read without building a JSON tree;
//! - `.parquet`: one record per row, a column per field (Arrow types as the
//!   engine reads them: strings, numbers, dates, timestamps, lists,
//!   structs);
//! - `.csv`: a header of field names, as `submetrics exports` writes it;
//!   `custom_variables.<key>` and `metadata.<key>` columns fill those
//!   objects; a cell of a field that holds an object or a list
//!   (`custom_variables`, `metadata`, `lines`, `transactions`) is that JSON;
//!   a cell is a number only in a field known to hold one (amounts, counts,
//!   rates, and Unix seconds in a date field); everything else, ids and
//!   codes included, stays text as written; empty cells are left out. A CSV
//!   file of plain columns is read straight into columns.
//!
//! So what the client exports, `local` reads back.

use crate::error::{CliError, Result};
use arrow_array::builder::StringBuilder;
use arrow_array::{ArrayRef, Float64Array, Int64Array, RecordBatch, StringArray};
use arrow_schema::{Field, Schema};
use serde_json::{Map, Value};
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
                Value::Object(mut map) => match (map.remove(collection), map.remove("result")) {
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
        .all(|name| !JSON_FIELDS.contains(&name) && !name.contains('.'));
    match plain.then(|| csv_batches(header, body)).flatten() {
        Some(batches) => Ok(Records::Batches(batches)),
        None => Ok(Records::Values(csv_values(header, body)?)),
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
/// seconds, `Int64`). Empty cells are nulls. `None` when a date field mixes
/// whole numbers with other text (read record by record instead).
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
    let numeric = NUMERIC_FIELDS.contains(&field);
    let date = DATE_FIELDS.contains(&field);
    if numeric || date {
        if let Some(whole) = parse_all::<i64>(&text, |_| true) {
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

/// Fields whose values are numbers: amounts in cents, counts, FX rates.
const NUMERIC_FIELDS: &[&str] = &[
    "amount",
    "amount_in_cents",
    "tax_amount",
    "tax",
    "discount_amount",
    "discount",
    "quantity",
    "interval_count",
    "billing_freq_count",
    "rate",
];

/// Date fields: a whole number there is Unix seconds.
const DATE_FIELDS: &[&str] = &[
    "invoice_date",
    "date",
    "due_date",
    "payment_date",
    "paid_date",
    "period_start",
    "period_end",
    "service_period_start",
    "service_period_end",
    "created_date",
    "created",
    "trial_started",
    "paid_started",
    "trial_end_date",
    "cancel_date",
    "overdue_date",
];

/// Fields whose values are objects or lists, written in a CSV cell as JSON.
const JSON_FIELDS: &[&str] = &["custom_variables", "metadata", "lines", "transactions"];

/// A cell typed by what its field means: numbers only where the field
/// holds one, text otherwise (`007`, zip codes, invoice numbers unchanged).
fn typed(field: &str, text: &str) -> std::result::Result<Value, String> {
    if JSON_FIELDS.contains(&field) {
        return serde_json::from_str(text)
            .map_err(|e| format!("field `{field}`: the cell is not JSON: {e}"));
    }
    let whole = || text.parse::<i64>().ok().map(Value::from);
    let number = if NUMERIC_FIELDS.contains(&field) {
        whole().or_else(|| {
            text.parse::<f64>()
                .ok()
                .and_then(serde_json::Number::from_f64)
                .map(Value::Number)
        })
    } else if DATE_FIELDS.contains(&field) {
        whole()
    } else {
        None
    };
    Ok(number.unwrap_or_else(|| Value::String(text.to_string())))
}

/// CSV rows as JSON records (cells typed by [`typed`]).
fn csv_values(
    header: &csv::StringRecord,
    body: &[csv::StringRecord],
) -> std::result::Result<Vec<Value>, (usize, String)> {
    body.iter()
        .map(|row| {
            let line = row.position().map_or(0, |p| p.line() as usize);
            let mut record = Map::new();
            for (name, cell) in header.iter().zip(row) {
                if cell.is_empty() {
                    continue;
                }
                match name.split_once('.') {
                    Some((object @ ("custom_variables" | "metadata"), key)) => {
                        let entry = record
                            .entry(object.to_string())
                            .or_insert_with(|| Value::Object(Map::new()));
                        if let Some(map) = entry.as_object_mut() {
                            map.insert(key.to_string(), Value::String(cell.to_string()));
                        }
                    }
                    _ => {
                        record.insert(name.to_string(), typed(name, cell).map_err(|e| (line, e))?);
                    }
                }
            }
            Ok(Value::Object(record))
        })
        .collect()
}

/// A CSV text as JSON records, whatever its columns (tests compare the
/// column path with this).
#[cfg(test)]
fn csv_records(text: &str) -> std::result::Result<Vec<Value>, (usize, String)> {
    let rows = csv_rows(text)?;
    let Some((header, body)) = rows.split_first() else {
        return Ok(Vec::new());
    };
    check_widths(header, body)?;
    csv_values(header, body)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_quotes_commas_and_nested_columns() {
        let text = "id,name,amount,custom_variables.industry\r\n\"c1\",\"Acme, Inc.\",3000,Retail\r\nc2,\"Say \"\"hi\"\"\",,\r\n";
        let records = csv_records(text).unwrap();
        assert_eq!(records[0]["name"], "Acme, Inc.");
        assert_eq!(records[0]["amount"], 3000);
        assert_eq!(records[0]["custom_variables"]["industry"], "Retail");
        assert_eq!(records[1]["name"], "Say \"hi\"");
        assert!(records[1].get("amount").is_none());
    }

    #[test]
    fn cells_are_typed_by_the_field_they_are_in() {
        let text = "id,customer_id,invoice_number,amount,tax_amount,quantity,invoice_date,zip,flag,rate\n007,0042,000123,3000,-150,2,1704067200,01234,true,0.9\n";
        let records = csv_records(text).unwrap();
        assert_eq!(
            records[0],
            serde_json::json!({
                "id": "007",
                "customer_id": "0042",
                "invoice_number": "000123",
                "amount": 3000,
                "tax_amount": -150,
                "quantity": 2,
                "invoice_date": 1704067200,
                "zip": "01234",
                "flag": "true",
                "rate": 0.9
            })
        );
    }

    #[test]
    fn object_and_list_fields_are_json_cells_as_exports_write_them() {
        let text = "id,custom_variables,lines\r\nA,\"{\"\"industry\"\":\"\"Retail\"\"}\",\"[{\"\"amount\"\":100}]\"\r\nB,{},[]\r\n";
        let records = csv_records(text).unwrap();
        assert_eq!(
            records,
            vec![
                serde_json::json!({"id": "A", "custom_variables": {"industry": "Retail"}, "lines": [{"amount": 100}]}),
                serde_json::json!({"id": "B", "custom_variables": {}, "lines": []}),
            ]
        );
        assert_eq!(
            csv_records("id,lines\nA,seats\n").unwrap_err(),
            (
                2,
                "field `lines`: the cell is not JSON: expected value at line 1 column 1"
                    .to_string()
            )
        );
    }

    #[test]
    fn a_short_row_names_its_line() {
        assert_eq!(
            csv_records("id,name\nc1\n").unwrap_err(),
            (2, "1 fields where the header has 2".to_string())
        );
    }
}
