use super::*;
use crate::money::MAX_AMOUNT;
use arrow_array::{
    ArrayRef, Date32Array, Float64Array, Int32Array, Int64Array, RecordBatch, StringArray,
    TimestampMicrosecondArray,
};
use proptest::prelude::*;
use proptest::sample::select;
use std::sync::Arc;

fn batch(columns: Vec<(&str, ArrayRef)>) -> RecordBatch {
    RecordBatch::try_from_iter(columns).expect("a batch")
}

fn strings(cells: &[Option<&str>]) -> ArrayRef {
    Arc::new(StringArray::from(cells.to_vec()))
}

/// A batch shaped as exports give invoices: dates as `Date32`, amounts as
/// `Int64`, absent fields as null cells.
fn export() -> RecordBatch {
    batch(vec![
        ("id", strings(&[Some("i1"), Some("i2"), Some("i3")])),
        (
            "customer_id",
            strings(&[Some("c1"), Some("c1"), Some("c2")]),
        ),
        (
            "type",
            strings(&[Some("subscription"), Some("refund"), Some("one-time")]),
        ),
        (
            "invoice_date",
            Arc::new(Date32Array::from(vec![19723, 19754, 19783])),
        ),
        ("amount", Arc::new(Int64Array::from(vec![1000, -250, 500]))),
        (
            "currency",
            strings(&[Some("USD"), Some("usd"), Some("EUR")]),
        ),
        ("plan_id", strings(&[Some("p1"), None, Some(" ")])),
        ("status", strings(&[None, Some("Paid"), Some("failed")])),
        (
            "quantity",
            Arc::new(Int32Array::from(vec![Some(3), None, None])),
        ),
        ("refunded_invoice_id", strings(&[None, Some("i1"), None])),
    ])
}

#[test]
fn a_plain_row_is_read_from_its_columns_as_the_general_reader_reads_it() {
    let batch = export();
    let records = ArrowRecords::new(Invoice::KIND, &batch).expect("readable");
    let columns = InvoiceColumns::new(&records).expect("one column per field");
    let mut recent = RecentIds::default();
    for row in 0..3 {
        let fast = columns.read(row, &mut recent);
        let general = Invoice::from_node(records.row(row)).expect("valid");
        assert_eq!(fast.as_ref(), Some(&general), "row {row}");
    }
    let refund = columns.read(1, &mut recent).expect("read");
    assert_eq!(
        (refund.amount, refund.currency.as_str(), refund.quantity),
        (-250, "USD", 1)
    );
    assert_eq!(
        refund
            .details()
            .refunded_invoice_id
            .as_ref()
            .map(|id| id.as_str()),
        Some("i1")
    );
    assert_eq!(
        columns
            .read(2, &mut recent)
            .map(|i| (i.status, i.plan_id.is_none())),
        Some((InvoiceStatus::Failed, true))
    );
}

#[test]
fn a_row_the_columns_cannot_vouch_for_is_left_to_the_general_reader() {
    let batch = batch(vec![
        (
            "id",
            strings(&[Some("i1"), Some("i2"), Some("i3"), Some("i4")]),
        ),
        ("customer_id", strings(&[Some("c1"); 4])),
        (
            "type",
            strings(&[
                Some("subscription"),
                Some("subscription"),
                Some("bogus"),
                Some("refund"),
            ]),
        ),
        (
            "invoice_date",
            strings(&[
                Some("2024-01-01"),
                Some("2024-13-01"),
                Some("2024-01-01"),
                Some("2024-01-01"),
            ]),
        ),
        (
            "amount",
            Arc::new(Float64Array::from(vec![1.0, 1.0, 1.0, 1.0])),
        ),
        ("currency", strings(&[Some("USD"); 4])),
        ("plan_id", strings(&[Some("p1"); 4])),
    ]);
    let records = ArrowRecords::new(Invoice::KIND, &batch).expect("readable");
    let columns = InvoiceColumns::new(&records).expect("one column per field");
    for row in 0..4 {
        assert_eq!(
            columns.read(row, &mut RecentIds::default()),
            None,
            "row {row}"
        );
    }
}

#[test]
fn a_field_given_under_two_names_leaves_the_batch_to_the_general_reader() {
    let two_names = batch(vec![
        ("id", strings(&[Some("i1")])),
        ("amount", Arc::new(Int64Array::from(vec![1]))),
        ("amount_in_cents", Arc::new(Int64Array::from(vec![2]))),
    ]);
    let records = ArrowRecords::new(Invoice::KIND, &two_names).expect("readable");
    assert!(InvoiceColumns::new(&records).is_none());
}

#[test]
fn a_row_with_lines_is_left_to_the_general_reader() {
    let mut columns = export().columns().to_vec();
    let mut fields: Vec<_> = export().schema().fields().iter().cloned().collect();
    fields.push(Arc::new(arrow_schema::Field::new(
        "line_items",
        arrow_schema::DataType::Utf8,
        true,
    )));
    columns.push(strings(&[None, Some("not a list"), None]));
    let batch = RecordBatch::try_new(Arc::new(arrow_schema::Schema::new(fields)), columns)
        .expect("a batch");
    let records = ArrowRecords::new(Invoice::KIND, &batch).expect("readable");
    let columns = InvoiceColumns::new(&records).expect("one column per field");
    let mut recent = RecentIds::default();
    assert!(columns.read(0, &mut recent).is_some());
    assert_eq!(columns.read(1, &mut recent), None);
    assert_eq!(
        Invoice::from_node(records.row(1)).map_err(|e| e.to_string()),
        Err("invoice i2: field `line_items`: must be an array".to_string())
    );
}

/// One of `valid`, sometimes one of `invalid`.
fn pick<T: Clone + std::fmt::Debug + 'static>(
    valid: &'static [T],
    invalid: &'static [T],
) -> BoxedStrategy<T> {
    prop_oneof![30 => select(valid), 1 => select(invalid)].boxed()
}

/// The cells of a column: mostly values, some nulls.
fn cells<T: std::fmt::Debug + Clone + 'static>(
    values: BoxedStrategy<T>,
    rows: usize,
) -> impl Strategy<Value = Vec<Option<T>>> {
    prop::collection::vec(prop::option::weighted(0.95, values), rows)
}

/// A column of some field: of any type a batch might give it in, with
/// values mostly valid, some invalid or on the edge of a rule.
fn column(name: &'static str, rows: usize) -> BoxedStrategy<Option<(&'static str, ArrayRef)>> {
    let text = move |valid: &'static [&'static str], invalid: &'static [&'static str]| {
        cells(pick(valid, invalid), rows)
            .prop_map(|cells| Arc::new(StringArray::from(cells)) as ArrayRef)
            .boxed()
    };
    let integers = move |valid: &'static [i64], invalid: &'static [i64]| {
        prop_oneof![
            30 => cells(pick(valid, invalid), rows)
                .prop_map(|cells| Arc::new(Int64Array::from(cells)) as ArrayRef),
            2 => cells(pick(valid, invalid), rows).prop_map(|cells| {
                let cells: Vec<Option<i32>> = cells
                    .into_iter()
                    .map(|cell| cell.and_then(|n| i32::try_from(n).ok()))
                    .collect();
                Arc::new(Int32Array::from(cells)) as ArrayRef
            }),
            1 => cells(pick(valid, invalid), rows).prop_map(|cells| {
                let cells: Vec<Option<f64>> =
                    cells.into_iter().map(|cell| cell.map(|n| n as f64 + 0.5)).collect();
                Arc::new(Float64Array::from(cells)) as ArrayRef
            }),
            1 => text(&["12", " 7 "], &["x"]),
        ]
        .boxed()
    };
    let dates = move || {
        prop_oneof![
            text(
                &[
                    "2024-01-31",
                    "2024-02-01T10:00:00+02:00",
                    "2024-01-31T23:00:00Z",
                    "",
                    " "
                ],
                &["2201-01-01", "not a date"],
            ),
            cells(pick(&[19723, 19754], &[-30_000, 90_000]), rows)
                .prop_map(|cells| Arc::new(Date32Array::from(cells)) as ArrayRef),
            cells(
                pick(
                    &[1_704_067_200_000_000, 1_706_745_600_000_000],
                    &[-4_000_000_000_000_000]
                ),
                rows
            )
            .prop_map(|cells| {
                Arc::new(TimestampMicrosecondArray::from(cells).with_timezone("UTC")) as ArrayRef
            }),
        ]
        .boxed()
    };
    let cells = match name {
        "id" => text(&["i1", "i2"], &[" ", ""]),
        "customer_id" => text(&["c1", " c2 "], &["", " "]),
        "type" => text(
            &[
                "subscription",
                "one-time",
                " Refund ",
                "cancellation",
                "onetime",
            ],
            &["bogus"],
        ),
        "currency" => text(&["USD", "usd", "EUR"], &["US", "U1D"]),
        "plan_id" => text(&["p1", "p2"], &[" ", ""]),
        "status" => text(&["paid", " OPEN", "failed", "void"], &["bogus"]),
        "amount" | "tax_amount" | "discount_amount" => integers(
            &[0, 1, 100, -100, MAX_AMOUNT, -MAX_AMOUNT],
            &[MAX_AMOUNT + 1, -MAX_AMOUNT - 1],
        ),
        "quantity" => integers(&[0, 1, 3, 1_000_000_000], &[-1, 1_000_000_001]),
        "invoice_date" | "date" | "period_start" | "period_end" | "due_date" | "payment_date" => {
            dates()
        }
        _ => text(&["x", "s1"], &[""]),
    };
    // The fields every invoice has are mostly there; an alias beside its
    // field's own column is rare.
    let present = match name {
        "id" | "customer_id" | "type" | "invoice_date" | "amount" | "currency" | "plan_id" => 0.97,
        "date" => 0.05,
        _ => 0.5,
    };
    prop::option::weighted(present, cells.prop_map(move |cells| (name, cells))).boxed()
}

/// Batches of a few rows over the invoice fields, sometimes a field under
/// two names.
fn batches() -> impl Strategy<Value = RecordBatch> {
    const NAMES: &[&str] = &[
        "id",
        "customer_id",
        "type",
        "invoice_date",
        "amount",
        "currency",
        "plan_id",
        "status",
        "quantity",
        "tax_amount",
        "period_start",
        "period_end",
        "subscription_id",
        "due_date",
        "payment_date",
        "payment_method",
        "description",
        "invoice_number",
        "discount_amount",
        "refunded_invoice_id",
        "data_source",
        "date",
    ];
    (1usize..6)
        .prop_flat_map(|rows| {
            let columns: Vec<_> = NAMES.iter().map(|name| column(name, rows)).collect();
            (Just(rows), columns)
        })
        .prop_map(|(rows, columns)| {
            let mut columns: Vec<(&str, ArrayRef)> = columns.into_iter().flatten().collect();
            if columns.is_empty() {
                columns.push(("description", strings(&vec![None; rows])));
            }
            batch(columns)
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2_000))]

    /// Whatever a row holds, the columns read it as the general reader
    /// does, or leave it to it.
    #[test]
    fn the_columns_read_a_row_as_the_general_reader_or_not_at_all(batch in batches()) {
        let records = ArrowRecords::new(Invoice::KIND, &batch).expect("readable");
        let Some(columns) = InvoiceColumns::new(&records) else {
            prop_assert!(batch.schema().column_with_name("date").is_some()
                && batch.schema().column_with_name("invoice_date").is_some());
            return Ok(());
        };
        let mut recent = RecentIds::default();
        for row in 0..records.len() {
            if let Some(fast) = columns.read(row, &mut recent) {
                let general = Invoice::from_node(records.row(row));
                prop_assert_eq!(general.as_ref().ok(), Some(&fast), "row {}", row);
            }
        }
    }
}
