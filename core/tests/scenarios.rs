//! Runs every scenario file under `testdata/scenarios/` (folders included)
//! through the Rust API, each file its own test case named by its path.
//! Each file's reports (those it expects, and every report without
//! parameters) are also written as JSON text from their typed rows, which
//! must be the text of their JSON values.

use serde_json::Value;
use std::path::PathBuf;
use submetrics::{Ledger, ReportParams, scenario};

fn check(_name: &str, scenario: &Value) -> Vec<String> {
    let mut failures = match scenario::run(scenario) {
        Ok(outcome) => outcome.failures,
        Err(error) => vec![format!("could not run: {error}")],
    };
    if let Some(as_of) = scenario["as_of"].as_str() {
        match scenario::load(scenario) {
            Ok((ledger, _)) => match submetrics::parse_as_of(as_of, ledger.settings()) {
                Ok(as_of) => failures.extend(json_text_differences(&ledger, scenario, as_of)),
                Err(error) => failures.push(format!("as_of: {error}")),
            },
            Err(error) => failures.push(format!("could not load: {error}")),
        }
    }
    failures
}

/// The reports whose JSON text differs from the text of their JSON value
/// (or whose errors differ).
fn json_text_differences(
    ledger: &Ledger,
    scenario: &Value,
    as_of: chrono::DateTime<chrono::Utc>,
) -> Vec<String> {
    let without = submetrics::reports::report_names()
        .into_iter()
        .map(|name| (name, ReportParams::new()));
    let mut failures = Vec::new();
    for (name, params) in scenario::expected_reports(scenario)
        .into_iter()
        .chain(without)
    {
        let text = ledger.report_json(name, &params, as_of);
        let of_value = ledger
            .report(name, &params, as_of)
            .map(|value| serde_json::to_vec(&value).expect("JSON values serialize"));
        let same = match (&text, &of_value) {
            (Ok(text), Ok(of_value)) => text == of_value,
            (Err(a), Err(b)) => a.to_string() == b.to_string(),
            _ => false,
        };
        if !same {
            let shown = |r: &submetrics::Result<Vec<u8>>| match r {
                Ok(bytes) => String::from_utf8_lossy(bytes).into_owned(),
                Err(error) => format!("error {error}"),
            };
            failures.push(format!(
                "report {name} {params:?}: text {}, of its value {}",
                shown(&text),
                shown(&of_value)
            ));
        }
    }
    failures
}

fn main() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../testdata/scenarios");
    submetrics::testing::run_scenario_files(&root, check)
}
