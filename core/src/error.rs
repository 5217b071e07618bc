//! The one error type of the crate. Every variant has a stable snake_case
//! [`Error::code`] (the API) and a message naming the record kind, id and field
//! where there is one (for humans).

use thiserror::Error;

/// Result alias used across the crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Everything that can go wrong in the engine.
#[derive(Debug, Clone, PartialEq, Error)]
#[non_exhaustive]
pub enum Error {
    /// A record failed validation; nothing of it was stored.
    #[error("{kind} {id}: field `{field}`: {reason}")]
    InvalidRecord {
        kind: &'static str,
        id: String,
        field: String,
        reason: String,
    },
    /// A record that was asked for does not exist.
    #[error("{kind} {id} not found")]
    NotFound { kind: &'static str, id: String },
    /// The write would break a reference or uniqueness rule.
    #[error("{kind} {id}: {reason}")]
    Conflict {
        kind: &'static str,
        id: String,
        reason: String,
    },
    /// A report name that the registry does not know.
    #[error("unknown report `{name}`; known reports: {known}")]
    UnknownReport { name: String, known: String },
    /// A parameter the report does not read: naming it, the nearest one it
    /// does read when that is a near miss, and all of them.
    #[error(
        "parameter `{param}`: report `{report}` has no such parameter{} Its parameters: {known}",
        did_you_mean(.suggestion)
    )]
    UnknownParameter {
        report: String,
        param: String,
        suggestion: Option<String>,
        known: String,
    },
    /// A report or query parameter with a value that cannot be used.
    #[error("parameter `{param}`: {reason}")]
    InvalidQuery { param: String, reason: String },
    /// A ledger setting with a value that cannot be used.
    #[error("setting `{setting}`: {reason}")]
    InvalidSetting { setting: String, reason: String },
    /// No exchange rate on or before the date for the currency.
    #[error("no exchange rate for {currency} on or before {date}")]
    MissingFxRate { currency: String, date: String },
    /// A report that has no partial form (see `reports::partial`).
    #[error("report {report} cannot be computed in parts yet")]
    PartialUnsupported { report: String },
    /// Two partials of different requests: `what` differs (the report,
    /// its parameters, `as_of` or the ledger settings).
    #[error(
        "partials of different requests do not merge: their {what} differ (`{left}` and `{right}`)"
    )]
    PartialMismatch {
        what: &'static str,
        left: String,
        right: String,
    },
    /// Bytes that are not a report partial of this format version.
    #[error("not a report partial: {reason}")]
    MalformedPartial { reason: String },
}

/// `; did you mean `name`?` for a suggestion, else a full stop.
fn did_you_mean(suggestion: &Option<String>) -> String {
    match suggestion {
        Some(name) => format!("; did you mean `{name}`?"),
        None => ".".to_string(),
    }
}

impl Error {
    /// The stable machine-readable code of this error (part of the API).
    pub fn code(&self) -> &'static str {
        match self {
            Error::InvalidRecord { .. } => "invalid_record",
            Error::NotFound { .. } => "not_found",
            Error::Conflict { .. } => "conflict",
            Error::UnknownReport { .. } => "unknown_report",
            Error::InvalidQuery { .. } | Error::UnknownParameter { .. } => "invalid_query",
            Error::InvalidSetting { .. } => "invalid_setting",
            Error::MissingFxRate { .. } => "missing_fx_rate",
            Error::PartialUnsupported { .. }
            | Error::PartialMismatch { .. }
            | Error::MalformedPartial { .. } => "invalid_partial",
        }
    }

    /// Every code [`Error::code`] can return, for catalogues and bindings.
    pub const CODES: &'static [&'static str] = &[
        "invalid_record",
        "not_found",
        "conflict",
        "unknown_report",
        "invalid_query",
        "invalid_setting",
        "missing_fx_rate",
        "invalid_partial",
    ];

    /// The record id the error is about, when there is one.
    pub fn record_id(&self) -> Option<&str> {
        match self {
            Error::InvalidRecord { id, .. }
            | Error::NotFound { id, .. }
            | Error::Conflict { id, .. } => Some(id),
            _ => None,
        }
    }

    /// The field or parameter the error is about, when there is one.
    pub fn field(&self) -> Option<&str> {
        match self {
            Error::InvalidRecord { field, .. } => Some(field),
            Error::InvalidQuery { param, .. } | Error::UnknownParameter { param, .. } => {
                Some(param)
            }
            Error::InvalidSetting { setting, .. } => Some(setting),
            _ => None,
        }
    }

    pub(crate) fn invalid(
        kind: &'static str,
        id: &str,
        field: &str,
        reason: impl Into<String>,
    ) -> Self {
        Error::InvalidRecord {
            kind,
            id: id.to_string(),
            field: field.to_string(),
            reason: reason.into(),
        }
    }

    pub(crate) fn query(param: &str, reason: impl Into<String>) -> Self {
        Error::InvalidQuery {
            param: param.to_string(),
            reason: reason.into(),
        }
    }
}
