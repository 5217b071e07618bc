//! The shape of a scenario file (SCENARIOS.md): which keys each level may
//! have and which it needs. A key of another name would be passed over by
//! every runner, so a misspelt `expect` or `contains` would turn a check
//! off while its scenario still passed; here it is an error naming its
//! JSON path.

use crate::error::{Error, Result};
use serde_json::{Map, Value};

/// The keys of a file that hold lists: records, Stripe objects and steps.
const LISTS: &[&str] = &[
    "data_sources",
    "customers",
    "plans",
    "plan_groups",
    "invoices",
    "fx_rates",
    "stripe",
    "steps",
];
/// The other keys of a file.
const FIELDS: &[&str] = &[
    "name",
    "description",
    "source",
    "config",
    "as_of",
    "stripe_options",
    "expect",
];
const EXPECT: &[&str] = &["movements", "reports", "errors"];
const REPORT: &[&str] = &["name", "params", "result", "error"];
const REPORT_ERROR: &[&str] = &["code", "message"];
const REJECTION: &[&str] = &["record", "id", "contains"];

/// Checks a scenario's keys at every level: the file, `expect`, each
/// expected report and rejection, and each step. `expect` must say what it
/// checks; a report needs `name` and either `result` or `error` (with its
/// `code` and `message`), a rejection all of `record`, `id` and
/// `contains`, a step one of `upsert` (with `records`), `delete` (with
/// `id`) or `config`.
pub(super) fn check(scenario: &Value) -> Result<()> {
    let top = object(scenario, "$")?;
    let top_keys: Vec<&str> = FIELDS.iter().chain(LISTS).copied().collect();
    known(top, &top_keys, "$")?;
    for list in LISTS {
        if let Some(value) = top.get(*list) {
            array(value, &format!("$.{list}"))?;
        }
    }
    let Some(expect) = top.get("expect") else {
        return Err(bad("$.expect", "is required: what the scenario checks"));
    };
    let expect = object(expect, "$.expect")?;
    known(expect, EXPECT, "$.expect")?;
    if expect.is_empty() {
        return Err(bad(
            "$.expect",
            "checks nothing: give movements, reports or errors",
        ));
    }
    if let Some(movements) = expect.get("movements") {
        array(movements, "$.expect.movements")?;
    }
    for (i, report) in items(expect.get("reports"), "$.expect.reports")? {
        let path = format!("$.expect.reports[{i}]");
        let report = object(report, &path)?;
        known(report, REPORT, &path)?;
        required(report, &["name"], &path)?;
        match (report.get("result"), report.get("error")) {
            (None, None) => {
                return Err(bad(
                    &format!("{path}.result"),
                    "is required (or `error`, what the report answers instead)",
                ));
            }
            (Some(_), Some(_)) => {
                return Err(bad(
                    &format!("{path}.error"),
                    "is given beside `result`; a report answers one of them",
                ));
            }
            (None, Some(error)) => {
                let at = format!("{path}.error");
                let error = object(error, &at)?;
                known(error, REPORT_ERROR, &at)?;
                required(error, REPORT_ERROR, &at)?;
            }
            (Some(_), None) => {}
        }
        if let Some(params) = report.get("params") {
            object(params, &format!("{path}.params"))?;
        }
    }
    for (i, rejection) in items(expect.get("errors"), "$.expect.errors")? {
        let path = format!("$.expect.errors[{i}]");
        let rejection = object(rejection, &path)?;
        known(rejection, REJECTION, &path)?;
        required(rejection, REJECTION, &path)?;
    }
    for (i, step) in items(top.get("steps"), "$.steps")? {
        let path = format!("$.steps[{i}]");
        let step = object(step, &path)?;
        let allowed: &[&str] = if step.contains_key("upsert") {
            &["upsert", "records"]
        } else if step.contains_key("delete") {
            &["delete", "id"]
        } else {
            &["config"]
        };
        known(step, allowed, &path)?;
        required(step, allowed, &path)?;
    }
    Ok(())
}

fn bad(path: &str, message: impl Into<String>) -> Error {
    Error::query(path, message.into())
}

fn object<'a>(value: &'a Value, path: &str) -> Result<&'a Map<String, Value>> {
    value
        .as_object()
        .ok_or_else(|| bad(path, format!("must be an object, got {value}")))
}

fn array<'a>(value: &'a Value, path: &str) -> Result<&'a Vec<Value>> {
    value
        .as_array()
        .ok_or_else(|| bad(path, format!("must be a list, got {value}")))
}

/// The items of an optional list, numbered.
fn items<'a>(
    value: Option<&'a Value>,
    path: &str,
) -> Result<impl Iterator<Item = (usize, &'a Value)>> {
    let list = value.map(|v| array(v, path)).transpose()?;
    Ok(list.into_iter().flatten().enumerate())
}

/// Every key of `object` is one of `names`.
fn known(object: &Map<String, Value>, names: &[&str], path: &str) -> Result<()> {
    match object.keys().find(|key| !names.contains(&key.as_str())) {
        Some(key) => Err(bad(
            &format!("{path}.{key}"),
            format!("is not a key here; the keys are {}", names.join(", ")),
        )),
        None => Ok(()),
    }
}

/// Every one of `names` is a key of `object`.
fn required(object: &Map<String, Value>, names: &[&str], path: &str) -> Result<()> {
    match names.iter().find(|name| !object.contains_key(**name)) {
        Some(name) => Err(bad(&format!("{path}.{name}"), "is required")),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::check;
    use serde_json::{Value, json};

    fn scenario(expect: Value) -> Value {
        json!({"name": "s", "as_of": "2024-06-01", "customers": [], "expect": expect})
    }

    fn refusal(scenario: &Value) -> String {
        check(scenario).unwrap_err().to_string()
    }

    #[test]
    fn a_well_formed_scenario_passes() {
        let mut s = scenario(json!({
            "movements": [],
            "reports": [
                {"name": "mrr", "params": {"interval": "month"}, "result": {}},
                {"name": "summary", "error": {"code": "out_of_range", "message": "..."}}
            ],
            "errors": [{"record": "invoices", "id": "i1", "contains": "plan_id"}]
        }));
        s["steps"] = json!([
            {"upsert": "invoices", "records": []},
            {"delete": "customers", "id": "A"},
            {"config": {"churn_grace_days": 3}}
        ]);
        assert!(check(&s).is_ok());
    }

    #[test]
    fn a_misspelt_key_at_any_level_is_refused_by_its_path() {
        let mut top = scenario(json!({"movements": []}));
        top["expected"] = json!({});
        assert_eq!(
            refusal(&top),
            "parameter `$.expected`: is not a key here; the keys are name, description, source, \
             config, as_of, stripe_options, expect, data_sources, customers, plans, plan_groups, \
             invoices, fx_rates, stripe, steps"
        );
        assert_eq!(
            refusal(&scenario(json!({"movement": []}))),
            "parameter `$.expect.movement`: is not a key here; the keys are movements, reports, errors"
        );
        assert_eq!(
            refusal(&scenario(
                json!({"reports": [{"name": "mrr", "parms": {}, "result": {}}]})
            )),
            "parameter `$.expect.reports[0].parms`: is not a key here; the keys are name, params, result, error"
        );
        assert_eq!(
            refusal(&scenario(
                json!({"errors": [{"record": "invoices", "id": "i1", "contain": "x"}]})
            )),
            "parameter `$.expect.errors[0].contain`: is not a key here; the keys are record, id, contains"
        );
        let mut step = scenario(json!({"movements": []}));
        step["steps"] = json!([{"upsert": "invoices", "record": []}]);
        assert_eq!(
            refusal(&step),
            "parameter `$.steps[0].record`: is not a key here; the keys are upsert, records"
        );
    }

    #[test]
    fn an_expectation_without_what_it_checks_is_refused() {
        assert_eq!(
            refusal(&json!({"name": "s", "as_of": "2024-06-01"})),
            "parameter `$.expect`: is required: what the scenario checks"
        );
        assert_eq!(
            refusal(&scenario(json!({}))),
            "parameter `$.expect`: checks nothing: give movements, reports or errors"
        );
        assert_eq!(
            refusal(&scenario(json!({"reports": [{"name": "mrr"}]}))),
            "parameter `$.expect.reports[0].result`: is required (or `error`, what the report answers instead)"
        );
        assert_eq!(
            refusal(&scenario(
                json!({"reports": [{"name": "mrr", "result": {}, "error": {}}]})
            )),
            "parameter `$.expect.reports[0].error`: is given beside `result`; a report answers one of them"
        );
        assert_eq!(
            refusal(&scenario(
                json!({"reports": [{"name": "mrr", "error": {"code": "out_of_range"}}]})
            )),
            "parameter `$.expect.reports[0].error.message`: is required"
        );
        assert_eq!(
            refusal(&scenario(
                json!({"errors": [{"record": "invoices", "id": "i1"}]})
            )),
            "parameter `$.expect.errors[0].contains`: is required"
        );
        assert_eq!(
            refusal(&scenario(json!({"reports": {"name": "mrr"}}))),
            "parameter `$.expect.reports`: must be a list, got {\"name\":\"mrr\"}"
        );
    }
}
