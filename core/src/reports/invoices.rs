//! `invoices-detail`: invoices with their lines and payment state, newest
//! first (ties by id).
//!
//! `customer` (space-separated ids) narrows the list; `total_base_currency`
//! converts at the invoice date; `payment_date` is the invoice's own, else
//! the date of its last successful payment transaction. Extra parameters
//! `limit` and `offset` page the list (default all).

use super::ReportParams;
use super::answer::{Listing, NoHead, ReportAnswer};
use super::partial::rows::{KeyPart, ListPart, Row, Scalar, TopRows, instant_key};
use super::partial::{Body, wrong_body};
use crate::derive::Derived;
use crate::error::{Error, Result};
use crate::ids::CustomerId;
use crate::model::{Customer, StoredInvoice, Timestamp, TransactionResult, TransactionType};
use crate::money::{Cents, Currency};
use crate::query::{Page, Query};
use chrono::{DateTime, SecondsFormat, Utc};
use chrono_tz::Tz;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

pub(super) fn invoices_detail(
    ledger: &Derived<'_>,
    params: &ReportParams,
    _as_of: DateTime<Utc>,
) -> Result<ReportAnswer> {
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
    // Each invoice's instant is worked out once, not at every comparison
    // (in a time zone other than UTC that takes the zone's rules); ids are
    // distinct, so the order is total.
    let mut invoices: Vec<(DateTime<Utc>, StoredInvoice<'_>)> = listed(ledger, &customers)
        .into_iter()
        .map(|invoice| (invoice.invoice_date.instant(tz), invoice))
        .collect();
    invoices.par_sort_unstable_by(|(at_a, a), (at_b, b)| {
        at_b.cmp(at_a).then_with(|| a.id().cmp(b.id()))
    });
    let page = &invoices[offset.min(invoices.len())..];
    let list = page[..limit.min(page.len())]
        .par_iter()
        .map(|(_, invoice)| {
            let day = invoice.invoice_date.local_date(tz);
            let total_base =
                ledger
                    .fx()
                    .convert(invoice.amount, invoice.currency, currency, day)?;
            Ok(invoice_row(ledger, *invoice, total_base, tz))
        })
        .collect::<Vec<Result<InvoiceRow>>>();
    // The first failure in list order, whichever core met it first.
    let list = list.into_iter().collect::<Result<Vec<InvoiceRow>>>()?;
    Ok(listing(invoices.len(), list))
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
    // Only the first `keep` rows are written; `TopRows` orders them.
    if keep < keys.len() {
        if keep > 0 {
            keys.select_nth_unstable_by(keep - 1, |a, b| a.0.cmp(&b.0));
        }
        keys.truncate(keep);
    }
    let mut rows = Vec::with_capacity(keys.len());
    for (key, invoice) in keys {
        let day = invoice.invoice_date.local_date(tz);
        let total_base = ledger
            .fx()
            .convert(invoice.amount, invoice.currency, currency, day)?;
        rows.push(Row::new(key, invoice_row(ledger, invoice, total_base, tz)));
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
) -> Result<ReportAnswer> {
    let Body::List(part) = body else {
        return Err(wrong_body("invoices-detail", &body));
    };
    let q = Query::new(params);
    q.base_currency(shape.settings())?;
    part.check_found(&q.list("customer"))?;
    let Page { limit, offset } = Page::read(&q, usize::MAX, None)?;
    Ok(listing(
        part.rows.count as usize,
        part.rows.into_page(offset, limit)?,
    ))
}

fn listing(count: usize, list: Vec<InvoiceRow>) -> ReportAnswer {
    Listing {
        head: NoHead,
        count,
        list,
    }
    .into()
}

/// One listed invoice: amounts in cents of its `currency`, but
/// `total_base_currency` in the report's; instants RFC 3339 (seconds).
#[derive(Clone, Serialize, Deserialize)]
struct InvoiceRow {
    invoice_ref: String,
    invoice_number: Option<String>,
    invoice_date: String,
    invoice_status: String,
    #[serde(rename = "type")]
    kind: String,
    payment_date: Option<String>,
    due_date: Option<String>,
    customer_id: CustomerId,
    customer_name: Option<String>,
    customer_email: Option<String>,
    description: Option<String>,
    currency: Currency,
    total: Cents,
    total_base_currency: Cents,
    tax_amount: Cents,
    transaction_count: usize,
    lines: Vec<LineRow>,
}

/// A line of a listed invoice (an invoice without lines shows one: its
/// plan or type); instants RFC 3339 (seconds).
#[derive(Clone, Serialize, Deserialize)]
pub(super) struct LineRow {
    description: Option<String>,
    amount: Cents,
    quantity: i64,
    period_start: Option<String>,
    period_end: Option<String>,
}

fn invoice_row(
    ledger: &Derived<'_>,
    invoice: StoredInvoice<'_>,
    total_base: i64,
    tz: Tz,
) -> InvoiceRow {
    let customer = ledger.customer(invoice.customer_id.as_str());
    let details = invoice.details();
    let paid_by_transaction = details
        .transactions
        .iter()
        .filter(|t| t.kind == TransactionType::Payment && t.result == TransactionResult::Successful)
        .map(|t| t.date.instant(tz))
        .max();
    let payment_date = details
        .payment_date
        .map(|t| t.instant(tz))
        .or(paid_by_transaction);
    let plan = invoice
        .plan_id
        .as_ref()
        .and_then(|p| ledger.plan(p.as_str()));
    let description = details
        .description
        .clone()
        .or_else(|| plan.map(|p| p.name.clone()))
        .unwrap_or_else(|| invoice.kind.as_str().to_string());
    let lines = line_rows(invoice, description, tz);
    InvoiceRow {
        invoice_ref: invoice.id().to_string(),
        invoice_number: details.invoice_number.clone(),
        invoice_date: stamp(invoice.invoice_date.instant(tz)),
        invoice_status: invoice.status.as_str().to_string(),
        kind: invoice.kind.as_str().to_string(),
        payment_date: payment_date.map(stamp),
        due_date: details.due_date.map(|t| stamp(t.instant(tz))),
        customer_id: invoice.customer_id.clone(),
        customer_name: customer.map(|c| c.name.to_string()),
        customer_email: customer.and_then(|c| c.email.as_deref().map(str::to_string)),
        description: details.description.clone(),
        currency: invoice.currency,
        total: invoice.amount,
        total_base_currency: total_base,
        tax_amount: invoice.tax_amount,
        transaction_count: details.transactions.len(),
        lines,
    }
}

/// The lines of `invoice`, or one line standing for the whole invoice
/// under `description`.
pub(super) fn line_rows(invoice: StoredInvoice<'_>, description: String, tz: Tz) -> Vec<LineRow> {
    let when = |t: Option<Timestamp>| t.map(|t| stamp(t.instant(tz)));
    let details = invoice.details();
    if details.lines.is_empty() {
        return vec![LineRow {
            description: Some(description),
            amount: invoice.amount,
            quantity: i64::from(invoice.quantity),
            period_start: when(invoice.period_start),
            period_end: when(invoice.period_end),
        }];
    }
    details
        .lines
        .iter()
        .map(|line| LineRow {
            description: line.description.clone(),
            amount: line.amount,
            quantity: line.quantity,
            period_start: when(line.period_start),
            period_end: when(line.period_end),
        })
        .collect()
}

/// An instant in RFC 3339, to the second.
pub(super) fn stamp(t: DateTime<Utc>) -> String {
    t.to_rfc3339_opts(SecondsFormat::Secs, true)
}
