//! Results of batch writes: one entry per input record, in input order. Also
//! the invoice writes that take JSON text (the lines of a JSONL file) rather
//! than parsed values.

use super::{Ledger, record_id};
use crate::error::{Error, Result};
use crate::model::Invoice;
use rayon::prelude::*;
use serde::Serialize;

impl Ledger {
    /// Upserts invoices given as JSON texts, one record each (the lines of a
    /// JSONL file): the same rules, errors and per-record results as
    /// [`Ledger::upsert_invoices`] on the parsed values, without building a
    /// `serde_json::Value` per record. Malformed JSON is that record's error.
    pub fn upsert_invoice_texts<S: AsRef<str> + Sync>(&mut self, texts: &[S]) -> WriteReport {
        let read = Ledger::read_invoice_texts(texts);
        self.upsert_read_invoices(read)
    }

    /// The first half of [`Ledger::upsert_invoice_texts`], which needs no
    /// ledger: each text's record id and its invoice or error, read on every
    /// core. A bulk load can read one batch while the previous one is stored.
    pub fn read_invoice_texts<S: AsRef<str> + Sync>(texts: &[S]) -> Vec<(String, Result<Invoice>)> {
        let read = |text: &S| {
            let text = text.as_ref();
            match Invoice::parse_text(text) {
                Ok(json) => (record_id(&json), Invoice::read_json(&json)),
                Err(error) => (String::new(), Err(error)),
            }
        };
        if texts.len() > 256 {
            texts.par_iter().map(read).collect()
        } else {
            texts.iter().map(read).collect()
        }
    }

    /// Makes room for `additional` more invoices, so a bulk load that knows
    /// (or estimates) its size stores them without growing the invoice table
    /// step by step (each step copies the whole table).
    pub fn reserve_invoices(&mut self, additional: usize) {
        self.invoices.reserve(additional);
    }

    /// The second half of [`Ledger::upsert_invoice_texts`]: checks the read
    /// invoices against the stored customers and plans, stores them and
    /// recomputes the touched customers.
    pub fn upsert_read_invoices(&mut self, read: Vec<(String, Result<Invoice>)>) -> WriteReport {
        self.store_invoices(read)
    }
}

/// Outcome of one record of a write.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ImportStatus {
    /// The record was stored (inserted or replaced).
    Inserted,
    /// The record was rejected; nothing of it was stored.
    Error,
}

/// One record's outcome: its id, whether it was stored, and why not.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct WriteResult {
    /// The record's id as given (`id`, else `external_id`), empty when it has none.
    pub id: String,
    /// Whether it was stored.
    pub import_status: ImportStatus,
    /// The error's message when it was rejected.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub import_error: Option<String>,
    /// The typed error behind `import_error` (boxed: a bulk load keeps one
    /// result per record, and most have none).
    #[serde(skip)]
    pub error: Option<Box<Error>>,
}

impl WriteResult {
    fn inserted(id: String) -> WriteResult {
        WriteResult {
            id,
            import_status: ImportStatus::Inserted,
            import_error: None,
            error: None,
        }
    }

    fn failed(id: String, error: Error) -> WriteResult {
        WriteResult {
            id,
            import_status: ImportStatus::Error,
            import_error: Some(error.to_string()),
            error: Some(Box::new(error)),
        }
    }
}

/// Batches larger than this build their results on every core.
const PARALLEL_BATCH: usize = 256;

/// Per-record outcomes of a batch write. Valid records are stored even when
/// others in the batch are rejected.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(transparent)]
pub struct WriteReport {
    /// One result per record, in the order given.
    pub results: Vec<WriteResult>,
}

impl WriteReport {
    pub(crate) fn push(&mut self, id: impl Into<String>, outcome: Result<(), Error>) {
        let id = id.into();
        self.results.push(match outcome {
            Ok(()) => WriteResult::inserted(id),
            Err(error) => WriteResult::failed(id, error),
        });
    }

    /// Every invoice of a batch as inserted, named by its id (built on
    /// every core for a large batch).
    pub(crate) fn inserted(invoices: &[Invoice]) -> WriteReport {
        let result = |invoice: &Invoice| WriteResult::inserted(invoice.id.to_string());
        let results = if invoices.len() > PARALLEL_BATCH {
            invoices.par_iter().map(result).collect()
        } else {
            invoices.iter().map(result).collect()
        };
        WriteReport { results }
    }

    /// Marks the record at `index` as rejected with `error`.
    pub(crate) fn fail(&mut self, index: usize, error: Error) {
        if let Some(result) = self.results.get_mut(index) {
            *result = WriteResult::failed(std::mem::take(&mut result.id), error);
        }
    }

    /// The results of read records, and the invoices among them in order.
    pub(crate) fn split(read: Vec<(String, Result<Invoice>)>) -> (WriteReport, Vec<Invoice>) {
        let mut results = Vec::with_capacity(read.len());
        let mut invoices = Vec::with_capacity(read.len());
        for (id, outcome) in read {
            results.push(match outcome {
                Ok(invoice) => {
                    invoices.push(invoice);
                    WriteResult::inserted(id)
                }
                Err(error) => WriteResult::failed(id, error),
            });
        }
        (WriteReport { results }, invoices)
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
    /// How many records there are in all, not only in this page.
    pub count: usize,
    /// The records of the page, in listing order.
    pub list: Vec<T>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    fn ledger() -> Ledger {
        let mut ledger = Ledger::default();
        ledger.upsert_plans(&[
            json!({"id": "m", "name": "Monthly", "billing_freq": "month", "currency": "USD"}),
        ]);
        ledger.upsert_customers(&[json!({"id": "a", "name": "A"})]);
        ledger
    }

    #[test]
    fn texts_are_written_like_values() {
        let values: Vec<Value> = vec![
            json!({"id": "i1", "customer_id": "a", "type": "subscription", "plan_id": "m",
                   "invoice_date": "2024-01-01", "amount": 3000, "currency": "USD"}),
            json!({"id": 2, "customer_id": "a", "type": "one-time", "invoice_date": "2024-01-05",
                   "amount": 100, "currency": "USD", "lines": [{"amount": 100}]}),
            json!({"id": "i3", "customer_id": "nobody", "type": "subscription", "plan_id": "m",
                   "invoice_date": "2024-01-01", "amount": 3000, "currency": "USD"}),
            json!({"external_id": "i4", "customer_id": "a", "type": "refund",
                   "invoice_date": "2024-01-01", "amount": 5, "currency": "USD"}),
            json!({"id": null, "external_id": "i5"}),
            json!(["not", "an", "object"]),
            json!({"id": "i1", "customer_id": "a", "type": "subscription", "plan_id": "m",
                   "invoice_date": "2024-02-01", "amount": 3500, "currency": "USD"}),
        ];
        let texts: Vec<String> = values.iter().map(Value::to_string).collect();
        let mut from_values = ledger();
        let mut from_texts = ledger();
        let expected = from_values.upsert_invoices(&values);
        let report = from_texts.upsert_invoice_texts(&texts);
        assert_eq!(report, expected);
        assert_eq!(report.accepted(), 3);
        assert_eq!(
            from_texts.invoice("i1").unwrap(),
            from_values.invoice("i1").unwrap()
        );

        let report = from_texts.upsert_invoice_texts(&["{\"id\": \"i9\",", "7"]);
        assert_eq!(report.results[0].id, "");
        assert_eq!(
            report.results[0].import_error.as_deref(),
            Some(
                "invoice ?: field `(record)`: is not valid JSON: EOF while parsing a value at line 1 column 12"
            )
        );
        assert_eq!(
            report.results[1].import_error.as_deref(),
            Some("invoice ?: field `(record)`: must be a JSON object")
        );
    }
}
