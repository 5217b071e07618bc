//! Property test: record ids decide nothing (SEMANTICS section 3). Renaming
//! every id of a history whose issue instants are all distinct, in reverse
//! order or at random, gives the same movements and the same monthly
//! report. Invoices of one subscription often take effect at the same
//! instant here, so the issue instant is what orders them.

use chrono::{Duration, NaiveDate};
use proptest::prelude::*;
use serde_json::{Value, json};
use std::collections::BTreeMap;
use submetrics::{Ledger, MovementFilter, ReportParams, Settings};

/// (id, interval, count, currency)
const PLANS: &[(&str, &str, u32, &str)] = &[
    ("e", "month", 1, "EUR"),
    ("m", "month", 1, "USD"),
    ("q", "month", 3, "USD"),
    ("y", "year", 1, "USD"),
];

/// One invoice before naming: everything but its ids.
#[derive(Debug, Clone)]
struct Draft {
    customer: usize,
    kind: &'static str,
    plan: usize,
    /// Days after 2024-01-01, in steps of ten so that invoices collide.
    effective_day: i64,
    /// When it was issued, in hundreds of seconds from 17 days before the
    /// effective day's midnight (so before or after it).
    issued: i64,
    amount: i64,
    subscription: Option<usize>,
    /// For a refund: the index of the invoice it names.
    refunds: Option<usize>,
}

fn draft_strategy(customers: usize) -> impl Strategy<Value = Draft> {
    (
        0..customers,
        0u8..7,
        0..PLANS.len(),
        0i64..16,
        0i64..30_000,
        0i64..20_000,
        prop::option::of(0usize..2),
        prop::option::of(0usize..30),
    )
        .prop_map(
            |(customer, kind, plan, step, issued, amount, subscription, refunds)| {
                let kind = match kind {
                    0..=3 => "subscription",
                    4 => "one-time",
                    5 => "refund",
                    _ => "cancellation",
                };
                Draft {
                    customer,
                    kind,
                    plan,
                    effective_day: step * 10,
                    issued,
                    amount: match kind {
                        "refund" => -(amount / 2),
                        "cancellation" => 0,
                        _ if amount < 2_000 => 0,
                        _ => amount,
                    },
                    subscription,
                    refunds,
                }
            },
        )
}

fn history() -> impl Strategy<Value = (usize, Vec<Draft>)> {
    (1usize..4).prop_flat_map(|n| (Just(n), prop::collection::vec(draft_strategy(n), 0..30)))
}

/// The names a history's ids get: a function of each kind of id's index.
struct Naming {
    customer: Box<dyn Fn(usize) -> String>,
    plan: Box<dyn Fn(usize) -> String>,
    subscription: Box<dyn Fn(usize) -> String>,
    invoice: Box<dyn Fn(usize) -> String>,
}

impl Naming {
    fn original() -> Naming {
        Naming {
            customer: Box::new(|i| format!("c{i}")),
            plan: Box::new(|i| PLANS[i].0.to_string()),
            subscription: Box::new(|i| format!("s{i}")),
            invoice: Box::new(|i| format!("i{i:02}")),
        }
    }

    /// Every kind of id in the reverse order of the original names.
    fn reversed() -> Naming {
        Naming {
            customer: Box::new(|i| format!("k{}", 9 - i)),
            plan: Box::new(|i| format!("p{}", 9 - i)),
            subscription: Box::new(|i| format!("t{}", 9 - i)),
            invoice: Box::new(|i| format!("v{:02}", 99 - i)),
        }
    }

    /// Every kind of id named by a random permutation drawn from `seed`.
    fn shuffled(seed: u64) -> Naming {
        let permutation = |salt: u64, len: usize| -> Vec<usize> {
            let mut order: Vec<usize> = (0..len).collect();
            let mut state = (seed ^ salt) | 1;
            for i in (1..len).rev() {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                order.swap(i, (state % (i as u64 + 1)) as usize);
            }
            order
        };
        let (customers, plans, subscriptions, invoices) = (
            permutation(1, 10),
            permutation(2, PLANS.len()),
            permutation(3, 10),
            permutation(4, 100),
        );
        Naming {
            customer: Box::new(move |i| format!("x{}", customers[i])),
            plan: Box::new(move |i| format!("plan-{}", plans[i])),
            subscription: Box::new(move |i| format!("sub-{}", subscriptions[i])),
            invoice: Box::new(move |i| format!("inv-{:02}", invoices[i])),
        }
    }

    /// The original name of every renamed customer and plan id.
    fn back_to_original(&self, customers: usize) -> BTreeMap<String, String> {
        let original = Naming::original();
        let customers = (0..customers).map(|i| ((self.customer)(i), (original.customer)(i)));
        let plans = (0..PLANS.len()).map(|i| ((self.plan)(i), (original.plan)(i)));
        customers.chain(plans).collect()
    }
}

fn day(offset: i64) -> NaiveDate {
    NaiveDate::from_ymd_opt(2024, 1, 1).unwrap() + Duration::days(offset)
}

fn ledger_named(customers: usize, drafts: &[Draft], naming: &Naming) -> Ledger {
    let mut ledger = Ledger::new(Settings::default());
    ledger
        .load_fx_rates(&[json!({"date": "2023-01-01", "currency": "EUR", "rate": 0.9})])
        .unwrap();
    let plans: Vec<Value> = PLANS
        .iter()
        .enumerate()
        .map(|(i, (_, interval, count, currency))| {
            json!({"id": (naming.plan)(i), "name": format!("Plan {i}"), "interval": interval,
                   "interval_count": count, "currency": currency})
        })
        .collect();
    ledger.upsert_plans(&plans);
    let customer_records: Vec<Value> = (0..customers)
        .map(|i| json!({"id": (naming.customer)(i), "name": format!("Customer {i}")}))
        .collect();
    ledger.upsert_customers(&customer_records);
    let invoices: Vec<Value> = drafts
        .iter()
        .enumerate()
        .map(|(index, draft)| {
            let midnight = day(draft.effective_day).and_hms_opt(0, 0, 0).unwrap();
            // Distinct per invoice: everything but the index (under 100
            // seconds) is a whole number of hundreds of seconds.
            let issued = midnight + Duration::seconds((draft.issued - 15_000) * 100 - index as i64);
            let effective = midnight.and_utc().to_rfc3339();
            let issued = issued.and_utc().to_rfc3339();
            let (_, _, _, currency) = PLANS[draft.plan];
            let mut invoice = json!({
                "id": (naming.invoice)(index),
                "customer_id": (naming.customer)(draft.customer),
                "type": draft.kind,
                "amount": draft.amount,
                "currency": currency,
            });
            match draft.kind {
                "subscription" => {
                    invoice["plan_id"] = json!((naming.plan)(draft.plan));
                    invoice["invoice_date"] = json!(issued);
                    invoice["period_start"] = json!(effective);
                }
                // A refund or cancellation takes effect when it is issued.
                _ => invoice["invoice_date"] = json!(issued),
            }
            if let Some(sub) = draft.subscription {
                invoice["subscription_id"] = json!((naming.subscription)(sub));
            }
            if let (Some(target), "refund") = (draft.refunds, draft.kind)
                && target < drafts.len()
            {
                invoice["refunded_invoice_id"] = json!((naming.invoice)(target));
            }
            invoice
        })
        .collect();
    ledger.upsert_invoices(&invoices);
    ledger
}

fn as_of() -> chrono::DateTime<chrono::Utc> {
    "2024-06-01T00:00:00Z".parse().unwrap()
}

/// The movements with customer and plan ids under their original names,
/// plan lists sorted, rows in (date, customer, currency) order.
fn movements_in_original_names(ledger: &Ledger, original: &BTreeMap<String, String>) -> Vec<Value> {
    let rows = ledger
        .movements(as_of(), &MovementFilter::default())
        .unwrap();
    let mut rows: Vec<Value> = serde_json::to_value(rows)
        .unwrap()
        .as_array()
        .unwrap()
        .clone();
    let name = |id: &Value| json!(original[id.as_str().unwrap()]);
    for row in &mut rows {
        row["customer_id"] = name(&row["customer_id"]);
        for field in ["plans_before", "plans_after"] {
            let mut plans: Vec<Value> = row[field].as_array().unwrap().iter().map(name).collect();
            plans.sort_by_key(|p| p.as_str().unwrap().to_string());
            row[field] = Value::Array(plans);
        }
    }
    let key = |row: &Value| format!("{} {} {}", row["date"], row["customer_id"], row["currency"]);
    rows.sort_by_key(key);
    rows
}

fn monthly_report(ledger: &Ledger) -> Value {
    let params: ReportParams = [("interval", "month"), ("date", "20240101-20240531")]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    ledger.report("mrr", &params, as_of()).unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    #[test]
    fn renaming_every_id_changes_no_number((n, drafts) in history(), seed in any::<u64>()) {
        let original = Naming::original();
        let base = ledger_named(n, &drafts, &original);
        let expected = movements_in_original_names(&base, &original.back_to_original(n));
        for naming in [Naming::reversed(), Naming::shuffled(seed)] {
            let renamed = ledger_named(n, &drafts, &naming);
            prop_assert_eq!(
                &movements_in_original_names(&renamed, &naming.back_to_original(n)),
                &expected
            );
            prop_assert_eq!(monthly_report(&renamed), monthly_report(&base));
        }
    }
}
