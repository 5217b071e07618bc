//! Movements as one record batch, built column by column from the typed
//! rows: no JSON in between, and the same schema whatever the rows hold
//! (an empty answer too).

use crate::derive::movements::{Movement, PlanList};
use crate::error::{Error, Result};
use arrow_array::builder::{ListBuilder, StringBuilder};
use arrow_array::{ArrayRef, Int64Array, RecordBatch, StringArray};
use arrow_schema::{DataType, Field, Schema};
use rayon::prelude::*;
use std::fmt::Write;
use std::sync::Arc;

/// The columns of a movement batch, in the order of the movement records'
/// fields: dates (`YYYY-MM-DD`), ids, kinds and currencies as `Utf8`,
/// amounts and counts as `Int64`, the plan lists as lists of `Utf8`.
pub(super) fn schema() -> Schema {
    let text = |name: &str| Field::new(name, DataType::Utf8, false);
    let integer = |name: &str| Field::new(name, DataType::Int64, false);
    let plans = |name: &str| {
        let item = Field::new("item", DataType::Utf8, true);
        Field::new(name, DataType::List(Arc::new(item)), false)
    };
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

/// The movements as one record batch of [`schema`], its columns built on
/// every core.
pub(super) fn batch(rows: &[Movement]) -> Result<RecordBatch> {
    let text = |cell: fn(&Movement) -> &str| -> ArrayRef {
        Arc::new(rows.iter().map(|m| Some(cell(m))).collect::<StringArray>())
    };
    let integer = |cell: fn(&Movement) -> i64| -> ArrayRef {
        Arc::new(rows.iter().map(cell).collect::<Int64Array>())
    };
    let builders: [&(dyn Fn() -> ArrayRef + Sync); 11] = [
        &|| dates(rows),
        &|| text(|m| m.customer_id.as_str()),
        &|| text(|m| m.kind.as_str()),
        &|| text(|m| m.subtype.as_str()),
        &|| integer(|m| m.mrr_change),
        &|| integer(|m| m.mrr_change_base_currency),
        &|| integer(|m| i64::from(m.customer_count_change)),
        &|| integer(|m| m.quantity_change),
        &|| text(|m| m.currency.as_str()),
        &|| plan_lists(rows, |m| &m.plans_before),
        &|| plan_lists(rows, |m| &m.plans_after),
    ];
    let columns: Vec<ArrayRef> = builders.par_iter().map(|build| build()).collect();
    RecordBatch::try_new(Arc::new(schema()), columns)
        .map_err(|error| Error::query("movements", error.to_string()))
}

fn dates(rows: &[Movement]) -> ArrayRef {
    let mut dates = StringBuilder::with_capacity(rows.len(), rows.len() * 10);
    for row in rows {
        // As the JSON answer writes it; writing to a builder's pending
        // value cannot fail.
        let _ = write!(dates, "{}", row.date);
        dates.append_value("");
    }
    Arc::new(dates.finish())
}

fn plan_lists(rows: &[Movement], plans: fn(&Movement) -> &PlanList) -> ArrayRef {
    let mut lists = ListBuilder::with_capacity(StringBuilder::new(), rows.len())
        .with_field(Field::new("item", DataType::Utf8, true));
    for row in rows {
        for plan in plans(row) {
            lists.values().append_value(plan.as_str());
        }
        lists.append(true);
    }
    Arc::new(lists.finish())
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
        let ledger = ledger();
        let as_of = Utc.with_ymd_and_hms(2024, 2, 15, 0, 0, 0).unwrap();
        let batch = ledger
            .movements_batch(as_of, &MovementFilter::default())
            .unwrap();
        assert_eq!(*batch.schema(), schema());
        let text = |name: &str| -> Vec<String> {
            let column = batch.column_by_name(name).unwrap().as_string::<i32>();
            column
                .iter()
                .map(|cell| cell.unwrap().to_string())
                .collect()
        };
        let integer = |name: &str| -> Vec<i64> {
            let column = batch.column_by_name(name).unwrap();
            column.as_primitive::<Int64Type>().values().to_vec()
        };
        let plans = |name: &str| -> Vec<Vec<String>> {
            let lists = batch.column_by_name(name).unwrap().as_list::<i32>();
            lists
                .iter()
                .map(|list| {
                    let list = list.unwrap();
                    let items = list.as_string::<i32>();
                    items.iter().map(|p| p.unwrap().to_string()).collect()
                })
                .collect()
        };
        assert_eq!(text("date"), ["2024-01-01", "2024-02-01"]);
        assert_eq!(text("customer_id"), ["A", "A"]);
        assert_eq!(text("type"), ["new", "expansion"]);
        assert_eq!(text("subtype"), ["new", "upgrade"]);
        assert_eq!(integer("mrr_change"), [3000, 2000]);
        assert_eq!(integer("mrr_change_base_currency"), [3000, 2000]);
        assert_eq!(integer("customer_count_change"), [1, 0]);
        assert_eq!(integer("quantity_change"), [1, 0]);
        assert_eq!(text("currency"), ["USD", "USD"]);
        assert_eq!(plans("plans_before"), [vec![], vec!["m".to_string()]]);
        assert_eq!(
            plans("plans_after"),
            [vec!["m".to_string()], vec!["p".to_string()]]
        );
        assert_eq!(
            batch.column_by_name("plans_before").unwrap().null_count(),
            0
        );
    }

    #[test]
    fn no_movement_is_an_empty_batch_of_the_same_schema() {
        let ledger = ledger();
        let as_of = Utc.with_ymd_and_hms(2023, 12, 1, 0, 0, 0).unwrap();
        let batch = ledger
            .movements_batch(as_of, &MovementFilter::default())
            .unwrap();
        assert_eq!((batch.num_rows(), &*batch.schema()), (0, &schema()));
    }
}
