//! Writes: upserts and deletes of every record kind, and the bulk ingest
//! paths (JSON texts, record trees, Arrow batches); updates and replaces
//! of one record are in `updates`. Each runs on the store and hands the
//! customers it touched to the replay cache.

use super::Ledger;
use crate::error::Result;
use crate::model::{Invoice, Json};
use crate::store::{ReadCustomers, ReadInvoices, RecordKind, Store, WriteReport};
#[cfg(feature = "arrow")]
use arrow_array::RecordBatch;
use serde_json::Value;

impl Ledger {
    /// Upserts records of the collection `kind`: the typed method of that
    /// kind (such as [`Ledger::upsert_customers`]) with its rules.
    ///
    /// # Errors
    ///
    /// None returned: each record is checked on its own, a rejected one is
    /// stored nowhere and reported in the [`WriteReport`] with its error (an
    /// [`Error::InvalidRecord`](crate::Error::InvalidRecord) naming the record and field), and the valid ones
    /// are stored.
    ///
    /// # Examples
    ///
    /// ```
    /// use serde_json::json;
    /// use submetrics::{Ledger, RecordKind, Settings};
    ///
    /// let mut ledger = Ledger::new(Settings::default());
    /// let report = ledger.upsert(RecordKind::Customers, &[
    ///     json!({"id": "acme", "name": "Acme"}),
    ///     json!({"name": "No id"}),
    /// ]);
    /// assert_eq!(report.accepted(), 1);
    /// let rejected = report.rejected().next().unwrap();
    /// assert_eq!(rejected.error.as_ref().unwrap().field(), Some("id"));
    /// ```
    pub fn upsert(&mut self, kind: RecordKind, records: &[Value]) -> WriteReport {
        self.write(|store| store.upsert(kind, records))
    }

    /// Deletes the record `id` of the collection `kind`, with the rules of
    /// that kind's method (such as [`Ledger::delete_plan`]).
    ///
    /// # Errors
    ///
    /// [`Error::NotFound`](crate::Error::NotFound) when there is no such record; [`Error::Conflict`](crate::Error::Conflict)
    /// for a plan that invoices still use. Nothing is deleted then.
    ///
    /// # Examples
    ///
    /// ```
    /// # use serde_json::json;
    /// # use submetrics::{Ledger, Settings};
    /// # let mut ledger = Ledger::new(Settings::default());
    /// # ledger.upsert_plans(&[json!({"id": "m", "name": "Monthly", "billing_freq": "month", "currency": "USD"})]);
    /// # ledger.upsert_customers(&[json!({"id": "acme", "name": "Acme"})]);
    /// # ledger.upsert_invoices(&[json!({"id": "inv-1", "customer_id": "acme", "type": "subscription",
    /// #     "plan_id": "m", "invoice_date": "2024-01-15", "amount": 5000, "currency": "USD"})]);
    /// use submetrics::RecordKind;
    ///
    /// assert_eq!(ledger.delete(RecordKind::Plans, "m").unwrap_err().code(), "conflict");
    /// ledger.delete(RecordKind::Invoices, "inv-1")?;
    /// ledger.delete(RecordKind::Plans, "m")?;
    /// assert_eq!(ledger.delete(RecordKind::Plans, "m").unwrap_err().code(), "not_found");
    /// # Ok::<(), submetrics::Error>(())
    /// ```
    pub fn delete(&mut self, kind: RecordKind, id: &str) -> Result<()> {
        self.write(|store| store.delete(kind, id))
    }

    /// Upserts customers; a known id replaces the record (its invoices
    /// stay) and its customer's figures follow the new record.
    ///
    /// # Errors
    ///
    /// None returned: each record is checked on its own, a rejected one is
    /// stored nowhere and reported in the [`WriteReport`] with its error (an
    /// [`Error::InvalidRecord`](crate::Error::InvalidRecord) naming the record and field), and the valid ones
    /// are stored.
    ///
    /// # Examples
    ///
    /// ```
    /// use serde_json::json;
    /// use submetrics::{Ledger, Settings};
    ///
    /// let mut ledger = Ledger::new(Settings::default());
    /// let report = ledger.upsert_customers(&[json!({"id": "acme", "name": "Acme", "country": "de"})]);
    /// assert_eq!(report.accepted(), 1);
    /// assert_eq!(ledger.customers().len(), 1);
    /// assert!(ledger.customer("acme").is_some());
    /// ```
    pub fn upsert_customers(&mut self, records: &[Value]) -> WriteReport {
        self.write(|store| store.upsert_customers(records))
    }

    /// Upserts plans. A changed plan recomputes the customers invoiced on it.
    ///
    /// # Errors
    ///
    /// None returned: each record is checked on its own, a rejected one is
    /// stored nowhere and reported in the [`WriteReport`] with its error (an
    /// [`Error::InvalidRecord`](crate::Error::InvalidRecord) naming the record and field), and the valid ones
    /// are stored. A currency change on a plan that invoices use is
    /// rejected that way (field `currency`), the stored plan unchanged.
    ///
    /// # Examples
    ///
    /// ```
    /// # use serde_json::json;
    /// # use submetrics::{Ledger, Settings};
    /// # let mut ledger = Ledger::new(Settings::default());
    /// # ledger.upsert_plans(&[json!({"id": "m", "name": "Monthly", "billing_freq": "month", "currency": "USD"})]);
    /// # ledger.upsert_customers(&[json!({"id": "acme", "name": "Acme"})]);
    /// # ledger.upsert_invoices(&[json!({"id": "inv-1", "customer_id": "acme", "type": "subscription",
    /// #     "plan_id": "m", "invoice_date": "2024-01-15", "amount": 5000, "currency": "USD"})]);
    /// let report = ledger.upsert_plans(&[
    ///     json!({"id": "m", "name": "Monthly", "billing_freq": "month", "currency": "EUR"}),
    /// ]);
    /// assert_eq!(report.accepted(), 0);
    /// let error = report.rejected().next().unwrap().error.as_ref().unwrap();
    /// assert_eq!(error.field(), Some("currency"));
    /// assert_eq!(ledger.plan("m").unwrap().currency.as_str(), "USD");
    /// ```
    pub fn upsert_plans(&mut self, records: &[Value]) -> WriteReport {
        self.write(|store| store.upsert_plans(records))
    }

    /// Upserts plan groups. A group without an id gets one (`pg_1`, `pg_2`,
    /// ...).
    ///
    /// # Errors
    ///
    /// None returned: each record is checked on its own, a rejected one is
    /// stored nowhere and reported in the [`WriteReport`] with its error (an
    /// [`Error::InvalidRecord`](crate::Error::InvalidRecord) naming the record and field), and the valid ones
    /// are stored. A group naming a plan that does not exist is rejected
    /// that way.
    ///
    /// # Examples
    ///
    /// ```
    /// # use serde_json::json;
    /// # use submetrics::{Ledger, Settings};
    /// # let mut ledger = Ledger::new(Settings::default());
    /// # ledger.upsert_plans(&[json!({"id": "m", "name": "Monthly", "billing_freq": "month", "currency": "USD"})]);
    /// # ledger.upsert_customers(&[json!({"id": "acme", "name": "Acme"})]);
    /// # ledger.upsert_invoices(&[json!({"id": "inv-1", "customer_id": "acme", "type": "subscription",
    /// #     "plan_id": "m", "invoice_date": "2024-01-15", "amount": 5000, "currency": "USD"})]);
    /// let report = ledger.upsert_plan_groups(&[
    ///     json!({"name": "Monthly plans", "plans": ["m"]}),
    ///     json!({"name": "Nothing", "plans": ["nope"]}),
    /// ]);
    /// assert_eq!(report.results[0].id, "pg_1");
    /// assert_eq!(report.accepted(), 1);
    /// assert_eq!(ledger.plan_group("pg_1").unwrap().plans.len(), 1);
    /// ```
    pub fn upsert_plan_groups(&mut self, records: &[Value]) -> WriteReport {
        self.write(|store| store.upsert_plan_groups(records))
    }

    /// Upserts data sources.
    pub fn upsert_data_sources(&mut self, records: &[Value]) -> WriteReport {
        self.write(|store| store.upsert_data_sources(records))
    }

    /// Upserts invoices: each is validated on its own and against the stored
    /// customers and plans; the touched customers are recomputed once, at the
    /// next read.
    ///
    /// # Errors
    ///
    /// None returned: each record is checked on its own, a rejected one is
    /// stored nowhere and reported in the [`WriteReport`] with its error (an
    /// [`Error::InvalidRecord`](crate::Error::InvalidRecord) naming the record and field), and the valid ones
    /// are stored. Among the cross-record rules: the customer must exist; a
    /// subscription invoice's plan must exist and share its currency.
    ///
    /// # Examples
    ///
    /// ```
    /// # use serde_json::json;
    /// # use submetrics::{Ledger, Settings};
    /// # let mut ledger = Ledger::new(Settings::default());
    /// # ledger.upsert_plans(&[json!({"id": "m", "name": "Monthly", "billing_freq": "month", "currency": "USD"})]);
    /// # ledger.upsert_customers(&[json!({"id": "acme", "name": "Acme"})]);
    /// # ledger.upsert_invoices(&[json!({"id": "inv-1", "customer_id": "acme", "type": "subscription",
    /// #     "plan_id": "m", "invoice_date": "2024-01-15", "amount": 5000, "currency": "USD"})]);
    /// let report = ledger.upsert_invoices(&[
    ///     json!({"id": "inv-2", "customer_id": "acme", "type": "subscription", "plan_id": "m",
    ///            "invoice_date": "2024-02-15", "amount": 7000, "currency": "USD"}),
    ///     json!({"id": "inv-3", "customer_id": "nobody", "type": "one-time",
    ///            "invoice_date": "2024-02-15", "amount": 100, "currency": "USD"}),
    /// ]);
    /// assert_eq!(report.accepted(), 1);
    /// let error = report.rejected().next().unwrap().error.as_ref().unwrap();
    /// assert_eq!(error.field(), Some("customer_id"));
    /// assert_eq!(ledger.invoices().len(), 2);
    /// ```
    pub fn upsert_invoices(&mut self, records: &[Value]) -> WriteReport {
        self.write(|store| store.upsert_invoices(records))
    }

    /// Upserts invoices already built in Rust (skipping JSON), with the same
    /// cross-record validation and per-record results as [`Ledger::upsert_invoices`].
    pub fn upsert_invoice_records(
        &mut self,
        invoices: impl IntoIterator<Item = Invoice>,
    ) -> WriteReport {
        self.write(|store| store.upsert_invoice_records(invoices))
    }

    /// Deletes a customer and every invoice of it.
    ///
    /// # Errors
    ///
    /// [`Error::NotFound`](crate::Error::NotFound) when there is no such customer.
    ///
    /// # Examples
    ///
    /// ```
    /// # use serde_json::json;
    /// # use submetrics::{Ledger, Settings};
    /// # let mut ledger = Ledger::new(Settings::default());
    /// # ledger.upsert_plans(&[json!({"id": "m", "name": "Monthly", "billing_freq": "month", "currency": "USD"})]);
    /// # ledger.upsert_customers(&[json!({"id": "acme", "name": "Acme"})]);
    /// # ledger.upsert_invoices(&[json!({"id": "inv-1", "customer_id": "acme", "type": "subscription",
    /// #     "plan_id": "m", "invoice_date": "2024-01-15", "amount": 5000, "currency": "USD"})]);
    /// ledger.delete_customer("acme")?;
    /// assert!(ledger.invoice("inv-1").is_none());
    /// assert_eq!(ledger.delete_customer("acme").unwrap_err().code(), "not_found");
    /// # Ok::<(), submetrics::Error>(())
    /// ```
    pub fn delete_customer(&mut self, id: &str) -> Result<()> {
        self.write(|store| store.delete_customer(id))
    }

    /// Deletes a plan; the plan groups that name it drop it.
    ///
    /// # Errors
    ///
    /// [`Error::NotFound`](crate::Error::NotFound) when there is no such plan; [`Error::Conflict`](crate::Error::Conflict)
    /// while invoices use it (delete or change them first).
    ///
    /// # Examples
    ///
    /// ```
    /// # use serde_json::json;
    /// # use submetrics::{Ledger, Settings};
    /// # let mut ledger = Ledger::new(Settings::default());
    /// # ledger.upsert_plans(&[json!({"id": "m", "name": "Monthly", "billing_freq": "month", "currency": "USD"})]);
    /// # ledger.upsert_customers(&[json!({"id": "acme", "name": "Acme"})]);
    /// # ledger.upsert_invoices(&[json!({"id": "inv-1", "customer_id": "acme", "type": "subscription",
    /// #     "plan_id": "m", "invoice_date": "2024-01-15", "amount": 5000, "currency": "USD"})]);
    /// let error = ledger.delete_plan("m").unwrap_err();
    /// assert!(matches!(error, submetrics::Error::Conflict { .. }));
    /// ledger.delete_invoice("inv-1")?;
    /// ledger.delete_plan("m")?;
    /// # Ok::<(), submetrics::Error>(())
    /// ```
    pub fn delete_plan(&mut self, id: &str) -> Result<()> {
        self.write(|store| store.delete_plan(id))
    }

    /// Deletes a plan group; its plans stay.
    ///
    /// # Errors
    ///
    /// [`Error::NotFound`](crate::Error::NotFound) when there is no such plan group.
    pub fn delete_plan_group(&mut self, id: &str) -> Result<()> {
        self.write(|store| store.delete_plan_group(id))
    }

    /// Deletes an invoice; its customer is recomputed at the next read.
    ///
    /// # Errors
    ///
    /// [`Error::NotFound`](crate::Error::NotFound) when there is no such invoice.
    ///
    /// # Examples
    ///
    /// ```
    /// # use serde_json::json;
    /// # use submetrics::{Ledger, Settings};
    /// # let mut ledger = Ledger::new(Settings::default());
    /// # ledger.upsert_plans(&[json!({"id": "m", "name": "Monthly", "billing_freq": "month", "currency": "USD"})]);
    /// # ledger.upsert_customers(&[json!({"id": "acme", "name": "Acme"})]);
    /// # ledger.upsert_invoices(&[json!({"id": "inv-1", "customer_id": "acme", "type": "subscription",
    /// #     "plan_id": "m", "invoice_date": "2024-01-15", "amount": 5000, "currency": "USD"})]);
    /// ledger.delete_invoice("inv-1")?;
    /// assert_eq!(ledger.invoices().len(), 0);
    /// assert_eq!(ledger.delete_invoice("inv-1").unwrap_err().code(), "not_found");
    /// # Ok::<(), submetrics::Error>(())
    /// ```
    pub fn delete_invoice(&mut self, id: &str) -> Result<()> {
        self.write(|store| store.delete_invoice(id))
    }

    /// Deletes a data source; records that name it keep the name.
    ///
    /// # Errors
    ///
    /// [`Error::NotFound`](crate::Error::NotFound) when there is no such data source.
    pub fn delete_data_source(&mut self, id: &str) -> Result<()> {
        self.write(|store| store.delete_data_source(id))
    }

    /// Upserts invoices given as JSON texts, one record each (the lines of a
    /// JSONL file): the same rules, errors and per-record results as
    /// [`Ledger::upsert_invoices`] on the parsed values, without building a
    /// `serde_json::Value` per record. Malformed JSON is that record's error.
    pub fn upsert_invoice_texts<S: AsRef<str> + Sync>(&mut self, texts: &[S]) -> WriteReport {
        self.write(|store| store.upsert_invoice_texts(texts))
    }

    /// The first half of [`Ledger::upsert_invoice_texts`], which needs no
    /// ledger: each text's record id and its invoice or error, read on every
    /// core. A bulk load can read one batch while the previous one is stored.
    pub fn read_invoice_texts<S: AsRef<str> + Sync>(texts: &[S]) -> ReadInvoices {
        Store::read_invoice_texts(texts)
    }

    /// Upserts records of `kind` given as record trees, as a binding reads
    /// them from its language's objects (no `serde_json::Value` and no text
    /// in between): the same rules, per-record results and errors as
    /// [`Ledger::upsert`] on the equal values. Invoices are read on every
    /// core.
    pub fn upsert_trees(&mut self, kind: RecordKind, records: &[Json<'_>]) -> WriteReport {
        self.write(|store| store.upsert_trees(kind, records))
    }

    /// The first half of an invoice [`Ledger::upsert_trees`], which needs no
    /// ledger: each tree's record id and its invoice or error, read on every
    /// core.
    pub fn read_invoice_trees(records: &[Json<'_>]) -> ReadInvoices {
        Store::read_invoice_trees(records)
    }

    /// The first half of a customer [`Ledger::upsert_trees`], which needs
    /// no ledger: each tree's record id and its customer or error, read on
    /// every core (see [`Ledger::upsert_customer_stream`]).
    pub fn read_customer_trees(records: &[Json<'_>]) -> ReadCustomers {
        Store::read_customer_trees(records)
    }

    /// [`Ledger::read_invoice_trees`] of trees that `next` produces chunk
    /// by chunk on the calling thread (a binding reading its language's
    /// objects, which only that thread may touch), each chunk read on the
    /// other cores while the next is produced: every tree's record id and
    /// its invoice or error, in order. The first error of `next` ends the
    /// read and is the answer.
    pub fn read_invoice_chunks<'b, E>(
        next: impl FnMut() -> std::result::Result<Option<Vec<Json<'b>>>, E>,
    ) -> std::result::Result<ReadInvoices, E> {
        Store::read_invoice_chunks(next)
    }

    /// [`Ledger::load_fx_rates`] of rows given as record trees: every row is
    /// valid and loaded, or none is.
    pub fn load_fx_rates_trees(&mut self, rows: &[Json<'_>]) -> Result<usize> {
        self.write(|store| store.load_fx_rates_trees(rows))
    }

    /// Makes room for `additional` more customers, so a bulk load that
    /// knows (or estimates) its size stores them without growing step by
    /// step (each step copies every customer). A hint: room the allocator
    /// refuses (a file's row count that no memory holds) is not made.
    pub fn reserve_customers(&mut self, additional: usize) {
        self.write(|store| store.reserve_customers(additional))
    }

    /// Makes room for `additional` more invoices, so a bulk load that knows
    /// (or estimates) its size stores them without growing the invoice table
    /// step by step (each step copies the whole table). A hint: room the
    /// allocator refuses (a file's row count that no memory holds) is not
    /// made.
    pub fn reserve_invoices(&mut self, additional: usize) {
        self.write(|store| store.reserve_invoices(additional))
    }

    /// Reads invoices given as JSON values, each on its own and on every
    /// core for a large chunk: the first half of [`Ledger::upsert_invoices`],
    /// which needs no ledger.
    pub fn read_invoice_values(records: &[Value]) -> ReadInvoices {
        Store::read_invoice_values(records)
    }

    /// Reads customers given as JSON values, each on its own and on every
    /// core for a large chunk: the first half of
    /// [`Ledger::upsert_customers`], which needs no ledger.
    pub fn read_customer_values(records: &[Value]) -> ReadCustomers {
        Store::read_customer_values(records)
    }

    /// Stores the invoices `next` reads (with [`Ledger::read_invoice_texts`],
    /// [`Ledger::read_invoice_values`] or [`Ledger::read_invoice_batch`]),
    /// chunk after chunk, calling `stored` with each chunk's report in
    /// order. The next chunk is read while the one before it is stored, so a
    /// bulk load keeps every core busy; the results are those of storing
    /// each chunk as it comes.
    ///
    /// # Errors
    ///
    /// The first error of `next`, which ends the load after every chunk
    /// read before it is stored.
    ///
    /// # Examples
    ///
    /// ```
    /// use serde_json::json;
    /// use submetrics::{Ledger, Settings};
    ///
    /// let mut ledger = Ledger::new(Settings::default());
    /// ledger.upsert_customers(&[json!({"id": "c1", "name": "C1"})]);
    /// ledger.upsert_plans(&[json!({"id": "p1", "name": "P1", "interval": "month", "currency": "USD"})]);
    /// let lines = [
    ///     r#"{"id": "i1", "customer_id": "c1", "type": "subscription", "plan_id": "p1",
    ///         "invoice_date": "2024-01-01", "amount": 1000, "currency": "USD"}"#,
    ///     r#"{"id": "i2", "customer_id": "nobody", "type": "one-time",
    ///         "invoice_date": "2024-01-02", "amount": 500, "currency": "USD"}"#,
    /// ];
    /// let mut chunks = lines.chunks(1);
    /// let mut accepted = 0;
    /// ledger.upsert_invoice_stream(
    ///     || Ok::<_, String>(chunks.next().map(Ledger::read_invoice_texts)),
    ///     |report| accepted += report.accepted(),
    /// )?;
    /// assert_eq!(accepted, 1);
    /// # Ok::<(), String>(())
    /// ```
    pub fn upsert_invoice_stream<E: Send>(
        &mut self,
        next: impl FnMut() -> std::result::Result<Option<ReadInvoices>, E> + Send,
        stored: impl FnMut(WriteReport) + Send,
    ) -> std::result::Result<(), E> {
        self.write(|store| store.store_invoice_stream(next, stored))
    }

    /// Stores the customers `next` reads (with
    /// [`Ledger::read_customer_trees`], [`Ledger::read_customer_values`] or
    /// [`Ledger::read_customer_batch`]), chunk after chunk, calling `stored`
    /// with each chunk's report in order, as [`Ledger::upsert_invoice_stream`]
    /// stores invoices: the next chunk is read while the one before it is
    /// stored.
    ///
    /// # Errors
    ///
    /// The first error of `next`, which ends the load after every chunk
    /// read before it is stored.
    pub fn upsert_customer_stream<E: Send>(
        &mut self,
        next: impl FnMut() -> std::result::Result<Option<ReadCustomers>, E> + Send,
        stored: impl FnMut(WriteReport) + Send,
    ) -> std::result::Result<(), E> {
        self.write(|store| store.store_customer_stream(next, stored))
    }

    /// The second half of [`Ledger::upsert_invoice_texts`]: checks the read
    /// invoices against the stored customers and plans, stores them and
    /// recomputes the touched customers.
    pub fn upsert_read_invoices(&mut self, read: ReadInvoices) -> WriteReport {
        self.write(|store| store.upsert_read_invoices(read))
    }
}

#[cfg(feature = "arrow")]
impl Ledger {
    /// Upserts the rows of `batch` as records of `kind`: the same rules,
    /// per-record results (in row order) and errors as [`Ledger::upsert`]
    /// given the rows as JSON objects, whose fields are the batch's columns
    /// (a null cell is an absent field). Strings (`Utf8`, `LargeUtf8`,
    /// `Utf8View` or a dictionary of them) read as strings, integers and
    /// floats as numbers (NaN as null), decimals as numbers (integers when
    /// they have no fraction), booleans as booleans,
    /// `Date32`/`Date64` as dates, `Timestamp` of any unit as instants (UTC
    /// when the column has no zone), lists as arrays and structs or
    /// string-keyed maps as objects.
    ///
    /// # Errors
    ///
    /// A column of any other type is [`crate::Error::InvalidRecord`] naming
    /// it, for the whole batch, before anything is stored. Rows that break a
    /// record rule are reported in the [`WriteReport`], as by
    /// [`Ledger::upsert`].
    pub fn upsert_arrow(&mut self, kind: RecordKind, batch: &RecordBatch) -> Result<WriteReport> {
        self.write(|store| store.upsert_arrow(kind, batch))
    }

    /// [`Ledger::upsert_arrow`] over several batches of one kind (the chunks
    /// of a table), results in row order across them. Every batch's columns
    /// are checked before any is stored.
    pub fn upsert_arrow_batches(
        &mut self,
        kind: RecordKind,
        batches: &[RecordBatch],
    ) -> Result<WriteReport> {
        self.write(|store| store.upsert_arrow_batches(kind, batches))
    }

    /// [`Ledger::upsert_arrow_batches`] handing the results to `stored` a
    /// chunk at a time, in row order, as each chunk is stored (beside the
    /// reading of the next one), instead of gathering them: a caller that
    /// turns them into something else never holds them all.
    ///
    /// # Errors
    ///
    /// As [`Ledger::upsert_arrow_batches`], before anything is stored.
    pub fn upsert_arrow_chunks(
        &mut self,
        kind: RecordKind,
        batches: &[RecordBatch],
        stored: impl FnMut(WriteReport) + Send,
    ) -> Result<()> {
        self.write(|store| store.upsert_arrow_chunks(kind, batches, stored))
    }

    /// The rows of `batch` read as invoices, each on its own and on every
    /// core: the first half of an invoice [`Ledger::upsert_arrow`], which
    /// needs no ledger (see [`Ledger::upsert_invoice_stream`]).
    ///
    /// # Errors
    ///
    /// A column of a type no field can be read from is
    /// [`crate::Error::InvalidRecord`] naming it.
    pub fn read_invoice_batch(batch: &RecordBatch) -> Result<ReadInvoices> {
        Store::read_invoice_batch(batch)
    }

    /// The rows of `batch` read as customers, each on its own and on every
    /// core: the first half of a customer [`Ledger::upsert_arrow`], which
    /// needs no ledger (see [`Ledger::upsert_customer_stream`]).
    ///
    /// # Errors
    ///
    /// A column of a type no field can be read from is
    /// [`crate::Error::InvalidRecord`] naming it.
    pub fn read_customer_batch(batch: &RecordBatch) -> Result<ReadCustomers> {
        Store::read_customer_batch(batch)
    }

    /// Loads FX rates from the rows of `batches`, one table (columns
    /// `date`, `currency`, `rate`), like [`Ledger::load_fx_rates`]: every row
    /// of every batch is valid and loaded, or none is; an error names the
    /// row's number in the whole table.
    pub fn load_fx_rates_arrow(&mut self, batches: &[RecordBatch]) -> Result<usize> {
        self.write(|store| store.load_fx_rates_arrow(batches))
    }
}
