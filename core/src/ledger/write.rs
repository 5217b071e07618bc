//! Results of batch writes: one entry per input record, in input order.

use crate::error::Error;
use serde::Serialize;

/// Outcome of one record of a write.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ImportStatus {
    Inserted,
    Error,
}

/// One record's outcome: its id, whether it was stored, and why not.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct WriteResult {
    pub id: String,
    pub import_status: ImportStatus,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub import_error: Option<String>,
    /// The typed error behind `import_error`.
    #[serde(skip)]
    pub error: Option<Error>,
}

/// Per-record outcomes of a batch write. Valid records are stored even when
/// others in the batch are rejected.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(transparent)]
pub struct WriteReport {
    pub results: Vec<WriteResult>,
}

impl WriteReport {
    pub(crate) fn push(&mut self, id: &str, outcome: Result<(), Error>) {
        self.results.push(match outcome {
            Ok(()) => WriteResult {
                id: id.to_string(),
                import_status: ImportStatus::Inserted,
                import_error: None,
                error: None,
            },
            Err(error) => WriteResult {
                id: id.to_string(),
                import_status: ImportStatus::Error,
                import_error: Some(error.to_string()),
                error: Some(error),
            },
        });
    }

    /// How many records were stored.
    pub fn accepted(&self) -> usize {
        self.results
            .iter()
            .filter(|r| r.import_status == ImportStatus::Inserted)
            .count()
    }

    /// The rejected records with their errors.
    pub fn rejected(&self) -> impl Iterator<Item = &WriteResult> {
        self.results
            .iter()
            .filter(|r| r.import_status == ImportStatus::Error)
    }
}

/// A page of a listing: the total count and the records of the page.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Page<T> {
    pub count: usize,
    pub list: Vec<T>,
}
