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
                .view_params(submetrics::reports::customer_list_params),
        )
        .get(
            "/customers/{id}",
            detail,
            Doc::key("Analytics customer detail")
                .query(&["as_of"])
                .view_params(submetrics::reports::customer_detail_params),
        )
        .post(
            "/customers/{id}/resync",
            resync,
            Doc::admin("Re-import a customer from Stripe when connected, else recalculate it")
                .upstream(),
        )
}

async fn list(
    State(state): State<Arc<AppState>>,
    caller: Caller,
    Query(mut params): Query<Params>,
) -> Result<Json<Value>, ApiError> {
    read_ledger(state.account(caller.account_id)?, move |ledger| {
        let at = as_of(&params, ledger)?;
        params.remove("as_of");
        Ok(Json(ledger.analytics_customers(&params, at)?))
    })
    .await
}

async fn detail(
    State(state): State<Arc<AppState>>,
    caller: Caller,
    Path(id): Path<String>,
    Query(mut params): Query<Params>,
) -> Result<Json<Value>, ApiError> {
    read_ledger(state.account(caller.account_id)?, move |ledger| {
        let at = as_of(&params, ledger)?;
        params.remove("as_of");
        Ok(Json(ledger.analytics_customer(&id, &params, at)?))
    })
    .await
}

/// With a Stripe connection, re-imports the customer from Stripe. Without
/// one there is no billing source to re-import from: every write already
/// recomputes its customers, so resync recomputes the customer now and
/// reports what it found.
async fn resync(
    State(state): State<Arc<AppState>>,
    caller: Caller,
    Path(id): Path<String>,
) -> Result<Json<Value>, ApiError> {
    caller.require_admin()?;
    let (account, customer) = (caller.account_id, id.clone());
    let syncing = Arc::clone(&state);
    let resynced = tokio::task::spawn_blocking(move || {
        crate::stripe::resync_customer(&syncing, account, &customer)
    })
    .await
    .map_err(|_| ApiError::internal("the request could not be completed"))??;
    if let Some(report) = resynced {
        return Ok(Json(report));
    }
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
