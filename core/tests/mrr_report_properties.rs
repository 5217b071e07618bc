//! Property tests of the mrr report on random histories: the identity per
//! period with the FX adjustment, breakdown entries adding up to the total,
//! a range equal to its two halves, and fix_fx leaving nothing to adjust.

use proptest::prelude::*;
use serde_json::{Value, json};
use submetrics::Ledger;
use submetrics::testing::{
    Draft, RECURRING_KINDS, Shape, TestPlan, customer, fx_rates, int, params,
};

const PLANS: &[TestPlan] = &[
    TestPlan::new("m", "month", 1, "USD"),
    TestPlan::new("y", "year", 1, "USD"),
    TestPlan::new("w", "week", 1, "USD"),
    TestPlan::new("e", "month", 1, "EUR"),
    TestPlan::new("g", "year", 1, "GBP"),
];
const COUNTRIES: &[&str] = &["DE", "US", "FR", "JP"];

/// Up to 11 customers with up to 39 invoices in the first 200 days of 2024.
const SHAPE: Shape = Shape {
    plans: PLANS,
    customers: 1..12,
    invoices: 0..40,
    days: 0..200,
    amounts: 0..50_000,
    kinds: RECURRING_KINDS,
    zero_below: 0,
    refund_divisor: 3,
};

fn ledger(invoices: &[Draft], customers: usize) -> Ledger {
    let rates = fx_rates(&[
        ("2023-01-01", "EUR", 0.9),
        ("2024-03-01", "EUR", 0.8),
        ("2023-01-01", "GBP", 0.75),
        ("2024-05-10", "GBP", 0.7),
        ("2024-02-15", "EUR", 0.85),
        ("2024-04-20", "GBP", 0.72),
        ("2024-06-01", "EUR", 0.83),
        ("2024-07-20", "EUR", 0.95),
    ]);
    let list: Vec<Value> = (0..customers)
        .map(|i| {
            let mut record = customer(i);
            record["country"] = json!(COUNTRIES[i % COUNTRIES.len()]);
            record
        })
        .collect();
    SHAPE.ledger(&rates, &list, &invoice_records(invoices, 0))
}

/// The records of `invoices`, their ids numbered from `first`.
fn invoice_records(invoices: &[Draft], first: usize) -> Vec<Value> {
    invoices
        .iter()
        .enumerate()
        .map(|(i, draft)| SHAPE.record(draft, &format!("i{}", first + i)))
        .collect()
}

fn history() -> impl Strategy<Value = (usize, Vec<Draft>)> {
    SHAPE.history()
}

fn as_of() -> chrono::DateTime<chrono::Utc> {
    "2024-07-15T00:00:00Z".parse().expect("as_of")
}

fn periods(report: &Value) -> Vec<Value> {
    report["result"].as_array().cloned().unwrap_or_default()
}

/// The first period row (and field) where two mrr reports differ.
fn first_difference(a: &Value, b: &Value) -> Option<String> {
    let (rows_a, rows_b) = (periods(a), periods(b));
    if rows_a.len() != rows_b.len() {
        return Some(format!("{} rows against {}", rows_a.len(), rows_b.len()));
    }
    rows_a.iter().zip(&rows_b).find_map(|(x, y)| {
        let fields = x.as_object()?;
        fields
            .iter()
            .find(|(k, v)| y.get(k.as_str()) != Some(v))
            .map(|(k, v)| format!("{} {k}: {v} against {}", x["date"], y[k.as_str()]))
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn each_period_closes_with_its_fx_adjustment((customers, invoices) in history()) {
        let ledger = ledger(&invoices, customers);
        let report = ledger.report("mrr", &params(&[("date", "20240101-20240630")]), as_of()).expect("report");
        let rows = periods(&report);
        for (i, row) in rows.iter().enumerate() {
            let moved = ["new", "expansion", "contraction", "churn", "reactivation", "fx_adjustment"]
                .iter()
                .map(|k| int(&row[*k]))
                .sum::<i64>();
            prop_assert_eq!(int(&row["start_mrr"]) + moved, int(&row["total_mrr"]));
            prop_assert_eq!(int(&row["start_customers"]) + int(&row["customers_diff"]), int(&row["total_customers"]));
            if i > 0 {
                prop_assert_eq!(int(&row["start_mrr"]), int(&rows[i - 1]["total_mrr"]));
            }
        }
    }

    #[test]
    fn breakdown_entries_add_up_to_the_total((customers, invoices) in history()) {
        let ledger = ledger(&invoices, customers);
        for key in ["country", "plan", "currency", "billing_freq"] {
            let report = ledger
                .report("mrr", &params(&[("date", "20240101-20240630"), ("breakdown", key)]), as_of())
                .expect("report");
            for row in periods(&report) {
                let entries = row["breakdown"].as_object().cloned().unwrap_or_default();
                for field in ["total_mrr", "total_customers", "new", "churn", "expansion", "contraction", "reactivation"] {
                    let sum: i64 = entries.values().map(|e| int(&e[field])).sum();
                    if key == "currency" && field == "total_customers" {
                        // A customer paying in two currencies is in both entries.
                        prop_assert!(sum >= int(&row[field]));
                    } else {
                        prop_assert_eq!(sum, int(&row[field]), "{} {}", key, field);
                    }
                }
            }
        }
    }

    #[test]
    fn a_range_equals_its_two_halves((customers, invoices) in history()) {
        let ledger = ledger(&invoices, customers);
        let whole = periods(&ledger.report("mrr", &params(&[("date", "20240101-20240630")]), as_of()).expect("whole"));
        let first = periods(&ledger.report("mrr", &params(&[("date", "20240101-20240331")]), as_of()).expect("first"));
        let second = periods(&ledger.report("mrr", &params(&[("date", "20240401-20240630")]), as_of()).expect("second"));
        let halves: Vec<Value> = first.into_iter().chain(second).collect();
        prop_assert_eq!(whole, halves);
    }

    #[test]
    fn fix_fx_leaves_nothing_to_adjust((customers, invoices) in history()) {
        let ledger = ledger(&invoices, customers);
        let report = ledger
            .report("mrr", &params(&[("date", "20240101-20240630"), ("fix_fx", "true")]), as_of())
            .expect("report");
        for row in periods(&report) {
            prop_assert_eq!(int(&row["fx_adjustment"]), 0);
        }
    }

    #[test]
    fn the_movement_table_lists_what_the_mrr_report_sums((customers, invoices) in history()) {
        let ledger = ledger(&invoices, customers);
        let range = [("date", "20240101-20240630")];
        let mrr = periods(&ledger.report("mrr", &params(&range), as_of()).expect("mrr"));
        let table = ledger.report("movement-table", &params(&range), as_of()).expect("table");
        for row in &mrr {
            let date = row["date"].as_str().expect("date");
            let listed: i64 = table["result"]["list"]
                .as_array()
                .into_iter()
                .flatten()
                .filter(|m| m["date"] == date)
                .map(|m| int(&m["mrr_change_base_currency"]))
                .sum();
            let summed: i64 = ["new", "expansion", "contraction", "churn", "reactivation"].iter().map(|k| int(&row[*k])).sum();
            prop_assert_eq!(listed, summed, "{}", date);
        }
    }

    #[test]
    fn the_per_day_totals_agree_with_the_per_customer_sums(
        (customers, invoices) in history(),
        split in 0usize..40,
        interval in prop::sample::select(vec!["day", "week", "month", "quarter", "year"]),
        start in 0u64..400,
        base_eur in any::<bool>(),
        as_of_text in prop::sample::select(vec!["2024-07-15T00:00:00Z", "2024-03-10T12:00:00Z", "2025-01-01T00:00:00Z"]),
    ) {
        let at: chrono::DateTime<chrono::Utc> = as_of_text.parse().expect("as_of");
        let from = chrono::NaiveDate::from_ymd_opt(2023, 10, 1).expect("date") + chrono::Days::new(start);
        let to = from + chrono::Days::new(150);
        let date = format!("{}-{}", from.format("%Y%m%d"), to.format("%Y%m%d"));
        let unfiltered = params(&[("date", &date), ("interval", interval)]);
        // Every currency kept: the same figures, summed customer by customer.
        let every_currency = params(&[("date", &date), ("interval", interval), ("currency", "USD,EUR,GBP")]);
        let settle = |ledger: &mut Ledger| {
            if base_eur {
                ledger.update_settings(&json!({"base_currency": "EUR"})).expect("settings");
            }
        };
        // Written in three steps with reports between, so the totals are
        // built once and then patched with the customers each write touched.
        let split = split.min(invoices.len());
        let middle = split + (invoices.len() - split) / 2;
        let mut ledger = ledger(&invoices[..split], customers);
        settle(&mut ledger);
        ledger.report("mrr", &unfiltered, at).expect("first report");
        ledger.upsert_invoices(&invoice_records(&invoices[split..middle], split));
        ledger.report("mrr", &unfiltered, at).expect("second report");
        ledger.upsert_invoices(&invoice_records(&invoices[middle..], middle));
        let patched = ledger.report("mrr", &unfiltered, at).expect("patched");
        let summed = ledger.report("mrr", &every_currency, at).expect("summed");
        let mut fresh = self::ledger(&invoices, customers);
        settle(&mut fresh);
        let built = fresh.report("mrr", &unfiltered, at).expect("built");
        prop_assert_eq!(first_difference(&patched, &summed), None);
        prop_assert_eq!(first_difference(&patched, &built), None);
    }
}
