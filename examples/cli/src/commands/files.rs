//! Reading exported records from the files of a collection (found as
//! [`super::record_files`] says). Each file's format is its extension:
//! - `.json`: an array, an object with the collection's key, a list
//!   response with `data` (as the Stripe API answers), or a page of the
//!   data API as `submetrics data <kind> list --format json` writes it
//!   (`{"result": {"list": [...]}}`);
//! - `.jsonl` (or `.ndjson`): one record per line, read a block of lines at
//!   a time; invoice lines go to the engine as text, read without building
//!   a JSON tree;
//! - `.parquet`: one record per row, a column per field (Arrow types as the
//!   engine reads them: strings, numbers, dates, timestamps, lists,
//!   structs);
//! - `.csv`: a header of field names, as `submetrics exports` writes it,
//!   cells typed as the core's [`submetrics::csv`] says (the service reads
//!   CSV bodies the same way). A CSV file of plain columns is read straight
//!   into columns; one with object or list cells or `custom_variables.<key>`
//!   columns record by record.
//!
//! JSONL files, Parquet files and CSV files of plain columns are read a
//! batch at a time while the batches before are stored, so a file is never
//! in memory whole beside the ledger it builds.
//!
//! A `.json`, `.jsonl`, `.ndjson` or `.csv` file may be compressed, as
//! `.gz` or `.zst` after its extension says ([`super::text_source`]); it is
//! decompressed as it is read, streams included.
//!
//! So what the client exports, `local` reads back.

use super::csv_text::{QuoteWatched, RowStart, UNCLOSED_QUOTE, ends_inside_quotes};
use super::jsonl::JsonlStream;
use super::library_panics::caught;
use super::places::{LineCursor, Places};
use super::record_files::RecordFile;
use super::text_source::{Progress, TextSource};
use crate::error::{CliError, Result};
use arrow_array::builder::StringBuilder;
use arrow_array::{
    Array, ArrayRef, Float64Array, Int64Array, RecordBatch, StringArray, TimestampSecondArray,
};
use arrow_schema::{Field, Schema};
use rayon::prelude::*;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// Rows per record batch read from a CSV or Parquet file.
const BATCH_ROWS: usize = 1 << 16;

/// The records of one file, in the shape the engine takes them fastest;
/// the records read whole with their places in the file.
pub enum Records {
    /// Records as JSON values.
    Values(Vec<Value>, Places),
    /// A JSONL file, read a block of whole lines at a time while the blocks
    /// before it are stored.
    LineStream(Box<JsonlStream>),
    /// Rows of record batches, one record per row.
    Batches(Vec<RecordBatch>, Places),
    /// A Parquet file, or a CSV file of plain columns, read a batch at a
    /// time while the batches before it are stored: the file is never in
    /// memory whole.
    Stream(Box<Stream>),
}

impl Records {
    /// How many records, when known before reading them (the row count of
    /// a Parquet file's footer; not for a CSV or JSONL stream).
    pub fn len(&self) -> Option<usize> {
        match self {
            Records::Values(values, _) => Some(values.len()),
            Records::Batches(batches, _) => Some(batches.iter().map(RecordBatch::num_rows).sum()),
            Records::Stream(stream) => stream.rows,
            Records::LineStream(_) => None,
        }
    }
}

/// A file read batch by batch ([`Records::Stream`]).
pub struct Stream {
    path: PathBuf,
    source: Source,
    /// The row count, when the file states it (Parquet).
    rows: Option<usize>,
    /// The rows read so far.
    rows_read: usize,
}

enum Source {
    Parquet(parquet::arrow::arrow_reader::ParquetRecordBatchReader),
    Csv(Box<CsvStream>),
}

/// One step of a [`Stream`]: a record batch, or records as JSON values
/// (CSV rows that cannot be typed as columns, see [`csv_batch`]), with the
/// places of its records.
pub enum Chunk {
    Batch(RecordBatch, Places),
    Values(Vec<Value>, Places),
}

impl Chunk {
    fn len(&self) -> usize {
        match self {
            Chunk::Batch(batch, _) => batch.num_rows(),
            Chunk::Values(values, _) => values.len(),
        }
    }
}

impl Stream {
    /// The next chunk of records; `None` at the end of the file. An error
    /// names the file (and the line, for CSV).
    pub fn next_chunk(&mut self) -> Result<Option<Chunk>> {
        let path = &self.path;
        let chunk = match &mut self.source {
            Source::Parquet(reader) => {
                let first = self.rows_read + 1;
                caught(|| reader.next())
                    .map_err(unreadable_parquet)
                    .and_then(|batch| batch.transpose().map_err(|e| e.to_string()))
                    .map(|batch| batch.map(|b| Chunk::Batch(b, Places::rows(path, first))))
                    .map_err(|e| CliError::usage(format!("{}: {e}", path.display())))
            }
            Source::Csv(csv) => csv
                .next_chunk(path)
                .map_err(|(line, e)| at_line(path, line, &e)),
        }?;
        self.rows_read += chunk.as_ref().map_or(0, Chunk::len);
        Ok(chunk)
    }

    /// Every record, as record batches (or as values if some rows
    /// could not be typed as columns).
    fn read_whole(mut self) -> Result<Records> {
        let mut batches = Vec::new();
        let mut values = Vec::new();
        while let Some(chunk) = self.next_chunk()? {
            match chunk {
                Chunk::Batch(batch, _) => batches.push(batch),
                Chunk::Values(more, _) => values.extend(more),
            }
        }
        // Only Parquet files are streams when read whole (CSV files then
        // are read as text): their rows count from the first.
        let places = Places::rows(&self.path, 1);
        if values.is_empty() {
            Ok(Records::Batches(batches, places))
        } else if batches.is_empty() {
            Ok(Records::Values(values, places))
        } else {
            Err(CliError::usage(format!(
                "{}: some rows are typed as columns and some are not; \
                 give each date field one kind of value",
                self.path.display()
            )))
        }
    }

    /// An estimate of how many records the file holds, from the bytes read
    /// so far (CSV), or the row count the file states (Parquet).
    pub fn estimate(&self) -> Option<usize> {
        match &self.source {
            Source::Parquet(_) => self.rows,
            Source::Csv(csv) => csv.estimate(),
        }
    }
}

/// The records of each file, in order. JSONL files, Parquet files and CSV
/// files of plain columns are opened (their footer or header read) and
/// streamed as they are stored.
pub fn read(files: Vec<RecordFile>, collection: &str) -> Result<Vec<(PathBuf, Records)>> {
    files
        .into_iter()
        .map(|file| {
            let records = read_file(&file, collection, true)?;
            Ok((file.path, records))
        })
        .collect()
}

/// The records of each file read whole, in order: JSON values, or record
/// batches when the file is columnar (for small collections such as FX
/// rates, whatever their format).
pub fn read_whole(files: Vec<RecordFile>, collection: &str) -> Result<Vec<Records>> {
    files
        .into_iter()
        .map(|file| match read_file(&file, collection, false)? {
            Records::Stream(stream) => stream.read_whole(),
            records => Ok(records),
        })
        .collect()
}

fn read_file(file: &RecordFile, collection: &str, stream_wanted: bool) -> Result<Records> {
    let path = file.path.as_path();
    let unreadable =
        |e: std::io::Error| CliError::Io(format!("cannot read {}: {e}", path.display()));
    let open_text = || TextSource::open(path, file.compression).map_err(unreadable);
    if file.format == "parquet" {
        let opened = std::fs::File::open(path).map_err(unreadable)?;
        let stream = parquet_stream(path, opened)?;
        return if stream_wanted {
            Ok(Records::Stream(Box::new(stream)))
        } else {
            stream.read_whole()
        };
    }
    if matches!(file.format, "jsonl" | "ndjson") && stream_wanted {
        let stream = JsonlStream::open(path, open_text()?);
        return Ok(Records::LineStream(Box::new(stream)));
    }
    if file.format == "csv" && stream_wanted {
        let bad = |(line, e): (usize, String)| at_line(path, line, &e);
        if let Some(csv) = CsvStream::open(file, open_text()?).map_err(bad)? {
            return Ok(Records::Stream(Box::new(Stream {
                path: path.to_path_buf(),
                source: Source::Csv(Box::new(csv)),
                rows: None,
                rows_read: 0,
            })));
        }
    }
    let text = open_text()?.read_text().map_err(unreadable)?;
    let bad = |line: usize, e: String| at_line(path, line, &e);
    match file.format {
        "json" => {
            let items = |items| Records::Values(items, Places::records(path, 1));
            // As the engine reads JSON: an object giving a key twice is an error.
            let parsed = submetrics::model::Json::parse(&text).map(|json| json.to_value());
            match parsed.map_err(|e| bad(e.line(), e.to_string()))? {
                Value::Array(list) => Ok(items(list)),
                Value::Object(mut map) => match (
                    map.remove(collection).or_else(|| map.remove("data")),
                    map.remove("result"),
                ) {
                    (Some(Value::Array(list)), _) => Ok(items(list)),
                    (None, Some(Value::Object(mut page))) => match page.remove("list") {
                        Some(Value::Array(list)) => Ok(items(list)),
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
        "jsonl" | "ndjson" => {
            let (lines, values): (Vec<usize>, Vec<Value>) = text
                .lines()
                .enumerate()
                .filter(|(_, line)| !line.trim().is_empty())
                .map(|(i, line)| {
                    serde_json::from_str(line)
                        .map(|value| (i + 1, value))
                        .map_err(|e| bad(i + 1, e.to_string()))
                })
                .collect::<Result<_>>()?;
            Ok(Records::Values(values, Places::lines(path, lines)))
        }
        _ => csv_file(path, &text).map_err(|(line, e)| bad(line, e)),
    }
}

/// The error of a record file at `line` (as the file counts them from 1;
/// 0 when the reader could not tell, as for a file that fails to read).
pub fn at_line(path: &Path, line: usize, reason: &str) -> CliError {
    if line == 0 {
        CliError::usage(format!("{}: {reason}", path.display()))
    } else {
        CliError::usage(format!("{} line {line}: {reason}", path.display()))
    }
}

/// A Parquet file opened for reading batch by batch (its footer read: a
/// file that is not Parquet is an error here, before any record is stored).
fn parquet_stream(path: &Path, file: std::fs::File) -> Result<Stream> {
    let bad = |e: String| CliError::usage(format!("{}: {e}", path.display()));
    let opened = caught(|| {
        let builder = parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(file)?;
        let rows = usize::try_from(builder.metadata().file_metadata().num_rows()).ok();
        Ok((builder.with_batch_size(BATCH_ROWS).build()?, rows))
    });
    let (reader, rows) = opened
        .map_err(unreadable_parquet)
        .and_then(|opened: parquet::errors::Result<_>| opened.map_err(|e| e.to_string()))
        .map_err(bad)?;
    Ok(Stream {
        path: path.to_path_buf(),
        source: Source::Parquet(reader),
        rows,
        rows_read: 0,
    })
}

/// The error of a Parquet file the reader panicked on (see
/// [`super::library_panics`]).
fn unreadable_parquet(panic: String) -> String {
    format!("is not a readable Parquet file ({panic})")
}

/// A CSV row's error: where the row starts and the reason.
type RowError = (RowStart, String);

/// A CSV file of plain columns read [`BATCH_ROWS`] rows at a time.
struct CsvStream {
    /// The file, read again from its start for the line of an error.
    file: RecordFile,
    reader: csv::Reader<std::io::BufReader<QuoteWatched<TextSource>>>,
    header: csv::StringRecord,
    /// The row being read, reused for every row.
    row: csv::StringRecord,
    /// How much of the file and how many rows were read, for
    /// [`Stream::estimate`].
    progress: Progress,
    rows: usize,
    /// The lines of the rows a load rejects.
    lines: Arc<Mutex<LineCursor>>,
}

impl CsvStream {
    /// The stream of a CSV file whose header names plain fields only;
    /// `None` for any other file (read record by record instead).
    fn open(
        file: &RecordFile,
        source: TextSource,
    ) -> std::result::Result<Option<CsvStream>, (usize, String)> {
        let at = |(start, reason): RowError| (line_in_file(file, start), reason);
        let progress = source.progress();
        let mut reader = csv::ReaderBuilder::new()
            .has_headers(false)
            .flexible(true)
            .from_reader(std::io::BufReader::with_capacity(
                1 << 20,
                QuoteWatched::new(source),
            ));
        let mut header = csv::StringRecord::new();
        if !next_row(&mut reader, &mut header).map_err(at)? {
            return Ok(None);
        }
        check_quotes_closed(&reader, &header).map_err(at)?;
        check_header(&header).map_err(at)?;
        let plain = header
            .iter()
            .all(|name| !submetrics::csv::JSON_FIELDS.contains(&name) && !name.contains('.'));
        Ok(plain.then_some(CsvStream {
            file: file.clone(),
            reader,
            header,
            row: csv::StringRecord::new(),
            progress,
            rows: 0,
            lines: Arc::new(Mutex::new(LineCursor::new(file))),
        }))
    }

    /// The next [`BATCH_ROWS`] rows, each cell appended to its column's
    /// text as the row is read (one row buffer reused for the file); an
    /// error names the line its row starts on.
    fn next_chunk(&mut self, path: &Path) -> std::result::Result<Option<Chunk>, (usize, String)> {
        self.next_rows(path)
            .map_err(|(start, reason)| (line_in_file(&self.file, start), reason))
    }

    fn next_rows(&mut self, path: &Path) -> std::result::Result<Option<Chunk>, RowError> {
        let width = self.header.len();
        let mut columns: Vec<StringBuilder> = (0..width)
            .map(|_| StringBuilder::with_capacity(BATCH_ROWS, BATCH_ROWS * 8))
            .collect();
        let mut starts = Vec::with_capacity(BATCH_ROWS);
        while starts.len() < BATCH_ROWS && next_row(&mut self.reader, &mut self.row)? {
            check_quotes_closed(&self.reader, &self.row)?;
            check_width(&self.header, &self.row)?;
            starts.push(RowStart::of(self.row.position()));
            for (column, cell) in columns.iter_mut().zip(self.row.iter()) {
                append_cell(column, cell);
            }
        }
        if starts.is_empty() {
            return Ok(None);
        }
        self.rows += starts.len();
        let texts: Vec<StringArray> = columns.iter_mut().map(StringBuilder::finish).collect();
        let places = |starts| Places::csv_rows(path, starts, Arc::clone(&self.lines));
        if let Some(batch) = typed_batch(&self.header, texts.clone()) {
            return Ok(Some(Chunk::Batch(batch, places(starts))));
        }
        // A date field mixing Unix seconds with other text: these rows
        // record by record, each keyed by its index for its error.
        let header: Vec<&str> = self.header.iter().collect();
        let rows: Vec<Vec<&str>> = (0..starts.len())
            .map(|row| texts.iter().map(|text| cell_text(text, row)).collect())
            .collect();
        let rows = rows
            .iter()
            .enumerate()
            .map(|(row, cells)| (row, cells.as_slice()));
        let values = submetrics::csv::records_from_rows(&header, rows)
            .map_err(|(row, reason)| (starts[row], reason))?;
        Ok(Some(Chunk::Values(values, places(starts))))
    }

    fn estimate(&self) -> Option<usize> {
        self.progress
            .estimate(self.rows, self.reader.position().byte())
    }
}

/// The text of a cell, empty when null.
fn cell_text(column: &StringArray, row: usize) -> &str {
    if column.is_null(row) {
        ""
    } else {
        column.value(row)
    }
}

/// The line `start` is on in `file`, read again from its beginning: only
/// an error needs it, and a stream keeps no text behind it.
fn line_in_file(file: &RecordFile, start: RowStart) -> usize {
    LineCursor::new(file).line_of(start)
}

/// Refuses `row`, just read, when the file ends inside one of its quoted
/// fields: the row then holds every line after it (see
/// [`super::csv_text`]).
fn check_quotes_closed<R: std::io::Read>(
    reader: &csv::Reader<std::io::BufReader<QuoteWatched<R>>>,
    row: &csv::StringRecord,
) -> std::result::Result<(), RowError> {
    if reader.get_ref().get_ref().ends_inside_quotes() {
        return Err((RowStart::of(row.position()), UNCLOSED_QUOTE.to_string()));
    }
    Ok(())
}

/// Refuses a header that does not name fields as the core reads them.
fn check_header(header: &csv::StringRecord) -> std::result::Result<(), RowError> {
    let names: Vec<&str> = header.iter().collect();
    submetrics::csv::check_header(&names)
        .map_err(|reason| (RowStart::of(header.position()), reason))
}

/// Reads the next non-blank row of a CSV reader into `row`; `false` at
/// the end of the file.
fn next_row<R: std::io::Read>(
    reader: &mut csv::Reader<R>,
    row: &mut csv::StringRecord,
) -> std::result::Result<bool, RowError> {
    loop {
        let more = reader
            .read_record(row)
            .map_err(|e| (RowStart::of(e.position()), csv_error(&e)))?;
        if !more || row.iter().any(|cell| !cell.is_empty()) {
            return Ok(more);
        }
    }
}

/// A CSV file's rows (RFC 4180: quoted fields may hold commas, quotes and
/// line breaks), the header first; blank lines are skipped, and a quote
/// that never closes is an error at its row.
fn csv_rows(text: &str) -> std::result::Result<Vec<csv::StringRecord>, RowError> {
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .from_reader(text.as_bytes());
    let mut rows = Vec::new();
    for row in reader.records() {
        let row = row.map_err(|e| (RowStart::of(e.position()), csv_error(&e)))?;
        if row.iter().any(|cell| !cell.is_empty()) {
            rows.push(row);
        }
    }
    if ends_inside_quotes(text) {
        let start = rows
            .last()
            .map_or(RowStart::FIRST, |row| RowStart::of(row.position()));
        return Err((start, UNCLOSED_QUOTE.to_string()));
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

/// A CSV file read whole as records: straight into columns when every
/// column is a plain field, else record by record.
fn csv_file(path: &Path, text: &str) -> std::result::Result<Records, (usize, String)> {
    let at = |(start, reason): RowError| (start.line_in(text), reason);
    let rows = csv_rows(text).map_err(at)?;
    let Some((header, body)) = rows.split_first() else {
        return Ok(Records::Values(Vec::new(), Places::lines(path, Vec::new())));
    };
    check_header(header).map_err(at)?;
    body.iter()
        .try_for_each(|row| check_width(header, row))
        .map_err(at)?;
    let plain = header
        .iter()
        .all(|name| !submetrics::csv::JSON_FIELDS.contains(&name) && !name.contains('.'));
    let lines = body
        .iter()
        .map(|row| RowStart::of(row.position()).line_in(text))
        .collect();
    let places = Places::lines(path, lines);
    match plain.then(|| csv_batches(header, body)).flatten() {
        Some(batches) => Ok(Records::Batches(batches, places)),
        None => {
            submetrics::csv::records_by_line(text).map(|values| Records::Values(values, places))
        }
    }
}

/// Refuses a row that has not as many fields as the header.
fn check_width(
    header: &csv::StringRecord,
    row: &csv::StringRecord,
) -> std::result::Result<(), RowError> {
    if row.len() == header.len() {
        return Ok(());
    }
    Err((
        RowStart::of(row.position()),
        format!("{} fields where the header has {}", row.len(), header.len()),
    ))
}

/// Plain CSV columns as record batches of [`BATCH_ROWS`] rows (see
/// [`csv_batch`]); `None` when one batch cannot be typed.
fn csv_batches(header: &csv::StringRecord, body: &[csv::StringRecord]) -> Option<Vec<RecordBatch>> {
    body.chunks(BATCH_ROWS)
        .map(|rows| csv_batch(header, rows))
        .collect()
}

/// Plain CSV columns as a record batch (see [`typed_batch`]).
fn csv_batch(header: &csv::StringRecord, rows: &[csv::StringRecord]) -> Option<RecordBatch> {
    let texts = (0..header.len())
        .map(|i| {
            let mut text = StringBuilder::with_capacity(rows.len(), rows.len() * 8);
            for row in rows {
                append_cell(&mut text, row.get(i).unwrap_or_default());
            }
            text.finish()
        })
        .collect();
    typed_batch(header, texts)
}

/// Appends a CSV cell to its column's text: an empty cell is null.
fn append_cell(column: &mut StringBuilder, cell: &str) {
    if cell.is_empty() {
        column.append_null();
    } else {
        column.append_value(cell);
    }
}

/// Plain CSV columns, given as text with empty cells null, as a record
/// batch typed on every core: text columns, except a numeric field whose
/// cells are all numbers (`Int64`, or `Float64` with a fraction) and a date
/// field whose cells are all whole numbers (Unix seconds, a UTC timestamp
/// column). `None` when a date field mixes whole numbers with other text
/// (read record by record instead).
fn typed_batch(header: &csv::StringRecord, texts: Vec<StringArray>) -> Option<RecordBatch> {
    let names: Vec<&str> = header.iter().collect();
    let columns: Vec<ArrayRef> = names
        .par_iter()
        .zip(texts)
        .map(|(name, text)| typed_column(name, text))
        .collect::<Option<_>>()?;
    let fields: Vec<Field> = names
        .iter()
        .zip(&columns)
        .map(|(name, column)| Field::new(*name, column.data_type().clone(), true))
        .collect();
    RecordBatch::try_new(Arc::new(Schema::new(fields)), columns).ok()
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
        // Digits alone in a date column are Unix seconds only with nine or
        // more; shorter ones (`20240301`) go to the general reader, which
        // reads or refuses them (`submetrics::csv::whole_number_date`).
        let whole_keep = |n: &i64| !date || submetrics::csv::is_unix_seconds(*n);
        if let Some(whole) = parse_all::<i64>(&text, whole_keep) {
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
