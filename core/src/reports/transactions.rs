//! `transactions`, `transactions-detail`, `transactions-summary`,
//! `transactions-table`: money that moved, per period and type; and the
//! payment attempts read from invoices, which the cash-flow reports share.
//!
//! **Attempts.** An invoice's `transactions` list, when present, is the
//! record of its money: each entry is one attempt (a payment, or a refund,
//! which every transaction of a refund invoice is), successful or failed,
//! on its own date; an entry without an amount is for the invoice's whole
//! amount. An invoice without transactions stands for one attempt itself:
//! `paid` is a successful one on `payment_date` (else `invoice_date`),
//! `failed` a failed one on `invoice_date`, `open` none yet. Void invoices,
//! cancellations and zero amounts never make attempts. Payments are
//! positive, refunds negative.
//!
//! **Types** (`selected-type`): a payment is `month_sub`, `year_sub`,
//! `week_sub` or `day_sub` by its plan's interval, `metered` on a metered
//! plan, `one_time` for a one-time invoice; every refund is `refund`;
//! `discount` lists the `discount_amount` of non-void subscription and
//! one-time invoices (negative, on `invoice_date`; informational, since
//! amounts are already net of discounts, so not part of `net`); `fee` is
//! accepted for interface compatibility but the records carry no
//! processor fees, so it is always empty.
//!
//! **Series** fields per period: for each type `t`, `t` (amount) and
//! `t_count`; `payments` and `payments_count` (every payment type);
//! `net` (payments + refunds) and `count` (payments and refunds).

use super::ReportParams;
use super::answer::ReportAnswer;
use super::event_parts::{
    EventView, Selection, check_detail, detail_answer, detail_rows, event_view,
};
use super::events::{
    Event, EventRequest, EventSource, Family, Figures, Metric, Tally, labels, names,
};
use super::invoices::{LineRow, line_rows, stamp};
use super::partial::rows::ListPart;
use super::partial::{Body, wrong_body};
use crate::derive::Derived;
use crate::derive::timeline::Replay;
use crate::error::{Error, Result};
use crate::model::{
    Customer, Interval, InvoiceStatus, InvoiceType, Plan, PricingModel, StoredInvoice,
    TransactionResult, TransactionType,
};
use crate::money::{Cents, Currency};
use crate::query::Query;
use chrono::{DateTime, Utc};
use chrono_tz::Tz;
use serde::{Deserialize, Serialize};
use smallvec::{SmallVec, smallvec};
use std::borrow::Cow;

/// Payment types with their labels, in display order.
pub(crate) const CHARGE_LABELS: [(&str, &str); 6] = [
    ("month_sub", "Monthly subscriptions"),
    ("year_sub", "Annual subscriptions"),
    ("week_sub", "Weekly subscriptions"),
    ("day_sub", "Daily subscriptions"),
    ("metered", "Metered"),
    ("one_time", "One-time"),
];

/// Payment types, in display order.
pub const CHARGE_TYPES: &[&str] = &names(&CHARGE_LABELS);

/// One payment attempt or refund of an invoice.
#[derive(Debug, Clone)]
pub(crate) struct Attempt<'a> {
    pub invoice: StoredInvoice<'a>,
    pub kind: TransactionType,
    pub result: TransactionResult,
    pub instant: DateTime<Utc>,
    /// Positive for payments, negative for refunds.
    pub amount: Cents,
    /// The transaction id, else the invoice id.
    pub id: Cow<'a, str>,
}

/// The attempts of one invoice (module doc, "Attempts"); most invoices
/// make one, held in place.
pub(crate) fn attempts<'a>(invoice: StoredInvoice<'a>, tz: Tz) -> SmallVec<[Attempt<'a>; 1]> {
    if !invoice.counts() || invoice.kind == InvoiceType::Cancellation || invoice.amount == 0 {
        return SmallVec::new();
    }
    let refund_invoice = invoice.kind == InvoiceType::Refund;
    let signed = |kind: TransactionType, amount: Cents| match kind {
        TransactionType::Payment => amount.abs(),
        TransactionType::Refund => -amount.abs(),
    };
    if !invoice.details().transactions.is_empty() {
        return invoice
            .details()
            .transactions
            .iter()
            .map(|t| {
                let kind = if refund_invoice {
                    TransactionType::Refund
                } else {
                    t.kind
                };
                let amount = if t.amount == 0 {
                    invoice.amount
                } else {
                    t.amount
                };
                Attempt {
                    invoice,
                    kind,
                    result: t.result,
                    instant: t.date.instant(tz),
                    amount: signed(kind, amount),
                    id: Cow::Borrowed(t.id.as_str()),
                }
            })
            .collect();
    }
    let kind = if refund_invoice {
        TransactionType::Refund
    } else {
        TransactionType::Payment
    };
    let (result, instant) = match invoice.status {
        InvoiceStatus::Paid => (
            TransactionResult::Successful,
            invoice
                .details()
                .payment_date
                .unwrap_or(invoice.invoice_date)
                .instant(tz),
        ),
        InvoiceStatus::Failed => (TransactionResult::Failed, invoice.invoice_date.instant(tz)),
        InvoiceStatus::Open | InvoiceStatus::Void => return SmallVec::new(),
    };
    smallvec![Attempt {
        invoice,
        kind,
        result,
        instant,
        amount: signed(kind, invoice.amount),
        id: Cow::Borrowed(invoice.id()),
    }]
}

/// What an invoice charges for: a [`CHARGE_TYPES`] value, or `unknown` for
/// a refund or cancellation (or a plan no longer known).
pub(crate) fn charge_type(ledger: &Derived<'_>, invoice: StoredInvoice<'_>) -> &'static str {
    match invoice.kind {
        InvoiceType::OneTime => "one_time",
        InvoiceType::Subscription => invoice
            .plan_id
            .as_ref()
            .and_then(|p| ledger.plan(p.as_str()))
            .map_or("unknown", plan_charge_type),
        InvoiceType::Refund | InvoiceType::Cancellation => "unknown",
    }
}

/// The payment type of a subscription on `plan`: `metered` on a metered
/// plan, else by its interval.
pub(crate) fn plan_charge_type(plan: &Plan) -> &'static str {
    if plan.pricing_model == PricingModel::Metered {
        return "metered";
    }
    match plan.billing_freq {
        Interval::Month => "month_sub",
        Interval::Year => "year_sub",
        Interval::Week => "week_sub",
        Interval::Day => "day_sub",
    }
}

/// Money events: a customer's attempts that pass `keep`, typed by
/// `kind_of`, dated by the local day, converted.
pub(crate) struct MoneyEvents {
    /// Whether an attempt is one of the report's.
    pub keep: fn(&Attempt<'_>) -> bool,
    /// The event type of a kept attempt.
    pub kind_of: fn(&Derived<'_>, &Attempt<'_>) -> &'static str,
}

impl<'a> EventSource<'a> for MoneyEvents {
    type Source = Attempt<'a>;
    const NEEDS_REPLAY: bool = false;

    fn customer_events(
        &self,
        request: &EventRequest<'a>,
        customer: &'a Customer,
        _: Option<&Replay>,
        events: &mut Vec<Event<'a, Attempt<'a>>>,
    ) -> Result<()> {
        let ledger = request.ledger;
        let tz = ledger.settings().timezone;
        for invoice in ledger.customer_invoices(customer.id.as_str()) {
            if !request.keeps_currency(invoice.currency) {
                continue;
            }
            for attempt in attempts(invoice, tz) {
                if !(self.keep)(&attempt) || !request.happened(attempt.instant) {
                    continue;
                }
                let date = attempt.instant.with_timezone(&tz).date_naive();
                events.push(Event {
                    date,
                    kind: (self.kind_of)(ledger, &attempt),
                    amount: attempt.amount,
                    currency: invoice.currency,
                    amount_base: request.convert(attempt.amount, invoice.currency, date)?,
                    customer_id: customer.id.as_str(),
                    id: attempt.id.clone(),
                    source: attempt,
                });
            }
        }
        Ok(())
    }
}

/// The detail row of a payment attempt, refund or discount: `amount` in
/// cents of its `currency`, `amount_base_currency` in the report's; with
/// `customer`, the invoice's `lines`.
#[derive(Clone, Serialize, Deserialize)]
pub(crate) struct AttemptRow {
    date: String,
    customer_id: String,
    customer_name: Option<String>,
    customer_email: Option<String>,
    #[serde(rename = "type")]
    kind: String,
    status: String,
    transaction_id: String,
    invoice_id: String,
    currency: Currency,
    description: String,
    amount: Cents,
    amount_base_currency: Cents,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    lines: Option<Vec<LineRow>>,
}

/// The detail row of a money event; `lines` adds the invoice's lines.
pub(crate) fn money_row(
    ledger: &Derived<'_>,
    event: &Event<'_, Attempt<'_>>,
    lines: bool,
) -> AttemptRow {
    let tz = ledger.settings().timezone;
    let attempt = &event.source;
    let invoice = attempt.invoice;
    let customer: Option<&Customer> = ledger.customer(event.customer_id);
    let plan = invoice
        .plan_id
        .as_ref()
        .and_then(|p| ledger.plan(p.as_str()));
    let description = invoice
        .details()
        .description
        .clone()
        .or_else(|| plan.map(|p| p.name.clone()))
        .unwrap_or_else(|| invoice.kind.as_str().to_string());
    let status = match attempt.result {
        TransactionResult::Successful => "successful",
        TransactionResult::Failed => "failed",
    };
    AttemptRow {
        date: stamp(attempt.instant),
        customer_id: event.customer_id.to_string(),
        customer_name: customer.map(|c| c.name.to_string()),
        customer_email: customer.and_then(|c| c.email.as_deref().map(str::to_string)),
        kind: event.kind.to_string(),
        status: status.to_string(),
        transaction_id: attempt.id.to_string(),
        invoice_id: invoice.id().to_string(),
        currency: event.currency,
        lines: lines.then(|| line_rows(invoice, description.clone(), tz)),
        description,
        amount: event.amount,
        amount_base_currency: event.amount_base,
    }
}

const TRANSACTIONS: Family = Family {
    types: &labels::<9>(
        &CHARGE_LABELS,
        &[
            ("refund", "Refunds"),
            ("discount", "Discounts"),
            ("fee", "Fees"),
        ],
    ),
    metrics: &[
        Metric::One("net", "Net cash"),
        Metric::One("payments", "Payments"),
        Metric::Types,
        Metric::One("count", "Transactions"),
        Metric::One("payments_count", "Payments (count)"),
        Metric::One("refund_count", "Refunds (count)"),
    ],
    figures: transaction_figures,
    money: true,
};

fn transaction_figures(tally: &Tally) -> Figures {
    let mut row = Figures::default();
    for (kind, _) in TRANSACTIONS.types {
        let bucket = tally.bucket(kind);
        row.set(*kind, bucket.amount);
        row.set(format!("{kind}_count"), bucket.count);
    }
    let payments = tally.total(CHARGE_TYPES);
    let refunds = tally.bucket("refund");
    row.set("payments", payments.amount);
    row.set("payments_count", payments.count);
    row.set("net", payments.amount + refunds.amount);
    row.set("count", payments.count + refunds.count);
    row
}

/// Successful payments and refunds.
const SUCCESSFUL_MONEY: MoneyEvents = MoneyEvents {
    keep: |a| a.result == TransactionResult::Successful,
    kind_of: |ledger, a| match a.kind {
        TransactionType::Refund => "refund",
        TransactionType::Payment => charge_type(ledger, a.invoice),
    },
};

/// Successful payments and refunds, then the invoice discounts, of each
/// customer.
struct TransactionEvents;

impl<'a> EventSource<'a> for TransactionEvents {
    type Source = Attempt<'a>;
    const NEEDS_REPLAY: bool = false;

    fn customer_events(
        &self,
        request: &EventRequest<'a>,
        customer: &'a Customer,
        replay: Option<&Replay>,
        events: &mut Vec<Event<'a, Attempt<'a>>>,
    ) -> Result<()> {
        SUCCESSFUL_MONEY.customer_events(request, customer, replay, events)?;
        let ledger = request.ledger;
        let tz = ledger.settings().timezone;
        for invoice in ledger.customer_invoices(customer.id.as_str()) {
            let charge = matches!(
                invoice.kind,
                InvoiceType::Subscription | InvoiceType::OneTime
            );
            if !charge
                || !invoice.counts()
                || invoice.details().discount_amount <= 0
                || !request.keeps_currency(invoice.currency)
            {
                continue;
            }
            let instant = invoice.invoice_date.instant(tz);
            if !request.happened(instant) {
                continue;
            }
            let date = instant.with_timezone(&tz).date_naive();
            let amount = -invoice.details().discount_amount;
            let id: Cow<str> = Cow::Owned(format!("{}-discount", invoice.id()));
            events.push(Event {
                date,
                kind: "discount",
                amount,
                currency: invoice.currency,
                amount_base: request.convert(amount, invoice.currency, date)?,
                customer_id: customer.id.as_str(),
                id: id.clone(),
                source: Attempt {
                    invoice,
                    kind: TransactionType::Payment,
                    result: TransactionResult::Successful,
                    instant,
                    amount,
                    id,
                },
            });
        }
        Ok(())
    }
}

/// `transactions-detail`: with `customer`, every transaction of those
/// customers (narrowed by `selected-date` and `selected-type` when given),
/// each with the `lines` of its invoice; without it, `selected-date` and
/// `selected-type` are required.
pub(super) fn transactions_detail(
    ledger: &Derived<'_>,
    params: &ReportParams,
    as_of: DateTime<Utc>,
) -> Result<ReportAnswer> {
    let customers = Query::new(params).list("customer");
    for id in &customers {
        if ledger.customer(id).is_none() {
            return Err(Error::NotFound {
                kind: Customer::KIND,
                id: id.clone(),
            });
        }
    }
    detail_answer::<AttemptRow>(transactions_detail_rows(ledger, params, as_of, &customers)?)
}

/// The rows of `transactions-detail` in this ledger: `selected-date` and
/// `selected-type` are optional when `customer` names customers.
fn transactions_detail_rows(
    ledger: &Derived<'_>,
    params: &ReportParams,
    as_of: DateTime<Utc>,
    customers: &[String],
) -> Result<ListPart> {
    let q = Query::new(params);
    if q.text("selected-date").is_some() && q.text("date").is_some() {
        return Err(Error::query(
            "date",
            "applies only without `selected-date`, which names the one period listed",
        ));
    }
    let by_customer = !customers.is_empty();
    let selection = by_customer_selection(by_customer);
    detail_rows(
        ledger,
        params,
        as_of,
        &TRANSACTIONS,
        selection,
        &TransactionEvents,
        |e| money_row(ledger, e, by_customer),
    )
}

/// With `customer`, neither `selected-date` nor `selected-type` is required.
fn by_customer_selection(by_customer: bool) -> Selection {
    Selection {
        date_optional: by_customer,
        type_optional: by_customer,
    }
}

event_view!(
    transactions,
    transactions_partial,
    transactions_finish,
    "transactions",
    EventView::Series,
    TRANSACTIONS,
    TransactionEvents
);
event_view!(
    transactions_summary,
    transactions_summary_partial,
    transactions_summary_finish,
    "transactions-summary",
    EventView::Summary,
    TRANSACTIONS,
    TransactionEvents
);
event_view!(
    transactions_table,
    transactions_table_partial,
    transactions_table_finish,
    "transactions-table",
    EventView::Table,
    TRANSACTIONS,
    TransactionEvents
);

/// `transactions-detail` in parts: the customers `customer` names that
/// this ledger holds, and the rows.
pub(super) fn transactions_detail_partial(
    ledger: &Derived<'_>,
    params: &ReportParams,
    as_of: DateTime<Utc>,
) -> Result<Body> {
    let customers = Query::new(params).list("customer");
    let mut part = transactions_detail_rows(ledger, params, as_of, &customers)?;
    part.found = customers
        .into_iter()
        .filter(|id| ledger.customer(id).is_some())
        .collect();
    Ok(Body::List(part))
}

pub(super) fn transactions_detail_finish(
    shape: &Derived<'_>,
    params: &ReportParams,
    as_of: DateTime<Utc>,
    body: Body,
) -> Result<ReportAnswer> {
    let Body::List(part) = body else {
        return Err(wrong_body("transactions-detail", &body));
    };
    let customers = Query::new(params).list("customer");
    part.check_found(&customers)?;
    let selection = by_customer_selection(!customers.is_empty());
    check_detail(shape, params, as_of, &TRANSACTIONS, selection)?;
    detail_answer::<AttemptRow>(part)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    fn invoice(extra: Value) -> crate::model::Invoice {
        let mut value = json!({"id": "i1", "customer_id": "c", "type": "subscription",
            "invoice_date": "2024-01-05", "amount": 3000, "currency": "USD", "plan_id": "m"});
        for (k, v) in extra.as_object().unwrap() {
            value[k] = v.clone();
        }
        crate::model::Invoice::from_json(&value).unwrap()
    }

    #[test]
    fn a_paid_invoice_is_one_successful_payment_on_its_payment_date() {
        let inv = invoice(json!({"payment_date": "2024-01-07"}));
        let list = attempts(inv.as_stored(), chrono_tz::UTC);
        assert_eq!(list.len(), 1);
        assert_eq!(list[0].result, TransactionResult::Successful);
        assert_eq!(list[0].amount, 3000);
        assert_eq!(list[0].instant.to_rfc3339(), "2024-01-07T00:00:00+00:00");
    }

    #[test]
    fn transactions_replace_the_invoice_and_refunds_are_negative() {
        let inv = invoice(json!({"transactions": [
            {"id": "t1", "type": "payment", "result": "failed", "date": "2024-01-05", "amount": 3000},
            {"id": "t2", "type": "payment", "result": "successful", "date": "2024-01-08"},
            {"id": "t3", "type": "refund", "result": "successful", "date": "2024-01-20", "amount": 500}
        ]}));
        let list = attempts(inv.as_stored(), chrono_tz::UTC);
        let amounts: Vec<(Cents, TransactionResult)> =
            list.iter().map(|a| (a.amount, a.result)).collect();
        assert_eq!(
            amounts,
            vec![
                (3000, TransactionResult::Failed),
                (3000, TransactionResult::Successful),
                (-500, TransactionResult::Successful)
            ]
        );
    }

    #[test]
    fn open_void_and_zero_invoices_make_no_attempt() {
        for extra in [
            json!({"status": "open"}),
            json!({"status": "void"}),
            json!({"amount": 0}),
        ] {
            assert!(attempts(invoice(extra).as_stored(), chrono_tz::UTC).is_empty());
        }
        let failed = invoice(json!({"status": "failed"}));
        assert_eq!(
            attempts(failed.as_stored(), chrono_tz::UTC)[0].result,
            TransactionResult::Failed
        );
    }
}
