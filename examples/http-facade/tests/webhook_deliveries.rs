//! Webhook deliveries over real HTTP: a receiver that recovers gets the
//! backlog in order, a delivery gives up after its retry schedule, and an
//! event accepted before a kill is delivered after the restart; another
//! account can neither see nor change a webhook or its deliveries.

mod common;

use common::receiver::{
    FAST, Receiver, WAIT, invoice, plan_and_customer, post_ok, s, subscribe, summary, verify,
};
use common::{OWNER_KEY, Server, offline};
use serde_json::json;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

#[test]
fn a_receiver_that_recovers_gets_the_backlog_in_order() {
    let receiver = Receiver::start();
    receiver.fail_next(4);
    let server = Server::start_in_with(common::data_dir(), FAST);
    let (hook, secret) = subscribe(&server, &receiver.url(), &["customer.new"]);
    plan_and_customer(&server, "A", "Acme");
    post_ok(
        &server,
        "/data/customers",
        json!([{"id": "B", "name": "Beta"}, {"id": "C", "name": "Gamma"}]),
    );
    for (n, customer) in ["A", "B", "C"].iter().enumerate() {
        post_ok(
            &server,
            "/data/invoices",
            json!([invoice(
                &format!("i{n}"),
                customer,
                "subscription",
                &format!("2024-01-0{}", n + 1),
                1000 * (n as i64 + 1)
            )]),
        );
    }
    let taken = receiver.wait_until("three events", |t| t.len() >= 3);
    assert_eq!(
        summary(&taken),
        vec![
            (s("customer.new"), s("new"), 1000),
            (s("customer.new"), s("new"), 2000),
            (s("customer.new"), s("new"), 3000)
        ]
    );
    for received in &taken {
        verify(received, &secret);
    }
    assert_eq!(receiver.requests.load(Ordering::SeqCst), 4 + 3);
    let (status, log) = server.get(&format!("/v1/webhooks/{hook}/deliveries"));
    assert_eq!(status, 200);
    let list = log["result"]["list"].as_array().unwrap();
    let attempts: Vec<(i64, &str)> = list
        .iter()
        .rev()
        .map(|d| {
            (
                d["attempts"].as_i64().unwrap(),
                d["status"].as_str().unwrap(),
            )
        })
        .collect();
    // The first delivery took the four failures; the others waited for it.
    assert_eq!(
        attempts,
        vec![(5, "delivered"), (1, "delivered"), (1, "delivered")]
    );
    assert_eq!(list[2]["last_status_code"], 204);

    // A redelivery sends the same event again, with its id.
    let first = list[2]["id"].as_str().unwrap();
    let (status, queued) = server.call(
        "POST",
        &format!("/v1/webhooks/{hook}/deliveries/{first}/redeliver"),
        Some(OWNER_KEY),
        None,
    );
    assert_eq!(status, 201, "{queued}");
    let taken = receiver.wait_until("the redelivery", |t| t.len() >= 4);
    assert_eq!(
        taken[3].headers["webhook-id"],
        taken[0].headers["webhook-id"]
    );
    assert_eq!(taken[3].body, taken[0].body);
}

#[test]
fn a_delivery_gives_up_after_its_schedule_and_marks_the_webhook_failing() {
    let receiver = Receiver::start();
    receiver.fail_next(usize::MAX);
    let server = Server::start_in_with(common::data_dir(), FAST);
    let (hook, _) = subscribe(&server, &receiver.url(), &["customer.created"]);
    plan_and_customer(&server, "A", "Acme");
    let start = Instant::now();
    loop {
        let (_, log) = server.get(&format!("/v1/webhooks/{hook}/deliveries"));
        if log["result"]["list"][0]["status"] == "failed" {
            assert_eq!(log["result"]["list"][0]["attempts"], 6);
            assert_eq!(log["result"]["list"][0]["last_status_code"], 500);
            assert_eq!(
                log["result"]["list"][0]["last_error"],
                "the target answered 500"
            );
            break;
        }
        assert!(start.elapsed() < WAIT, "never failed: {log}");
        std::thread::sleep(Duration::from_millis(100));
    }
    let (_, webhook) = server.get(&format!("/v1/webhooks/{hook}"));
    assert_eq!(webhook["status"], "failing");
    assert!(webhook["failing_since"].is_string());
    assert_eq!(receiver.requests.load(Ordering::SeqCst), 6);
}

#[test]
fn an_event_accepted_before_a_kill_is_delivered_after_the_restart() {
    let receiver = Receiver::start();
    receiver.fail_next(usize::MAX);
    let server = Server::start_in_with(common::data_dir(), FAST);
    let (_, secret) = subscribe(&server, &receiver.url(), &["customer.new"]);
    plan_and_customer(&server, "A", "Acme");
    post_ok(
        &server,
        "/data/invoices",
        json!([invoice("a1", "A", "subscription", "2024-01-01", 3000)]),
    );
    // Killed at once: the event may or may not have been derived yet, and
    // it was not delivered.
    let dir = server.kill();
    assert!(receiver.taken().is_empty());
    receiver.fail_next(0);
    let server = Server::start_in_with(dir, FAST);
    let taken = receiver.wait_until("the event", |t| !t.is_empty());
    verify(&taken[0], &secret);
    assert_eq!(summary(&taken), vec![(s("customer.new"), s("new"), 3000)]);
    std::thread::sleep(Duration::from_millis(1000));
    assert_eq!(receiver.taken().len(), 1);
    drop(server);
}

#[test]
fn another_account_cannot_delete_a_webhook_or_cancel_its_deliveries() {
    let dir = Server::start_in(common::data_dir()).kill();
    let created = offline(&dir, &["accounts", "create", "second"]);
    let other = created.trim().rsplit(' ').next().expect("key").to_string();
    // The receiver fails and the retry waits an hour: the delivery stays
    // pending.
    let receiver = Receiver::start();
    receiver.fail_next(usize::MAX);
    let server = Server::start_in_with(
        dir,
        &[
            "--webhooks-allow-private",
            "--webhook-retry-schedule",
            "1h",
            "--events-scan-interval",
            "300ms",
        ],
    );
    let (hook, _) = subscribe(&server, &receiver.url(), &["customer.created"]);
    plan_and_customer(&server, "A", "Acme");
    let pending = || {
        let (_, log) = server.get(&format!("/v1/webhooks/{hook}/deliveries"));
        let list = log["result"]["list"].as_array().unwrap().clone();
        list.iter()
            .map(|d| {
                (
                    d["status"].as_str().unwrap().to_string(),
                    d["attempts"].clone(),
                )
            })
            .collect::<Vec<_>>()
    };
    let start = Instant::now();
    while pending() != vec![(s("pending"), json!(1))] {
        assert!(start.elapsed() < WAIT, "never queued: {:?}", pending());
        std::thread::sleep(Duration::from_millis(100));
    }

    let missing = json!({"error": format!("webhook `{hook}` does not exist"), "code": "not_found"});
    let cases = [
        ("DELETE", format!("/v1/webhooks/{hook}"), None),
        (
            "PUT",
            format!("/v1/webhooks/{hook}"),
            Some(json!({"enabled": true})),
        ),
        ("GET", format!("/v1/webhooks/{hook}/deliveries"), None),
        (
            "POST",
            format!("/v1/webhooks/{hook}/deliveries/1/redeliver"),
            None,
        ),
    ];
    for (method, path, body) in &cases {
        let answer = server.call(method, path, Some(&other), body.as_ref());
        assert_eq!(answer, (404, missing.clone()), "{method} {path}");
    }
    assert_eq!(pending(), vec![(s("pending"), json!(1))]);
    assert_eq!(
        server.get(&format!("/v1/webhooks/{hook}")).1["status"],
        "active"
    );
}

#[test]
fn a_queued_delivery_is_due_from_the_time_it_was_queued() {
    let receiver = Receiver::start();
    let server = Server::start_in_with(common::data_dir(), FAST);
    let (hook, _) = subscribe(&server, &receiver.url(), &[]);
    let (status, sent) = server.post(&format!("/v1/webhooks/{hook}/test"), json!({}));
    assert_eq!(status, 200, "{sent}");
    // Disabled, the webhook's redelivery waits, never attempted.
    let (status, body) = server.put(&format!("/v1/webhooks/{hook}"), json!({"enabled": false}));
    assert_eq!(status, 200, "{body}");
    let id = sent["id"].as_str().unwrap();
    let (status, queued) = server.call(
        "POST",
        &format!("/v1/webhooks/{hook}/deliveries/{id}/redeliver"),
        Some(OWNER_KEY),
        None,
    );
    assert_eq!(status, 201, "{queued}");
    let created = queued["created_at"].as_str().unwrap();
    let due = json!(created.replace('Z', ".000Z"));
    assert_eq!(
        (
            queued["status"].clone(),
            queued["attempts"].clone(),
            queued["next_attempt_at"].clone()
        ),
        (json!("pending"), json!(0), due.clone())
    );
    let (_, log) = server.get(&format!("/v1/webhooks/{hook}/deliveries"));
    assert_eq!(log["result"]["list"][0]["next_attempt_at"], due);
}

#[test]
fn a_disabled_webhook_is_sent_none_of_the_events_while_it_is_off() {
    let muted = Receiver::start();
    let witness = Receiver::start();
    let server = Server::start_in_with(common::data_dir(), FAST);
    let (hook, _) = subscribe(&server, &muted.url(), &["customer.created"]);
    subscribe(&server, &witness.url(), &["customer.created"]);
    let (status, body) = server.put(&format!("/v1/webhooks/{hook}"), json!({"enabled": false}));
    assert_eq!(status, 200, "{body}");
    plan_and_customer(&server, "A", "Acme");
    let customer = |r: &common::receiver::Received| r.json()["data"]["customer"]["id"].clone();
    let seen = witness.wait_until("A's event", |t| !t.is_empty());
    assert_eq!(customer(&seen[0]), json!("A"));
    let (_, log) = server.get(&format!("/v1/webhooks/{hook}/deliveries"));
    assert_eq!(log["result"]["count"], 0);
    let (status, body) = server.put(&format!("/v1/webhooks/{hook}"), json!({"enabled": true}));
    assert_eq!(status, 200, "{body}");
    post_ok(
        &server,
        "/data/customers",
        json!([{"id": "B", "name": "Beta"}]),
    );
    let taken = muted.wait_until("B's event", |t| !t.is_empty());
    witness.wait_until("B's event", |t| t.len() >= 2);
    std::thread::sleep(Duration::from_millis(500));
    let ids: Vec<_> = muted.taken().iter().map(customer).collect();
    assert_eq!((customer(&taken[0]), ids), (json!("B"), vec![json!("B")]));
}
