//! The Stripe connection end to end against a fake Stripe API: connecting
//! (through rate limits), the paginated backfill, polled events, the signed
//! webhook, resync and disconnecting.

mod common;
#[path = "common/fake_stripe.rs"]
mod fake_stripe;

use common::{OWNER_KEY, Server, data_dir};
use fake_stripe::FakeStripe;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use std::time::{Duration, Instant};

fn fixture_objects(names: &[&str]) -> Vec<Value> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/stripe");
    names
        .iter()
        .flat_map(|name| {
            let text = std::fs::read_to_string(dir.join(name)).unwrap();
            let scenario: Value = serde_json::from_str(&text).unwrap();
            scenario["stripe"].as_array().unwrap().clone()
        })
        .collect()
}

fn hmac_hex(key: &[u8], message: &[u8]) -> String {
    let mut block = [0u8; 64];
    block[..key.len()].copy_from_slice(key);
    let inner = Sha256::new()
        .chain_update(block.map(|b| b ^ 0x36))
        .chain_update(message)
        .finalize();
    let outer = Sha256::new()
        .chain_update(block.map(|b| b ^ 0x5c))
        .chain_update(inner)
        .finalize();
    outer.iter().map(|b| format!("{b:02x}")).collect()
}

fn now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64
}

fn wait_for(server: &Server, what: &str, check: impl Fn(&Value) -> bool) -> Value {
    let start = Instant::now();
    loop {
        let (_, status) = server.get("/settings/payment-platform");
        if check(&status) {
            return status;
        }
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "{what}: {status}"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}

fn mrr(server: &Server, as_of: &str) -> Value {
    server.get(&format!("/reports/summary?as_of={as_of}")).1["summary"]["mrr_current"].clone()
}

#[test]
fn connect_backfill_follow_events_webhook_resync_and_disconnect() {
    let fake = FakeStripe::start(
        &fixture_objects(&[
            "04-upgrade-proration.json",
            "08-credit-note-refund.json",
            "09-cancellations.json",
        ]),
        2,
    );
    let server = start_following(&fake);
    assert_eq!(
        server.get("/settings/payment-platform").1["connected"],
        false
    );

    // Bad keys are refused, naming the field or Stripe's answer.
    let (status, body) = server.put(
        "/settings/payment-platform",
        json!({"secret_key": "pk_test_123"}),
    );
    assert_eq!(
        (status, body),
        (
            400,
            json!({"error": "field `secret_key` must be a Stripe secret key (sk_...) or restricted key (rk_...)",
                   "code": "bad_request", "field": "secret_key"})
        )
    );
    let (status, body) = server.put(
        "/settings/payment-platform",
        json!({"secret_key": fake_stripe::KEY, "uncollectible": "sometimes"}),
    );
    assert_eq!(
        (status, body),
        (
            400,
            json!({"error": "field `uncollectible`: must be `failed` or `void`, got \"sometimes\"",
                   "code": "bad_request", "field": "uncollectible"})
        )
    );
    let (status, body) = server.put("/settings/stripe", json!({"secret_key": "sk_test_wrong"}));
    assert_eq!(status, 400, "{body}");
    assert_eq!(body["field"], "secret_key", "{body}");
    assert!(
        body["error"]
            .as_str()
            .unwrap()
            .contains("Invalid API Key provided"),
        "{body}"
    );

    // Connect through two rate-limited answers; the key is never echoed.
    fake.rate_limit_next(2);
    let (status, body) = server.put(
        "/settings/payment-platform",
        json!({"secret_key": fake_stripe::KEY, "webhook_secret": "whsec_test_secret", "uncollectible": "void"}),
    );
    assert_eq!(status, 200, "{body}");
    assert!(!body.to_string().contains(fake_stripe::KEY));
    assert_eq!(
        (body["connected"].clone(), body["account_id"].clone()),
        (json!(true), json!("acct_fake"))
    );
    assert_eq!(body["account_name"], "Fake Co");
    assert_eq!(body["livemode"], false);
    assert_eq!(body["uncollectible"], "void");

    let done = wait_for(&server, "backfill", |s| s["sync_status"] == "complete");
    assert_eq!(done["customers_imported"], 5);
    // U: 3 invoices; R: invoice + credit note; P 2, N 1, S 2; cancellations of
    // P, N and (scheduled) S.
    assert_eq!(done["invoices_imported"], 13, "{done}");
    assert_eq!(done["rejected"], json!([]));
    assert!(done["last_sync"].is_string());
    assert!(
        fake.log().iter().any(|r| r.contains("starting_after=")),
        "paginated"
    );
    assert_eq!(mrr(&server, "2024-03-05"), 6200 + 5000 + 2000);
    let (_, detail) = server.get("/customers/cus_U?as_of=2024-02-15");
    assert_eq!(detail["converted_mrr"], 6200);

    // A polled event: cus_U downgrades to Basic on 1 March.
    let invoice = json!({"id": "in_U4", "object": "invoice", "customer": "cus_U", "created": 1_709_251_200,
        "currency": "usd", "status": "paid", "lines": {"object": "list", "has_more": false, "data": [{
            "id": "il_U4", "object": "line_item", "amount": 3100, "quantity": 1,
            "period": {"start": 1_709_251_200, "end": 1_711_929_600},
            "parent": {"type": "subscription_item_details", "subscription_item_details":
                {"subscription": "sub_U", "subscription_item": "si_U", "proration": false}},
            "pricing": {"type": "price_details", "price_details": {"price": "price_basic"}}}]}});
    fake.add_event(
        json!({"id": "evt_1", "object": "event", "type": "invoice.paid", "created": now(),
        "data": {"object": invoice}}),
    );
    let start = Instant::now();
    while mrr(&server, "2024-03-05") != json!(3100 + 5000 + 2000) {
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "the event was not imported"
        );
        std::thread::sleep(Duration::from_millis(200));
    }

    // The signed webhook: a bad signature is refused, a good one imported.
    let event = json!({"id": "evt_2", "object": "event", "type": "customer.updated", "created": now(),
        "data": {"object": {"id": "cus_R", "object": "customer", "name": "Refunded Renamed", "created": 1_701_388_800}}});
    let body = event.to_string();
    let t = now();
    let signature = format!(
        "t={t},v1={}",
        hmac_hex(b"whsec_test_secret", format!("{t}.{body}").as_bytes())
    );
    let post = |signature: &str| {
        let url = format!("{}/webhooks/stripe/1", server.base);
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .build()
            .into();
        let mut response = agent
            .post(&url)
            .header("Stripe-Signature", signature)
            .header("Content-Type", "application/json")
            .send(body.as_bytes())
            .unwrap();
        let status = response.status().as_u16();
        let text = response.body_mut().read_to_string().unwrap();
        (status, serde_json::from_str::<Value>(&text).unwrap())
    };
    let (status, answer) = post(&format!("t={t},v1={}", "0".repeat(64)));
    assert_eq!(
        (status, answer),
        (
            400,
            json!({"error": "no signature in the Stripe-Signature header matches the body",
                   "code": "bad_request", "field": "Stripe-Signature"})
        )
    );
    let (status, answer) = post(&signature);
    assert_eq!(
        (status, answer["received"].clone()),
        (200, json!(true)),
        "{answer}"
    );
    assert_eq!(
        server.get("/data/customers/cus_R").1["name"],
        "Refunded Renamed"
    );

    // Resync one customer from Stripe.
    let (status, body) = server.call("POST", "/customers/cus_U/resync", Some(OWNER_KEY), None);
    assert_eq!(status, 200, "{body}");
    assert!(
        body["message"]
            .as_str()
            .unwrap()
            .starts_with("customer cus_U re-imported from Stripe")
    );

    // Disconnect, removing the imported data.
    let (status, body) = server.delete("/settings/payment-platform?remove_data=true");
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["removed"]["customers"], 5);
    assert_eq!(server.get("/settings/stripe").1["connected"], false);
    assert_eq!(server.get("/data/customers").1["result"]["count"], 0);
}

/// A server following `fake`, polling every second.
fn start_following(fake: &FakeStripe) -> Server {
    Server::start_with_args(
        data_dir(),
        Some(OWNER_KEY),
        &[
            "--stripe-api-base",
            &fake.base,
            "--stripe-poll-seconds",
            "1",
            "--stripe-backoff-ms",
            "10",
        ],
    )
    .0
}

#[test]
fn a_failed_backfill_is_retried_until_it_completes() {
    let fake = FakeStripe::start(
        &fixture_objects(&[
            "04-upgrade-proration.json",
            "08-credit-note-refund.json",
            "09-cancellations.json",
        ]),
        2,
    );
    fake.fail("/v1/invoices", 500);
    let server = start_following(&fake);
    let (status, body) = server.put(
        "/settings/payment-platform",
        json!({"secret_key": fake_stripe::KEY}),
    );
    assert_eq!(status, 200, "{body}");
    let failed = wait_for(&server, "the failed backfill", |s| {
        s["sync_status"] == "error"
    });
    assert_eq!(
        failed["sync_error"],
        "Stripe answered 500 to GET /v1/invoices: Refused by the test."
    );

    // Every poll backfills again (six attempts each) while Stripe fails,
    // and the status stays an error.
    let invoice_reads = || {
        fake.log()
            .iter()
            .filter(|r| r.starts_with("/v1/invoices?"))
            .count()
    };
    let start = Instant::now();
    while invoice_reads() < 12 {
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "the backfill was not retried"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    assert_eq!(
        server.get("/settings/payment-platform").1["sync_status"],
        "error"
    );

    fake.recover("/v1/invoices");
    let done = wait_for(&server, "the retried backfill", |s| {
        s["sync_status"] != "error"
    });
    assert_eq!(
        (
            done["sync_status"].clone(),
            done["sync_error"].clone(),
            done["customers_imported"].clone(),
            done["invoices_imported"].clone()
        ),
        (json!("complete"), Value::Null, json!(5), json!(13)),
        "{done}"
    );
    assert_eq!(mrr(&server, "2024-03-05"), 6200 + 5000 + 2000);
}

/// Posts `event` to the signed webhook endpoint of account 1, signed with
/// `secret`.
fn post_webhook(server: &Server, secret: &[u8], event: &Value) -> (u16, Value) {
    let body = event.to_string();
    let t = now();
    let signature = format!(
        "t={t},v1={}",
        hmac_hex(secret, format!("{t}.{body}").as_bytes())
    );
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .build()
        .into();
    let mut response = agent
        .post(&format!("{}/webhooks/stripe/1", server.base))
        .header("Stripe-Signature", &signature)
        .header("Content-Type", "application/json")
        .send(body.as_bytes())
        .unwrap();
    let status = response.status().as_u16();
    let text = response.body_mut().read_to_string().unwrap();
    (status, serde_json::from_str(&text).unwrap())
}

#[test]
fn an_event_whose_related_object_is_gone_does_not_block_later_events() {
    let fake = FakeStripe::start(&fixture_objects(&["08-credit-note-refund.json"]), 100);
    let server = start_following(&fake);
    let (status, body) = server.put(
        "/settings/payment-platform",
        json!({"secret_key": fake_stripe::KEY, "webhook_secret": "whsec_test_secret"}),
    );
    assert_eq!(status, 200, "{body}");
    wait_for(&server, "backfill", |s| s["sync_status"] == "complete");

    // A charge whose invoice was deleted (Stripe answers 404 for it), then
    // a later event: the charge is imported without its invoice, reported,
    // and the later event is not held up.
    let charge = |event: &str, id: &str, invoice: &str| {
        json!({"id": event, "object": "event", "type": "charge.succeeded", "created": now(),
            "data": {"object": {"id": id, "object": "charge", "amount": 1000, "currency": "usd",
                "customer": "cus_R", "created": 1_704_070_800, "invoice": invoice,
                "status": "succeeded", "paid": true}}})
    };
    let rename = |event: &str, name: &str| {
        json!({"id": event, "object": "event", "type": "customer.updated",
            "created": now(), "data": {"object": {"id": "cus_R", "object": "customer",
                "name": name, "created": 1_701_388_800}}})
    };
    let wait_for_name = |name: &str| {
        let start = Instant::now();
        while server.get("/data/customers/cus_R").1["name"] != name {
            assert!(
                start.elapsed() < Duration::from_secs(30),
                "the event naming {name} was not imported: {}",
                server.get("/settings/payment-platform").1
            );
            std::thread::sleep(Duration::from_millis(200));
        }
    };
    fake.add_event(charge("evt_c1", "ch_gone", "in_gone"));
    fake.add_event(rename("evt_r1", "Renamed After"));
    wait_for_name("Renamed After");
    let status = server.get("/settings/payment-platform").1;
    assert_eq!(
        (status["sync_status"].clone(), status["rejected"].clone()),
        (
            json!("complete"),
            json!([{"id": "ch_gone", "field": "invoice",
                "error": "Stripe no longer has invoice `in_gone` (404: deleted); the charge was imported without it"}])
        ),
        "{status}"
    );

    // The signed webhook takes such an event too.
    let (status, answer) = post_webhook(
        &server,
        b"whsec_test_secret",
        &charge("evt_c2", "ch_gone_2", "in_gone_2"),
    );
    assert_eq!(
        (status, answer),
        (
            200,
            json!({"received": true, "id": "evt_c2", "rejected": [{"id": "ch_gone_2", "field": "invoice",
                "error": "Stripe no longer has invoice `in_gone_2` (404: deleted); the charge was imported without it"}]})
        )
    );

    // Stripe failing otherwise (a 500 for the invoice) stops the batch
    // until it recovers: the later event waits for it.
    fake.fail("/v1/invoices/in_R1", 500);
    fake.add_event(charge("evt_c3", "ch_R2", "in_R1"));
    fake.add_event(rename("evt_r2", "Renamed Again"));
    let failed = wait_for(&server, "the failing invoice", |s| {
        s["sync_status"] == "error"
    });
    assert_eq!(
        failed["sync_error"],
        "Stripe answered 500 to GET /v1/invoices/in_R1: Refused by the test."
    );
    assert_eq!(
        server.get("/data/customers/cus_R").1["name"],
        "Renamed After"
    );
    fake.recover("/v1/invoices/in_R1");
    wait_for_name("Renamed Again");
    assert_eq!(
        server.get("/settings/payment-platform").1["sync_status"],
        "complete"
    );
}

#[test]
fn a_new_put_of_the_connection_keeps_what_it_does_not_give_and_takes_one_key() {
    let fake = FakeStripe::start(&[], 100);
    let server = start_following(&fake);
    let put = |body: Value| server.put("/settings/payment-platform", body);
    let choices = |status: &Value| {
        (
            status["webhook_configured"].clone(),
            status["uncollectible"].clone(),
        )
    };
    let (status, body) = put(json!({"secret_key": fake_stripe::KEY,
        "webhook_secret": "whsec_test_secret", "uncollectible": "void"}));
    assert_eq!(status, 200, "{body}");
    assert_eq!(choices(&body), (json!(true), json!("void")));

    // The key and its alias together: refused, nothing changes.
    let (status, body) = put(json!({"secret_key": fake_stripe::KEY,
        "api_key": "sk_test_other", "uncollectible": "failed"}));
    assert_eq!(
        (status, body),
        (
            400,
            json!({"error": "field `api_key` is an alias of `secret_key`: give the key once",
                   "code": "bad_request", "field": "api_key"})
        )
    );
    assert_eq!(
        choices(&server.get("/settings/payment-platform").1),
        (json!(true), json!("void"))
    );

    // Only the key: the signing secret and the choice stay.
    let (status, body) = put(json!({"secret_key": fake_stripe::KEY}));
    assert_eq!(status, 200, "{body}");
    assert_eq!(choices(&body), (json!(true), json!("void")));

    // Null clears them.
    let (status, body) = put(json!({"api_key": fake_stripe::KEY,
        "webhook_secret": null, "uncollectible": null}));
    assert_eq!(status, 200, "{body}");
    assert_eq!(choices(&body), (json!(false), json!("failed")));
}
