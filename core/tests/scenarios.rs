//! Runs every `testdata/scenarios/*.json` through the Rust API.

use std::path::PathBuf;

#[test]
fn every_scenario_file_passes() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../testdata/scenarios");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("testdata/scenarios exists")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    assert!(
        files.len() >= 7,
        "expected scenario files in {}",
        dir.display()
    );
    let mut failures = Vec::new();
    for file in &files {
        let name = file.file_name().unwrap().to_string_lossy().to_string();
        let text = std::fs::read_to_string(file).unwrap();
        let scenario: serde_json::Value = match serde_json::from_str(&text) {
            Ok(v) => v,
            Err(e) => {
                failures.push(format!("{name}: invalid JSON: {e}"));
                continue;
            }
        };
        match submetrics::scenario::run(&scenario) {
            Ok(outcome) => {
                for failure in outcome.failures {
                    failures.push(format!("{name}: {failure}"));
                }
            }
            Err(error) => failures.push(format!("{name}: could not run: {error}")),
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} scenarios failed:\n{}",
        failures.len(),
        files.len(),
        failures.join("\n")
    );
}
