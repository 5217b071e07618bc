//! Account, profile, billing, team and API keys.
//!
//! Account settings are the ledger settings (`base_currency`, `timezone`,
//! `first_day_of_week`, `churn_grace_days`, `refund_handling`); changing
//! them recomputes every customer and applies to every report.

use super::{JsonBody, Params, read_ledger, write_ledger};
use crate::auth::Caller;
use crate::error::ApiError;
use crate::state::{Account, AppState};
use axum::Json;
use axum::Router;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::routing::{delete, get};
use serde_json::{Map, Value, json};
use std::sync::Arc;
use submetrics::Ledger;

/// Settings keys of the account object.
const SETTINGS: &[&str] = &[
    "base_currency",
    "timezone",
    "first_day_of_week",
    "churn_grace_days",
    "refund_handling",
];

pub fn routes() -> Router<Arc<AppState>> {
    Router::new()
        .route("/account", get(get_account).put(put_account))
        .route("/profile", get(get_profile).put(put_profile))
        .route("/account/billing", get(billing))
        .route("/account/team", get(team))
        .route("/account/api-keys", get(list_keys).post(create_key))
        .route("/account/api-keys/{id}", delete(revoke_key))
}

fn account_json(account: &Account, ledger: &Ledger) -> Value {
    let row = account.row.lock().unwrap_or_else(|p| p.into_inner());
    let mut value = json!({"id": row.id.to_string(), "name": row.name, "created": row.created});
    let settings = json!(ledger.settings());
    for key in SETTINGS {
        value[*key] = settings[*key].clone();
    }
    value["data_sources"] = ledger
        .data_sources()
        .map(|d| json!({"id": d.id, "name": d.name, "type": d.kind}))
        .collect();
    value
}

async fn get_account(
    State(state): State<Arc<AppState>>,
    caller: Caller,
) -> Result<Json<Value>, ApiError> {
    caller.require_admin()?;
    let account = state.account(caller.account_id)?;
    let view = Arc::clone(&account);
    read_ledger(account, move |ledger| Ok(Json(account_json(&view, ledger)))).await
}

async fn put_account(
    State(state): State<Arc<AppState>>,
    caller: Caller,
    JsonBody(body): JsonBody,
) -> Result<Json<Value>, ApiError> {
    caller.require_admin()?;
    let patch = body
        .as_object()
        .cloned()
        .ok_or_else(|| ApiError::bad_request("the body must be an account object"))?;
    let name = match patch.get("name") {
        None => None,
        Some(Value::String(name)) if !name.trim().is_empty() => Some(name.trim().to_string()),
        Some(_) => {
            return Err(ApiError::bad_request(
                "account field `name` must be a non-empty string",
            ));
        }
    };
    for key in patch.keys() {
        if key != "name"
            && key != "id"
            && key != "data_sources"
            && key != "created"
            && !SETTINGS.contains(&key.as_str())
        {
            return Err(ApiError::bad_request(format!(
                "account field `{key}` cannot be changed; writable: name, {}",
                SETTINGS.join(", ")
            )));
        }
    }
    let settings: Map<String, Value> = patch
        .into_iter()
        .filter(|(k, _)| SETTINGS.contains(&k.as_str()))
        .collect();
    let account = state.account(caller.account_id)?;
    write_ledger(state, account, move |state, account, ledger| {
        let updated = ledger.settings().merged(&Value::Object(settings))?;
        let mut row = account
            .row
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone();
        row.settings = json!(updated);
        if let Some(name) = name {
            row.name = name;
        }
        state.store().save_account(&row)?;
        *account.row.lock().unwrap_or_else(|p| p.into_inner()) = row;
        ledger.set_settings(updated);
        Ok(Json(account_json(account, ledger)))
    })
    .await
}

async fn get_profile(
    State(state): State<Arc<AppState>>,
    caller: Caller,
) -> Result<Json<Value>, ApiError> {
    let account = state.account(caller.account_id)?;
    let row = account
        .row
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .clone();
    let mut profile = row.profile.clone();
    profile["accounts"] =
        json!([{"id": row.id.to_string(), "name": row.name, "role": caller.key.role}]);
    Ok(Json(profile))
}

async fn put_profile(
    State(state): State<Arc<AppState>>,
    caller: Caller,
    JsonBody(body): JsonBody,
) -> Result<Json<Value>, ApiError> {
    let patch = body
        .as_object()
        .cloned()
        .ok_or_else(|| ApiError::bad_request("the body must be a profile object"))?;
    let account = state.account(caller.account_id)?;
    let mut row = account
        .row
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .clone();
    for (key, value) in patch {
        match (key.as_str(), &value) {
            ("first_name" | "last_name" | "locale", Value::String(_)) => row.profile[key] = value,
            ("first_name" | "last_name" | "locale", _) => {
                return Err(ApiError::bad_request(format!(
                    "profile field `{key}` must be a string"
                )));
            }
            _ => {
                return Err(ApiError::bad_request(format!(
                    "profile field `{key}` cannot be changed; writable: first_name, last_name, locale"
                )));
            }
        }
    }
    state.store().save_account(&row)?;
    let profile = row.profile.clone();
    *account.row.lock().unwrap_or_else(|p| p.into_inner()) = row;
    Ok(Json(profile))
}

/// A self-hosted service has no plan limits: limits are null, usage is real.
async fn billing(
    State(state): State<Arc<AppState>>,
    caller: Caller,
) -> Result<Json<Value>, ApiError> {
    caller.require_admin()?;
    read_ledger(state.account(caller.account_id)?, move |ledger| {
        let summary = ledger.report("summary", &Params::new(), chrono::Utc::now())?;
        Ok(Json(json!({
            "plan": "self-hosted",
            "status": "active",
            "billing_cycle": null,
            "current_period_start": null,
            "current_period_end": null,
            "mrr_limit": null,
            "current_mrr": summary["summary"]["mrr_current"],
            "customer_limit": null,
            "current_customers": summary["summary"]["subscribers_current"],
        })))
    })
    .await
}

/// Team members are the account's API key holders (the service has no
/// user logins).
async fn team(State(state): State<Arc<AppState>>, caller: Caller) -> Result<Json<Value>, ApiError> {
    caller.require_admin()?;
    let keys = state.store().keys(Some(caller.account_id))?;
    let list: Vec<Value> = keys
        .iter()
        .map(|k| {
            json!({"id": k.id, "name": k.name, "email": null, "role": k.role,
                   "status": if k.revoked { "disabled" } else { "active" }, "last_login": null})
        })
        .collect();
    Ok(Json(json!({"result": {"count": list.len(), "list": list}})))
}

async fn list_keys(
    State(state): State<Arc<AppState>>,
    caller: Caller,
    Query(_): Query<Params>,
) -> Result<Json<Value>, ApiError> {
    caller.require_admin()?;
    let keys = state.store().keys(Some(caller.account_id))?;
    let list: Vec<Value> = keys
        .iter()
        .map(|k| json!({"id": k.id, "name": k.name, "role": k.role, "created": k.created, "revoked": k.revoked}))
        .collect();
    Ok(Json(json!({"result": {"count": list.len(), "list": list}})))
}

async fn create_key(
    State(state): State<Arc<AppState>>,
    caller: Caller,
    JsonBody(body): JsonBody,
) -> Result<(StatusCode, Json<Value>), ApiError> {
    caller.require_admin()?;
    let role = body
        .get("role")
        .and_then(Value::as_str)
        .unwrap_or("readonly")
        .to_string();
    if role == "owner" && caller.key.role != "owner" {
        return Err(ApiError::Forbidden(
            "only an owner key can create owner keys".into(),
        ));
    }
    let name = body
        .get("name")
        .and_then(Value::as_str)
        .unwrap_or("api key")
        .to_string();
    let key = state.create_key(caller.account_id, &role, &name, None)?;
    let row = state
        .key(&crate::auth::hash_key(&key))?
        .ok_or_else(|| ApiError::internal("the new key was not stored"))?;
    Ok((
        StatusCode::CREATED,
        Json(
            json!({"id": row.id, "name": row.name, "role": row.role, "created": row.created, "key": key}),
        ),
    ))
}

async fn revoke_key(
    State(state): State<Arc<AppState>>,
    caller: Caller,
    Path(id): Path<String>,
) -> Result<Json<Value>, ApiError> {
    caller.require_admin()?;
    if id == caller.key.id {
        return Err(ApiError::Conflict("a key cannot revoke itself".into()));
    }
    if !state.revoke_key(&id, Some(caller.account_id))? {
        return Err(ApiError::NotFound(format!("API key `{id}` does not exist")));
    }
    Ok(Json(json!({"success": true, "id": id})))
}
