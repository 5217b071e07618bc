//! Import endpoints `/v1/data-sources/{id}/{collection}`: one record, an
//! array, or a batch `{<collection>: [...]}`; or NDJSON, an Arrow IPC
//! stream or CSV (the columns `submetrics local` reads) by `Content-Type`
//! (see `formats`), read as the upserts read them ([`BodyRecords`]). Every
//! record is tagged with the data source. An unknown data source is a 404.

use super::Routes;
use super::data::{BodyRecords, WRITE_QUERY, WriteAnswer, results_response};
use super::formats::{ImportFormat, ndjson_as_array};
use super::{BodyBytes, Params, parse_body, write_records};
use crate::auth::Caller;
use crate::error::ApiError;
use crate::extract::{Path, Query};
use crate::openapi::Doc;
use crate::state::AppState;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use std::sync::Arc;
use submetrics::RecordKind;

pub fn routes() -> Routes {
    Routes::new().post(
        "/data-sources/{source}/{collection}",
        import,
        Doc::key("Import customers, plans, plan_groups or invoices into a data source (JSON, NDJSON, CSV or an Arrow IPC stream, by Content-Type)").query(WRITE_QUERY),
    )
}

async fn import(
    State(state): State<Arc<AppState>>,
    caller: Caller,
    Path((source, collection)): Path<(String, String)>,
    headers: HeaderMap,
    Query(params): Query<Params>,
    BodyBytes(body): BodyBytes,
) -> Result<Response, ApiError> {
    let answer = WriteAnswer::of(&headers, params)?;
    let kind = RecordKind::parse(&collection).filter(|kind| {
        matches!(
            kind,
            RecordKind::Customers
                | RecordKind::Plans
                | RecordKind::Invoices
                | RecordKind::PlanGroups
        )
    });
    let format = ImportFormat::of(&headers)?;
    let Some(kind) = kind else {
        // A JSON body that does not parse is refused before the collection
        // is looked at.
        match format {
            ImportFormat::Json => drop(parse_body(&body)?),
            ImportFormat::Ndjson => drop(parse_body(&ndjson_as_array(&body)?)?),
            ImportFormat::ArrowStream | ImportFormat::Csv => {}
        }
        return Err(unknown_collection(&collection));
    };
    let records = BodyRecords::read(kind, format, body, Some(source.clone())).await?;
    import_records(state, caller, source, records, answer).await
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
    records: BodyRecords,
    answer: WriteAnswer,
) -> Result<Response, ApiError> {
    let account = state.account(caller.account_id)?;
    let report = write_records(state, account, move |state, account, ledger| {
        if ledger.data_source(&source).is_none() {
            return Err(ApiError::NotFound(format!(
                "data source `{source}` does not exist; create it with POST /data/data-sources"
            )));
        }
        records.upsert(state, account, ledger)
    })
    .await?;
    answer.respond(StatusCode::OK, &report, |report| {
        results_response(&report.results)
    })
}
