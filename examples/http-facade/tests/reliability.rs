//! Faults of the storage and hostile clients: the service keeps answering,
//! every answer is a JSON error with an honest status, and nothing is lost.

mod common;

use common::{OWNER_KEY, Server, offline};
use serde_json::{Value, json};

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
    assert_eq!(status, 500, "{body}");
    assert_eq!(body["code"], "internal");
    // A record write whose commit fails leaves nothing behind in memory.
    let (status, body) = server.raw_tcp(
        "POST",
        "/data/plans",
        br#"{"id": "m", "name": "Monthly", "interval": "month", "currency": "USD"}"#.to_vec(),
    );
    assert_eq!(status, 500, "{body}");
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
    for id in ["18446744073709551616", "18446744073709551617", "1e2"] {
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
    assert_eq!(server.get("/data/customers").1["result"]["count"], 1);
    assert_eq!(server.get("/data/customers/42").0, 200);
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
        let (status, _) = server.post(
            "/data/fx-rates",
            json!([{"date": "2024-01-01", "currency": "EUR", "rate": rate},
                   {"date": "2024-01-01T00:00:00Z", "currency": "eur", "rate": rate}]),
        );
        assert_eq!(status, 200);
    }
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
