//! What the tests of events out share: an HTTP receiver on 127.0.0.1 that
//! keeps the webhooks and chat messages a real server sends it, the check
//! of their signatures, and the records that make events fire. Every wait
//! is bounded by [`WAIT`].

use super::Server;
use base64::Engine;
use base64::engine::general_purpose::STANDARD as BASE64;
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
pub const WAIT: Duration = Duration::from_secs(30);

/// Fast retries and frequent scans.
pub const FAST: &[&str] = &[
    "--webhooks-allow-private",
    "--webhook-retry-schedule",
    "100ms,200ms,300ms,400ms,500ms",
    "--events-scan-interval",
    "300ms",
];

/// One request a receiver took.
#[derive(Debug, Clone)]
pub struct Received {
    pub headers: HashMap<String, String>,
    pub body: String,
}

impl Received {
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.body).expect("a JSON body")
    }
}

/// An HTTP receiver on 127.0.0.1 that answers 500 to its first `failing`
/// requests and 204 after, keeping the requests it answered 204.
pub struct Receiver {
    pub port: u16,
    pub taken: Arc<Mutex<Vec<Received>>>,
    pub failing: Arc<AtomicUsize>,
    /// Every request it read, answered 500 or 204.
    pub requests: Arc<AtomicUsize>,
}

impl Receiver {
    pub fn start() -> Receiver {
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

    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}/hook", self.port)
    }

    pub fn fail_next(&self, requests: usize) {
        self.failing.store(requests, Ordering::SeqCst);
    }

    pub fn taken(&self) -> Vec<Received> {
        self.taken.lock().unwrap().clone()
    }

    /// Waits until `done` holds for what was taken; panics after [`WAIT`].
    pub fn wait_until(&self, what: &str, done: impl Fn(&[Received]) -> bool) -> Vec<Received> {
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

pub fn read_request(stream: &TcpStream) -> Option<Received> {
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
pub fn verify(received: &Received, secret: &str) {
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
pub fn subscribe(server: &Server, url: &str, events: &[&str]) -> (String, String) {
    let (status, hook) = server.post(
        "/v1/webhooks",
        json!({"url": url, "events": events, "description": "test receiver"}),
    );
    assert_eq!(status, 201, "{hook}");
    let secret = hook["secret"].as_str().expect("the secret").to_string();
    assert!(secret.starts_with("whsec_"));
    (hook["id"].as_str().unwrap().to_string(), secret)
}

pub fn post_ok(server: &Server, path: &str, body: Value) {
    let (status, answer) = server.post(path, body);
    assert!(status == 200 || status == 201, "{path}: {status} {answer}");
}

pub fn plan_and_customer(server: &Server, customer: &str, name: &str) {
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

pub fn invoice(id: &str, customer: &str, kind: &str, date: &str, amount: i64) -> Value {
    let mut invoice = json!({"id": id, "customer_id": customer, "type": kind, "invoice_date": date, "amount": amount, "currency": "USD"});
    if kind == "subscription" {
        invoice["plan_id"] = json!("m");
    }
    invoice
}

/// (type, movement subtype, mrr_change) of each event taken, in order.
pub fn summary(taken: &[Received]) -> Vec<(String, String, i64)> {
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

pub fn s(text: &str) -> String {
    text.to_string()
}
