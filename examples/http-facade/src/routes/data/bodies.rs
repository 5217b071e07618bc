//! The records of a write body in any format the record writes read (see
//! `formats`): JSON, NDJSON, CSV or an Arrow IPC stream. The upserts of
//! `/data/customers`, `/data/plans` and `/data/invoices` and the imports of
//! `/data-sources/{id}/{collection}` read them alike; an import tags every
//! record with its data source.

use super::{InvoiceRecords, upsert, upsert_batches, with_data_source};
use crate::error::ApiError;
use crate::routes::formats::{ImportFormat, arrow_batches, ndjson_as_array, without_bom};
use crate::routes::{MAX_BATCH, parse_body, records_of};
use crate::state::{Account, AppState};
use crate::store::kind_name;
use arrow_array::RecordBatch;
use axum::body::Bytes;
use serde_json::Value;
use submetrics::{Ledger, RecordKind, WriteReport};

/// Records read from a body before the ledger is locked.
pub enum BodyRecords {
    /// Invoices, read as [`InvoiceRecords`] do.
    Invoices(InvoiceRecords),
    /// Records of another kind, parsed as values.
    Values(RecordKind, Vec<Value>),
    /// Rows of an Arrow IPC stream body.
    Batches(RecordKind, Vec<RecordBatch>),
}

impl BodyRecords {
    /// Reads a body of `kind` records in `format`, each tagged with
    /// `data_source` when one is given. JSON (and NDJSON, read as the JSON
    /// array of its lines) takes one record, an array or a batch object
    /// `{"<collection>": [...]}`.
    pub async fn read(
        kind: RecordKind,
        format: ImportFormat,
        body: Bytes,
        data_source: Option<String>,
    ) -> Result<BodyRecords, ApiError> {
        let body = match format {
            ImportFormat::Json => body,
            ImportFormat::Ndjson => Bytes::from(ndjson_as_array(&body)?),
            ImportFormat::ArrowStream => {
                let batches = arrow_batches(&body, data_source.as_deref())?;
                return Ok(BodyRecords::Batches(kind, batches));
            }
            ImportFormat::Csv => {
                let text = std::str::from_utf8(without_bom(&body)).map_err(|e| {
                    ApiError::bad_request(format!("the CSV body is not UTF-8: {e}"))
                })?;
                let mut records = submetrics::csv::records(text)?;
                if records.len() > MAX_BATCH {
                    return Err(ApiError::TooLarge(format!(
                        "{} records in one request; the limit is {MAX_BATCH}",
                        records.len()
                    )));
                }
                if let Some(source) = &data_source {
                    with_data_source(&mut records, source);
                }
                return Ok(match kind {
                    RecordKind::Invoices => BodyRecords::Invoices(InvoiceRecords::Values(records)),
                    kind => BodyRecords::Values(kind, records),
                });
            }
        };
        if kind == RecordKind::Invoices {
            let invoices = InvoiceRecords::read_body(body, data_source).await?;
            return Ok(BodyRecords::Invoices(invoices));
        }
        let mut records = records_of(parse_body(&body)?, kind_name(kind))?;
        if let Some(source) = &data_source {
            with_data_source(&mut records, source);
        }
        Ok(BodyRecords::Values(kind, records))
    }

    /// Upserts the records into the ledger and persists the accepted ones
    /// in one transaction.
    pub fn upsert(
        self,
        state: &AppState,
        account: &Account,
        ledger: &mut Ledger,
    ) -> Result<WriteReport, ApiError> {
        match self {
            BodyRecords::Invoices(invoices) => invoices.upsert(state, account, ledger),
            BodyRecords::Values(kind, records) => upsert(state, account, ledger, kind, &records),
            BodyRecords::Batches(kind, batches) => {
                upsert_batches(state, account, ledger, kind, &batches)
            }
        }
    }
}
