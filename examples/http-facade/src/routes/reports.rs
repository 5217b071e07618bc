//! Every report by name: `GET /reports/{name}` runs the core's one entry
//! point with the query string, so a new report needs no route. `as_of`
//! (ISO 8601; default now) fixes the instant computed at.

use super::{Params, as_of, read_ledger};
use crate::auth::Caller;
use crate::error::ApiError;
use crate::extract::{Path, Query};
use crate::state::AppState;
use axum::Json;
use axum::Router;
use axum::extract::State;
use axum::routing::get;
use serde_json::Value;
use std::sync::Arc;

pub fn routes() -> Router<Arc<AppState>> {
    Router::new().route("/reports/{name}", get(report))
}

async fn report(
    State(state): State<Arc<AppState>>,
    caller: Caller,
    Path(name): Path<String>,
    Query(params): Query<Params>,
) -> Result<Json<Value>, ApiError> {
    read_ledger(state.account(caller.account_id)?, move |ledger| {
        let at = as_of(&params, ledger)?;
        let mut params = params;
        params.remove("as_of");
        Ok(Json(ledger.report(&name, &params, at)?))
    })
    .await
}
