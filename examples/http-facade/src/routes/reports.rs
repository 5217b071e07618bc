//! Every report by name: `GET /reports/{name}` runs the core's one entry
//! point with the query string, so a new report needs no route. `as_of`
//! (ISO 8601; default now) fixes the instant computed at; every other
//! parameter is the report's, and one the report does not read is refused
//! by the core (400 `invalid_query`). `format=csv` or `Accept: text/csv`
//! answers CSV, `format=arrow` or `Accept:
//! application/vnd.apache.arrow.stream` an Arrow IPC stream (see
//! `formats`), as do movements. `GET /reports` lists every report with its
//! parameters, from the core's registry. `GET /movements` lists the
//! movements themselves.

use super::Routes;
use super::formats::{self, AnswerFormat};
use super::{Listed, Params, as_of, json_response, json_text_response, read_ledger};
use crate::auth::Caller;
use crate::error::ApiError;
use crate::extract::{Path, Query};
use crate::openapi::Doc;
use crate::state::AppState;
use axum::Json;
use axum::extract::State;
use axum::http::HeaderMap;
use axum::response::Response;
use std::sync::Arc;
use submetrics::MovementFilter;

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
                .query(&["as_of", "format"])
                .free_query(),
        )
        .get(
            "/movements",
            movements,
            Doc::key("The MRR movements at as_of, oldest first, as the ledger lists them")
                .query(&["as_of", "format/movements"])
                .view_params(submetrics::reports::movement_params),
        )
}

/// `{result: [movement]}`: the ledger's movements at `as_of`, filtered as
/// [`MovementFilter::from_params`] reads the query (the one reading every
/// interface shares); for `format=arrow` or `Accept:
/// application/vnd.apache.arrow.stream`, the same rows as an Arrow IPC
/// stream of [`submetrics::columnar::movement_schema`].
async fn movements(
    State(state): State<Arc<AppState>>,
    caller: Caller,
    headers: HeaderMap,
    Query(params): Query<Params>,
) -> Result<Response, ApiError> {
    let mut params = params;
    let offered = [AnswerFormat::Json, AnswerFormat::Arrow];
    let format = formats::answer_format(&headers, &mut params, &offered)?;
    read_ledger(state.account(caller.account_id)?, move |ledger| {
        let at = as_of(&params, ledger)?;
        params.remove("as_of");
        let filter = MovementFilter::from_params(&params, ledger.settings())?;
        if format == AnswerFormat::Arrow {
            let batches = ledger.movements_batches(at, &filter)?;
            let schema = submetrics::columnar::movement_schema();
            let stream = submetrics::columnar::ipc_of_batches(&schema, &batches)?;
            return Ok(formats::arrow_response(stream));
        }
        json_response(&Listed {
            result: ledger.movements(at, &filter)?,
        })
    })
    .await
}

/// A report as JSON (its text written from the typed rows), as CSV or as
/// an Arrow IPC stream of its record batch (see `formats`), its body
/// written on the blocking thread that computed it.
async fn report(
    State(state): State<Arc<AppState>>,
    caller: Caller,
    Path(name): Path<String>,
    headers: HeaderMap,
    Query(params): Query<Params>,
) -> Result<Response, ApiError> {
    let mut params = params;
    let offered = [AnswerFormat::Json, AnswerFormat::Csv, AnswerFormat::Arrow];
    let format = formats::answer_format(&headers, &mut params, &offered)?;
    read_ledger(state.account(caller.account_id)?, move |ledger| {
        let at = as_of(&params, ledger)?;
        let mut params = params;
        params.remove("as_of");
        Ok(match format {
            AnswerFormat::Json => json_text_response(ledger.report_json(&name, &params, at)?),
            AnswerFormat::Csv => formats::csv_response(ledger.report_csv(&name, &params, at)?),
            AnswerFormat::Arrow => {
                let batch = ledger.report_batch(&name, &params, at)?;
                formats::arrow_response(submetrics::columnar::ipc_of(&batch)?)
            }
        })
    })
    .await
}
