//! Results of batch writes: one entry per input record, in input order. Also
//! the writes that take JSON text (the lines of a JSONL file) or record trees
//! (a binding's objects) rather than `serde_json::Value`s.

use super::stream::{plain_or, read_each, read_record};
use super::{ReadCustomers, ReadInvoices, RecordKind, Store};
use crate::error::{Error, Result};
use crate::fx::read_rates;
use crate::model::{Invoice, Json};
use compact_str::CompactString;
use rayon::prelude::*;
use serde::Serialize;

impl Store {
    /// Upserts invoices given as JSON texts, one record each (the lines of a
    /// JSONL file): the same rules, errors and per-record results as
    /// [`Store::upsert_invoices`] on the parsed values, without building a
    /// `serde_json::Value` per record. Malformed JSON is that record's error.
    pub fn upsert_invoice_texts<S: AsRef<str> + Sync>(&mut self, texts: &[S]) -> WriteReport {
        let read = Store::read_invoice_texts(texts);
        self.upsert_read_invoices(read)
    }

    /// The first half of [`Store::upsert_invoice_texts`], which needs no
    /// ledger: each text's record id and its invoice or error, read on every
    /// core. A bulk load can read one batch while the previous one is stored.
    /// A flat line of plain values is read straight into its invoice
    /// ([`Invoice::from_flat_text`]); any other goes through a record tree.
    pub fn read_invoice_texts<S: AsRef<str> + Sync>(texts: &[S]) -> ReadInvoices {
        read_each(texts.len(), |i, recent| {
            let text = texts[i].as_ref();
            plain_or(
                Invoice::from_flat_text(text, recent),
                || match Invoice::parse_text(text) {
                    Ok(json) => read_record(&json, recent),
                    Err(error) => (CompactString::default(), Err(error)),
                },
            )
        })
    }

    /// Upserts records of `kind` given as record trees, as a binding reads
    /// them from its language's objects (no `serde_json::Value` and no text
    /// in between): the same rules, per-record results and errors as
    /// [`Store::upsert`] on the equal values. Invoices are read on every
    /// core.
    pub fn upsert_trees(&mut self, kind: RecordKind, records: &[Json<'_>]) -> WriteReport {
        match kind {
            RecordKind::Customers => self.write_customers(records),
            RecordKind::Plans => self.write_plans(records),
            RecordKind::PlanGroups => self.write_plan_groups(records),
            RecordKind::DataSources => self.write_data_sources(records),
            RecordKind::Invoices => {
                let read = Store::read_invoice_trees(records);
                self.store_invoices(read)
            }
        }
    }

    /// The first half of an invoice [`Store::upsert_trees`], which needs no
    /// ledger: each tree's record id and its invoice or error, read on every
    /// core.
    pub fn read_invoice_trees(records: &[Json<'_>]) -> ReadInvoices {
        read_each(records.len(), |i, recent| {
            plain_or(Invoice::from_flat_tree(&records[i], recent), || {
                read_record(&records[i], recent)
            })
        })
    }

    /// The first half of a customer [`Store::upsert_trees`], which needs no
    /// ledger: each tree's record id and its customer or error, read on
    /// every core.
    pub fn read_customer_trees(records: &[Json<'_>]) -> ReadCustomers {
        let records: Vec<&Json<'_>> = records.iter().collect();
        Store::read_customers(&records)
    }

    /// [`Store::read_invoice_trees`] of trees that `next` produces chunk
    /// by chunk on the calling thread (a binding reading its language's
    /// objects, which only that thread may touch), each chunk read on the
    /// other cores while the next is produced: every tree's record id and
    /// its invoice or error, in order. The first error of `next` ends the
    /// read and is the answer.
    pub fn read_invoice_chunks<'b, E>(
        mut next: impl FnMut() -> std::result::Result<Option<Vec<Json<'b>>>, E>,
    ) -> std::result::Result<ReadInvoices, E> {
        std::thread::scope(|scope| {
            let (send, receive) = std::sync::mpsc::sync_channel::<Vec<Json<'b>>>(2);
            let reader = scope.spawn(move || {
                let mut read = Vec::new();
                for chunk in receive {
                    read.extend(Store::read_invoice_trees(&chunk));
                }
                read
            });
            let produced = loop {
                match next() {
                    Ok(Some(chunk)) => {
                        if send.send(chunk).is_err() {
                            break Ok(());
                        }
                    }
                    Ok(None) => break Ok(()),
                    Err(error) => break Err(error),
                }
            };
            drop(send);
            let read = reader
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
            produced.map(|()| read)
        })
    }

    /// [`Store::load_fx_rates`] of rows given as record trees: every row is
    /// valid and loaded, or none is.
    pub fn load_fx_rates_trees(&mut self, rows: &[Json<'_>]) -> Result<usize> {
        let rates = read_rates(rows.iter())?;
        self.insert_fx_rates(rates)
    }

    /// Makes room for `additional` more customers, so a bulk load that
    /// knows (or estimates) its size stores them without growing step by
    /// step (each step copies every customer). A hint: room the allocator
    /// refuses (a file's row count that no memory holds) is not made.
    pub fn reserve_customers(&mut self, additional: usize) {
        if self.customers.try_reserve(additional).is_ok() {
            let _ = self.invoices_by_customer.try_reserve(additional);
            self.customer_index.reserve(additional);
        }
    }

    /// Makes room for `additional` more invoices, so a bulk load that knows
    /// (or estimates) its size stores them without growing the invoice table
    /// step by step (each step copies the whole table). A hint: room the
    /// allocator refuses (a file's row count that no memory holds) is not
    /// made.
    pub fn reserve_invoices(&mut self, additional: usize) {
        self.invoices.reserve(additional);
    }

    /// The second half of [`Store::upsert_invoice_texts`]: checks the read
    /// invoices against the stored customers and plans, stores them and
    /// recomputes the touched customers.
    pub fn upsert_read_invoices(&mut self, read: ReadInvoices) -> WriteReport {
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
    /// The record's id as given (`id`, else `external_id`), empty when it
    /// has none (held inline up to 24 bytes: a bulk load keeps one result
    /// per record).
    pub id: CompactString,
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
    pub(crate) fn inserted(id: CompactString) -> WriteResult {
        WriteResult {
            id,
            import_status: ImportStatus::Inserted,
            import_error: None,
            error: None,
        }
    }

    pub(crate) fn failed(id: CompactString, error: Error) -> WriteResult {
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
    pub(crate) fn push(&mut self, id: impl Into<CompactString>, outcome: Result<(), Error>) {
        let id = id.into();
        self.results.push(match outcome {
            Ok(()) => WriteResult::inserted(id),
            Err(error) => WriteResult::failed(id, error),
        });
    }

    /// Every invoice of a batch as inserted, named by its id (built on
    /// every core for a large batch).
    pub(crate) fn inserted(invoices: &[Invoice]) -> WriteReport {
        let result = |invoice: &Invoice| WriteResult::inserted(invoice.id.as_str().into());
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
    pub(crate) fn split(read: ReadInvoices) -> (WriteReport, Vec<Invoice>) {
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

    fn ledger() -> Store {
        let mut ledger = Store::new(crate::model::Settings::default());
        ledger.upsert_plans(&[
            json!({"id": "m", "name": "Monthly", "billing_freq": "month", "currency": "USD"}),
        ]);
        ledger.upsert_customers(&[json!({"id": "a", "name": "A"})]);
        ledger
    }

    #[test]
    fn trees_are_written_like_values_for_every_kind() {
        let batches: Vec<(RecordKind, Vec<Value>)> = vec![
            (
                RecordKind::Plans,
                vec![
                    json!({"id": "y", "name": "Yearly", "interval": "year", "currency": "USD"}),
                    json!({"id": "bad", "name": "Bad", "billing_freq": "fortnight"}),
                ],
            ),
            (
                RecordKind::Customers,
                vec![
                    json!({"id": "b", "name": "B", "custom_variables": {"z": 1, "a": "x", "n": null}}),
                    json!({"id": 7, "name": "Seven"}),
                    json!({"name": "nameless"}),
                    json!("text"),
                ],
            ),
            (
                RecordKind::PlanGroups,
                vec![
                    json!({"name": "All", "plans": ["m", "y"]}),
                    json!({"id": "g", "name": "G", "plans": ["nope"]}),
                ],
            ),
            (
                RecordKind::DataSources,
                vec![json!({"id": "ds", "name": "Billing"}), json!({"id": ""})],
            ),
            (
                RecordKind::Invoices,
                vec![
                    json!({"id": "i1", "customer_id": "b", "type": "subscription", "plan_id": "y",
                           "invoice_date": "2024-01-01", "amount": 12000, "currency": "USD",
                           "lines": [{"amount": 12000, "period_start": "2024-01-01"}]}),
                    json!({"id": "i2", "customer_id": "b", "type": "one-time",
                           "invoice_date": "2024-01-05", "amount": 1.5, "currency": "USD"}),
                    json!({"id": "i3", "customer_id": "b", "type": "one-time",
                           "invoice_date": "2024-01-05", "amount": 100, "currency": "USD",
                           "transactions": [{"type": "payment"}]}),
                ],
            ),
        ];
        let mut from_values = ledger();
        let mut from_trees = ledger();
        for (kind, values) in &batches {
            let texts: Vec<String> = values.iter().map(Value::to_string).collect();
            let trees: Vec<Json> = texts.iter().map(|t| Json::parse(t).unwrap()).collect();
            let expected = from_values.upsert(*kind, values);
            assert_eq!(from_trees.upsert_trees(*kind, &trees), expected, "{kind:?}");
            assert!(expected.rejected().count() > 0, "{kind:?}");
        }
        assert_eq!(
            serde_json::to_value(from_trees.customer("b").unwrap()).unwrap(),
            serde_json::to_value(from_values.customer("b").unwrap()).unwrap()
        );
        assert_eq!(
            from_trees.invoice("i1").unwrap(),
            from_values.invoice("i1").unwrap()
        );

        let texts: Vec<String> = batches[4].1.iter().map(Value::to_string).collect();
        let mut chunks = texts.chunks(2).map(|chunk| {
            Ok::<_, ()>(Some(
                chunk.iter().map(|t| Json::parse(t).unwrap()).collect(),
            ))
        });
        let read = Store::read_invoice_chunks(|| chunks.next().unwrap_or(Ok(None))).unwrap();
        let trees: Vec<Json> = texts.iter().map(|t| Json::parse(t).unwrap()).collect();
        let expected = Store::read_invoice_trees(&trees);
        assert_eq!(read.len(), 3);
        for ((id, invoice), (expected_id, expected_invoice)) in read.iter().zip(&expected) {
            assert_eq!(id, expected_id);
            assert_eq!(
                invoice.as_ref().map_err(ToString::to_string),
                expected_invoice.as_ref().map_err(ToString::to_string)
            );
        }
        let mut calls = 0;
        let failed = Store::read_invoice_chunks(|| {
            calls += 1;
            if calls == 2 {
                Err("stop")
            } else {
                Ok(Some(trees.clone()))
            }
        });
        assert_eq!(failed.unwrap_err(), "stop");

        let rate = json!({"date": "2024-01-01", "currency": "EUR", "rate": 0.9}).to_string();
        let trees = [Json::parse(&rate).unwrap()];
        assert_eq!(from_trees.load_fx_rates_trees(&trees).unwrap(), 1);
        let bad = [Json::parse(r#"{"date": "2024-01-01", "currency": "EUR"}"#).unwrap()];
        assert_eq!(
            from_trees
                .load_fx_rates_trees(&bad)
                .unwrap_err()
                .to_string(),
            from_values
                .load_fx_rates(&[json!({"date": "2024-01-01", "currency": "EUR"})])
                .unwrap_err()
                .to_string()
        );
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
