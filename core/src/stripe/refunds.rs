//! Charges, refunds and credit notes: payment attempts as invoice
//! transactions, returned money as refund invoices naming the invoice they
//! refund. A credit note and the refund object it produced describe the same
//! money: the credit note stands, the refund object is dropped.

use super::invoices::MappedInvoice;
use super::object::{Obj, Objects};
use super::{Stored, Target};
use crate::error::Error;
use serde_json::{Value, json};
use std::collections::{HashMap, HashSet};

/// What the charges of a batch tell.
#[derive(Debug, Default)]
pub(crate) struct Charges<'a> {
    /// Payment attempts by Stripe invoice id, oldest first.
    pub transactions: HashMap<String, Vec<Value>>,
    /// Each charge's invoice, when it has one.
    pub invoice_of: HashMap<&'a str, &'a str>,
    /// Each charge's customer.
    pub customer_of: HashMap<&'a str, &'a str>,
    /// Charges seen (in the batch or expanded in a refund).
    pub known: HashSet<&'a str>,
    /// Refund objects embedded in charges (`charge.refunds.data`).
    pub embedded_refunds: Vec<&'a Value>,
}

/// Reads charges (listed, or expanded in refunds) and links them to
/// invoices: `charge.invoice` (older API versions), `invoice.charge`, or an
/// invoice payment naming the charge or its payment intent
/// (`invoice.payments.data[].payment.{charge, payment_intent}`,
/// `invoice.payment_intent`).
pub(crate) fn read_charges<'a>(objects: &Objects<'a>, rejected: &mut Vec<Error>) -> Charges<'a> {
    let mut charges = Charges::default();
    let mut by_intent: HashMap<&'a str, &'a str> = HashMap::new();
    for invoice in objects.of("invoice") {
        let o = Obj::new("invoice", invoice);
        if let Ok(Some(charge)) = o.id_at("charge") {
            charges.invoice_of.insert(charge, o.id);
        }
        if let Ok(Some(intent)) = o.id_at("payment_intent") {
            by_intent.insert(intent, o.id);
        }
        for payment in o.list("payments").unwrap_or(&[]) {
            let p = Obj::new("invoice_payment", payment);
            if let Ok(Some(charge)) = p.id_at("payment.charge") {
                charges.invoice_of.insert(charge, o.id);
            }
            if let Ok(Some(intent)) = p.id_at("payment.payment_intent") {
                by_intent.insert(intent, o.id);
            }
        }
    }
    let expanded = objects
        .of("refund")
        .iter()
        .filter_map(|refund| refund.get("charge").filter(|c| c.is_object()));
    let mut seen = HashSet::new();
    for charge in objects.of("charge").iter().copied().chain(expanded) {
        let o = Obj::new("charge", charge);
        if !seen.insert(o.id) {
            continue;
        }
        match read_charge(&o, &by_intent, &mut charges) {
            Ok(()) => {}
            Err(error) => rejected.push(error),
        }
    }
    for list in charges.transactions.values_mut() {
        list.sort_by(|a, b| a["date"].as_str().cmp(&b["date"].as_str()));
    }
    charges
}

fn read_charge<'a>(
    o: &Obj<'a>,
    by_intent: &HashMap<&'a str, &'a str>,
    charges: &mut Charges<'a>,
) -> Result<(), Error> {
    charges.known.insert(o.id);
    if let Some(customer) = o.id_at("customer")? {
        charges.customer_of.insert(o.id, customer);
    }
    let invoice = match o.id_at("invoice")? {
        Some(invoice) => Some(invoice),
        None => match charges.invoice_of.get(o.id) {
            Some(invoice) => Some(*invoice),
            None => o
                .id_at("payment_intent")?
                .and_then(|intent| by_intent.get(intent).copied()),
        },
    };
    for refund in o.list("refunds")? {
        charges.embedded_refunds.push(refund);
    }
    let Some(invoice) = invoice else {
        return Ok(());
    };
    charges.invoice_of.insert(o.id, invoice);
    let result = match o.text("status")? {
        Some("succeeded") => "successful",
        Some("failed") => "failed",
        _ => return Ok(()),
    };
    charges
        .transactions
        .entry(invoice.to_string())
        .or_default()
        .push(json!({
            "id": o.id,
            "type": "payment",
            "date": o.required_time("created")?,
            "result": result,
            "amount": o.amount("amount", &o.required_currency("currency")?)?,
        }));
    Ok(())
}

/// Where the refunds of a Stripe invoice go: the records this batch made of
/// it, else the ones an earlier import stored.
pub(crate) struct Targets<'m> {
    pub batch: &'m HashMap<String, MappedInvoice>,
    pub stored: &'m dyn Stored,
}

impl Targets<'_> {
    /// The customer and the record refunds of `invoice` name (preferring
    /// the record holding `line`, when given).
    fn find(
        &self,
        invoice: &str,
        customer: Option<&str>,
        line: Option<&str>,
    ) -> Option<(String, Target)> {
        if let Some(mapped) = self.batch.get(invoice) {
            let by_line = line
                .and_then(|l| mapped.line_records.get(l))
                .and_then(|record| mapped.targets.iter().find(|t| &t.id == record));
            let target = by_line.or(mapped.targets.first())?;
            return Some((mapped.customer.clone(), target.clone()));
        }
        let customer = customer?;
        let target = self
            .stored
            .invoice_targets(customer, invoice)
            .into_iter()
            .next()?;
        Some((customer.to_string(), target))
    }
}

/// A refund record.
fn refund_record(
    id: &str,
    customer: &str,
    date: String,
    amount: i64,
    currency: String,
    target: Option<&Target>,
    data_source: &str,
) -> Value {
    let mut record = json!({
        "id": id, "customer_id": customer, "type": "refund", "invoice_date": date,
        "amount": -amount, "currency": currency, "data_source": data_source,
    });
    if let Some(target) = target {
        record["refunded_invoice_id"] = json!(target.id);
        if let Some(subscription) = &target.subscription_id {
            record["subscription_id"] = json!(subscription);
        }
    }
    record
}

/// The outcome of one credit note or refund.
pub(crate) enum Refund {
    Record(Value),
    Skipped(String),
}

/// A credit note: a refund invoice of its `total` (tax included) naming
/// the invoice it credits, whether the money went back to the card, to the
/// customer's balance or out of band. Void credit notes are skipped.
pub(crate) fn credit_note(
    value: &Value,
    targets: &Targets<'_>,
    data_source: &str,
) -> Result<Refund, Error> {
    let o = Obj::new("credit_note", value);
    if o.text("status")? == Some("void") {
        return Ok(Refund::Skipped("is void".to_string()));
    }
    let currency = o.required_currency("currency")?;
    let total = o.amount("total", &currency)?;
    if total <= 0 {
        return Ok(Refund::Skipped(format!(
            "credits {total}: nothing returned"
        )));
    }
    let invoice = o.required_id("invoice")?;
    let customer = o.id_at("customer")?;
    let line = o
        .list("lines")?
        .iter()
        .find_map(|l| l.get("invoice_line_item").and_then(Value::as_str));
    let found = targets.find(invoice, customer, line);
    let (customer, target) = match found {
        Some((customer, target)) => (customer, Some(target)),
        None => (
            customer
                .ok_or_else(|| o.error("customer", "is required"))?
                .to_string(),
            None,
        ),
    };
    let date = match o.time("effective_at")? {
        Some(date) => date,
        None => o.required_time("created")?,
    };
    Ok(Refund::Record(refund_record(
        o.id,
        &customer,
        date,
        total,
        currency,
        target.as_ref(),
        data_source,
    )))
}

/// The refund objects a credit note stands for (`refunds[].refund`, or
/// `refund` in older API versions).
pub(crate) fn refunds_of_credit_note(value: &Value) -> Vec<&str> {
    let o = Obj::new("credit_note", value);
    let mut ids: Vec<&str> = o
        .list("refunds")
        .unwrap_or(&[])
        .iter()
        .filter_map(|r| {
            Obj::new("credit_note_refund", r)
                .id_at("refund")
                .ok()
                .flatten()
        })
        .collect();
    if let Ok(Some(refund)) = o.id_at("refund") {
        ids.push(refund);
    }
    ids
}

/// A refund object: a refund invoice of its `amount` naming the invoice its
/// charge paid. Failed and canceled refunds are skipped, and so is the
/// refund of a charge that paid no invoice (not subscription revenue).
pub(crate) fn refund(
    value: &Value,
    charges: &Charges<'_>,
    targets: &Targets<'_>,
    data_source: &str,
) -> Result<Refund, Error> {
    let o = Obj::new("refund", value);
    if let Some(status @ ("failed" | "canceled")) = o.text("status")? {
        return Ok(Refund::Skipped(format!("is {status}")));
    }
    let currency = o.required_currency("currency")?;
    let amount = o.amount("amount", &currency)?;
    let charge = o.id_at("charge")?;
    let invoice = charge.and_then(|c| charges.invoice_of.get(c).copied());
    let customer = match o.id_at("customer")? {
        Some(customer) => Some(customer),
        None => charge.and_then(|c| charges.customer_of.get(c).copied()),
    };
    let found = invoice.and_then(|invoice| targets.find(invoice, customer, None));
    let (customer, target) = match found {
        Some((customer, target)) => (customer, Some(target)),
        None => {
            if invoice.is_none() && charge.is_some_and(|c| charges.known.contains(c)) {
                return Ok(Refund::Skipped(
                    "refunds a charge that paid no invoice: not subscription revenue".to_string(),
                ));
            }
            let customer = customer.ok_or_else(|| {
                o.error(
                    "charge",
                    "names no customer and its charge is not in the import: include the charges",
                )
            })?;
            (customer.to_string(), None)
        }
    };
    Ok(Refund::Record(refund_record(
        o.id,
        &customer,
        o.required_time("created")?,
        amount,
        currency,
        target.as_ref(),
        data_source,
    )))
}
