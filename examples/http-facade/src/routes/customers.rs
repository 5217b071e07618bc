//! The analytics customer views and resync.

use super::Routes;
use super::{Params, as_of, read_ledger};
use crate::auth::Caller;
use crate::error::ApiError;
use crate::extract::{Path, Query};
use crate::openapi::Doc;
use crate::state::AppState;
use axum::Json;
use axum::extract::State;
use serde_json::{Value, json};
use std::sync::Arc;

pub fn routes() -> Routes {
    Routes::new()
        .get(
            "/customers",
            list,
            Doc::key("Analytics customer list")
                .query(&["as_of"])
                .free_query(),
        )
        .get(
            "/customers/{id}",
            detail,
            Doc::key("Analytics customer detail")
                .query(&["as_of"])
                .free_query(),
        )
        .post(
            "/customers/{id}/resync",
            resync,
            Doc::admin("Recalculate a customer"),
        )
}

async fn list(
    State(state): State<Arc<AppState>>,
    caller: Caller,
    Query(params): Query<Params>,
) -> Result<Json<Value>, ApiError> {
    read_ledger(state.account(caller.account_id)?, move |ledger| {
        let at = as_of(&params, ledger)?;
        Ok(Json(ledger.analytics_customers(&params, at)?))
    })
    .await
}

async fn detail(
    State(state): State<Arc<AppState>>,
    caller: Caller,
    Path(id): Path<String>,
    Query(params): Query<Params>,
) -> Result<Json<Value>, ApiError> {
    read_ledger(state.account(caller.account_id)?, move |ledger| {
        let at = as_of(&params, ledger)?;
        Ok(Json(ledger.analytics_customer(&id, &params, at)?))
    })
    .await
}

/// There is no billing source to re-import from: every write already
/// recomputes its customers, so resync recomputes the customer now and
/// reports what it found.
async fn resync(
    State(state): State<Arc<AppState>>,
    caller: Caller,
    Path(id): Path<String>,
) -> Result<Json<Value>, ApiError> {
    caller.require_admin()?;
    read_ledger(state.account(caller.account_id)?, move |ledger| {
        if ledger.customer(&id).is_none() {
            return Err(ApiError::NotFound(format!(
                "customer `{id}` does not exist"
            )));
        }
        let profile = ledger.customer_profile(&id, chrono::Utc::now())?;
        let invoices = ledger.customer_invoices(&id).len();
        let mrr: Vec<String> = profile
            .mrr
            .iter()
            .map(|(c, m)| format!("{m} {}", c.as_str()))
            .collect();
        Ok(Json(json!({
            "message": format!(
                "customer {id} recalculated from {invoices} invoice(s): status {}, MRR {}",
                profile.status.as_str(),
                if mrr.is_empty() { "0".to_string() } else { mrr.join(" + ") }
            )
        })))
    })
    .await
}
