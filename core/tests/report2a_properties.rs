//! Property tests of the snapshot, cohort and scheduled reports on random
//! histories: cohort sizes add up to the customers who first paid in the
//! range, concentration shares add up to 100, the map adds up to summary,
//! and committed MRR is current MRR plus the scheduled changes.

use proptest::prelude::*;
use serde_json::{Value, json};
use submetrics::{Ledger, MovementKind, ReportParams, Settings};

/// One random invoice: (customer, plan, day offset, amount, kind 0-5).
type RandomInvoice = (usize, usize, i64, i64, u8);

const PLANS: &[(&str, &str)] = &[("m", "month"), ("y", "year"), ("w", "week")];
const COUNTRIES: &[&str] = &["DE", "US", "FR"];

fn ledger(invoices: &[RandomInvoice], customers: usize) -> Ledger {
    let mut ledger = Ledger::new(Settings::default());
    let plans: Vec<Value> = PLANS
        .iter()
        .map(|(id, freq)| json!({"id": id, "name": id, "interval": freq, "currency": "USD"}))
        .collect();
    ledger.upsert_plans(&plans);
    let list: Vec<Value> = (0..customers)
        .map(|i| {
            let tier = if i % 2 == 0 { "a" } else { "b" };
            json!({"id": format!("c{i}"), "name": format!("C{i}"), "country": COUNTRIES[i % 3], "custom_variables": {"tier": tier}})
        })
        .collect();
    ledger.upsert_customers(&list);
    let records: Vec<Value> = invoices
        .iter()
        .enumerate()
        .map(|(n, (customer, plan, day, amount, kind))| {
            let date = chrono::NaiveDate::from_ymd_opt(2024, 1, 1).expect("date")
                + chrono::Days::new(*day as u64);
            let mut invoice = json!({"id": format!("i{n}"), "customer_id": format!("c{customer}"),
                "invoice_date": date.to_string(), "currency": "USD"});
            match kind {
                0..=3 => {
                    invoice["type"] = json!("subscription");
                    invoice["plan_id"] = json!(PLANS[*plan].0);
                    invoice["amount"] = json!(amount);
                }
                4 => {
                    invoice["type"] = json!("refund");
                    invoice["amount"] = json!(-(amount / 3));
                }
                _ => {
                    invoice["type"] = json!("cancellation");
                    invoice["amount"] = json!(0);
                }
            }
            invoice
        })
        .collect();
    ledger.upsert_invoices(&records);
    ledger
}

fn history() -> impl Strategy<Value = (usize, Vec<RandomInvoice>)> {
    (1usize..10).prop_flat_map(|customers| {
        (
            Just(customers),
            prop::collection::vec(
                (
                    0..customers,
                    0..PLANS.len(),
                    0i64..300,
                    0i64..40_000,
                    0u8..6,
                ),
                0..30,
            ),
        )
    })
}

fn params(pairs: &[(&str, &str)]) -> ReportParams {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

fn as_of() -> chrono::DateTime<chrono::Utc> {
    "2024-06-15T00:00:00Z".parse().expect("as_of")
}

fn int(value: &Value) -> i64 {
    value.as_i64().expect("an integer")
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
