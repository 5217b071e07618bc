//! Runs every scenario file under `testdata/scenarios/` (folders included)
//! through the Rust API, each file its own test case named by its path.
//! Each file's reports (those it expects, and every report without
//! parameters) are also written as JSON text and as CSV from their typed
//! rows, which must be the text of their JSON values and the CSV of their
//! tables.

use serde_json::Value;
use std::path::PathBuf;
use submetrics::{Ledger, scenario};

fn check(_name: &str, scenario: &Value) -> Vec<String> {
    let mut failures = match scenario::run(scenario) {
        Ok(outcome) => outcome.failures,
        Err(error) => vec![format!("could not run: {error}")],
    };
    if let Some(as_of) = scenario["as_of"].as_str() {
        match scenario::load(scenario) {
            Ok((ledger, _)) => match submetrics::parse_as_of(as_of, ledger.settings()) {
                Ok(as_of) => failures.extend(text_differences(&ledger, scenario, as_of)),
                Err(error) => failures.push(format!("as_of: {error}")),
            },
            Err(error) => failures.push(format!("could not load: {error}")),
        }
    }
    failures
}

/// The reports whose JSON text differs from the text of their JSON value,
/// or whose CSV differs from their table's (or whose errors differ).
fn text_differences(
    ledger: &Ledger,
    scenario: &Value,
    as_of: chrono::DateTime<chrono::Utc>,
) -> Vec<String> {
    let mut failures = Vec::new();
    for (name, params) in scenario::reports_to_render(scenario) {
        let json_text = ledger.report_json(name, &params, as_of);
        let of_value = ledger
            .report(name, &params, as_of)
            .map(|value| serde_json::to_vec(&value).expect("JSON values serialize"));
        let csv = ledger.report_csv(name, &params, as_of);
        let of_table = ledger
            .report_table(name, &params, as_of)
            .map(|table| table.to_csv());
        for (what, text, expected) in [("text", json_text, of_value), ("CSV", csv, of_table)] {
            let same = match (&text, &expected) {
                (Ok(text), Ok(expected)) => text == expected,
                (Err(a), Err(b)) => a.to_string() == b.to_string(),
                _ => false,
            };
            if !same {
                let shown = |r: &submetrics::Result<Vec<u8>>| match r {
                    Ok(bytes) => String::from_utf8_lossy(bytes).into_owned(),
                    Err(error) => format!("error {error}"),
                };
                failures.push(format!(
                    "report {name} {params:?}: {what} {}, expected {}",
                    shown(&text),
                    shown(&expected)
                ));
            }
        }
    }
    failures
}

fn main() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../testdata/scenarios");
    submetrics::testing::run_scenario_files(&root, check)
}
