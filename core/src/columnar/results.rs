//! The per-record results of a write as Arrow record batches: `id`
//! (`Utf8`), `import_status` (`inserted` or `error`, dictionary-encoded with
//! `Int8` keys: one byte a row) and `import_error` (`Utf8`, null for stored
//! records), one row per record in input order.
//!
//! An Arrow upsert answers one results batch per input batch. When an input
//! batch's `id` column is `Utf8` without a null, its results' `id` column is
//! that column itself, shared rather than copied: every row's result names
//! the record by its `id` text exactly as given (see `store::record_id`).
//! A batch without a rejected record answers an `import_error` column of
//! nulls that is never written. So a large load's results cost about a
//! byte a row.

use crate::error::Result;
use crate::{ImportStatus, Ledger, RecordKind, WriteReport};
use arrow_array::builder::StringBuilder;
use arrow_array::cast::AsArray;
use arrow_array::types::Int8Type;
use arrow_array::{
    Array, ArrayRef, DictionaryArray, Int8Array, RecordBatch, StringArray, new_null_array,
};
use arrow_schema::{DataType, Field, Schema, SchemaRef};
use std::sync::Arc;

/// The `import_status` values, by dictionary key.
const STATUSES: [&str; 2] = ["inserted", "error"];

/// The schema of every results batch.
pub fn result_schema() -> SchemaRef {
    Arc::new(Schema::new(vec![
        Field::new("id", DataType::Utf8, false),
        Field::new(
            "import_status",
            DataType::Dictionary(Box::new(DataType::Int8), Box::new(DataType::Utf8)),
            false,
        ),
        Field::new("import_error", DataType::Utf8, true),
    ]))
}

/// The rows of one results batch: how many, and the input's `id` column
/// when it is the results' own.
struct Part {
    rows: usize,
    ids: Option<ArrayRef>,
}

impl Part {
    /// Results past the input's rows (an upsert answers none): as many as
    /// come, naming their own ids.
    const REST: Part = Part {
        rows: usize::MAX,
        ids: None,
    };

    fn is_rest(&self) -> bool {
        self.rows == usize::MAX
    }

    /// How many rows to make room for.
    fn room(&self) -> usize {
        if self.rows == usize::MAX {
            0
        } else {
            self.rows
        }
    }
}

/// Ids take about this many bytes, for the room made for a batch's own.
const ID_BYTES: usize = 16;

/// Results gathered a chunk of results at a time (as a streamed write
/// reports them) into batches cut like the input's.
pub struct ResultColumns {
    /// The parts after the current one, in order.
    parts: std::vec::IntoIter<Part>,
    current: Part,
    /// The current batch's ids, when they are not the input's.
    ids: StringBuilder,
    /// The current batch's keys in [`STATUSES`].
    statuses: Vec<i8>,
    /// The current batch's rejected rows and errors, in row order.
    errors: Vec<(usize, String)>,
    /// The [`STATUSES`] every batch's `import_status` keys point into (one
    /// for all, so an IPC stream of the batches sends it once).
    status_values: ArrayRef,
    done: Vec<RecordBatch>,
}

impl ResultColumns {
    /// Results for `rows` records, as one batch.
    pub fn with_rows(rows: usize) -> ResultColumns {
        ResultColumns::of_parts(vec![Part { rows, ids: None }])
    }

    /// Results for the rows of `batches`, written as records of `kind`: a
    /// results batch per input batch. Invoices and customers share an input
    /// `id` column that is `Utf8` without a null; other kinds may answer ids
    /// a record does not give (a plan group's assigned one).
    pub fn for_batches(kind: RecordKind, batches: &[RecordBatch]) -> ResultColumns {
        let shares_ids = matches!(kind, RecordKind::Invoices | RecordKind::Customers);
        let parts = batches
            .iter()
            .map(|batch| Part {
                rows: batch.num_rows(),
                ids: batch
                    .column_by_name("id")
                    .filter(|ids| {
                        shares_ids && *ids.data_type() == DataType::Utf8 && ids.null_count() == 0
                    })
                    .cloned(),
            })
            .collect();
        ResultColumns::of_parts(parts)
    }

    fn of_parts(parts: Vec<Part>) -> ResultColumns {
        let mut parts = parts.into_iter();
        let first = parts.next().unwrap_or(Part::REST);
        let mut columns = ResultColumns {
            parts,
            current: Part::REST,
            ids: StringBuilder::new(),
            statuses: Vec::new(),
            errors: Vec::new(),
            status_values: Arc::new(StringArray::from(STATUSES.to_vec())),
            done: Vec::new(),
        };
        columns.start(first);
        columns
    }

    /// Appends the results of the next chunk.
    pub fn append(&mut self, chunk: &WriteReport) {
        for result in &chunk.results {
            while self.statuses.len() == self.current.rows {
                self.finish_part();
            }
            match &self.current.ids {
                Some(given) => debug_assert_eq!(
                    given.as_string::<i32>().value(self.statuses.len()),
                    result.id.as_str(),
                    "a shared input id differs from its record's result"
                ),
                None => self.ids.append_value(&result.id),
            }
            if let Some(error) = &result.import_error {
                self.errors.push((self.statuses.len(), error.clone()));
            }
            self.statuses.push(match result.import_status {
                ImportStatus::Inserted => 0,
                ImportStatus::Error => 1,
            });
        }
    }

    /// Makes the current batch's room for `part`.
    fn start(&mut self, part: Part) {
        let own_ids = if part.ids.is_some() { 0 } else { part.room() };
        self.ids = StringBuilder::with_capacity(own_ids, own_ids * ID_BYTES);
        self.statuses = Vec::with_capacity(part.room());
        self.current = part;
    }

    /// Closes the current batch and starts the next part's.
    fn finish_part(&mut self) {
        let given_ids = self.current.ids.take();
        let mut ids = std::mem::take(&mut self.ids);
        let statuses = std::mem::take(&mut self.statuses);
        let errors = std::mem::take(&mut self.errors);
        let statuses =
            DictionaryArray::<Int8Type>::new(Int8Array::from(statuses), self.status_values.clone());
        self.done.push(batch(given_ids, &mut ids, statuses, errors));
        let next = self.parts.next().unwrap_or(Part::REST);
        self.start(next);
    }

    /// The results: one batch per input batch (none for no input batch),
    /// then one of any results past the input's rows.
    pub fn finish(mut self) -> Vec<RecordBatch> {
        while !self.current.is_rest() || !self.statuses.is_empty() {
            self.finish_part();
        }
        self.done
    }
}

/// One results batch; `given_ids` when the input's `id` column holds them.
fn batch(
    given_ids: Option<ArrayRef>,
    own_ids: &mut StringBuilder,
    statuses: DictionaryArray<Int8Type>,
    errors: Vec<(usize, String)>,
) -> RecordBatch {
    let rows = statuses.len();
    let ids = given_ids
        .map(|ids| ids.slice(0, rows))
        .unwrap_or_else(|| Arc::new(own_ids.finish()));
    let errors: ArrayRef = if errors.is_empty() {
        new_null_array(&DataType::Utf8, rows)
    } else {
        let bytes = errors.iter().map(|(_, error)| error.len()).sum();
        let mut column = StringBuilder::with_capacity(rows, bytes);
        let mut errors = errors.into_iter().peekable();
        for row in 0..rows {
            match errors.next_if(|(at, _)| *at == row) {
                Some((_, error)) => column.append_value(error),
                None => column.append_null(),
            }
        }
        Arc::new(column.finish())
    };
    RecordBatch::try_new(result_schema(), vec![ids, Arc::new(statuses), errors])
        .unwrap_or_else(|_| RecordBatch::new_empty(result_schema()))
}

impl WriteReport {
    /// The per-record results as one record batch, in input order.
    pub fn to_batch(&self) -> RecordBatch {
        let mut columns = ResultColumns::with_rows(self.results.len());
        columns.append(self);
        columns
            .finish()
            .pop()
            .unwrap_or_else(|| RecordBatch::new_empty(result_schema()))
    }
}

impl Ledger {
    /// [`Ledger::upsert_arrow_batches`] answering the results as record
    /// batches ([`ResultColumns`]: one per input batch, sharing the input's
    /// ids where it can), built a chunk at a time as the rows are stored, so
    /// the results are never all held as Rust values.
    ///
    /// # Errors
    ///
    /// As [`Ledger::upsert_arrow_batches`].
    pub fn upsert_arrow_table(
        &mut self,
        kind: RecordKind,
        batches: &[RecordBatch],
    ) -> Result<Vec<RecordBatch>> {
        let mut columns = ResultColumns::for_batches(kind, batches);
        self.upsert_arrow_chunks(kind, batches, |chunk| columns.append(&chunk))?;
        Ok(columns.finish())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Error;
    use crate::store::WriteResult;
    use arrow_array::{Int64Array, LargeStringArray};
    use proptest::prelude::*;

    /// An input batch of `ids` (a null where `None`).
    fn input(ids: &[Option<&str>]) -> RecordBatch {
        let ids: ArrayRef = Arc::new(StringArray::from(ids.to_vec()));
        RecordBatch::try_from_iter([("id", ids)]).unwrap()
    }

    fn report(ids: &[&str], failing: &[&str]) -> WriteReport {
        let results = ids
            .iter()
            .map(|&id| match failing.contains(&id) {
                true => {
                    WriteResult::failed(id.into(), Error::invalid("invoice", id, "amount", "bad"))
                }
                false => WriteResult::inserted(id.into()),
            })
            .collect();
        WriteReport { results }
    }

    /// Each batch's rows as (id, status, error).
    fn rows(batches: &[RecordBatch]) -> Vec<Vec<(String, String, Option<String>)>> {
        batches
            .iter()
            .map(|batch| {
                let ids = batch.column(0).as_string::<i32>();
                let statuses = batch.column(1).as_dictionary::<Int8Type>();
                let values = statuses.values().as_string::<i32>();
                let errors = batch.column(2).as_string::<i32>();
                (0..batch.num_rows())
                    .map(|row| {
                        let status = values.value(statuses.keys().value(row) as usize);
                        let error = errors.is_valid(row).then(|| errors.value(row).to_string());
                        (ids.value(row).to_string(), status.to_string(), error)
                    })
                    .collect()
            })
            .collect()
    }

    fn text_buffer(column: &ArrayRef) -> *const u8 {
        column.to_data().buffers()[1].as_ptr()
    }

    #[test]
    fn results_are_cut_like_the_input_and_share_its_ids() {
        let batches = [
            input(&[Some("a"), Some("b"), Some("c")]),
            input(&[]),
            input(&[Some("d")]),
        ];
        let mut columns = ResultColumns::for_batches(RecordKind::Invoices, &batches);
        columns.append(&report(&["a", "b"], &[]));
        columns.append(&report(&["c", "d"], &["d"]));
        let results = columns.finish();
        let inserted = |id: &str| (id.to_string(), "inserted".to_string(), None);
        let failed = (
            "d".to_string(),
            "error".to_string(),
            Some("invoice d: field `amount`: bad".to_string()),
        );
        assert_eq!(
            rows(&results),
            [
                vec![inserted("a"), inserted("b"), inserted("c")],
                vec![],
                vec![failed]
            ]
        );
        for (results, input) in results.iter().zip(&batches) {
            assert_eq!(text_buffer(results.column(0)), text_buffer(input.column(0)));
            assert_eq!(results.schema(), result_schema());
        }
        // Without a rejected record the errors are nulls, never written.
        assert_eq!(results[0].column(2).null_count(), 3);
        assert_eq!(results[0].column(2).to_data().buffers()[1].len(), 0);
    }

    #[test]
    fn ids_the_input_does_not_hold_as_given_are_the_results_own() {
        let with_null = input(&[Some("a"), None]);
        let large: ArrayRef = Arc::new(LargeStringArray::from(vec!["a", "b"]));
        let integers: ArrayRef = Arc::new(Int64Array::from(vec![1, 2]));
        let cases = [
            (RecordKind::Invoices, with_null),
            (
                RecordKind::Customers,
                RecordBatch::try_from_iter([("id", large)]).unwrap(),
            ),
            (
                RecordKind::Invoices,
                RecordBatch::try_from_iter([("id", integers)]).unwrap(),
            ),
            (RecordKind::PlanGroups, input(&[Some("a"), Some("b")])),
        ];
        for (kind, batch) in cases {
            let mut columns = ResultColumns::for_batches(kind, std::slice::from_ref(&batch));
            columns.append(&report(&["a", "pg_1"], &[]));
            let results = columns.finish();
            assert_eq!(rows(&results)[0][1].0, "pg_1");
            assert_eq!(results[0].column(0).data_type(), &DataType::Utf8);
        }
    }

    #[test]
    fn a_report_is_one_batch_and_more_results_than_rows_name_their_own_ids() {
        assert_eq!(rows(&[report(&["x", "y"], &["y"]).to_batch()])[0].len(), 2);
        assert_eq!(WriteReport::default().to_batch().num_rows(), 0);
        let batches = [input(&[Some("a")])];
        let mut columns = ResultColumns::for_batches(RecordKind::Invoices, &batches);
        columns.append(&report(&["a", "extra"], &[]));
        let ids: Vec<Vec<String>> = rows(&columns.finish())
            .into_iter()
            .map(|batch| batch.into_iter().map(|(id, _, _)| id).collect())
            .collect();
        assert_eq!(ids, [vec!["a".to_string()], vec!["extra".to_string()]]);
    }

    proptest! {
        /// However the results arrive in chunks, each input batch gets one
        /// results batch of its rows, in order, with the results' own
        /// values.
        #[test]
        fn chunks_of_results_fill_the_batches_in_order(
            sizes in proptest::collection::vec(0usize..6, 0..6),
            cuts in proptest::collection::vec(0usize..8, 0..8),
            failing in proptest::collection::vec(any::<bool>(), 30),
        ) {
            let total: usize = sizes.iter().sum();
            let names: Vec<String> = (0..total).map(|i| format!("r{i}")).collect();
            let batches: Vec<RecordBatch> = sizes
                .iter()
                .scan(0, |start, &size| {
                    let ids: Vec<Option<&str>> =
                        names[*start..*start + size].iter().map(|n| Some(n.as_str())).collect();
                    *start += size;
                    Some(input(&ids))
                })
                .collect();
            let ids: Vec<&str> = names.iter().map(String::as_str).collect();
            let failed: Vec<&str> = ids.iter().zip(&failing).filter(|(_, f)| **f).map(|(id, _)| *id).collect();
            let whole = report(&ids, &failed);
            let mut columns = ResultColumns::for_batches(RecordKind::Invoices, &batches);
            let mut start: usize = 0;
            for cut in cuts.iter().chain(std::iter::once(&usize::MAX)) {
                let end = start.saturating_add(*cut).min(total);
                columns.append(&WriteReport { results: whole.results[start..end].to_vec() });
                start = end;
            }
            let results = columns.finish();
            prop_assert_eq!(results.iter().map(RecordBatch::num_rows).collect::<Vec<_>>(), sizes);
            let flat: Vec<_> = rows(&results).into_iter().flatten().collect();
            prop_assert_eq!(flat, rows(&[whole.to_batch()]).remove(0));
        }
    }
}
