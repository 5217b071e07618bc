//! Conversions of JavaScript arguments: records, report parameters, instants.

use crate::errors::{invalid_argument, to_napi};
use serde_json::Value;
use submetrics::{ReportParams, Settings};

/// One record or an array of records.
pub fn records(value: Value) -> napi::Result<Vec<Value>> {
    match value {
        Value::Array(items) => Ok(items),
        Value::Object(map) => Ok(vec![Value::Object(map)]),
        _ => Err(invalid_argument(
            "expected a record object or an array of records",
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
        Some(_) => return Err(invalid_argument("report parameters must be an object")),
    }
    Ok(out)
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
    value: Option<String>,
    settings: &Settings,
) -> napi::Result<chrono::DateTime<chrono::Utc>> {
    match value {
        None => Ok(chrono::Utc::now()),
        Some(text) => submetrics::parse_as_of(&text, settings).map_err(to_napi),
    }
}
