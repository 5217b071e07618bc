//! Every scenario file (`testdata/scenarios/`, walked recursively) with its
//! customers split into 2 or 3 partitions: each report query it lists,
//! computed in parts, merged and finished, gives the scenario's expected
//! value (or error) and exactly the single ledger's report.

mod support;

use serde_json::Value;
use std::path::{Path, PathBuf};
use submetrics::ReportParams;
use submetrics::reports::Report;

fn scenario_files(dir: &Path, into: &mut Vec<PathBuf>) {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .expect("a readable scenario folder")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            scenario_files(&path, into);
        } else if path.extension().is_some_and(|x| x == "json") {
            into.push(path);
        }
    }
}

/// A report query's parameters as the scenario runner reads them.
fn query_params(report: &Value) -> ReportParams {
    report
        .get("params")
        .and_then(Value::as_object)
        .map(|m| {
            m.iter()
                .map(|(k, v)| {
                    let text = v.as_str().map_or_else(|| v.to_string(), str::to_string);
                    (k.clone(), text)
                })
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn every_scenario_report_finishes_from_partitions() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../testdata/scenarios");
    let mut files = Vec::new();
    scenario_files(&dir, &mut files);
    assert!(files.len() >= 7, "scenario files in {}", dir.display());
    let mut failures = Vec::new();
    let mut checked = 0;
    for (n, file) in files.iter().enumerate() {
        let name = file
            .strip_prefix(&dir)
            .unwrap_or(file)
            .display()
            .to_string();
        let scenario: Value = serde_json::from_str(&std::fs::read_to_string(file).unwrap())
            .unwrap_or_else(|e| panic!("{name}: invalid JSON: {e}"));
        let (ledger, _) = submetrics::scenario::load(&scenario)
            .unwrap_or_else(|e| panic!("{name}: does not load: {e}"));
        let as_of_text = scenario["as_of"].as_str().expect("as_of");
        let as_of = submetrics::parse_as_of(as_of_text, ledger.settings()).unwrap();
        let parts = 2 + n % 2;
        let ledgers = support::split(&ledger, parts, |i| i);
        let reports = scenario["expect"]["reports"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        for (i, report) in reports.iter().enumerate() {
            let report_name = report["name"].as_str().unwrap_or_default();
            if Report::find(report_name).is_err() {
                // The analytics customer views are not reports.
                continue;
            }
            let params = query_params(report);
            let context = format!("{name}: $.expect.reports[{i}] ({report_name}, {parts} parts)");
            let single = ledger.report(report_name, &params, as_of);
            let parted = support::partials(&ledgers, report_name, &params, as_of)
                .and_then(support::finished);
            match (single, parted) {
                (Ok(single), Ok(parted)) => {
                    checked += 1;
                    if let Some(diff) = submetrics::scenario::subset_difference(
                        &report["result"],
                        &parted,
                        &format!("$.expect.reports[{i}].result"),
                    ) {
                        failures.push(format!("{context}: {diff}"));
                    }
                    if parted != single {
                        failures.push(format!("{context}: differs from the single ledger"));
                    }
                }
                (Err(single), Err(parted)) if single == parted => {
                    let expected = &report["error"]["message"];
                    if *expected != single.to_string() {
                        failures.push(format!("{context}: {single}, expected {expected}"));
                    }
                }
                (single, parted) => failures.push(format!(
                    "{context}: single ledger {:?}, in parts {:?}",
                    single.err(),
                    parted.err()
                )),
            }
        }
    }
    assert!(checked > 50, "only {checked} report queries checked");
    assert!(
        failures.is_empty(),
        "{} report queries failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
