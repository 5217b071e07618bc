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
use serde::Serialize;
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

    /// The scope in parts of at most `customers` customers each, in
    /// order; the whole account stays one part.
    pub fn parts(self, customers: usize) -> Vec<Scope> {
        match self {
            Scope::All => vec![Scope::All],
            Scope::Customers(ids) => {
                let ids: Vec<String> = ids.into_iter().collect();
                ids.chunks(customers.max(1))
                    .map(|part| Scope::Customers(part.iter().cloned().collect()))
                    .collect()
            }
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

/// The account as an event's `data` shows it.
#[derive(Serialize)]
pub struct AccountView<'a> {
    id: String,
    name: &'a str,
}

impl AccountView<'_> {
    pub fn new(id: i64, name: &str) -> AccountView<'_> {
        AccountView {
            id: id.to_string(),
            name,
        }
    }
}

/// A customer as events show it (a deleted one by its id alone, the other
/// fields null).
#[derive(Serialize)]
struct CustomerView<'a> {
    id: &'a str,
    name: Option<&'a str>,
    email: Option<&'a str>,
    country: Option<&'a str>,
}

impl<'a> CustomerView<'a> {
    fn new(ledger: &'a Ledger, id: &'a str) -> CustomerView<'a> {
        match ledger.customer(id) {
            Some(customer) => CustomerView {
                id: customer.id.as_str(),
                name: Some(&customer.name),
                email: customer.email.as_deref(),
                country: customer.country.as_deref(),
            },
            None => CustomerView {
                id,
                name: None,
                email: None,
                country: None,
            },
        }
    }
}

/// A movement as events show it, amounts in cents.
#[derive(Serialize)]
struct MovementView<'a> {
    date: String,
    kind: &'a str,
    subtype: &'a str,
    mrr_change: i64,
    currency: &'a str,
    mrr_change_base_currency: i64,
    base_currency: &'a str,
    customer_count_change: i32,
    quantity_change: i64,
    plans_before: Vec<&'a str>,
    plans_after: Vec<&'a str>,
}

impl<'a> MovementView<'a> {
    fn new(ledger: &'a Ledger, movement: &'a Movement) -> MovementView<'a> {
        MovementView {
            date: movement.date.to_string(),
            kind: movement.kind.as_str(),
            subtype: movement.subtype.as_str(),
            mrr_change: movement.mrr_change,
            currency: movement.currency.as_str(),
            mrr_change_base_currency: movement.mrr_change_base_currency,
            base_currency: ledger.settings().base_currency.as_str(),
            customer_count_change: movement.customer_count_change,
            quantity_change: movement.quantity_change,
            plans_before: movement.plans_before.iter().map(|p| p.as_str()).collect(),
            plans_after: movement.plans_after.iter().map(|p| p.as_str()).collect(),
        }
    }
}

/// An invoice as events show it; the base-currency amount is `null` when
/// no FX rate converts it.
#[derive(Serialize)]
struct InvoiceView<'a> {
    id: &'a str,
    #[serde(rename = "type")]
    kind: &'a str,
    status: &'a str,
    invoice_date: String,
    amount: i64,
    currency: &'a str,
    amount_base_currency: Option<i64>,
    base_currency: &'a str,
    refunded_invoice_id: Option<&'a str>,
}

impl<'a> InvoiceView<'a> {
    fn new(ledger: &'a Ledger, invoice: StoredInvoice<'a>) -> InvoiceView<'a> {
        let settings = ledger.settings();
        let base = settings.base_currency;
        let day = invoice.invoice_date.local_date(settings.timezone);
        InvoiceView {
            id: invoice.id(),
            kind: invoice.kind.as_str(),
            status: invoice.status.as_str(),
            invoice_date: invoice
                .invoice_date
                .instant(settings.timezone)
                .to_rfc3339_opts(SecondsFormat::Secs, true),
            amount: invoice.amount,
            currency: invoice.currency.as_str(),
            amount_base_currency: ledger
                .fx()
                .convert(invoice.amount, invoice.currency, base, day)
                .ok(),
            base_currency: base.as_str(),
            refunded_invoice_id: invoice
                .details()
                .refunded_invoice_id
                .as_ref()
                .map(|i| i.as_str()),
        }
    }
}

/// An event's `data`: the account, the customer, the movement or the
/// invoice of its fact (an invoice deleted since is `null`), and `as_of`
/// last.
#[derive(Serialize)]
struct DataView<'a> {
    account: &'a AccountView<'a>,
    customer: CustomerView<'a>,
    #[serde(skip_serializing_if = "Option::is_none")]
    movement: Option<MovementView<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    invoice: Option<Option<InvoiceView<'a>>>,
    as_of: &'a str,
}

impl Fact {
    /// The event's `data` as JSON text, read from the ledger: the account,
    /// the customer (see [`DataView`]), then `as_of`. Written straight from
    /// the ledger's records, with no `serde_json::Value` in between.
    pub fn data_text(&self, ledger: &Ledger, account: &AccountView<'_>, as_of: &str) -> String {
        let (movement, invoice) = match &self.source {
            Source::Customer => (None, None),
            Source::Movement(movement) => (Some(MovementView::new(ledger, movement)), None),
            Source::Invoice(id) => (
                None,
                Some(ledger.invoice(id).map(|i| InvoiceView::new(ledger, i))),
            ),
        };
        let data = DataView {
            account,
            customer: CustomerView::new(ledger, &self.customer),
            movement,
            invoice,
            as_of,
        };
        serde_json::to_string(&data).unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_scope_of_customers_comes_in_parts_in_order_and_the_whole_account_whole() {
        let ids =
            |ids: &[&str]| super::Scope::Customers(ids.iter().map(|id| id.to_string()).collect());
        assert_eq!(
            ids(&["d", "a", "c", "b", "e"]).parts(2),
            [ids(&["a", "b"]), ids(&["c", "d"]), ids(&["e"])]
        );
        assert_eq!(super::Scope::All.parts(2), [super::Scope::All]);
    }

    use super::*;
    use submetrics::{RecordKind, Settings};

    /// Every kind of fact's data, exactly as events carry it: the fields in
    /// their documented order, `as_of` last, a deleted invoice as `null`.
    #[test]
    fn event_data_is_written_in_order_from_the_ledger() {
        let mut ledger = Ledger::new(Settings::default());
        let write = |ledger: &mut Ledger, kind, record: Value| {
            let report = ledger.upsert(kind, &[record]);
            assert_eq!(report.results[0].error, None);
        };
        write(
            &mut ledger,
            RecordKind::Customers,
            json!({"id": "c1", "name": "Acme \"GmbH\"", "email": "a@acme.example"}),
        );
        write(
            &mut ledger,
            RecordKind::Plans,
            json!({"id": "pro", "name": "Pro", "interval": "month", "interval_count": 1,
                   "currency": "USD", "amount": 3000}),
        );
        for invoice in [
            json!({"id": "i1", "customer_id": "c1", "plan_id": "pro", "type": "subscription",
                   "invoice_date": "2024-01-05", "amount": 3000, "currency": "USD"}),
            json!({"id": "i2", "customer_id": "c1", "type": "one_time", "status": "failed",
                   "invoice_date": "2024-01-06", "amount": 500, "currency": "USD"}),
        ] {
            write(&mut ledger, RecordKind::Invoices, invoice);
        }
        let as_of: DateTime<Utc> = "2024-02-01T00:00:00Z".parse().unwrap();
        let facts = collect(
            &ledger,
            7,
            &Scope::Customers(BTreeSet::from(["c1".to_string()])),
            as_of,
        )
        .unwrap();
        let account = AccountView::new(7, "Main");
        let data: Vec<(&str, String)> = facts
            .iter()
            .map(|f| {
                (
                    f.event_type,
                    f.data_text(&ledger, &account, "2024-02-01T00:00:00Z"),
                )
            })
            .collect();
        let customer = r#""account":{"id":"7","name":"Main"},"customer":{"id":"c1","name":"Acme \"GmbH\"","email":"a@acme.example","country":null}"#;
        assert_eq!(
            data,
            [
                (
                    catalog::CUSTOMER_CREATED,
                    format!(r#"{{{customer},"as_of":"2024-02-01T00:00:00Z"}}"#)
                ),
                (
                    catalog::INVOICE_FAILED,
                    format!(
                        r#"{{{customer},"invoice":{{"id":"i2","type":"one-time","status":"failed","invoice_date":"2024-01-06T00:00:00Z","amount":500,"currency":"USD","amount_base_currency":500,"base_currency":"USD","refunded_invoice_id":null}},"as_of":"2024-02-01T00:00:00Z"}}"#
                    )
                ),
                (
                    catalog::CUSTOMER_NEW,
                    format!(
                        r#"{{{customer},"movement":{{"date":"2024-01-05","kind":"new","subtype":"new","mrr_change":3000,"currency":"USD","mrr_change_base_currency":3000,"base_currency":"USD","customer_count_change":1,"quantity_change":1,"plans_before":[],"plans_after":["pro"]}},"as_of":"2024-02-01T00:00:00Z"}}"#
                    )
                ),
            ]
        );
        // An invoice deleted since its fact was collected, and a customer.
        ledger.delete(RecordKind::Invoices, "i2").unwrap();
        ledger.delete(RecordKind::Customers, "c1").unwrap();
        assert_eq!(
            facts[1].data_text(&ledger, &account, "x"),
            r#"{"account":{"id":"7","name":"Main"},"customer":{"id":"c1","name":null,"email":null,"country":null},"invoice":null,"as_of":"x"}"#
        );
    }
}
