//! Faults of the storage and hostile clients: the service keeps answering,
//! every answer is a JSON error with an honest status, and nothing is lost.

mod common;

use common::{Immutable, OWNER_KEY, Server, data_dir, offline, seed};
use serde_json::{Value, json};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

/// A failure of the service's own: its body names an error id (the log
/// line with the cause carries the same id), never the driver's text.
fn assert_json_failure(body: &Value, code: &str) {
    assert_eq!(body["code"], code, "{body}");
    let id = body["error_id"].as_str().expect("an error id");
    assert!(id.starts_with("err_") && id.len() == 20, "{body}");
    let text = body["error"].as_str().expect("a message");
    assert!(text.contains(id), "{body}");
    assert!(
        !text.contains("locked") && !text.contains("SQLITE"),
        "{body}"
    );
}

/// Sends `request` as it is over a new connection and reads the answer
/// until the server closes it (or 30 seconds pass); its head and JSON body.
fn exchange(server: &Server, request: &[u8]) -> (String, Value) {
    let mut stream = connect(server);
    stream.write_all(request).expect("send");
    let mut answer = Vec::new();
    let _ = stream.read_to_end(&mut answer);
    let text = String::from_utf8_lossy(&answer).to_string();
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    (
        head.to_string(),
        serde_json::from_str(body).unwrap_or(Value::Null),
    )
}

fn connect(server: &Server) -> TcpStream {
    let stream = TcpStream::connect(server.base.trim_start_matches("http://")).expect("connect");
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .expect("read timeout");
    stream
}

/// Whether the server closes `stream` (an end of stream or a reset)
/// within 30 seconds, sending nothing but perhaps an answer first.
fn closed_by_server(stream: &mut TcpStream) -> bool {
    let mut buffer = [0u8; 1024];
    loop {
        match stream.read(&mut buffer) {
            Ok(0) => return true,
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => return true,
            Err(_) => return false,
        }
    }
}

/// Holds the database's write lock from another connection, as another
/// process writing to the file would: the service's writes then fail once
/// its busy timeout runs out.
fn lock_database(server: &Server) -> rusqlite::Connection {
    let connection =
        rusqlite::Connection::open(server.dir.join("submetrics.db")).expect("open the database");
    connection
        .execute_batch("BEGIN IMMEDIATE")
        .expect("take the write lock");
    connection
}

#[test]
fn a_failed_fx_rate_write_answers_and_the_service_keeps_answering() {
    let server = Server::start();
    let lock = lock_database(&server);
    // Over a plain connection with a read timeout: a hang fails the test.
    let (status, body) = server.raw_tcp(
        "POST",
        "/data/fx-rates",
        br#"[{"date": "2024-01-01", "currency": "EUR", "rate": 0.9}]"#.to_vec(),
    );
    assert_eq!(status, 503, "{body}");
    assert_json_failure(&body, "storage_unavailable");
    // A record write whose commit fails leaves nothing behind in memory.
    let (status, body) = server.raw_tcp(
        "POST",
        "/data/plans",
        br#"{"id": "m", "name": "Monthly", "interval": "month", "currency": "USD"}"#.to_vec(),
    );
    assert_eq!(status, 503, "{body}");
    assert_json_failure(&body, "storage_unavailable");
    drop(lock);
    assert_eq!(server.get("/data/plans/m").0, 404);
    assert_eq!(server.get("/data/fx-rates").1["result"]["count"], 0);
    let (status, _) = server.post(
        "/data/fx-rates",
        json!([{"date": "2024-01-01", "currency": "EUR", "rate": 0.9}]),
    );
    assert_eq!(status, 200);
    assert_eq!(server.get("/data/fx-rates").1["result"]["count"], 1);
    let (status, _) = server.call("GET", "/data/plans", Some(OWNER_KEY), None);
    assert_eq!(status, 200);
}

#[test]
fn numbers_that_do_not_keep_their_digits_are_refused_as_ids_and_dates() {
    let server = Server::start();
    // Both read as the same float; neither may become a customer.
    for id in ["18446744073709551616", "18446744073709551617", "1.5"] {
        let body = format!(r#"{{"id": {id}, "name": "Acme"}}"#).into_bytes();
        let (status, answer) = server.raw("POST", "/data/customers", Some(OWNER_KEY), Some(body));
        assert_eq!(status, 400, "{id}: {answer}");
        assert_eq!(answer["field"], "id", "{id}: {answer}");
    }
    let (status, answer) = server.raw(
        "POST",
        "/data/customers",
        Some(OWNER_KEY),
        Some(br#"{"id": 42, "name": "Acme"}"#.to_vec()),
    );
    assert_eq!(status, 201, "{answer}");
    // A whole number however written is its decimal text, never `100.0`.
    let (status, answer) = server.raw(
        "POST",
        "/data/customers",
        Some(OWNER_KEY),
        Some(br#"{"id": 1e2, "name": "Hundred"}"#.to_vec()),
    );
    assert_eq!(status, 201, "{answer}");
    assert_eq!(answer["result"]["list"][0]["id"], "100");
    assert_eq!(server.get("/data/customers").1["result"]["count"], 2);
    assert_eq!(server.get("/data/customers/42").0, 200);
    assert_eq!(server.get("/data/customers/100").0, 200);
    let (status, answer) = server.post(
        "/data/invoices",
        json!([
            {"id": "seconds", "customer_id": 42, "type": "one-time", "invoice_date": 1,
             "amount": 100, "currency": "USD"},
            {"id": "zero", "customer_id": 42, "type": "one-time", "invoice_date": "0000-01-01",
             "amount": 100, "currency": "USD"},
            {"id": "negative", "customer_id": 42, "type": "one-time", "invoice_date": "-0001-01-01",
             "amount": 100, "currency": "USD"}
        ]),
    );
    assert_eq!(status, 200);
    let results = answer["result"].as_array().expect("results");
    for (result, id) in results.iter().zip(["seconds", "zero", "negative"]) {
        assert_eq!(result["id"], id);
        assert_eq!(result["import_status"], "error", "{result}");
        assert!(
            result["import_error"]
                .as_str()
                .is_some_and(|e| e.contains("field `invoice_date`: must be an ISO 8601 date or timestamp string in the years 1900 to 2200")),
            "{result}"
        );
    }
    assert_eq!(server.get("/data/invoices").1["result"]["count"], 0);
    let (status, answer) = server.post(
        "/data/fx-rates",
        json!([{"date": 20240101, "currency": "EUR", "rate": 0.9}]),
    );
    assert_eq!(status, 400);
    assert_eq!(answer["field"], "date", "{answer}");
}

#[test]
fn fx_rates_are_stored_once_per_date_and_currency() {
    let server = Server::start();
    for rate in [0.9, 0.8] {
        for row in [
            json!({"date": "2024-01-01", "currency": "EUR", "rate": rate}),
            json!({"date": "2024-01-01T00:00:00Z", "currency": "eur", "rate": rate}),
        ] {
            assert_eq!(server.post("/data/fx-rates", json!([row])).0, 200);
        }
    }
    // Both in one batch name one day's rate twice.
    let (status, answer) = server.post(
        "/data/fx-rates",
        json!([{"date": "2024-01-01", "currency": "EUR", "rate": 0.5},
               {"date": "2024-01-01T00:00:00Z", "currency": "eur", "rate": 0.6}]),
    );
    assert_eq!(
        (status, answer["error"].as_str()),
        (
            400,
            Some(
                "fx_rate row 2: field `date`: row 1 gives the rate of EUR on 2024-01-01 already; give each day's rate once"
            )
        )
    );
    let list = |server: &Server| {
        let (_, answer) = server.get("/data/fx-rates");
        assert_eq!(answer["result"]["count"], 1, "{answer}");
        answer["result"]["list"][0]["rate"].clone()
    };
    assert_eq!(list(&server), json!(0.8));
    let dir = server.kill();
    // As a database written before rows were keyed: every row kept, unkeyed.
    {
        let db = rusqlite::Connection::open(dir.join("submetrics.db")).expect("database");
        db.execute_batch(
            "DROP INDEX fx_rates_key;
             UPDATE fx_rates SET date = NULL, currency = NULL;
             INSERT INTO fx_rates (account_id, body) VALUES
                 (1, '{\"date\": \"2024-01-01\", \"currency\": \"EUR\", \"rate\": 0.7}');",
        )
        .expect("unkey the rows");
    }
    let server = Server::start_in(dir);
    assert_eq!(list(&server), json!(0.7));
}

/// Every documented endpoint as (method, path with `x` for each path
/// parameter, access), read from the service's own description.
fn endpoints(server: &Server) -> Vec<(String, String, String)> {
    let (_, document) = server.get("/openapi.json");
    let mut endpoints = Vec::new();
    for (path, operations) in document["paths"].as_object().expect("paths") {
        for (method, operation) in operations.as_object().expect("operations") {
            let access = if operation["security"] == json!([]) {
                "public"
            } else if operation["description"]
                .as_str()
                .is_some_and(|d| d.contains("admin key"))
            {
                "admin"
            } else {
                "key"
            };
            let concrete: Vec<String> = path
                .split('/')
                .map(|segment| {
                    if segment.starts_with('{') {
                        "x".to_string()
                    } else {
                        segment.to_string()
                    }
                })
                .collect();
            endpoints.push((
                method.to_uppercase(),
                concrete.join("/"),
                access.to_string(),
            ));
        }
    }
    endpoints
}

#[test]
fn who_calls_is_checked_before_anything_else_on_every_route() {
    let server = Server::start();
    let (status, answer) = server.post(
        "/account/api-keys",
        json!({"name": "reader", "role": "readonly"}),
    );
    assert_eq!(status, 201, "{answer}");
    let readonly = answer["key"].as_str().expect("key").to_string();
    let endpoints = endpoints(&server);
    assert!(endpoints.len() > 40, "{endpoints:?}");
    // A query and a body no endpoint accepts: only who calls decides.
    let junk = b"{not json".to_vec();
    for (method, path, access) in &endpoints {
        if access == "public" {
            continue;
        }
        let target = format!("{path}?limit=minus-one&as_of=never&date=soon");
        let (status, answer) = server.raw(method, &target, None, Some(junk.clone()));
        assert_eq!(status, 401, "{method} {path} without a key: {answer}");
        assert_eq!(answer["code"], "unauthorized", "{method} {path}");
        let (status, answer) = server.raw(method, &target, Some("wrong-key"), Some(junk.clone()));
        assert_eq!(status, 401, "{method} {path} with an unknown key: {answer}");
        let (status, answer) = server.raw(method, &target, Some(&readonly), Some(junk.clone()));
        if method != "GET" || access == "admin" {
            assert_eq!(status, 403, "{method} {path} with a readonly key: {answer}");
            assert_eq!(answer["code"], "forbidden", "{method} {path}");
        } else {
            assert!(
                status != 401 && status != 403,
                "{method} {path} with a readonly key: {status} {answer}"
            );
        }
    }
    // The owner gets past the check to the request's own errors.
    let (status, answer) = server.raw("PUT", "/data/plans", Some(OWNER_KEY), Some(junk));
    assert_eq!(
        (status, answer),
        (
            400,
            json!({"error": "Missing external_id", "code": "bad_request"})
        )
    );
}

#[test]
fn an_account_created_while_the_service_runs_works_at_once() {
    let server = Server::start();
    let printed = offline(&server.dir, &["accounts", "create", "second"]);
    let key = printed
        .split("owner key (shown once): ")
        .nth(1)
        .expect("the new owner key")
        .trim()
        .to_string();
    let (status, answer) = server.call("GET", "/data/plans", Some(&key), None);
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["result"]["count"], 0);
    let (status, answer) = server.call(
        "POST",
        "/data/plans",
        Some(&key),
        Some(&json!({"id": "m", "name": "Monthly", "interval": "month", "currency": "USD"})),
    );
    assert_eq!(status, 200, "{answer}");
    assert_eq!(server.call("GET", "/data/plans/m", Some(&key), None).0, 200);
    // The first account does not see it.
    assert_eq!(server.get("/data/plans/m").0, 404);
    let account: Value = server.call("GET", "/account", Some(&key), None).1;
    assert_eq!(account["name"], "second");
}

#[test]
fn answers_the_http_layer_gives_by_itself_are_json() {
    let server = Server::start();
    let long = format!("GET /{} HTTP/1.1\r\nHost: x\r\n\r\n", "a".repeat(70_000));
    let (head, body) = exchange(&server, long.as_bytes());
    assert!(head.starts_with("HTTP/1.1 414 "), "{head}");
    assert!(head.contains("content-type: application/json"), "{head}");
    assert_eq!(body["code"], "uri_too_long", "{body}");
    // A head past the limit that never ends: the HTTP layer checks the
    // limit only while it waits for the end of a head, so a whole head read
    // in one go (a loaded machine lets the client's bytes pile up) would
    // be parsed and answered, however long.
    let big = format!(
        "GET /health HTTP/1.1\r\nHost: x\r\nX-Big: {}",
        "a".repeat(500_000)
    );
    let (head, body) = exchange(&server, big.as_bytes());
    assert!(head.starts_with("HTTP/1.1 431 "), "{head}");
    assert_eq!(body["code"], "headers_too_large", "{body}");
    let many: String = (0..150).map(|i| format!("X-{i}: 1\r\n")).collect();
    let (head, body) = exchange(
        &server,
        format!("GET /health HTTP/1.1\r\nHost: x\r\n{many}\r\n").as_bytes(),
    );
    assert!(head.starts_with("HTTP/1.1 431 "), "{head}");
    assert_eq!(body["code"], "headers_too_large", "{body}");
    let (head, body) = exchange(&server, b"NOT HTTP AT ALL\r\n\r\n");
    assert!(head.starts_with("HTTP/1.1 400 "), "{head}");
    assert_eq!(body["code"], "bad_request", "{body}");
    // The service goes on answering.
    assert_eq!(server.get("/data/plans").0, 200);
}

#[test]
fn over_the_connection_cap_the_answer_is_503_and_idle_and_slow_clients_are_closed() {
    let (server, _) = Server::start_with_args(
        data_dir(),
        Some(OWNER_KEY),
        &["--max-connections", "20", "--header-timeout", "2"],
    );
    // One client that sends its head a byte at a time, and far more idle
    // connections than the cap.
    let mut slow = connect(&server);
    let mut idle: Vec<TcpStream> = (0..300).map(|_| connect(&server)).collect();
    let (head, body) = exchange(&server, b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n");
    assert!(head.starts_with("HTTP/1.1 503 "), "{head}");
    assert!(head.contains("retry-after: 1"), "{head}");
    assert_eq!(body["code"], "unavailable", "{body}");
    let trickle = std::thread::spawn(move || {
        for byte in b"GET /health HTTP/1.1\r\nHost: x\r\n"
            .iter()
            .cycle()
            .take(200)
        {
            if slow.write_all(&[*byte]).is_err() {
                break;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        closed_by_server(&mut slow)
    });
    // Every idle connection is closed: the first ones by the head deadline,
    // the rest at once, answered 503 or dropped.
    for (n, stream) in idle.iter_mut().enumerate() {
        assert!(closed_by_server(stream), "idle connection {n} left open");
    }
    assert!(
        trickle.join().expect("trickle"),
        "the slow client was left open"
    );
    // Once they are gone, a normal client is served again.
    let (head, body) = exchange(
        &server,
        b"GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
    );
    assert!(head.starts_with("HTTP/1.1 200 "), "{head}");
    assert_eq!(body, json!({"status": "ok"}));
    assert_eq!(server.get("/data/plans").0, 200);
}

#[test]
fn sigterm_lets_a_request_under_way_finish_then_closes_the_database() {
    let server = Server::start();
    let plan = br#"{"id": "m", "name": "Monthly", "interval": "month", "currency": "USD"}"#;
    let mut stream = connect(&server);
    let head = format!(
        "POST /data/plans HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {OWNER_KEY}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n",
        plan.len()
    );
    stream.write_all(head.as_bytes()).expect("head");
    stream.write_all(&plan[..10]).expect("part of the body");
    std::thread::sleep(Duration::from_millis(300));
    server.signal("TERM");
    std::thread::sleep(Duration::from_millis(300));
    stream.write_all(&plan[10..]).expect("the rest of the body");
    let mut answer = String::new();
    let _ = stream.read_to_string(&mut answer);
    assert!(answer.starts_with("HTTP/1.1 200 "), "{answer}");
    let dir = server.dir.clone();
    let status = server.wait();
    assert!(status.success(), "{status:?}");
    // Closed cleanly: the write-ahead log was folded in and removed.
    assert!(!dir.join("submetrics.db-wal").exists());
    let server = Server::start_in(dir);
    assert_eq!(server.get("/data/plans/m").0, 200);
    server.signal("INT");
    assert!(server.wait().success());
}

#[cfg(unix)]
#[test]
fn the_database_files_are_private_to_their_owner() {
    use std::os::unix::fs::PermissionsExt;
    let server = Server::start();
    seed(&server);
    for file in ["submetrics.db", "submetrics.db-wal"] {
        let mode = std::fs::metadata(server.dir.join(file))
            .expect(file)
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600, "{file}");
    }
}

#[test]
fn a_read_only_database_is_reported_by_health_and_refuses_writes_with_503() {
    let server = Server::start();
    seed(&server);
    server.signal("TERM");
    let dir = server.dir.clone();
    assert!(server.wait().success());
    let Some(_immutable) = Immutable::set(dir.join("submetrics.db")) else {
        eprintln!("no immutable files here (chattr): the read-only start is not tested");
        return;
    };
    // `dir` outlives the attribute, which must be gone before it is removed.
    let server = Server::start_in(dir.clone());
    let (status, body) = server.call("GET", "/health", None, None);
    assert_eq!(
        (status, body),
        (
            503,
            json!({"status": "degraded", "storage": "the database is read-only"})
        )
    );
    assert_eq!(server.get("/data/plans").1["result"]["count"], 2);
    let (status, body) = server.post(
        "/data/plans",
        json!({"id": "m3", "name": "Monthly", "interval": "month", "currency": "USD"}),
    );
    assert_eq!(status, 503, "{body}");
    assert_json_failure(&body, "storage_unavailable");
    assert!(
        body["error"]
            .as_str()
            .is_some_and(|e| e.starts_with("the database is read-only; nothing was changed"))
    );
    assert_eq!(server.get("/data/plans/m3").0, 404);
}

#[test]
fn a_stored_record_this_version_cannot_read_stops_the_start_naming_it() {
    let server = Server::start();
    seed(&server);
    let dir = server.kill();
    // As a record written under older rules: a date given as a number.
    {
        let db = rusqlite::Connection::open(dir.join("submetrics.db")).expect("database");
        let changed = db
            .execute(
                "UPDATE record_log SET body = json_set(body, '$.invoice_date', 1)
                 WHERE kind = 'invoices' AND id = 'b1'",
                [],
            )
            .expect("rewrite the record");
        assert_eq!(changed, 1);
    }
    let output = std::process::Command::new(common::binary())
        .args(["--listen", "127.0.0.1:0", "--data-dir"])
        .arg(&dir)
        .env("SUBMETRICS_OWNER_KEY", OWNER_KEY)
        .output()
        .expect("run the server");
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("account 1: stored invoices `b1` can no longer be read: invoice b1: field `invoice_date`"),
        "{stderr}"
    );
    assert!(!String::from_utf8_lossy(&output.stdout).contains("listening"));
}

#[test]
fn a_key_over_its_rate_is_answered_429_and_other_keys_are_not() {
    let (server, _) = Server::start_with_args(data_dir(), Some(OWNER_KEY), &["--rate-limit", "1"]);
    let (status, answer) = server.post(
        "/account/api-keys",
        json!({"name": "reader", "role": "readonly"}),
    );
    assert_eq!(status, 201, "{answer}");
    let reader = answer["key"].as_str().expect("key").to_string();
    // One request a second: ten in a row cannot all pass.
    let request = format!(
        "GET /data/plans HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {OWNER_KEY}\r\nConnection: close\r\n\r\n"
    );
    let refused = (0..10)
        .map(|_| exchange(&server, request.as_bytes()))
        .find(|(head, _)| head.starts_with("HTTP/1.1 429 "))
        .expect("a request over the rate is refused");
    assert!(refused.0.contains("retry-after: 1"), "{}", refused.0);
    assert_eq!(refused.1["code"], "rate_limited", "{}", refused.1);
    // Another key has its own rate; public endpoints have none.
    assert_eq!(
        server.call("GET", "/data/plans", Some(&reader), None).0,
        200
    );
    for _ in 0..5 {
        assert_eq!(server.call("GET", "/health", None, None).0, 200);
    }
}

#[test]
fn a_body_sent_a_byte_a_second_is_answered_408_within_the_body_timeout() {
    let (server, _) =
        Server::start_with_args(data_dir(), Some(OWNER_KEY), &["--body-timeout", "2"]);
    let address = server.base.trim_start_matches("http://").to_string();
    let body = br#"{"id": "slow", "name": "Slow", "currency": "USD"}"#;
    let mut slow = connect(&server);
    slow.write_all(
        format!(
            "POST /data/plans HTTP/1.1\r\nHost: {address}\r\nAuthorization: Bearer {OWNER_KEY}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n",
            body.len()
        )
        .as_bytes(),
    )
    .expect("send the head");
    let started = std::time::Instant::now();
    let mut reader = slow.try_clone().expect("clone");
    let trickle = std::thread::spawn(move || {
        for byte in body.iter() {
            if slow.write_all(&[*byte]).is_err() {
                break;
            }
            std::thread::sleep(Duration::from_secs(1));
        }
    });
    // Meanwhile a normal client is answered at once, again and again.
    for _ in 0..3 {
        let asked = std::time::Instant::now();
        assert_eq!(server.get("/data/plans").0, 200);
        assert!(
            asked.elapsed() < Duration::from_secs(1),
            "{:?}",
            asked.elapsed()
        );
        std::thread::sleep(Duration::from_millis(300));
    }
    let mut answer = Vec::new();
    let _ = reader.read_to_end(&mut answer);
    let waited = started.elapsed();
    let text = String::from_utf8_lossy(&answer).to_string();
    let (head, json) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    assert!(head.starts_with("HTTP/1.1 408 "), "{head}");
    let json: Value = serde_json::from_str(json).expect("a JSON body");
    assert_eq!(json["code"], "request_timeout", "{json}");
    // Answered at the deadline (2 s), long before the body's 50 s are up,
    // and the connection is closed then too.
    assert!(waited < Duration::from_secs(10), "{waited:?}");
    drop(trickle);
    assert_eq!(server.get("/data/plans/slow").0, 404);
}

/// The soft limit of open files of this process (`/proc/self/limits`).
fn open_file_limit() -> u64 {
    std::fs::read_to_string("/proc/self/limits")
        .ok()
        .and_then(|limits| {
            let line = limits.lines().find(|l| l.starts_with("Max open files"))?;
            line.split_whitespace().nth(3)?.parse().ok()
        })
        .unwrap_or(0)
}

#[test]
fn two_thousand_idle_and_slow_header_connections_leave_a_normal_client_served() {
    const HELD: usize = 2_000;
    if open_file_limit() < 2 * HELD as u64 + 500 {
        eprintln!("open-file limit under {} here: not tested", 2 * HELD + 500);
        return;
    }
    let (server, _) = Server::start_with_args(
        data_dir(),
        Some(OWNER_KEY),
        &["--max-connections", "2100", "--header-timeout", "4"],
    );
    // Half idle, half with a head begun and never finished.
    let mut held: Vec<TcpStream> = (0..HELD).map(|_| connect(&server)).collect();
    for stream in held.iter_mut().skip(HELD / 2) {
        stream
            .write_all(b"GET /health HTTP/1.1\r\nHost: x\r\n")
            .expect("a partial head");
    }
    for _ in 0..5 {
        let asked = std::time::Instant::now();
        assert_eq!(server.get("/data/plans").0, 200);
        let (status, body) = server.call("GET", "/health", None, None);
        assert_eq!((status, body), (200, json!({"status": "ok"})));
        assert!(
            asked.elapsed() < Duration::from_secs(1),
            "answered in {:?} with {HELD} connections held",
            asked.elapsed()
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    // The header deadline closes every one of them.
    for (n, stream) in held.iter_mut().enumerate() {
        assert!(closed_by_server(stream), "held connection {n} left open");
    }
    assert_eq!(server.get("/data/plans").0, 200);
}
