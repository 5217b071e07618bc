//! The event types, what each means, and a sample payload of each (the
//! same samples `docs/events.md` shows).

use serde_json::{Value, json};

/// One event type.
pub struct EventType {
    pub name: &'static str,
    pub description: &'static str,
}

pub const CUSTOMER_CREATED: &str = "customer.created";
pub const CUSTOMER_NEW: &str = "customer.new";
pub const CUSTOMER_EXPANSION: &str = "customer.expansion";
pub const CUSTOMER_CONTRACTION: &str = "customer.contraction";
pub const CUSTOMER_CHURNED: &str = "customer.churned";
pub const CUSTOMER_REACTIVATED: &str = "customer.reactivated";
pub const MOVEMENT_RETRACTED: &str = "customer.movement_retracted";
pub const INVOICE_FAILED: &str = "invoice.failed";
pub const INVOICE_REFUNDED: &str = "invoice.refunded";
/// Sent only by `POST /webhooks/{id}/test`.
pub const WEBHOOK_TEST: &str = "webhook.test";

/// Every event type a subscription can take, in documentation order.
pub const EVENT_TYPES: &[EventType] = &[
    EventType {
        name: CUSTOMER_CREATED,
        description: "A customer record was created.",
    },
    EventType {
        name: CUSTOMER_NEW,
        description: "A customer paid for the first time: a new-MRR movement (subtype new or new_from_trial).",
    },
    EventType {
        name: CUSTOMER_EXPANSION,
        description: "A paying customer's MRR grew (subtype expansion or upgrade).",
    },
    EventType {
        name: CUSTOMER_CONTRACTION,
        description: "A paying customer's MRR shrank without churning (subtype contraction or downgrade).",
    },
    EventType {
        name: CUSTOMER_CHURNED,
        description: "A customer's MRR in a currency went to zero; the movement's subtype says why: cancellation, refund or lapse.",
    },
    EventType {
        name: CUSTOMER_REACTIVATED,
        description: "A churned customer paid again.",
    },
    EventType {
        name: MOVEMENT_RETRACTED,
        description: "A correction removed or changed a movement an event was sent for; `data.retracted_event_id` names that event.",
    },
    EventType {
        name: INVOICE_FAILED,
        description: "An invoice's payment failed (status failed).",
    },
    EventType {
        name: INVOICE_REFUNDED,
        description: "A refund was recorded (a paid invoice of type refund).",
    },
    EventType {
        name: WEBHOOK_TEST,
        description: "A test sent on request by POST /webhooks/{id}/test.",
    },
];

/// Whether `name` is an event type.
pub fn is_event_type(name: &str) -> bool {
    EVENT_TYPES.iter().any(|t| t.name == name)
}

/// The chat notification kinds (`slack.events` of the notification
/// settings) and the event type each stands for.
pub const CHAT_KINDS: &[(&str, &str)] = &[
    ("new_customer", CUSTOMER_NEW),
    ("expansion", CUSTOMER_EXPANSION),
    ("contraction", CUSTOMER_CONTRACTION),
    ("churn", CUSTOMER_CHURNED),
    ("reactivation", CUSTOMER_REACTIVATED),
    ("failed_payment", INVOICE_FAILED),
    ("refund", INVOICE_REFUNDED),
];

/// A whole event payload in the Standard Webhooks shape.
pub fn payload(event_type: &str, timestamp: &str, data: Value) -> Value {
    json!({"type": event_type, "timestamp": timestamp, "data": data})
}

/// [`payload`] as JSON text, of `data` given as the JSON text of a value
/// (put in as it is).
pub fn payload_text(event_type: &str, timestamp: &str, data: &str) -> String {
    let text = |s: &str| Value::from(s).to_string();
    format!(
        r#"{{"type":{},"timestamp":{},"data":{data}}}"#,
        text(event_type),
        text(timestamp)
    )
}

/// A sample payload of `name`, or `None` for an unknown name.
pub fn sample(name: &str) -> Option<Value> {
    let account = json!({"id": "1", "name": "default"});
    let customer = json!({"id": "cus_42", "name": "Acme GmbH", "email": "billing@acme.example", "country": "DE"});
    let movement =
        |kind: &str, subtype: &str, change: i64, count: i64, before: Value, after: Value| {
            json!({
                "date": "2024-03-01",
                "kind": kind,
                "subtype": subtype,
                "mrr_change": change,
                "currency": "EUR",
                "mrr_change_base_currency": change * 108 / 100,
                "base_currency": "USD",
                "customer_count_change": count,
                "quantity_change": 0,
                "plans_before": before,
                "plans_after": after,
            })
        };
    let with_movement = |movement: Value| json!({"account": account, "customer": customer, "movement": movement, "as_of": "2024-03-01T09:30:00Z"});
    let invoice = |kind: &str, status: &str, amount: i64| {
        json!({
            "account": account,
            "customer": customer,
            "invoice": {
                "id": "inv_1001",
                "type": kind,
                "status": status,
                "invoice_date": "2024-03-01T00:00:00Z",
                "amount": amount,
                "currency": "EUR",
                "amount_base_currency": amount * 108 / 100,
                "base_currency": "USD",
                "refunded_invoice_id": if kind == "refund" { json!("inv_1000") } else { Value::Null },
            },
            "as_of": "2024-03-01T09:30:00Z",
        })
    };
    let data = match name {
        CUSTOMER_CREATED => {
            json!({"account": account, "customer": customer, "as_of": "2024-03-01T09:30:00Z"})
        }
        CUSTOMER_NEW => with_movement(movement(
            "new",
            "new",
            4900,
            1,
            json!([]),
            json!(["pro_monthly"]),
        )),
        CUSTOMER_EXPANSION => with_movement(movement(
            "expansion",
            "upgrade",
            5000,
            0,
            json!(["pro_monthly"]),
            json!(["business_monthly"]),
        )),
        CUSTOMER_CONTRACTION => with_movement(movement(
            "contraction",
            "downgrade",
            -5000,
            0,
            json!(["business_monthly"]),
            json!(["pro_monthly"]),
        )),
        CUSTOMER_CHURNED => with_movement(movement(
            "churn",
            "cancellation",
            -4900,
            -1,
            json!(["pro_monthly"]),
            json!([]),
        )),
        CUSTOMER_REACTIVATED => with_movement(movement(
            "reactivation",
            "reactivation",
            4900,
            1,
            json!([]),
            json!(["pro_monthly"]),
        )),
        MOVEMENT_RETRACTED => {
            let mut data = with_movement(movement(
                "new",
                "new",
                4900,
                1,
                json!([]),
                json!(["pro_monthly"]),
            ));
            data["retracted_event_id"] = json!("evt_5f0c1a9e3b7d4c2a8e6f1b0d9c7a5e3f");
            data["retracted_type"] = json!(CUSTOMER_NEW);
            data
        }
        INVOICE_FAILED => invoice("subscription", "failed", 4900),
        INVOICE_REFUNDED => invoice("refund", "paid", -4900),
        WEBHOOK_TEST => {
            json!({"account": account, "message": "This is a test event.", "as_of": "2024-03-01T09:30:00Z"})
        }
        _ => return None,
    };
    Some(payload(name, "2024-03-01T09:30:00Z", data))
}
