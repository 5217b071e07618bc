//! Events out over real HTTP: each movement, correction and bulk import
//! fires its events once, signed, to a receiver on 127.0.0.1 started by
//! each test; every wait is bounded.

mod common;

use common::Server;
use common::receiver::{
    FAST, Received, Receiver, invoice, plan_and_customer, post_ok, s, subscribe, summary, verify,
};
use serde_json::{Value, json};
use std::time::Duration;

#[test]
fn each_movement_fires_one_signed_event_and_corrections_retract() {
    let receiver = Receiver::start();
    let server = Server::start_in_with(common::data_dir(), FAST);
    let (_, secret) = subscribe(&server, &receiver.url(), &[]);
    plan_and_customer(&server, "D", "Delta");
    post_ok(
        &server,
        "/data/invoices",
        json!([
            invoice("d1", "D", "subscription", "2024-01-01", 3000),
            invoice("d2", "D", "cancellation", "2024-01-20", 0),
            invoice("d3", "D", "subscription", "2024-03-01", 3000),
            {"id": "d4", "customer_id": "D", "type": "subscription", "invoice_date": "2024-04-01", "amount": 3000, "currency": "USD", "plan_id": "m", "status": "failed"},
        ]),
    );
    let expected = vec![
        (s("customer.created"), s(""), 0),
        (s("customer.new"), s("new"), 3000),
        (s("customer.churned"), s("cancellation"), -3000),
        (s("customer.reactivated"), s("reactivation"), 3000),
        (s("invoice.failed"), s(""), 3000),
        // No renewal paid after March: a lapse, long visible at "now".
        (s("customer.churned"), s("lapse"), -3000),
    ];
    let taken = receiver.wait_until("six events", |t| t.len() >= expected.len());
    assert_eq!(summary(&taken), expected);
    for received in &taken {
        verify(received, &secret);
    }
    let new = taken[1].json();
    assert_eq!(
        new["data"]["account"],
        json!({"id": "1", "name": "default"})
    );
    assert_eq!(
        new["data"]["customer"],
        json!({"id": "D", "name": "Delta", "email": null, "country": null})
    );
    assert_eq!(
        new["data"]["movement"],
        json!({
            "date": "2024-01-01", "kind": "new", "subtype": "new", "mrr_change": 3000,
            "currency": "USD", "mrr_change_base_currency": 3000, "base_currency": "USD",
            "customer_count_change": 1, "quantity_change": 1,
            "plans_before": [], "plans_after": ["m"]
        })
    );
    let ids: Vec<&String> = taken.iter().map(|r| &r.headers["webhook-id"]).collect();
    let mut unique = ids.clone();
    unique.sort();
    unique.dedup();
    assert_eq!(unique.len(), ids.len(), "{ids:?}");

    // The same invoices again, a restart, and several whole scans: nothing new.
    post_ok(
        &server,
        "/data/invoices",
        json!([
            invoice("d1", "D", "subscription", "2024-01-01", 3000),
            invoice("d2", "D", "cancellation", "2024-01-20", 0)
        ]),
    );
    let server = Server::start_in_with(server.kill(), FAST);
    std::thread::sleep(Duration::from_millis(1500));
    assert_eq!(receiver.taken().len(), expected.len());

    // A correction: the cancellation goes. Its churn is retracted, and the
    // subscription of January now lapses at its end instead; the
    // reactivation of March stays as it was.
    assert_eq!(server.delete("/data/invoices/d2").0, 200);
    receiver.wait_until("two more events", |t| t.len() >= expected.len() + 2);
    std::thread::sleep(Duration::from_millis(1000));
    let taken = receiver.taken();
    assert_eq!(taken.len(), expected.len() + 2);
    let retraction = taken[expected.len()].json();
    assert_eq!(retraction["type"], "customer.movement_retracted");
    assert_eq!(
        retraction["data"]["retracted_event_id"],
        json!(taken[2].headers["webhook-id"])
    );
    assert_eq!(retraction["data"]["retracted_type"], "customer.churned");
    assert_eq!(
        retraction["data"]["movement"],
        taken[2].json()["data"]["movement"]
    );
    let lapse = taken[expected.len() + 1].json();
    assert_eq!(
        (
            &lapse["type"],
            &lapse["data"]["movement"]["date"],
            &lapse["data"]["movement"]["subtype"],
            &lapse["data"]["movement"]["mrr_change"]
        ),
        (
            &json!("customer.churned"),
            &json!("2024-02-01"),
            &json!("lapse"),
            &json!(-3000)
        )
    );
    for received in &taken {
        verify(received, &secret);
    }

    // A changed amount: March's invoice becomes 4000. The reactivation keeps
    // its day, kind and currency but not its amount: it is retracted and
    // fires again under a new id. April's failed invoice of 3000 still
    // renews (open and failed invoices count for MRR), which is now a
    // contraction; the lapse in May
    // stays as it was.
    post_ok(
        &server,
        "/data/invoices",
        json!([invoice("d3", "D", "subscription", "2024-03-01", 4000)]),
    );
    let before = taken.len();
    receiver.wait_until("three more events", |t| t.len() >= before + 3);
    std::thread::sleep(Duration::from_millis(1000));
    let taken = receiver.taken();
    assert_eq!(taken.len(), before + 3);
    let later: Vec<Value> = taken[before..].iter().map(Received::json).collect();
    let shown: Vec<(&Value, &Value, &Value, &Value)> = later
        .iter()
        .map(|e| {
            (
                &e["type"],
                &e["data"]["retracted_event_id"],
                &e["data"]["movement"]["subtype"],
                &e["data"]["movement"]["mrr_change"],
            )
        })
        .collect();
    let id = json!(taken[3].headers["webhook-id"]);
    assert_eq!(
        shown,
        vec![
            (
                &json!("customer.movement_retracted"),
                &id,
                &json!("reactivation"),
                &json!(3000)
            ),
            (
                &json!("customer.reactivated"),
                &Value::Null,
                &json!("reactivation"),
                &json!(4000)
            ),
            (
                &json!("customer.contraction"),
                &Value::Null,
                &json!("contraction"),
                &json!(-1000)
            ),
        ]
    );
    let ids: std::collections::HashSet<&String> =
        taken.iter().map(|r| &r.headers["webhook-id"]).collect();
    assert_eq!(ids.len(), taken.len(), "every event has an id of its own");
}

/// Bulk imports sent back to back, while the scanner rests between scans
/// and takes several imports' customers at once, fire each customer's
/// events exactly once: its record, its new business, its failed payment
/// and the lapse of its subscription, never renewed.
#[test]
fn back_to_back_bulk_imports_fire_each_event_once() {
    const IMPORTS: usize = 12;
    const CUSTOMERS: usize = 25;
    let receiver = Receiver::start();
    let server = Server::start_in_with(common::data_dir(), FAST);
    subscribe(&server, &receiver.url(), &[]);
    post_ok(
        &server,
        "/data/plans",
        json!([{"id": "m", "name": "Monthly", "interval": "month", "currency": "USD"}]),
    );
    let ids: Vec<String> = (0..IMPORTS * CUSTOMERS)
        .map(|n| format!("c{n:03}"))
        .collect();
    let customers: Vec<Value> = ids.iter().map(|id| json!({"id": id, "name": id})).collect();
    post_ok(&server, "/data/customers", json!(customers));
    for import in ids.chunks(CUSTOMERS) {
        let invoices: Vec<Value> = import
            .iter()
            .flat_map(|id| {
                let mut failed = invoice(&format!("{id}-f"), id, "one_time", "2024-01-03", 900);
                failed["status"] = json!("failed");
                [
                    invoice(&format!("{id}-s"), id, "subscription", "2024-01-01", 3000),
                    failed,
                ]
            })
            .collect();
        post_ok(&server, "/data/invoices", json!(invoices));
    }
    let expected = 4 * ids.len();
    let taken = receiver.wait_until("every event", |t| t.len() >= expected);
    std::thread::sleep(Duration::from_millis(1000));
    let taken_later = receiver.taken();
    assert_eq!(
        taken_later.len(),
        taken.len(),
        "events after the expected ones"
    );
    let mut fired: Vec<(String, String)> = taken
        .iter()
        .map(|r| {
            let event = r.json();
            (
                event["data"]["customer"]["id"]
                    .as_str()
                    .unwrap()
                    .to_string(),
                event["type"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    fired.sort();
    let mut wanted: Vec<(String, String)> = ids
        .iter()
        .flat_map(|id| {
            [
                "customer.created",
                "customer.new",
                "invoice.failed",
                "customer.churned",
            ]
            .map(|t| (id.clone(), s(t)))
        })
        .collect();
    wanted.sort();
    assert_eq!(fired, wanted);
}
