//! Import endpoints `/v1/data-sources/{id}/{collection}`: one record, an
//! array, or a batch `{<collection>: [...]}`; or NDJSON, an Arrow IPC
//! stream or CSV (the columns `submetrics local` reads) by `Content-Type`
//! (see `formats`). Every record is tagged with the data source. An unknown
//! data source is a 404.

use super::Routes;
use super::data::{InvoiceRecords, results_response, upsert, upsert_batches, with_data_source};
use super::formats::{ImportFormat, arrow_batches, ndjson_as_array, without_bom};
use super::{BodyBytes, parse_body, records_of, write_records};
use crate::auth::Caller;
use crate::error::ApiError;
use crate::extract::Path;
use crate::openapi::Doc;
use crate::state::AppState;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::HeaderMap;
use axum::response::Response;
use serde_json::Value;
use std::sync::Arc;
use submetrics::RecordKind;

pub fn routes() -> Routes {
    Routes::new().post(
        "/data-sources/{source}/{collection}",
        import,
        Doc::key("Import customers, plans, plan_groups or invoices into a data source (JSON, NDJSON, CSV or an Arrow IPC stream, by Content-Type)"),
    )
}

/// The records of an import, read before the ledger is locked.
enum ImportRecords {
    /// Invoices, read as [`InvoiceRecords`] do for `/data/invoices`.
    Invoices(InvoiceRecords),
    /// Records of another kind, parsed as values.
    Values(RecordKind, Vec<Value>),
    /// Rows of an Arrow IPC stream body, tagged with the data source.
    Batches(RecordKind, Vec<arrow_array::RecordBatch>),
}

async fn import(
    State(state): State<Arc<AppState>>,
    caller: Caller,
    Path((source, collection)): Path<(String, String)>,
    headers: HeaderMap,
    BodyBytes(body): BodyBytes,
) -> Result<Response, ApiError> {
    let kind = RecordKind::parse(&collection).filter(|kind| {
        matches!(
            kind,
            RecordKind::Customers
                | RecordKind::Plans
                | RecordKind::Invoices
                | RecordKind::PlanGroups
        )
    });
    let body = match ImportFormat::of(&headers)? {
        ImportFormat::Json => body,
        ImportFormat::Ndjson => Bytes::from(ndjson_as_array(&body)?),
        ImportFormat::ArrowStream => {
            let Some(kind) = kind else {
                return Err(unknown_collection(&collection));
            };
            let batches = arrow_batches(&body, &source)?;
            return import_records(state, caller, source, ImportRecords::Batches(kind, batches))
                .await;
        }
        ImportFormat::Csv => {
            let Some(kind) = kind else {
                return Err(unknown_collection(&collection));
            };
            let text = std::str::from_utf8(without_bom(&body))
                .map_err(|e| ApiError::bad_request(format!("the CSV body is not UTF-8: {e}")))?;
            let mut records = submetrics::csv::records(text)?;
            if records.len() > super::MAX_BATCH {
                return Err(ApiError::TooLarge(format!(
                    "{} records in one request; the limit is {}",
                    records.len(),
                    super::MAX_BATCH
                )));
            }
            with_data_source(&mut records, &source);
            let records = match kind {
                RecordKind::Invoices => ImportRecords::Invoices(InvoiceRecords::Values(records)),
                kind => ImportRecords::Values(kind, records),
            };
            return import_records(state, caller, source, records).await;
        }
    };
    let records = if kind == Some(RecordKind::Invoices) {
        ImportRecords::Invoices(InvoiceRecords::read_body(body, Some(source.clone())).await?)
    } else {
        // A body that is not JSON is refused before the collection is looked at.
        let body = parse_body(&body)?;
        let Some(kind) = kind else {
            return Err(unknown_collection(&collection));
        };
        let mut records = records_of(body, &collection.replace('-', "_"))?;
        with_data_source(&mut records, &source);
        ImportRecords::Values(kind, records)
    };
    import_records(state, caller, source, records).await
}

fn unknown_collection(collection: &str) -> ApiError {
    ApiError::NotFound(format!(
        "no import endpoint for `{collection}`; use customers, plans, plan_groups or invoices"
    ))
}

/// Writes read records into the data source `source`, which must exist.
async fn import_records(
    state: Arc<AppState>,
    caller: Caller,
    source: String,
    records: ImportRecords,
) -> Result<Response, ApiError> {
    let account = state.account(caller.account_id)?;
    let results = write_records(state, account, move |state, account, ledger| {
        if ledger.data_source(&source).is_none() {
            return Err(ApiError::NotFound(format!(
                "data source `{source}` does not exist; create it with POST /data/data-sources"
            )));
        }
        let report = match records {
            ImportRecords::Invoices(invoices) => invoices.upsert(state, account, ledger)?,
            ImportRecords::Values(kind, records) => upsert(state, account, ledger, kind, &records)?,
            ImportRecords::Batches(kind, batches) => {
                upsert_batches(state, account, ledger, kind, &batches)?
            }
        };
        Ok(report.results)
    })
    .await?;
    results_response(&results)
}
