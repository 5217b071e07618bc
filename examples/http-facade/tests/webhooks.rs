//! Events out, over real HTTP and SMTP: receivers on 127.0.0.1 started by
//! each test take webhooks, chat messages and digest emails from a real
//! server, and every wait is bounded.

mod common;

use base64::Engine;
use base64::engine::general_purpose::STANDARD as BASE64;
use common::{OWNER_KEY, Server};
use hmac::{Hmac, Mac};
use serde_json::{Value, json};
use sha2::Sha256;
use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Longest any wait for a delivery may take.
const WAIT: Duration = Duration::from_secs(30);

/// Fast retries and frequent scans.
const FAST: &[&str] = &[
    "--webhooks-allow-private",
    "--webhook-retry-schedule",
    "100ms,200ms,300ms,400ms,500ms",
    "--events-scan-interval",
    "300ms",
];

/// One request a receiver took.
#[derive(Debug, Clone)]
struct Received {
    headers: HashMap<String, String>,
    body: String,
}

impl Received {
    fn json(&self) -> Value {
        serde_json::from_str(&self.body).expect("a JSON body")
    }
}

/// An HTTP receiver on 127.0.0.1 that answers 500 to its first `failing`
/// requests and 204 after, keeping the requests it answered 204.
struct Receiver {
    port: u16,
    taken: Arc<Mutex<Vec<Received>>>,
    failing: Arc<AtomicUsize>,
    requests: Arc<AtomicUsize>,
}

impl Receiver {
    fn start() -> Receiver {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let port = listener.local_addr().expect("address").port();
        let receiver = Receiver {
            port,
            taken: Arc::default(),
            failing: Arc::default(),
            requests: Arc::default(),
        };
        let (taken, failing, requests) = (
            Arc::clone(&receiver.taken),
            Arc::clone(&receiver.failing),
            Arc::clone(&receiver.requests),
        );
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let (taken, failing, requests) = (
                    Arc::clone(&taken),
                    Arc::clone(&failing),
                    Arc::clone(&requests),
                );
                std::thread::spawn(move || {
                    let Some(request) = read_request(&stream) else {
                        return;
                    };
                    requests.fetch_add(1, Ordering::SeqCst);
                    let fail = failing
                        .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
                        .is_ok();
                    let mut stream = stream;
                    if fail {
                        let _ = stream.write_all(
                            b"HTTP/1.1 500 Internal Server Error\r\ncontent-length: 0\r\nconnection: close\r\n\r\n",
                        );
                    } else {
                        taken.lock().unwrap().push(request);
                        let _ = stream
                            .write_all(b"HTTP/1.1 204 No Content\r\nconnection: close\r\n\r\n");
                    }
                });
            }
        });
        receiver
    }

    fn url(&self) -> String {
        format!("http://127.0.0.1:{}/hook", self.port)
    }

    fn fail_next(&self, requests: usize) {
        self.failing.store(requests, Ordering::SeqCst);
    }

    fn taken(&self) -> Vec<Received> {
        self.taken.lock().unwrap().clone()
    }

    /// Waits until `done` holds for what was taken; panics after [`WAIT`].
    fn wait_until(&self, what: &str, done: impl Fn(&[Received]) -> bool) -> Vec<Received> {
        let start = Instant::now();
        loop {
            let taken = self.taken();
            if done(&taken) {
                return taken;
            }
            assert!(
                start.elapsed() < WAIT,
                "waited for {what}; took {:#?}",
                taken.iter().map(|r| r.body.clone()).collect::<Vec<_>>()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

fn read_request(stream: &TcpStream) -> Option<Received> {
    stream.set_read_timeout(Some(WAIT)).ok()?;
    let mut reader = BufReader::new(stream);
    let mut line = String::new();
    reader.read_line(&mut line).ok()?;
    let mut headers = HashMap::new();
    loop {
        line.clear();
        reader.read_line(&mut line).ok()?;
        let trimmed = line.trim_end();
        if trimmed.is_empty() {
            break;
        }
        let (name, value) = trimmed.split_once(':')?;
        headers.insert(name.trim().to_ascii_lowercase(), value.trim().to_string());
    }
    let length: usize = headers.get("content-length")?.parse().ok()?;
    let mut body = vec![0; length];
    reader.read_exact(&mut body).ok()?;
    Some(Received {
        headers,
        body: String::from_utf8(body).ok()?,
    })
}

/// Checks a request's Standard Webhooks signature with `secret`.
fn verify(received: &Received, secret: &str) {
    let id = &received.headers["webhook-id"];
    let timestamp = &received.headers["webhook-timestamp"];
    let key = BASE64
        .decode(secret.strip_prefix("whsec_").expect("whsec_ prefix"))
        .expect("base64 secret");
    let mut mac = Hmac::<Sha256>::new_from_slice(&key).unwrap();
    mac.update(format!("{id}.{timestamp}.{}", received.body).as_bytes());
    let expected = format!("v1,{}", BASE64.encode(mac.finalize().into_bytes()));
    assert_eq!(received.headers["webhook-signature"], expected);
    let sent: i64 = timestamp.parse().expect("unix seconds");
    assert!((chrono::Utc::now().timestamp() - sent).abs() < 60);
    assert_eq!(&received.json()["data"]["as_of"].is_string(), &true);
}

/// Creates a webhook for `events` (all when empty); returns (id, secret).
fn subscribe(server: &Server, url: &str, events: &[&str]) -> (String, String) {
    let (status, hook) = server.post(
        "/v1/webhooks",
        json!({"url": url, "events": events, "description": "test receiver"}),
    );
    assert_eq!(status, 201, "{hook}");
    let secret = hook["secret"].as_str().expect("the secret").to_string();
    assert!(secret.starts_with("whsec_"));
    (hook["id"].as_str().unwrap().to_string(), secret)
}

fn post_ok(server: &Server, path: &str, body: Value) {
    let (status, answer) = server.post(path, body);
    assert!(status == 200 || status == 201, "{path}: {status} {answer}");
}

fn plan_and_customer(server: &Server, customer: &str, name: &str) {
    post_ok(
        server,
        "/data/plans",
        json!([{"id": "m", "name": "Monthly", "interval": "month", "currency": "USD"}]),
    );
    post_ok(
        server,
        "/data/customers",
        json!([{"id": customer, "name": name}]),
    );
}

fn invoice(id: &str, customer: &str, kind: &str, date: &str, amount: i64) -> Value {
    let mut invoice = json!({"id": id, "customer_id": customer, "type": kind, "invoice_date": date, "amount": amount, "currency": "USD"});
    if kind == "subscription" {
        invoice["plan_id"] = json!("m");
    }
    invoice
}

/// (type, movement subtype, mrr_change) of each event taken, in order.
fn summary(taken: &[Received]) -> Vec<(String, String, i64)> {
    taken
        .iter()
        .map(|r| {
            let event = r.json();
            (
                event["type"].as_str().unwrap().to_string(),
                event["data"]["movement"]["subtype"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string(),
                event["data"]["movement"]["mrr_change"]
                    .as_i64()
                    .or(event["data"]["invoice"]["amount"].as_i64())
                    .unwrap_or(0),
            )
        })
        .collect()
}

fn s(text: &str) -> String {
    text.to_string()
}

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
