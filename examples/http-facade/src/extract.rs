//! `Path` and `Query` extractors whose rejections are the service's JSON
//! errors (`{error, code}`, 400) instead of axum's plain text: a path
//! segment or query string that is not valid UTF-8 after percent-decoding,
//! or a query that does not parse, names what was wrong.

use crate::error::ApiError;
use axum::extract::FromRequestParts;
use axum::extract::path::ErrorKind;
use axum::extract::rejection::PathRejection;
use axum::http::request::Parts;
use serde::de::DeserializeOwned;

/// Path parameters, as [`axum::extract::Path`].
pub struct Path<T>(pub T);

/// Query parameters, as [`axum::extract::Query`].
pub struct Query<T>(pub T);

impl<T, S> FromRequestParts<S> for Path<T>
where
    T: DeserializeOwned + Send,
    S: Send + Sync,
{
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, ApiError> {
        axum::extract::Path::<T>::from_request_parts(parts, state)
            .await
            .map(|axum::extract::Path(value)| Path(value))
            .map_err(|rejection| {
                let text = format!(
                    "the path {} is not usable: {}",
                    requested_path(parts),
                    rejection.body_text()
                );
                match parameter_at_fault(&rejection) {
                    Some(name) => ApiError::bad_field(name, text),
                    None => ApiError::bad_request(text),
                }
            })
    }
}

/// The path of the request as the client sent it: a route nested under
/// `/v1` sees its path without the prefix, which a message naming the
/// path must not drop.
pub fn requested_path(parts: &Parts) -> &str {
    parts
        .extensions
        .get::<axum::extract::OriginalUri>()
        .map_or(parts.uri.path(), |original| original.0.path())
}

/// The path parameter a rejection is about, when it names one.
fn parameter_at_fault(rejection: &PathRejection) -> Option<String> {
    let PathRejection::FailedToDeserializePathParams(failed) = rejection else {
        return None;
    };
    match failed.kind() {
        ErrorKind::InvalidUtf8InPathParam { key }
        | ErrorKind::ParseErrorAtKey { key, .. }
        | ErrorKind::DeserializeError { key, .. } => Some(key.clone()),
        _ => None,
    }
}

impl<T, S> FromRequestParts<S> for Query<T>
where
    T: DeserializeOwned + Send,
    S: Send + Sync,
{
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, ApiError> {
        if let Some(query) = parts.uri.query() {
            query_names(query)?;
        }
        axum::extract::Query::<T>::from_request_parts(parts, state)
            .await
            .map(|axum::extract::Query(value)| Query(value))
            .map_err(|rejection| {
                ApiError::bad_request(format!(
                    "the query string is not usable: {}",
                    rejection.body_text()
                ))
            })
    }
}

/// The parameter names of `query`, percent-decoded, in order. Refuses a
/// name or value that is not UTF-8 once decoded (the form decoder would
/// silently replace the bytes) and a name given twice (`date=...&date=...`):
/// no parameter takes several values, and keeping one would silently drop
/// the other. Empty pairs (`a=1&&b=2`) name nothing.
pub fn query_names(query: &str) -> Result<Vec<String>, ApiError> {
    let mut names: Vec<String> = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for pair in query.split('&').filter(|pair| !pair.is_empty()) {
        let raw = pair.split('=').next().unwrap_or_default().replace('+', " ");
        let decoded = String::from_utf8(percent_decode(raw.as_bytes()));
        for part in pair.splitn(2, '=') {
            if std::str::from_utf8(&percent_decode(part.as_bytes())).is_err() {
                let text = format!(
                    "the query string is not usable: `{part}` is not valid UTF-8 once decoded"
                );
                return Err(match &decoded {
                    Ok(name) => ApiError::bad_field(name, text),
                    Err(_) => ApiError::bad_request(text),
                });
            }
        }
        let name = decoded.unwrap_or_default();
        if !seen.insert(name.clone()) {
            return Err(ApiError::bad_field(
                &name,
                format!("query parameter `{name}` is given more than once; give it once"),
            ));
        }
        names.push(name);
    }
    Ok(names)
}

/// The name of the first parameter of `query` whose value is empty or
/// blank once decoded (`customer=`, `customer=%20`, `customer` alone).
pub fn blank_parameter(query: &str) -> Option<String> {
    query
        .split('&')
        .filter(|pair| !pair.is_empty())
        .find_map(|pair| {
            let (name, value) = pair.split_once('=').unwrap_or((pair, ""));
            let decode = |text: &str| {
                String::from_utf8_lossy(&percent_decode(text.replace('+', " ").as_bytes()))
                    .into_owned()
            };
            decode(value).trim().is_empty().then(|| decode(name))
        })
}

/// Percent-decodes `bytes` (a `%` not followed by two hex digits stays).
fn percent_decode(bytes: &[u8]) -> Vec<u8> {
    let hex = |b: u8| (b as char).to_digit(16).map(|d| d as u8);
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && let (Some(high), Some(low)) = (
                bytes.get(i + 1).copied().and_then(hex),
                bytes.get(i + 2).copied().and_then(hex),
            )
        {
            out.push(high * 16 + low);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    out
}
