//! Property test: record ids decide nothing (SEMANTICS section 3). Renaming
//! every id of a history whose issue instants are all distinct, in reverse
//! order or at random, gives the same movements and the same monthly
//! report. Invoices of one subscription often take effect at the same
//! instant here, so the issue instant is what orders them.

use chrono::Duration;
use proptest::prelude::*;
use serde_json::{Value, json};
use std::collections::BTreeMap;
use submetrics::testing::{Draft, Kind, Shape, TestPlan, day, fx_rates, params, shuffle};
use submetrics::{Ledger, MovementFilter};

const PLANS: &[TestPlan] = &[
    TestPlan::new("e", "month", 1, "EUR"),
    TestPlan::new("m", "month", 1, "USD"),
    TestPlan::new("q", "month", 3, "USD"),
    TestPlan::new("y", "year", 1, "USD"),
];

/// Up to 3 customers with up to 29 invoices; a draft's day is a step of
/// ten days here (0 to 150), so that invoices collide.
const SHAPE: Shape = Shape {
    plans: PLANS,
    customers: 1..4,
    invoices: 0..30,
    days: 0..16,
    amounts: 0..20_000,
    kinds: &[
        Kind::Subscription,
        Kind::Subscription,
        Kind::Subscription,
        Kind::Subscription,
        Kind::OneTime,
        Kind::Refund,
        Kind::Cancellation,
    ],
    zero_below: 2_000,
    refund_divisor: 2,
};

/// One invoice before naming: everything but its ids.
#[derive(Debug, Clone)]
struct Unnamed {
    draft: Draft,
    /// When it was issued, in hundreds of seconds from 17 days before the
    /// effective day's midnight (so before or after it).
    issued: i64,
    subscription: Option<usize>,
    /// For a refund: the index of the invoice it names.
    refunds: Option<usize>,
}

fn history() -> impl Strategy<Value = (usize, Vec<Unnamed>)> {
    let extra = (
        0i64..30_000,
        prop::option::of(0usize..2),
        prop::option::of(0usize..30),
    );
    SHAPE.history_with(extra).prop_map(|(n, drafts)| {
        let invoices = drafts
            .into_iter()
            .map(|(draft, (issued, subscription, refunds))| Unnamed {
                draft,
                issued,
                subscription,
                refunds,
            })
            .collect();
        (n, invoices)
    })
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
            plan: Box::new(|i| PLANS[i].id.to_string()),
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
            shuffle(&mut order, seed ^ salt);
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

fn ledger_named(customers: usize, invoices: &[Unnamed], naming: &Naming) -> Ledger {
    let mut ledger = Ledger::default();
    ledger
        .load_fx_rates(&fx_rates(&[("2023-01-01", "EUR", 0.9)]))
        .unwrap();
    let plans: Vec<Value> = PLANS
        .iter()
        .enumerate()
        .map(|(i, plan)| {
            json!({"id": (naming.plan)(i), "name": format!("Plan {i}"), "interval": plan.interval,
                   "interval_count": plan.count, "currency": plan.currency})
        })
        .collect();
    ledger.upsert_plans(&plans);
    let customer_records: Vec<Value> = (0..customers)
        .map(|i| json!({"id": (naming.customer)(i), "name": format!("Customer {i}")}))
        .collect();
    ledger.upsert_customers(&customer_records);
    let records: Vec<Value> = invoices
        .iter()
        .enumerate()
        .map(|(index, invoice)| {
            let draft = &invoice.draft;
            let midnight = day(draft.day * 10).and_hms_opt(0, 0, 0).unwrap();
            // Distinct per invoice: everything but the index (under 100
            // seconds) is a whole number of hundreds of seconds.
            let issued =
                midnight + Duration::seconds((invoice.issued - 15_000) * 100 - index as i64);
            let effective = midnight.and_utc().to_rfc3339();
            let issued = issued.and_utc().to_rfc3339();
            let mut record = json!({
                "id": (naming.invoice)(index),
                "customer_id": (naming.customer)(draft.customer),
                "type": draft.kind.as_str(),
                "amount": draft.amount,
                "currency": PLANS[draft.plan].currency,
            });
            match draft.kind {
                Kind::Subscription => {
                    record["plan_id"] = json!((naming.plan)(draft.plan));
                    record["invoice_date"] = json!(issued);
                    record["period_start"] = json!(effective);
                }
                // Any other kind takes effect when it is issued.
                _ => record["invoice_date"] = json!(issued),
            }
            if let Some(sub) = invoice.subscription {
                record["subscription_id"] = json!((naming.subscription)(sub));
            }
            if let (Some(target), Kind::Refund) = (invoice.refunds, draft.kind)
                && target < invoices.len()
            {
                record["refunded_invoice_id"] = json!((naming.invoice)(target));
            }
            record
        })
        .collect();
    ledger.upsert_invoices(&records);
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
    let params = params(&[("interval", "month"), ("date", "20240101-20240531")]);
    ledger.report("mrr", &params, as_of()).unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    #[test]
    fn renaming_every_id_changes_no_number((n, invoices) in history(), seed in any::<u64>()) {
        let original = Naming::original();
        let base = ledger_named(n, &invoices, &original);
        let expected = movements_in_original_names(&base, &original.back_to_original(n));
        for naming in [Naming::reversed(), Naming::shuffled(seed)] {
            let renamed = ledger_named(n, &invoices, &naming);
            prop_assert_eq!(
                &movements_in_original_names(&renamed, &naming.back_to_original(n)),
                &expected
            );
            prop_assert_eq!(monthly_report(&renamed), monthly_report(&base));
        }
    }
}
