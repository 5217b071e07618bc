//! What the service says about itself and about what it refuses: `GET /`,
//! `GET /reports`, a report parameter it does not read, a second server on
//! a busy address.

mod common;

use common::{OWNER_KEY, Server, seed};
use serde_json::json;
use std::process::Command;

#[test]
fn an_unknown_report_parameter_is_a_400_naming_it_with_a_near_miss() {
    let server = Server::start();
    seed(&server);
    let answer = server.call(
        "GET",
        "/reports/summary?curency=EUR&as_of=2024-06-01",
        Some(OWNER_KEY),
        None,
    );
    assert_eq!(
        answer,
        (
            400,
            json!({
                "error": "parameter `curency`: report `summary` has no such parameter. Its parameters: baseCurrency",
                "code": "invalid_query",
                "field": "curency",
            })
        )
    );
    let answer = server.call(
        "GET",
        "/v1/reports/churn-scheduled-summary?intervall=month",
        Some(OWNER_KEY),
        None,
    );
    assert_eq!(
        answer,
        (
            400,
            json!({
                "error": "parameter `intervall`: report `churn-scheduled-summary` has no such parameter; did you mean `interval`? Its parameters: interval, baseCurrency, fix_fx, fx_date, currency, customer, plan, billing_freq, pricing_model, status, country, region, industry, size, channel, market, payment_method, age, data_source",
                "code": "invalid_query",
                "field": "intervall",
            })
        )
    );
    // `as_of` is the service's own and stays accepted by every report.
    assert_eq!(
        server.call(
            "GET",
            "/reports/summary?baseCurrency=USD&as_of=2024-01-15",
            Some(OWNER_KEY),
            None,
        ),
        (
            200,
            json!({
                "summary": {"mrr_current": 8000, "arr_current": 96000, "subscribers_current": 2, "arpa_current": 4000},
                "currency": "USD",
            })
        )
    );
}

#[test]
fn the_root_points_to_the_description_the_health_check_and_the_reports() {
    let server = Server::start();
    for path in ["/", "/v1", "/v1/"] {
        assert_eq!(
            server.call("GET", path, None, None),
            (
                200,
                json!({
                    "name": "submetrics",
                    "openapi": "/openapi.json",
                    "health": "/health",
                    "reports": "/reports",
                })
            ),
            "{path}"
        );
    }
}

#[test]
fn the_report_list_names_every_report_with_its_parameters_and_columns() {
    let server = Server::start();
    let (status, body) = server.call("GET", "/reports", None, None);
    assert_eq!(status, 200, "{body}");
    let reports = body["reports"].as_array().expect("a list of reports");
    assert_eq!(reports.len(), 32);
    assert_eq!(
        reports[0],
        json!({
            "name": "summary",
            "parameters": [{
                "name": "baseCurrency",
                "accepts": "the currency amounts are reported in (three-letter code; default the ledger's base currency)",
            }],
            "columns": {"shape": "rows", "columns": [
                {"name": "currency", "kind": "text"},
                {"name": "summary", "kind": "object", "fields": [
                    {"name": "mrr_current", "kind": "money", "currency": "report"},
                    {"name": "arr_current", "kind": "money", "currency": "report"},
                    {"name": "arpa_current", "kind": "money", "currency": "report"},
                    {"name": "subscribers_current", "kind": "count"},
                ]},
            ]},
        })
    );
    let invoices = reports
        .iter()
        .find(|r| r["name"] == "invoices-detail")
        .expect("invoices-detail is listed");
    let names: Vec<&str> = invoices["parameters"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["customer", "baseCurrency", "limit", "offset"]);
    assert_eq!(server.call("GET", "/v1/reports", None, None).1, body);
}

#[test]
fn a_second_server_on_a_busy_address_names_it_and_suggests_listen() {
    let server = Server::start();
    let address = server.base.trim_start_matches("http://").to_string();
    let dir = common::data_dir();
    let output = Command::new(common::binary())
        .args(["--listen", &address, "--data-dir"])
        .arg(&dir)
        .env("SUBMETRICS_OWNER_KEY", OWNER_KEY)
        .output()
        .expect("run the server binary");
    assert!(!output.status.success());
    assert_eq!(
        String::from_utf8_lossy(&output.stderr),
        format!(
            "error: cannot listen on {address}: the address is in use (is another server running?); pick another with --listen ADDR:PORT or SUBMETRICS_LISTEN\n"
        )
    );
}
