//! The Arrow batch writes give what the JSON writes give on every scenario
//! file under `testdata/scenarios/`: its records converted to record
//! batches, the same rejections, movements and expected results. Each file
//! is its own test case, named by its path.

mod common;

use common::batch_of;
use serde_json::Value;
use std::path::PathBuf;
use submetrics::columnar::batch_of_table;
use submetrics::scenario::{self, JsonWrites, Writes};
use submetrics::{Ledger, MovementFilter, RecordKind, Result, WriteReport};

/// Writes a scenario's records as record batches: a step as one batch, or
/// record by record when its columns would mix kinds of values. Steps with a
/// record that is not an object (an Arrow row always is one) go as JSON.
struct ArrowWrites {
    /// How many steps went as batches.
    batches: usize,
}

impl Writes for ArrowWrites {
    fn upsert(
        &mut self,
        ledger: &mut Ledger,
        kind: RecordKind,
        records: &[Value],
    ) -> Result<WriteReport> {
        if records.iter().any(|r| !r.is_object()) {
            return JsonWrites.upsert(ledger, kind, records);
        }
        self.batches += 1;
        if let Some(batch) = batch_of(records) {
            return ledger.upsert_arrow(kind, &batch);
        }
        let mut report = WriteReport::default();
        for record in records {
            let batch =
                batch_of(std::slice::from_ref(record)).expect("one record's columns do not mix");
            report
                .results
                .extend(ledger.upsert_arrow(kind, &batch)?.results);
        }
        Ok(report)
    }

    fn load_fx_rates(&mut self, ledger: &mut Ledger, rates: &[Value]) -> Result<usize> {
        match batch_of(rates) {
            Some(batch) => ledger.load_fx_rates_arrow(&[batch]),
            None => JsonWrites.load_fx_rates(ledger, rates),
        }
    }
}

/// Scenarios whose numbers a typed column cannot hold as JSON wrote them.
const FLOAT_COLUMNS: &[&str] = &["errors/072-error-id-number-that-is-not-a-safe-integer.json"];

/// The differences between writing `scenario` as record batches and as
/// JSON: rejections, movements, and what the file expects; at least one of
/// its steps must go as a batch.
fn check(name: &str, scenario: &Value) -> Vec<String> {
    let mut failures = Vec::new();
    let mut writes = ArrowWrites { batches: 0 };
    let (from_batches, rejected) = match scenario::load_with(scenario, &mut writes) {
        Ok(loaded) => loaded,
        Err(error) => return vec![format!("could not load: {error}")],
    };
    if writes.batches == 0 {
        failures.push("no step went as a batch".to_string());
    }
    let (from_json, expected) = match scenario::load(scenario) {
        Ok(loaded) => loaded,
        Err(error) => return vec![format!("could not load as JSON: {error}")],
    };
    // A column holds one number type: beside a fraction, an id beyond
    // 2^53 becomes the nearest float, so its row is refused naming
    // that float; the same rows and fields are refused.
    let same_rows = |a: &[(String, String, String)], b: &[(String, String, String)]| {
        a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.0 == y.0 && x.1 == y.1)
    };
    let rejected_alike = if FLOAT_COLUMNS.contains(&name) {
        same_rows(&rejected, &expected)
    } else {
        rejected == expected
    };
    if !rejected_alike {
        failures.push(format!("rejections {rejected:?}, JSON: {expected:?}"));
    }
    if let Some(as_of) = scenario.get("as_of").and_then(Value::as_str) {
        match submetrics::parse_as_of(as_of, from_json.settings()) {
            Ok(as_of) => {
                let movements = |ledger: &Ledger| {
                    serde_json::to_value(ledger.movements(as_of, &MovementFilter::default()).ok())
                        .expect("movements are JSON")
                };
                if movements(&from_batches) != movements(&from_json) {
                    failures.push("movements differ".to_string());
                }
                failures.extend(report_batch_differences(&from_json, scenario, as_of));
            }
            Err(error) => failures.push(format!("as_of: {error}")),
        }
    }
    match scenario::run_with(scenario, &mut ArrowWrites { batches: 0 }) {
        Ok(outcome) => failures.extend(outcome.failures),
        Err(error) => failures.push(format!("could not run: {error}")),
    }
    failures
}

/// The reports whose record batch, written from the typed rows, differs
/// from the batch of their JSON table (or whose errors differ): those the
/// scenario expects, with their parameters, and every report without any.
fn report_batch_differences(
    ledger: &Ledger,
    scenario: &Value,
    as_of: chrono::DateTime<chrono::Utc>,
) -> Vec<String> {
    let mut failures = Vec::new();
    for (name, params) in scenario::reports_to_render(scenario) {
        let typed = ledger.report_batch(name, &params, as_of);
        let of_table = ledger
            .report_table(name, &params, as_of)
            .and_then(|table| batch_of_table(&table));
        let same = match (&typed, &of_table) {
            (Ok(typed), Ok(of_table)) => typed == of_table,
            (Err(a), Err(b)) => a.to_string() == b.to_string(),
            _ => false,
        };
        if !same {
            failures.push(format!(
                "report {name} {params:?}: batch {typed:?}, of its table {of_table:?}"
            ));
        }
    }
    failures
}

fn main() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../testdata/scenarios");
    submetrics::testing::run_scenario_files(&root, check)
}
