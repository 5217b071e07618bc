//! Conversions of JavaScript arguments: records, report parameters, instants.

use crate::errors::{details, to_napi};
use serde_json::Value;
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

/// Report parameters from a plain object: strings as they are, booleans
/// `true`/`false`, arrays space-separated, numbers as text.
pub fn params(value: Option<Value>) -> napi::Result<ReportParams> {
    let mut out = ReportParams::new();
    match value {
        None | Some(Value::Null) => {}
        Some(Value::Object(map)) => {
            for (key, value) in map {
                if let Some(text) = param_text(&value) {
                    out.insert(key, text);
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

fn param_text(value: &Value) -> Option<String> {
    match value {
        Value::Null => None,
        Value::String(s) => Some(s.clone()),
        Value::Array(items) => Some(
            items
                .iter()
                .filter_map(param_text)
                .collect::<Vec<_>>()
                .join(" "),
        ),
        other => Some(other.to_string()),
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
