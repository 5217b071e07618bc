//! The schemas of webhooks, their deliveries, event types and digests.

use super::{
    answer, array_of, closed_input, integer, list_answer, nullable_string, page_of, reference,
    string,
};
use serde_json::{Value, json};

/// Webhook subscriptions, their deliveries, event types and digests
/// (docs/events.md).
pub(super) fn webhook_schemas() -> Value {
    let webhook_fields = json!({
        "id": string(),
        "url": string(),
        "events": array_of(string()),
        "enabled": {"type": "boolean"},
        "description": nullable_string(),
        "status": {"type": "string", "enum": ["active", "failing", "disabled"]},
        "failing_since": nullable_string(),
        "created_at": string(),
        "updated_at": string(),
    });
    let mut created = webhook_fields.clone();
    created["secret"] = json!({
        "type": "string",
        "description": "The signing secret (`whsec_` + base64), shown only in this answer",
    });
    let nullable_integer = json!({"type": "integer", "format": "int64", "nullable": true});
    let customer_ref = answer(json!({"id": string(), "name": nullable_string()}));
    json!({
        "WebhookInput": closed_input(
            "A webhook subscription: an http(s) target and the event types it takes",
            json!({
                "url": string(),
                "events": array_of(string()),
                "enabled": {"type": "boolean", "default": true},
                "description": nullable_string(),
            }),
            &["url", "events"],
        ),
        "WebhookPatch": closed_input(
            "Fields of a webhook subscription to change",
            json!({
                "url": string(),
                "events": array_of(string()),
                "enabled": {"type": "boolean"},
                "description": nullable_string(),
            }),
            &[],
        ),
        "Webhook": answer(webhook_fields),
        "NewWebhook": answer(created),
        "WebhookPage": page_of("Webhook"),
        "WebhookList": list_answer("WebhookPage"),
        "WebhookDeleted": answer(json!({"deleted": {"type": "boolean"}, "id": string()})),
        "EventType": answer(json!({"name": string(), "description": string()})),
        "EventTypeList": answer(json!({"events": array_of(reference("EventType"))})),
        "EventPayload": {
            "type": "object",
            "description": "An event as delivered: its type, when it was sent, and its data (docs/events.md)",
            "properties": {
                "type": string(),
                "timestamp": string(),
                "data": {"type": "object", "additionalProperties": true},
            },
            "required": ["type", "timestamp", "data"],
        },
        "WebhookTestInput": closed_input(
            "The event type of the sample to send (default `webhook.test`)",
            json!({"event": string()}),
            &[],
        ),
        "Delivery": answer(json!({
            "id": string(),
            "event_id": string(),
            "event_type": string(),
            "status": string(),
            "attempts": integer(),
            "next_attempt_at": nullable_string(),
            "last_attempt_at": nullable_string(),
            "last_status_code": nullable_integer,
            "last_error": nullable_string(),
            "created_at": string(),
            "delivered_at": nullable_string(),
        })),
        "DeliveryPage": page_of("Delivery"),
        "DeliveryList": list_answer("DeliveryPage"),
        "DigestInput": closed_input(
            "The digest to send: `daily` or `weekly`, and the last day of the period (default: the last completed one)",
            json!({"frequency": {"type": "string", "enum": ["daily", "weekly"]}, "period_end": string()}),
            &[],
        ),
        "MovementKindTotal": answer(json!({"count": integer(), "mrr_change": integer()})),
        "Digest": answer(json!({
            "frequency": string(),
            "period_start": string(),
            "period_end": string(),
            "currency": string(),
            "mrr_start": integer(),
            "mrr_end": integer(),
            "subscribers_end": integer(),
            "net_mrr_change": integer(),
            "movements": {"type": "object", "additionalProperties": reference("MovementKindTotal")},
            "new_customers": array_of(customer_ref.clone()),
            "churned_customers": array_of(customer_ref),
        })),
        "DigestQueued": answer(json!({
            "queued": {"type": "boolean"},
            "recipients": array_of(string()),
            "digest": reference("Digest"),
        })),
    })
}
