//! `cashflow-outstanding-unpaid`: the invoices still owed at `as_of`, by
//! age (see [`outstanding_unpaid`]). In parts, each partition keeps per
//! age bucket the count and the amount owed in the report currency, and
//! its first `offset + limit` rows.

use super::ReportParams;
use super::answer::{Head, Listing, ReportAnswer};
use super::events::{EventRequest, Reading, Span};
use super::partial::rows::{KeyPart, Row, Scalar, SumsPart, TopRows, instant_key};
use super::partial::{Body, wrong_body};
use super::transactions::attempts;
use crate::derive::Derived;
use crate::error::Result;
use crate::ids::CustomerId;
use crate::model::{InvoiceStatus, InvoiceType, StoredInvoice, TransactionResult, TransactionType};
use crate::money::{Cents, Currency, Total};
use crate::query::{Page, Query};
use chrono::{DateTime, NaiveDate, SecondsFormat, Utc};
use serde::{Deserialize, Serialize};

/// Age buckets: (label, first day past due, last day past due).
pub const AGE_BUCKETS: &[(&str, i64, i64)] = &[
    ("0-30", 0, 30),
    ("31-60", 31, 60),
    ("61-90", 61, 90),
    ("90+", 91, i64::MAX),
];

/// One invoice still owed at `as_of`.
struct Unpaid<'a> {
    issued: DateTime<Utc>,
    invoice: StoredInvoice<'a>,
    /// Amount less successful payments, in the invoice currency.
    owed: Cents,
    owed_base: Cents,
    days: i64,
    bucket: &'static str,
}

/// `cashflow-outstanding-unpaid`: subscription and one-time invoices with
/// status `open` or `failed` dated at or before `as_of`, each for what is
/// still owed (its amount less its successful payment transactions; fully
/// paid ones drop out), aged by whole days from `due_date` (else
/// `invoice_date`) to `as_of` in the account time zone; an invoice not yet
/// due is 0 days past due. Amounts convert at `as_of`. Customer filters and
/// `currency` apply; `limit` and `offset` page the list, newest invoice
/// first (ties by customer id, then invoice id).
///
/// Shape: `{currency, as_of, total: {count, amount}, buckets: [{bucket,
/// count, amount}], result: {count, list: [row]}}`.
pub(super) fn outstanding_unpaid(
    ledger: &Derived<'_>,
    params: &ReportParams,
    as_of: DateTime<Utc>,
) -> Result<ReportAnswer> {
    let request = EventRequest::read(ledger, params, as_of, Reading::of(Span::AsOf))?;
    let page = unpaid_page(params)?;
    let part = unpaid_part(ledger, &request, page.end())?;
    unpaid_value(&request, part, page)
}

/// Every row unless `limit` says otherwise.
fn unpaid_page(params: &ReportParams) -> Result<Page> {
    Page::read(&Query::new(params), usize::MAX, None)
}

/// `cashflow-outstanding-unpaid` in parts: per age bucket the count and
/// amount owed (in the report currency), and the first `offset + limit`
/// rows, newest invoice first.
pub(super) fn outstanding_unpaid_partial(
    ledger: &Derived<'_>,
    params: &ReportParams,
    as_of: DateTime<Utc>,
) -> Result<Body> {
    let request = EventRequest::read(ledger, params, as_of, Reading::of(Span::AsOf))?;
    let page = unpaid_page(params)?;
    Ok(Body::Sums(unpaid_part(ledger, &request, page.end())?))
}

pub(super) fn outstanding_unpaid_finish(
    shape: &Derived<'_>,
    params: &ReportParams,
    as_of: DateTime<Utc>,
    body: Body,
) -> Result<ReportAnswer> {
    let request = EventRequest::read(shape, params, as_of, Reading::of(Span::AsOf).shape())?;
    let page = unpaid_page(params)?;
    match body {
        Body::Sums(part) if part.sums.len() == 2 * AGE_BUCKETS.len() => {
            unpaid_value(&request, part, page)
        }
        other => Err(wrong_body("cashflow-outstanding-unpaid", &other)),
    }
}

fn unpaid_part(ledger: &Derived<'_>, request: &EventRequest, keep: usize) -> Result<SumsPart> {
    let tz = ledger.settings().timezone;
    let day = request.as_of_day;
    let rows: Vec<Unpaid> = request.gather_customers(false, |customer, _, rows| {
        for invoice in ledger.customer_invoices(customer.id.as_str()) {
            let unpaid = matches!(invoice.status, InvoiceStatus::Open | InvoiceStatus::Failed);
            let charge = matches!(
                invoice.kind,
                InvoiceType::Subscription | InvoiceType::OneTime
            );
            let issued = invoice.invoice_date.instant(tz);
            if !unpaid || !charge || !request.happened(issued) {
                continue;
            }
            if !request.keeps_currency(invoice.currency) {
                continue;
            }
            let paid: Total = attempts(invoice, tz)
                .iter()
                .filter(|a| {
                    a.kind == TransactionType::Payment
                        && a.result == TransactionResult::Successful
                        && request.happened(a.instant)
                })
                .map(|a| a.amount)
                .sum();
            let owed = Total::from(invoice.amount) - paid;
            if owed <= Total::ZERO {
                continue;
            }
            // Less than the invoice's amount, so it fits.
            let owed = owed.cents(|| format!("the amount owed on invoice `{}`", invoice.id()))?;
            let due = invoice
                .details()
                .due_date
                .unwrap_or(invoice.invoice_date)
                .local_date(tz);
            let days = (day - due).num_days().max(0);
            let bucket = AGE_BUCKETS
                .iter()
                .find(|(_, from, to)| days >= *from && days <= *to)
                .map_or("90+", |(label, _, _)| *label);
            let owed_base = ledger
                .fx()
                .convert(owed, invoice.currency, request.currency, day)?;
            rows.push(Unpaid {
                issued,
                invoice,
                owed,
                owed_base,
                days,
                bucket,
            });
        }
        Ok(())
    })?;
    let mut sums = Vec::with_capacity(2 * AGE_BUCKETS.len());
    for (label, _, _) in AGE_BUCKETS {
        let inside = rows.iter().filter(|r| r.bucket == *label);
        sums.push(Total::from(inside.clone().count() as i64));
        sums.push(inside.map(|r| r.owed_base).sum());
    }
    let stamp = |t: DateTime<Utc>| t.to_rfc3339_opts(SecondsFormat::Secs, true);
    let list: Vec<Row> = rows
        .iter()
        .map(|unpaid| {
            let Unpaid {
                issued,
                invoice,
                owed,
                owed_base,
                days,
                bucket,
            } = unpaid;
            let customer = ledger.customer(invoice.customer_id.as_str());
            let row = UnpaidRow {
                invoice_id: invoice.id().to_string(),
                invoice_number: invoice.details().invoice_number.clone(),
                customer_id: invoice.customer_id.clone(),
                customer_name: customer.map(|c| c.name.to_string()),
                customer_email: customer.and_then(|c| c.email.as_deref().map(str::to_string)),
                kind: invoice.kind.as_str().to_string(),
                status: invoice.status.as_str().to_string(),
                invoice_date: stamp(*issued),
                due_date: invoice.details().due_date.map(|t| stamp(t.instant(tz))),
                days_past_due: *days,
                bucket: bucket.to_string(),
                currency: invoice.currency,
                total: invoice.amount,
                amount: *owed,
                amount_base_currency: *owed_base,
            };
            let key = vec![
                KeyPart::new(Scalar::Int(instant_key(*issued)), true),
                KeyPart::text(invoice.customer_id.as_str()),
                KeyPart::text(invoice.id()),
            ];
            Row::new(key, row)
        })
        .collect();
    Ok(SumsPart {
        sums,
        rows: TopRows::new(list, keep),
    })
}

/// One unpaid invoice: what it totals and what is still owed, in cents of
/// its `currency`, and what is owed in the report's; how late it is.
#[derive(Clone, Serialize, Deserialize)]
struct UnpaidRow {
    invoice_id: String,
    invoice_number: Option<String>,
    customer_id: CustomerId,
    customer_name: Option<String>,
    customer_email: Option<String>,
    #[serde(rename = "type")]
    kind: String,
    status: String,
    invoice_date: String,
    due_date: Option<String>,
    days_past_due: i64,
    bucket: String,
    currency: Currency,
    total: Cents,
    amount: Cents,
    amount_base_currency: Cents,
}

/// The head of `cashflow-outstanding-unpaid`: the currency, the day, the
/// total owed and its age buckets.
#[derive(Serialize)]
struct UnpaidHead {
    currency: Currency,
    as_of: NaiveDate,
    total: Owed,
    buckets: Vec<Bucket>,
}

impl Head for UnpaidHead {
    fn currency(&self) -> Option<Currency> {
        Some(self.currency)
    }
}

/// How many invoices are owed and how much, in the report's currency.
#[derive(Serialize)]
struct Owed {
    count: i64,
    amount: Cents,
}

/// What is owed in one age bucket.
#[derive(Serialize)]
struct Bucket {
    bucket: &'static str,
    count: i64,
    amount: Cents,
}

fn unpaid_value(request: &EventRequest, part: SumsPart, page: Page) -> Result<ReportAnswer> {
    let currency = request.currency;
    let buckets = AGE_BUCKETS
        .iter()
        .zip(part.sums.chunks(2))
        .map(|((label, _, _), sums)| {
            let what = |figure: &str| format!("the `{figure}` of bucket {label} in {currency}");
            Ok(Bucket {
                bucket: label,
                count: sums[0].cents(|| what("count"))?,
                amount: sums[1].cents(|| what("amount"))?,
            })
        })
        .collect::<Result<_>>()?;
    let what = |figure: &str| format!("the `total.{figure}` in {currency}");
    let count: Total = part.sums.iter().step_by(2).copied().sum();
    let count = count.cents(|| what("count"))?;
    let amount: Total = part.sums.iter().skip(1).step_by(2).copied().sum();
    let amount = amount.cents(|| what("amount"))?;
    let head = UnpaidHead {
        currency,
        as_of: request.as_of_day,
        total: Owed { count, amount },
        buckets,
    };
    Ok(Listing {
        head,
        count: count as usize,
        list: part.rows.into_page::<UnpaidRow>(page.offset, page.limit)?,
    }
    .into())
}
