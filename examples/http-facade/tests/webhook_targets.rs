//! Webhook targets and the event catalogue: private-network targets are
//! refused without the flag, the catalogue lists every event with a
//! sample, and a test send is signed.

mod common;

use common::Server;
use common::receiver::{FAST, Receiver, subscribe, verify};
use serde_json::json;

#[test]
fn private_targets_are_refused_without_the_flag() {
    let server = Server::start();
    for url in [
        "http://127.0.0.1:9/hook",
        "http://localhost:9/hook",
        "http://10.0.0.1/hook",
        "http://[::1]/hook",
    ] {
        let (status, body) = server.post("/v1/webhooks", json!({"url": url}));
        assert_eq!(status, 400, "{url}: {body}");
        let error = body["error"].as_str().unwrap();
        assert!(
            error.starts_with("field `url`: `") && error.contains("private-network"),
            "{error}"
        );
    }
    let (status, body) = server.put(
        "/settings/notifications",
        json!({"slack": {"webhook_url": "http://192.168.0.10/chat"}}),
    );
    assert_eq!(status, 400);
    assert!(
        body["error"]
            .as_str()
            .unwrap()
            .starts_with("notification setting `slack.webhook_url`: `192.168.0.10` is a loopback"),
        "{body}"
    );
    for (body, error) in [
        (
            json!({"url": "ftp://example.com/"}),
            "field `url`: `ftp://example.com/` is not an http or https URL",
        ),
        (json!({}), "field `url` is required"),
        (json!({"url": 5}), "field `url` must be a string"),
        (
            json!({"url": "https://8.8.8.8/", "events": ["customer.gone"]}),
            "field `events`: `customer.gone` is not an event type (see GET /webhooks/events)",
        ),
        (
            json!({"url": "https://8.8.8.8/", "enabled": "yes"}),
            "field `enabled` must be a boolean",
        ),
        (
            json!({"url": "https://8.8.8.8/", "secret": "x"}),
            "unknown field `secret`; a webhook has url, events, enabled and description",
        ),
        // A fragment never reaches the target; it used to be kept and dropped
        // from every delivery.
        (
            json!({"url": "https://8.8.8.8/hook#billing"}),
            "field `url`: the fragment `#billing` is never sent to the target; leave it out",
        ),
    ] {
        let (status, answer) = server.post("/v1/webhooks", body.clone());
        assert_eq!(
            (status, answer["error"].as_str().unwrap()),
            (400, error),
            "{body}"
        );
    }
    // A public address passes; the secret shows only in the creation answer.
    let (status, hook) = server.post(
        "/v1/webhooks",
        json!({"url": "https://8.8.8.8/hook", "events": ["customer.new"], "enabled": false}),
    );
    assert_eq!(status, 201);
    let id = hook["id"].as_str().unwrap();
    let (status, read) = server.get(&format!("/webhooks/{id}"));
    assert_eq!(status, 200);
    assert!(read.get("secret").is_none());
    assert_eq!(read["status"], "disabled");
    assert_eq!(read["events"], json!(["customer.new"]));
    let (status, changed) = server.put(
        &format!("/v1/webhooks/{id}"),
        json!({"description": "billing", "events": []}),
    );
    assert_eq!(status, 200);
    assert_eq!(
        (&changed["description"], &changed["events"], &changed["url"]),
        (
            &json!("billing"),
            &json!([]),
            &json!("https://8.8.8.8/hook")
        )
    );
    assert_eq!(server.get("/v1/webhooks").1["result"]["count"], 1);
    assert_eq!(server.delete(&format!("/v1/webhooks/{id}")).0, 200);
    assert_eq!(server.get(&format!("/v1/webhooks/{id}")).0, 404);
    // Readonly keys may not manage webhooks.
    let (_, key) = server.post(
        "/account/api-keys",
        json!({"name": "reader", "role": "readonly"}),
    );
    let reader = key["key"].as_str().unwrap();
    assert_eq!(
        server.call("GET", "/v1/webhooks", Some(reader), None).0,
        403
    );
}

#[test]
fn the_catalogue_lists_every_event_with_a_sample_and_a_test_send_is_signed() {
    let receiver = Receiver::start();
    let server = Server::start_in_with(common::data_dir(), FAST);
    let (status, list) = server.get("/v1/webhooks/events");
    assert_eq!(status, 200);
    let names: Vec<&str> = list["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        vec![
            "customer.created",
            "customer.new",
            "customer.expansion",
            "customer.contraction",
            "customer.churned",
            "customer.reactivated",
            "customer.movement_retracted",
            "invoice.failed",
            "invoice.refunded",
            "webhook.test"
        ]
    );
    for name in &names {
        let (status, sample) = server.get(&format!("/v1/webhooks/events/{name}/sample"));
        assert_eq!((status, sample["type"].as_str()), (200, Some(*name)));
        assert!(sample["data"]["account"].is_object() && sample["timestamp"].is_string());
    }
    assert_eq!(server.get("/v1/webhooks/events/nope/sample").0, 404);
    let (hook, secret) = subscribe(&server, &receiver.url(), &["invoice.failed"]);
    // A misspelt field is refused, not sent as the default test event.
    let (status, refused) = server.post(
        &format!("/v1/webhooks/{hook}/test"),
        json!({"evnt": "customer.churned"}),
    );
    assert_eq!(
        (status, refused["error"].as_str()),
        (400, Some("unknown field `evnt`; a test delivery has event"))
    );
    let (status, delivery) = server.post(
        &format!("/v1/webhooks/{hook}/test"),
        json!({"event": "customer.churned"}),
    );
    assert_eq!(status, 200, "{delivery}");
    assert_eq!(
        (
            &delivery["status"],
            &delivery["last_status_code"],
            &delivery["attempts"]
        ),
        (&json!("delivered"), &json!(204), &json!(1))
    );
    let taken = receiver.wait_until("the test", |t| !t.is_empty());
    verify(&taken[0], &secret);
    assert_eq!(taken[0].json()["type"], "customer.churned");
    assert_eq!(
        taken[0].headers["webhook-id"],
        delivery["event_id"].as_str().unwrap()
    );
    // Credentials in the URL go as HTTP basic authentication.
    let with_login = receiver
        .url()
        .replacen("http://", "http://hooks:s3cret@", 1);
    let (hook, _) = subscribe(&server, &with_login, &["invoice.failed"]);
    let (status, _) = server.post(&format!("/v1/webhooks/{hook}/test"), json!({}));
    assert_eq!(status, 200);
    let taken = receiver.wait_until("the second test", |t| t.len() == 2);
    assert_eq!(taken[1].headers["authorization"], "Basic aG9va3M6czNjcmV0");
    assert!(!taken[0].headers.contains_key("authorization"));
}

#[test]
fn a_target_a_request_cannot_carry_as_written_is_refused() {
    let server = Server::start();
    for url in ["https://8.8.8.8/a b", "https://8.8.8.8/a\tb"] {
        let refusal = |field: &str, prefix: &str| {
            json!({"error": format!("{prefix}`{url}` holds a character a request cannot carry as it is (such as a space); percent-encode it"),
                   "code": "bad_request", "field": field})
        };
        let (status, body) = server.post("/v1/webhooks", json!({"url": url}));
        assert_eq!(
            (status, body),
            (400, refusal("url", "field `url`: ")),
            "{url}"
        );
        let (status, body) = server.put(
            "/settings/notifications",
            json!({"slack": {"webhook_url": url}}),
        );
        assert_eq!(
            (status, body),
            (
                400,
                refusal(
                    "slack.webhook_url",
                    "notification setting `slack.webhook_url`: "
                )
            ),
            "{url}"
        );
    }
    assert_eq!(server.get("/v1/webhooks").1["result"]["count"], 0);
    assert!(server.get("/settings/notifications").1["slack"]["webhook_url"].is_null());

    // Percent-encoded, the same target is taken as written; an update is
    // checked the same way.
    let (status, hook) = server.post("/v1/webhooks", json!({"url": "https://8.8.8.8/a%20b"}));
    assert_eq!(
        (status, hook["url"].clone()),
        (201, json!("https://8.8.8.8/a%20b"))
    );
    let id = hook["id"].as_str().unwrap();
    let (status, body) = server.put(
        &format!("/v1/webhooks/{id}"),
        json!({"url": "https://8.8.8.8/a b"}),
    );
    assert_eq!(
        (status, body["field"].clone()),
        (400, json!("url")),
        "{body}"
    );
    assert_eq!(
        server.get(&format!("/v1/webhooks/{id}")).1["url"],
        "https://8.8.8.8/a%20b"
    );
}
