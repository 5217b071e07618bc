//! The payment-platform connection (Stripe): `PUT` connects with a secret or
//! restricted key and starts the backfill, `GET` reports the sync, `DELETE`
//! disconnects (keeping the imported data unless `remove_data=true`), all
//! also under the alias `/settings/stripe`; and the signed webhook endpoint
//! Stripe posts events to.

use super::{BodyBytes, JsonBody, Params, Routes, body_fields, read_ledger, write_ledger};
use crate::auth::Caller;
use crate::error::ApiError;
use crate::extract::{Path, Query};
use crate::openapi::Doc;
use crate::state::AppState;
use crate::stripe;
use axum::Json;
use axum::extract::State;
use axum::http::HeaderMap;
use serde_json::Value;
use std::sync::Arc;

pub fn routes() -> Routes {
    let mut routes = Routes::new();
    for (path, alias) in [
        ("/settings/payment-platform", ""),
        ("/settings/stripe", " (alias of /settings/payment-platform)"),
    ] {
        let (get_doc, put_doc, delete_doc) = if alias.is_empty() {
            (
                Doc::admin("Payment-platform connection and sync status"),
                Doc::admin("Connect Stripe with a secret or restricted key and start the backfill")
                    .upstream(),
                Doc::admin("Disconnect Stripe, keeping its data unless remove_data=true")
                    .query(&["remove_data"]),
            )
        } else {
            (
                Doc::admin(
                    "Stripe connection and sync status (alias of /settings/payment-platform)",
                ),
                Doc::admin("Connect Stripe (alias of /settings/payment-platform)").upstream(),
                Doc::admin("Disconnect Stripe (alias of /settings/payment-platform)")
                    .query(&["remove_data"]),
            )
        };
        routes = routes
            .get(path, get_connection, get_doc)
            .put(path, put_connection, put_doc)
            .delete(path, delete_connection, delete_doc);
    }
    routes.post(
        "/webhooks/stripe/{account}",
        webhook,
        Doc::public("Stripe webhook events of an account, checked by their Stripe-Signature")
            .upstream(),
    )
}

async fn get_connection(
    State(state): State<Arc<AppState>>,
    caller: Caller,
) -> Result<Json<Value>, ApiError> {
    caller.require_admin()?;
    let account = state.account(caller.account_id)?;
    let id = caller.account_id;
    read_ledger(account, move |ledger| {
        Ok(Json(stripe::status(&state, id, ledger)))
    })
    .await
}

/// `{"secret_key": "sk_..." | "rk_...", "webhook_secret": "whsec_...",
/// "uncollectible": "failed" | "void"}` (`api_key` is an alias of
/// `secret_key`; one of them, never both). The key is always given; a
/// `webhook_secret` or `uncollectible` not given keeps the connection's,
/// and `null` clears it.
async fn put_connection(
    State(state): State<Arc<AppState>>,
    caller: Caller,
    JsonBody(body): JsonBody,
) -> Result<Json<Value>, ApiError> {
    caller.require_admin()?;
    body_fields(
        &body,
        "a connection",
        &["secret_key", "api_key", "webhook_secret", "uncollectible"],
    )?;
    // `None` when the field is not given, `Some(None)` when it is null.
    let given = |field: &str| -> Result<Option<Option<String>>, ApiError> {
        match body.get(field) {
            None => Ok(None),
            Some(Value::Null) => Ok(Some(None)),
            Some(Value::String(s)) if !s.trim().is_empty() => Ok(Some(Some(s.trim().to_string()))),
            Some(_) => Err(ApiError::bad_field(
                field,
                format!("field `{field}` must be a non-empty string"),
            )),
        }
    };
    let (key_field, key) = match (given("secret_key")?.flatten(), given("api_key")?.flatten()) {
        (Some(_), Some(_)) => {
            return Err(ApiError::bad_field(
                "api_key",
                "field `api_key` is an alias of `secret_key`: give the key once",
            ));
        }
        (Some(key), None) => ("secret_key", key),
        (None, Some(key)) => ("api_key", key),
        (None, None) => {
            return Err(ApiError::bad_field(
                "secret_key",
                "field `secret_key` is required: a Stripe secret (sk_...) or restricted (rk_...) key",
            ));
        }
    };
    if !(key.starts_with("sk_") || key.starts_with("rk_")) {
        return Err(ApiError::bad_field(
            key_field,
            format!(
                "field `{key_field}` must be a Stripe secret key (sk_...) or restricted key (rk_...)"
            ),
        ));
    }
    let (stored_secret, stored_uncollectible) = stripe::choices(&state, caller.account_id);
    let webhook_secret = given("webhook_secret")?.unwrap_or(stored_secret);
    let uncollectible = given("uncollectible")?.unwrap_or(stored_uncollectible);
    stripe::options(uncollectible.as_deref())?;
    let id = caller.account_id;
    let account = state.account(id)?;
    let connecting = Arc::clone(&state);
    tokio::task::spawn_blocking(move || {
        stripe::connect(&connecting, id, &key, webhook_secret, uncollectible)
            .map_err(|error| error.at_field(key_field))
    })
    .await
    .map_err(|_| ApiError::internal("the request could not be completed"))??;
    read_ledger(account, move |ledger| {
        Ok(Json(stripe::status(&state, id, ledger)))
    })
    .await
}

async fn delete_connection(
    State(state): State<Arc<AppState>>,
    caller: Caller,
    Query(params): Query<Params>,
) -> Result<Json<Value>, ApiError> {
    caller.require_admin()?;
    let remove_data = match params.get("remove_data").map(|v| v.trim()) {
        None | Some("" | "false" | "0") => false,
        Some("true" | "1") => true,
        Some(other) => {
            return Err(ApiError::bad_field(
                "remove_data",
                format!("query parameter `remove_data`: `{other}` is not true or false"),
            ));
        }
    };
    let id = caller.account_id;
    let account = state.account(id)?;
    write_ledger(state, account, move |state, _, store, ledger| {
        stripe::disconnect(state, id, store, ledger, remove_data).map(Json)
    })
    .await
}

async fn webhook(
    State(state): State<Arc<AppState>>,
    Path(account): Path<String>,
    headers: HeaderMap,
    BodyBytes(body): BodyBytes,
) -> Result<Json<Value>, ApiError> {
    let account: i64 = account
        .parse()
        .map_err(|_| ApiError::NotFound(format!("no account `{account}`")))?;
    state.account(account)?;
    let signature = headers
        .get(stripe::signature::HEADER)
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    tokio::task::spawn_blocking(move || {
        stripe::receive_webhook(&state, account, signature.as_deref(), &body).map(Json)
    })
    .await
    .map_err(|_| ApiError::internal("the request could not be completed"))?
}
