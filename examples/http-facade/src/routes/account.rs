//! Account, profile, billing, team and API keys.
//!
//! Account settings are the ledger settings (`base_currency`, `timezone`,
//! `first_day_of_week`, `churn_grace_days`, `refund_handling`); changing
//! them recomputes every customer and applies to every report.

use super::Routes;
use super::{JsonBody, Params, body_fields, read_ledger, write_ledger};
use crate::auth::Caller;
use crate::error::ApiError;
use crate::extract::Path;
use crate::openapi::Doc;
use crate::state::{Account, AppState, blocking};
use crate::store::AccountReads;
use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
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

/// Fields of the account object that only the service sets.
const READ_ONLY: &[&str] = &["id", "created", "data_sources"];

pub fn routes() -> Routes {
    Routes::new()
        .get(
            "/account",
            get_account,
            Doc::admin("The account and its settings"),
        )
        .put(
            "/account",
            put_account,
            Doc::admin("Change the account name and settings"),
        )
        .get("/profile", get_profile, Doc::key("The caller's profile"))
        .put(
            "/profile",
            put_profile,
            Doc::key("Change first_name, last_name, locale (not with a readonly key)"),
        )
        .get(
            "/account/billing",
            billing,
            Doc::admin("Plan, limits and usage"),
        )
        .get(
            "/account/team",
            team,
            Doc::admin("Team members: users and pending invitations"),
        )
        .get("/account/api-keys", list_keys, Doc::admin("List API keys"))
        .post(
            "/account/api-keys",
            create_key,
            Doc::admin("Create an API key {name, role}; the key is shown once").created(),
        )
        .delete(
            "/account/api-keys/{id}",
            revoke_key,
            Doc::admin("Revoke an API key"),
        )
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
    writable_only(&patch)?;
    let name = match patch.get("name") {
        None => None,
        Some(Value::String(name)) if !name.trim().is_empty() => Some(name.trim().to_string()),
        Some(_) => {
            return Err(ApiError::bad_field(
                "name",
                "account field `name` must be a non-empty string",
            ));
        }
    };
    let settings: Map<String, Value> = patch
        .into_iter()
        .filter(|(k, _)| SETTINGS.contains(&k.as_str()))
        .collect();
    let account = state.account(caller.account_id)?;
    write_ledger(state, account, move |_, account, store, ledger| {
        let updated = ledger.settings().merged(&Value::Object(settings))?;
        ledger.check_settings(&updated)?;
        let row = AppState::update_row(store, account, |row| {
            row.settings = json!(updated);
            if let Some(name) = name {
                row.name = name;
            }
            Ok(())
        })?;
        ledger.set_settings(updated);
        // A failed commit reads the row back from the store.
        *account.row.lock().unwrap_or_else(|p| p.into_inner()) = row;
        Ok(Json(account_json(account, ledger)))
    })
    .await
}

/// Refuses a patch naming any field but `name` and the settings: one that
/// `GET /account` shows but no write changes (`id`, `created`,
/// `data_sources`) is read-only, any other is no field of the account.
/// Neither is passed over, so a patch never answers success for a change
/// it did not make.
fn writable_only(patch: &Map<String, Value>) -> Result<(), ApiError> {
    let refused = patch
        .keys()
        .find(|key| *key != "name" && !SETTINGS.contains(&key.as_str()));
    match refused {
        None => Ok(()),
        Some(key) => {
            let why = if READ_ONLY.contains(&key.as_str()) {
                "is read-only"
            } else {
                "cannot be changed"
            };
            Err(ApiError::bad_field(
                key,
                format!(
                    "account field `{key}` {why}; writable: name, {}",
                    SETTINGS.join(", ")
                ),
            ))
        }
    }
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
    // A session shows its own user; the account's profile document holds
    // the rest.
    if let Some(user) = &caller.user {
        let (first, last) = user.name.split_once(' ').unwrap_or((&user.name, ""));
        profile["first_name"] = json!(first);
        profile["last_name"] = json!(last);
        profile["email"] = json!(user.email);
        profile["provider"] = json!("credentials");
        profile["verified"] = json!(false);
        profile["id"] = json!(user.id);
        profile["status"] = json!(user.status);
        profile["last_login"] = json!(user.last_login);
    }
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
    for (key, value) in &patch {
        match (key.as_str(), value) {
            ("first_name" | "last_name" | "locale", Value::String(_)) => {}
            ("first_name" | "last_name" | "locale", _) => {
                return Err(ApiError::bad_field(
                    key,
                    format!("profile field `{key}` must be a string"),
                ));
            }
            _ => {
                return Err(ApiError::bad_field(
                    key,
                    format!(
                        "profile field `{key}` cannot be changed; writable: first_name, last_name, locale"
                    ),
                ));
            }
        }
    }
    let account = state.account(caller.account_id)?;
    let row = blocking(move || {
        state.update_account(&account, |row| {
            for (key, value) in patch {
                row.profile[key] = value;
            }
            Ok(())
        })
    })
    .await?;
    Ok(Json(row.profile))
}

/// Largest limit reported: the largest integer a JSON number holds exactly
/// (2^53 - 1), so every client reads it unchanged.
pub const UNLIMITED: i64 = 9_007_199_254_740_991;

/// A self-hosted service bills nothing. Its billing object stays within the
/// interface's sets: the top plan `scale`, `active`, `monthly`, the current
/// calendar month (UTC) as the period, and [`UNLIMITED`] as both limits;
/// usage (`current_mrr`, `current_customers`) is real.
async fn billing(
    State(state): State<Arc<AppState>>,
    caller: Caller,
) -> Result<Json<Value>, ApiError> {
    caller.require_admin()?;
    read_ledger(state.account(caller.account_id)?, move |ledger| {
        let now = chrono::Utc::now();
        let summary = ledger.report("summary", &Params::new(), now)?;
        let integer = |value: &Value| {
            value
                .as_i64()
                .or_else(|| value.as_f64().map(|f| f.round() as i64))
                .unwrap_or(0)
        };
        let (start, end) = month_of(now);
        Ok(Json(json!({
            "plan": "scale",
            "status": "active",
            "billing_cycle": "monthly",
            "current_period_start": start,
            "current_period_end": end,
            "mrr_limit": UNLIMITED,
            "current_mrr": integer(&summary["summary"]["mrr_current"]),
            "customer_limit": UNLIMITED,
            "current_customers": integer(&summary["summary"]["subscribers_current"]),
        })))
    })
    .await
}

/// The first instant of `now`'s calendar month and of the next, in UTC.
fn month_of(now: chrono::DateTime<chrono::Utc>) -> (String, String) {
    use chrono::{Datelike, TimeZone};
    let (year, month) = (now.year(), now.month());
    let (next_year, next_month) = if month == 12 {
        (year + 1, 1)
    } else {
        (year, month + 1)
    };
    let at = |y: i32, m: u32| {
        chrono::Utc
            .with_ymd_and_hms(y, m, 1, 0, 0, 0)
            .single()
            .map(|t| t.to_rfc3339_opts(chrono::SecondsFormat::Secs, true))
            .unwrap_or_default()
    };
    (at(year, month), at(next_year, next_month))
}

/// Team members are the account's users (see `routes::session`), then its
/// pending invitations; API keys are listed by `/account/api-keys`.
async fn team(State(state): State<Arc<AppState>>, caller: Caller) -> Result<Json<Value>, ApiError> {
    caller.require_admin()?;
    let account = caller.account_id;
    let list = blocking(move || state.read(|reader| super::session::team_members(reader, account)))
        .await?;
    Ok(Json(json!({"result": {"count": list.len(), "list": list}})))
}

async fn list_keys(
    State(state): State<Arc<AppState>>,
    caller: Caller,
) -> Result<Json<Value>, ApiError> {
    caller.require_admin()?;
    let account = caller.account_id;
    let keys = blocking(move || state.read(|reader| reader.keys(Some(account)))).await?;
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
    body_fields(&body, "an API key", &["name", "role"])?;
    let text = |field: &str, default: &str| match body.get(field) {
        None | Some(Value::Null) => Ok(default.to_string()),
        Some(Value::String(text)) if !text.trim().is_empty() => Ok(text.trim().to_string()),
        Some(_) => Err(ApiError::bad_field(
            field,
            format!("field `{field}` must be a non-empty string"),
        )),
    };
    let role = text("role", "readonly")?;
    let name = text("name", "api key")?;
    if role == "owner" && caller.key.role != "owner" {
        return Err(ApiError::Forbidden(
            "only an owner key can create owner keys".into(),
        ));
    }
    let account = caller.account_id;
    let (key, row) = blocking(move || {
        let key = state.create_key(account, &role, &name, None)?;
        let row = state
            .key_blocking(&crate::auth::hash_key(&key))?
            .ok_or_else(|| ApiError::internal("the new key was not stored"))?;
        Ok((key, row))
    })
    .await?;
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
    blocking(move || {
        let target = state
            .read(|reader| reader.keys(Some(caller.account_id)))?
            .into_iter()
            .find(|k| k.id == id)
            .ok_or_else(|| ApiError::NotFound(format!("API key `{id}` does not exist")))?;
        if target.role == "owner" && caller.key.role != "owner" {
            return Err(ApiError::Forbidden(format!(
                "key `{id}` is an owner key; only an owner key can revoke it"
            )));
        }
        if !state.revoke_key(&id, Some(caller.account_id))? {
            return Err(ApiError::NotFound(format!("API key `{id}` does not exist")));
        }
        Ok(Json(json!({"success": true, "id": id})))
    })
    .await
}
