//! `invoices-detail`: invoices with their lines and payment state, newest
//! first (ties by id).
//!
//! `customer` (space-separated ids) narrows the list; `total_base_currency`
//! converts at the invoice date; `payment_date` is the invoice's own, else
//! the date of its last successful payment transaction. Extra parameters
//! `limit` and `offset` page the list (default all).

use super::ReportParams;
use super::partial::rows::{KeyPart, ListPart, Row, Scalar, TopRows, instant_key};
use super::partial::{Body, wrong_body};
use crate::derive::Derived;
use crate::error::{Error, Result};
use crate::model::{Customer, StoredInvoice, TransactionResult, TransactionType};
use crate::query::{Page, Query};
use chrono::{DateTime, SecondsFormat, Utc};
use chrono_tz::Tz;
use serde_json::{Value, json};

pub(super) fn invoices_detail(
    ledger: &Derived<'_>,
    params: &ReportParams,
    _as_of: DateTime<Utc>,
) -> Result<Value> {
    let q = Query::new(params);
    let settings = ledger.settings();
    let tz = settings.timezone;
    let currency = q.base_currency(settings)?;
    let customers = q.list("customer");
    for id in &customers {
        if ledger.customer(id).is_none() {
            return Err(Error::NotFound {
                kind: Customer::KIND,
                id: id.clone(),
            });
        }
    }
    let Page { limit, offset } = Page::read(&q, usize::MAX, None)?;
    let mut invoices = listed(ledger, &customers);
    invoices.sort_by(|a, b| {
        b.invoice_date
            .instant(tz)
            .cmp(&a.invoice_date.instant(tz))
            .then_with(|| a.id().cmp(b.id()))
    });
    let mut list = Vec::new();
    for invoice in invoices.iter().skip(offset).take(limit) {
        let day = invoice.invoice_date.local_date(tz);
        let total_base = ledger
            .fx()
            .convert(invoice.amount, invoice.currency, currency, day)?;
        list.push(invoice_row(ledger, *invoice, total_base, tz));
    }
    Ok(json!({ "result": { "count": invoices.len(), "list": list } }))
}

/// The invoices of the customers `customer` names, else every invoice.
fn listed<'l>(ledger: &'l Derived<'l>, customers: &[String]) -> Vec<StoredInvoice<'l>> {
    if customers.is_empty() {
        ledger.invoices().collect()
    } else {
        customers
            .iter()
            .flat_map(|id| ledger.customer_invoices(id))
            .collect()
    }
}

/// `invoices-detail` in parts: the first `offset + limit` rows (newest
/// first, ties by id) and which customers `customer` names this ledger
/// holds. A partition converts the amounts of the rows it keeps.
pub(super) fn partial(
    ledger: &Derived<'_>,
    params: &ReportParams,
    _as_of: DateTime<Utc>,
) -> Result<Body> {
    let q = Query::new(params);
    let tz = ledger.settings().timezone;
    let currency = q.base_currency(ledger.settings())?;
    let wanted = q.list("customer");
    let Page { limit, offset } = Page::read(&q, usize::MAX, None)?;
    let keep = offset.saturating_add(limit);
    let every = wanted.is_empty();
    let found: Vec<String> = wanted
        .into_iter()
        .filter(|id| ledger.customer(id).is_some())
        .collect();
    let key = |invoice: &StoredInvoice<'_>| {
        vec![
            KeyPart::new(
                Scalar::Int(instant_key(invoice.invoice_date.instant(tz))),
                true,
            ),
            KeyPart::text(invoice.id()),
        ]
    };
    let invoices = if every || !found.is_empty() {
        listed(ledger, &found)
    } else {
        Vec::new()
    };
    let count = invoices.len() as u64;
    let mut keys: Vec<(Vec<KeyPart>, StoredInvoice<'_>)> =
        invoices.into_iter().map(|i| (key(&i), i)).collect();
    keys.sort_by(|a, b| a.0.cmp(&b.0));
    keys.truncate(keep);
    let mut rows = Vec::with_capacity(keys.len());
    for (key, invoice) in keys {
        let day = invoice.invoice_date.local_date(tz);
        let total_base = ledger
            .fx()
            .convert(invoice.amount, invoice.currency, currency, day)?;
        rows.push(Row::new(key, &invoice_row(ledger, invoice, total_base, tz)));
    }
    let mut top = TopRows::new(rows, keep);
    top.count = count;
    Ok(Body::List(ListPart {
        found: found.into_iter().collect(),
        rows: top,
    }))
}

pub(super) fn finish(
    shape: &Derived<'_>,
    params: &ReportParams,
    _as_of: DateTime<Utc>,
    body: Body,
) -> Result<Value> {
    let Body::List(part) = body else {
        return Err(wrong_body("invoices-detail", &body));
    };
    let q = Query::new(params);
    q.base_currency(shape.settings())?;
    part.check_found(&q.list("customer"))?;
    let Page { limit, offset } = Page::read(&q, usize::MAX, None)?;
    Ok(json!({ "result": { "count": part.rows.count, "list": part.rows.page(offset, limit)? } }))
}

fn invoice_row(ledger: &Derived<'_>, invoice: StoredInvoice<'_>, total_base: i64, tz: Tz) -> Value {
    let stamp = |t: DateTime<Utc>| t.to_rfc3339_opts(SecondsFormat::Secs, true);
    let customer = ledger.customer(invoice.customer_id.as_str());
    let paid_by_transaction = invoice
        .details()
        .transactions
        .iter()
        .filter(|t| t.kind == TransactionType::Payment && t.result == TransactionResult::Successful)
        .map(|t| t.date.instant(tz))
        .max();
    let payment_date = invoice
        .details()
        .payment_date
        .map(|t| t.instant(tz))
        .or(paid_by_transaction);
    let lines: Vec<Value> = if invoice.details().lines.is_empty() {
        // An invoice without lines shows one line: its plan or type.
        let plan = invoice
            .plan_id
            .as_ref()
            .and_then(|p| ledger.plan(p.as_str()));
        vec![json!({
            "description": invoice.details().description.clone().or_else(|| plan.map(|p| p.name.clone())).unwrap_or_else(|| invoice.kind.as_str().to_string()),
            "amount": invoice.amount,
            "quantity": invoice.quantity,
            "period_start": invoice.period_start.map(|t| stamp(t.instant(tz))),
            "period_end": invoice.period_end.map(|t| stamp(t.instant(tz))),
        })]
    } else {
        invoice
            .details()
            .lines
            .iter()
            .map(|line| {
                json!({
                    "description": line.description,
                    "amount": line.amount,
                    "quantity": line.quantity,
                    "period_start": line.period_start.map(|t| stamp(t.instant(tz))),
                    "period_end": line.period_end.map(|t| stamp(t.instant(tz))),
                })
            })
            .collect()
    };
    json!({
        "invoice_ref": invoice.id(),
        "invoice_number": invoice.details().invoice_number,
        "invoice_date": stamp(invoice.invoice_date.instant(tz)),
        "invoice_status": invoice.status.as_str(),
        "type": invoice.kind.as_str(),
        "payment_date": payment_date.map(stamp),
        "due_date": invoice.details().due_date.map(|t| stamp(t.instant(tz))),
        "customer_id": invoice.customer_id.as_str(),
        "customer_name": customer.map(|c| &*c.name),
        "customer_email": customer.and_then(|c| c.email.as_deref()),
        "description": invoice.details().description,
        "currency": invoice.currency.as_str(),
        "total": invoice.amount,
        "total_base_currency": total_base,
        "tax_amount": invoice.tax_amount,
        "transaction_count": invoice.details().transactions.len(),
        "lines": lines,
    })
}
