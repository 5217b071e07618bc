//! Property tests of the snapshot, cohort and scheduled reports on random
//! histories: cohort sizes add up to the customers who first paid in the
//! range, concentration shares add up to 100, the map adds up to summary,
//! and committed MRR is current MRR plus the scheduled changes.

use proptest::prelude::*;
use serde_json::{Value, json};
use submetrics::testing::{Draft, RECURRING_KINDS, Shape, TestPlan, customer, int, params};
use submetrics::{Ledger, MovementKind};

const PLANS: &[TestPlan] = &[
    TestPlan::new("m", "month", 1, "USD"),
    TestPlan::new("y", "year", 1, "USD"),
    TestPlan::new("w", "week", 1, "USD"),
];
const COUNTRIES: &[&str] = &["DE", "US", "FR"];

/// Up to 9 customers with up to 29 invoices in USD over 300 days from 2024.
const SHAPE: Shape = Shape {
    plans: PLANS,
    customers: 1..10,
    invoices: 0..30,
    days: 0..300,
    amounts: 0..40_000,
    kinds: RECURRING_KINDS,
    zero_below: 0,
    refund_divisor: 3,
};

/// Customers in three countries, every other one of tier `a`, else `b`.
fn ledger(invoices: &[Draft], customers: usize) -> Ledger {
    let list: Vec<Value> = (0..customers)
        .map(|i| {
            let mut record = customer(i);
            record["country"] = json!(COUNTRIES[i % 3]);
            record["custom_variables"] = json!({"tier": if i % 2 == 0 { "a" } else { "b" }});
            record
        })
        .collect();
    let records: Vec<Value> = invoices
        .iter()
        .enumerate()
        .map(|(n, draft)| SHAPE.record(draft, &format!("i{n}")))
        .collect();
    SHAPE.ledger(&[], &list, &records)
}

fn history() -> impl Strategy<Value = (usize, Vec<Draft>)> {
    SHAPE.history()
}

fn as_of() -> chrono::DateTime<chrono::Utc> {
    "2024-06-15T00:00:00Z".parse().expect("as_of")
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(40))]

    #[test]
    fn cohort_sizes_add_up_to_the_customers_who_first_paid((customers, invoices) in history()) {
        let ledger = ledger(&invoices, customers);
        let report = ledger.report("cohort", &params(&[("date", "20240101-20240615")]), as_of()).expect("cohort");
        let sizes: i64 = report["result"].as_array().into_iter().flatten().map(|c| int(&c["new_customers"])).sum();
        let payers = ledger
            .movements(as_of(), &submetrics::MovementFilter { kinds: vec![MovementKind::New], ..Default::default() })
            .expect("movements")
            .iter()
            .map(|m| m.customer_id.clone())
            .collect::<std::collections::BTreeSet<_>>()
            .len() as i64;
        prop_assert_eq!(sizes, payers);
    }

    #[test]
    fn concentration_shares_add_up_to_100_and_the_map_to_summary((customers, invoices) in history()) {
        let ledger = ledger(&invoices, customers);
        let summary = ledger.report("summary", &params(&[]), as_of()).expect("summary");
        let concentration = ledger.report("customer-concentration", &params(&[("limit", "1000")]), as_of()).expect("concentration");
        let list = concentration["result"]["list"].as_array().cloned().unwrap_or_default();
        if !list.is_empty() {
            let shares: f64 = list.iter().map(|c| c["share"].as_f64().expect("share")).sum();
            prop_assert!((shares - 100.0).abs() < 1e-6);
            prop_assert!((list.last().expect("last")["cumulative_share"].as_f64().expect("cumulative") - 100.0).abs() < 1e-6);
        }
        prop_assert_eq!(int(&concentration["total_mrr"]), int(&summary["summary"]["mrr_current"]));
        let map = ledger.report("map", &params(&[]), as_of()).expect("map");
        let mapped: i64 = map["result"].as_array().into_iter().flatten().map(|c| int(&c["mrr"])).sum();
        prop_assert_eq!(mapped, int(&summary["summary"]["mrr_current"]));
        let variables = ledger.report("custom-variables", &params(&[("variable", "tier")]), as_of()).expect("variables");
        let by_tier: i64 = variables["result"][0]["values"].as_array().into_iter().flatten().map(|v| int(&v["mrr"])).sum();
        prop_assert_eq!(by_tier, int(&summary["summary"]["mrr_current"]));
    }

    #[test]
    fn committed_mrr_is_current_plus_scheduled((customers, invoices) in history()) {
        let ledger = ledger(&invoices, customers);
        let early: chrono::DateTime<chrono::Utc> = "2024-03-01T00:00:00Z".parse().expect("as_of");
        let cmrr = ledger.report("cmrr-summary", &params(&[]), early).expect("cmrr");
        let scheduled: i64 = cmrr["scheduled"].as_array().into_iter().flatten().map(|s| int(&s["mrr_change_base_currency"])).sum();
        prop_assert_eq!(int(&cmrr["summary"]["cmrr"]), int(&cmrr["summary"]["mrr_current"]) + scheduled);
        let summary = ledger.report("churn-scheduled-summary", &params(&[]), early).expect("summary");
        prop_assert_eq!(int(&summary["summary"]["churn"]), int(&cmrr["summary"]["scheduled_churn"]));
    }
}
