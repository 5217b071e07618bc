//! The one mapping from core errors to JavaScript: the native layer throws
//! an Error whose message is JSON `{code, message, recordId, field}`;
//! `index.js` turns it into a `SubmetricsError` with those properties.

use serde_json::json;

/// A core error as a napi error carrying the structured details.
pub fn to_napi(error: submetrics::Error) -> napi::Error {
    let details = json!({
        "code": error.code(),
        "message": error.to_string(),
        "recordId": error.record_id(),
        "field": error.field(),
    });
    napi::Error::from_reason(details.to_string())
}

/// A JavaScript argument the core cannot use, as an `invalid_argument` error.
pub fn invalid_argument(message: impl Into<String>) -> napi::Error {
    let details = json!({"code": "invalid_argument", "message": message.into(), "recordId": null, "field": null});
    napi::Error::from_reason(details.to_string())
}
