//! Subscriptions: their end (immediate, at period end, or scheduled) as
//! cancellation invoices, one per subscription item.

use super::object::Obj;
use crate::error::Error;
use serde_json::{Value, json};

/// What a subscription says of its end.
#[derive(Debug, Default)]
pub(crate) struct Ending {
    /// Cancellation records to store.
    pub records: Vec<Value>,
    /// Cancellation record ids to remove: the subscription is not (or no
    /// longer) ending.
    pub removed: Vec<String>,
}

/// The cancellation records of a subscription, `{subscription}/{item}/cancellation`
/// per item (items are our subscriptions), dated when it ends:
/// `ended_at` once it has ended, else `cancel_at` (a scheduled end, also
/// set by `cancel_at_period_end`), else the current period's end when
/// `cancel_at_period_end` is set, else `canceled_at` for a canceled or
/// expired one. A subscription that is not ending removes them, so an
/// undone cancellation is undone here too.
pub(crate) fn ending(value: &Value, data_source: &str) -> Result<Ending, Error> {
    let o = Obj::new("subscription", value);
    let id = o.required_id("id")?;
    let items = o.list("items")?;
    let mut keys = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let n = o.nested(format!("items.data[{i}]"), item);
        match n.id_at("id")? {
            Some(item_id) => keys.push(format!("{id}/{item_id}")),
            None => return Err(n.error("id", "is required")),
        }
    }
    if keys.is_empty() {
        keys.push(id.to_string());
    }
    let status = o.text("status")?.unwrap_or("");
    let period_end = match o.time("current_period_end")? {
        Some(end) => Some(end),
        None => match items.first() {
            Some(item) => o
                .nested("items.data[0]".to_string(), item)
                .time("current_period_end")?,
            None => None,
        },
    };
    let end = if let Some(ended) = o.time("ended_at")? {
        Some(ended)
    } else if let Some(cancel_at) = o.time("cancel_at")? {
        Some(cancel_at)
    } else if o.boolean("cancel_at_period_end")? {
        Some(period_end.ok_or_else(|| {
            o.error(
                "current_period_end",
                "is required to date a cancellation at period end",
            )
        })?)
    } else if matches!(status, "canceled" | "incomplete_expired") {
        Some(o.required_time("canceled_at")?)
    } else {
        None
    };
    let mut ending = Ending::default();
    let Some(end) = end else {
        ending.removed = keys.iter().map(|k| format!("{k}/cancellation")).collect();
        return Ok(ending);
    };
    let customer = o.required_id("customer")?;
    let currency = match o.currency("currency")? {
        Some(currency) => currency,
        None => items
            .iter()
            .find_map(|item| {
                item.pointer("/price/currency")
                    .or_else(|| item.pointer("/plan/currency"))
                    .and_then(Value::as_str)
            })
            .map(str::to_ascii_uppercase)
            .ok_or_else(|| o.error("currency", "is required"))?,
    };
    for key in keys {
        ending.records.push(json!({
            "id": format!("{key}/cancellation"),
            "customer_id": customer,
            "type": "cancellation",
            "invoice_date": end,
            "amount": 0,
            "currency": currency,
            "subscription_id": key,
            "data_source": data_source,
        }));
    }
    Ok(ending)
}
