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
        /// The record kind (`customer`, `plan`, `invoice`, ...).
        kind: &'static str,
        /// The record's id, `?` when it has none yet.
        id: String,
        /// The field as the record wrote it, with a path for nested ones
        /// (`lines[2].amount`).
        field: String,
        /// What is wrong with the value.
        reason: String,
    },
    /// A record that was asked for does not exist.
    #[error("{kind} {id} not found")]
    NotFound {
        /// The record kind asked for.
        kind: &'static str,
        /// The id asked for.
        id: String,
    },
    /// The write would break a reference or uniqueness rule.
    #[error("{kind} {id}: {reason}")]
    Conflict {
        /// The kind of the record being written or deleted.
        kind: &'static str,
        /// Its id.
        id: String,
        /// The rule the write would break.
        reason: String,
    },
    /// A report name that the registry does not know.
    #[error("unknown report `{name}`; known reports: {known}")]
    UnknownReport {
        /// The name given.
        name: String,
        /// Every known report name, comma-separated.
        known: String,
    },
    /// A parameter the report does not read: naming it, the nearest one it
    /// does read when that is a near miss, and all of them.
    #[error(
        "parameter `{param}`: report `{report}` has no such parameter{} Its parameters: {known}",
        did_you_mean(.suggestion)
    )]
    UnknownParameter {
        /// The report asked for.
        report: String,
        /// The parameter it does not read.
        param: String,
        /// The known parameter the name is a near miss of, if any.
        suggestion: Option<String>,
        /// Every parameter the report reads, comma-separated.
        known: String,
    },
    /// A report or query parameter with a value that cannot be used.
    #[error("parameter `{param}`: {reason}")]
    InvalidQuery {
        /// The parameter (or `as_of`).
        param: String,
        /// Why its value cannot be used.
        reason: String,
    },
    /// A ledger setting with a value that cannot be used.
    #[error("setting `{setting}`: {reason}")]
    InvalidSetting {
        /// The setting's name.
        setting: String,
        /// Why its value cannot be used.
        reason: String,
    },
    /// No exchange rate on or before the date for the currency.
    #[error("no exchange rate for {currency} on or before {date}")]
    MissingFxRate {
        /// The currency that has no rate.
        currency: String,
        /// The date needing the rate (ISO 8601).
        date: String,
    },
    /// An amount the data leads to (a conversion, a total, an ARR) lies
    /// outside what its type holds (64-bit cents, or a `Float64` column
    /// holding whole numbers exactly): answered as an error, never wrapped,
    /// capped or rounded.
    #[error("{what} is outside the range of {range}")]
    OutOfRange {
        /// The amount and how it came about.
        what: String,
        /// What holds it and how far it reaches ([`Error::CENTS`]).
        range: &'static str,
    },
    /// A report that has no partial form (see [`Ledger::report_partial`]).
    ///
    /// [`Ledger::report_partial`]: crate::Ledger::report_partial
    #[error("report {report} cannot be computed in parts yet")]
    PartialUnsupported {
        /// The report asked for.
        report: String,
    },
    /// Two partials of different requests: `what` differs (the report,
    /// its parameters, `as_of` or the ledger settings).
    #[error(
        "partials of different requests do not merge: their {what} differ (`{left}` and `{right}`)"
    )]
    PartialMismatch {
        /// What differs: `reports`, `parameters`, `as_of` or `settings`.
        what: &'static str,
        /// That part of the first partial's request.
        left: String,
        /// That part of the second partial's request.
        right: String,
    },
    /// Bytes that are not a report partial of this format version.
    #[error("not a report partial: {reason}")]
    MalformedPartial {
        /// What is wrong with the bytes.
        reason: String,
    },
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
            Error::OutOfRange { .. } => "out_of_range",
            Error::PartialUnsupported { .. }
            | Error::PartialMismatch { .. }
            | Error::MalformedPartial { .. } => "invalid_partial",
        }
    }

    /// The range of an amount in cents: what [`Error::OutOfRange`] says of
    /// one beyond it.
    pub const CENTS: &'static str = "64-bit cents (at most 9223372036854775807 either way)";

    /// Every code [`Error::code`] can return, for catalogues and bindings.
    pub const CODES: &'static [&'static str] = &[
        "invalid_record",
        "not_found",
        "conflict",
        "unknown_report",
        "invalid_query",
        "invalid_setting",
        "missing_fx_rate",
        "out_of_range",
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

    /// This error as report `report` answers it: an amount out of range
    /// names the report before the figure (`report `mrr`: the `total_mrr`
    /// of ...`); other errors name what they are about already.
    pub(crate) fn in_report(self, report: &str) -> Self {
        match self {
            Error::OutOfRange { what, range } => Error::OutOfRange {
                what: format!("report `{report}`: {what}"),
                range,
            },
            other => other,
        }
    }

    pub(crate) fn query(param: &str, reason: impl Into<String>) -> Self {
        Error::InvalidQuery {
            param: param.to_string(),
            reason: reason.into(),
        }
    }
}
