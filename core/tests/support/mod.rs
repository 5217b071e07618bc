//! Shared by the partial tests: random histories with every record field
//! the reports read, and splitting a ledger's customers into partitions.

#![allow(dead_code)]

use chrono::{DateTime, Duration, NaiveDate, Utc};
use proptest::prelude::*;
use serde_json::{Value, json};
use submetrics::{Ledger, ReportParams, ReportPartial, Settings};

/// (id, interval, pricing model, currency)
pub const PLANS: &[(&str, &str, &str, &str)] = &[
    ("m", "month", "licensed", "USD"),
    ("y", "year", "licensed", "USD"),
    ("w", "week", "licensed", "USD"),
    ("u", "month", "metered", "USD"),
    ("e", "month", "licensed", "EUR"),
    ("g", "year", "licensed", "GBP"),
];
const COUNTRIES: &[&str] = &["DE", "US", "FR", "JP"];
const INDUSTRIES: &[&str] = &["retail", "Retail", "saas", "SaaS", "health"];

pub fn as_of() -> DateTime<Utc> {
    "2024-09-15T12:00:00Z".parse().unwrap()
}

pub fn day(offset: i64) -> String {
    (NaiveDate::from_ymd_opt(2024, 1, 1).unwrap() + Duration::days(offset)).to_string()
}

pub fn params(pairs: &[(&str, &str)]) -> ReportParams {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// A random customer record with index `i`.
fn customer_strategy(i: usize) -> impl Strategy<Value = Value> {
    (
        0usize..COUNTRIES.len() + 1,
        0usize..INDUSTRIES.len() + 1,
        prop::option::of(0i64..300),
        prop::option::of(200i64..400),
        any::<bool>(),
    )
        .prop_map(move |(country, industry, created, cancel, size)| {
            let mut customer =
                json!({"id": format!("c{i}"), "name": format!("Customer {}", i % 3)});
            if let Some(country) = COUNTRIES.get(country) {
                customer["country"] = json!(country);
            }
            let mut variables = serde_json::Map::new();
            if let Some(industry) = INDUSTRIES.get(industry) {
                variables.insert(
                    if size { "Industry" } else { "industry" }.into(),
                    json!(industry),
                );
            }
            if size {
                variables.insert(
                    "size".into(),
                    json!(if i.is_multiple_of(2) {
                        "small"
                    } else {
                        "Large"
                    }),
                );
            }
            customer["custom_variables"] = Value::Object(variables);
            if let Some(created) = created {
                customer["created_date"] = json!(day(created));
            }
            if let Some(cancel) = cancel {
                customer["cancel_date"] = json!(day(cancel));
            }
            customer
        })
}

/// One random invoice of one of `customers` customers: kind 0-3
/// subscription (an amount of 0 is a trial), 4 one-time, 5 refund, 6
/// cancellation.
fn invoice_strategy(customers: usize) -> impl Strategy<Value = Value> {
    (
        0..customers,
        0u8..7,
        0usize..PLANS.len(),
        0i64..360,
        prop_oneof![Just(0i64), 1i64..40_000],
        0u8..6,
        prop::collection::vec((any::<bool>(), any::<bool>(), 0i64..30, 0i64..5_000), 0..3),
        prop_oneof![Just(0i64), 1i64..500],
    )
        .prop_map(
            |(customer, kind, plan, offset, amount, status, transactions, discount)| {
                let (plan_id, _, _, currency) = PLANS[plan];
                let kind = match kind {
                    0..=3 => "subscription",
                    4 => "one-time",
                    5 => "refund",
                    _ => "cancellation",
                };
                let amount = match kind {
                    "refund" => -(amount / 3),
                    "cancellation" => 0,
                    _ => amount,
                };
                let status = ["paid", "paid", "paid", "open", "failed", "void"][status as usize];
                let mut invoice = json!({
                    "customer_id": format!("c{customer}"), "type": kind, "amount": amount,
                    "currency": currency, "invoice_date": day(offset), "status": status,
                    "due_date": day(offset + 14), "discount_amount": discount,
                });
                if kind == "subscription" || (kind == "refund" && plan % 2 == 0) {
                    invoice["plan_id"] = json!(plan_id);
                }
                if kind == "refund" && plan % 3 == 0 {
                    // Any invoice, possibly another customer's.
                    invoice["refunded_invoice_id"] = json!(format!("i{:02}", offset % 12));
                }
                let transactions: Vec<Value> = transactions
                    .iter()
                    .map(|(payment, ok, after, amount)| {
                        json!({
                            "type": if *payment { "payment" } else { "refund" },
                            "result": if *ok { "successful" } else { "failed" },
                            "date": day(offset + after),
                            "amount": amount,
                        })
                    })
                    .collect();
                if !transactions.is_empty() && kind != "cancellation" {
                    invoice["transactions"] = json!(transactions);
                }
                invoice
            },
        )
}

/// A random history: customer records and invoices.
pub fn history() -> impl Strategy<Value = (Vec<Value>, Vec<Value>)> {
    (1usize..9).prop_flat_map(|customers| {
        let records: Vec<_> = (0..customers).map(customer_strategy).collect();
        (
            records,
            prop::collection::vec(invoice_strategy(customers), 0..30),
        )
            .prop_map(|(customers, invoices)| {
                let invoices = invoices
                    .into_iter()
                    .enumerate()
                    .map(|(i, mut invoice)| {
                        invoice["id"] = json!(format!("i{i:02}"));
                        invoice
                    })
                    .collect();
                (customers, invoices)
            })
    })
}

/// The ledger of a random history, with plans, a plan group and FX rates.
pub fn ledger_with(customers: &[Value], invoices: &[Value]) -> Ledger {
    let mut ledger = Ledger::new(Settings::default());
    ledger
        .load_fx_rates(&[
            json!({"date": "2023-01-01", "currency": "EUR", "rate": 0.9}),
            json!({"date": "2024-03-01", "currency": "EUR", "rate": 0.8}),
            json!({"date": "2024-06-10", "currency": "EUR", "rate": 0.87}),
            json!({"date": "2023-01-01", "currency": "GBP", "rate": 0.75}),
            json!({"date": "2024-05-10", "currency": "GBP", "rate": 0.7}),
        ])
        .unwrap();
    let plans: Vec<Value> = PLANS
        .iter()
        .map(|(id, freq, model, currency)| {
            json!({"id": id, "name": format!("Plan {id}"), "billing_freq": freq, "currency": currency, "pricing_model": model})
        })
        .collect();
    ledger.upsert_plans(&plans);
    ledger.upsert_plan_groups(&[json!({"id": "annual", "name": "Annual", "plans": ["y", "g"]})]);
    ledger.upsert_customers(customers);
    ledger.upsert_invoices(invoices);
    ledger
}

/// The ledgers of `parts` partitions of `ledger`'s customers: customer `i`
/// (in insertion order) goes to partition `assign(i)`. Each keeps every
/// plan, plan group, FX rate and setting; a partition may be empty.
pub fn split(ledger: &Ledger, parts: usize, assign: impl Fn(usize) -> usize) -> Vec<Ledger> {
    let ids: Vec<String> = ledger.customers().map(|c| c.id.to_string()).collect();
    (0..parts)
        .map(|part| {
            let mut own = ledger.clone();
            for (i, id) in ids.iter().enumerate() {
                if assign(i) % parts != part {
                    own.delete_customer(id).unwrap();
                }
            }
            own
        })
        .collect()
}

/// The partials of `name` over each ledger.
pub fn partials(
    ledgers: &[Ledger],
    name: &str,
    params: &ReportParams,
    as_of: DateTime<Utc>,
) -> submetrics::Result<Vec<ReportPartial>> {
    ledgers
        .iter()
        .map(|l| l.report_partial(name, params, as_of))
        .collect()
}

/// The report finished from the partials merged in order.
pub fn finished(partials: Vec<ReportPartial>) -> submetrics::Result<Value> {
    ReportPartial::merge_all(partials)?.finish()
}
