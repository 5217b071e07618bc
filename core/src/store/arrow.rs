//! Batch writes from Apache Arrow record batches: each row is one record,
//! read in place ([`ArrowRecords`]) with the record rules, per-record
//! results and error messages of the JSON writes. Invoices are read on every
//! core.

use super::stream::{plain_or, read_each, read_record};
use super::{ReadCustomers, ReadInvoices, ReadRecords, RecordKind, Store, WriteReport};
use crate::error::Result;
use crate::fx::read_rates;
use crate::model::{ArrowRecords, Customer, DataSource, Invoice, InvoiceColumns, Plan, PlanGroup};
use arrow_array::RecordBatch;
use rayon::prelude::*;

/// The rows of one chunk of a many-batch upsert: large batches are read in
/// slices this long and small ones in groups up to it, so one chunk is read
/// while the one before it is stored, and a store's fixed costs (sorting
/// and probing a chunk's ids) are spread over many rows.
const STREAM_ROWS: usize = 65_536;

/// The rows of every batch.
fn rows(batches: &[RecordBatch]) -> usize {
    batches.iter().map(RecordBatch::num_rows).sum()
}

/// The batches cut in slices of at most [`STREAM_ROWS`] rows, in order.
fn slices(batches: &[RecordBatch]) -> impl Iterator<Item = RecordBatch> + '_ {
    batches.iter().flat_map(|batch| {
        (0..batch.num_rows())
            .step_by(STREAM_ROWS)
            .map(|offset| batch.slice(offset, STREAM_ROWS.min(batch.num_rows() - offset)))
    })
}

/// The batches in chunks of at most [`STREAM_ROWS`] rows, in order: a large
/// batch cut in slices, consecutive small ones grouped (a table read from
/// JSON comes in batches of a few thousand rows).
fn chunks(batches: &[RecordBatch]) -> impl Iterator<Item = Vec<RecordBatch>> + '_ {
    let mut slices = slices(batches).peekable();
    std::iter::from_fn(move || {
        let first = slices.next()?;
        let mut rows = first.num_rows();
        let mut chunk = vec![first];
        while let Some(next) = slices.next_if(|next| rows + next.num_rows() <= STREAM_ROWS) {
            rows += next.num_rows();
            chunk.push(next);
        }
        Some(chunk)
    })
}

/// The records of a chunk's batches read with `read`, each batch on its own
/// core, in row order.
fn read_chunk<T: Send>(
    chunk: &[RecordBatch],
    read: fn(&RecordBatch) -> Result<ReadRecords<T>>,
) -> Result<ReadRecords<T>> {
    if let [batch] = chunk {
        return read(batch);
    }
    let parts = chunk
        .par_iter()
        .map(read)
        .collect::<Result<Vec<ReadRecords<T>>>>()?;
    let mut records = Vec::with_capacity(parts.iter().map(Vec::len).sum());
    for part in parts {
        records.extend(part);
    }
    Ok(records)
}

impl RecordKind {
    /// The name of one record of this kind in errors (`invoice`).
    pub fn record_name(self) -> &'static str {
        match self {
            RecordKind::Customers => Customer::KIND,
            RecordKind::Plans => Plan::KIND,
            RecordKind::PlanGroups => PlanGroup::KIND,
            RecordKind::Invoices => Invoice::KIND,
            RecordKind::DataSources => DataSource::KIND,
        }
    }
}

impl Store {
    /// Upserts the rows of `batch` as records of `kind`: the same rules,
    /// per-record results (in row order) and errors as [`Store::upsert`]
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
    /// [`Store::upsert`].
    pub fn upsert_arrow(&mut self, kind: RecordKind, batch: &RecordBatch) -> Result<WriteReport> {
        let records = ArrowRecords::new(kind.record_name(), batch)?;
        Ok(match kind {
            RecordKind::Customers => self.write_customers(records.rows()),
            RecordKind::Plans => self.write_plans(records.rows()),
            RecordKind::PlanGroups => self.write_plan_groups(records.rows()),
            RecordKind::DataSources => self.write_data_sources(records.rows()),
            RecordKind::Invoices => {
                let read = Store::read_arrow_invoices(&records);
                self.store_invoices(read)
            }
        })
    }

    /// [`Store::upsert_arrow`] over several batches of one kind (the chunks
    /// of a table), results in row order across them. Every batch's columns
    /// are checked before any is stored.
    pub fn upsert_arrow_batches(
        &mut self,
        kind: RecordKind,
        batches: &[RecordBatch],
    ) -> Result<WriteReport> {
        let mut report = WriteReport::default();
        if kind == RecordKind::Invoices {
            report.results.reserve(rows(batches));
        }
        self.upsert_arrow_chunks(kind, batches, |chunk| {
            report.results.extend(chunk.results);
        })?;
        Ok(report)
    }

    /// [`Store::upsert_arrow_batches`] handing the results to `stored` a
    /// chunk at a time, in row order, as each chunk is stored (beside the
    /// reading of the next one), instead of gathering them: a caller that
    /// turns them into something else never holds them all.
    pub fn upsert_arrow_chunks(
        &mut self,
        kind: RecordKind,
        batches: &[RecordBatch],
        mut stored: impl FnMut(WriteReport) + Send,
    ) -> Result<()> {
        for batch in batches {
            ArrowRecords::new(kind.record_name(), batch)?;
        }
        match kind {
            RecordKind::Invoices => {
                self.reserve_invoices(rows(batches));
                self.store_batch_stream(
                    batches,
                    stored,
                    Store::read_invoice_batch,
                    Store::store_invoices_unlisted,
                )
            }
            RecordKind::Customers => self.store_batch_stream(
                batches,
                stored,
                Store::read_customer_batch,
                Store::store_read_customers,
            ),
            _ => {
                for batch in batches {
                    stored(self.upsert_arrow(kind, batch)?);
                }
                Ok(())
            }
        }
    }

    /// Stores the rows of `batches` with `store`, read with `read` in chunks
    /// of [`STREAM_ROWS`] rows, one chunk read while the one before is
    /// stored; each chunk's results go to `stored`, in row order.
    fn store_batch_stream<T: Send>(
        &mut self,
        batches: &[RecordBatch],
        stored: impl FnMut(WriteReport) + Send,
        read: fn(&RecordBatch) -> Result<ReadRecords<T>>,
        store: fn(&mut Store, ReadRecords<T>) -> WriteReport,
    ) -> Result<()> {
        let mut chunks = chunks(batches);
        let next = || {
            chunks
                .next()
                .map(|chunk| read_chunk(&chunk, read))
                .transpose()
        };
        self.store_stream(next, stored, store)
    }

    /// The rows of `batch` read as invoices, each on its own (the first
    /// half of an invoice [`Store::upsert_arrow`], which needs no store).
    ///
    /// # Errors
    ///
    /// A column of a type no field can be read from, naming it.
    pub fn read_invoice_batch(batch: &RecordBatch) -> Result<ReadInvoices> {
        let records = ArrowRecords::new(Invoice::KIND, batch)?;
        Ok(Store::read_arrow_invoices(&records))
    }

    /// The rows of `batch` read as customers, each on its own (the first
    /// half of a customer [`Store::upsert_arrow`], which needs no store).
    ///
    /// # Errors
    ///
    /// A column of a type no field can be read from, naming it.
    pub fn read_customer_batch(batch: &RecordBatch) -> Result<ReadCustomers> {
        let records = ArrowRecords::new(Customer::KIND, batch)?;
        let rows: Vec<_> = records.rows().collect();
        Ok(Store::read_customers(&rows))
    }

    /// The first half of an invoice [`Store::upsert_arrow`], which needs no
    /// ledger: each row's record id and its invoice or error. A row is read
    /// from its batch's typed columns when it can be, else as a record.
    pub(crate) fn read_arrow_invoices<'a>(records: &'a ArrowRecords<'a>) -> ReadInvoices {
        let columns = InvoiceColumns::new(records);
        read_each(records.len(), |row, recent| {
            let plain = columns
                .as_ref()
                .and_then(|columns| columns.read(row, recent));
            plain_or(plain, || read_record(records.row(row), recent))
        })
    }

    /// Loads FX rates from the rows of `batches`, one table (columns
    /// `date`, `currency`, `rate`), like [`Store::load_fx_rates`]: every row
    /// of every batch is valid and loaded, or none is; an error names the
    /// row's number in the whole table.
    pub fn load_fx_rates_arrow(&mut self, batches: &[RecordBatch]) -> Result<usize> {
        let tables = batches
            .iter()
            .map(|batch| ArrowRecords::new("fx_rate", batch))
            .collect::<Result<Vec<_>>>()?;
        let rates = read_rates(tables.iter().flat_map(ArrowRecords::rows))?;
        self.insert_fx_rates(rates)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::{ArrayRef, Int32Array};
    use std::sync::Arc;

    fn batch(rows: usize) -> RecordBatch {
        let column: ArrayRef = Arc::new(Int32Array::from(vec![0; rows]));
        RecordBatch::try_from_iter([("n", column)]).unwrap()
    }

    #[test]
    fn large_batches_are_cut_and_small_neighbours_grouped() {
        let batches: Vec<RecordBatch> = [3, 70_000, 5, 5, 65_536, 1].map(batch).into();
        let chunks: Vec<Vec<usize>> = chunks(&batches)
            .map(|chunk| chunk.iter().map(RecordBatch::num_rows).collect())
            .collect();
        assert_eq!(
            chunks,
            [
                vec![3],
                vec![65_536],
                vec![4_464, 5, 5],
                vec![65_536],
                vec![1]
            ]
        );
    }
}
