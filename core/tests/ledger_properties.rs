//! Property tests on random histories: the MRR identity, order independence,
//! idempotence, incremental = full recompute, and no panic on any input.

use chrono::{DateTime, Duration, NaiveDate, Utc};
use proptest::prelude::*;
use serde_json::{Value, json};
use std::collections::BTreeMap;
use submetrics::testing::{EVERY_KIND, Shape, TestPlan, customer, day, fx_rates, shuffle};
use submetrics::{Ledger, MovementFilter, Settings, model::start_of_day};

/// Up to 4 customers with up to 24 invoices over 400 days from 2024; a
/// subscription or one-time amount under 1500 is sent as 0.
const SHAPE: Shape = Shape {
    plans: &[
        TestPlan::new("m", "month", 1, "USD"),
        TestPlan::new("m2", "month", 1, "USD"),
        TestPlan::new("y", "year", 1, "USD"),
        TestPlan::new("w", "week", 2, "USD"),
        TestPlan::new("q", "month", 3, "USD"),
        TestPlan::new("e", "month", 1, "EUR"),
    ],
    customers: 1..5,
    invoices: 0..25,
    days: 0..400,
    amounts: 0..20_000,
    kinds: EVERY_KIND,
    zero_below: 1500,
    refund_divisor: 2,
};

/// Invoice statuses, each entry equally likely.
const STATUSES: &[&str] = &[
    "paid", "paid", "paid", "paid", "open", "failed", "void", "paid",
];

fn customers(n: usize) -> Vec<Value> {
    (0..n).map(customer).collect()
}

/// A number of customers and invoices `i00`, `i01`, ... of theirs, each
/// with a status, a quantity of 1 to 5 and maybe one of two subscriptions.
fn history() -> impl Strategy<Value = (usize, Vec<Value>)> {
    let extra = (prop::option::of(0u8..2), 0..STATUSES.len(), 1i64..6);
    SHAPE.history_with(extra).prop_map(|(n, drafts)| {
        let invoices = drafts
            .iter()
            .enumerate()
            .map(|(i, (draft, (subscription, status, quantity)))| {
                let mut invoice = SHAPE.record(draft, &format!("i{i:02}"));
                invoice["status"] = json!(STATUSES[*status]);
                invoice["quantity"] = json!(quantity);
                if let Some(subscription) = subscription {
                    invoice["subscription_id"] = json!(format!("s{subscription}"));
                }
                invoice
            })
            .collect();
        (n, invoices)
    })
}

fn ledger_with(customer_count: usize, invoices: &[Value]) -> Ledger {
    let rates = fx_rates(&[("2023-01-01", "EUR", 0.9)]);
    SHAPE.ledger(&rates, &customers(customer_count), invoices)
}

fn as_of() -> DateTime<Utc> {
    "2025-03-01T00:00:00Z".parse().unwrap()
}

fn movements(ledger: &Ledger) -> Value {
    serde_json::to_value(
        ledger
            .movements(as_of(), &MovementFilter::default())
            .unwrap(),
    )
    .unwrap()
}

fn end_of_day(date: NaiveDate) -> DateTime<Utc> {
    start_of_day(date.succ_opt().unwrap(), Settings::default().timezone) - Duration::seconds(1)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// For every customer and day, MRR per currency at the end of the day is
    /// the running sum of its movements, and being a customer (MRR > 0) is the
    /// running sum of customer_count_change.
    #[test]
    fn mrr_identity_holds_every_day((n, invoices) in history()) {
        let ledger = ledger_with(n, &invoices);
        let all = ledger.movements(as_of(), &MovementFilter::default()).unwrap();
        for customer in 0..n {
            let id = format!("c{customer}");
            let mut running: BTreeMap<String, i64> = BTreeMap::new();
            let mut count = 0;
            let mut rows = all.iter().filter(|m| m.customer_id.as_str() == id).peekable();
            for offset in -1..430 {
                let date = day(offset);
                while let Some(m) = rows.next_if(|m| m.date <= date) {
                    *running.entry(m.currency.to_string()).or_insert(0) += m.mrr_change;
                    count += m.customer_count_change;
                }
                let actual = ledger.customer_mrr_at(&id, end_of_day(date), as_of()).unwrap();
                let actual: BTreeMap<String, i64> =
                    actual.into_iter().filter(|(_, v)| *v != 0).map(|(c, v)| (c.to_string(), v)).collect();
                let expected: BTreeMap<String, i64> = running.iter().filter(|(_, v)| **v != 0).map(|(c, v)| (c.clone(), *v)).collect();
                prop_assert_eq!(&actual, &expected, "customer {} on {}", id, date);
                prop_assert_eq!(count, i32::from(!actual.is_empty()), "count of {} on {}", id, date);
            }
        }
    }

    /// The same records in any order give the same movements.
    #[test]
    fn order_does_not_matter((n, invoices) in history(), seed in any::<u64>()) {
        let mut shuffled = invoices.clone();
        shuffle(&mut shuffled, seed);
        prop_assert_eq!(movements(&ledger_with(n, &invoices)), movements(&ledger_with(n, &shuffled)));
    }

    /// Re-sending any subset of the records changes nothing.
    #[test]
    fn resending_is_idempotent((n, invoices) in history(), mask in any::<u32>()) {
        let mut ledger = ledger_with(n, &invoices);
        let before = movements(&ledger);
        let again: Vec<Value> = invoices.iter().enumerate().filter(|(i, _)| mask >> (i % 32) & 1 == 1).map(|(_, v)| v.clone()).collect();
        ledger.upsert_invoices(&again);
        ledger.upsert_plans(&SHAPE.plan_records());
        ledger.upsert_customers(&customers(n));
        prop_assert_eq!(before, movements(&ledger));
        prop_assert_eq!(ledger.counts().3, ledger_with(n, &invoices).counts().3);
    }

    /// Random upserts and deletes applied one by one end where a fresh ledger
    /// loaded with the surviving records ends.
    #[test]
    fn incremental_equals_full_recompute(
        (n, invoices) in history(),
        ops in prop::collection::vec((0usize..25, any::<bool>()), 0..20),
    ) {
        let mut ledger = ledger_with(n, &[]);
        let mut alive: BTreeMap<usize, Value> = BTreeMap::new();
        for (i, invoice) in invoices.iter().enumerate() {
            ledger.upsert_invoices(std::slice::from_ref(invoice));
            alive.insert(i, invoice.clone());
        }
        for (index, delete) in ops {
            if invoices.is_empty() { break; }
            let index = index % invoices.len();
            let id = format!("i{index:02}");
            if delete {
                let _ = ledger.delete_invoice(&id);
                alive.remove(&index);
            } else {
                let mut changed = invoices[(index * 7 + 3) % invoices.len()].clone();
                changed["id"] = json!(id);
                let stored = ledger.upsert_invoices(std::slice::from_ref(&changed)).accepted() == 1;
                if stored { alive.insert(index, changed); } else { alive.remove(&index); let _ = ledger.delete_invoice(&id); }
            }
        }
        let survivors: Vec<Value> = alive.into_values().collect();
        prop_assert_eq!(movements(&ledger), movements(&ledger_with(n, &survivors)));
        // Each customer's invoices are the listing's invoices of that customer, in listing order.
        for customer in ledger.customers() {
            let own: Vec<&str> = ledger.customer_invoices(customer.id.as_str()).iter().map(|i| i.id()).collect();
            let listed: Vec<&str> = ledger.invoices().filter(|i| i.customer_id == customer.id).map(|i| i.id()).collect();
            prop_assert_eq!(own, listed);
        }
    }

    /// Reads at any `as_of` between writes answer what a ledger without
    /// cached replays answers: the movements, each customer's lifecycle
    /// fields, the changes scheduled after `as_of` and the monthly MRR.
    #[test]
    fn cached_reads_equal_fresh_reads(
        (n, invoices) in history(),
        steps in prop::collection::vec((0usize..25, 0u8..4, 0i64..420, 0i64..86_400), 0..16),
    ) {
        let mut ledger = ledger_with(n, &[]);
        let mut last_offset = 0;
        for (index, action, offset, second) in steps {
            match action {
                0 | 1 => {
                    // Every other read stays on the day of the read before,
                    // where the cache's per-day totals are reused.
                    let offset = if action == 0 { offset } else { last_offset };
                    last_offset = offset;
                    let at = start_of_day(day(offset), Settings::default().timezone)
                        + Duration::seconds(second);
                    let fresh = ledger.clone();
                    let all = MovementFilter::default();
                    prop_assert_eq!(ledger.movements(at, &all).unwrap(), fresh.movements(at, &all).unwrap());
                    let params: submetrics::ReportParams =
                        [("status".to_string(), "all".to_string())].into_iter().collect();
                    prop_assert_eq!(
                        ledger.analytics_customers(&params, at).unwrap(),
                        fresh.analytics_customers(&params, at).unwrap()
                    );
                    let none = submetrics::ReportParams::default();
                    prop_assert_eq!(
                        ledger.report("churn-scheduled-movements", &none, at).unwrap(),
                        fresh.report("churn-scheduled-movements", &none, at).unwrap()
                    );
                    // The unfiltered mrr reads the per-day totals the cache patches.
                    let monthly: submetrics::ReportParams =
                        [("interval".to_string(), "month".to_string())].into_iter().collect();
                    prop_assert_eq!(
                        ledger.report("mrr", &monthly, at).unwrap(),
                        fresh.report("mrr", &monthly, at).unwrap()
                    );
                    // Broken down by subtype, it reads the subtypes' totals too.
                    let by_subtype: submetrics::ReportParams =
                        [("breakdown".to_string(), "subtype".to_string())].into_iter().collect();
                    prop_assert_eq!(
                        ledger.report("mrr", &by_subtype, at).unwrap(),
                        fresh.report("mrr", &by_subtype, at).unwrap()
                    );
                }
                2 if !invoices.is_empty() => {
                    ledger.upsert_invoices(std::slice::from_ref(&invoices[index % invoices.len()]));
                }
                _ if !invoices.is_empty() => {
                    let _ = ledger.delete_invoice(&format!("i{:02}", index % invoices.len()));
                }
                _ => {}
            }
        }
    }

    /// The subtype table and `mrr` broken down by subtype are read from the
    /// per-day totals; a `subtype` filter naming every subtype sends them
    /// through each customer's movements instead, and they answer the same.
    #[test]
    fn subtype_breakdowns_from_daily_totals_equal_sums_over_customers(
        (n, invoices) in history(),
        offset in 0i64..460,
        weekly in any::<bool>(),
    ) {
        let ledger = ledger_with(n, &invoices);
        let at = start_of_day(day(offset), Settings::default().timezone);
        let every_subtype: Vec<&str> =
            submetrics::MovementSubtype::ALL.iter().map(|s| s.as_str()).collect();
        let interval = if weekly { "week" } else { "month" };
        for (name, breakdown) in [("mrr-table-subtypes", None), ("mrr", Some("subtype"))] {
            let mut params: submetrics::ReportParams =
                [("interval".to_string(), interval.to_string())].into_iter().collect();
            if let Some(breakdown) = breakdown {
                params.insert("breakdown".to_string(), breakdown.to_string());
            }
            let totals = ledger.report(name, &params, at).unwrap();
            params.insert("subtype".to_string(), every_subtype.join(","));
            prop_assert_eq!(totals, ledger.report(name, &params, at).unwrap());
        }
    }

    /// Arbitrary JSON never panics the ledger; it is stored or rejected.
    #[test]
    fn any_input_is_stored_or_rejected(values in prop::collection::vec(arbitrary_json(), 0..8)) {
        let mut ledger = ledger_with(2, &[]);
        for kind in ["customers", "plans", "plan_groups", "invoices", "data_sources"] {
            let kind = submetrics::RecordKind::parse(kind).unwrap();
            let report = ledger.upsert(kind, &values);
            prop_assert_eq!(report.results.len(), values.len());
        }
        let _ = ledger.movements(as_of(), &MovementFilter::default());
        let _ = ledger.load_fx_rates(&values);
    }
}

fn arbitrary_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<f64>()
            .prop_map(|f| serde_json::Number::from_f64(f).map_or(Value::Null, Value::Number)),
        prop_oneof![
            Just("2024-01-01".to_string()),
            Just("c0".to_string()),
            Just("m".to_string()),
            Just("subscription".to_string()),
            Just("refund".to_string()),
            ".*".prop_map(|s: String| s),
        ]
        .prop_map(Value::from),
    ];
    let keys = prop_oneof![
        Just("id"),
        Just("name"),
        Just("customer_id"),
        Just("type"),
        Just("amount"),
        Just("currency"),
        Just("plan_id"),
        Just("invoice_date"),
        Just("period_start"),
        Just("period_end"),
        Just("billing_freq"),
        Just("interval"),
        Just("plans"),
        Just("lines"),
        Just("transactions"),
        Just("metadata"),
        Just("date"),
        Just("rate"),
    ];
    leaf.prop_recursive(3, 24, 6, move |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::btree_map(keys.clone().prop_map(str::to_string), inner, 0..8)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}
