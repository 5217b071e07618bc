//! Results as Apache Arrow record batches, for front ends that hand data
//! frames on (Python, Node, files): movements one row per movement, a
//! report one row per period, item or metric. Movements are built straight
//! from their typed rows, with one fixed schema ([`Ledger::movements_batches`]);
//! a report's columns are typed by its schema ([`batch_of_table`]); otherwise
//! a column's type follows its values, so integers (cents, counts) stay
//! integers:
//! - integers: `Int64`; integers mixed with fractions: `Float64`;
//! - strings (dates too, as the JSON results write them): `Utf8`;
//! - booleans: `Boolean`;
//! - arrays: `List`, objects: `Struct` (their items typed the same way);
//! - a column whose values are of several kinds (say numbers and strings):
//!   `Utf8`, strings as they are and anything else as its JSON text;
//! - a column of nulls only: `Null`.
//!
//! Absent fields and nulls are null cells; columns are in the order the
//! rows first name them.

mod cells;
mod ipc;
mod movements;
mod results;
mod text;

pub use ipc::{IPC_DECOMPRESSED_LIMIT, batches_from_ipc, ipc_of, ipc_of_batches};
pub use movements::movement_schema;
pub use results::{ResultColumns, result_schema};

use crate::error::{Error, Result};
pub use crate::reports::result::report_rows;
use crate::reports::result::{ReportTable, TableColumn};
use crate::reports::row_cells::CellRef;
use crate::reports::row_keys::KeyOrder;
use crate::reports::{Kind, Report, ReportParams};
use crate::{Ledger, MovementFilter};
use arrow_array::{
    ArrayRef, BooleanArray, Float64Array, Int64Array, ListArray, NullArray, RecordBatch,
    RecordBatchOptions, StringArray, StructArray, builder::StringBuilder,
};
use arrow_buffer::{NullBuffer, OffsetBuffer};
use arrow_schema::{Field, Schema};
use chrono::{DateTime, Utc};
use rayon::prelude::*;
use serde_json::Value;
use std::sync::Arc;

impl Ledger {
    /// [`Ledger::movements`] as record batches of [`movement_schema`], one
    /// row per movement, in its order, cut into batches of up to 65,536
    /// rows (none when no movement matches), built on every core straight
    /// from the rows the replays hold.
    pub fn movements_batches(
        &self,
        as_of: DateTime<Utc>,
        filter: &MovementFilter,
    ) -> Result<Vec<RecordBatch>> {
        self.with_movements(as_of, filter, movements::batches)?
    }

    /// [`Ledger::report`] as a record batch, rows as [`report_rows`] cuts
    /// the result and columns typed by the report's schema: the batch
    /// [`batch_of_table`] makes of [`Ledger::report_table`], built from the
    /// report's typed rows written straight into cells by column, with no
    /// JSON object per row.
    pub fn report_batch(
        &self,
        name: &str,
        params: &ReportParams,
        as_of: DateTime<Utc>,
    ) -> Result<RecordBatch> {
        let report = Report::find(name)?;
        let answer = report.run(&self.derived(), params, as_of)?;
        let (columns, cells) = answer.into_cells(report);
        let rows = cells.rows();
        let arrays: Result<Vec<ArrayRef>> = columns
            .par_iter()
            .map(|column| array_of_cells(column, cells.column(&column.name)))
            .collect();
        cells.drop_on_every_core();
        batch_of_arrays(&columns, arrays.map_err(|e| e.in_report(name))?, rows)
    }
}

/// A [`ReportTable`] as one record batch, a column per table column, typed
/// by its kind: money and counts `Int64`, percents and other numbers
/// `Float64`, dates, timestamps and texts `Utf8`, booleans `Boolean`, so a
/// column has its type even when every cell is null. A `*-table` period
/// column, whose rows mix money, counts and rates, is `Float64` (a whole
/// number beyond 2^53, which it would round, is an error). Nested kinds
/// are typed by their values as [`batch_of_rows`] types them, and so is a
/// column with a value its kind does not admit.
pub fn batch_of_table(table: &ReportTable) -> Result<RecordBatch> {
    let rows: Vec<Option<&Value>> = table.rows.iter().map(Some).collect();
    let names = table.columns.iter().map(|column| column.name.as_str());
    let cells_by_column = KeyOrder::named(names).cells(&rows);
    batch_of_columns(&table.columns, cells_by_column, table.rows.len())
        .map_err(|e| e.in_report(table.report))
}

/// [`batch_of_table`] over the cells of each column, `rows` long.
fn batch_of_columns(
    table_columns: &[TableColumn],
    cells_by_column: Vec<Vec<Option<&Value>>>,
    rows: usize,
) -> Result<RecordBatch> {
    let arrays: Result<Vec<ArrayRef>> = table_columns
        .par_iter()
        .zip(cells_by_column)
        .map(|(column, cells)| array_of_column(column, &cells))
        .collect();
    batch_of_arrays(table_columns, arrays?, rows)
}

/// The record batch of a table's columns, an array each, `rows` long.
fn batch_of_arrays(
    table_columns: &[TableColumn],
    arrays: Vec<ArrayRef>,
    rows: usize,
) -> Result<RecordBatch> {
    let fields = table_columns
        .iter()
        .zip(&arrays)
        .map(|(column, array)| Field::new(&column.name, array.data_type().clone(), true));
    let schema = Arc::new(Schema::new(fields.collect::<Vec<_>>()));
    let options = RecordBatchOptions::new().with_row_count(Some(rows));
    RecordBatch::try_new_with_options(schema, arrays, &options)
        .map_err(|error| Error::query("rows", error.to_string()))
}

/// [`array_of_column`] of a column's stored cells, built straight from
/// them (see [`cells`]) as they lie in their pieces.
fn array_of_cells<'a>(
    column: &TableColumn,
    cells: impl Iterator<Item = CellRef<'a>> + Clone,
) -> Result<ArrayRef> {
    let all = |fits: fn(&CellRef<'_>) -> bool| cells.clone().all(|cell| fits(&cell));
    Ok(match column.kind {
        Kind::Money(_) | Kind::Count
            if all(|c| matches!(c, CellRef::Absent | CellRef::Null | CellRef::Integer(_))) =>
        {
            cells::integers(cells)
        }
        Kind::Percent | Kind::Number if all(|c| !c.is_present() || cells::is_number(c)) => {
            cells::reals(cells)
        }
        Kind::Metric if all(|c| !c.is_present() || cells::is_number(c)) => {
            cells::metric_reals(&column.name, cells)?
        }
        Kind::Date | Kind::Timestamp | Kind::Text
            if cells.clone().all(|c| match c {
                CellRef::Absent | CellRef::Null => true,
                CellRef::Text(text) => column.kind.admits_text(text),
                _ => false,
            }) =>
        {
            cells::texts(cells)
        }
        Kind::Boolean
            if all(|c| matches!(c, CellRef::Absent | CellRef::Null | CellRef::Bool(_))) =>
        {
            cells::booleans(cells)
        }
        _ => cells::column_of_cells(&cells.collect::<Vec<_>>()),
    })
}

/// A table column's cells as an array of the column's kind (see
/// [`batch_of_table`]).
fn array_of_column(column: &TableColumn, cells: &[Option<&Value>]) -> Result<ArrayRef> {
    // Only a scalar kind's type depends on whether its values fit it.
    let fits = || cells.iter().flatten().all(|v| column.kind.admits(v));
    Ok(match column.kind {
        Kind::Money(_) | Kind::Count if fits() => Arc::new(
            cells
                .iter()
                .map(|v| v.and_then(Value::as_i64))
                .collect::<Int64Array>(),
        ),
        Kind::Percent | Kind::Number if fits() => Arc::new(
            cells
                .iter()
                .map(|v| v.and_then(Value::as_f64))
                .collect::<Float64Array>(),
        ),
        Kind::Metric if fits() => {
            let magnitude = |v: &Value| v.as_u64().or(v.as_i64().map(i64::unsigned_abs));
            if let Some(number) = cells
                .iter()
                .flatten()
                .find(|v| magnitude(v).is_some_and(|n| n > cells::EXACT_IN_FLOAT))
            {
                return Err(cells::beyond_float(&column.name, &number.to_string()));
            }
            Arc::new(
                cells
                    .iter()
                    .map(|v| v.and_then(Value::as_f64))
                    .collect::<Float64Array>(),
            )
        }
        Kind::Date | Kind::Timestamp | Kind::Text if fits() => Arc::new(
            cells
                .iter()
                .map(|v| v.and_then(Value::as_str))
                .collect::<StringArray>(),
        ),
        Kind::Boolean if fits() => Arc::new(
            cells
                .iter()
                .map(|v| v.and_then(Value::as_bool))
                .collect::<BooleanArray>(),
        ),
        _ => column_of(cells),
    })
}

/// A report's answer (as [`Ledger::report`] gives it, or a client receives
/// it from the service) as a record batch, rows as [`report_rows`] cuts it
/// and columns typed by their values ([`batch_of_rows`]); with the report's
/// name, [`ReportTable::from_result`] and [`batch_of_table`] type them by
/// its schema.
pub fn report_result_batch(result: Value) -> Result<RecordBatch> {
    batch_of_rows(&report_rows(result))
}

/// JSON rows as one record batch (see the module documentation for the
/// column types). A row that is not an object is an error naming it.
pub fn batch_of_rows(rows: &[Value]) -> Result<RecordBatch> {
    if let Some(i) = rows.iter().position(|row| !row.is_object()) {
        return Err(Error::query(&format!("rows[{i}]"), "must be an object"));
    }
    let order = KeyOrder::of(rows.iter().filter_map(Value::as_object));
    let cells: Vec<Option<&Value>> = rows.iter().map(Some).collect();
    let names = order.names();
    let mut fields = Vec::with_capacity(names.len());
    let mut columns = Vec::with_capacity(names.len());
    for (name, cells) in names.iter().zip(order.cells(&cells)) {
        let column = column_of(&cells);
        fields.push(Field::new(*name, column.data_type().clone(), true));
        columns.push(column);
    }
    let options = RecordBatchOptions::new().with_row_count(Some(rows.len()));
    RecordBatch::try_new_with_options(Arc::new(Schema::new(fields)), columns, &options)
        .map_err(|error| Error::query("rows", error.to_string()))
}

/// One column of cells (`None` or null: a null cell), typed by its values.
fn column_of(cells: &[Option<&Value>]) -> ArrayRef {
    let present: Vec<&Value> = cells
        .iter()
        .flatten()
        .filter(|v| !v.is_null())
        .copied()
        .collect();
    let valid = || {
        NullBuffer::from(
            cells
                .iter()
                .map(|v| v.is_some_and(|v| !v.is_null()))
                .collect::<Vec<bool>>(),
        )
    };
    if present.is_empty() {
        return Arc::new(NullArray::new(cells.len()));
    }
    if present.iter().all(|v| v.is_boolean()) {
        return Arc::new(
            cells
                .iter()
                .map(|v| v.and_then(Value::as_bool))
                .collect::<BooleanArray>(),
        );
    }
    if present.iter().all(|v| v.is_i64()) {
        return Arc::new(
            cells
                .iter()
                .map(|v| v.and_then(Value::as_i64))
                .collect::<Int64Array>(),
        );
    }
    if present.iter().all(|v| v.is_number()) {
        return Arc::new(
            cells
                .iter()
                .map(|v| v.and_then(Value::as_f64))
                .collect::<Float64Array>(),
        );
    }
    if present.iter().all(|v| v.is_array()) {
        let mut items: Vec<Option<&Value>> = Vec::new();
        let mut lengths = Vec::with_capacity(cells.len());
        for cell in cells {
            let list = cell
                .and_then(Value::as_array)
                .map_or(&[][..], Vec::as_slice);
            lengths.push(list.len());
            items.extend(list.iter().map(Some));
        }
        return list_of(column_of(&items), lengths, valid());
    }
    if present.iter().all(|v| v.is_object()) {
        let order = KeyOrder::of(present.iter().filter_map(|v| v.as_object()));
        if order.names().is_empty() {
            return Arc::new(StructArray::new_empty_fields(cells.len(), Some(valid())));
        }
        let children: Vec<ArrayRef> = order
            .cells(cells)
            .into_par_iter()
            .map(|inner| column_of(&inner))
            .collect();
        let fields = order
            .names()
            .iter()
            .zip(&children)
            .map(|(key, child)| Field::new(*key, child.data_type().clone(), true));
        return Arc::new(StructArray::new(fields.collect(), children, Some(valid())));
    }
    let mut texts = StringBuilder::with_capacity(cells.len(), 0);
    for cell in cells {
        match cell {
            None | Some(Value::Null) => texts.append_null(),
            Some(Value::String(text)) => texts.append_value(text),
            Some(other) => texts.append_value(other.to_string()),
        }
    }
    Arc::new(texts.finish())
}

/// A list column of `lengths` items each (nulls where not `valid`), the
/// items one after another in `items`.
fn list_of(items: ArrayRef, lengths: Vec<usize>, valid: NullBuffer) -> ArrayRef {
    let field = Arc::new(Field::new("item", items.data_type().clone(), true));
    Arc::new(ListArray::new(
        field,
        OffsetBuffer::from_lengths(lengths),
        items,
        Some(valid),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::Array;
    use arrow_array::cast::AsArray;
    use arrow_array::types::{Float64Type, Int64Type};
    use arrow_schema::DataType;
    use serde_json::json;

    #[test]
    fn columns_are_typed_by_their_values() {
        let rows = [
            json!({"date": "2024-01-01", "mrr": 3000, "rate": 1, "mixed": 1, "flag": true,
                   "plans": ["m"], "summary": {"n": 1}}),
            json!({"date": "2024-02-01", "mrr": null, "rate": 2.5, "mixed": "x", "empty": null}),
        ];
        let batch = batch_of_rows(&rows).unwrap();
        let types: Vec<(String, DataType)> = batch
            .schema()
            .fields()
            .iter()
            .map(|f| (f.name().clone(), f.data_type().clone()))
            .collect();
        assert_eq!(types[0], ("date".to_string(), DataType::Utf8));
        assert_eq!(types[1], ("mrr".to_string(), DataType::Int64));
        assert_eq!(types[2], ("rate".to_string(), DataType::Float64));
        assert_eq!(types[3], ("mixed".to_string(), DataType::Utf8));
        assert_eq!(types[4], ("flag".to_string(), DataType::Boolean));
        assert!(matches!(types[5].1, DataType::List(_)));
        assert!(matches!(types[6].1, DataType::Struct(_)));
        assert_eq!(types[7], ("empty".to_string(), DataType::Null));
        let mrr = batch.column(1).as_primitive::<Int64Type>();
        assert_eq!((mrr.value(0), mrr.is_null(1)), (3000, true));
        assert_eq!(batch.column(3).as_string::<i32>().value(0), "1");
        assert!(batch_of_rows(&[json!(1)]).is_err());
        assert_eq!(batch_of_rows(&[]).unwrap().num_rows(), 0);
    }

    #[test]
    fn report_results_are_cut_into_rows() {
        let table = json!({"columns": ["2024-01", "2024-02"],
                           "rows": [{"metric": "mrr", "values": [1, 2]}]});
        assert_eq!(
            report_rows(table),
            [json!({"metric": "mrr", "2024-01": 1, "2024-02": 2})]
        );
        let series = json!({"result": [{"date": "2024-01-01"}], "summary": {}});
        assert_eq!(report_rows(series), [json!({"date": "2024-01-01"})]);
        let list = json!({"result": {"count": 1, "list": [{"id": "a"}]}});
        assert_eq!(report_rows(list), [json!({"id": "a"})]);
        assert_eq!(report_rows(json!({"a": 1})), [json!({"a": 1})]);
    }

    #[test]
    fn a_table_cell_a_float_would_round_is_an_error() {
        // 9,008 customers at 10^12 cents a month: 9,008,000,000,000,000
        // cents in all, past 2^53 (9,007,199,254,740,992).
        let mut ledger = Ledger::default();
        ledger.upsert_plans(&[json!({"id": "m", "name": "M", "interval": "month",
                                    "interval_count": 1, "currency": "USD"})]);
        let ids: Vec<String> = (0..9008).map(|i| format!("c{i}")).collect();
        let customers: Vec<Value> = ids.iter().map(|id| json!({"id": id, "name": id})).collect();
        ledger.upsert_customers(&customers);
        let invoices: Vec<Value> = ids
            .iter()
            .map(|id| {
                json!({"id": id, "customer_id": id, "type": "subscription", "plan_id": "m",
                       "invoice_date": "2024-01-01", "amount": crate::money::MAX_AMOUNT, "currency": "USD"})
            })
            .collect();
        assert_eq!(ledger.upsert_invoices(&invoices).accepted(), 9008);
        let as_of = "2024-01-15T00:00:00Z".parse().unwrap();
        let january = ReportParams::from([("date".to_string(), "20240101-20240131".to_string())]);
        let expected = "report `mrr-table`: 9008000000000000 in the period column \
            `2024-01-01` is outside the range of a `*-table` report's Arrow period columns, \
            Float64, whole numbers exact to 2^53 (9007199254740992) either way; the report \
            without `-table` holds money as Int64";
        let error = ledger
            .report_batch("mrr-table", &january, as_of)
            .unwrap_err();
        assert_eq!(
            (error.code(), error.to_string().as_str()),
            ("out_of_range", expected)
        );
        let answer = ledger.report("mrr-table", &january, as_of).unwrap();
        let from_answer = ReportTable::from_result("mrr-table", answer).unwrap();
        assert_eq!(
            batch_of_table(&from_answer).unwrap_err().to_string(),
            expected
        );
        let series = ledger.report_batch("mrr", &january, as_of).unwrap();
        let total = series.column_by_name("total_mrr").unwrap();
        assert_eq!(
            total.as_primitive::<Int64Type>().value(0),
            9_008_000_000_000_000
        );
    }

    #[test]
    fn report_columns_are_typed_by_the_schema_even_when_null() {
        let mut ledger = Ledger::default();
        ledger.upsert_plans(&[json!({"id": "m", "name": "M", "interval": "month",
                                    "interval_count": 1, "currency": "USD"})]);
        ledger.upsert_customers(&[json!({"id": "a", "name": "A"})]);
        ledger.upsert_invoices(&[
            json!({"id": "i1", "customer_id": "a", "type": "subscription",
            "plan_id": "m", "invoice_date": "2024-01-15", "amount": 3000, "currency": "USD"}),
        ]);
        let as_of = "2024-02-15T00:00:00Z".parse().unwrap();
        let params = ReportParams::from([("date".to_string(), "20240101-20240131".to_string())]);
        let batch = ledger.report_batch("mrr", &params, as_of).unwrap();
        let schema = batch.schema();
        let type_of = |name: &str| schema.field_with_name(name).unwrap().data_type().clone();
        assert_eq!(type_of("date"), DataType::Utf8);
        assert_eq!(type_of("total_mrr"), DataType::Int64);
        assert_eq!(type_of("total_customers"), DataType::Int64);
        assert_eq!(type_of("ltv"), DataType::Int64);
        assert_eq!(type_of("quick_ratio"), DataType::Float64);
        assert!(batch.column_by_name("quick_ratio").unwrap().is_null(0));
        assert_eq!(type_of("nrr"), DataType::Float64);
        let mrr = batch.column_by_name("total_mrr").unwrap();
        assert_eq!(mrr.as_primitive::<Int64Type>().value(0), 3000);
        // The rows of a `*-table` mix kinds: every period column is
        // Float64, January's (money and counts, its rates null) as
        // February's (with rates).
        let two_months =
            ReportParams::from([("date".to_string(), "20240101-20240229".to_string())]);
        let table = ledger
            .report_batch("mrr-table", &two_months, as_of)
            .unwrap();
        let periods: Vec<(String, DataType)> = table.schema().fields()[1..]
            .iter()
            .map(|f| (f.name().clone(), f.data_type().clone()))
            .collect();
        assert_eq!(
            periods,
            [
                ("2024-01-01".to_string(), DataType::Float64),
                ("2024-02-01".to_string(), DataType::Float64)
            ]
        );
        let metrics = table.column(0).as_string::<i32>();
        let row = |name: &str| metrics.iter().position(|m| m == Some(name)).unwrap();
        let january = table.column(1).as_primitive::<Float64Type>();
        assert_eq!(january.value(row("total_mrr")), 3000.0);
        assert!(january.is_null(row("quick_ratio")));
        let answer = ledger.report("mrr-table", &two_months, as_of).unwrap();
        let from_answer = ReportTable::from_result("mrr-table", answer).unwrap();
        assert_eq!(
            batch_of_table(&from_answer).unwrap().schema(),
            table.schema()
        );
        // No rows: the declared columns, typed.
        let empty = ledger
            .report_batch("cashflow-outstanding-unpaid", &ReportParams::new(), as_of)
            .unwrap();
        let empty_types: Vec<(String, DataType)> = empty
            .schema()
            .fields()
            .iter()
            .take(8)
            .map(|f| (f.name().clone(), f.data_type().clone()))
            .collect();
        assert_eq!((empty.num_rows(), empty.num_columns()), (0, 15));
        let expected = [
            ("invoice_id", DataType::Utf8),
            ("invoice_number", DataType::Utf8),
            ("type", DataType::Utf8),
            ("status", DataType::Utf8),
            ("invoice_date", DataType::Utf8),
            ("due_date", DataType::Utf8),
            ("days_past_due", DataType::Int64),
            ("bucket", DataType::Utf8),
        ]
        .map(|(name, kind)| (name.to_string(), kind));
        assert_eq!(empty_types, expected);
    }

    #[test]
    fn write_results_are_a_batch() {
        let mut ledger = Ledger::default();
        let report =
            ledger.upsert_customers(&[json!({"id": "a", "name": "A"}), json!({"id": "b"})]);
        let batch = report.to_batch();
        let column = |i: usize| batch.column(i).as_string::<i32>();
        assert_eq!((column(0).value(0), column(0).value(1)), ("a", "b"));
        let statuses = batch
            .column(1)
            .as_dictionary::<arrow_array::types::Int8Type>();
        let status = |row: usize| {
            let key = statuses.keys().value(row) as usize;
            statuses.values().as_string::<i32>().value(key)
        };
        assert_eq!((status(0), status(1)), ("inserted", "error"));
        assert!(column(2).is_null(0));
        assert_eq!(column(2).value(1), "customer b: field `name`: is required");
    }
}
