//! Notifications out, over real HTTP and SMTP: chat messages for the
//! chosen kinds of movement, and digest emails with the figures of their
//! period, taken by receivers on 127.0.0.1; every wait is bounded.

mod common;

use common::Server;
use common::receiver::{FAST, Received, Receiver, WAIT, invoice, plan_and_customer, post_ok};
use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

#[test]
fn chat_messages_go_out_for_the_chosen_kinds() {
    let receiver = Receiver::start();
    let server = Server::start_in_with(common::data_dir(), FAST);
    let (status, settings) = server.put(
        "/v1/settings/notifications",
        json!({"slack": {"enabled": true, "webhook_url": receiver.url(), "events": ["new_customer", "churn"]}}),
    );
    assert_eq!(status, 200, "{settings}");
    assert_eq!(settings["slack"]["channel"], "");
    let (status, body) = server.put(
        "/v1/settings/notifications",
        json!({"slack": {"events": ["upsell"]}}),
    );
    assert_eq!(status, 400);
    assert_eq!(
        body["error"],
        "notification setting `slack.events`: \"upsell\" is not one of new_customer, expansion, contraction, churn, reactivation, failed_payment, refund"
    );
    plan_and_customer(&server, "A", "Acme");
    post_ok(
        &server,
        "/data/invoices",
        json!([
            invoice("a1", "A", "subscription", "2024-01-01", 3000),
            invoice("a2", "A", "subscription", "2024-02-01", 5000),
            invoice("a3", "A", "cancellation", "2024-02-15", 0)
        ]),
    );
    let taken = receiver.wait_until("two messages", |t| t.len() >= 2);
    std::thread::sleep(Duration::from_millis(800));
    let texts: Vec<Value> = receiver.taken().iter().map(Received::json).collect();
    assert_eq!(
        texts,
        vec![
            json!({"text": "New customer: Acme (A), 30.00 USD MRR on 2024-01-01"}),
            json!({"text": "Churn (cancellation): Acme (A), -50.00 USD MRR on 2024-02-15"}),
        ]
    );
    assert!(!taken[0].headers.contains_key("webhook-signature"));
}

/// An SMTP server on 127.0.0.1 keeping each message's data.
fn smtp_sink() -> (u16, Arc<Mutex<Vec<String>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().unwrap().port();
    let messages: Arc<Mutex<Vec<String>>> = Arc::default();
    let kept = Arc::clone(&messages);
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let kept = Arc::clone(&kept);
            std::thread::spawn(move || {
                let _ = stream.set_read_timeout(Some(WAIT));
                let mut writer = stream.try_clone().unwrap();
                let mut reader = BufReader::new(stream);
                let _ = writer.write_all(b"220 sink ESMTP\r\n");
                let mut line = String::new();
                while reader.read_line(&mut line).is_ok_and(|n| n > 0) {
                    let command = line.trim_end().to_ascii_uppercase();
                    let answer: &[u8] = if command.starts_with("EHLO") {
                        b"250-sink\r\n250 8BITMIME\r\n"
                    } else if command.starts_with("DATA") {
                        let _ = writer.write_all(b"354 go on\r\n");
                        let mut data = String::new();
                        loop {
                            let mut part = String::new();
                            if reader.read_line(&mut part).unwrap_or(0) == 0 || part == ".\r\n" {
                                break;
                            }
                            data.push_str(&part);
                        }
                        kept.lock().unwrap().push(data);
                        b"250 kept\r\n"
                    } else if command.starts_with("QUIT") {
                        let _ = writer.write_all(b"221 bye\r\n");
                        return;
                    } else {
                        b"250 ok\r\n"
                    };
                    let _ = writer.write_all(answer);
                    line.clear();
                }
            });
        }
    });
    (port, messages)
}

#[test]
fn a_digest_email_has_the_figures_of_its_period() {
    let (port, messages) = smtp_sink();
    let port = port.to_string();
    let mut args = FAST.to_vec();
    args.extend([
        "--smtp-host",
        "127.0.0.1",
        "--smtp-port",
        &port,
        "--smtp-from",
        "metrics@example.com",
    ]);
    let server = Server::start_in_with(common::data_dir(), &args);
    common::seed(&server);
    post_ok(
        &server,
        "/data/invoices",
        json!([{"id": "a2", "customer_id": "A", "type": "cancellation", "invoice_date": "2024-01-12", "amount": 0, "currency": "USD"}]),
    );
    let (status, _) = server.put(
        "/settings/notifications",
        json!({"email": {"recipients": ["cfo@example.com", "ceo@example.com"], "frequency": "daily"}}),
    );
    assert_eq!(status, 200);
    let (status, answer) = server.post(
        "/v1/settings/notifications/digest",
        json!({"frequency": "weekly", "period_end": "2024-01-14"}),
    );
    assert_eq!(status, 200, "{answer}");
    assert_eq!(
        answer["digest"],
        json!({
            "frequency": "weekly",
            "period_start": "2024-01-08",
            "period_end": "2024-01-14",
            "currency": "USD",
            "mrr_start": 3000,
            "mrr_end": 5000,
            "subscribers_end": 1,
            "net_mrr_change": 2000,
            "movements": {
                "new": {"count": 1, "mrr_change": 5000},
                "expansion": {"count": 0, "mrr_change": 0},
                "contraction": {"count": 0, "mrr_change": 0},
                "churn": {"count": 1, "mrr_change": -3000},
                "reactivation": {"count": 0, "mrr_change": 0}
            },
            "new_customers": [{"id": "B", "name": "Beta"}],
            "churned_customers": [{"id": "A", "name": "Acme"}]
        })
    );
    let start = Instant::now();
    let message = loop {
        if let Some(message) = messages.lock().unwrap().first().cloned() {
            break message;
        }
        assert!(start.elapsed() < WAIT, "no email arrived");
        std::thread::sleep(Duration::from_millis(50));
    };
    let message = message.replace("=\r\n", "");
    for expected in [
        "Subject: Weekly digest for default: 2024-01-08 to 2024-01-14",
        "To: cfo@example.com, ceo@example.com",
        "From: metrics@example.com",
        "MRR: 50.00 USD (at the start: 30.00 USD; net change 20.00 USD)",
        "Paying customers: 1",
        "  new              1  50.00 USD",
        "  churn            1  -30.00 USD",
        "New customers (1):\r\n  Beta (B)",
        "Churned customers (1):\r\n  Acme (A)",
    ] {
        assert!(message.contains(expected), "{expected:?} not in {message}");
    }
    // Enabled, the daily digest of yesterday goes out by itself, once.
    let (status, _) = server.put(
        "/settings/notifications",
        json!({"email": {"enabled": true}}),
    );
    assert_eq!(status, 200);
    let yesterday = (chrono::Utc::now() - chrono::Duration::days(1)).date_naive();
    let subject = format!("Subject: Daily digest for default: {yesterday}");
    let start = Instant::now();
    while messages.lock().unwrap().len() < 2 {
        assert!(start.elapsed() < WAIT, "no daily digest arrived");
        std::thread::sleep(Duration::from_millis(50));
    }
    std::thread::sleep(Duration::from_millis(1000));
    let kept = messages.lock().unwrap().clone();
    assert_eq!(kept.len(), 2);
    assert!(kept[1].contains(&subject), "{subject:?} not in {}", kept[1]);
    assert!(kept[1].contains("MRR: 0.00 USD"), "{}", kept[1]);
    let (status, body) = server.post(
        "/v1/settings/notifications/digest",
        json!({"frequency": "monthly"}),
    );
    assert_eq!(
        (status, body["error"].as_str().unwrap()),
        (400, "field `frequency` must be `daily` or `weekly`")
    );
}

#[test]
fn each_notification_setting_takes_its_declared_type_only() {
    let server = Server::start();
    let before = server.get("/settings/notifications").1;
    let wrong = [
        (
            json!({"email": {"recipients": null}}),
            "email.recipients",
            "a list",
        ),
        (
            json!({"email": {"recipients": "not an email"}}),
            "email.recipients",
            "a list",
        ),
        (
            json!({"email": {"enabled": "yes"}}),
            "email.enabled",
            "a boolean",
        ),
        (
            json!({"email": {"enabled": null}}),
            "email.enabled",
            "a boolean",
        ),
        (
            json!({"email": {"frequency": 7}}),
            "email.frequency",
            "a string",
        ),
        (
            json!({"slack": {"events": "churn"}}),
            "slack.events",
            "a list",
        ),
        (
            json!({"slack": {"channel": null}}),
            "slack.channel",
            "a string",
        ),
        (
            json!({"slack": {"webhook_url": ["x"]}}),
            "slack.webhook_url",
            "a string",
        ),
        (
            json!({"alerts": {"mrr_drop_threshold": "high"}}),
            "alerts.mrr_drop_threshold",
            "a number or null",
        ),
        (json!({"alerts": null}), "alerts", "an object"),
    ];
    for (body, field, what) in wrong {
        let answer = server.put("/settings/notifications", body.clone());
        assert_eq!(
            answer,
            (
                400,
                json!({"error": format!("notification setting `{field}` must be {what}"),
                       "code": "bad_request", "field": field})
            ),
            "{body}"
        );
    }
    assert_eq!(server.get("/settings/notifications").1, before);

    // Right types are taken, null where a setting may have none.
    let (status, settings) = server.put(
        "/settings/notifications",
        json!({"email": {"recipients": ["cfo@example.com"], "frequency": "daily"},
               "alerts": {"mrr_drop_threshold": 10, "churn_threshold": null}}),
    );
    assert_eq!(status, 200, "{settings}");
    assert_eq!(
        (settings["email"].clone(), settings["alerts"].clone()),
        (
            json!({"enabled": false, "recipients": ["cfo@example.com"], "frequency": "daily"}),
            json!({"churn_threshold": null, "mrr_drop_threshold": 10})
        )
    );
    let (status, settings) = server.put(
        "/settings/notifications",
        json!({"alerts": {"mrr_drop_threshold": null}}),
    );
    assert_eq!(status, 200, "{settings}");
    assert_eq!(settings["alerts"]["mrr_drop_threshold"], Value::Null);
}

#[test]
fn a_digest_is_of_a_completed_period_and_a_refused_period_end_is_named() {
    let server = Server::start();
    let (status, _) = server.put(
        "/settings/notifications",
        json!({"email": {"recipients": ["cfo@example.com"]}}),
    );
    assert_eq!(status, 200);
    let today = chrono::Utc::now().date_naive();
    for end in ["9999-12-31".to_string(), today.to_string()] {
        let answer = server.post("/settings/notifications/digest", json!({"period_end": end}));
        assert_eq!(
            answer,
            (
                400,
                json!({"error": format!("field `period_end`: the period ending {end} is not over (today is {today} in the account's time zone); a digest is of a completed period"),
                       "code": "bad_request", "field": "period_end"})
            )
        );
    }
    let answer = server.post(
        "/settings/notifications/digest",
        json!({"period_end": "0001-01-01"}),
    );
    assert_eq!(
        answer,
        (
            400,
            json!({"error": "field `period_end`: `0001-01-01` is not an ISO 8601 date or timestamp in the years 1900 to 2200",
                   "code": "bad_request", "field": "period_end"})
        )
    );
    let yesterday = today - chrono::Duration::days(1);
    let (status, body) = server.post(
        "/settings/notifications/digest",
        json!({"frequency": "daily", "period_end": yesterday.to_string()}),
    );
    assert_eq!(
        (status, body["digest"]["period_end"].clone()),
        (200, json!(yesterday.to_string()))
    );
}
