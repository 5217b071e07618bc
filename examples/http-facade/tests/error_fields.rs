//! A 400 the service answers about a named query parameter, path
//! parameter, header or body field names it in `field`, as the core's
//! errors do: `{error, code, field}`; a 406 names `Accept`.

mod common;

use common::{OWNER_KEY, Server, seed};
use serde_json::{Value, json};

/// A request (method, path, body) and the answer it gets.
type Case<'a> = (&'a str, &'a str, Option<Value>, (u16, Value));

fn refused(field: &str, error: &str) -> (u16, Value) {
    (
        400,
        json!({"error": error, "code": "bad_request", "field": field}),
    )
}

#[test]
fn the_services_own_400s_name_the_parameter_or_field_at_fault() {
    let server = Server::start();
    seed(&server);
    let source = json!({"id": "ds", "name": "Billing", "type": "api"});
    assert_eq!(server.post("/data/data-sources", source).0, 200);
    let cases: Vec<Case> = vec![
        (
            "POST",
            "/v1/data-sources/ds/customers?foo=1",
            Some(json!({"id": "X"})),
            refused(
                "foo",
                "query parameter `foo`: this endpoint has no such parameter; its parameters: format",
            ),
        ),
        (
            "GET",
            "/v1/data/customers?foo=1",
            None,
            refused(
                "foo",
                "query parameter `foo`: this endpoint has no such parameter; its parameters: limit, offset",
            ),
        ),
        (
            "GET",
            "/v1/data/customers/A?foo=1",
            None,
            refused(
                "foo",
                "query parameter `foo`: this endpoint takes no query parameters",
            ),
        ),
        (
            "GET",
            "/v1/data/customers?limit=-1",
            None,
            refused(
                "limit",
                "query parameter `limit`: `-1` is not a whole number of 0 or more",
            ),
        ),
        (
            "GET",
            "/data/invoices?offset=x",
            None,
            refused(
                "offset",
                "query parameter `offset`: `x` is not a whole number of 0 or more",
            ),
        ),
        (
            "GET",
            "/data/invoices?customer=",
            None,
            refused(
                "customer",
                "query parameter `customer`: is empty; give a value, or leave the parameter out for its default",
            ),
        ),
        (
            "GET",
            "/v1/reports/mrr?as_of=%20&interval=month",
            None,
            refused(
                "as_of",
                "query parameter `as_of`: is empty; give a value, or leave the parameter out for its default",
            ),
        ),
        (
            "GET",
            "/data/plans?source",
            None,
            refused(
                "source",
                "query parameter `source`: is empty; give a value, or leave the parameter out for its default",
            ),
        ),
        (
            "GET",
            "/data/plans?limit=1&limit=2",
            None,
            refused(
                "limit",
                "query parameter `limit` is given more than once; give it once",
            ),
        ),
        (
            "PUT",
            "/v1/account",
            Some(json!({"name": ""})),
            refused("name", "account field `name` must be a non-empty string"),
        ),
        (
            "PUT",
            "/profile",
            Some(json!({"first_name": 1})),
            refused("first_name", "profile field `first_name` must be a string"),
        ),
        (
            "POST",
            "/account/api-keys",
            Some(json!({"roles": "admin"})),
            refused(
                "roles",
                "unknown field `roles`; an API key has name and role",
            ),
        ),
        (
            "POST",
            "/account/api-keys",
            Some(json!({"role": "boss"})),
            refused(
                "role",
                "field `role`: `boss` is not one of owner, admin, readonly",
            ),
        ),
        (
            "POST",
            "/webhooks",
            Some(json!({"description": "no target"})),
            refused("url", "field `url` is required"),
        ),
        (
            "POST",
            "/webhooks",
            Some(json!({"url": "https://8.8.8.8/hook", "enabled": "yes"})),
            refused("enabled", "field `enabled` must be a boolean"),
        ),
        (
            "PUT",
            "/settings/notifications",
            Some(json!({"email": {"frequency": "hourly"}})),
            refused(
                "email.frequency",
                "notification setting `email.frequency`: `hourly` is not daily or weekly",
            ),
        ),
        (
            "PUT",
            "/settings/notifications",
            Some(json!({"email": {"sender": "me"}})),
            refused(
                "email.sender",
                "unknown notification setting `email.sender`",
            ),
        ),
        (
            "POST",
            "/settings/notifications/digest",
            Some(json!({"frequency": "hourly"})),
            refused("frequency", "field `frequency` must be `daily` or `weekly`"),
        ),
        (
            "DELETE",
            "/settings/payment-platform?remove_data=maybe",
            None,
            refused(
                "remove_data",
                "query parameter `remove_data`: `maybe` is not true or false",
            ),
        ),
        (
            "PUT",
            "/settings/payment-platform",
            Some(json!({"api_key": "pk_test_1"})),
            refused(
                "api_key",
                "field `api_key` must be a Stripe secret key (sk_...) or restricted key (rk_...)",
            ),
        ),
        (
            "GET",
            "/reports/mrr?format=xml",
            None,
            refused(
                "format",
                "parameter `format`: `xml` is not one of json, csv, arrow",
            ),
        ),
        (
            "POST",
            "/data/invoices",
            Some(json!({"invoices": "x"})),
            refused("invoices", "field `invoices` must be an array of records"),
        ),
        (
            "POST",
            "/data/customers",
            Some(json!({"customers": [], "plans": []})),
            refused(
                "plans",
                "field `plans`: a batch object holds `customers` alone; send other records in their own request",
            ),
        ),
    ];
    for (method, path, body, answer) in cases {
        assert_eq!(
            server.call(method, path, Some(OWNER_KEY), body.as_ref()),
            answer,
            "{method} {path}"
        );
    }
}

#[test]
fn refusals_of_paths_queries_headers_and_keyless_requests_name_what_is_at_fault() {
    let server = Server::start();
    seed(&server);
    // The path is named as it was requested, with its `/v1` or without.
    assert_eq!(
        server.raw_path("GET", "/v1/data/customers/%FF"),
        refused(
            "id",
            "the path /v1/data/customers/%FF is not usable: Invalid URL: Invalid UTF-8 in `id`",
        )
    );
    assert_eq!(
        server.raw_path("GET", "/data/customers/%FF"),
        refused(
            "id",
            "the path /data/customers/%FF is not usable: Invalid URL: Invalid UTF-8 in `id`",
        )
    );
    assert_eq!(
        server.raw_path("GET", "/data/customers?limit=%FF"),
        refused(
            "limit",
            "the query string is not usable: `%FF` is not valid UTF-8 once decoded",
        )
    );
    let (status, _, body) = server.send(
        "GET",
        "/reports/mrr",
        &[("Accept", "text/csv;q=high")],
        Vec::new(),
    );
    assert_eq!(
        (status, serde_json::from_slice::<Value>(&body).unwrap()),
        refused(
            "Accept",
            "header `Accept`: `q=high` (in `text/csv;q=high`) is not a quality from 0 to 1 with at most three decimals",
        )
    );
    // A 406 names the header: only `Accept` is refused so (a `format=`
    // given wins over it, and one not offered is a 400 naming `format`).
    let not_acceptable =
        |error: &str| json!({"error": error, "code": "not_acceptable", "field": "Accept"});
    for (path, error) in [
        (
            "/v1/reports/mrr",
            "header `Accept` accepts none of the types this answers in: application/json, \
             text/csv, application/vnd.apache.arrow.stream (or ask with `format=`: json, csv, arrow)",
        ),
        (
            "/data/customers",
            "header `Accept` does not accept application/json, the one type this answers in",
        ),
    ] {
        let (status, _, body) = server.send("GET", path, &[("Accept", "image/png")], Vec::new());
        assert_eq!(
            (status, serde_json::from_slice::<Value>(&body).unwrap()),
            (406, not_acceptable(error)),
            "{path}"
        );
    }
    let (status, content_type, _) = server.send(
        "GET",
        "/v1/reports/mrr?format=csv",
        &[("Accept", "image/png")],
        Vec::new(),
    );
    assert_eq!(
        (status, content_type.as_str()),
        (200, "text/csv; charset=utf-8")
    );
    // Without a key: the public endpoints refuse the same way.
    assert_eq!(
        server.call("GET", "/health?foo=1", None, None),
        refused(
            "foo",
            "query parameter `foo`: this endpoint takes no query parameters"
        )
    );
    assert_eq!(
        server.call(
            "POST",
            "/session",
            None,
            Some(&json!({"email": "ada@example.com"}))
        ),
        refused("password", "field `password` is required")
    );
}
