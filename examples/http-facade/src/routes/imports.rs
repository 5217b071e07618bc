//! Import endpoints `/v1/data-sources/{id}/{collection}`: one record, an
//! array, or a batch `{<collection>: [...]}`; every record is tagged with the
//! data source. An unknown data source is a 404.

use super::Routes;
use super::data::upsert;
use super::{JsonBody, records_of, write_records};
use crate::auth::Caller;
use crate::error::ApiError;
use crate::extract::Path;
use crate::openapi::Doc;
use crate::state::AppState;
use axum::Json;
use axum::extract::State;
use serde_json::{Value, json};
use std::sync::Arc;
use submetrics::RecordKind;

pub fn routes() -> Routes {
    Routes::new().post(
        "/data-sources/{source}/{collection}",
        import,
        Doc::key("Import customers, plans, plan_groups or invoices into a data source"),
    )
}

async fn import(
    State(state): State<Arc<AppState>>,
    caller: Caller,
    Path((source, collection)): Path<(String, String)>,
    JsonBody(body): JsonBody,
) -> Result<Json<Value>, ApiError> {
    let kind = match RecordKind::parse(&collection) {
        Some(
            kind @ (RecordKind::Customers
            | RecordKind::Plans
            | RecordKind::Invoices
            | RecordKind::PlanGroups),
        ) => kind,
        _ => {
            return Err(ApiError::NotFound(format!(
                "no import endpoint for `{collection}`; use customers, plans, plan_groups or invoices"
            )));
        }
    };
    let key = collection.replace('-', "_");
    let mut records = records_of(body, &key)?;
    for record in &mut records {
        if let Some(map) = record.as_object_mut() {
            map.insert("data_source".to_string(), json!(source));
        }
    }
    let account = state.account(caller.account_id)?;
    write_records(state, account, move |state, account, ledger| {
        if ledger.data_source(&source).is_none() {
            return Err(ApiError::NotFound(format!(
                "data source `{source}` does not exist; create it with POST /data/data-sources"
            )));
        }
        let report = upsert(state, account, ledger, kind, &records)?;
        Ok(Json(json!({ "result": report.results })))
    })
    .await
}
