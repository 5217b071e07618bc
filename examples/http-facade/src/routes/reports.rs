//! Every report by name: `GET /reports/{name}` runs the core's one entry
//! point with the query string, so a new report needs no route. `as_of`
//! (ISO 8601; default now) fixes the instant computed at; every other
//! parameter is the report's, and one the report does not read is refused
//! by the core (400 `invalid_query`). `GET /reports` lists every report with
//! its parameters, from the core's registry.

use super::Routes;
use super::{Params, as_of, read_ledger};
use crate::auth::Caller;
use crate::error::ApiError;
use crate::extract::{Path, Query};
use crate::openapi::Doc;
use crate::state::AppState;
use axum::Json;
use axum::extract::State;
use serde_json::Value;
use std::sync::Arc;

pub fn routes() -> Routes {
    Routes::new()
        .get(
            "/reports",
            || async { Json(serde_json::json!({"reports": submetrics::reports::catalogue()})) },
            Doc::public("Every report with the parameters it takes"),
        )
        .get(
            "/reports/{name}",
            report,
            Doc::key("Any report by name, with its query parameters and as_of")
                .query(&["as_of"])
                .free_query(),
        )
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
