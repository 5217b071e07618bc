//! The shared scenario-file runner (format: `SCENARIOS.md`). A scenario loads
//! records into a ledger, applies `steps`, and checks the movements, rejected
//! records and reports it expects. Every front end runs the same files; this
//! is the Rust runner, plus the subset matcher the others mirror.
//!
//! Besides `SCENARIOS.md`, an expected report may give `error` instead of
//! `result`: `{"code", "message"}`, the error the report answers, matched
//! exactly.

use crate::error::{Error, Result};
use crate::model::Settings;
use crate::reports::ReportParams;
use crate::{ImportStatus, Ledger, MovementFilter, RecordKind, WriteReport};
use chrono::{DateTime, Utc};
use serde_json::{Value, json};

mod shape;

/// What one scenario run found.
#[derive(Debug, Default)]
pub struct Outcome {
    /// One line per difference, each naming the JSON path (an unknown
    /// report name is a difference too).
    pub failures: Vec<String>,
}

/// A rejected record: collection name, id, error text.
type Rejection = (String, String, String);

/// Builds the ledger a scenario describes; returns it with every rejection.
pub fn load(scenario: &Value) -> Result<(Ledger, Vec<Rejection>)> {
    load_with(scenario, &mut JsonWrites)
}

/// How a scenario's records reach the ledger: as JSON values (the
/// interface), or converted first (a front end's own input format, which
/// must give the same results).
pub trait Writes {
    /// Upserts records of one kind, as [`Ledger::upsert`].
    fn upsert(
        &mut self,
        ledger: &mut Ledger,
        kind: RecordKind,
        records: &[Value],
    ) -> Result<WriteReport>;

    /// Loads FX rates, as [`Ledger::load_fx_rates`].
    fn load_fx_rates(&mut self, ledger: &mut Ledger, rates: &[Value]) -> Result<usize>;
}

/// Records written as the JSON values they are.
pub struct JsonWrites;

impl Writes for JsonWrites {
    fn upsert(
        &mut self,
        ledger: &mut Ledger,
        kind: RecordKind,
        records: &[Value],
    ) -> Result<WriteReport> {
        Ok(ledger.upsert(kind, records))
    }

    fn load_fx_rates(&mut self, ledger: &mut Ledger, rates: &[Value]) -> Result<usize> {
        ledger.load_fx_rates(rates)
    }
}

/// [`load`] with the records written through `writes`.
///
/// # Errors
///
/// A key the scenario format does not have at its level (a misspelt
/// `expect` or `contains`), or an expectation that checks nothing, names
/// its JSON path before anything is loaded.
pub fn load_with(scenario: &Value, writes: &mut dyn Writes) -> Result<(Ledger, Vec<Rejection>)> {
    shape::check(scenario)?;
    let settings = Settings::from_json(scenario.get("config").unwrap_or(&Value::Null))?;
    let mut ledger = Ledger::new(settings);
    let mut rejections = Vec::new();
    if let Some(rates) = scenario.get("fx_rates").and_then(Value::as_array) {
        writes.load_fx_rates(&mut ledger, rates)?;
    }
    for collection in [
        "data_sources",
        "customers",
        "plans",
        "plan_groups",
        "invoices",
    ] {
        if let Some(records) = scenario.get(collection).and_then(Value::as_array) {
            upsert(&mut ledger, writes, collection, records, &mut rejections)?;
        }
    }
    if let Some(objects) = scenario.get("stripe").and_then(Value::as_array) {
        let options = crate::stripe::StripeOptions::from_json(
            scenario.get("stripe_options").unwrap_or(&Value::Null),
        )?;
        for rejection in ledger.import_stripe(objects, &options).rejected {
            rejections.push((
                "stripe".to_string(),
                rejection.id.clone(),
                format!(
                    "{} {}: field `{}`: {}",
                    rejection.object, rejection.id, rejection.field, rejection.reason
                ),
            ));
        }
    }
    for (i, step) in scenario
        .get("steps")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
    {
        if let Some(collection) = step.get("upsert").and_then(Value::as_str) {
            let records = step
                .get("records")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default();
            upsert(&mut ledger, writes, collection, &records, &mut rejections)?;
        } else if let Some(collection) = step.get("delete").and_then(Value::as_str) {
            let kind = kind_of(collection)?;
            let id = step.get("id").and_then(Value::as_str).unwrap_or_default();
            if let Err(error) = ledger.delete(kind, id) {
                rejections.push((collection.to_string(), id.to_string(), error.to_string()));
            }
        } else if let Some(settings) = step.get("config") {
            ledger.update_settings(settings)?;
        } else {
            return Err(Error::query(
                &format!("steps[{i}]"),
                "needs `upsert`, `delete` or `config`",
            ));
        }
    }
    Ok((ledger, rejections))
}

fn kind_of(collection: &str) -> Result<RecordKind> {
    RecordKind::parse(collection)
        .ok_or_else(|| Error::query("steps", format!("unknown collection `{collection}`")))
}

fn upsert(
    ledger: &mut Ledger,
    writes: &mut dyn Writes,
    collection: &str,
    records: &[Value],
    rejections: &mut Vec<Rejection>,
) -> Result<()> {
    let report = writes.upsert(ledger, kind_of(collection)?, records)?;
    for result in report.results {
        if result.import_status == ImportStatus::Error {
            rejections.push((
                collection.to_string(),
                result.id.to_string(),
                result.import_error.unwrap_or_default(),
            ));
        }
    }
    Ok(())
}

/// Runs one scenario and compares everything it expects.
pub fn run(scenario: &Value) -> Result<Outcome> {
    run_with(scenario, &mut JsonWrites)
}

/// [`run`] with the records written through `writes`.
pub fn run_with(scenario: &Value, writes: &mut dyn Writes) -> Result<Outcome> {
    let (ledger, rejections) = load_with(scenario, writes)?;
    let as_of_text = scenario
        .get("as_of")
        .and_then(Value::as_str)
        .ok_or_else(|| Error::query("as_of", "is required"))?;
    let as_of = crate::parse_as_of(as_of_text, ledger.settings())?;
    let expect = scenario.get("expect").cloned().unwrap_or(json!({}));
    let mut outcome = Outcome::default();

    if let Some(expected) = expect.get("movements") {
        let actual = serde_json::to_value(ledger.movements(as_of, &MovementFilter::default())?)
            .map_err(|e| Error::query("movements", e.to_string()))?;
        if let Some(diff) = subset_difference(expected, &actual, "$.expect.movements") {
            outcome.failures.push(diff);
        }
    }

    for (i, expected) in expect
        .get("errors")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
    {
        let record = expected
            .get("record")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let id = expected
            .get("id")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let contains = expected
            .get("contains")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let found = rejections.iter().any(|(collection, rejected_id, text)| {
            collection == record && rejected_id == id && text.contains(contains)
        });
        if !found {
            outcome.failures.push(format!(
                "$.expect.errors[{i}]: no rejection of {record} `{id}` containing `{contains}`; rejections: {rejections:?}"
            ));
        }
    }
    let expected_rejections = expect
        .get("errors")
        .and_then(Value::as_array)
        .map_or(0, Vec::len);
    if rejections.len() > expected_rejections {
        outcome.failures.push(format!(
            "$.expect.errors: {} unexpected rejection(s): {rejections:?}",
            rejections.len() - expected_rejections
        ));
    }

    for (i, report) in expect
        .get("reports")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
    {
        let (name, params) = report_request(report);
        let answer = view(&ledger, name, &params, as_of);
        if let Some(expected) = report.get("error") {
            let path = format!("$.expect.reports[{i}].error");
            let actual = match &answer {
                Ok(_) => json!("an answer"),
                Err(error) => json!({"code": error.code(), "message": error.to_string()}),
            };
            if let Some(diff) = subset_difference(expected, &actual, &path) {
                outcome.failures.push(format!("report {name}: {diff}"));
            }
            continue;
        }
        let path = format!("$.expect.reports[{i}].result");
        match answer {
            Ok(actual) => {
                if let Some(diff) = subset_difference(&report["result"], &actual, &path) {
                    outcome.failures.push(format!("report {name}: {diff}"));
                }
            }
            Err(error) => outcome
                .failures
                .push(format!("{path}: report {name} failed: {error}")),
        }
    }
    Ok(outcome)
}

/// The reports to render over a scenario file's ledger: those it expects
/// (`expect.reports`), in its order, with their parameters (a parameter
/// that is not text as its JSON text), then every report without any.
pub fn reports_to_render(scenario: &Value) -> Vec<(&str, ReportParams)> {
    let expected = scenario["expect"]["reports"]
        .as_array()
        .into_iter()
        .flatten()
        .map(report_request);
    let without = crate::reports::report_names()
        .into_iter()
        .map(|name| (name, ReportParams::new()));
    expected.chain(without).collect()
}

/// An expected report's name and parameters.
fn report_request(report: &Value) -> (&str, ReportParams) {
    let name = report["name"].as_str().unwrap_or_default();
    let params = report["params"]
        .as_object()
        .into_iter()
        .flatten()
        .map(|(k, v)| {
            (
                k.clone(),
                v.as_str().map_or_else(|| v.to_string(), str::to_string),
            )
        })
        .collect();
    (name, params)
}

/// Runs a report by name. Besides the registry's reports, scenario files may
/// name the analytics customer views: `customers` (the list, with the query
/// parameters of `GET /customers`) and `customer` (the detail; the `id`
/// parameter names the customer).
pub fn view(
    ledger: &Ledger,
    name: &str,
    params: &ReportParams,
    as_of: DateTime<Utc>,
) -> Result<Value> {
    match name {
        "customers" => ledger.analytics_customers(params, as_of),
        "customer" => {
            let mut rest = params.clone();
            let id = rest
                .remove("id")
                .ok_or_else(|| Error::query("id", "names the customer of the `customer` view"))?;
            ledger.analytics_customer(&id, &rest, as_of)
        }
        _ => ledger.report(name, params, as_of),
    }
}

/// The first place where `actual` does not contain `expected` as a subset:
/// every key of an expected object must be present and match; arrays must
/// have the same length and match by position; integers match exactly,
/// other numbers within 1e-6.
pub fn subset_difference(expected: &Value, actual: &Value, path: &str) -> Option<String> {
    match (expected, actual) {
        (Value::Object(e), Value::Object(a)) => {
            e.iter().find_map(|(key, value)| match a.get(key) {
                None => Some(format!("{path}.{key}: missing (expected {value})")),
                Some(actual) => subset_difference(value, actual, &format!("{path}.{key}")),
            })
        }
        (Value::Array(e), Value::Array(a)) => {
            if e.len() != a.len() {
                return Some(format!(
                    "{path}: expected {} items, got {}: {actual}",
                    e.len(),
                    a.len()
                ));
            }
            e.iter()
                .zip(a)
                .enumerate()
                .find_map(|(i, (e, a))| subset_difference(e, a, &format!("{path}[{i}]")))
        }
        (Value::Number(e), Value::Number(a)) if whole(e).is_some() && whole(a).is_some() => {
            (whole(e) != whole(a)).then(|| format!("{path}: expected {e}, got {a}"))
        }
        (Value::Number(e), Value::Number(a)) => {
            let (e, a) = (
                e.as_f64().unwrap_or(f64::NAN),
                a.as_f64().unwrap_or(f64::NAN),
            );
            if a == 0.0 && a.is_sign_negative() {
                // A zero is answered as 0, never as JSON's -0.0.
                return Some(format!("{path}: expected {e}, got -0.0"));
            }
            ((e - a).abs() > 1e-6).then(|| format!("{path}: expected {e}, got {a}"))
        }
        _ if expected == actual => None,
        _ => Some(format!("{path}: expected {expected}, got {actual}")),
    }
}

/// An integer number as such (a float such as `2.0` is not one): integers
/// compare exactly, past the 53 bits a float holds.
fn whole(number: &serde_json::Number) -> Option<i128> {
    number
        .as_i64()
        .map(i128::from)
        .or_else(|| number.as_u64().map(i128::from))
}
