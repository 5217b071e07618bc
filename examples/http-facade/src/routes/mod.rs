//! The router: every path with and without the `/v1` prefix, JSON errors
//! for unknown paths and wrong methods, a body limit, and a last-resort
//! panic guard.

mod accept;
mod account;
mod content_encoding;
mod customers;
mod dashboard;
pub mod data;
mod formats;
pub use formats::ARROW_STREAM;
mod imports;
mod payment_platform;
mod reports;
mod session;
mod settings;
mod table;
mod webhooks;

pub use session::team_members;
pub use table::{Endpoint, Routes};

use crate::error::ApiError;
use crate::openapi::Doc;
use crate::state::{Account, AppState, QueuedWrite, Reply};
use crate::store::Store;
use axum::Router;
use axum::body::Bytes;
use axum::extract::{DefaultBodyLimit, FromRequest, Request};
use axum::http::{HeaderValue, header};
use axum::response::{IntoResponse, Response};
use serde::de::{Deserializer, Error as _, IgnoredAny, MapAccess, Visitor};
use serde_json::Value;
use serde_json::value::RawValue;
use std::collections::BTreeMap;
use std::sync::Arc;
use submetrics::Ledger;

/// Largest request body accepted.
pub const BODY_LIMIT_BYTES: usize = 64 * 1024 * 1024;
/// Most records accepted in one write.
pub const MAX_BATCH: usize = 100_000;
/// Default and largest `limit` of list endpoints.
pub const DEFAULT_LIMIT: usize = 100;
pub const MAX_LIMIT: usize = 10_000;

/// Every endpoint, documented: the router and the OpenAPI document are
/// both built from this table.
fn table() -> Routes {
    Routes::new()
        .get(
            "/",
            index,
            Doc::public(
                "Where to start: the API description, the health check and the report list",
            ),
        )
        .get(
            "/health",
            health,
            Doc::public("Liveness and storage check: 503 while the database cannot take writes"),
        )
        .get(
            "/openapi.json",
            || async { axum::Json(crate::openapi::document()) },
            Doc::public("This description"),
        )
        .get(
            "/docs",
            || async {
                axum::response::Html(crate::openapi::reference::render(
                    &crate::openapi::document(),
                ))
            },
            Doc::public("The API reference: this description as an HTML page"),
        )
        .merge(data::routes())
        .merge(imports::routes())
        .merge(customers::routes())
        .merge(account::routes())
        .merge(settings::routes())
        .merge(payment_platform::routes())
        .merge(reports::routes())
        .merge(webhooks::routes())
        .merge(session::routes())
}

/// The served endpoints (each also under `/v1`).
pub fn endpoints() -> Vec<Endpoint> {
    table().into_parts().1
}

pub fn router(state: Arc<AppState>) -> Router {
    let (api, _) = table().into_parts();
    Router::new()
        .merge(api.clone())
        .nest("/v1", api)
        // Nested, `/` is served as `/v1`; `/v1/` is the same start.
        .route("/v1/", table().served("/"))
        .merge(dashboard::router())
        .fallback(not_found)
        .method_not_allowed_fallback(method_not_allowed)
        .layer(DefaultBodyLimit::max(BODY_LIMIT_BYTES))
        // For the authorization each route runs first (see `Routes`).
        .layer(axum::Extension(Arc::clone(&state)))
        .layer(tower_http::catch_panic::CatchPanicLayer::custom(|_| {
            ApiError::internal("the request could not be completed").into_response()
        }))
        // Answers compressed for a client that accepts gzip or zstd, at
        // the fastest level, which costs little beside computing them.
        .layer(
            tower_http::compression::CompressionLayer::new()
                .quality(tower_http::CompressionLevel::Fastest),
        )
        .with_state(state)
}

/// `GET /`: where to start.
async fn index() -> axum::Json<Value> {
    axum::Json(serde_json::json!({
        "name": "submetrics",
        "openapi": "/openapi.json",
        "health": "/health",
        "reports": "/reports",
    }))
}

/// `200 {"status": "ok"}`, or `503 {"status": "degraded", "storage": why}`
/// while the database cannot take writes (read-only, full, failing I/O).
async fn health(
    axum::extract::State(state): axum::extract::State<Arc<AppState>>,
) -> axum::response::Response {
    use axum::http::StatusCode;
    match state.storage_problem() {
        None => axum::Json(serde_json::json!({"status": "ok"})).into_response(),
        Some(fault) => (
            StatusCode::SERVICE_UNAVAILABLE,
            axum::Json(serde_json::json!({"status": "degraded", "storage": fault.to_string()})),
        )
            .into_response(),
    }
}

async fn not_found(request: Request) -> ApiError {
    ApiError::NotFound(format!(
        "no endpoint {} {}",
        request.method(),
        request.uri().path()
    ))
}

async fn method_not_allowed(request: Request) -> ApiError {
    ApiError::MethodNotAllowed(format!(
        "{} is not allowed on {}",
        request.method(),
        request.uri().path()
    ))
}

/// A request body's bytes, with JSON errors for size and transport. A body
/// whose declared `Content-Length` is over the limit is refused at once,
/// without reading it; one without (chunked) is refused once what arrived
/// crosses the limit. A compressed body is decompressed (see
/// [`content_encoding`]). The whole body must arrive within the service's body
/// timeout ([`AppState::set_body_timeout`]), else the answer is a `408`.
pub struct BodyBytes(pub Bytes);

impl<S: Send + Sync> FromRequest<S> for BodyBytes {
    type Rejection = ApiError;

    async fn from_request(request: Request, state: &S) -> Result<BodyBytes, ApiError> {
        let too_large = || {
            ApiError::TooLarge(format!(
                "the body is over the limit of {BODY_LIMIT_BYTES} bytes"
            ))
        };
        let declared = request
            .headers()
            .get(axum::http::header::CONTENT_LENGTH)
            .and_then(|length| length.to_str().ok()?.trim().parse::<u64>().ok());
        if declared.is_some_and(|length| length > BODY_LIMIT_BYTES as u64) {
            return Err(too_large());
        }
        let coding = content_encoding::coding(request.headers())?;
        let deadline = request
            .extensions()
            .get::<Arc<AppState>>()
            .map_or(crate::state::DEFAULT_BODY_TIMEOUT, |state| {
                state.body_timeout()
            });
        let read = tokio::time::timeout(deadline, Bytes::from_request(request, state)).await;
        let Ok(read) = read else {
            return Err(ApiError::BodyTimeout(format!(
                "the body did not arrive within {} s",
                deadline.as_secs_f64()
            )));
        };
        let body = read.map_err(|rejection| {
            if rejection.status() == axum::http::StatusCode::PAYLOAD_TOO_LARGE {
                too_large()
            } else {
                ApiError::bad_request(format!("the body could not be read: {rejection}"))
            }
        })?;
        content_encoding::decoded(coding, body, BODY_LIMIT_BYTES)
            .await
            .map(BodyBytes)
    }
}

/// The bytes of a request body declared as JSON (or not declared; see
/// [`formats::ImportFormat::json_only`]), unparsed.
pub struct JsonBytes(pub Bytes);

impl<S: Send + Sync> FromRequest<S> for JsonBytes {
    type Rejection = ApiError;

    async fn from_request(request: Request, state: &S) -> Result<JsonBytes, ApiError> {
        formats::ImportFormat::json_only(request.headers())?;
        let BodyBytes(bytes) = BodyBytes::from_request(request, state).await?;
        Ok(JsonBytes(bytes))
    }
}

/// A JSON request body, with JSON errors for bad syntax and size.
pub struct JsonBody(pub Value);

impl<S: Send + Sync> FromRequest<S> for JsonBody {
    type Rejection = ApiError;

    async fn from_request(request: Request, state: &S) -> Result<JsonBody, ApiError> {
        let JsonBytes(bytes) = JsonBytes::from_request(request, state).await?;
        parse_body(&bytes).map(JsonBody)
    }
}

/// A request body as one JSON value; an empty body, bad syntax or an object
/// that gives a key twice (which of its values was meant is unknown; a
/// plain JSON reader would keep the last without a word) is a 400.
pub fn parse_body(bytes: &[u8]) -> Result<Value, ApiError> {
    let bytes = formats::without_bom(bytes);
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Err(ApiError::bad_request("the body is empty; send JSON"));
    }
    let parsed = match std::str::from_utf8(bytes) {
        Ok(text) => submetrics::model::Json::parse(text).map(|json| json.to_value()),
        // The JSON reader names where the text stops being UTF-8.
        Err(_) => serde_json::from_slice(bytes),
    };
    parsed.map_err(|e| ApiError::bad_request(format!("the body is not valid JSON: {e}")))
}

/// Query parameters as strings, each name once (the last value wins).
pub type Params = BTreeMap<String, String>;

/// One record or an array of records, or a batch object keyed by `key`,
/// which holds that one field: another beside it (records of another
/// collection, or record fields around the batch) is refused by name
/// rather than dropped.
pub fn records_of(body: Value, key: &str) -> Result<Vec<Value>, ApiError> {
    let records = match body {
        Value::Array(items) => items,
        Value::Object(mut map) if map.contains_key(key) => {
            if let Some(other) = map.keys().find(|name| name.as_str() != key) {
                return Err(ApiError::bad_field(
                    other,
                    format!(
                        "field `{other}`: a batch object holds `{key}` alone; \
                         send other records in their own request"
                    ),
                ));
            }
            match map.remove(key) {
                Some(Value::Array(items)) => items,
                _ => {
                    return Err(ApiError::bad_field(
                        key,
                        format!("field `{key}` must be an array of records"),
                    ));
                }
            }
        }
        Value::Object(map) => vec![Value::Object(map)],
        _ => {
            return Err(ApiError::bad_request(format!(
                "the body must be a record object, an array of records or {{\"{key}\": [...]}}"
            )));
        }
    };
    if records.len() > MAX_BATCH {
        return Err(ApiError::TooLarge(format!(
            "{} records in one request; the limit is {MAX_BATCH}",
            records.len()
        )));
    }
    Ok(records)
}

/// The records of a body that is a JSON array, or a batch object whose one
/// field is `key` and holds an array, each as its own JSON text, found
/// without parsing them into values. `None` for any other body (a batch
/// object with another field or `key` twice included), one that is not
/// JSON, one over [`MAX_BATCH`] records, or one with a record that may nest
/// deeper than a body parsed whole allows: [`parse_body`] and [`records_of`]
/// answer those as always. The split checks syntax only: a record may still
/// hold what parsing refuses (a number out of range, a lone surrogate
/// escape), so a caller whose reading of a record fails must check that it
/// is valid JSON on its own before answering for the body.
pub fn record_texts<'a>(body: &'a [u8], key: &str) -> Option<Vec<&'a str>> {
    let body = formats::without_bom(body);
    // serde_json refuses a document nested 128 deep, so a record may nest
    // 126 deep inside an array body and 125 inside a batch object's array,
    // one or two less than on its own.
    let (records, deepest): (Vec<&RawValue>, usize) = match body.trim_ascii_start().first() {
        Some(b'[') => (serde_json::from_slice(body).ok()?, 126),
        Some(b'{') => {
            let mut parser = serde_json::Deserializer::from_slice(body);
            let records = parser.deserialize_map(BatchObject(key)).ok()?;
            parser.end().ok()?;
            (records, 125)
        }
        _ => return None,
    };
    if records.len() > MAX_BATCH {
        return None;
    }
    // Counting brackets (also those inside strings) can only overestimate
    // the depth.
    let deep = |text: &str| text.bytes().filter(|b| matches!(b, b'[' | b'{')).count() > deepest;
    records
        .into_iter()
        .map(|record| Some(record.get()).filter(|text| !deep(text)))
        .collect()
}

/// Reads a batch object `{key: [...]}` with no other field into its
/// records, unparsed; any other object is an error.
struct BatchObject<'k>(&'k str);

impl<'de> Visitor<'de> for BatchObject<'_> {
    type Value = Vec<&'de RawValue>;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        write!(f, "an object whose one field is `{}`", self.0)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        if map.next_key::<String>()?.as_deref() != Some(self.0) {
            return Err(A::Error::custom("not a batch object"));
        }
        let records = map.next_value()?;
        match map.next_key::<IgnoredAny>()? {
            None => Ok(records),
            Some(_) => Err(A::Error::custom("a batch object with more fields")),
        }
    }
}

/// The fields of a body that must be an object naming only `known` fields;
/// anything else is a 400 that lists them, as `what` has them (`a
/// webhook`: "unknown field `x`; a webhook has url, events, enabled and
/// description"). A field sent by mistake is refused, not ignored.
pub fn body_fields<'b>(
    body: &'b Value,
    what: &str,
    known: &[&str],
) -> Result<&'b serde_json::Map<String, Value>, ApiError> {
    let listed = match known {
        [] => "no fields".to_string(),
        [only] => only.to_string(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    };
    let Some(map) = body.as_object() else {
        return Err(ApiError::bad_request(format!(
            "the body must be an object with {listed}"
        )));
    };
    match map.keys().find(|name| !known.contains(&name.as_str())) {
        Some(unknown) => Err(ApiError::bad_field(
            unknown,
            format!("unknown field `{unknown}`; {what} has {listed}"),
        )),
        None => Ok(map),
    }
}

/// `limit` and `offset` of a list endpoint (the route table refuses the
/// parameters it does not declare).
pub fn page_of(params: &Params) -> Result<(usize, usize), ApiError> {
    let read = |name: &str, default: usize| -> Result<usize, ApiError> {
        match params.get(name).map(|v| v.trim()).filter(|v| !v.is_empty()) {
            None => Ok(default),
            Some(text) => text.parse().map_err(|_| {
                ApiError::bad_field(
                    name,
                    format!(
                        "query parameter `{name}`: `{text}` is not a whole number of 0 or more"
                    ),
                )
            }),
        }
    };
    Ok((
        read("limit", DEFAULT_LIMIT)?.min(MAX_LIMIT),
        read("offset", 0)?,
    ))
}

/// `{"result": ...}`: an answer of one list or value, typed.
#[derive(serde::Serialize)]
pub struct Listed<T> {
    pub result: T,
}

/// `value` as a JSON answer, its text written here rather than after the
/// handler returns: called on a blocking thread (in [`read_ledger`]), a
/// long answer is written and its rows freed off the event loop, where
/// they would hold up every other request on that worker.
pub fn json_response(value: &impl serde::Serialize) -> Result<Response, ApiError> {
    let text = serde_json::to_vec(value)
        .map_err(|e| ApiError::internal(format!("the answer could not be written: {e}")))?;
    Ok(json_text_response(text))
}

/// JSON text as the answer.
pub fn json_text_response(text: Vec<u8>) -> Response {
    (
        [(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        )],
        text,
    )
        .into_response()
}

/// Runs `work` with the account's ledger for reading, off the event loop.
pub async fn read_ledger<T: Send + 'static>(
    account: Arc<Account>,
    work: impl FnOnce(&Ledger) -> Result<T, ApiError> + Send + 'static,
) -> Result<T, ApiError> {
    tokio::task::spawn_blocking(move || {
        let ledger = account.ledger.read().unwrap_or_else(|p| p.into_inner());
        work(&ledger)
    })
    .await
    .map_err(|_| ApiError::internal("the request could not be completed"))?
}

/// Runs a write of the account off the event loop (see
/// [`AppState::write_account`]): `work` changes the ledger, persists
/// through the state and may write to the store in the write's transaction,
/// committed once it succeeds.
pub async fn write_ledger<T: Send + 'static>(
    state: Arc<AppState>,
    account: Arc<Account>,
    work: impl FnOnce(&AppState, &Account, &mut Store, &mut Ledger) -> Result<T, ApiError>
    + Send
    + 'static,
) -> Result<T, ApiError> {
    tokio::task::spawn_blocking(move || {
        state.write_account(&account, |store, ledger| {
            work(&state, &account, store, ledger)
        })
    })
    .await
    .map_err(|_| ApiError::internal("the request could not be completed"))?
}

/// A record write waiting in its account's queue, and where its caller
/// waits for the answer.
struct Queued<W, T> {
    work: W,
    answer: tokio::sync::oneshot::Sender<Result<T, ApiError>>,
}

impl<W, T> QueuedWrite for Queued<W, T>
where
    W: FnOnce(&AppState, &Account, &mut Ledger) -> Result<T, ApiError> + Send + 'static,
    T: Send + 'static,
{
    fn run(self: Box<Self>, state: &AppState, account: &Account, ledger: &mut Ledger) -> Reply {
        let Queued { work, answer } = *self;
        let result = work(state, account, ledger);
        Box::new(move |commit: Result<(), &ApiError>| {
            let _ = answer.send(match commit {
                Ok(()) => result,
                Err(error) => Err(error.again()),
            });
        })
    }

    fn refuse(self: Box<Self>, error: &ApiError) {
        let _ = self.answer.send(Err(error.again()));
    }
}

/// Runs a record write (`work` persists only through the state) in the
/// account's next group commit: concurrent writers share one transaction,
/// and each answers only once that transaction is durable. One blocking
/// task per account runs the groups while writes keep coming; the other
/// writers only wait for their answer.
pub async fn write_records<T: Send + 'static>(
    state: Arc<AppState>,
    account: Arc<Account>,
    work: impl FnOnce(&AppState, &Account, &mut Ledger) -> Result<T, ApiError> + Send + 'static,
) -> Result<T, ApiError> {
    let (answer, receiver) = tokio::sync::oneshot::channel();
    let start_runner = account.queue(Box::new(Queued { work, answer }));
    if start_runner {
        // The runner answers through the channel; its handle is not needed.
        drop(tokio::task::spawn_blocking(move || {
            state.run_queued(&account)
        }));
    }
    receiver
        .await
        .map_err(|_| ApiError::internal("the request could not be completed"))?
}

/// The instant a read is computed at: `as_of` when given, else now.
pub fn as_of(params: &Params, ledger: &Ledger) -> Result<chrono::DateTime<chrono::Utc>, ApiError> {
    match params.get("as_of").filter(|v| !v.trim().is_empty()) {
        Some(text) => Ok(submetrics::parse_as_of(text.trim(), ledger.settings())?),
        None => Ok(chrono::Utc::now()),
    }
}
