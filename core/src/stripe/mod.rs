//! Stripe API objects as our records: the mapping behind every way Stripe
//! data comes in (the offline CLI, the connected service, the bindings'
//! `import_stripe`). Pure: it reads objects already fetched and returns
//! records; nothing here does I/O. `docs/stripe.md` states every rule, and
//! where Stripe and the hosted analytics leaders differ.
//!
//! In short:
//!
//! - **customers** keep their Stripe id; `name` (else email, else id),
//!   `email`, `address.country`, `created`, `currency`, `metadata` as custom
//!   variables. An invoice whose customer is not in the batch (nor stored)
//!   brings a customer made of its `customer_name`/`customer_email`.
//! - **prices and legacy plans** are plans of the same id (one per price;
//!   `recurring.usage_type` is the pricing model); a multi-currency price
//!   billed in another currency is the plan `{price}/{currency}`.
//! - **invoices**: drafts are skipped; `open` (or `failed` after a failed
//!   payment attempt), `paid`, `void`, `uncollectible` (as `failed`, or
//!   `void` with [`UncollectibleAs::Void`]). Each subscription item billed
//!   on an invoice is one subscription invoice (our subscription id is
//!   `{subscription}/{subscription item}`), its proration lines another,
//!   prorated one (charges for the remaining time set the new rate; credits
//!   for unused time are not revenue), and the lines without a recurring
//!   price one one-time invoice. Amounts are net of discounts and include
//!   tax, with the tax in `tax_amount`, as SEMANTICS.md section 1 says.
//! - **credit notes and refunds** are refund invoices naming the invoice
//!   they refund; a refund object that a credit note stands for is dropped,
//!   so one refund never counts twice.
//! - **subscriptions** that end (now, at period end, or at `cancel_at`)
//!   make cancellation invoices.
//!
//! Record ids derive from Stripe ids (an invoice that makes one record keeps
//! its id; several records are `{invoice}/{item}`, `{invoice}/{item}/proration`,
//! `{invoice}/one-time`), so importing the same objects again is an upsert
//! that changes nothing.

mod catalog;
mod invoices;
mod object;
mod refunds;
mod subscriptions;
#[cfg(test)]
mod tests;
mod units;

pub use object::KINDS;

use crate::error::{Error, Result};
use crate::model::InvoiceType;
use crate::{Ledger, WriteReport};
use object::{Obj, Objects};
use serde::Serialize;
use serde_json::{Value, json};
use std::collections::{HashMap, HashSet};

/// How an `uncollectible` Stripe invoice counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum UncollectibleAs {
    /// A failed invoice: the subscription keeps its MRR until it is
    /// canceled or lapses, like any past-due one (the default).
    #[default]
    Failed,
    /// A void invoice: it never counts, so the subscription lapses at the
    /// end of its last collectible period.
    Void,
}

/// Choices of the mapping.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct StripeOptions {
    /// How `uncollectible` invoices count.
    pub uncollectible: UncollectibleAs,
    /// The data source id every record names (one per connected Stripe
    /// account); `stripe` by default.
    pub data_source: String,
}

impl Default for StripeOptions {
    fn default() -> Self {
        StripeOptions {
            uncollectible: UncollectibleAs::Failed,
            data_source: "stripe".to_string(),
        }
    }
}

impl StripeOptions {
    /// Reads `{"uncollectible": "failed" | "void", "data_source": "..."}`;
    /// absent keys and null ones keep their defaults (a binding's `None`,
    /// `undefined` or `null`), unknown keys are an error, null or not.
    pub fn from_json(value: &Value) -> Result<StripeOptions> {
        let mut options = StripeOptions::default();
        let Some(map) = value.as_object() else {
            return match value {
                Value::Null => Ok(options),
                _ => Err(Error::query("options", "must be an object")),
            };
        };
        for (key, value) in map {
            match (key.as_str(), value) {
                ("uncollectible" | "data_source", Value::Null) => {}
                ("uncollectible", Value::String(s)) if s == "failed" => {
                    options.uncollectible = UncollectibleAs::Failed
                }
                ("uncollectible", Value::String(s)) if s == "void" => {
                    options.uncollectible = UncollectibleAs::Void
                }
                ("uncollectible", other) => {
                    return Err(Error::query(
                        "uncollectible",
                        format!("must be `failed` or `void`, got {other}"),
                    ));
                }
                ("data_source", Value::String(s)) if !s.trim().is_empty() => {
                    options.data_source = s.clone()
                }
                ("data_source", other) => {
                    return Err(Error::query(
                        "data_source",
                        format!("must be a non-empty text, got {other}"),
                    ));
                }
                (other, _) => {
                    return Err(Error::query(
                        other,
                        "is not an option of the Stripe import (uncollectible, data_source)",
                    ));
                }
            }
        }
        Ok(options)
    }
}

/// A record refunds of a Stripe invoice can name: its id and subscription.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// The record id (it starts with the Stripe invoice id).
    pub id: String,
    /// The subscription the record belongs to, `None` for a one-time record.
    pub subscription_id: Option<String>,
}

/// What an earlier import stored, for objects that arrive without the
/// objects they name (an incremental sync brings a credit note without its
/// invoice).
pub trait Stored {
    /// The records made of Stripe invoice `invoice` of `customer`,
    /// subscription records first.
    fn invoice_targets(&self, customer: &str, invoice: &str) -> Vec<Target>;
    /// Whether a customer with this record id is stored.
    fn has_customer(&self, id: &str) -> bool;
    /// The currency of a stored plan.
    fn plan_currency(&self, id: &str) -> Option<String>;
}

/// Nothing stored: every object must come with what it names.
pub struct NothingStored;

impl Stored for NothingStored {
    fn invoice_targets(&self, _: &str, _: &str) -> Vec<Target> {
        Vec::new()
    }
    fn has_customer(&self, _: &str) -> bool {
        false
    }
    fn plan_currency(&self, _: &str) -> Option<String> {
        None
    }
}

impl Stored for Ledger {
    fn invoice_targets(&self, customer: &str, invoice: &str) -> Vec<Target> {
        let prefix = format!("{invoice}/");
        let mut found: Vec<(u8, Target)> = self
            .customer_invoices(customer)
            .into_iter()
            .filter(|i| i.id() == invoice || i.id().starts_with(&prefix))
            .filter_map(|i| {
                let rank = match i.kind {
                    InvoiceType::Subscription if !i.id().ends_with("/proration") => 0,
                    InvoiceType::Subscription => 1,
                    InvoiceType::OneTime => 2,
                    _ => return None,
                };
                Some((
                    rank,
                    Target {
                        id: i.id().to_string(),
                        subscription_id: i.subscription_id.as_ref().map(|s| s.to_string()),
                    },
                ))
            })
            .collect();
        found.sort_by(|a, b| (a.0, &a.1.id).cmp(&(b.0, &b.1.id)));
        found.into_iter().map(|(_, target)| target).collect()
    }

    fn has_customer(&self, id: &str) -> bool {
        self.customer(id).is_some()
    }

    fn plan_currency(&self, id: &str) -> Option<String> {
        self.plan(id).map(|plan| plan.currency.as_str().to_string())
    }
}

/// An object the mapping did not use, and why (not an error: a draft
/// invoice, a void credit note, an object kind it does not read).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct StripeSkip {
    /// The Stripe object kind (`invoice`, `credit_note`, ...).
    pub object: String,
    /// The Stripe id.
    pub id: String,
    /// Why it was not used.
    pub reason: String,
}

/// A rejected object or record: which one, which field, why.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StripeRejection {
    /// The Stripe object kind (`invoice`, `refund`, ...) or, for a mapped
    /// record the ledger refused, our record kind (`invoice`, `plan`, ...).
    pub object: String,
    /// The Stripe id, or the record id (which starts with the Stripe id).
    pub id: String,
    /// The field at fault, as a path into the object (`(record)` when it is the whole object).
    pub field: String,
    /// What is wrong with it.
    pub reason: String,
}

impl StripeRejection {
    fn from_error(error: &Error, fallback_id: &str) -> StripeRejection {
        match error {
            Error::InvalidRecord {
                kind,
                id,
                field,
                reason,
            } => StripeRejection {
                object: kind.to_string(),
                id: id.clone(),
                field: field.clone(),
                reason: reason.clone(),
            },
            other => StripeRejection {
                object: "record".to_string(),
                id: other.record_id().unwrap_or(fallback_id).to_string(),
                field: other.field().unwrap_or("(record)").to_string(),
                reason: other.to_string(),
            },
        }
    }
}

/// The records a batch of Stripe objects maps to.
#[derive(Debug, Default)]
pub struct StripeRecords {
    /// Customer records, one per Stripe customer.
    pub customers: Vec<Value>,
    /// Plan records, from recurring prices (or legacy plans).
    pub plans: Vec<Value>,
    /// Subscription, one-time, refund and cancellation invoices.
    pub invoices: Vec<Value>,
    /// Invoice record ids to delete: cancellations undone, refund objects
    /// now described by a credit note.
    pub removed_invoices: Vec<String>,
    /// Objects not used, and why.
    pub skipped: Vec<StripeSkip>,
    /// Objects that could not be mapped, naming the Stripe id and field.
    pub rejected: Vec<Error>,
}

/// Maps a batch of Stripe objects (any mix of kinds, list responses and
/// events; see [`KINDS`]) to our records. `stored` answers for objects the
/// batch names but does not hold. Later objects with the same id replace
/// earlier ones, so events must come oldest first.
pub fn map_stripe_objects(
    objects: &[Value],
    options: &StripeOptions,
    stored: &dyn Stored,
) -> StripeRecords {
    let objects = Objects::collect(objects);
    let mut out = StripeRecords::default();
    for (object, id, reason) in &objects.skipped {
        out.skipped.push(StripeSkip {
            object: object.clone(),
            id: id.clone(),
            reason: reason.clone(),
        });
    }
    let skip = |out: &mut StripeRecords, object: &str, id: &str, reason: String| {
        out.skipped.push(StripeSkip {
            object: object.to_string(),
            id: id.to_string(),
            reason,
        });
    };
    let mut catalog = catalog::Catalog::read(&objects, &options.data_source, &mut out.rejected);
    let charges = refunds::read_charges(&objects, &mut out.rejected);

    let mut customers: HashSet<String> = HashSet::new();
    for value in objects.of("customer") {
        match catalog::customer(value, &options.data_source) {
            Ok(record) => {
                customers.insert(record["id"].as_str().unwrap_or_default().to_string());
                out.customers.push(record);
            }
            Err(error) => out.rejected.push(error),
        }
    }

    let items = invoices::ItemIndex::read(objects.of("subscription"), objects.of("invoice"));
    let mut mapped: HashMap<String, invoices::MappedInvoice> = HashMap::new();
    for value in objects.of("invoice") {
        let o = Obj::new("invoice", value);
        let transactions = charges
            .transactions
            .get(o.id)
            .map_or(&[][..], Vec::as_slice);
        match invoices::map_invoice(value, &items, &mut catalog, stored, options, transactions) {
            Ok(invoices::Outcome::Mapped(mut invoice)) => {
                if !customers.contains(&invoice.customer) && !stored.has_customer(&invoice.customer)
                {
                    out.customers.push(catalog::customer_from_invoice(
                        &o,
                        &invoice.customer,
                        &options.data_source,
                    ));
                    customers.insert(invoice.customer.clone());
                }
                out.invoices.append(&mut invoice.records);
                mapped.insert(o.id.to_string(), invoice);
            }
            Ok(invoices::Outcome::Skipped(reason)) => skip(&mut out, "invoice", o.id, reason),
            Err(error) => out.rejected.push(error),
        }
    }

    for value in objects.of("subscription") {
        match subscriptions::ending(value, &options.data_source) {
            Ok(ending) => {
                out.invoices.extend(ending.records);
                out.removed_invoices.extend(ending.removed);
            }
            Err(error) => out.rejected.push(error),
        }
    }

    let targets = refunds::Targets {
        batch: &mapped,
        stored,
    };
    let mut described: HashSet<&str> = HashSet::new();
    for value in objects.of("credit_note") {
        let o = Obj::new("credit_note", value);
        match refunds::credit_note(value, &targets, &options.data_source) {
            Ok(refunds::Refund::Record(record)) => {
                for refund in refunds::refunds_of_credit_note(value) {
                    described.insert(refund);
                    out.removed_invoices.push(refund.to_string());
                }
                out.invoices.push(record);
            }
            Ok(refunds::Refund::Skipped(reason)) => skip(&mut out, "credit_note", o.id, reason),
            Err(error) => out.rejected.push(error),
        }
    }
    let mut seen: HashSet<&str> = HashSet::new();
    for value in objects
        .of("refund")
        .iter()
        .copied()
        .chain(charges.embedded_refunds.iter().copied())
    {
        let o = Obj::new("refund", value);
        if !seen.insert(o.id) {
            continue;
        }
        if described.contains(o.id) {
            skip(
                &mut out,
                "refund",
                o.id,
                "its credit note stands for it (counted once)".to_string(),
            );
            continue;
        }
        match refunds::refund(value, &charges, &targets, &options.data_source) {
            Ok(refunds::Refund::Record(record)) => out.invoices.push(record),
            Ok(refunds::Refund::Skipped(reason)) => skip(&mut out, "refund", o.id, reason),
            Err(error) => out.rejected.push(error),
        }
    }
    out.plans = catalog.plans.into_values().collect();
    out
}

/// What [`Ledger::import_stripe`] did.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct StripeImport {
    /// Customers stored.
    pub customers: usize,
    /// Plans stored.
    pub plans: usize,
    /// Invoices stored (of every type).
    pub invoices: usize,
    /// Stored invoice records deleted (undone cancellations, refunds now
    /// described by a credit note).
    pub removed: usize,
    /// Objects not used, and why.
    pub skipped: Vec<StripeSkip>,
    /// Objects the mapping could not read and records the ledger refused.
    pub rejected: Vec<StripeRejection>,
}

impl Ledger {
    /// Imports Stripe API objects (see [`map_stripe_objects`]): maps them,
    /// then upserts the customers, plans and invoices (each record on its
    /// own: a rejected one costs nothing already stored) and deletes the
    /// records the objects undo.
    pub fn import_stripe(&mut self, objects: &[Value], options: &StripeOptions) -> StripeImport {
        let records = map_stripe_objects(objects, options, self);
        let mut report = StripeImport {
            skipped: records.skipped,
            rejected: records
                .rejected
                .iter()
                .map(|e| StripeRejection::from_error(e, "?"))
                .collect(),
            ..StripeImport::default()
        };
        if self.data_source(&options.data_source).is_none() {
            self.upsert_data_sources(&[json!({
                "id": options.data_source, "name": "Stripe", "type": "stripe"
            })]);
        }
        let tally = |written: WriteReport, rejected: &mut Vec<StripeRejection>| {
            for result in written.rejected() {
                let rejection = match &result.error {
                    Some(error) => StripeRejection::from_error(error, &result.id),
                    None => StripeRejection {
                        object: "record".to_string(),
                        id: result.id.to_string(),
                        field: "(record)".to_string(),
                        reason: result.import_error.clone().unwrap_or_default(),
                    },
                };
                rejected.push(rejection);
            }
            written.accepted()
        };
        report.customers = tally(
            self.upsert_customers(&records.customers),
            &mut report.rejected,
        );
        report.plans = tally(self.upsert_plans(&records.plans), &mut report.rejected);
        report.invoices = tally(
            self.upsert_invoices(&records.invoices),
            &mut report.rejected,
        );
        for id in &records.removed_invoices {
            if self.invoice(id).is_some() && self.delete_invoice(id).is_ok() {
                report.removed += 1;
            }
        }
        report
    }
}
