//! Runs every scenario file under `testdata/scenarios/` (folders included)
//! through the Rust API, each file its own test case named by its path.

use serde_json::Value;
use std::path::PathBuf;

fn check(_name: &str, scenario: &Value) -> Vec<String> {
    match submetrics::scenario::run(scenario) {
        Ok(outcome) => outcome.failures,
        Err(error) => vec![format!("could not run: {error}")],
    }
}

fn main() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../testdata/scenarios");
    submetrics::testing::run_scenario_files(&root, check)
}
