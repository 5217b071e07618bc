//! The one mapping from core errors to JavaScript: the native layer throws
//! an Error whose message is JSON `{code, message, recordId, field}`;
//! `index.js` turns it into a `SubmetricsError` with those properties.

use serde_json::json;

/// A core error as a napi error carrying the structured details.
pub fn to_napi(error: submetrics::Error) -> napi::Error {
    details(
        error.code(),
        error.to_string(),
        error.record_id(),
        error.field(),
    )
}

/// A napi error carrying `{code, message, recordId, field}` as JSON.
pub fn details(
    code: &str,
    message: impl Into<String>,
    record_id: Option<&str>,
    field: Option<&str>,
) -> napi::Error {
    let details = json!({
        "code": code,
        "message": message.into(),
        "recordId": record_id,
        "field": field,
    });
    napi::Error::from_reason(details.to_string())
}

/// A JavaScript argument the core cannot use, as an `invalid_argument` error.
pub fn invalid_argument(message: impl Into<String>) -> napi::Error {
    details("invalid_argument", message, None, None)
}
