//! The service's one error type and its JSON form `{error, code}` with an
//! honest status: 400 for input, 401/403 for keys and sessions, 404, 406
//! when no format a route answers in is acceptable, 409 for conflicts, 413
//! for bodies over the limit, 414/431 for request lines and heads over
//! theirs, 429 for too many requests (a key over its rate,
//! or failed logins), 502 when the payment platform fails, 503 while the
//! service cannot take the request, 500 only for the service's own
//! failures. A 500 never shows what failed inside (a driver's text): its
//! body carries an error id, logged on stderr with the cause.

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::json;

#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    /// The request is at fault; `field` names the parameter, header or body
    /// field that is, when one is.
    #[error("{text}")]
    BadRequest { text: String, field: Option<String> },
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
    /// The request's `Accept` header refuses every format the route
    /// answers in; the answer names `Accept` in `field`. Only the header
    /// is refused so: a `format=` the route does not offer is a 400 naming
    /// `format`, and a `format=` it offers wins over the header.
    #[error("{0}")]
    NotAcceptable(String),
    /// The body's `Content-Encoding` or `Content-Type` (the header named,
    /// which the answer gives in `field`) is not one the service reads.
    #[error("{message}")]
    UnsupportedMediaType {
        header: &'static str,
        message: String,
    },
    #[error("{0}")]
    UriTooLong(String),
    #[error("{0}")]
    HeadersTooLarge(String),
    /// The request's body did not arrive within the body deadline
    /// (`--body-timeout`); answered `408` and the connection is closed.
    #[error("{0}")]
    BodyTimeout(String),
    /// Too many requests: a key over its rate, or too many failed logins;
    /// answered with `Retry-After` (whole seconds until a retry may pass).
    #[error("{text}")]
    TooManyRequests { text: String, retry_after: u64 },
    /// The service cannot take the request now (over a limit, or its
    /// storage is degraded); answered with `Retry-After` where a retry
    /// helps.
    #[error("{0}")]
    Unavailable(String),
    /// A service this one calls (the payment platform) failed or refused.
    #[error("{0}")]
    Upstream(String),
    /// An error of the core, with its stable code.
    #[error("{0}")]
    Core(#[from] submetrics::Error),
    #[error("{0}")]
    Internal(String),
    /// The database failed; see [`ApiError::storage_fault`].
    #[error("storage failed: {0}")]
    Storage(rusqlite::Error),
}

/// Why the database cannot take writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StorageFault {
    /// The database file or its directory cannot be written.
    ReadOnly,
    /// The disk (or the database's size limit) is full.
    Full,
    /// Reading or writing the files failed.
    Io,
    /// Another process holds the database's lock.
    Busy,
}

impl std::fmt::Display for StorageFault {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            StorageFault::ReadOnly => "the database is read-only",
            StorageFault::Full => "the disk holding the database is full",
            StorageFault::Io => "the database files cannot be read or written",
            StorageFault::Busy => "another process holds the database's lock",
        })
    }
}

impl ApiError {
    pub fn bad_request(text: impl Into<String>) -> ApiError {
        ApiError::BadRequest {
            text: text.into(),
            field: None,
        }
    }

    /// A 400 about the parameter, header or body field `field`, named as
    /// the request named it.
    pub fn bad_field(field: impl Into<String>, text: impl Into<String>) -> ApiError {
        ApiError::BadRequest {
            text: text.into(),
            field: Some(field.into()),
        }
    }

    /// This error, naming `field` if it is a 400 that names none yet.
    pub fn at_field(self, field: &str) -> ApiError {
        match self {
            ApiError::BadRequest { text, field: None } => ApiError::bad_field(field, text),
            other => other,
        }
    }

    pub fn internal(text: impl Into<String>) -> ApiError {
        ApiError::Internal(text.into())
    }

    pub fn storage(error: rusqlite::Error) -> ApiError {
        ApiError::Storage(error)
    }

    /// The same failure once more, for each caller a shared failure (a
    /// group commit's) answers.
    pub fn again(&self) -> ApiError {
        match self {
            ApiError::Storage(rusqlite::Error::SqliteFailure(error, text)) => {
                ApiError::Storage(rusqlite::Error::SqliteFailure(*error, text.clone()))
            }
            other => ApiError::Internal(other.to_string()),
        }
    }

    /// What kind of storage failure this is, when it is one the service
    /// cannot mend by itself (the request is not at fault).
    pub fn storage_fault(&self) -> Option<StorageFault> {
        let ApiError::Storage(rusqlite::Error::SqliteFailure(error, _)) = self else {
            return None;
        };
        use rusqlite::ErrorCode;
        match error.code {
            ErrorCode::ReadOnly | ErrorCode::CannotOpen | ErrorCode::PermissionDenied => {
                Some(StorageFault::ReadOnly)
            }
            ErrorCode::DiskFull | ErrorCode::TooBig => Some(StorageFault::Full),
            ErrorCode::SystemIoFailure => Some(StorageFault::Io),
            ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked => Some(StorageFault::Busy),
            _ => None,
        }
    }

    pub fn status(&self) -> StatusCode {
        match self {
            ApiError::BadRequest { .. } => StatusCode::BAD_REQUEST,
            ApiError::Unauthorized(_) => StatusCode::UNAUTHORIZED,
            ApiError::Forbidden(_) => StatusCode::FORBIDDEN,
            ApiError::NotFound(_) => StatusCode::NOT_FOUND,
            ApiError::Conflict(_) => StatusCode::CONFLICT,
            ApiError::TooLarge(_) => StatusCode::PAYLOAD_TOO_LARGE,
            ApiError::MethodNotAllowed(_) => StatusCode::METHOD_NOT_ALLOWED,
            ApiError::NotAcceptable(_) => StatusCode::NOT_ACCEPTABLE,
            ApiError::UnsupportedMediaType { .. } => StatusCode::UNSUPPORTED_MEDIA_TYPE,
            ApiError::UriTooLong(_) => StatusCode::URI_TOO_LONG,
            ApiError::HeadersTooLarge(_) => StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE,
            ApiError::BodyTimeout(_) => StatusCode::REQUEST_TIMEOUT,
            ApiError::Unavailable(_) => StatusCode::SERVICE_UNAVAILABLE,
            ApiError::TooManyRequests { .. } => StatusCode::TOO_MANY_REQUESTS,
            ApiError::Upstream(_) => StatusCode::BAD_GATEWAY,
            ApiError::Core(error) => match error {
                submetrics::Error::NotFound { .. } | submetrics::Error::UnknownReport { .. } => {
                    StatusCode::NOT_FOUND
                }
                submetrics::Error::Conflict { .. } => StatusCode::CONFLICT,
                _ => StatusCode::BAD_REQUEST,
            },
            ApiError::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
            ApiError::Storage(_) => match self.storage_fault() {
                Some(_) => StatusCode::SERVICE_UNAVAILABLE,
                None => StatusCode::INTERNAL_SERVER_ERROR,
            },
        }
    }

    pub fn code(&self) -> &'static str {
        match self {
            ApiError::BadRequest { .. } => "bad_request",
            ApiError::Unauthorized(_) => "unauthorized",
            ApiError::Forbidden(_) => "forbidden",
            ApiError::NotFound(_) => "not_found",
            ApiError::Conflict(_) => "conflict",
            ApiError::TooLarge(_) => "payload_too_large",
            ApiError::MethodNotAllowed(_) => "method_not_allowed",
            ApiError::NotAcceptable(_) => "not_acceptable",
            ApiError::UnsupportedMediaType { .. } => "unsupported_media_type",
            ApiError::UriTooLong(_) => "uri_too_long",
            ApiError::HeadersTooLarge(_) => "headers_too_large",
            ApiError::BodyTimeout(_) => "request_timeout",
            ApiError::Unavailable(_) => "unavailable",
            ApiError::TooManyRequests { .. } => "rate_limited",
            ApiError::Upstream(_) => "upstream",
            ApiError::Core(error) => error.code(),
            ApiError::Internal(_) => "internal",
            ApiError::Storage(_) => match self.storage_fault() {
                Some(_) => "storage_unavailable",
                None => "internal",
            },
        }
    }

    /// The JSON body of the answer. A service failure is logged on stderr
    /// with its cause under a new error id, and the body names only that id.
    pub fn body(&self) -> serde_json::Value {
        if let ApiError::Internal(_) | ApiError::Storage(_) = self {
            let id = error_id();
            eprintln!("error {id}: {self}");
            let what = match self.storage_fault() {
                Some(fault) => format!("{fault}; nothing was changed"),
                None => "the service failed to complete the request".to_string(),
            };
            return json!({
                "error": format!("{what} (error id {id})"),
                "code": self.code(),
                "error_id": id,
            });
        }
        let mut body = json!({ "error": self.to_string(), "code": self.code() });
        match self {
            ApiError::Core(error) => {
                if let Some(id) = error.record_id() {
                    body["id"] = json!(id);
                }
                if let Some(field) = error.field() {
                    body["field"] = json!(field);
                }
            }
            ApiError::BadRequest {
                field: Some(field), ..
            } => body["field"] = json!(field),
            ApiError::NotAcceptable(_) => body["field"] = json!("Accept"),
            ApiError::UnsupportedMediaType { header, .. } => body["field"] = json!(header),
            _ => {}
        }
        body
    }
}

/// A new id for a logged failure: `err_` and 16 hex digits.
fn error_id() -> String {
    let mut bytes = [0u8; 8];
    if getrandom::fill(&mut bytes).is_err() {
        // The clock is unique enough to find the log line.
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |elapsed| elapsed.as_nanos());
        bytes = (nanos as u64).to_le_bytes();
    }
    format!("err_{:016x}", u64::from_le_bytes(bytes))
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let mut response = (self.status(), axum::Json(self.body())).into_response();
        if let ApiError::TooManyRequests { retry_after, .. } = self {
            response.headers_mut().insert(
                axum::http::header::RETRY_AFTER,
                axum::http::HeaderValue::from(retry_after),
            );
        }
        response
    }
}
