//! `Path` and `Query` extractors whose rejections are the service's JSON
//! errors (`{error, code}`, 400) instead of axum's plain text: a path
//! segment or query string that is not valid UTF-8 after percent-decoding,
//! or a query that does not parse, names what was wrong.

use crate::error::ApiError;
use axum::extract::FromRequestParts;
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
                ApiError::bad_request(format!(
                    "the path {} is not usable: {}",
                    parts.uri.path(),
                    rejection.body_text()
                ))
            })
    }
}

impl<T, S> FromRequestParts<S> for Query<T>
where
    T: DeserializeOwned + Send,
    S: Send + Sync,
{
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, ApiError> {
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
