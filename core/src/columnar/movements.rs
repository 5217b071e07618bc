//! Movements as record batches of one fixed schema, built straight from
//! the typed rows where the replays hold them: no JSON and no copied rows
//! in between, a batch per 65,536 rows, each built on a core in one pass.

use super::text::{TextColumn, TextListColumn, item_field};
use crate::derive::movements::Movement;
use crate::error::{Error, Result};
use crate::ids::PlanId;
use crate::ledger::warm_block_at;
use arrow_array::{ArrayRef, Int64Array, RecordBatch};
use arrow_schema::{DataType, Field, Schema};
use chrono::{Datelike, NaiveDate};
use rayon::prelude::*;
use std::sync::Arc;

/// The columns of a movement batch, in the order of the movement records'
/// fields: dates (`YYYY-MM-DD`), ids, kinds and currencies as `Utf8`,
/// amounts and counts as `Int64`, the plan lists as lists of `Utf8`.
pub fn movement_schema() -> Schema {
    let text = |name: &str| Field::new(name, DataType::Utf8, false);
    let integer = |name: &str| Field::new(name, DataType::Int64, false);
    let plans = |name: &str| Field::new(name, DataType::List(Arc::new(item_field())), false);
    Schema::new(vec![
        text("date"),
        text("customer_id"),
        text("type"),
        text("subtype"),
        integer("mrr_change"),
        integer("mrr_change_base_currency"),
        integer("customer_count_change"),
        integer("quantity_change"),
        text("currency"),
        plans("plans_before"),
        plans("plans_after"),
    ])
}

/// Rows per batch of movements. Unit tests lower it so that their few
/// movements take several batches.
const BATCH_ROWS: usize = if cfg!(test) { 2 } else { 1 << 16 };

/// The rows as batches of [`movement_schema`] of up to [`BATCH_ROWS`] rows,
/// in order, the batches built on every core.
pub(super) fn batches(rows: &[&Movement]) -> Result<Vec<RecordBatch>> {
    let schema = Arc::new(movement_schema());
    rows.par_chunks(BATCH_ROWS)
        .map(|chunk| MovementColumns::of(chunk).finish(&schema))
        .collect()
}

/// The columns of one batch of movements, filled a row at a time so that
/// each row, wherever its replay keeps it, is read once.
struct MovementColumns {
    dates: TextColumn,
    customer_ids: TextColumn,
    kinds: TextColumn,
    subtypes: TextColumn,
    mrr_changes: Vec<i64>,
    mrr_changes_base_currency: Vec<i64>,
    customer_count_changes: Vec<i64>,
    quantity_changes: Vec<i64>,
    currencies: TextColumn,
    plans_before: TextListColumn,
    plans_after: TextListColumn,
}

impl MovementColumns {
    fn of(rows: &[&Movement]) -> MovementColumns {
        let n = rows.len();
        let text = |bytes_per_row: usize| TextColumn::with_capacity(n, n * bytes_per_row);
        let plans = || TextListColumn::with_capacity(n, n, n * 12);
        let mut columns = MovementColumns {
            dates: text(10),
            customer_ids: text(16),
            kinds: text(8),
            subtypes: text(8),
            mrr_changes: Vec::with_capacity(n),
            mrr_changes_base_currency: Vec::with_capacity(n),
            customer_count_changes: Vec::with_capacity(n),
            quantity_changes: Vec::with_capacity(n),
            currencies: text(3),
            plans_before: plans(),
            plans_after: plans(),
        };
        for k in 0..n {
            warm_block_at(rows, k);
            columns.push(rows[k]);
        }
        columns
    }

    fn push(&mut self, row: &Movement) {
        push_date(&mut self.dates, row.date);
        self.customer_ids.push(row.customer_id.as_str().as_bytes());
        self.kinds.push(row.kind.as_str().as_bytes());
        self.subtypes.push(row.subtype.as_str().as_bytes());
        self.mrr_changes.push(row.mrr_change);
        self.mrr_changes_base_currency
            .push(row.mrr_change_base_currency);
        self.customer_count_changes
            .push(i64::from(row.customer_count_change));
        self.quantity_changes.push(row.quantity_change);
        self.currencies.push(row.currency.code());
        self.plans_before
            .push(row.plans_before.iter().map(PlanId::as_str));
        self.plans_after
            .push(row.plans_after.iter().map(PlanId::as_str));
    }

    fn finish(self, schema: &Arc<Schema>) -> Result<RecordBatch> {
        let integers = |values: Vec<i64>| Arc::new(Int64Array::from(values)) as ArrayRef;
        let columns: Vec<ArrayRef> = vec![
            Arc::new(self.dates.finish("date")?),
            Arc::new(self.customer_ids.finish("customer_id")?),
            Arc::new(self.kinds.finish("type")?),
            Arc::new(self.subtypes.finish("subtype")?),
            integers(self.mrr_changes),
            integers(self.mrr_changes_base_currency),
            integers(self.customer_count_changes),
            integers(self.quantity_changes),
            Arc::new(self.currencies.finish("currency")?),
            Arc::new(self.plans_before.finish("plans_before")?),
            Arc::new(self.plans_after.finish("plans_after")?),
        ];
        RecordBatch::try_new(schema.clone(), columns)
            .map_err(|error| Error::query("movements", error.to_string()))
    }
}

/// Appends a date as the JSON answers write it, `YYYY-MM-DD`; a year
/// outside 0-9999 as chrono writes it (`+12345-01-01`).
fn push_date(dates: &mut TextColumn, date: NaiveDate) {
    let year = date.year();
    if !(0..=9999).contains(&year) {
        dates.push(date.to_string().as_bytes());
        return;
    }
    let write_digits = |mut n: u32, out: &mut [u8]| {
        for digit in out.iter_mut().rev() {
            *digit = b'0' + (n % 10) as u8;
            n /= 10;
        }
    };
    let mut text = *b"0000-00-00";
    write_digits(year.unsigned_abs(), &mut text[0..4]);
    write_digits(date.month(), &mut text[5..7]);
    write_digits(date.day(), &mut text[8..10]);
    dates.push(&text);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Ledger, MovementFilter, RecordKind, Settings};
    use arrow_array::Array;
    use arrow_array::cast::AsArray;
    use arrow_array::types::Int64Type;
    use chrono::{TimeZone, Utc};
    use serde_json::json;

    fn ledger() -> Ledger {
        let mut ledger = Ledger::new(Settings::default());
        let plans = [
            json!({"id": "m", "name": "M", "interval": "month", "currency": "USD"}),
            json!({"id": "p", "name": "P", "interval": "month", "currency": "USD"}),
        ];
        ledger.upsert(RecordKind::Plans, &plans);
        ledger.upsert(RecordKind::Customers, &[json!({"id": "A", "name": "A"})]);
        let invoice = |id: &str, plan: &str, date: &str, amount: i64| {
            json!({"id": id, "customer_id": "A", "type": "subscription", "plan_id": plan,
                   "invoice_date": date, "amount": amount, "currency": "USD"})
        };
        let report = ledger.upsert(
            RecordKind::Invoices,
            &[
                invoice("i1", "m", "2024-01-01", 3000),
                invoice("i2", "p", "2024-02-01", 5000),
            ],
        );
        assert_eq!(report.accepted(), 2);
        ledger
    }

    #[test]
    fn movements_are_columns_of_their_typed_rows() {
        let mut ledger = ledger();
        ledger.upsert(RecordKind::Customers, &[json!({"id": "B", "name": "B"})]);
        ledger.upsert(
            RecordKind::Invoices,
            &[
                json!({"id": "b1", "customer_id": "B", "type": "subscription", "plan_id": "m",
                     "invoice_date": "2024-01-15", "amount": 1000, "currency": "USD"}),
            ],
        );
        let as_of = Utc.with_ymd_and_hms(2024, 2, 15, 0, 0, 0).unwrap();
        let batches = ledger
            .movements_batches(as_of, &MovementFilter::default())
            .unwrap();
        // Batches of two rows in unit tests: the third row starts a second.
        let lengths: Vec<usize> = batches.iter().map(RecordBatch::num_rows).collect();
        assert_eq!(lengths, [2, 1]);
        assert!(batches.iter().all(|b| *b.schema() == movement_schema()));
        let text = |name: &str| -> Vec<String> {
            let cells = batches.iter().flat_map(|b| {
                let column = b.column_by_name(name).unwrap().as_string::<i32>();
                column
                    .iter()
                    .map(|cell| cell.unwrap().to_string())
                    .collect::<Vec<_>>()
            });
            cells.collect()
        };
        let integer = |name: &str| -> Vec<i64> {
            let cells = batches.iter().flat_map(|b| {
                let column = b.column_by_name(name).unwrap();
                column.as_primitive::<Int64Type>().values().to_vec()
            });
            cells.collect()
        };
        let plans = |name: &str| -> Vec<Vec<String>> {
            let lists = batches.iter().flat_map(|b| {
                let lists = b.column_by_name(name).unwrap().as_list::<i32>();
                assert_eq!(lists.null_count(), 0);
                let items = lists.iter().map(|list| {
                    let list = list.unwrap();
                    let items = list.as_string::<i32>();
                    items.iter().map(|p| p.unwrap().to_string()).collect()
                });
                items.collect::<Vec<_>>()
            });
            lists.collect()
        };
        assert_eq!(text("date"), ["2024-01-01", "2024-01-15", "2024-02-01"]);
        assert_eq!(text("customer_id"), ["A", "B", "A"]);
        assert_eq!(text("type"), ["new", "new", "expansion"]);
        assert_eq!(text("subtype"), ["new", "new", "upgrade"]);
        assert_eq!(integer("mrr_change"), [3000, 1000, 2000]);
        assert_eq!(integer("mrr_change_base_currency"), [3000, 1000, 2000]);
        assert_eq!(integer("customer_count_change"), [1, 1, 0]);
        assert_eq!(integer("quantity_change"), [1, 1, 0]);
        assert_eq!(text("currency"), ["USD", "USD", "USD"]);
        let m = || vec!["m".to_string()];
        assert_eq!(plans("plans_before"), [vec![], vec![], m()]);
        assert_eq!(plans("plans_after"), [m(), m(), vec!["p".to_string()]]);
    }

    #[test]
    fn one_customers_movements_are_filtered_the_same_way() {
        let ledger = ledger();
        let as_of = Utc.with_ymd_and_hms(2024, 2, 15, 0, 0, 0).unwrap();
        let filter = MovementFilter {
            customer: Some("A".into()),
            kinds: vec![crate::MovementKind::Expansion],
            ..MovementFilter::default()
        };
        let batches = ledger.movements_batches(as_of, &filter).unwrap();
        assert_eq!(batches.len(), 1);
        let dates = batches[0]
            .column_by_name("date")
            .unwrap()
            .as_string::<i32>();
        assert_eq!(dates.iter().collect::<Vec<_>>(), [Some("2024-02-01")]);
    }

    #[test]
    fn dates_are_written_as_the_json_answers_write_them() {
        let mut dates = TextColumn::with_capacity(6, 60);
        let days = [
            (2024, 2, 29),
            (999, 1, 9),
            (0, 12, 31),
            (9999, 12, 31),
            (-1, 1, 1),
            (10000, 1, 1),
        ];
        for (year, month, day) in days {
            push_date(
                &mut dates,
                NaiveDate::from_ymd_opt(year, month, day).unwrap(),
            );
        }
        let dates = dates.finish("date").unwrap();
        let written: Vec<&str> = dates.iter().flatten().collect();
        assert_eq!(
            written,
            [
                "2024-02-29",
                "0999-01-09",
                "0000-12-31",
                "9999-12-31",
                "-0001-01-01",
                "+10000-01-01"
            ]
        );
        for (text, (year, month, day)) in written.iter().zip(days) {
            let date = NaiveDate::from_ymd_opt(year, month, day).unwrap();
            assert_eq!(*text, serde_json::to_value(date).unwrap());
        }
    }

    #[test]
    fn no_movement_is_no_batch() {
        let ledger = ledger();
        let as_of = Utc.with_ymd_and_hms(2023, 12, 1, 0, 0, 0).unwrap();
        let batches = ledger
            .movements_batches(as_of, &MovementFilter::default())
            .unwrap();
        assert!(batches.is_empty());
    }
}
