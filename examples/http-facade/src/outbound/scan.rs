//! The scanner: fires events for the facts that appeared, changed or went
//! away since they were last looked at.
//!
//! For each fact of the scanned customers, against the fact stored when
//! its event was last fired:
//! - none stored: its event fires (revision 0, id `evt_` + the fact key);
//! - stored, live, same fingerprint: nothing (a recompute, a restart or a
//!   record sent again);
//! - stored, live, another fingerprint (a movement's amount or subtype
//!   changed): `customer.movement_retracted` for the event sent, then the
//!   fact's event again at the next revision (a new id);
//! - stored but not live (it went away before): its event fires again at
//!   the next revision.
//!
//! A stored live fact no longer found (a correction removed the movement)
//! fires `customer.movement_retracted` and is stored as not live. Customer
//! and invoice facts are not retracted; they fire again only if they
//! appear again after going away.

use super::Outbound;
use super::catalog::{self, CHAT_KINDS, MOVEMENT_RETRACTED};
use super::db::{Channel, FactChange, NewEvent, StoredFact, Webhook};
use super::facts::{self, Fact, Scope, retractable};
use crate::error::ApiError;
use crate::state::{Account, AppState};
use chrono::{DateTime, SecondsFormat, Utc};
use serde_json::{Value, json};
use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};

/// The scanner loop: every account whole at start and at every scan
/// interval (with the digests due), and marked accounts as they come.
pub fn run(state: Weak<AppState>, outbound: Arc<Outbound>) {
    let interval = outbound.config().scan_interval;
    let mut next_full = Instant::now();
    loop {
        // The state is held only while there is work, so a shutdown can
        // close the database while this waits.
        let mut due = if Instant::now() >= next_full {
            let Some(state) = state.upgrade() else {
                return;
            };
            next_full = Instant::now() + interval;
            for id in state.account_ids() {
                outbound.mark(id, Scope::All);
            }
            super::digest::queue_due(&state);
            drop(state);
            outbound.take_dirty(Instant::now())
        } else {
            outbound.take_dirty(next_full)
        };
        if outbound.stopping() {
            return;
        }
        let Some(state) = state.upgrade() else {
            return;
        };
        let started = Instant::now();
        let mut accounts: Vec<i64> = due.keys().copied().collect();
        accounts.sort_unstable();
        for id in accounts {
            let Some(scope) = due.remove(&id) else {
                continue;
            };
            let Ok(account) = state.account(id) else {
                continue;
            };
            for part in scope.parts(SCAN_PART) {
                if let Err(error) = scan(&state, &account, &part, Utc::now()) {
                    eprintln!("warning: events of account {id} were not scanned: {error}");
                    // Tried again with the next whole scan.
                    break;
                }
            }
        }
        drop(state);
        outbound.rest(started.elapsed().min(MAX_REST));
    }
}

/// The most customers one scan takes: the customers of many writes (a
/// bulk import's) are scanned in parts, each holding the ledger's read lock
/// and the store's lock for its own customers only, so a write that comes
/// meanwhile waits for one part at most.
const SCAN_PART: usize = 5_000;

/// The longest the scanner rests after a scan (see [`Outbound::rest`]).
const MAX_REST: Duration = Duration::from_millis(250);

/// One event to fire, before its deliveries are known.
struct Firing {
    id: String,
    event_type: &'static str,
    customer: String,
    /// The event's `data` as JSON text.
    data: String,
}

/// Scans `scope` of an account at `as_of`: fires, records and queues the
/// events due (see the module documentation). Returns how many fired.
pub fn scan(
    state: &AppState,
    account: &Account,
    scope: &Scope,
    as_of: DateTime<Utc>,
) -> Result<usize, ApiError> {
    let outbound = &state.outbound;
    let (account_id, account_name, notifications) = {
        let row = account.row.lock().unwrap_or_else(|p| p.into_inner());
        (row.id, row.name.clone(), row.notifications.clone())
    };
    let stored: HashMap<String, StoredFact> = {
        let db = outbound.db();
        match scope {
            Scope::All => db.facts(account_id, None)?.into_iter().collect(),
            Scope::Customers(ids) => {
                let mut stored = HashMap::new();
                for id in ids {
                    stored.extend(db.facts(account_id, Some(id))?);
                }
                stored
            }
        }
    };
    let account_json = facts::account_json(account_id, &account_name);
    let account_view = facts::AccountView::new(account_id, &account_name);
    let timestamp = as_of.to_rfc3339_opts(SecondsFormat::Millis, true);
    let as_of_text = as_of.to_rfc3339_opts(SecondsFormat::Secs, true);
    let mut changes: Vec<FactChange> = Vec::new();
    let mut firings: Vec<Firing> = Vec::new();
    // (stored fact, its key) of the events to retract.
    let mut retractions: Vec<(String, StoredFact)> = Vec::new();
    {
        let ledger = account.ledger.read().unwrap_or_else(|p| p.into_inner());
        let mut current: Vec<Fact> = facts::collect(&ledger, account_id, scope, as_of)?;
        current.sort_by(|a, b| (&a.order, &a.customer).cmp(&(&b.order, &b.customer)));
        let mut seen: HashSet<&str> = HashSet::with_capacity(current.len());
        let mut fire = |fact: &Fact, revision: i64, changes: &mut Vec<FactChange>| {
            let id = facts::event_id(&fact.key, revision);
            firings.push(Firing {
                id: id.clone(),
                event_type: fact.event_type,
                customer: fact.customer.clone(),
                data: fact.data_text(&ledger, &account_view, &as_of_text),
            });
            changes.push(FactChange {
                fact: fact.key.clone(),
                stored: StoredFact {
                    customer: fact.customer.clone(),
                    event_type: fact.event_type.to_string(),
                    fingerprint: fact.fingerprint.clone(),
                    revision,
                    live: true,
                    event_id: id,
                },
            });
        };
        for fact in &current {
            if !seen.insert(&fact.key) {
                continue;
            }
            match stored.get(&fact.key) {
                None => fire(fact, 0, &mut changes),
                Some(old) if old.live && old.fingerprint == fact.fingerprint => {}
                Some(old) if old.live && !retractable(&old.event_type) => {
                    changes.push(FactChange {
                        fact: fact.key.clone(),
                        stored: StoredFact {
                            fingerprint: fact.fingerprint.clone(),
                            ..old.clone()
                        },
                    });
                }
                Some(old) if old.live => {
                    retractions.push((fact.key.clone(), old.clone()));
                    fire(fact, old.revision + 1, &mut changes);
                }
                Some(old) => fire(fact, old.revision + 1, &mut changes),
            }
        }
        let mut gone: Vec<(&String, &StoredFact)> = stored
            .iter()
            .filter(|(key, old)| old.live && !seen.contains(key.as_str()))
            .collect();
        gone.sort_by(|a, b| a.0.cmp(b.0));
        for (key, old) in gone {
            if retractable(&old.event_type) {
                retractions.push((key.clone(), old.clone()));
            }
            changes.push(FactChange {
                fact: key.clone(),
                stored: StoredFact {
                    live: false,
                    ..old.clone()
                },
            });
        }
    }
    if changes.is_empty() {
        return Ok(0);
    }
    let webhooks = outbound.db().webhooks(account_id)?;
    let chat = chat_target(&notifications);
    let mut events = Vec::with_capacity(retractions.len() + firings.len());
    for (key, old) in &retractions {
        let original = outbound.db().event_payload(account_id, &old.event_id)?;
        let mut data = original
            .and_then(|mut p| p.get_mut("data").map(Value::take))
            .unwrap_or_else(|| json!({"account": account_json, "customer": {"id": old.customer}}));
        data["retracted_event_id"] = json!(old.event_id);
        data["retracted_type"] = json!(old.event_type);
        data["as_of"] = json!(as_of_text);
        let id = facts::retraction_id(key, old.revision);
        events.push(new_event(
            id,
            MOVEMENT_RETRACTED,
            &old.customer,
            data.to_string(),
            &timestamp,
            &webhooks,
            chat.as_ref(),
        ));
    }
    for firing in firings {
        events.push(new_event(
            firing.id,
            firing.event_type,
            &firing.customer,
            firing.data,
            &timestamp,
            &webhooks,
            chat.as_ref(),
        ));
    }
    let fired = events.len();
    let queued = {
        // The store's lock first: a record write waiting for this
        // transaction wakes as soon as it ends, rather than polling the
        // database's write lock (SQLite's busy wait sleeps up to 100 ms).
        let _store = state.store();
        outbound.db().record(account_id, &changes, &events)?
    };
    if queued > 0 {
        outbound.wake();
    }
    Ok(fired)
}

/// The chat notification target of an account's settings, when enabled
/// with an incoming-webhook URL: (URL, event types chosen).
fn chat_target(notifications: &Value) -> Option<(String, Vec<&'static str>)> {
    let slack = notifications.get("slack")?;
    if slack.get("enabled") != Some(&Value::Bool(true)) {
        return None;
    }
    let url = slack.get("webhook_url")?.as_str()?.trim();
    if url.is_empty() {
        return None;
    }
    let chosen: Vec<&str> = slack
        .get("events")?
        .as_array()?
        .iter()
        .filter_map(Value::as_str)
        .collect();
    let types = CHAT_KINDS
        .iter()
        .filter(|(kind, _)| chosen.contains(kind))
        .map(|(_, event_type)| *event_type)
        .collect();
    Some((url.to_string(), types))
}

/// An event with its payload and the deliveries it owes: every webhook
/// that takes its type, and the chat target when its kind was chosen.
/// `data` is the JSON text of the event's data.
fn new_event(
    id: String,
    event_type: &'static str,
    customer: &str,
    data: String,
    timestamp: &str,
    webhooks: &[Webhook],
    chat: Option<&(String, Vec<&'static str>)>,
) -> NewEvent {
    let text = chat
        .filter(|(_, types)| types.contains(&event_type))
        .map(|(url, _)| {
            let data: Value = serde_json::from_str(&data).unwrap_or_default();
            (url.clone(), chat_text(event_type, &data))
        });
    let payload = catalog::payload_text(event_type, timestamp, &data);
    let mut deliveries: Vec<(Channel, String, String)> = webhooks
        .iter()
        .filter(|hook| hook.wants(event_type))
        .map(|hook| (Channel::Webhook, hook.id.clone(), payload.clone()))
        .collect();
    if let Some((url, text)) = text {
        deliveries.push((Channel::Chat, url, json!({"text": text}).to_string()));
    }
    NewEvent {
        id,
        event_type: event_type.to_string(),
        customer: Some(customer.to_string()),
        created: timestamp.to_string(),
        payload,
        deliveries,
    }
}

/// Cents as an amount with two decimals and the currency: `49.00 USD`.
pub fn money(cents: i64, currency: &str) -> String {
    let sign = if cents < 0 { "-" } else { "" };
    let cents = cents.unsigned_abs();
    format!("{sign}{}.{:02} {currency}", cents / 100, cents % 100)
}

/// The chat message of an event.
pub fn chat_text(event_type: &str, data: &Value) -> String {
    let customer = &data["customer"];
    let who = match customer["name"].as_str().filter(|n| !n.is_empty()) {
        Some(name) => format!("{name} ({})", customer["id"].as_str().unwrap_or_default()),
        None => customer["id"].as_str().unwrap_or_default().to_string(),
    };
    let movement = &data["movement"];
    let change = || {
        let own = money(
            movement["mrr_change"].as_i64().unwrap_or(0),
            movement["currency"].as_str().unwrap_or_default(),
        );
        format!(
            "{own} MRR on {}",
            movement["date"].as_str().unwrap_or_default()
        )
    };
    let invoice = &data["invoice"];
    let invoice_text = || {
        format!(
            "invoice {} of {}",
            invoice["id"].as_str().unwrap_or_default(),
            money(
                invoice["amount"].as_i64().unwrap_or(0),
                invoice["currency"].as_str().unwrap_or_default()
            )
        )
    };
    match event_type {
        catalog::CUSTOMER_NEW => format!("New customer: {who}, {}", change()),
        catalog::CUSTOMER_EXPANSION => format!("Expansion: {who}, {}", change()),
        catalog::CUSTOMER_CONTRACTION => format!("Contraction: {who}, {}", change()),
        catalog::CUSTOMER_CHURNED => format!(
            "Churn ({}): {who}, {}",
            movement["subtype"].as_str().unwrap_or_default(),
            change()
        ),
        catalog::CUSTOMER_REACTIVATED => format!("Reactivation: {who}, {}", change()),
        catalog::INVOICE_FAILED => format!("Failed payment: {who}, {}", invoice_text()),
        catalog::INVOICE_REFUNDED => format!("Refund: {who}, {}", invoice_text()),
        other => format!("{other}: {who}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chat_messages_name_the_customer_and_the_change() {
        let data = catalog::sample(catalog::CUSTOMER_CHURNED).unwrap()["data"].clone();
        assert_eq!(
            chat_text(catalog::CUSTOMER_CHURNED, &data),
            "Churn (cancellation): Acme GmbH (cus_42), -49.00 EUR MRR on 2024-03-01"
        );
        assert_eq!(money(5, "USD"), "0.05 USD");
        assert_eq!(money(-123456, "EUR"), "-1234.56 EUR");
    }
}
