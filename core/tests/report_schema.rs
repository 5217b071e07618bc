//! Every report query of the scenario corpus (and its `customers` list
//! queries, and the movements at its `as_of`) answers rows whose every cell
//! is declared in its schema and of the declared kind (money and counts
//! integers, rates numbers, dates `YYYY-MM-DD`, ...), and fields beside
//! those rows declared as the report's `beside_rows`, of their kinds; and
//! its table (built from the typed answer) is the one a client reads from
//! its JSON.
//! Each scenario file is its own test case, named by its path.

use serde_json::Value;
use std::path::PathBuf;
use submetrics::columnar::report_rows;
use submetrics::scenario;
use submetrics::{ReportParams, ReportTable};

/// The cells of every report the scenario expects that do not fit the
/// report's schema; scenarios that do not load or run a report pass here
/// (the scenario tests hold their answers).
fn check(_name: &str, scenario: &Value) -> Vec<String> {
    let Ok((ledger, _)) = scenario::load(scenario) else {
        return Vec::new();
    };
    let Some(Ok(as_of)) = scenario
        .get("as_of")
        .and_then(Value::as_str)
        .map(|at| submetrics::parse_as_of(at, ledger.settings()))
    else {
        return Vec::new();
    };
    let mut failures = Vec::new();
    let reports = scenario["expect"]["reports"].as_array();
    for (i, report) in reports.into_iter().flatten().enumerate() {
        let name = report["name"].as_str().unwrap_or_default();
        let schema = match name {
            "customers" => submetrics::reports::schema::CUSTOMERS,
            _ => match submetrics::reports::schema(name) {
                Ok(schema) => schema,
                Err(_) => continue,
            },
        };
        let params: ReportParams = report
            .get("params")
            .and_then(Value::as_object)
            .into_iter()
            .flatten()
            .map(|(k, v)| {
                let text = v.as_str().map_or_else(|| v.to_string(), str::to_string);
                (k.clone(), text)
            })
            .collect();
        let Ok(result) = scenario::view(&ledger, name, &params, as_of) else {
            continue;
        };
        if name != "customers" {
            let typed = ledger
                .report_table(name, &params, as_of)
                .map_err(|e| e.to_string());
            let from_json =
                ReportTable::from_result(name, result.clone()).map_err(|e| e.to_string());
            if typed != from_json {
                failures.push(format!(
                    "$.expect.reports[{i}] {name}: the table of the typed answer differs from the table read from its JSON"
                ));
            }
        }
        if schema.columns().is_empty() {
            failures.push(format!("report {name} declares no columns"));
        }
        if name != "customers" {
            failures.extend(
                beside_mismatches(name, &result)
                    .into_iter()
                    .map(|problem| format!("$.expect.reports[{i}] {name}: {problem}")),
            );
        }
        for (r, row) in report_rows(result).iter().enumerate() {
            if let Some(problem) = schema.mismatch(row) {
                failures.push(format!("$.expect.reports[{i}] {name} row {r}: {problem}"));
            }
        }
    }
    if let Ok(movements) = ledger.movements(as_of, &submetrics::MovementFilter::default()) {
        let rows = serde_json::to_value(movements).expect("movements are JSON");
        for (m, row) in rows.as_array().into_iter().flatten().enumerate() {
            if let Some(problem) = submetrics::reports::schema::MOVEMENTS.mismatch(row) {
                failures.push(format!("movement {m}: {problem}"));
            }
        }
    }
    failures
}

/// The fields of an answer whose rows come from its `result` (or `rows`)
/// that are neither those rows, the query's echoes nor declared beside
/// them, or not of their declared kind; and declared fields it lacks.
fn beside_mismatches(name: &str, result: &Value) -> Vec<String> {
    const ROWS_AND_ECHOES: &[&str] = &[
        "result",
        "rows",
        "columns",
        "currency",
        "interval",
        "metric",
        "as_of",
        "breakdown",
    ];
    let Some(fields) = result.as_object() else {
        return Vec::new();
    };
    if !fields.contains_key("result") && !fields.contains_key("rows") {
        return Vec::new();
    }
    let beside = submetrics::reports::beside_rows(name).expect("a known report");
    let mut problems = Vec::new();
    for (field, value) in fields {
        if ROWS_AND_ECHOES.contains(&field.as_str()) {
            continue;
        }
        match beside.iter().find(|c| c.name == field) {
            None => problems.push(format!("`{field}` beside the rows is not declared")),
            Some(column) => problems.extend(column.kind.mismatch(value, field)),
        }
    }
    for column in beside {
        if !fields.contains_key(column.name) {
            problems.push(format!("declared `{}` is missing", column.name));
        }
    }
    problems
}

fn main() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../testdata/scenarios");
    submetrics::testing::run_scenario_files(&root, check)
}
