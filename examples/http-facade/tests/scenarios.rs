//! Replays every shared scenario file (`testdata/scenarios/`, folders
//! included; each file its own test case, named by its path) through HTTP:
//! settings via the account, records via the data API (plan groups through
//! an import, as the data API assigns their ids), steps, then every expected
//! rejection and report through `/reports/{name}?as_of=...`; a report
//! expected to fail must answer a 4xx with the expected code and message
//! in the error body. Movements are checked by the core's own runner.

mod common;

use common::Server;
use serde_json::{Value, json};
use submetrics::scenario::subset_difference;

fn encode(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// Sends records of one collection; returns (collection, id, error) rejections.
fn upsert(server: &Server, collection: &str, records: &[Value]) -> Vec<(String, String, String)> {
    let (path, key) = match collection {
        "plan_groups" => (
            "/v1/data-sources/scenario/plan_groups".to_string(),
            "result",
        ),
        "customers" => ("/data/customers".to_string(), "list"),
        other => (format!("/data/{}", other.replace('_', "-")), "result"),
    };
    let (status, body) = server.post(&path, json!(records));
    assert!(status == 200 || status == 201, "{path}: {status} {body}");
    let results = if key == "list" {
        &body["result"]["list"]
    } else {
        &body["result"]
    };
    results
        .as_array()
        .into_iter()
        .flatten()
        .filter(|r| r["import_status"] == "error")
        .map(|r| {
            (
                collection.to_string(),
                r["id"].as_str().unwrap_or("").to_string(),
                r["import_error"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect()
}

fn run(scenario: &Value) -> Vec<String> {
    let server = Server::start();
    let mut failures = Vec::new();
    if let Some(config) = scenario.get("config") {
        let (status, body) = server.put("/account", config.clone());
        assert_eq!(status, 200, "config: {body}");
    }
    if let Some(rates) = scenario.get("fx_rates") {
        assert_eq!(server.post("/data/fx-rates", rates.clone()).0, 200);
    }
    server.post(
        "/data/data-sources",
        json!({"id": "scenario", "name": "Scenario"}),
    );
    let mut rejections = Vec::new();
    for collection in [
        "data_sources",
        "customers",
        "plans",
        "plan_groups",
        "invoices",
    ] {
        if let Some(records) = scenario.get(collection).and_then(Value::as_array) {
            rejections.extend(upsert(&server, collection, records));
        }
    }
    for step in scenario
        .get("steps")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        if let Some(collection) = step.get("upsert").and_then(Value::as_str) {
            let records = step["records"].as_array().cloned().unwrap_or_default();
            rejections.extend(upsert(&server, collection, &records));
        } else if let Some(collection) = step.get("delete").and_then(Value::as_str) {
            let id = step["id"].as_str().unwrap_or("");
            let (status, body) = server.delete(&format!(
                "/data/{}/{}",
                collection.replace('_', "-"),
                encode(id)
            ));
            if status != 200 {
                rejections.push((
                    collection.to_string(),
                    id.to_string(),
                    body["error"].as_str().unwrap_or("").to_string(),
                ));
            }
        } else if let Some(config) = step.get("config") {
            assert_eq!(server.put("/account", config.clone()).0, 200);
        }
    }
    let expected_errors = scenario["expect"]["errors"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    for expected in &expected_errors {
        let found = rejections.iter().any(|(collection, id, text)| {
            expected["record"] == json!(collection)
                && expected["id"] == json!(id)
                && text.contains(expected["contains"].as_str().unwrap_or(""))
        });
        if !found {
            failures.push(format!("no rejection like {expected}; got {rejections:?}"));
        }
    }
    if rejections.len() > expected_errors.len() {
        failures.push(format!("unexpected rejections: {rejections:?}"));
    }
    let as_of = encode(scenario["as_of"].as_str().expect("as_of"));
    for (i, report) in scenario["expect"]["reports"]
        .as_array()
        .into_iter()
        .flatten()
        .enumerate()
    {
        let name = report["name"].as_str().unwrap_or("");
        let mut query: Vec<String> = vec![format!("as_of={as_of}")];
        let mut customer = None;
        for (key, value) in report["params"].as_object().into_iter().flatten() {
            let value = value
                .as_str()
                .map_or_else(|| value.to_string(), str::to_string);
            if name == "customer" && key == "id" {
                customer = Some(value);
            } else {
                query.push(format!("{}={}", encode(key), encode(&value)));
            }
        }
        let path = match (name, customer) {
            ("customers", _) => "/customers".to_string(),
            ("customer", Some(id)) => format!("/customers/{}", encode(&id)),
            _ => format!("/reports/{name}"),
        };
        let (status, actual) = server.get(&format!("{path}?{}", query.join("&")));
        if let Some(expected) = report.get("error") {
            let body = json!({"code": actual["code"], "message": actual["error"]});
            let diff = subset_difference(expected, &body, &format!("$.expect.reports[{i}].error"));
            if !(400..500).contains(&status) || diff.is_some() {
                failures.push(format!(
                    "report {name}: {status} {actual}, expected {expected}"
                ));
            }
            continue;
        }
        if status != 200 {
            failures.push(format!("report {name}: {status} {actual}"));
            continue;
        }
        if let Some(diff) = subset_difference(
            &report["result"],
            &actual,
            &format!("$.expect.reports[{i}].result"),
        ) {
            failures.push(format!("report {name}: {diff}"));
        }
    }
    failures
}

fn main() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/scenarios");
    submetrics::testing::run_scenario_files(&root, |_name, scenario| run(scenario))
}
