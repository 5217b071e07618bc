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
    let account = state.account(caller.account_id)?;
    // Checking a chat target may look its host up: off the async threads.
    let row = blocking(move || {
        let allow_private = state.outbound.config().allow_private;
        state.update_account(&account, |row| {
            crate::outbound::merge_notifications(&mut row.notifications, &body)?;
            crate::outbound::validate_notifications(&row.notifications, allow_private)
        })
    })
    .await?;
    Ok(Json(row.notifications))
}

async fn crm(caller: Caller) -> Result<Json<Value>, ApiError> {
    caller.require_admin()?;
    Ok(Json(json!({
        "connected": false, "portal_id": null, "portal_name": null, "connected_at": null,
        "sync_enabled": false, "sync_direction": null, "last_sync": null, "properties_mapped": []
    })))
}
