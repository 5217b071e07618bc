//! Bodies in formats other than JSON. Record writes (the upserts of
//! customers, plans and invoices, and the imports) take, by `Content-Type`:
//! - `application/x-ndjson` (or `application/jsonl`): one record per line,
//!   blank lines skipped; read exactly as the JSON array of those records,
//!   with the same per-record results, and a line that is not JSON refuses
//!   the body (400) naming its line;
//! - `application/vnd.apache.arrow.stream`: an Arrow IPC stream, one record
//!   per row, a column per field, read by the core in place (see
//!   `submetrics::model::ArrowRecords` for the column types it reads);
//!   every row is tagged with the data source as a JSON record is;
//! - `text/csv`: the columns `submetrics local` reads (the core's
//!   `submetrics::csv`), one record per row.
//!
//! JSON's own media types (and the two tools send JSON under by default,
//! see `is_json_media`) are JSON; any other is refused. Reports answer CSV
//! for `format=csv`, or when the `Accept` header prefers `text/csv` (see
//! `accept`): the core's CSV of the answer's table (`Ledger::report_csv`),
//! one row per period, item or metric, a header of its columns (the
//! report's declared columns when there are no rows), nested values as
//! their JSON text. They
//! answer an Arrow IPC stream for `format=arrow`, or when `Accept` prefers
//! `application/vnd.apache.arrow.stream`: one record batch of the same
//! rows, its columns typed by the report's schema (`Ledger::report_batch`),
//! as the embedded `report_arrow` answers it. Movements answer the same
//! Arrow stream as the embedded `movements_arrow`
//! (`Ledger::movements_batches`).

use crate::error::ApiError;
use crate::routes::accept::Accept;
use crate::routes::{BODY_LIMIT_BYTES, MAX_BATCH};
use arrow_array::{ArrayRef, RecordBatch, StringArray};
use arrow_schema::{DataType, Field, Schema};
use axum::http::{HeaderMap, HeaderValue, header};
use axum::response::{IntoResponse, Response};
use std::sync::Arc;

/// The media type of an Arrow IPC stream.
pub const ARROW_STREAM: &str = "application/vnd.apache.arrow.stream";

/// What an import body is, by its `Content-Type`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ImportFormat {
    Json,
    Ndjson,
    ArrowStream,
    Csv,
}

/// The media types read as JSON: JSON's own, and the two that tools send
/// JSON under when not told otherwise (`curl -d` says
/// `application/x-www-form-urlencoded`; some HTTP libraries `text/plain`).
/// No header at all is JSON too.
fn is_json_media(media: &str) -> bool {
    matches!(
        media,
        "" | "application/json" | "text/json" | "text/plain" | "application/x-www-form-urlencoded"
    ) || (media.starts_with("application/") && media.ends_with("+json"))
}

impl ImportFormat {
    /// The format `headers` declare. A media type that is none of the
    /// four is refused (415), and so is a `charset` other than UTF-8 (or
    /// its subset US-ASCII) and any other parameter but CSV's
    /// `header=present`: the body would be read otherwise than its sender
    /// meant.
    pub fn of(headers: &HeaderMap) -> Result<ImportFormat, ApiError> {
        let (format, media) = declared(headers)?;
        format.ok_or_else(|| {
            refused_type(format!(
                "Content-Type `{media}` is not read here; send application/json, \
                 application/x-ndjson, text/csv or {ARROW_STREAM}"
            ))
        })
    }

    /// Refuses a body `headers` declare in a format other than JSON, for
    /// the endpoints that read JSON only (415): records in the other
    /// formats go to a data source's import, which the message names.
    pub fn json_only(headers: &HeaderMap) -> Result<(), ApiError> {
        match declared(headers)? {
            (Some(ImportFormat::Json), _) => Ok(()),
            (Some(_), media) => Err(refused_type(format!(
                "Content-Type `{media}`: this endpoint reads JSON (application/json); \
                 records as NDJSON, CSV or an Arrow stream are read by \
                 POST /v1/data/customers, /v1/data/plans, /v1/data/invoices and \
                 /v1/data-sources/{{id}}/{{collection}}"
            ))),
            (None, media) => Err(refused_type(format!(
                "Content-Type `{media}`: this endpoint reads JSON (application/json)"
            ))),
        }
    }
}

/// A 415 about the body's `Content-Type`.
fn refused_type(message: String) -> ApiError {
    ApiError::UnsupportedMediaType {
        header: "Content-Type",
        message,
    }
}

/// The format `headers` declare (none for a media type the service reads
/// nowhere) and the media type, lower-cased; see [`ImportFormat::of`] for
/// the parameters refused.
fn declared(headers: &HeaderMap) -> Result<(Option<ImportFormat>, String), ApiError> {
    let content_type = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default();
    let mut parts = content_type.split(';');
    let media = parts.next().unwrap_or_default().trim().to_ascii_lowercase();
    let format = match media.as_str() {
        "application/x-ndjson" | "application/jsonl" | "application/ndjson" => {
            Some(ImportFormat::Ndjson)
        }
        ARROW_STREAM => Some(ImportFormat::ArrowStream),
        "text/csv" => Some(ImportFormat::Csv),
        json if is_json_media(json) => Some(ImportFormat::Json),
        _ => None,
    };
    for parameter in parts.filter(|p| !p.trim().is_empty()) {
        let (name, value) = parameter.split_once('=').unwrap_or((parameter, ""));
        let name = name.trim().to_ascii_lowercase();
        let value = value.trim().trim_matches('"').to_ascii_lowercase();
        let refusal = match name.as_str() {
            "charset" if matches!(value.as_str(), "utf-8" | "utf8" | "us-ascii") => continue,
            "charset" => format!("the body's charset {value} is not read; send UTF-8"),
            "header" if format == Some(ImportFormat::Csv) && value == "present" => continue,
            "header" if format == Some(ImportFormat::Csv) => format!(
                "a CSV body with header={value} is not read; send a header row naming \
                 the columns"
            ),
            _ => format!("the {media} parameter {name} is not read"),
        };
        return Err(refused_type(refusal));
    }
    Ok((format, media))
}

/// A text body without the UTF-8 byte order mark some tools (Windows ones,
/// spreadsheets) write at its start: JSON has no place for one, and a CSV
/// header would name its first column `\u{feff}id`.
pub fn without_bom(body: &[u8]) -> &[u8] {
    body.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(body)
}

/// NDJSON as the text of a JSON array of its records, line for line (a
/// blank line stays a blank line), so a syntax error names the line of the
/// NDJSON body. Each record's comma (the last one's closing bracket) ends
/// its own line: a record cut short fails there, where a comma opening the
/// next line would have moved the error to the line after it.
pub fn ndjson_as_array(body: &[u8]) -> Result<Vec<u8>, ApiError> {
    let text = std::str::from_utf8(without_bom(body))
        .map_err(|e| ApiError::bad_request(format!("the body is not UTF-8: {e}")))?;
    let mut array = Vec::with_capacity(body.len() + 2);
    array.push(b'[');
    let mut last_comma = None;
    for line in text.lines() {
        if !line.trim().is_empty() {
            array.extend_from_slice(line.as_bytes());
            last_comma = Some(array.len());
            array.push(b',');
        }
        array.push(b'\n');
    }
    let Some(last_comma) = last_comma else {
        return Err(ApiError::bad_request(
            "the body holds no records; send one JSON record per line",
        ));
    };
    // The array closes on the last record's line, which then fails there
    // too when it is cut short.
    array.truncate(last_comma);
    array.push(b']');
    Ok(array)
}

/// The record batches of an Arrow IPC stream body, each row tagged with
/// `data_source` when one is given (a column of its own, replacing one the
/// stream has).
pub fn arrow_batches(body: &[u8], data_source: Option<&str>) -> Result<Vec<RecordBatch>, ApiError> {
    let batches = submetrics::columnar::batches_from_ipc(body, BODY_LIMIT_BYTES as u64)
        .map_err(|e| ApiError::bad_request(format!("the body {}", error_reason(&e))))?;
    let rows: usize = batches.iter().map(RecordBatch::num_rows).sum();
    if rows > MAX_BATCH {
        return Err(ApiError::TooLarge(format!(
            "{rows} records in one write; send at most {MAX_BATCH}"
        )));
    }
    let Some(source) = data_source else {
        return Ok(batches);
    };
    batches
        .iter()
        .map(|batch| with_data_source(batch, source))
        .collect()
}

/// The reason of a core error about the body, without its parameter name.
fn error_reason(error: &submetrics::Error) -> String {
    match error {
        submetrics::Error::InvalidQuery { reason, .. } => reason.clone(),
        other => other.to_string(),
    }
}

/// `batch` with a `data_source` column of `source` in every row.
fn with_data_source(batch: &RecordBatch, source: &str) -> Result<RecordBatch, ApiError> {
    let schema = batch.schema();
    let mut fields: Vec<Arc<Field>> = Vec::with_capacity(batch.num_columns() + 1);
    let mut columns: Vec<ArrayRef> = Vec::with_capacity(batch.num_columns() + 1);
    for (field, column) in schema.fields().iter().zip(batch.columns()) {
        if field.name() != "data_source" && field.name() != "data_source_id" {
            fields.push(field.clone());
            columns.push(column.clone());
        }
    }
    fields.push(Arc::new(Field::new("data_source", DataType::Utf8, false)));
    columns.push(Arc::new(StringArray::from(vec![source; batch.num_rows()])));
    RecordBatch::try_new(Arc::new(Schema::new(fields)), columns)
        .map_err(|e| ApiError::bad_request(format!("the body's columns cannot be read: {e}")))
}

/// What a report or a listing is answered as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AnswerFormat {
    Json,
    Csv,
    /// An Arrow IPC stream of the answer's record batches.
    Arrow,
}

impl AnswerFormat {
    /// The value of `format` that asks for it.
    fn name(self) -> &'static str {
        match self {
            AnswerFormat::Json => "json",
            AnswerFormat::Csv => "csv",
            AnswerFormat::Arrow => "arrow",
        }
    }

    /// The media type of answers in it.
    fn media_type(self) -> &'static str {
        match self {
            AnswerFormat::Json => "application/json",
            AnswerFormat::Csv => "text/csv",
            AnswerFormat::Arrow => ARROW_STREAM,
        }
    }
}

/// The format an answer is asked for, among those `offered` (JSON first):
/// `format=<name>` (taken out of the parameters; a name not offered is an
/// error naming the ones that are), else the one the `Accept` header
/// prefers (see `accept`; a header that accepts none of them is a 406
/// naming them), else JSON.
pub fn answer_format(
    headers: &HeaderMap,
    params: &mut crate::routes::Params,
    offered: &[AnswerFormat],
) -> Result<AnswerFormat, ApiError> {
    let names = || {
        let names: Vec<&str> = offered.iter().map(|offer| offer.name()).collect();
        names.join(", ")
    };
    if let Some(format) = params.remove("format") {
        return offered
            .iter()
            .copied()
            .find(|offer| offer.name() == format)
            .ok_or_else(|| {
                ApiError::bad_field(
                    "format",
                    format!("parameter `format`: `{format}` is not one of {}", names()),
                )
            });
    }
    let Some(accept) = Accept::of(headers)? else {
        return Ok(AnswerFormat::Json);
    };
    let media: Vec<(AnswerFormat, &str)> = offered
        .iter()
        .map(|&offer| (offer, offer.media_type()))
        .collect();
    accept.preferred(&media)?.ok_or_else(|| {
        let types: Vec<&str> = offered.iter().map(|offer| offer.media_type()).collect();
        ApiError::NotAcceptable(format!(
            "header `Accept` accepts none of the types this answers in: {} \
             (or ask with `format=`: {})",
            types.join(", "),
            names()
        ))
    })
}

/// CSV text as the answer (see `ReportTable::to_csv` for what it holds).
pub fn csv_response(text: Vec<u8>) -> Response {
    let mut response = text.into_response();
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/csv; charset=utf-8"),
    );
    response
}

/// An Arrow IPC stream as the answer.
pub fn arrow_response(stream: Vec<u8>) -> Response {
    let mut response = stream.into_response();
    response
        .headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static(ARROW_STREAM));
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    fn array(body: &str) -> String {
        String::from_utf8(ndjson_as_array(body.as_bytes()).unwrap()).unwrap()
    }

    #[test]
    fn ndjson_lines_become_an_array_line_for_line() {
        assert_eq!(
            array("{\"a\":1}\n\n{\"b\":2}\r\n\n"),
            "[{\"a\":1},\n\n{\"b\":2}]"
        );
        assert_eq!(array("{\"a\":1}"), "[{\"a\":1}]");
        let error = |body: &str| {
            serde_json::from_str::<serde_json::Value>(&array(body))
                .unwrap_err()
                .to_string()
        };
        // A record cut short fails on its own line, not on the next one.
        assert_eq!(
            error("{\"a\":1}\n\n{\"b\":\n{\"c\":3}\n"),
            "expected value at line 3 column 6"
        );
        assert_eq!(
            error("{\"a\":1}\n{\"b\": \n"),
            "expected value at line 2 column 7"
        );
        assert!(ndjson_as_array(b"\n \n").is_err());
    }
}
