//! The replay cache behind the derived reads: which `as_of` it serves,
//! what a write replays again, and the order of the rows it holds.

use super::tests::{as_of, ledger, sub};
use super::*;
use crate::*;
use chrono::{DateTime, Utc};
use serde_json::json;
use std::sync::Arc;

#[test]
fn the_replay_cache_serves_every_as_of_with_the_same_events_and_no_other() {
    let mut ledger = ledger();
    ledger.upsert_invoices(&[sub("i1", "a", "2024-01-01", 3000)]);
    let fresh = |at: DateTime<Utc>| {
        ledger
            .clone()
            .movements(at, &MovementFilter::default())
            .unwrap()
    };
    let movements = |at: DateTime<Utc>| ledger.movements(at, &MovementFilter::default()).unwrap();
    // Jan 15 and the last second of January see the same events applied
    // and the same ones ahead (the coverage end on Feb 1).
    let early = movements(as_of("2024-01-15T00:00:00Z"));
    let last_second = as_of("2024-01-31T23:59:59Z");
    let replays = ledger
        .derived()
        .replays(as_of("2024-01-15T00:00:00Z"))
        .unwrap();
    assert!(Arc::ptr_eq(
        &replays,
        &ledger.derived().replays(last_second).unwrap()
    ));
    assert_eq!(early, fresh(last_second));
    // At the coverage end nothing is ahead any more: a new replay, the same
    // movements until the grace period ends.
    let coverage_end = as_of("2024-02-01T00:00:00Z");
    assert!(!Arc::ptr_eq(
        &replays,
        &ledger.derived().replays(coverage_end).unwrap()
    ));
    assert_eq!(movements(coverage_end), early);
    let grace_end = as_of("2024-02-08T00:00:00Z");
    assert!(Arc::ptr_eq(
        &ledger.derived().replays(coverage_end).unwrap(),
        &ledger.derived().replays(grace_end).unwrap()
    ));
    // One second after the grace period the lapse applies: the churn.
    let later = movements(as_of("2024-02-08T00:00:01Z"));
    assert_eq!(later.len(), 2);
    assert_eq!(later, fresh(as_of("2024-02-08T00:00:01Z")));
}

#[test]
fn the_replay_cache_window_ends_at_the_nearest_grace_ends_of_several_lapses() {
    let mut ledger = ledger();
    // Four subscriptions that lapse on Feb 1, 3, 5 and 7; their grace
    // periods end seven days later.
    let invoices: Vec<Value> = ["01", "03", "05", "07"]
        .iter()
        .map(|day| {
            let mut invoice = sub(&format!("i{day}"), "a", &format!("2024-01-{day}"), 3000);
            invoice["subscription_id"] = json!(format!("s{day}"));
            invoice
        })
        .collect();
    ledger.upsert_invoices(&invoices);
    // On Feb 11 the first two lapses apply and the last two do not: the
    // cache holds from just after Feb 10 (not Feb 8) until Feb 12 (not
    // Feb 14), both ends of the grace periods nearest to it.
    let replays = ledger
        .derived()
        .replays(as_of("2024-02-11T00:00:00Z"))
        .unwrap();
    for inside in ["2024-02-10T00:00:00.001Z", "2024-02-12T00:00:00Z"] {
        assert!(Arc::ptr_eq(
            &replays,
            &ledger.derived().replays(as_of(inside)).unwrap()
        ));
    }
    assert!(!Arc::ptr_eq(
        &replays,
        &ledger
            .derived()
            .replays(as_of("2024-02-12T00:00:00.001Z"))
            .unwrap()
    ));
    let replays = ledger
        .derived()
        .replays(as_of("2024-02-11T00:00:00Z"))
        .unwrap();
    assert!(!Arc::ptr_eq(
        &replays,
        &ledger
            .derived()
            .replays(as_of("2024-02-10T00:00:00Z"))
            .unwrap()
    ));
}

#[test]
fn a_write_replays_only_the_customers_it_touched_and_reads_see_every_write() {
    let mut ledger = ledger();
    ledger.upsert_customers(&[json!({"id": "c", "name": "C"})]);
    ledger.upsert_invoices(&[
        sub("i1", "a", "2024-01-01", 3000),
        sub("i2", "b", "2024-01-01", 5000),
    ]);
    let at = as_of("2024-01-20T00:00:00Z");
    let before = ledger.derived().replays(at).unwrap();
    let fresh = |ledger: &Ledger| ledger.clone().derived().replays(at).unwrap();

    // A change to a's invoices: b's replay is shared, a's is new.
    ledger.upsert_invoices(&[sub("i1", "a", "2024-01-01", 4000)]);
    let after = ledger.derived().replays(at).unwrap();
    assert!(Arc::ptr_eq(&before["b"], &after["b"]));
    assert!(!Arc::ptr_eq(&before["a"], &after["a"]));
    assert_eq!(
        after.get("a").map(|r| r.movements[0].mrr_change),
        Some(4000)
    );
    assert_eq!(*after, *fresh(&ledger));

    // A first invoice for c lands in id order; deleting a removes its replay.
    ledger.upsert_invoices(&[sub("i3", "c", "2024-01-05", 1000)]);
    ledger.delete_customer("a").unwrap();
    let patched = ledger.derived().replays(at).unwrap();
    let ids: Vec<&str> = patched.keys().map(|id| id.as_str()).collect();
    assert_eq!(ids, vec!["b", "c"]);
    assert_eq!(*patched, *fresh(&ledger));

    // Customer records do not feed replays: the set is reused as is.
    ledger.upsert_customers(&[json!({"id": "b", "name": "B renamed"})]);
    assert!(Arc::ptr_eq(
        &patched,
        &ledger.derived().replays(at).unwrap()
    ));
}
#[test]
fn customer_movements_are_the_listed_rows_in_customer_order() {
    let mut ledger = ledger();
    ledger.upsert_customers(&[json!({"id": "c", "name": "C"})]);
    ledger.upsert_invoices(&[
        sub("i1", "b", "2024-01-01", 3000),
        sub("i2", "b", "2024-02-01", 4000),
        sub("i3", "a", "2024-01-15", 5000),
        sub("i4", "c", "2024-01-01", 1000),
    ]);
    let at = as_of("2024-06-01T00:00:00Z");
    let in_place = ledger.customer_movements(at).unwrap();
    let rows: Vec<(&str, String, i64)> = in_place
        .iter()
        .map(|m| (m.customer_id.as_str(), m.date.to_string(), m.mrr_change))
        .collect();
    assert_eq!(
        rows,
        [
            ("a", "2024-01-15".to_string(), 5000),
            ("a", "2024-02-15".to_string(), -5000),
            ("b", "2024-01-01".to_string(), 3000),
            ("b", "2024-02-01".to_string(), 1000),
            ("b", "2024-03-01".to_string(), -4000),
            ("c", "2024-01-01".to_string(), 1000),
            ("c", "2024-02-01".to_string(), -1000),
        ]
    );
    // The same rows as the listing, which orders them by date.
    let mut by_date: Vec<crate::Movement> = in_place.iter().cloned().collect();
    by_date.sort_by_key(|m| m.date);
    assert_eq!(
        by_date,
        ledger.movements(at, &MovementFilter::default()).unwrap()
    );
    let customers: Vec<&str> = in_place.customers().map(|(id, _)| id.as_str()).collect();
    assert_eq!(customers, ["a", "b", "c"]);
}

#[test]
fn forgetting_replays_leaves_those_a_reader_holds_intact_and_replays_again() {
    let mut ledger = ledger();
    ledger.upsert_invoices(&[
        sub("i1", "b", "2024-01-01", 3000),
        sub("i2", "a", "2024-01-15", 5000),
    ]);
    let at = as_of("2024-06-01T00:00:00Z");
    let held = ledger.customer_movements(at).unwrap();
    let before: Vec<crate::Movement> = held.iter().cloned().collect();
    assert_eq!(before.len(), 4);
    let cached = ledger.derived().replays(at).unwrap();
    ledger.forget_replays();
    assert!(!Arc::ptr_eq(
        &cached,
        &ledger.derived().replays(at).unwrap()
    ));
    drop(cached);
    // The held replays are the reader's until it lets go.
    assert_eq!(held.iter().cloned().collect::<Vec<_>>(), before);
    drop(held);
    let again: Vec<crate::Movement> = ledger
        .customer_movements(at)
        .unwrap()
        .iter()
        .cloned()
        .collect();
    assert_eq!(again, before);
    ledger.forget_replays();
    let listed = ledger.movements(at, &MovementFilter::default()).unwrap();
    let mut by_date = before.clone();
    by_date.sort_by_key(|m| m.date);
    assert_eq!(listed, by_date);
}

#[test]
fn replays_come_in_id_order_when_ids_share_their_first_sixteen_bytes() {
    let mut ledger = ledger();
    let ids = [
        "customer-000000000006",
        "customer-000000000002",
        "customer-000000000005",
        "customer-000000000001",
        "customer-000000000004",
        "customer-000000000003",
        "customer-00000000000",
    ];
    let customers: Vec<Value> = ids.iter().map(|id| json!({"id": id, "name": id})).collect();
    ledger.upsert_customers(&customers);
    let invoices: Vec<Value> = ids
        .iter()
        .enumerate()
        .map(|(i, id)| sub(&format!("i{i}"), id, "2024-01-01", 1000))
        .collect();
    ledger.upsert_invoices(&invoices);
    let at = as_of("2024-01-15T00:00:00Z");
    let movements = ledger.customer_movements(at).unwrap();
    let order: Vec<&str> = movements.customers().map(|(id, _)| id.as_str()).collect();
    let mut sorted = ids.to_vec();
    sorted.sort();
    assert_eq!(order, sorted);
}

#[test]
fn listed_movements_order_by_date_then_customer_id() {
    let mut ledger = ledger();
    // Customers created out of id order, all moving on the same two days.
    let ids: Vec<String> = (0..40).map(|n| format!("c{:02}", (n * 17) % 40)).collect();
    let customers: Vec<Value> = ids.iter().map(|id| json!({"id": id, "name": id})).collect();
    ledger.upsert_customers(&customers);
    let invoices: Vec<Value> = ids
        .iter()
        .flat_map(|id| {
            [
                sub(&format!("{id}-1"), id, "2024-01-01", 1000),
                sub(&format!("{id}-2"), id, "2024-02-01", 2000),
            ]
        })
        .collect();
    ledger.upsert_invoices(&invoices);
    let listed = ledger
        .movements(as_of("2024-02-15T00:00:00Z"), &MovementFilter::default())
        .unwrap();
    let order: Vec<(String, &str)> = listed
        .iter()
        .map(|m| (m.date.to_string(), m.customer_id.as_str()))
        .collect();
    let mut expected: Vec<(String, &str)> = ["2024-01-01", "2024-02-01"]
        .into_iter()
        .flat_map(|day| ids.iter().map(move |id| (day.to_string(), id.as_str())))
        .collect();
    expected.sort();
    assert_eq!(order.len(), 80);
    assert_eq!(order, expected);
}

#[test]
fn movement_table_pages_hold_the_rows_at_their_offset() {
    let mut ledger = ledger();
    ledger.upsert_invoices(&[
        sub("i1", "a", "2024-01-01", 1000),
        sub("i2", "b", "2024-01-10", 2000),
    ]);
    let at = as_of("2024-01-20T00:00:00Z");
    let page = |offset: &str| {
        let params: crate::ReportParams = [
            ("date", "20240101-20240131"),
            ("limit", "1"),
            ("offset", offset),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
        let table = ledger.report("movement-table", &params, at).unwrap();
        let ids: Vec<String> = table["result"]["list"]
            .as_array()
            .unwrap()
            .iter()
            .map(|row| row["customer_id"].as_str().unwrap().to_string())
            .collect();
        (table["result"]["count"].as_u64().unwrap(), ids)
    };
    // Newest first.
    assert_eq!(page("0"), (2, vec!["b".to_string()]));
    assert_eq!(page("1"), (2, vec!["a".to_string()]));
    assert_eq!(page("2"), (2, vec![]));
    assert_eq!(page("9"), (2, vec![]));
}

#[test]
fn an_as_of_between_whole_milliseconds_compares_exactly() {
    let mut ledger = ledger();
    ledger.upsert_invoices(&[sub("i1", "a", "2024-01-01T00:00:00.005Z", 3000)]);
    // Fresh, and through the cache that the instant before filled.
    let counts = |at: &str| {
        let fresh = ledger.clone();
        let rows = |l: &Ledger| l.movements(as_of(at), &MovementFilter::default()).unwrap();
        (rows(&fresh).len(), rows(&ledger).len())
    };
    // The invoice applies from 00:00:00.005 on.
    assert_eq!(counts("2024-01-01T00:00:00.004999999Z"), (0, 0));
    assert_eq!(counts("2024-01-01T00:00:00.005Z"), (1, 1));
    // Its coverage ends at 2024-02-01T00:00:00.005; the churn shows once the
    // seven days of grace after that have passed, by any fraction.
    assert_eq!(counts("2024-02-08T00:00:00.005Z"), (1, 1));
    assert_eq!(counts("2024-02-08T00:00:00.005000001Z"), (2, 2));
    assert_eq!(counts("2024-02-08T00:00:00.005Z"), (1, 1));
}

#[test]
fn a_kept_replay_holds_its_rows_without_slack() {
    let mut ledger = ledger();
    // Five changed days for a; b's new and churn rows would leave two spare
    // in a first allocation of four.
    let amounts = [1000, 2000, 3000, 4000, 5000];
    let invoices: Vec<Value> = amounts
        .iter()
        .enumerate()
        .map(|(month, amount)| {
            sub(
                &format!("a{month}"),
                "a",
                &format!("2024-0{}-01", month + 1),
                *amount,
            )
        })
        .chain([sub("b1", "b", "2024-01-01", 3000)])
        .collect();
    ledger.upsert_invoices(&invoices);
    let replays = ledger
        .derived()
        .replays(as_of("2024-05-15T00:00:00Z"))
        .unwrap();
    for (id, rows) in [("a", 5), ("b", 2)] {
        let movements = &replays[id].movements;
        assert_eq!(
            (movements.len(), movements.capacity()),
            (rows, rows),
            "{id}"
        );
    }
}

#[test]
fn a_full_replay_finds_every_customer_by_id() {
    let mut ledger = ledger();
    let ids: Vec<String> = (0..300).map(|n| format!("cus_{n:04}")).collect();
    let customers: Vec<Value> = ids.iter().map(|id| json!({"id": id, "name": id})).collect();
    ledger.upsert_customers(&customers);
    let invoices: Vec<Value> = ids
        .iter()
        .enumerate()
        .map(|(n, id)| sub(&format!("in_{n}"), id, "2024-01-01", 1000 + n as i64))
        .collect();
    ledger.upsert_invoices(&invoices);
    let replays = ledger
        .derived()
        .replays(as_of("2024-01-15T00:00:00Z"))
        .unwrap();
    assert_eq!(replays.len(), 300);
    for (n, id) in ids.iter().enumerate() {
        let changes: Vec<i64> = replays
            .get(id.as_str())
            .map(|replay| replay.movements.iter().map(|m| m.mrr_change).collect())
            .unwrap_or_default();
        assert_eq!(changes, vec![1000 + n as i64], "{id}");
    }
}

#[test]
fn the_listing_orders_rows_by_date_then_customer_over_a_few_days_or_centuries() {
    let listed = |invoices: &[serde_json::Value]| {
        let mut ledger = ledger();
        ledger.upsert_invoices(invoices);
        ledger
            .movements(as_of("2200-01-01T00:00:00Z"), &MovementFilter::default())
            .unwrap()
            .iter()
            .map(|m| (m.date.to_string(), m.customer_id.to_string(), m.mrr_change))
            .collect::<Vec<_>>()
    };
    let row = |date: &str, customer: &str, mrr: i64| (date.to_string(), customer.to_string(), mrr);
    // Days apart: rows are counted into place by day.
    assert_eq!(
        listed(&[
            sub("i1", "b", "2024-01-01", 3000),
            sub("i2", "a", "2024-01-15", 5000),
            sub("i3", "a", "2024-02-01", 7000),
        ]),
        [
            row("2024-01-01", "b", 3000),
            row("2024-01-15", "a", 5000),
            row("2024-02-01", "a", 2000),
            row("2024-02-01", "b", -3000),
            row("2024-03-01", "a", -7000),
        ]
    );
    // Two centuries apart, more days than rows: the rows are sorted.
    assert_eq!(
        listed(&[
            sub("i1", "b", "2150-01-01", 3000),
            sub("i2", "a", "1950-01-01", 5000),
        ]),
        [
            row("1950-01-01", "a", 5000),
            row("1950-02-01", "a", -5000),
            row("2150-01-01", "b", 3000),
            row("2150-02-01", "b", -3000),
        ]
    );
}
