//! Facts: what the engine computes that an event can be sent for, each
//! with a stable key.
//!
//! - a customer record exists (`customer.created`), keyed by account and
//!   customer;
//! - a movement row (`customer.new`, `.expansion`, `.contraction`,
//!   `.churned`, `.reactivated`), keyed by account, customer, local day,
//!   kind and currency; its fingerprint is its subtype and MRR change in
//!   its own currency (base-currency amounts follow FX rates and are no
//!   part of it);
//! - a failed invoice (`invoice.failed`) and a paid refund
//!   (`invoice.refunded`), keyed by account and invoice.
//!
//! The same ledger always gives the same facts with the same keys, so a
//! recompute, a restart or a record sent again finds nothing new.

use super::catalog;
use chrono::{DateTime, SecondsFormat, Utc};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use std::collections::BTreeSet;
use submetrics::{Customer, Ledger, Movement, MovementFilter, MovementKind, StoredInvoice};
use submetrics::{CustomerId, model::InvoiceStatus, model::InvoiceType};

/// Which customers a scan looks at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Scope {
    All,
    Customers(BTreeSet<String>),
}

impl Scope {
    /// Adds `other` to this scope.
    pub fn extend(&mut self, other: Scope) {
        match (&mut *self, other) {
            (Scope::All, _) => {}
            (_, Scope::All) => *self = Scope::All,
            (Scope::Customers(mine), Scope::Customers(theirs)) => mine.extend(theirs),
        }
    }
}

/// Where a fact comes from, to build its event's data from.
#[derive(Debug, Clone)]
pub enum Source {
    Customer,
    Movement(Movement),
    Invoice(String),
}

/// One fact of the ledger.
#[derive(Debug, Clone)]
pub struct Fact {
    /// Stable key: 32 hex digits of a hash of what identifies the fact.
    pub key: String,
    pub event_type: &'static str,
    pub customer: String,
    /// What, when it changes, makes the fact's event outdated.
    pub fingerprint: String,
    /// Events go out ordered by this: the fact's day, then a rank.
    pub order: (String, u8),
    pub source: Source,
}

/// 32 hex digits of the SHA-256 of the parts, each ended by a unit
/// separator so that no two lists of parts hash alike.
pub fn stable_hash(parts: &[&str]) -> String {
    let mut hasher = Sha256::new();
    for part in parts {
        hasher.update(part.as_bytes());
        hasher.update([0x1f]);
    }
    crate::auth::hex(&hasher.finalize()[..16])
}

/// The id of the event a fact fires at its `revision`-th appearance: the
/// first (revision 0) is `evt_` and the fact's key itself.
pub fn event_id(fact_key: &str, revision: i64) -> String {
    if revision == 0 {
        format!("evt_{fact_key}")
    } else {
        format!("evt_{}", stable_hash(&[fact_key, &revision.to_string()]))
    }
}

/// The id of the event retracting a fact's `revision`-th event.
pub fn retraction_id(fact_key: &str, revision: i64) -> String {
    format!(
        "evt_{}",
        stable_hash(&[fact_key, "retracted", &revision.to_string()])
    )
}

/// The event type of a movement kind.
pub fn movement_event(kind: MovementKind) -> &'static str {
    match kind {
        MovementKind::New => catalog::CUSTOMER_NEW,
        MovementKind::Expansion => catalog::CUSTOMER_EXPANSION,
        MovementKind::Contraction => catalog::CUSTOMER_CONTRACTION,
        MovementKind::Churn => catalog::CUSTOMER_CHURNED,
        MovementKind::Reactivation => catalog::CUSTOMER_REACTIVATED,
    }
}

/// Whether a fact's event is retracted when the fact goes away or
/// changes (movements are; a customer record or an invoice is not).
pub fn retractable(event_type: &str) -> bool {
    !matches!(
        event_type,
        catalog::CUSTOMER_CREATED | catalog::INVOICE_FAILED | catalog::INVOICE_REFUNDED
    )
}

/// The facts of `scope` in the ledger at `as_of`: movements up to and
/// including the day of `as_of`.
pub fn collect(
    ledger: &Ledger,
    account: i64,
    scope: &Scope,
    as_of: DateTime<Utc>,
) -> submetrics::Result<Vec<Fact>> {
    let account = account.to_string();
    let mut facts = Vec::new();
    match scope {
        Scope::All => {
            for customer in ledger.customers() {
                customer_facts(ledger, &account, customer, &mut facts);
            }
            for movement in ledger.customer_movements(as_of)?.iter() {
                facts.push(movement_fact(&account, movement));
            }
        }
        Scope::Customers(ids) => {
            for id in ids {
                let Some(customer) = ledger.customer(id) else {
                    continue;
                };
                customer_facts(ledger, &account, customer, &mut facts);
                let filter = MovementFilter {
                    customer: Some(CustomerId::from(id.as_str())),
                    ..MovementFilter::default()
                };
                for movement in ledger.movements(as_of, &filter)? {
                    facts.push(movement_fact(&account, &movement));
                }
            }
        }
    }
    Ok(facts)
}

/// A customer's record fact and its invoice facts.
fn customer_facts(ledger: &Ledger, account: &str, customer: &Customer, facts: &mut Vec<Fact>) {
    let id = customer.id.as_str();
    let tz = ledger.settings().timezone;
    let created_day = customer
        .created_date
        .map(|t| t.local_date(tz).to_string())
        .unwrap_or_default();
    facts.push(Fact {
        key: stable_hash(&[account, catalog::CUSTOMER_CREATED, id]),
        event_type: catalog::CUSTOMER_CREATED,
        customer: id.to_string(),
        fingerprint: String::new(),
        order: (created_day, 0),
        source: Source::Customer,
    });
    for invoice in ledger.customer_invoices(id) {
        let event_type = match (invoice.kind, invoice.status) {
            (_, InvoiceStatus::Failed) => catalog::INVOICE_FAILED,
            (InvoiceType::Refund, InvoiceStatus::Paid) => catalog::INVOICE_REFUNDED,
            _ => continue,
        };
        facts.push(Fact {
            key: stable_hash(&[account, event_type, invoice.id()]),
            event_type,
            customer: id.to_string(),
            fingerprint: String::new(),
            order: (invoice.invoice_date.local_date(tz).to_string(), 2),
            source: Source::Invoice(invoice.id().to_string()),
        });
    }
}

fn movement_fact(account: &str, movement: &Movement) -> Fact {
    let date = movement.date.to_string();
    Fact {
        key: stable_hash(&[
            account,
            movement.customer_id.as_str(),
            &date,
            movement.kind.as_str(),
            movement.currency.as_str(),
        ]),
        event_type: movement_event(movement.kind),
        customer: movement.customer_id.to_string(),
        fingerprint: format!("{}:{}", movement.subtype.as_str(), movement.mrr_change),
        order: (date, 1),
        source: Source::Movement(movement.clone()),
    }
}

/// The account as events show it.
pub fn account_json(id: i64, name: &str) -> Value {
    json!({"id": id.to_string(), "name": name})
}

/// A customer as events show it (a deleted one by its id alone).
pub fn customer_json(ledger: &Ledger, id: &str) -> Value {
    match ledger.customer(id) {
        Some(customer) => json!({
            "id": customer.id,
            "name": &*customer.name,
            "email": customer.email.as_deref(),
            "country": customer.country.as_deref(),
        }),
        None => json!({"id": id, "name": null, "email": null, "country": null}),
    }
}

/// A movement as events show it, amounts in cents.
pub fn movement_json(ledger: &Ledger, movement: &Movement) -> Value {
    json!({
        "date": movement.date.to_string(),
        "kind": movement.kind.as_str(),
        "subtype": movement.subtype.as_str(),
        "mrr_change": movement.mrr_change,
        "currency": movement.currency.as_str(),
        "mrr_change_base_currency": movement.mrr_change_base_currency,
        "base_currency": ledger.settings().base_currency.as_str(),
        "customer_count_change": movement.customer_count_change,
        "quantity_change": movement.quantity_change,
        "plans_before": movement.plans_before.iter().map(|p| p.as_str()).collect::<Vec<_>>(),
        "plans_after": movement.plans_after.iter().map(|p| p.as_str()).collect::<Vec<_>>(),
    })
}

/// An invoice as events show it; the base-currency amount is `null` when
/// no FX rate converts it.
pub fn invoice_json(ledger: &Ledger, invoice: StoredInvoice<'_>) -> Value {
    let settings = ledger.settings();
    let base = settings.base_currency;
    let day = invoice.invoice_date.local_date(settings.timezone);
    let in_base = ledger
        .fx()
        .convert(invoice.amount, invoice.currency, base, day)
        .ok();
    json!({
        "id": invoice.id(),
        "type": invoice.kind.as_str(),
        "status": invoice.status.as_str(),
        "invoice_date": invoice
            .invoice_date
            .instant(settings.timezone)
            .to_rfc3339_opts(SecondsFormat::Secs, true),
        "amount": invoice.amount,
        "currency": invoice.currency.as_str(),
        "amount_base_currency": in_base,
        "base_currency": base.as_str(),
        "refunded_invoice_id": invoice.details().refunded_invoice_id.as_ref().map(|i| i.as_str()),
    })
}

impl Fact {
    /// The event's `data` (without `as_of`), read from the ledger.
    pub fn data(&self, ledger: &Ledger, account: &Value) -> Value {
        let customer = customer_json(ledger, &self.customer);
        match &self.source {
            Source::Customer => json!({"account": account, "customer": customer}),
            Source::Movement(movement) => json!({
                "account": account,
                "customer": customer,
                "movement": movement_json(ledger, movement),
            }),
            Source::Invoice(id) => json!({
                "account": account,
                "customer": customer,
                "invoice": ledger.invoice(id).map(|i| invoice_json(ledger, i)),
            }),
        }
    }
}
