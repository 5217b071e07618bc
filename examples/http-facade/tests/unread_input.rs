//! Input the service does not read is refused, not ignored: query
//! parameters an endpoint does not take, body fields of settings and
//! account requests, and fields of a record update that the record does
//! not have, and bodies in a format the endpoint does not read. Nothing is
//! written when a request is refused.

mod common;

use common::{OWNER_KEY, Server, seed};
use serde_json::{Value, json};

#[test]
fn unknown_and_repeated_query_parameters_are_refused() {
    let server = Server::start();
    seed(&server);
    let refused = |path: &str, error: &str| {
        let (status, body) = server.get(path);
        assert_eq!(
            (status, body["error"].as_str()),
            (400, Some(error)),
            "{path}: {body}"
        );
    };
    refused(
        "/data/customers?limt=5",
        "query parameter `limt`: this endpoint has no such parameter; its parameters: limit, offset",
    );
    refused(
        "/data/invoices?customer=A&sort=date",
        "query parameter `sort`: this endpoint has no such parameter; its parameters: customer, limit, offset",
    );
    refused(
        "/data/plans?source=s&page=2",
        "query parameter `page`: this endpoint has no such parameter; its parameters: source, limit, offset",
    );
    refused(
        "/account/api-keys?all=1",
        "query parameter `all`: this endpoint takes no query parameters",
    );
    refused(
        "/data/customers/A?expand=plans",
        "query parameter `expand`: this endpoint takes no query parameters",
    );
    refused(
        "/v1/health?verbose=1",
        "query parameter `verbose`: this endpoint takes no query parameters",
    );
    refused(
        "/movements?kind=new",
        "parameter `kind`: report `movements` has no such parameter; did you mean `kinds`? \
         Its parameters: customer, from, to, start, end, kinds",
    );
    // A write with a parameter it does not read stores nothing: a caller
    // asking for a dry run must not get a real one.
    let (status, body) = server.post(
        "/data/customers?dry_run=true",
        json!([{"external_id": "DRY", "name": "Dry"}]),
    );
    assert_eq!(
        (status, body["error"].as_str()),
        (
            400,
            Some(
                "query parameter `dry_run`: this endpoint has no such parameter; its parameters: format"
            )
        ),
        "{body}"
    );
    assert_eq!(server.get("/data/customers/DRY").0, 404);
    refused(
        "/reports/mrr?date=20240101-20240301&date=20240101-20240401",
        "query parameter `date` is given more than once; give it once",
    );
    refused(
        "/data/customers?limit=5&li%6Dit=6",
        "query parameter `limit` is given more than once; give it once",
    );
    assert_eq!(
        server.get("/data/invoices?customer=A&limit=1&&offset=0").0,
        200
    );
    // A parameter given empty is refused too, not read as absent.
    refused(
        "/data/plans?source=&limit=1",
        "query parameter `source`: is empty; give a value, or leave the parameter out for its default",
    );
}

/// An update changes the fields it names, by name or alias, and refuses a
/// name that is no field instead of answering success for nothing.
#[test]
fn an_update_names_only_fields_of_its_record() {
    let server = Server::start();
    seed(&server);
    let (status, answer) = server.put("/data/customers/A", json!({"nmae": "Acme Two"}));
    assert_eq!(
        (status, &answer["code"], &answer["field"]),
        (400, &json!("invalid_record"), &json!("nmae")),
        "{answer}"
    );
    assert_eq!(server.get("/data/customers/A").1["name"], "Acme");
    let (status, answer) = server.put(
        "/data/customers/A",
        json!({"created": "2023-06-01", "metadata": {"industry": "retail"}}),
    );
    assert_eq!(status, 200, "{answer}");
    let (created, variables) = (
        &answer["result"]["created_date"],
        &answer["result"]["custom_variables"],
    );
    assert_eq!(
        (created, variables),
        (&json!("2023-06-01"), &json!({"industry": "retail"}))
    );
    let (status, answer) = server.put("/data/plans/m", json!({"price": 100}));
    assert_eq!(
        (status, &answer["field"]),
        (400, &json!("price")),
        "{answer}"
    );
}

/// A body field an endpoint does not read is refused with the fields it
/// does, and nothing is written: a key asked for with `roles: admin` is not
/// created as a readonly key.
#[test]
fn a_body_field_the_endpoint_does_not_read_is_refused() {
    let server = Server::start();
    let keys_before = server.get("/account/api-keys").1["result"]["count"].clone();
    let members_before = server.get("/account/team").1["result"]["count"].clone();
    assert!(keys_before.is_u64() && members_before.is_u64());
    let refused = |method: &str, path: &str, key: Option<&str>, body: Value, error: &str| {
        let (status, answer) = server.call(method, path, key, Some(&body));
        assert_eq!(
            (status, answer["error"].as_str()),
            (400, Some(error)),
            "{method} {path}: {answer}"
        );
    };
    refused(
        "POST",
        "/account/api-keys",
        Some(OWNER_KEY),
        json!({"name": "ci", "roles": "admin"}),
        "unknown field `roles`; an API key has name and role",
    );
    refused(
        "POST",
        "/account/team",
        Some(OWNER_KEY),
        json!({"email": "ann@example.com", "rol": "admin"}),
        "unknown field `rol`; an invitation has email, role and name",
    );
    refused(
        "PUT",
        "/settings/payment-platform",
        Some(OWNER_KEY),
        json!({"secret_key": "sk_test_1", "webhook_secrett": "whsec_1"}),
        "unknown field `webhook_secrett`; a connection has secret_key, api_key, webhook_secret and uncollectible",
    );
    refused(
        "POST",
        "/session",
        None,
        json!({"email": "ann@example.com", "password": "0123456789", "remember": true}),
        "unknown field `remember`; a login has email and password",
    );
    refused(
        "POST",
        "/account/api-keys",
        Some(OWNER_KEY),
        json!(["name"]),
        "the body must be an object with name and role",
    );
    assert_eq!(
        server.get("/account/api-keys").1["result"]["count"],
        keys_before
    );
    assert_eq!(
        server.get("/account/team").1["result"]["count"],
        members_before
    );
    assert_eq!(
        server.get("/settings/payment-platform").1["connected"],
        json!(false)
    );
}

#[test]
fn a_body_in_a_format_the_endpoint_does_not_read_is_415() {
    let server = Server::start();
    let send = |method: &str, path: &str, content_type: &str, body: &str| {
        let (status, _, answer) = server.send(
            method,
            path,
            &[("Content-Type", content_type)],
            body.as_bytes().to_vec(),
        );
        let answer: Value = serde_json::from_slice(&answer).unwrap_or(Value::Null);
        (status, answer)
    };
    let refused = |method: &str, path: &str, content_type: &str, body: &str, error: &str| {
        let (status, answer) = send(method, path, content_type, body);
        assert_eq!(
            (
                status,
                answer["error"].as_str(),
                answer["code"].as_str(),
                answer["field"].as_str()
            ),
            (
                415,
                Some(error),
                Some("unsupported_media_type"),
                Some("Content-Type")
            ),
            "{method} {path} as {content_type}: {answer}"
        );
    };
    // A CSV body used to be "not valid JSON"; NDJSON of one line was read
    // as JSON by chance.
    refused(
        "PUT",
        "/data/customers/z",
        "text/csv",
        "id,name\nz,Z\n",
        "Content-Type `text/csv`: this endpoint reads JSON (application/json); records as \
         NDJSON, CSV or an Arrow stream are read by POST /v1/data/customers, /v1/data/plans, \
         /v1/data/invoices and /v1/data-sources/{id}/{collection}",
    );
    refused(
        "PUT",
        "/data/plans/m",
        "application/xml",
        "<plan/>",
        "Content-Type `application/xml`: this endpoint reads JSON (application/json)",
    );
    refused(
        "POST",
        "/data/invoices",
        "application/xml",
        "<invoice/>",
        "Content-Type `application/xml` is not read here; send application/json, \
         application/x-ndjson, text/csv or application/vnd.apache.arrow.stream",
    );
    refused(
        "POST",
        "/data/customers",
        "application/json; charset=latin1",
        r#"[{"id": "z", "name": "Z"}]"#,
        "the body's charset latin1 is not read; send UTF-8",
    );
    refused(
        "POST",
        "/data-sources/ds/customers",
        "application/xml",
        "<customer/>",
        "Content-Type `application/xml` is not read here; send application/json, \
         application/x-ndjson, text/csv or application/vnd.apache.arrow.stream",
    );
    assert_eq!(server.get("/data/customers").1["result"]["count"], 0);
    // JSON under the types tools send it as by default, or a JSON type of
    // its own, is read.
    let customer = r#"{"id": "z", "name": "Z"}"#;
    for content_type in ["application/x-www-form-urlencoded", "text/plain"] {
        assert_eq!(
            send("POST", "/data/customers", content_type, customer).0,
            201
        );
    }
    let (status, answer) = send(
        "PUT",
        "/data/customers/z",
        "application/merge-patch+json",
        r#"{"name": "Zed"}"#,
    );
    assert_eq!((status, &answer["result"]["name"]), (200, &json!("Zed")));
}

/// An endpoint that reads no body refuses one before it does anything,
/// rather than acting as if the body's options were taken: a delete sent
/// `{"cascade": false}` deletes nothing, a redelivery sent another `url`
/// queues nothing. No body, or an empty one, is what they take.
#[test]
fn a_body_sent_to_an_endpoint_that_reads_none_is_refused() {
    let server = Server::start();
    seed(&server);
    let refusal = json!({
        "error": "this endpoint reads no body; send the request without one",
        "code": "bad_request"
    });
    for (method, path, body) in [
        ("DELETE", "/data/customers/A", json!({"cascade": false})),
        (
            "POST",
            "/v1/webhooks/wh_1/deliveries/1/redeliver",
            json!({"url": "http://evil/"}),
        ),
        ("POST", "/customers/A/resync", json!({"force": true})),
        ("DELETE", "/v1/data/plans/m", json!(null)),
        ("GET", "/data/customers/A", json!({})),
    ] {
        let answer = server.call(method, path, Some(OWNER_KEY), Some(&body));
        assert_eq!(answer, (400, refusal.clone()), "{method} {path}");
    }
    // A chunked body is refused once a byte of it arrives.
    let chunked = server.raw_tcp_framed(
        "DELETE",
        "/data/customers/A",
        "Transfer-Encoding: chunked",
        b"2\r\n{}\r\n0\r\n\r\n".to_vec(),
    );
    assert_eq!(chunked, (400, refusal.clone()));
    assert_eq!(server.get("/data/customers/A").0, 200);
    assert_eq!(server.get("/data/plans/m").0, 200);
    // The key is checked first, as for a query parameter.
    assert_eq!(
        server
            .call("DELETE", "/data/customers/A", None, Some(&json!({})))
            .0,
        401
    );
    // A path that is always refused for its missing id still says so.
    let (status, answer) = server.put("/data/plans", json!({"name": "x"}));
    assert_eq!(
        (status, answer),
        (
            400,
            json!({"error": "Missing external_id", "code": "bad_request"})
        )
    );
    let (status, answer) = server.call("POST", "/customers/A/resync", Some(OWNER_KEY), None);
    assert_eq!(status, 200, "{answer}");
    let empty_chunked = server.raw_tcp_framed(
        "DELETE",
        "/data/plans/m2",
        "Transfer-Encoding: chunked",
        b"0\r\n\r\n".to_vec(),
    );
    assert_eq!(empty_chunked.0, 409, "{empty_chunked:?}");
    assert_eq!(
        server.raw_tcp("DELETE", "/data/customers/A", Vec::new()).0,
        200
    );
    assert_eq!(server.get("/data/customers/A").0, 404);
}

/// An account patch refuses by name a field the account shows but only the
/// service sets, as it refuses one the account does not have, and changes
/// nothing, the fields it could write included.
#[test]
fn an_account_patch_refuses_the_fields_it_cannot_write() {
    let server = Server::start();
    let (status, before) = server.get("/account");
    assert_eq!(status, 200, "{before}");
    let writable = "writable: name, base_currency, timezone, first_day_of_week, \
                    churn_grace_days, refund_handling";
    for (body, field, why) in [
        (json!({"created": "x"}), "created", "is read-only"),
        (json!({"id": "2"}), "id", "is read-only"),
        (json!({"data_sources": []}), "data_sources", "is read-only"),
        (
            json!({"name": "Renamed", "timezone": "Europe/Berlin", "id": before["id"]}),
            "id",
            "is read-only",
        ),
        (json!({"bogus": 1}), "bogus", "cannot be changed"),
    ] {
        let error = format!("account field `{field}` {why}; {writable}");
        assert_eq!(
            server.put("/account", body.clone()),
            (
                400,
                json!({"error": error, "code": "bad_request", "field": field})
            ),
            "{body}"
        );
    }
    assert_eq!(server.get("/account").1, before);
}

/// The index refuses a query parameter under each of its paths, `/v1/`
/// included, which is routed apart from the nested `/v1`.
#[test]
fn the_index_refuses_a_query_parameter_under_each_of_its_paths() {
    let server = Server::start();
    let refusal = json!({
        "error": "query parameter `zzz`: this endpoint takes no query parameters",
        "code": "bad_request",
        "field": "zzz"
    });
    for path in ["/", "/v1", "/v1/"] {
        assert_eq!(
            server.get(&format!("{path}?zzz=1")),
            (400, refusal.clone()),
            "{path}"
        );
        let (status, index) = server.get(path);
        assert_eq!((status, &index["name"]), (200, &json!("submetrics")));
    }
    // Its other checks apply there too.
    let (status, _, _) = server.send("GET", "/v1/", &[("Accept", "text/csv")], Vec::new());
    assert_eq!(status, 406);
    let (status, _, _) = server.send("GET", "/v1/", &[], b"{}".to_vec());
    assert_eq!(status, 400);
}

/// A JSON object that gives a key twice asks for two values of one field:
/// the request is refused (a settings or account body, a batch of customers)
/// or the record rejected (an invoice of a batch), never read as its last
/// value. An ambiguous role must not mint an owner key.
#[test]
fn a_key_given_twice_in_a_json_object_is_refused() {
    let server = Server::start();
    seed(&server);
    let send = |method: &str, path: &str, body: &str| {
        server.raw(
            method,
            path,
            Some(OWNER_KEY),
            Some(body.as_bytes().to_vec()),
        )
    };
    let (status, body) = send(
        "POST",
        "/account/api-keys",
        r#"{"name": "a", "role": "readonly", "role": "owner"}"#,
    );
    assert_eq!(
        (status, body),
        (
            400,
            json!({"error": "the body is not valid JSON: the key `role` is given twice in one object; give it once at line 1 column 40", "code": "bad_request"})
        )
    );
    let (_, keys) = server.get("/account/api-keys");
    assert_eq!(keys["result"]["list"].as_array().map(Vec::len), Some(1));
    let (status, body) = send(
        "POST",
        "/data/customers",
        r#"[{"id": "D1", "id": "D2", "name": "Dup"}]"#,
    );
    assert_eq!(
        (status, body["error"].as_str()),
        (
            400,
            Some(
                "the body is not valid JSON: the key `id` is given twice in one object; give it once at line 1 column 18"
            )
        )
    );
    assert_eq!(server.get("/data/customers/D2").0, 404);
    let (status, body) = send(
        "POST",
        "/data/invoices",
        r#"[{"id": "twice", "customer_id": "A", "type": "one-time", "invoice_date": "2024-01-05",
             "amount": 3000, "amount": 1, "currency": "USD"}]"#,
    );
    assert_eq!(
        (status, body),
        (
            200,
            json!({"result": [{"id": "", "import_status": "error", "import_error":
                "invoice ?: field `(record)`: is not valid JSON: the key `amount` is given twice in one object; give it once at line 2 column 37"}]})
        )
    );
    assert_eq!(server.get("/data/invoices/twice").0, 404);
}
