//! Every rejection is a JSON `{error, code}` with an honest status: bad
//! bytes in paths and queries, path tricks, wrong methods, an `Accept`
//! header that refuses what a route answers in.

mod common;

use common::{Server, seed};
use serde_json::json;

fn assert_json_error(answer: &(u16, serde_json::Value), status: u16, code: &str, what: &str) {
    assert_eq!(answer.0, status, "{what}: {}", answer.1);
    assert_eq!(answer.1["code"], code, "{what}: {}", answer.1);
    assert!(answer.1["error"].is_string(), "{what}: {}", answer.1);
}

#[test]
fn invalid_utf8_in_a_path_or_query_is_a_json_400() {
    let server = Server::start();
    seed(&server);
    for path in [
        "/data/customers/%FF",
        "/v1/data/customers/%FF",
        "/data/plans/%C3%28",
        "/data/invoices/%FF%FE",
        "/reports/%FF",
        "/customers/%FF",
        "/v1/data-sources/%FF/customers",
    ] {
        let method = if path.starts_with("/v1/data-sources") {
            "POST"
        } else {
            "GET"
        };
        let answer = server.raw_path(method, path);
        assert_json_error(&answer, 400, "bad_request", path);
        assert!(
            answer.1["error"].as_str().unwrap_or("").contains("UTF-8"),
            "{path}: {}",
            answer.1
        );
    }
    for path in [
        "/data/customers?limit=%FF",
        "/data/plans?source=%FF",
        "/reports/summary?as_of=%FF",
        "/customers?%FF=1",
    ] {
        let answer = server.raw_path("GET", path);
        assert_json_error(&answer, 400, "bad_request", path);
        assert!(
            answer.1["error"]
                .as_str()
                .unwrap_or("")
                .starts_with("the query string is not usable"),
            "{path}: {}",
            answer.1
        );
    }
}

#[test]
fn path_tricks_reach_no_other_record_or_endpoint() {
    let server = Server::start();
    seed(&server);
    // Encoded slashes and dots stay inside one id segment.
    for (path, id) in [
        ("/data/customers/..%2F..%2Fplans", "../../plans"),
        ("/data/customers/A%2Finvoices", "A/invoices"),
        ("/data/customers/%2E%2E", ".."),
    ] {
        let answer = server.raw_path("GET", path);
        assert_json_error(&answer, 404, "not_found", path);
        assert_eq!(
            answer.1["error"],
            json!(format!("customer `{id}` does not exist")),
            "{path}"
        );
    }
    // Literal dot segments are not resolved: no such endpoint.
    for path in [
        "/data/customers/../plans",
        "/v1/../data/plans",
        "/data//plans",
    ] {
        let answer = server.raw_path("GET", path);
        assert_json_error(&answer, 404, "not_found", path);
        assert_eq!(
            answer.1["error"],
            json!(format!("no endpoint GET {path}")),
            "{path}"
        );
    }
    assert_eq!(server.get("/data/customers").1["result"]["count"], 2);
}

#[test]
fn a_wrong_method_is_a_json_405() {
    let server = Server::start();
    for (method, path) in [
        ("PATCH", "/data/plans"),
        ("DELETE", "/data/customers"),
        ("POST", "/reports/summary"),
        ("PUT", "/v1/account/api-keys"),
        ("POST", "/health"),
    ] {
        let answer = server.call(method, path, Some(common::OWNER_KEY), None);
        assert_eq!(answer.0, 405, "{method} {path}: {}", answer.1);
        assert_eq!(
            answer.1,
            json!({"error": format!("{method} is not allowed on {path}"), "code": "method_not_allowed"})
        );
    }
}

#[test]
fn health_and_openapi_are_public_with_and_without_v1() {
    let server = Server::start();
    for prefix in ["", "/v1"] {
        let (status, body) = server.call("GET", &format!("{prefix}/health"), None, None);
        assert_eq!((status, body), (200, json!({"status": "ok"})));
        let (status, body) = server.call("GET", &format!("{prefix}/openapi.json"), None, None);
        assert_eq!(status, 200);
        assert_eq!(body["openapi"], "3.0.3");
    }
}

/// A route that answers in one type refuses an `Accept` header that
/// refuses it; a header that takes it (or any type) gets the answer, and
/// an unknown path is still a 404.
#[test]
fn a_route_answering_one_type_refuses_an_accept_header_without_it() {
    let server = Server::start();
    let refused = |media: &str| {
        json!({"error": format!("header `Accept` does not accept {media}, the one type this answers in"),
               "code": "not_acceptable", "field": "Accept"})
    };
    for (path, accept, media) in [
        ("/data/customers", "text/csv", "application/json"),
        (
            "/v1/health",
            "application/json;q=0, text/html",
            "application/json",
        ),
        ("/docs", "application/json", "text/html"),
    ] {
        let (status, content_type, body) =
            server.send("GET", path, &[("Accept", accept)], Vec::new());
        let body: serde_json::Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(
            (status, content_type.as_str(), body),
            (406, "application/json", refused(media)),
            "{path}"
        );
    }
    for (path, accept, answered) in [
        (
            "/data/customers",
            "text/html, application/xhtml+xml, */*;q=0.8",
            "application/json",
        ),
        ("/v1/health", "application/*", "application/json"),
        ("/docs", "text/html", "text/html; charset=utf-8"),
        (
            "/openapi.json",
            "application/json, text/plain, */*",
            "application/json",
        ),
    ] {
        let (status, content_type, _) = server.send("GET", path, &[("Accept", accept)], Vec::new());
        assert_eq!(
            (status, content_type.as_str()),
            (200, answered),
            "{path} with {accept}"
        );
    }
    let (status, _, body) = server.send("GET", "/nowhere", &[("Accept", "text/csv")], Vec::new());
    assert_eq!(status, 404, "{}", String::from_utf8_lossy(&body));
}
