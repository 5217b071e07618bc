//! Webhook subscriptions, their delivery logs, the event catalogue, and
//! digests on request (see `docs/events.md`). Every endpoint needs an
//! owner or admin key.

use super::{JsonBody, JsonBytes, Params, Routes, body_fields, page_of, parse_body, read_ledger};
use crate::auth::Caller;
use crate::error::ApiError;
use crate::extract::{Path, Query};
use crate::openapi::{Doc, PAGE};
use crate::outbound::{self, Channel, EVENT_TYPES, Frequency, WEBHOOK_TEST, Webhook};
use crate::state::{AppState, blocking, now_text};
use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use serde_json::{Map, Value, json};
use std::sync::Arc;

/// Longest description kept.
const MAX_DESCRIPTION: usize = 1000;
/// Longest target URL kept.
const MAX_URL: usize = 2000;

pub fn routes() -> Routes {
    Routes::new()
        .get(
            "/webhooks",
            list,
            Doc::admin("Webhook subscriptions").query(PAGE),
        )
        .post(
            "/webhooks",
            create,
            Doc::admin("Create a webhook subscription; the answer shows its signing secret, once")
                .created(),
        )
        .get(
            "/webhooks/events",
            event_types,
            Doc::admin("Event types a subscription can take"),
        )
        .get(
            "/webhooks/events/{name}/sample",
            event_sample,
            Doc::admin("A sample payload of an event type"),
        )
        .get(
            "/webhooks/{id}",
            get_one,
            Doc::admin("A webhook subscription"),
        )
        .put(
            "/webhooks/{id}",
            update,
            Doc::admin("Change a webhook subscription's url, events, enabled or description"),
        )
        .delete(
            "/webhooks/{id}",
            delete,
            Doc::admin("Delete a webhook subscription and cancel its pending deliveries"),
        )
        .post(
            "/webhooks/{id}/test",
            test,
            Doc::admin("Send a sample event to a subscription now, once"),
        )
        .get(
            "/webhooks/{id}/deliveries",
            deliveries,
            Doc::admin("A subscription's deliveries, newest first").query(PAGE),
        )
        .post(
            "/webhooks/{id}/deliveries/{delivery_id}/redeliver",
            redeliver,
            Doc::admin("Queue a delivery again, with its event id and body").created(),
        )
        .post(
            "/settings/notifications/digest",
            digest_now,
            Doc::admin("Queue an email digest of a completed day or week now"),
        )
}

async fn list(
    State(state): State<Arc<AppState>>,
    caller: Caller,
    Query(params): Query<Params>,
) -> Result<Json<Value>, ApiError> {
    caller.require_admin()?;
    let (limit, offset) = page_of(&params)?;
    let hooks = blocking(move || state.outbound.reads().webhooks(caller.account_id)).await?;
    let page: Vec<Value> = hooks
        .iter()
        .skip(offset)
        .take(limit)
        .map(Webhook::to_json)
        .collect();
    Ok(Json(
        json!({"result": {"count": hooks.len(), "list": page}}),
    ))
}

/// The fields of a subscription a body may set.
struct Fields {
    url: Option<String>,
    events: Option<Vec<String>>,
    enabled: Option<bool>,
    description: Option<String>,
}

/// Reads the subscription fields of a body; unknown fields and wrong types
/// are a 400 naming the field.
fn fields_of(body: &Value, allow_private: bool) -> Result<Fields, ApiError> {
    let map = body_fields(
        body,
        "a webhook",
        &["url", "events", "enabled", "description"],
    )?;
    let url = match map.get("url") {
        None => None,
        Some(Value::String(url)) if url.len() <= MAX_URL => {
            outbound::check_target(url, allow_private, "url")?;
            Some(url.trim().to_string())
        }
        Some(Value::String(_)) => {
            return Err(ApiError::bad_field(
                "url",
                format!("field `url`: longer than {MAX_URL} characters"),
            ));
        }
        Some(_) => return Err(ApiError::bad_field("url", "field `url` must be a string")),
    };
    let events = match map.get("events") {
        None | Some(Value::Null) => None,
        Some(Value::Array(items)) => {
            let mut names = Vec::new();
            for item in items {
                let name = item.as_str().ok_or_else(|| {
                    ApiError::bad_field("events", "field `events` must be a list of event names")
                })?;
                if !outbound::is_event_type(name) {
                    return Err(ApiError::bad_field(
                        "events",
                        format!(
                            "field `events`: `{name}` is not an event type (see GET /webhooks/events)"
                        ),
                    ));
                }
                if !names.iter().any(|n| n == name) {
                    names.push(name.to_string());
                }
            }
            Some(names)
        }
        Some(_) => {
            return Err(ApiError::bad_field(
                "events",
                "field `events` must be a list of event names",
            ));
        }
    };
    let enabled = match map.get("enabled") {
        None => None,
        Some(Value::Bool(enabled)) => Some(*enabled),
        Some(_) => {
            return Err(ApiError::bad_field(
                "enabled",
                "field `enabled` must be a boolean",
            ));
        }
    };
    let description = match map.get("description") {
        None | Some(Value::Null) => None,
        Some(Value::String(text)) if text.chars().count() <= MAX_DESCRIPTION => Some(text.clone()),
        Some(Value::String(_)) => {
            return Err(ApiError::bad_field(
                "description",
                format!("field `description`: longer than {MAX_DESCRIPTION} characters"),
            ));
        }
        Some(_) => {
            return Err(ApiError::bad_field(
                "description",
                "field `description` must be a string",
            ));
        }
    };
    Ok(Fields {
        url,
        events,
        enabled,
        description,
    })
}

async fn create(
    State(state): State<Arc<AppState>>,
    caller: Caller,
    JsonBody(body): JsonBody,
) -> Result<(StatusCode, Json<Value>), ApiError> {
    caller.require_admin()?;
    let allow_private = state.outbound.config().allow_private;
    let fields = tokio::task::spawn_blocking(move || fields_of(&body, allow_private))
        .await
        .map_err(|_| ApiError::internal("the request could not be completed"))??;
    let Some(url) = fields.url else {
        return Err(ApiError::bad_field("url", "field `url` is required"));
    };
    let now = now_text();
    let hook = Webhook {
        id: format!("wh_{}", crate::auth::hex(&outbound::random_bytes::<12>()?)),
        account_id: caller.account_id,
        url,
        events: fields.events.unwrap_or_default(),
        enabled: fields.enabled.unwrap_or(true),
        description: fields.description.unwrap_or_default(),
        secret: outbound::new_secret()?,
        failing_since: None,
        created: now.clone(),
        updated: now,
    };
    let hook = blocking(move || state.outbound.db().insert_webhook(&hook).map(|()| hook)).await?;
    let mut answer = hook.to_json();
    answer["secret"] = json!(hook.secret);
    Ok((StatusCode::CREATED, Json(answer)))
}

/// The caller's subscription `id`, or a 404; read off the event loop.
async fn webhook_of(state: &Arc<AppState>, caller: &Caller, id: &str) -> Result<Webhook, ApiError> {
    let (state, account, id) = (Arc::clone(state), caller.account_id, id.to_string());
    blocking(move || {
        state
            .outbound
            .reads()
            .webhook(account, &id)?
            .ok_or_else(|| ApiError::NotFound(format!("webhook `{id}` does not exist")))
    })
    .await
}

async fn get_one(
    State(state): State<Arc<AppState>>,
    caller: Caller,
    Path(id): Path<String>,
) -> Result<Json<Value>, ApiError> {
    caller.require_admin()?;
    Ok(Json(webhook_of(&state, &caller, &id).await?.to_json()))
}

async fn update(
    State(state): State<Arc<AppState>>,
    caller: Caller,
    Path(id): Path<String>,
    JsonBody(body): JsonBody,
) -> Result<Json<Value>, ApiError> {
    caller.require_admin()?;
    let mut hook = webhook_of(&state, &caller, &id).await?;
    let allow_private = state.outbound.config().allow_private;
    let fields = tokio::task::spawn_blocking(move || fields_of(&body, allow_private))
        .await
        .map_err(|_| ApiError::internal("the request could not be completed"))??;
    if let Some(url) = fields.url {
        hook.url = url;
    }
    if let Some(events) = fields.events {
        hook.events = events;
    }
    if let Some(enabled) = fields.enabled {
        hook.enabled = enabled;
    }
    if let Some(description) = fields.description {
        hook.description = description;
    }
    hook.updated = now_text();
    blocking(move || {
        state.outbound.db().update_webhook(&hook)?;
        state.outbound.wake();
        Ok(Json(hook.to_json()))
    })
    .await
}

async fn delete(
    State(state): State<Arc<AppState>>,
    caller: Caller,
    Path(id): Path<String>,
) -> Result<Json<Value>, ApiError> {
    caller.require_admin()?;
    blocking(move || {
        if !state.outbound.db().delete_webhook(caller.account_id, &id)? {
            return Err(ApiError::NotFound(format!("webhook `{id}` does not exist")));
        }
        Ok(Json(json!({"deleted": true, "id": id})))
    })
    .await
}

async fn event_types(caller: Caller) -> Result<Json<Value>, ApiError> {
    caller.require_admin()?;
    let list: Vec<Value> = EVENT_TYPES
        .iter()
        .map(|t| json!({"name": t.name, "description": t.description}))
        .collect();
    Ok(Json(json!({"events": list})))
}

async fn event_sample(caller: Caller, Path(name): Path<String>) -> Result<Json<Value>, ApiError> {
    caller.require_admin()?;
    outbound::sample(&name).map(Json).ok_or_else(|| {
        ApiError::NotFound(format!(
            "`{name}` is not an event type (see GET /webhooks/events)"
        ))
    })
}

/// A JSON body that may be left out (empty).
fn optional_body(bytes: &[u8]) -> Result<Option<Value>, ApiError> {
    if bytes.iter().all(u8::is_ascii_whitespace) {
        Ok(None)
    } else {
        parse_body(bytes).map(Some)
    }
}

/// Sends a sample event (`{"event": name}`, default `webhook.test`) to the
/// subscription at once, whether or not it takes that type, and answers
/// with the delivery as logged.
async fn test(
    State(state): State<Arc<AppState>>,
    caller: Caller,
    Path(id): Path<String>,
    JsonBytes(body): JsonBytes,
) -> Result<Json<Value>, ApiError> {
    caller.require_admin()?;
    let hook = webhook_of(&state, &caller, &id).await?;
    let body = optional_body(&body)?;
    let event = match body.as_ref() {
        None => None,
        Some(body) => body_fields(body, "a test delivery", &["event"])?.get("event"),
    };
    let name = match event {
        None => WEBHOOK_TEST.to_string(),
        Some(Value::String(name)) if outbound::is_event_type(name) => name.clone(),
        Some(_) => {
            return Err(ApiError::bad_field(
                "event",
                "field `event` must be an event type (see GET /webhooks/events)",
            ));
        }
    };
    let mut payload =
        outbound::sample(&name).ok_or_else(|| ApiError::internal("an event type has no sample"))?;
    payload["timestamp"] = json!(now_text());
    let event_id = format!(
        "evt_test_{}",
        crate::auth::hex(&outbound::random_bytes::<12>()?)
    );
    let outbound = Arc::clone(&state.outbound);
    let delivery = tokio::task::spawn_blocking(move || {
        outbound.send_now(&hook, &event_id, &name, &payload.to_string())
    })
    .await
    .map_err(|_| ApiError::internal("the request could not be completed"))??;
    Ok(Json(delivery.to_json()))
}

async fn deliveries(
    State(state): State<Arc<AppState>>,
    caller: Caller,
    Path(id): Path<String>,
    Query(params): Query<Params>,
) -> Result<Json<Value>, ApiError> {
    caller.require_admin()?;
    let (limit, offset) = page_of(&params)?;
    let hook = webhook_of(&state, &caller, &id).await?;
    let (rows, count) = blocking(move || {
        state.outbound.reads().deliveries(
            caller.account_id,
            Channel::Webhook,
            &hook.id,
            limit,
            offset,
        )
    })
    .await?;
    let list: Vec<Value> = rows.iter().map(|d| d.to_json()).collect();
    Ok(Json(json!({"result": {"count": count, "list": list}})))
}

async fn redeliver(
    State(state): State<Arc<AppState>>,
    caller: Caller,
    Path((id, delivery_id)): Path<(String, String)>,
) -> Result<(StatusCode, Json<Value>), ApiError> {
    caller.require_admin()?;
    let hook = webhook_of(&state, &caller, &id).await?;
    let missing = format!("webhook `{id}` has no delivery `{delivery_id}`");
    let not_found = move || ApiError::NotFound(missing.clone());
    let seq: i64 = delivery_id.parse().map_err(|_| not_found())?;
    let queued = blocking(move || {
        let db = state.outbound.db();
        let original = db
            .delivery(seq)?
            .filter(|d| d.channel == Channel::Webhook && d.target == hook.id)
            .ok_or_else(not_found)?;
        let seq = db.enqueue(
            caller.account_id,
            Channel::Webhook,
            &hook.id,
            &original.event_id,
            &original.event_type,
            &original.body,
        )?;
        let queued = db
            .delivery(seq)?
            .ok_or_else(|| ApiError::internal("a queued delivery is missing"))?;
        drop(db);
        state.outbound.wake();
        Ok(queued)
    })
    .await?;
    Ok((StatusCode::CREATED, Json(queued.to_json())))
}

/// Queues the digest of the completed period that ends on `period_end`
/// (default: the last completed one) to the email recipients of the
/// notification settings, whether or not digests are enabled; answers with
/// the figures.
async fn digest_now(
    State(state): State<Arc<AppState>>,
    caller: Caller,
    JsonBytes(body): JsonBytes,
) -> Result<Json<Value>, ApiError> {
    caller.require_admin()?;
    let body = optional_body(&body)?.unwrap_or(json!({}));
    let map = body_fields(&body, "a digest request", &["frequency", "period_end"])?;
    let account = state.account(caller.account_id)?;
    let (name, notifications) = {
        let row = account.row.lock().unwrap_or_else(|p| p.into_inner());
        (row.name.clone(), row.notifications.clone())
    };
    let frequency = match map.get("frequency") {
        None => notifications["email"]["frequency"]
            .as_str()
            .and_then(Frequency::parse)
            .unwrap_or(Frequency::Weekly),
        Some(value) => value.as_str().and_then(Frequency::parse).ok_or_else(|| {
            ApiError::bad_field("frequency", "field `frequency` must be `daily` or `weekly`")
        })?,
    };
    let period_end = match map.get("period_end") {
        None => None,
        Some(value) => Some(
            value
                .as_str()
                .and_then(|text| text.parse::<chrono::NaiveDate>().ok())
                .ok_or_else(|| {
                    ApiError::bad_field(
                        "period_end",
                        "field `period_end` must be a date YYYY-MM-DD",
                    )
                })?,
        ),
    };
    let recipients: Vec<String> = notifications["email"]["recipients"]
        .as_array()
        .map(|list| {
            list.iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default();
    if recipients.is_empty() {
        return Err(ApiError::bad_field(
            "email.recipients",
            "notification setting `email.recipients` is empty; set recipients first",
        ));
    }
    let digest = read_ledger(account, move |ledger| {
        let settings = ledger.settings();
        let today = chrono::Utc::now()
            .with_timezone(&settings.timezone)
            .date_naive();
        let Some(end) = period_end else {
            let end = frequency.last_completed(today, settings.first_day_of_week);
            return outbound::compute_digest(ledger, frequency, end);
        };
        if end >= today {
            return Err(ApiError::bad_field(
                "period_end",
                format!("field `period_end`: the period ending {end} is not over (today is {today} in the account's time zone); a digest is of a completed period"),
            ));
        }
        outbound::compute_digest(ledger, frequency, end).map_err(|error| match error {
            ApiError::Core(submetrics::Error::InvalidQuery { param, reason }) if param == "as_of" => {
                ApiError::bad_field("period_end", format!("field `period_end`: {reason}"))
            }
            other => other,
        })
    })
    .await?;
    let email = outbound::digest_email(&name, &recipients, &digest);
    let event_id = format!("dig_{}", crate::auth::hex(&outbound::random_bytes::<12>()?));
    let (target, owner) = (recipients.join(","), Arc::clone(&state));
    blocking(move || {
        owner.outbound.db().enqueue(
            caller.account_id,
            Channel::Email,
            &target,
            &event_id,
            "digest",
            &email.to_string(),
        )?;
        owner.outbound.wake();
        Ok(())
    })
    .await?;
    let mut answer = Map::new();
    answer.insert("queued".into(), json!(true));
    answer.insert("recipients".into(), json!(recipients));
    answer.insert("digest".into(), digest);
    Ok(Json(Value::Object(answer)))
}
