//! Conversions of JavaScript arguments: records, report parameters, instants.

use crate::errors::{details, to_napi};
use serde_json::Value;
use submetrics::reports::{ParamView, check_param_names};
use submetrics::{Ledger, ReportParams, Settings};

/// One record or an array of records.
pub fn records(value: Value) -> napi::Result<Vec<Value>> {
    match value {
        Value::Array(items) => Ok(items),
        Value::Object(map) => Ok(vec![Value::Object(map)]),
        _ => Err(details(
            "invalid_record",
            "expected a record object or an array of records",
            None,
            Some("(record)"),
        )),
    }
}

/// The parameters of the query `view` from a plain object: strings as they
/// are, booleans `true`/`false`, arrays space-separated, numbers as text.
/// A `null` (index.js sends `undefined` as `null`) means the parameter's
/// default and is left out, but its name must be one `view` reads: the
/// core checks every name ([`submetrics::reports::check_param_names`]).
pub fn params(value: Option<Value>, view: ParamView<'_>) -> napi::Result<ReportParams> {
    let mut out = ReportParams::new();
    let mut unset = Vec::new();
    match value {
        None | Some(Value::Null) => {}
        Some(Value::Object(map)) => {
            for (key, value) in map {
                match param_text(&key, &value)? {
                    Some(text) => {
                        out.insert(key, text);
                    }
                    None => unset.push(key),
                }
            }
        }
        Some(_) => {
            return Err(details(
                "invalid_query",
                "report parameters must be an object",
                None,
                Some("params"),
            ));
        }
    }
    check_param_names(view, &out, &unset).map_err(to_napi)?;
    Ok(out)
}

/// The parameters with those named in `instants` (given as `Date`s, sent
/// as ISO instants by index.js) made their day in the ledger's time zone:
/// the core decides.
pub fn resolve(
    ledger: &Ledger,
    mut params: ReportParams,
    instants: &[String],
) -> napi::Result<ReportParams> {
    for name in instants {
        if let Some(text) = params.get(name) {
            let day = ledger.param_day(name, text).map_err(to_napi)?;
            params.insert(name.clone(), day.to_string());
        }
    }
    Ok(params)
}

/// A parameter's text: a string as it is, a number or a boolean as JSON
/// writes it, an array of those space-separated; `null` is absent. An
/// object, or an array holding one, is an `invalid_query` error naming the
/// parameter: its JSON text would filter on text nobody wrote.
fn param_text(name: &str, value: &Value) -> napi::Result<Option<String>> {
    let scalar = |value: &Value| match value {
        Value::String(s) => Ok(s.clone()),
        Value::Number(_) | Value::Bool(_) => Ok(value.to_string()),
        _ => Err(details(
            "invalid_query",
            format!(
                "parameter `{name}`: a parameter value is text, a number, a boolean, a Date or an array of those"
            ),
            None,
            Some(name),
        )),
    };
    match value {
        Value::Null => Ok(None),
        Value::Array(items) => {
            let parts = items
                .iter()
                .filter(|item| !item.is_null())
                .map(scalar)
                .collect::<napi::Result<Vec<_>>>()?;
            Ok(Some(submetrics::reports::list_text(parts)))
        }
        other => scalar(other).map(Some),
    }
}

/// An instant given as ISO text (index.js turns Dates into text); absent is now.
pub fn as_of(
    value: Option<&str>,
    settings: &Settings,
) -> napi::Result<chrono::DateTime<chrono::Utc>> {
    match value {
        None => Ok(chrono::Utc::now()),
        Some(text) => submetrics::parse_as_of(text, settings).map_err(to_napi),
    }
}
