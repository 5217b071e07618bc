//! Bulk loads of invoices chunk by chunk, the next chunk read while the one
//! before it is stored. Reading (parsing and checking each record on its
//! own) needs no store and runs on every core; storing is one ordered pass.
//! Overlapping the two keeps both cores busy for a load's whole length
//! instead of leaving one idle while the other stores.

use super::{Store, WriteReport, record_id};
use crate::error::Result;
use crate::ids::RecentIds;
use crate::model::{Customer, Invoice, Node};
use compact_str::CompactString;
use rayon::prelude::*;
use serde_json::Value;

/// Records of one kind read from one chunk, not yet stored: each record's
/// id (empty when it has none) and the record, or the error that rejects
/// it, in record order.
pub type ReadRecords<T> = Vec<(CompactString, Result<T>)>;

/// Invoices read from one chunk of records, not yet stored.
pub type ReadInvoices = ReadRecords<Invoice>;

/// Customers read from one chunk of records, not yet stored.
pub type ReadCustomers = ReadRecords<Customer>;

/// Chunks with more records than this are read on every core.
pub(super) const PARALLEL_RECORDS: usize = 256;

/// One record read as an invoice, with its record id: the invoice's own
/// when it reads (the same text), else whatever id the record gives.
pub(super) fn read_record<'a, N: Node<'a>>(
    node: N,
    recent: &mut RecentIds,
) -> (CompactString, Result<Invoice>) {
    match Invoice::from_node_reusing(node, recent) {
        Ok(invoice) => (invoice.id.as_str().into(), Ok(invoice)),
        Err(error) => (record_id(node), Err(error)),
    }
}

/// A record a plain reader read (`plain`, see [`Invoice::from_cells`]),
/// else the one `general` reads.
pub(super) fn plain_or(
    plain: Option<Invoice>,
    general: impl FnOnce() -> (CompactString, Result<Invoice>),
) -> (CompactString, Result<Invoice>) {
    match plain {
        Some(invoice) => (invoice.id.as_str().into(), Ok(invoice)),
        None => general(),
    }
}

/// Reads the records `0..len` of a chunk with `read`, on every core for a
/// large chunk, each thread reusing the ids it read last ([`RecentIds`]).
pub(super) fn read_each(
    len: usize,
    read: impl Fn(usize, &mut RecentIds) -> (CompactString, Result<Invoice>) + Sync,
) -> ReadInvoices {
    if len > PARALLEL_RECORDS {
        (0..len)
            .into_par_iter()
            .map_init(RecentIds::default, |recent, i| read(i, recent))
            .collect()
    } else {
        let mut recent = RecentIds::default();
        (0..len).map(|i| read(i, &mut recent)).collect()
    }
}

impl Store {
    /// Reads invoices given as JSON values, each on its own (the first half
    /// of an invoice upsert).
    pub fn read_invoice_values(records: &[Value]) -> ReadInvoices {
        read_each(records.len(), |i, recent| read_record(&records[i], recent))
    }

    /// Reads customers given as JSON values, each on its own (the first
    /// half of a customer upsert).
    pub fn read_customer_values(records: &[Value]) -> ReadCustomers {
        let records: Vec<&Value> = records.iter().collect();
        Store::read_customers(&records)
    }

    /// Stores the invoices `next` reads, chunk after chunk, calling
    /// `stored` with each chunk's report in order (see
    /// [`Store::store_stream`]).
    pub fn store_invoice_stream<E: Send>(
        &mut self,
        next: impl FnMut() -> std::result::Result<Option<ReadInvoices>, E> + Send,
        stored: impl FnMut(WriteReport) + Send,
    ) -> std::result::Result<(), E> {
        self.store_stream(next, stored, Store::store_invoices_unlisted)
    }

    /// Stores the customers `next` reads, chunk after chunk, calling
    /// `stored` with each chunk's report in order (see
    /// [`Store::store_stream`]).
    pub fn store_customer_stream<E: Send>(
        &mut self,
        next: impl FnMut() -> std::result::Result<Option<ReadCustomers>, E> + Send,
        stored: impl FnMut(WriteReport) + Send,
    ) -> std::result::Result<(), E> {
        self.store_stream(next, stored, Store::store_read_customers)
    }

    /// Stores with `store` the records `next` reads, chunk after chunk,
    /// calling `stored` with each chunk's report in order. While a chunk is
    /// stored, and its report handed to `stored`, the next one is read, so
    /// `next` and `stored` run beside each other (on the pool's threads) and
    /// must be `Send`. The results are those of storing each chunk as it
    /// comes; the first error of `next` ends the load, after every chunk
    /// read before it is stored. The positions of the invoices the chunks
    /// left unlisted (see [`Store::store_invoices_unlisted`]) join their
    /// customers' lists at the end, all at once.
    pub(super) fn store_stream<T: Send, E: Send>(
        &mut self,
        next: impl FnMut() -> std::result::Result<Option<ReadRecords<T>>, E> + Send,
        stored: impl FnMut(WriteReport) + Send,
        store: fn(&mut Store, ReadRecords<T>) -> WriteReport,
    ) -> std::result::Result<(), E> {
        let streamed = self.store_chunks(next, stored, store);
        self.list_positions();
        streamed
    }

    /// [`Store::store_stream`] but for the listing at the end.
    fn store_chunks<T: Send, E: Send>(
        &mut self,
        mut next: impl FnMut() -> std::result::Result<Option<ReadRecords<T>>, E> + Send,
        mut stored: impl FnMut(WriteReport) + Send,
        store: fn(&mut Store, ReadRecords<T>) -> WriteReport,
    ) -> std::result::Result<(), E> {
        let mut pending = next()?;
        while let Some(read) = pending {
            let (following, ()) = rayon::join(&mut next, || stored(store(self, read)));
            pending = following?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Json;
    use serde_json::json;

    fn store() -> Store {
        let mut store = Store::new(crate::model::Settings::default());
        let customers = store.upsert_customers(&[json!({"id": "c1", "name": "C1"})]);
        let plans = store.upsert_plans(&[
            json!({"id": "p1", "name": "P1", "interval": "month", "currency": "USD"}),
        ]);
        assert_eq!((customers.accepted(), plans.accepted()), (1, 1));
        store
    }

    fn invoice(id: &str, amount: i64) -> Value {
        json!({"id": id, "customer_id": "c1", "type": "subscription", "plan_id": "p1",
               "invoice_date": "2024-01-01", "amount": amount, "currency": "USD"})
    }

    #[test]
    fn a_stream_stores_each_chunk_in_order_with_its_own_report() {
        let chunks = [
            vec![invoice("i1", 100), invoice("i2", 200)],
            vec![invoice("i1", 150), json!({"id": "i3", "customer_id": "c1"})],
        ];
        let mut reads = chunks.iter().map(|chunk| Store::read_invoice_values(chunk));
        let mut reports = Vec::new();
        let mut store = store();
        let done: std::result::Result<(), ()> =
            store.store_invoice_stream(|| Ok(reads.next()), |report| reports.push(report));
        assert_eq!(done, Ok(()));
        let ids: Vec<Vec<&str>> = reports
            .iter()
            .map(|r| r.results.iter().map(|r| r.id.as_str()).collect())
            .collect();
        assert_eq!(ids, [["i1", "i2"], ["i1", "i3"]]);
        assert_eq!(
            reports[1].results[1].import_error.as_deref(),
            Some(
                "invoice i3: field `type`: is required (subscription, one-time, refund or cancellation)"
            )
        );
        let stored: Vec<(String, i64)> = store
            .invoices
            .iter()
            .map(|i| (i.id().to_string(), i.amount))
            .collect();
        assert_eq!(stored, [("i1".to_string(), 150), ("i2".to_string(), 200)]);
    }

    #[test]
    fn a_customer_stream_stores_each_chunk_in_order_with_its_own_report() {
        let texts = [
            vec![
                r#"{"id":"c2","name":"First"}"#,
                r#"{"id":"c3","name":"C3"}"#,
            ],
            vec![r#"{"id":"c2","name":"Second"}"#, r#"{"name":"nameless"}"#],
        ];
        let mut chunks = texts.iter().map(|chunk| {
            let trees: Vec<Json<'_>> = chunk.iter().map(|t| Json::parse(t).unwrap()).collect();
            Store::read_customer_trees(&trees)
        });
        let mut reports = Vec::new();
        let mut store = store();
        store.reserve_customers(100);
        assert!(store.customers.capacity() >= 101 && store.invoices_by_customer.capacity() >= 101);
        let done: std::result::Result<(), ()> =
            store.store_customer_stream(|| Ok(chunks.next()), |report| reports.push(report));
        assert_eq!(done, Ok(()));
        let outcomes: Vec<Vec<(&str, Option<&str>)>> = reports
            .iter()
            .map(|r| {
                r.results
                    .iter()
                    .map(|r| (r.id.as_str(), r.import_error.as_deref()))
                    .collect()
            })
            .collect();
        assert_eq!(
            outcomes,
            [
                vec![("c2", None), ("c3", None)],
                vec![
                    ("c2", None),
                    ("", Some("customer ?: field `id`: is required"))
                ]
            ]
        );
        let names: Vec<(&str, &str)> = store
            .customers
            .values()
            .map(|c| (c.id.as_str(), &*c.name))
            .collect();
        assert_eq!(names, [("c1", "C1"), ("c2", "Second"), ("c3", "C3")]);
    }

    #[test]
    fn a_run_of_one_customer_shares_its_id_and_a_missing_customer_is_still_refused() {
        let named = |id: &str, customer: &str| {
            json!({"id": id, "customer_id": customer, "type": "one-time",
                   "invoice_date": "2024-01-01", "amount": 100, "currency": "USD"})
        };
        let read = Store::read_invoice_values(&[
            named("i1", "c1"),
            named("i2", "c1"),
            named("i3", "ghost"),
            named("i4", "ghost"),
            named("i5", "c1"),
        ]);
        let customer = |i: usize| &read[i].1.as_ref().unwrap().customer_id;
        assert!(customer(0).shares(customer(1)) && customer(2).shares(customer(3)));
        let mut store = store();
        let report = store.store_invoices(read);
        let errors: Vec<Option<&str>> = report
            .results
            .iter()
            .map(|r| r.import_error.as_deref())
            .collect();
        let ghost = "invoice i3: field `customer_id`: customer `ghost` does not exist; send the customer first";
        assert_eq!(errors[..3], [None, None, Some(ghost)]);
        assert_eq!(errors[4], None);
        assert_eq!(store.invoices.len(), 3);
    }

    #[test]
    fn an_error_ends_the_stream_after_the_chunks_read_before_it_are_stored() {
        let mut calls = 0;
        let mut reports = 0;
        let mut store = store();
        let done = store.store_invoice_stream(
            || {
                calls += 1;
                match calls {
                    1 => Ok(Some(Store::read_invoice_values(&[invoice("i1", 100)]))),
                    _ => Err("broken file"),
                }
            },
            |_| reports += 1,
        );
        assert_eq!(done, Err("broken file"));
        assert_eq!(reports, 1);
        assert_eq!(store.invoices.len(), 1);
    }
}
