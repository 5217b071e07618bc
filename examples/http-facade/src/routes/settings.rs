//! Settings: notification settings (a partial PUT changes only what it
//! sends) and the read-only CRM connection, which stays `connected: false`
//! until that integration exists. The payment platform is
//! `payment_platform`.

use super::JsonBody;
use super::Routes;
use crate::auth::Caller;
use crate::error::ApiError;
use crate::openapi::Doc;
use crate::state::{AppState, blocking};
use axum::Json;
use axum::extract::State;
use serde_json::{Value, json};
use std::sync::Arc;

pub fn routes() -> Routes {
    Routes::new()
        .get(
            "/settings/notifications",
            get_notifications,
            Doc::admin("Notification settings"),
        )
        .put(
            "/settings/notifications",
            put_notifications,
            Doc::admin("Change parts of the notification settings"),
        )
        .get(
            "/settings/crm",
            crm,
            Doc::admin("CRM connection (read only)"),
        )
        .get(
            "/settings/hubspot",
            crm,
            Doc::admin("CRM connection (alias of /settings/crm)"),
        )
}

async fn get_notifications(
    State(state): State<Arc<AppState>>,
    caller: Caller,
) -> Result<Json<Value>, ApiError> {
    caller.require_admin()?;
    let account = state.account(caller.account_id)?;
    let row = account.row.lock().unwrap_or_else(|p| p.into_inner());
    Ok(Json(row.notifications.clone()))
}

async fn put_notifications(
    State(state): State<Arc<AppState>>,
    caller: Caller,
    JsonBody(body): JsonBody,
) -> Result<Json<Value>, ApiError> {
    caller.require_admin()?;
    if !body.is_object() {
        return Err(ApiError::bad_request(
            "the body must be a (partial) notification settings object",
        ));
    }
    let account = state.account(caller.account_id)?;
    // Checking a chat target may look its host up: off the async threads.
    let row = blocking(move || {
        let allow_private = state.outbound.config().allow_private;
        state.update_account(&account, |row| {
            crate::outbound::add_optional_settings(&mut row.notifications, &body);
            merge(&mut row.notifications, &body, "")?;
            crate::outbound::validate_notifications(&row.notifications, allow_private)
        })
    })
    .await?;
    Ok(Json(row.notifications))
}

/// Merges `patch` into `target`: objects key by key, anything else replaces.
/// A known key sent with a different JSON type is an error naming it.
fn merge(target: &mut Value, patch: &Value, path: &str) -> Result<(), ApiError> {
    let (Some(target_map), Some(patch_map)) = (target.as_object_mut(), patch.as_object()) else {
        *target = patch.clone();
        return Ok(());
    };
    for (key, value) in patch_map {
        let here = if path.is_empty() {
            key.clone()
        } else {
            format!("{path}.{key}")
        };
        match target_map.get_mut(key) {
            Some(existing) if existing.is_object() => {
                if !value.is_object() {
                    return Err(ApiError::bad_field(
                        &here,
                        format!("notification setting `{here}` must be an object"),
                    ));
                }
                merge(existing, value, &here)?;
            }
            Some(existing) => {
                let same_type = existing.is_null()
                    || value.is_null()
                    || std::mem::discriminant(existing) == std::mem::discriminant(value);
                if !same_type {
                    return Err(ApiError::bad_field(
                        &here,
                        format!(
                            "notification setting `{here}` must be a {}",
                            type_name(existing)
                        ),
                    ));
                }
                *existing = value.clone();
            }
            None => {
                return Err(ApiError::bad_field(
                    &here,
                    format!("unknown notification setting `{here}`"),
                ));
            }
        }
    }
    Ok(())
}

fn type_name(value: &Value) -> &'static str {
    match value {
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "list",
        Value::Object(_) => "object",
        Value::Null => "value",
    }
}

async fn crm(caller: Caller) -> Result<Json<Value>, ApiError> {
    caller.require_admin()?;
    Ok(Json(json!({
        "connected": false, "portal_id": null, "portal_name": null, "connected_at": null,
        "sync_enabled": false, "sync_direction": null, "last_sync": null, "properties_mapped": []
    })))
}
