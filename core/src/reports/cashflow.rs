//! Cash-flow reports: failed payments, refunds, the payment failure rate and
//! outstanding unpaid invoices. Payment attempts are read from invoices by
//! [`attempts`](super::transactions::attempts) (see the `transactions`
//! module doc): void invoices never count.
//!
//! - `cashflow-failed-payments` (`-detail`, `-summary`, `-table`): failed
//!   payment attempts per period, typed by what they charged for
//!   ([`super::transactions::CHARGE_TYPES`]). Fields: `failed` (amount attempted, positive),
//!   `failed_count`, and per type `t`, `t` and `t_count`.
//! - `cashflow-refunds` (`-detail`, `-table`): successful refunds (refund
//!   invoices and refund transactions) per period, typed by what the
//!   refunded invoice charged for (a refund invoice's
//!   `refunded_invoice_id` when it is an invoice of the same customer, as
//!   the MRR rules read it; else its own plan; `unknown` when neither says).
//!   Fields: `refunds` (negative), `refunds_count`, per type `t`, `t_count`.
//! - `cashflow-failure-rate` (`-summary`): payment attempts per period
//!   (refunds are not attempts): `attempts`, `successful_count`,
//!   `failed_count`, `attempted` and `failed` amounts, and `failure_rate` =
//!   100 x failed attempts / attempts (`null` without attempts).
//! - `cashflow-outstanding-unpaid`: see the `unpaid` module.

use super::ReportParams;
use super::event_parts::{EventView, event_detail, event_view};
use super::events::{Event, Family, Figures, Metric, Tally, labels, percent};
use super::transactions::{
    Attempt, AttemptRow, CHARGE_LABELS, MoneyEvents, charge_type, money_row, plan_charge_type,
};
use crate::derive::Derived;
use crate::error::Result;
use crate::model::{InvoiceType, StoredInvoice, TransactionResult, TransactionType};
use chrono::{DateTime, Utc};

/// Amount and count per type, then the total under `total`.
fn typed_figures(tally: &Tally, types: &[(&str, &str)], total: &str) -> Figures {
    let mut row = Figures::default();
    let kinds: Vec<&str> = types.iter().map(|(t, _)| *t).collect();
    let sum = tally.total(&kinds);
    row.set(total, sum.amount);
    row.set(format!("{total}_count"), sum.count);
    for kind in kinds {
        let bucket = tally.bucket(kind);
        row.set(kind, bucket.amount);
        row.set(format!("{kind}_count"), bucket.count);
    }
    row
}

/// A detail row of a payment attempt, without invoice lines.
fn money_row_of(ledger: &Derived<'_>, event: &Event<'_, Attempt<'_>>) -> AttemptRow {
    money_row(ledger, event, false)
}

// ---- failed payments -------------------------------------------------------

const FAILED_PAYMENTS: Family = Family {
    types: &CHARGE_LABELS,
    metrics: &[
        Metric::One("failed", "Failed payments"),
        Metric::One("failed_count", "Failed payments (count)"),
        Metric::Types,
    ],
    figures: |tally| typed_figures(tally, &CHARGE_LABELS, "failed"),
    money: true,
};

/// Failed payments, by what they charge for.
const FAILED_PAYMENT_EVENTS: MoneyEvents = MoneyEvents {
    keep: |a| a.kind == TransactionType::Payment && a.result == TransactionResult::Failed,
    kind_of: |ledger, a| charge_type(ledger, a.invoice),
};

event_detail!(
    failed_payments_detail,
    failed_payments_detail_partial,
    failed_payments_detail_finish,
    "cashflow-failed-payments-detail",
    FAILED_PAYMENTS,
    FAILED_PAYMENT_EVENTS,
    money_row_of,
    AttemptRow
);

event_view!(
    failed_payments,
    failed_payments_partial,
    failed_payments_finish,
    "cashflow-failed-payments",
    EventView::Series,
    FAILED_PAYMENTS,
    FAILED_PAYMENT_EVENTS
);
event_view!(
    failed_payments_summary,
    failed_payments_summary_partial,
    failed_payments_summary_finish,
    "cashflow-failed-payments-summary",
    EventView::Summary,
    FAILED_PAYMENTS,
    FAILED_PAYMENT_EVENTS
);
event_view!(
    failed_payments_table,
    failed_payments_table_partial,
    failed_payments_table_finish,
    "cashflow-failed-payments-table",
    EventView::Table,
    FAILED_PAYMENTS,
    FAILED_PAYMENT_EVENTS
);

// ---- refunds ---------------------------------------------------------------

/// What refunds give money back for: the payment types, or `unknown`.
const REFUND_LABELS: &[(&str, &str)] = &labels::<7>(&CHARGE_LABELS, &[("unknown", "Unknown")]);

const REFUNDS: Family = Family {
    types: REFUND_LABELS,
    metrics: &[
        Metric::One("refunds", "Refunds"),
        Metric::One("refunds_count", "Refunds (count)"),
        Metric::Types,
    ],
    figures: |tally| typed_figures(tally, REFUND_LABELS, "refunds"),
    money: true,
};

/// What a refund gives money back for (module doc).
fn refunded_type(ledger: &Derived<'_>, invoice: StoredInvoice<'_>) -> &'static str {
    if invoice.kind != InvoiceType::Refund {
        return charge_type(ledger, invoice);
    }
    if let Some(refunded) = invoice
        .details()
        .refunded_invoice_id
        .as_ref()
        .and_then(|id| ledger.invoice(id.as_str()))
        .filter(|refunded| refunded.customer_id == invoice.customer_id)
    {
        return charge_type(ledger, refunded);
    }
    invoice
        .plan_id
        .as_ref()
        .and_then(|p| ledger.plan(p.as_str()))
        .map_or("unknown", plan_charge_type)
}

/// Refunds, by what they give money back for.
const REFUND_EVENTS: MoneyEvents = MoneyEvents {
    keep: |a| a.kind == TransactionType::Refund && a.result == TransactionResult::Successful,
    kind_of: |ledger, a| refunded_type(ledger, a.invoice),
};

event_detail!(
    refunds_detail,
    refunds_detail_partial,
    refunds_detail_finish,
    "cashflow-refunds-detail",
    REFUNDS,
    REFUND_EVENTS,
    money_row_of,
    AttemptRow
);

event_view!(
    refunds,
    refunds_partial,
    refunds_finish,
    "cashflow-refunds",
    EventView::Series,
    REFUNDS,
    REFUND_EVENTS
);
event_view!(
    refunds_table,
    refunds_table_partial,
    refunds_table_finish,
    "cashflow-refunds-table",
    EventView::Table,
    REFUNDS,
    REFUND_EVENTS
);

// ---- failure rate ----------------------------------------------------------

const FAILURE_RATE: Family = Family {
    types: &[("successful", "Successful"), ("failed", "Failed")],
    metrics: &[
        Metric::One("failure_rate", "Failure rate (%)"),
        Metric::One("attempts", "Payment attempts"),
        Metric::One("successful_count", "Successful"),
        Metric::One("failed_count", "Failed"),
        Metric::One("attempted", "Amount attempted"),
        Metric::One("failed", "Amount failed"),
    ],
    figures: failure_rate_figures,
    money: true,
};

fn failure_rate_figures(tally: &Tally) -> Figures {
    let successful = tally.bucket("successful");
    let failed = tally.bucket("failed");
    let attempts = successful.count + failed.count;
    let mut row = Figures::default();
    row.set("attempts", attempts);
    row.set("successful_count", successful.count);
    row.set("failed_count", failed.count);
    row.set("attempted", successful.amount + failed.amount);
    row.set("failed", failed.amount);
    row.set("failure_rate", percent(failed.count, attempts));
    row
}

/// Payment attempts, successful or failed.
const PAYMENT_ATTEMPT_EVENTS: MoneyEvents = MoneyEvents {
    keep: |a| a.kind == TransactionType::Payment,
    kind_of: |_, a| match a.result {
        TransactionResult::Successful => "successful",
        TransactionResult::Failed => "failed",
    },
};

event_view!(
    failure_rate,
    failure_rate_partial,
    failure_rate_finish,
    "cashflow-failure-rate",
    EventView::Series,
    FAILURE_RATE,
    PAYMENT_ATTEMPT_EVENTS
);
event_view!(
    failure_rate_summary,
    failure_rate_summary_partial,
    failure_rate_summary_finish,
    "cashflow-failure-rate-summary",
    EventView::Summary,
    FAILURE_RATE,
    PAYMENT_ATTEMPT_EVENTS
);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Ledger;
    use crate::model::Settings;
    use serde_json::json;

    fn ledger() -> Ledger {
        let mut ledger = Ledger::new(Settings::default());
        ledger.upsert_plans(&[
            json!({"id": "y", "name": "Annual", "interval": "year", "interval_count": 1, "currency": "USD"}),
            json!({"id": "w", "name": "Weekly", "interval": "week", "interval_count": 1, "currency": "USD"}),
        ]);
        ledger.upsert_customers(&[json!({"id": "A", "name": "Alpha"})]);
        let report = ledger.upsert_invoices(&[
            json!({"id": "i1", "customer_id": "A", "type": "subscription", "plan_id": "y",
                   "invoice_date": "2024-01-01", "amount": 12000, "currency": "USD"}),
            json!({"id": "r1", "customer_id": "A", "type": "refund", "refunded_invoice_id": "i1",
                   "invoice_date": "2024-02-01", "amount": -100, "currency": "USD"}),
            json!({"id": "r2", "customer_id": "A", "type": "refund", "plan_id": "w",
                   "invoice_date": "2024-02-02", "amount": -100, "currency": "USD"}),
            json!({"id": "r3", "customer_id": "A", "type": "refund",
                   "invoice_date": "2024-02-03", "amount": -100, "currency": "USD"}),
        ]);
        assert_eq!(report.accepted(), 4);
        ledger
    }

    #[test]
    fn a_refund_is_typed_by_the_invoice_it_refunds_else_its_plan_else_unknown() {
        let ledger = ledger();
        let ledger = ledger.derived();
        let kind = |id: &str| refunded_type(&ledger, ledger.invoice(id).unwrap());
        assert_eq!(kind("r1"), "year_sub");
        assert_eq!(kind("r2"), "week_sub");
        assert_eq!(kind("r3"), "unknown");
        assert_eq!(kind("i1"), "year_sub");
    }
}
