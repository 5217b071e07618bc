//! Import endpoints `/v1/data-sources/{id}/{collection}`: one record, an
//! array, or a batch `{<collection>: [...]}`, or a `text/csv` body with the
//! columns `submetrics local` reads (the core's `submetrics::csv`); every
//! record is tagged with the data source. An unknown data source is a 404.

use super::Routes;
use super::data::{InvoiceRecords, upsert, with_data_source};
use super::{BodyBytes, parse_body, records_of, write_records};
use crate::auth::Caller;
use crate::error::ApiError;
use crate::extract::Path;
use crate::openapi::Doc;
use crate::state::AppState;
use axum::Json;
use axum::extract::State;
use axum::http::HeaderMap;
use serde_json::{Value, json};
use std::sync::Arc;
use submetrics::RecordKind;

pub fn routes() -> Routes {
    Routes::new().post(
        "/data-sources/{source}/{collection}",
        import,
        Doc::key("Import customers, plans, plan_groups or invoices into a data source (JSON, or text/csv)"),
    )
}

/// The records of an import, read before the ledger is locked.
enum ImportRecords {
    /// Invoices, read as [`InvoiceRecords`] do for `/data/invoices`.
    Invoices(InvoiceRecords),
    /// Records of another kind, parsed as values.
    Values(RecordKind, Vec<Value>),
}

async fn import(
    State(state): State<Arc<AppState>>,
    caller: Caller,
    Path((source, collection)): Path<(String, String)>,
    headers: HeaderMap,
    BodyBytes(body): BodyBytes,
) -> Result<Json<Value>, ApiError> {
    let kind = RecordKind::parse(&collection).filter(|kind| {
        matches!(
            kind,
            RecordKind::Customers
                | RecordKind::Plans
                | RecordKind::Invoices
                | RecordKind::PlanGroups
        )
    });
    let csv = headers
        .get(axum::http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.trim().to_ascii_lowercase().starts_with("text/csv"));
    let records = if csv {
        let Some(kind) = kind else {
            return Err(ApiError::NotFound(format!(
                "no import endpoint for `{collection}`; use customers, plans, plan_groups or invoices"
            )));
        };
        let text = std::str::from_utf8(&body)
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
        match kind {
            RecordKind::Invoices => ImportRecords::Invoices(InvoiceRecords::Values(records)),
            kind => ImportRecords::Values(kind, records),
        }
    } else if kind == Some(RecordKind::Invoices) {
        ImportRecords::Invoices(InvoiceRecords::read_body(body, Some(source.clone())).await?)
    } else {
        // A body that is not JSON is refused before the collection is looked at.
        let body = parse_body(&body)?;
        let Some(kind) = kind else {
            return Err(ApiError::NotFound(format!(
                "no import endpoint for `{collection}`; use customers, plans, plan_groups or invoices"
            )));
        };
        let mut records = records_of(body, &collection.replace('-', "_"))?;
        with_data_source(&mut records, &source);
        ImportRecords::Values(kind, records)
    };
    let account = state.account(caller.account_id)?;
    write_records(state, account, move |state, account, ledger| {
        if ledger.data_source(&source).is_none() {
            return Err(ApiError::NotFound(format!(
                "data source `{source}` does not exist; create it with POST /data/data-sources"
            )));
        }
        let report = match records {
            ImportRecords::Invoices(invoices) => invoices.upsert(state, account, ledger)?,
            ImportRecords::Values(kind, records) => upsert(state, account, ledger, kind, &records)?,
        };
        Ok(Json(json!({ "result": report.results })))
    })
    .await
}
