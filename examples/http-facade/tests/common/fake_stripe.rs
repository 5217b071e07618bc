//! A fake Stripe API for tests: a small HTTP server on 127.0.0.1 serving
//! recorded objects with Stripe's list pagination (`limit`, `starting_after`,
//! `ending_before`, `has_more`), filters (`customer`, `created[gte]`),
//! retrieval by id, Stripe's error bodies, a key check, answers of 429 to
//! the first requests when asked, and events added while it runs. Used by
//! the service's tests and (through `#[path]`) the CLI's.

#![allow(dead_code)]

use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

pub const KEY: &str = "sk_test_fake_key_0123456789";

#[derive(Default)]
struct Data {
    /// Objects by list path (`/v1/invoices`), in list order (newest first,
    /// as Stripe lists).
    lists: BTreeMap<String, Vec<Value>>,
    /// Every request's path and query, in order.
    log: Vec<String>,
    /// Paths answered with an error status from now on (see
    /// [`FakeStripe::refuse`] and [`FakeStripe::fail`]).
    refused: Vec<(String, u16)>,
}

pub struct FakeStripe {
    pub base: String,
    data: Arc<Mutex<Data>>,
    /// Requests still to answer with 429.
    rate_limited: Arc<AtomicUsize>,
}

/// The list path of an object kind (`credit_note` -> `/v1/credit_notes`).
pub fn list_path(kind: &str) -> String {
    format!("/v1/{kind}s")
}

impl FakeStripe {
    /// Serves `objects` (any kinds; list responses are flattened), at most
    /// `page_cap` objects a page whatever `limit` asks.
    pub fn start(objects: &[Value], page_cap: usize) -> FakeStripe {
        let mut data = Data::default();
        let mut flat = Vec::new();
        for object in objects {
            match object["object"].as_str() {
                Some("list") => flat.extend(object["data"].as_array().unwrap().iter().cloned()),
                _ => flat.push(object.clone()),
            }
        }
        for object in flat {
            let kind = object["object"].as_str().expect("object kind").to_string();
            data.lists
                .entry(list_path(&kind))
                .or_default()
                .insert(0, object);
        }
        let data = Arc::new(Mutex::new(data));
        let rate_limited = Arc::new(AtomicUsize::new(0));
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let base = format!("http://{}", listener.local_addr().unwrap());
        let (served, limited) = (Arc::clone(&data), Arc::clone(&rate_limited));
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let (data, limited) = (Arc::clone(&served), Arc::clone(&limited));
                std::thread::spawn(move || answer(stream, &data, &limited, page_cap));
            }
        });
        FakeStripe {
            base,
            data,
            rate_limited,
        }
    }

    /// Answers every request for `path` with a 400 (an invalid request,
    /// which a client does not retry).
    pub fn refuse(&self, path: &str) {
        self.fail(path, 400);
    }

    /// Answers every request for `path` with `status` until
    /// [`FakeStripe::recover`].
    pub fn fail(&self, path: &str, status: u16) {
        self.data
            .lock()
            .unwrap()
            .refused
            .push((path.to_string(), status));
    }

    /// Answers `path` normally again.
    pub fn recover(&self, path: &str) {
        self.data.lock().unwrap().refused.retain(|(p, _)| p != path);
    }

    /// The next `count` requests get 429.
    pub fn rate_limit_next(&self, count: usize) {
        self.rate_limited.store(count, Ordering::SeqCst);
    }

    /// Adds an event (newest first, as Stripe lists events) and stores its
    /// object as the current state.
    pub fn add_event(&self, event: Value) {
        let mut data = self.data.lock().unwrap();
        let object = event["data"]["object"].clone();
        let path = list_path(object["object"].as_str().unwrap());
        let list = data.lists.entry(path).or_default();
        list.retain(|o| o["id"] != object["id"]);
        list.insert(0, object);
        data.lists
            .entry("/v1/events".to_string())
            .or_default()
            .insert(0, event);
    }

    pub fn log(&self) -> Vec<String> {
        self.data.lock().unwrap().log.clone()
    }
}

fn decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'%' if i + 2 < bytes.len() => {
                let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).unwrap_or("");
                out.push(u8::from_str_radix(hex, 16).unwrap_or(b'?'));
                i += 3;
            }
            b'+' => {
                out.push(b' ');
                i += 1;
            }
            b => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).to_string()
}

fn error(status: u16, kind: &str, message: &str) -> (u16, Value) {
    (status, json!({"error": {"type": kind, "message": message}}))
}

fn answer(stream: TcpStream, data: &Mutex<Data>, limited: &AtomicUsize, page_cap: usize) {
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut request_line = String::new();
    if reader.read_line(&mut request_line).is_err() {
        return;
    }
    let mut authorization = String::new();
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 || line.trim().is_empty() {
            break;
        }
        if let Some((name, value)) = line.split_once(':')
            && name.eq_ignore_ascii_case("authorization")
        {
            authorization = value.trim().to_string();
        }
    }
    let target = request_line
        .split_whitespace()
        .nth(1)
        .unwrap_or("/")
        .to_string();
    let (path, query) = target.split_once('?').unwrap_or((&target, ""));
    let params: BTreeMap<String, String> = query
        .split('&')
        .filter_map(|pair| pair.split_once('='))
        .map(|(k, v)| (decode(k), decode(v)))
        .collect();
    data.lock().unwrap().log.push(target.clone());
    let limited_now = limited
        .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
        .is_ok();
    let (status, body) = if limited_now {
        error(
            429,
            "rate_limit_error",
            "Too many requests in a short time.",
        )
    } else if authorization != format!("Bearer {KEY}") {
        error(401, "invalid_request_error", "Invalid API Key provided.")
    } else if let Some(status) = refused(&data.lock().unwrap(), path) {
        let kind = if status >= 500 {
            "api_error"
        } else {
            "invalid_request_error"
        };
        error(status, kind, "Refused by the test.")
    } else {
        route(path, &params, &data.lock().unwrap(), page_cap)
    };
    let text = body.to_string();
    let reason = match status {
        200 => "OK",
        401 => "Unauthorized",
        404 => "Not Found",
        429 => "Too Many Requests",
        _ => "Error",
    };
    let mut stream = stream;
    let _ = write!(
        stream,
        "HTTP/1.1 {status} {reason}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{text}",
        text.len()
    );
}

fn refused(data: &Data, path: &str) -> Option<u16> {
    data.refused
        .iter()
        .find(|(p, _)| p == path)
        .map(|(_, status)| *status)
}

fn route(
    path: &str,
    params: &BTreeMap<String, String>,
    data: &Data,
    page_cap: usize,
) -> (u16, Value) {
    if path == "/v1/account" {
        return (
            200,
            json!({"id": "acct_fake", "object": "account", "settings": {"dashboard": {"display_name": "Fake Co"}}}),
        );
    }
    if let Some(list) = data.lists.get(path) {
        return (200, page(list, params, page_cap));
    }
    // /v1/invoices/{id}/lines
    let parts: Vec<&str> = path.trim_start_matches('/').split('/').collect();
    if let ["v1", kind, id, "lines"] = parts.as_slice()
        && let Some(invoice) = data
            .lists
            .get(&format!("/v1/{kind}"))
            .and_then(|l| l.iter().find(|o| o["id"] == *id))
    {
        let lines = invoice["lines"]["data"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        return (200, page(&lines, params, page_cap));
    }
    if let ["v1", kind, id] = parts.as_slice() {
        if let Some(object) = data
            .lists
            .get(&format!("/v1/{kind}"))
            .and_then(|l| l.iter().find(|o| o["id"] == *id))
        {
            return (200, object.clone());
        }
        return error(
            404,
            "invalid_request_error",
            &format!("No such {}: '{id}'", kind.trim_end_matches('s')),
        );
    }
    if path.starts_with("/v1/") {
        // An empty list for kinds with no objects.
        return (
            200,
            json!({"object": "list", "data": [], "has_more": false, "url": path}),
        );
    }
    error(
        404,
        "invalid_request_error",
        &format!("Unrecognized request URL (GET: {path})"),
    )
}

/// One page of `list` (newest first) as Stripe pages it.
fn page(list: &[Value], params: &BTreeMap<String, String>, page_cap: usize) -> Value {
    let limit = params
        .get("limit")
        .and_then(|l| l.parse::<usize>().ok())
        .unwrap_or(10)
        .min(page_cap);
    let filtered: Vec<&Value> = list
        .iter()
        .filter(|o| {
            params
                .get("customer")
                .is_none_or(|c| o["customer"].as_str() == Some(c))
        })
        .filter(|o| {
            params
                .get("created[gte]")
                .and_then(|t| t.parse::<i64>().ok())
                .is_none_or(|t| o["created"].as_i64().unwrap_or(0) >= t)
        })
        .collect();
    let position = |id: &String| filtered.iter().position(|o| o["id"].as_str() == Some(id));
    let (data, has_more): (Vec<&Value>, bool) = if let Some(before) = params.get("ending_before") {
        let end = position(before).unwrap_or(0);
        let start = end.saturating_sub(limit);
        (filtered[start..end].to_vec(), start > 0)
    } else {
        let start = params
            .get("starting_after")
            .and_then(position)
            .map_or(0, |p| p + 1);
        let end = (start + limit).min(filtered.len());
        (filtered[start..end].to_vec(), end < filtered.len())
    };
    json!({"object": "list", "data": data, "has_more": has_more, "url": "/v1/x"})
}
