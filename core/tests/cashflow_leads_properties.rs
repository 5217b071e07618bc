//! Property tests of the cash-flow and funnel reports on random invoice
//! histories: transaction amounts reconcile with the invoices, failure
//! rates stay within 0..=100, failed payments agree between reports, the
//! outstanding buckets add up to the total, lead counts match the
//! customers, and no parameter makes a report panic.

use chrono::{DateTime, Utc};
use proptest::prelude::*;
use serde_json::{Value, json};
use submetrics::Ledger;
use submetrics::testing::{EVERY_KIND, Shape, TestPlan, customer, day, fx_rates, params};

const CUSTOMERS: usize = 4;
const RANGE: &str = "20240101-20250630";

/// Four customers with up to 24 invoices over 400 days from 2024; a refund
/// returns the whole amount drawn.
const SHAPE: Shape = Shape {
    plans: &[
        TestPlan::new("m", "month", 1, "USD"),
        TestPlan::new("y", "year", 1, "USD"),
        TestPlan::new("w", "week", 1, "USD"),
        TestPlan::new("u", "month", 1, "USD").metered(),
        TestPlan::new("e", "month", 1, "EUR"),
    ],
    customers: CUSTOMERS..CUSTOMERS + 1,
    invoices: 0..25,
    days: 0..400,
    amounts: 1..20_000,
    kinds: EVERY_KIND,
    zero_below: 0,
    refund_divisor: 1,
};

/// Invoice statuses, each entry equally likely.
const STATUSES: &[&str] = &["paid", "paid", "paid", "open", "failed", "void"];

fn as_of() -> DateTime<Utc> {
    "2025-06-01T00:00:00Z".parse().unwrap()
}

/// A random transaction: (payment?, successful?, days after the invoice, amount or 0).
type TransactionSpec = (bool, bool, i64, i64);

/// Invoices `i0`, `i1`, ..., each with a status, a due date 14 days after
/// it, a discount, and up to two transactions.
fn history() -> impl Strategy<Value = Vec<Value>> {
    let extra = (
        0..STATUSES.len(),
        prop::collection::vec((any::<bool>(), any::<bool>(), 0i64..30, 0i64..5_000), 0..3),
        0i64..500,
    );
    SHAPE.history_with(extra).prop_map(|(_, drafts)| {
        drafts
            .iter()
            .enumerate()
            .map(|(i, (draft, (status, transactions, discount)))| {
                let mut invoice = SHAPE.record(draft, &format!("i{i}"));
                invoice["status"] = json!(STATUSES[*status]);
                invoice["due_date"] = json!(day(draft.day + 14).to_string());
                invoice["discount_amount"] = json!(discount);
                let transactions: Vec<Value> = transactions
                    .iter()
                    .map(|(payment, ok, after, amount): &TransactionSpec| {
                        json!({
                            "type": if *payment { "payment" } else { "refund" },
                            "result": if *ok { "successful" } else { "failed" },
                            "date": day(draft.day + after).to_string(),
                            "amount": amount,
                        })
                    })
                    .collect();
                if !transactions.is_empty() {
                    invoice["transactions"] = json!(transactions);
                }
                invoice
            })
            .collect()
    })
}

fn ledger_with(invoices: &[Value]) -> Ledger {
    let customers: Vec<Value> = (0..CUSTOMERS)
        .map(|i| {
            let mut record = customer(i);
            record["created"] = json!(day(i as i64 * 50).to_string());
            record
        })
        .collect();
    SHAPE.ledger(
        &fx_rates(&[("2023-01-01", "EUR", 0.9)]),
        &customers,
        invoices,
    )
}

/// Sums a field over every period of a series report.
fn sum(report: &Value, field: &str) -> i64 {
    report["result"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p[field].as_i64().unwrap())
        .sum()
}

/// What the invoices say moved, in one currency: (payments, refunds), by
/// the rule restated plainly: a transaction list is the record of an
/// invoice's money (successful entries only; an entry without amount is
/// for the whole invoice; every entry of a refund invoice is a refund);
/// without one, a paid invoice moved its amount.
fn moved_by_invoices(ledger: &Ledger, currency: &str) -> (i64, i64) {
    let (mut payments, mut refunds) = (0, 0);
    for invoice in ledger.invoices() {
        let counted = invoice.counts() && invoice.amount != 0;
        if !counted || invoice.currency.as_str() != currency {
            continue;
        }
        let refund_invoice = invoice.kind.as_str() == "refund";
        if invoice.details().transactions.is_empty() {
            if invoice.status.as_str() == "paid" {
                if refund_invoice {
                    refunds += invoice.amount;
                } else if invoice.kind.as_str() != "cancellation" {
                    payments += invoice.amount;
                }
            }
            continue;
        }
        if invoice.kind.as_str() == "cancellation" {
            continue;
        }
        for t in &invoice.details().transactions {
            if t.result != submetrics::model::TransactionResult::Successful {
                continue;
            }
            let amount = if t.amount == 0 {
                invoice.amount.abs()
            } else {
                t.amount.abs()
            };
            if refund_invoice || t.kind == submetrics::model::TransactionType::Refund {
                refunds -= amount;
            } else {
                payments += amount;
            }
        }
    }
    (payments, refunds)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn transaction_amounts_reconcile_with_the_invoices(invoices in history()) {
        let ledger = ledger_with(&invoices);
        prop_assert_eq!(ledger.invoices().len(), invoices.len(), "every generated invoice is valid");
        for currency in ["USD", "EUR"] {
            let p = params(&[("date", RANGE), ("currency", currency), ("baseCurrency", currency)]);
            let report = ledger.report("transactions", &p, as_of()).unwrap();
            let (payments, refunds) = moved_by_invoices(&ledger, currency);
            prop_assert_eq!(sum(&report, "payments"), payments);
            prop_assert_eq!(sum(&report, "refund"), refunds);
            prop_assert_eq!(sum(&report, "net"), payments + refunds);
            let refunds_report = ledger.report("cashflow-refunds", &p, as_of()).unwrap();
            prop_assert_eq!(sum(&refunds_report, "refunds"), refunds);
        }
    }

    #[test]
    fn failure_rates_stay_within_0_and_100_and_agree_with_failed_payments(invoices in history()) {
        let ledger = ledger_with(&invoices);
        for interval in ["week", "month", "quarter"] {
            let p = params(&[("date", RANGE), ("interval", interval)]);
            let rates = ledger.report("cashflow-failure-rate", &p, as_of()).unwrap();
            let failed = ledger.report("cashflow-failed-payments", &p, as_of()).unwrap();
            let periods = rates["result"].as_array().unwrap();
            for (period, failed_period) in periods.iter().zip(failed["result"].as_array().unwrap()) {
                let attempts = period["attempts"].as_i64().unwrap();
                let failed_count = period["failed_count"].as_i64().unwrap();
                prop_assert_eq!(attempts, period["successful_count"].as_i64().unwrap() + failed_count);
                prop_assert_eq!(failed_count, failed_period["failed_count"].as_i64().unwrap());
                prop_assert_eq!(&period["failed"], &failed_period["failed"]);
                match period["failure_rate"].as_f64() {
                    None => prop_assert_eq!(attempts, 0),
                    Some(rate) => prop_assert!((0.0..=100.0).contains(&rate)),
                }
            }
        }
    }

    #[test]
    fn outstanding_buckets_add_up_to_the_total(invoices in history()) {
        let ledger = ledger_with(&invoices);
        let report = ledger.report("cashflow-outstanding-unpaid", &params(&[]), as_of()).unwrap();
        let buckets = report["buckets"].as_array().unwrap();
        let bucket_count: i64 = buckets.iter().map(|b| b["count"].as_i64().unwrap()).sum();
        let bucket_amount: i64 = buckets.iter().map(|b| b["amount"].as_i64().unwrap()).sum();
        prop_assert_eq!(bucket_count, report["total"]["count"].as_i64().unwrap());
        prop_assert_eq!(bucket_amount, report["total"]["amount"].as_i64().unwrap());
        for row in report["result"]["list"].as_array().unwrap() {
            prop_assert!(row["amount"].as_i64().unwrap() > 0);
            prop_assert!(row["amount"].as_i64().unwrap() <= row["total"].as_i64().unwrap());
            prop_assert!(row["days_past_due"].as_i64().unwrap() >= 0);
        }
    }

    #[test]
    fn every_customer_is_one_lead_and_conversions_never_exceed_leads(invoices in history()) {
        let ledger = ledger_with(&invoices);
        let p = params(&[("date", RANGE)]);
        let report = ledger.report("leads", &p, as_of()).unwrap();
        prop_assert_eq!(sum(&report, "leads"), CUSTOMERS as i64);
        prop_assert!(sum(&report, "conversions") <= CUSTOMERS as i64);
        for period in report["result"].as_array().unwrap() {
            for rate in ["lead_to_paid_rate", "trial_to_paid_rate"] {
                if let Some(rate) = period[rate].as_f64() {
                    prop_assert!((0.0..=100.0).contains(&rate));
                }
            }
        }
    }

    #[test]
    fn no_parameter_makes_a_report_panic(
        invoices in history(),
        key in prop::sample::select(vec![
            "date", "interval", "baseCurrency", "currency", "customer", "region", "plan",
            "selected-date", "selected-type", "fix_fx", "fx_date", "limit", "offset", "country",
        ]),
        value in "[a-z0-9 -]{0,12}",
    ) {
        let ledger = ledger_with(&invoices);
        for name in [
            "leads", "leads-days", "leads-summary", "leads-table", "transactions",
            "transactions-detail", "transactions-summary", "transactions-table",
            "cashflow-failed-payments", "cashflow-failed-payments-detail",
            "cashflow-failed-payments-summary", "cashflow-failed-payments-table",
            "cashflow-refunds", "cashflow-refunds-detail", "cashflow-refunds-table",
            "cashflow-failure-rate", "cashflow-failure-rate-summary", "cashflow-outstanding-unpaid",
        ] {
            let p = params(&[("selected-date", "2024-03-01"), ("selected-type", "one_time"), (key, value.as_str())]);
            if let Err(error) = ledger.report(name, &p, as_of()) {
                prop_assert!(
                    ["invalid_query", "not_found", "missing_fx_rate"].contains(&error.code()),
                    "{name}: {error}"
                );
            }
        }
    }
}

#[test]
fn detail_reports_name_their_missing_parameters() {
    let ledger = ledger_with(&[]);
    let error = ledger
        .report("transactions-detail", &params(&[]), as_of())
        .unwrap_err();
    assert_eq!(error.code(), "invalid_query");
    assert_eq!(error.field(), Some("selected-date"));
    let error = ledger
        .report(
            "transactions-detail",
            &params(&[("selected-date", "2024-01-01")]),
            as_of(),
        )
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        "parameter `selected-type`: is required (one of month_sub, year_sub, week_sub, day_sub, metered, one_time, refund, discount, fee)"
    );
    let error = ledger
        .report(
            "transactions-detail",
            &params(&[("customer", "nobody")]),
            as_of(),
        )
        .unwrap_err();
    assert_eq!(error.code(), "not_found");
}
