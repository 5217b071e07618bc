//! The service's one error type and its JSON form `{error, code}` with an
//! honest status: 400 for input, 401/403 for keys, 404, 409 for conflicts,
//! 413 for bodies over the limit, 502 when the payment platform fails, 500
//! only for the service's own failures.

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::json;

#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    #[error("{0}")]
    BadRequest(String),
    #[error("{0}")]
    Unauthorized(String),
    #[error("{0}")]
    Forbidden(String),
    #[error("{0}")]
    NotFound(String),
    #[error("{0}")]
    Conflict(String),
    #[error("{0}")]
    TooLarge(String),
    #[error("{0}")]
    MethodNotAllowed(String),
    /// A service this one calls (the payment platform) failed or refused.
    #[error("{0}")]
    Upstream(String),
    /// An error of the core, with its stable code.
    #[error("{0}")]
    Core(#[from] submetrics::Error),
    #[error("{0}")]
    Internal(String),
}

impl ApiError {
    pub fn bad_request(text: impl Into<String>) -> ApiError {
        ApiError::BadRequest(text.into())
    }

    pub fn internal(text: impl Into<String>) -> ApiError {
        ApiError::Internal(text.into())
    }

    pub fn storage(error: rusqlite::Error) -> ApiError {
        ApiError::Internal(format!("storage failed: {error}"))
    }

    pub fn status(&self) -> StatusCode {
        match self {
            ApiError::BadRequest(_) => StatusCode::BAD_REQUEST,
            ApiError::Unauthorized(_) => StatusCode::UNAUTHORIZED,
            ApiError::Forbidden(_) => StatusCode::FORBIDDEN,
            ApiError::NotFound(_) => StatusCode::NOT_FOUND,
            ApiError::Conflict(_) => StatusCode::CONFLICT,
            ApiError::TooLarge(_) => StatusCode::PAYLOAD_TOO_LARGE,
            ApiError::MethodNotAllowed(_) => StatusCode::METHOD_NOT_ALLOWED,
            ApiError::Upstream(_) => StatusCode::BAD_GATEWAY,
            ApiError::Core(error) => match error {
                submetrics::Error::NotFound { .. } | submetrics::Error::UnknownReport { .. } => {
                    StatusCode::NOT_FOUND
                }
                submetrics::Error::Conflict { .. } => StatusCode::CONFLICT,
                _ => StatusCode::BAD_REQUEST,
            },
            ApiError::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }

    pub fn code(&self) -> &'static str {
        match self {
            ApiError::BadRequest(_) => "bad_request",
            ApiError::Unauthorized(_) => "unauthorized",
            ApiError::Forbidden(_) => "forbidden",
            ApiError::NotFound(_) => "not_found",
            ApiError::Conflict(_) => "conflict",
            ApiError::TooLarge(_) => "payload_too_large",
            ApiError::MethodNotAllowed(_) => "method_not_allowed",
            ApiError::Upstream(_) => "upstream",
            ApiError::Core(error) => error.code(),
            ApiError::Internal(_) => "internal",
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let mut body = json!({ "error": self.to_string(), "code": self.code() });
        if let ApiError::Core(error) = &self {
            if let Some(id) = error.record_id() {
                body["id"] = json!(id);
            }
            if let Some(field) = error.field() {
                body["field"] = json!(field);
            }
        }
        (self.status(), axum::Json(body)).into_response()
    }
}
