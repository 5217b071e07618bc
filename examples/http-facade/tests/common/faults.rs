//! What the storage fault tests share: a valid write for every write
//! operation of the description and the records they act on, every read
//! of the description, a small disk to fill, and the checks that writes
//! are refused with `503 storage_unavailable` while reads answer as before,
//! then taken once the fault is gone.

use super::{OWNER_KEY, Server, seed};
use serde_json::{Value, json};
use std::path::Path;

/// A valid write for each record write operation of the description, on
/// the records `prepare` leaves: `(method, path, body)`.
pub fn writes(group: &str) -> Vec<(&'static str, String, Option<Value>)> {
    vec![
        (
            "POST",
            "/data/plans".into(),
            Some(json!({"id": "f", "name": "F", "interval": "month", "currency": "USD"})),
        ),
        (
            "PUT",
            "/data/plans/m".into(),
            Some(json!({"name": "Monthly renamed"})),
        ),
        ("DELETE", "/data/plans/spare".into(), None),
        (
            "POST",
            "/data/customers".into(),
            Some(json!({"id": "C", "name": "Cee"})),
        ),
        (
            "PUT",
            "/data/customers/A".into(),
            Some(json!({"name": "Acme renamed"})),
        ),
        (
            "POST",
            "/data/plan-groups".into(),
            Some(json!({"name": "New group", "plans": [{"id": "m"}]})),
        ),
        (
            "PUT",
            format!("/data/plan-groups/{group}"),
            Some(json!({"name": "Renamed group", "plans": [{"id": "m"}]})),
        ),
        ("DELETE", format!("/data/plan-groups/{group}"), None),
        (
            "POST",
            "/data/invoices".into(),
            Some(
                json!({"id": "c1", "customer_id": "A", "type": "subscription",
            "invoice_date": "2024-02-01", "amount": 4000, "currency": "USD", "plan_id": "m"}),
            ),
        ),
        (
            "PUT",
            "/data/invoices/a1".into(),
            Some(
                json!({"id": "a1", "customer_id": "A", "type": "subscription",
            "invoice_date": "2024-01-01", "amount": 3100, "currency": "USD", "plan_id": "m"}),
            ),
        ),
        ("DELETE", "/data/invoices/b1".into(), None),
        // Last: it takes B's invoices with it.
        ("DELETE", "/data/customers/B".into(), None),
        (
            "POST",
            "/data/data-sources".into(),
            Some(json!({"id": "ds2", "name": "Second"})),
        ),
        (
            "PUT",
            "/data/data-sources/ds1".into(),
            Some(json!({"id": "ds1", "name": "Renamed"})),
        ),
        ("DELETE", "/data/data-sources/ds1".into(), None),
        (
            "POST",
            "/data/fx-rates".into(),
            Some(json!([{"date": "2024-01-01", "currency": "EUR", "rate": 0.9}])),
        ),
    ]
}

/// Seeds the records the writes act on; returns the plan group's id.
pub fn prepare(server: &Server) -> String {
    seed(server);
    let (status, body) = server.post(
        "/data/plans",
        json!({"id": "spare", "name": "Spare", "interval": "month", "currency": "USD"}),
    );
    assert!((200..300).contains(&status), "{body}");
    let (status, body) = server.post("/data/data-sources", json!({"id": "ds1", "name": "First"}));
    assert!((200..300).contains(&status), "{body}");
    let (status, body) = server.post(
        "/data/plan-groups",
        json!({"name": "Group", "plans": [{"id": "m2"}]}),
    );
    assert_eq!(status, 200, "{body}");
    body["id"].as_str().expect("group id").to_string()
}

/// A small tmpfs mounted on `dir` (needs root and mount rights; `None`
/// where they are missing); unmounted when dropped.
pub struct SmallDisk(std::path::PathBuf);

impl SmallDisk {
    pub fn mount(dir: &Path) -> Option<SmallDisk> {
        let mounted = std::process::Command::new("mount")
            .args(["-t", "tmpfs", "-o", "size=8m", "tmpfs"])
            .arg(dir)
            .stderr(std::process::Stdio::null())
            .status()
            .ok()?;
        mounted.success().then(|| SmallDisk(dir.to_path_buf()))
    }
}

impl Drop for SmallDisk {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount")
            .arg("-l")
            .arg(&self.0)
            .status();
    }
}

/// Fills what is left of the file system of `dir`; returns the filler.
pub fn fill(dir: &Path) -> std::path::PathBuf {
    use std::io::Write;
    let filler = dir.join("filler");
    let mut file = std::fs::File::create(&filler).expect("filler");
    let chunk = vec![0u8; 4096];
    while file.write_all(&chunk).is_ok() {}
    let _ = file.sync_all();
    filler
}

/// A request of the extended fault tests: method, path, headers and body.
pub struct Request {
    pub method: &'static str,
    pub path: String,
    pub headers: Vec<(&'static str, String)>,
    pub body: Vec<u8>,
}

impl Request {
    pub fn json(method: &'static str, path: impl Into<String>, body: Option<Value>) -> Request {
        Request {
            method,
            path: path.into(),
            headers: vec![("Content-Type", "application/json".into())],
            body: body.map(|b| b.to_string().into_bytes()).unwrap_or_default(),
        }
    }

    pub fn typed(path: &str, content_type: &str, body: Vec<u8>) -> Request {
        Request {
            method: "POST",
            path: path.into(),
            headers: vec![("Content-Type", content_type.into())],
            body,
        }
    }

    /// Sent by a session instead of the owner key.
    pub fn by_session(mut self, session: &Session) -> Request {
        self.headers.push(("Cookie", session.cookie.clone()));
        self.headers.push(("X-CSRF-Token", session.csrf.clone()));
        self
    }

    /// Sent without a key (a login, an invitation's acceptance).
    pub fn anonymous(mut self) -> Request {
        self.headers.push(("Authorization", String::new()));
        self
    }

    /// Status and JSON body (`Value::Null` when not JSON) of the request,
    /// with the owner key unless it says otherwise.
    pub fn send(&self, server: &Server) -> (u16, Value) {
        let (status, _, body) = self.send_full(server);
        (status, body)
    }

    pub fn send_full(&self, server: &Server) -> (u16, Option<String>, Value) {
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .build()
            .into();
        let mut request = ureq::http::Request::builder()
            .method(self.method)
            .uri(format!("{}{}", server.base, self.path));
        let keyless = self
            .headers
            .iter()
            .any(|(name, _)| *name == "Authorization" || *name == "Cookie");
        if !keyless {
            request = request.header("Authorization", format!("Bearer {OWNER_KEY}"));
        }
        for (name, value) in &self.headers {
            if !value.is_empty() {
                request = request.header(*name, value.as_str());
            }
        }
        let mut response = agent
            .run(request.body(self.body.clone()).expect("request"))
            .expect("the server answers");
        let cookie = response
            .headers()
            .get("set-cookie")
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.split(';').next())
            .map(str::to_string);
        let text = response.body_mut().read_to_string().unwrap_or_default();
        (
            response.status().as_u16(),
            cookie,
            serde_json::from_str(&text).unwrap_or(Value::Null),
        )
    }
}

pub struct Session {
    pub cookie: String,
    pub csrf: String,
}

/// What [`prepare_all`] leaves for the writes and reads to act on.
pub struct Prepared {
    pub group: String,
    pub key_id: String,
    pub invitation: String,
    pub invitation_id: String,
    pub user_id: String,
    pub webhook: String,
    pub session: Session,
}

/// Seeds [`prepare`]'s records, then an extra API key, a user with a
/// session, a pending invitation and a webhook subscription.
pub fn prepare_all(server: &Server) -> Prepared {
    let group = prepare(server);
    let (status, answer) = Request::json(
        "PUT",
        "/settings/notifications",
        Some(json!({"email": {"recipients": ["ops@example.test"]}})),
    )
    .send(server);
    assert_eq!(status, 200, "{answer}");
    let (status, key) = Request::json(
        "POST",
        "/account/api-keys",
        Some(json!({"name": "spare", "role": "readonly"})),
    )
    .send(server);
    assert_eq!(status, 201, "{key}");
    let invite = |email: &str| {
        let (status, invitation) = Request::json(
            "POST",
            "/account/team",
            Some(json!({"email": email, "role": "admin"})),
        )
        .send(server);
        assert_eq!(status, 201, "{invitation}");
        invitation
    };
    let accepted = invite("ada@example.test");
    let (status, cookie, login) = Request::json(
        "POST",
        format!(
            "/invitations/{}",
            accepted["token"].as_str().expect("token")
        ),
        Some(json!({"password": "a long password"})),
    )
    .anonymous()
    .send_full(server);
    assert_eq!(status, 201, "{login}");
    let session = Session {
        cookie: cookie.expect("a session cookie"),
        csrf: login["csrf_token"].as_str().expect("csrf").to_string(),
    };
    let pending = invite("bob@example.test");
    let revoked = invite("cy@example.test");
    let (_, team) = server.get("/account/team");
    let user_id = team["result"]["list"]
        .as_array()
        .expect("team")
        .iter()
        .find(|m| m["email"] == "ada@example.test")
        .expect("the user")["id"]
        .as_str()
        .expect("id")
        .to_string();
    let (status, hook) = Request::json(
        "POST",
        "/webhooks",
        Some(json!({"url": "http://127.0.0.1:9/in", "events": ["customer.churned"]})),
    )
    .send(server);
    assert_eq!(status, 201, "{hook}");
    Prepared {
        group,
        key_id: key["id"].as_str().expect("key id").to_string(),
        invitation: pending["token"].as_str().expect("token").to_string(),
        invitation_id: revoked["id"].as_str().expect("id").to_string(),
        user_id,
        webhook: hook["id"].as_str().expect("webhook id").to_string(),
        session,
    }
}

/// An Arrow IPC stream of one customer.
pub fn arrow_customers() -> Vec<u8> {
    use arrow_array::{ArrayRef, RecordBatch, StringArray};
    let text = |values: &[&str]| -> ArrayRef {
        std::sync::Arc::new(values.iter().map(|v| Some(*v)).collect::<StringArray>())
    };
    let batch = RecordBatch::try_from_iter([("id", text(&["AR"])), ("name", text(&["Arrow"]))])
        .expect("batch");
    let mut bytes = Vec::new();
    let mut writer =
        arrow_ipc::writer::StreamWriter::try_new(&mut bytes, &batch.schema()).expect("writer");
    writer.write(&batch).expect("write");
    writer.finish().expect("finish");
    drop(writer);
    bytes
}

/// A valid write for each write operation of the description outside
/// `/data/` (those are [`writes`]), on what [`prepare_all`] leaves; each
/// with the operation's path template. Ordered so that no write undoes
/// what a later one needs.
pub fn other_writes(prepared: &Prepared) -> Vec<(&'static str, Request)> {
    let import = "/data-sources/ds1/customers";
    vec![
        (
            "/account",
            Request::json("PUT", "/account", Some(json!({"name": "Renamed"}))),
        ),
        (
            "/profile",
            Request::json("PUT", "/profile", Some(json!({"first_name": "Ada"}))),
        ),
        (
            "/settings/notifications",
            Request::json(
                "PUT",
                "/settings/notifications",
                Some(json!({"email": {"frequency": "daily"}})),
            ),
        ),
        (
            "/settings/notifications/digest",
            Request::json(
                "POST",
                "/settings/notifications/digest",
                Some(json!({"frequency": "daily", "period_end": "2024-02-01"})),
            ),
        ),
        (
            "/account/api-keys",
            Request::json(
                "POST",
                "/account/api-keys",
                Some(json!({"name": "new", "role": "readonly"})),
            ),
        ),
        (
            "/account/api-keys/{id}",
            Request::json(
                "DELETE",
                format!("/account/api-keys/{}", prepared.key_id),
                None,
            ),
        ),
        (
            "/account/team",
            Request::json(
                "POST",
                "/account/team",
                Some(json!({"email": "dee@example.test", "role": "readonly"})),
            ),
        ),
        (
            "/session",
            Request::json(
                "POST",
                "/session",
                Some(json!({"email": "ada@example.test", "password": "a long password"})),
            )
            .anonymous(),
        ),
        (
            "/invitations/{token}",
            Request::json(
                "POST",
                format!("/invitations/{}", prepared.invitation),
                Some(json!({"password": "another long password"})),
            )
            .anonymous(),
        ),
        (
            "/{import}",
            Request::json("POST", import, Some(json!([{"id": "J", "name": "Json"}]))),
        ),
        (
            "/{import}",
            Request::typed(
                import,
                "application/x-ndjson",
                b"{\"id\": \"N\", \"name\": \"Ndjson\"}\n".to_vec(),
            ),
        ),
        (
            "/{import}",
            Request::typed(import, "text/csv", b"id,name\nV,Csv\n".to_vec()),
        ),
        (
            "/{import}",
            Request::typed(
                import,
                "application/vnd.apache.arrow.stream",
                arrow_customers(),
            ),
        ),
        (
            "/webhooks",
            Request::json(
                "POST",
                "/webhooks",
                Some(json!({"url": "http://127.0.0.1:9/two", "events": ["customer.new"]})),
            ),
        ),
        (
            "/webhooks/{id}",
            Request::json(
                "PUT",
                format!("/webhooks/{}", prepared.webhook),
                Some(json!({"description": "renamed"})),
            ),
        ),
        (
            "/webhooks/{id}",
            Request::json("DELETE", format!("/webhooks/{}", prepared.webhook), None),
        ),
        (
            "/settings/payment-platform",
            Request::json("DELETE", "/settings/payment-platform", None),
        ),
        (
            "/settings/stripe",
            Request::json("DELETE", "/settings/stripe", None),
        ),
        // The session's logout, before its user is disabled.
        (
            "/session",
            Request::json("DELETE", "/session", None).by_session(&prepared.session),
        ),
        (
            "/account/team/{id}",
            Request::json(
                "DELETE",
                format!("/account/team/{}", prepared.invitation_id),
                None,
            ),
        ),
        (
            "/account/team/{id}",
            Request::json(
                "DELETE",
                format!("/account/team/{}", prepared.user_id),
                None,
            ),
        ),
    ]
}

/// Every GET operation of the description with its path filled in from
/// `prepared`, but `/health` (its answer is the fault) and `/docs` (HTML).
pub fn documented_reads(server: &Server, prepared: &Prepared) -> Vec<String> {
    let (_, document) = server.call("GET", "/openapi.json", None, None);
    let mut reads = Vec::new();
    for (path, operations) in document["paths"].as_object().expect("paths") {
        // Reads that answer something: not `GET /data/plans/`, which is
        // always a missing id.
        let answers = operations["get"]["responses"].get("200").is_some();
        if !answers || ["/health", "/docs"].contains(&path.as_str()) {
            continue;
        }
        let filled = path
            .replace("/data/plans/{id}", "/data/plans/m")
            .replace("/data/customers/{id}", "/data/customers/A")
            .replace(
                "/data/plan-groups/{id}",
                &format!("/data/plan-groups/{}", prepared.group),
            )
            .replace("/data/invoices/{id}", "/data/invoices/a1")
            .replace("/data/data-sources/{id}", "/data/data-sources/ds1")
            .replace("/customers/{id}", "/customers/A")
            .replace("/reports/{name}", "/reports/mrr")
            .replace(
                "/webhooks/events/{name}",
                "/webhooks/events/customer.churned",
            )
            .replace("/webhooks/{id}", &format!("/webhooks/{}", prepared.webhook))
            .replace(
                "/invitations/{token}",
                &format!("/invitations/{}", prepared.invitation),
            );
        assert!(!filled.contains('{'), "no value for the path {path}");
        reads.push(filled);
    }
    reads
}

/// Every documented read's status and body once they hold still: the
/// server derives the events of the writes before (and queues their
/// deliveries) once the writes pause, so the reads of events and
/// deliveries change for a moment after the last write.
pub fn settled_reads(server: &Server, reads: &[String]) -> Vec<(String, u16, Value)> {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    let mut last = read_all(server, reads);
    loop {
        std::thread::sleep(std::time::Duration::from_millis(500));
        let now = read_all(server, reads);
        if now == last {
            return now;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the reads still change 20 s after the last write"
        );
        last = now;
    }
}

/// Every documented read's status and body.
pub fn read_all(server: &Server, reads: &[String]) -> Vec<(String, u16, Value)> {
    reads
        .iter()
        .map(|path| {
            let (status, body) = Request::json("GET", path.clone(), None).send(server);
            (path.clone(), status, body)
        })
        .collect()
}

/// Each write answers `503` `storage_unavailable` and every documented
/// read answers as before, within a second each.
pub fn assert_all_refused(
    server: &Server,
    writes: &[(&str, Request)],
    reads: &[String],
    before: &[(String, u16, Value)],
    fault: &str,
) {
    for (_, request) in writes {
        let (status, answer) = request.send(server);
        assert_eq!(
            status, 503,
            "{fault}: {} {}: {answer}",
            request.method, request.path
        );
        assert_eq!(
            answer["code"], "storage_unavailable",
            "{fault}: {} {}: {answer}",
            request.method, request.path
        );
    }
    for ((path, status, body), (_, was_status, was)) in read_all(server, reads).iter().zip(before) {
        assert_eq!(*status, 200, "{fault}: GET {path}: {body}");
        assert_eq!(
            (status, body),
            (was_status, was),
            "{fault}: GET {path} changed"
        );
    }
}

/// Empties the database's write-ahead log once the server's own writes
/// after the requests (the events of their customers, scanned once writes
/// pause) are done: the log must stay empty for a while longer than the
/// scanner waits for writes to pause.
pub fn empty_write_ahead_log(dir: &std::path::Path) {
    use std::time::{Duration, Instant};
    let deadline = Instant::now() + Duration::from_secs(20);
    let log = rusqlite::Connection::open(dir.join("submetrics.db")).expect("open");
    let mut empty_since: Option<Instant> = None;
    loop {
        let (busy, _, _): (i64, i64, i64) = log
            .query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |row| {
                Ok((row.get(0)?, row.get(1)?, row.get(2)?))
            })
            .expect("checkpoint");
        let wal = std::fs::metadata(dir.join("submetrics.db-wal")).map_or(0, |m| m.len());
        if busy == 0 && wal == 0 {
            let since = *empty_since.get_or_insert_with(Instant::now);
            if since.elapsed() >= Duration::from_millis(500) {
                return;
            }
        } else {
            empty_since = None;
        }
        assert!(
            Instant::now() < deadline,
            "the log still holds {wal} bytes (busy: {busy})"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Sends every write again once the fault is gone: each succeeds.
pub fn assert_all_taken(server: &Server, writes: &[(&str, Request)], fault: &str) {
    for (_, request) in writes {
        let (status, answer) = request.send(server);
        assert!(
            (200..300).contains(&status),
            "{fault}, after: {} {}: {status} {answer}",
            request.method,
            request.path
        );
    }
}
