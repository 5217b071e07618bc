use super::*;
use arrow_array::ArrayRef;
use std::sync::Arc;

/// Each field of a row read through its resolved column, as
/// `serde_json` values.
fn fields(records: &ArrowRecords<'_>, row: usize) -> Vec<(String, Value)> {
    match records.row(row).view() {
        View::Object(entries) => entries
            .map(|(name, value)| (name.to_string(), value.to_value()))
            .collect(),
        _ => unreachable!("a row is an object"),
    }
}

#[test]
fn resolved_columns_read_as_the_generic_cell_reader() {
    let long = "a_name_longer_than_thirty_two_bytes_x";
    let columns: Vec<(&str, ArrayRef)> = vec![
        ("s", Arc::new(StringArray::from(vec![Some("a"), None]))),
        ("l", Arc::new(LargeStringArray::from(vec![None, Some("é")]))),
        (
            "v",
            Arc::new(StringViewArray::from(vec![Some("view"), None])),
        ),
        ("i", Arc::new(Int32Array::from(vec![Some(-7), None]))),
        ("j", Arc::new(Int64Array::from(vec![None, Some(1 << 40)]))),
        (
            "f",
            Arc::new(Float64Array::from(vec![Some(f64::NAN), Some(1.5)])),
        ),
        ("b", Arc::new(BooleanArray::from(vec![Some(true), None]))),
        ("d", Arc::new(Date32Array::from(vec![Some(19723), None]))),
        (
            "ts",
            Arc::new(
                arrow_array::TimestampSecondArray::from(vec![Some(1_704_067_200), None])
                    .with_timezone("UTC"),
            ),
        ),
        (
            "tn",
            Arc::new(arrow_array::TimestampNanosecondArray::from(vec![
                None,
                Some(1_704_067_200_500_000_000),
            ])),
        ),
        (
            "tm",
            Arc::new(arrow_array::TimestampMillisecondArray::from(vec![
                Some(i64::MAX),
                None,
            ])),
        ),
        (
            "tu",
            Arc::new(arrow_array::TimestampMicrosecondArray::from(vec![
                Some(1_704_067_200_000_001),
                None,
            ])),
        ),
        ("s2", Arc::new(StringArray::from(vec!["second", "second"]))),
        (long, Arc::new(Int64Array::from(vec![1, 2]))),
    ];
    let batch = RecordBatch::try_from_iter(columns).unwrap();
    let records = ArrowRecords::new("invoice", &batch).unwrap();
    for row in 0..2 {
        let generic: Vec<(String, Value)> = batch
            .schema()
            .fields()
            .iter()
            .zip(batch.columns())
            .map(|(field, array)| {
                let cell = ArrowNode::Cell {
                    array: array.as_ref(),
                    row,
                };
                (field.name().clone(), cell.to_value())
            })
            .collect();
        assert_eq!(fields(&records, row), generic);
    }
    assert_eq!(
        fields(&records, 0),
        vec![
            ("s".to_string(), Value::from("a")),
            ("l".to_string(), Value::Null),
            ("v".to_string(), Value::from("view")),
            ("i".to_string(), Value::from(-7)),
            ("j".to_string(), Value::Null),
            ("f".to_string(), Value::Null),
            ("b".to_string(), Value::from(true)),
            ("d".to_string(), Value::from("2024-01-01")),
            ("ts".to_string(), Value::from("2024-01-01T00:00:00Z")),
            ("tn".to_string(), Value::Null),
            // Out of the calendar's range: the raw number.
            ("tm".to_string(), Value::from(i64::MAX)),
            ("tu".to_string(), Value::from("2024-01-01T00:00:00Z")),
            ("s2".to_string(), Value::from("second")),
            (long.to_string(), Value::from(1)),
        ]
    );
    let row = records.row(1);
    assert_eq!(row.get("s").map(Node::to_value), Some(Value::Null));
    assert_eq!(
        row.get("j").map(Node::to_value),
        Some(Value::from(1_i64 << 40))
    );
    assert_eq!(row.get(long).map(Node::to_value), Some(Value::from(2)));
    assert!(row.get("missing").is_none());
    assert!(row.get("a_name_longer_than_thirty_two_bytes_y").is_none());
}

/// Decimal columns (what SQL engines write for `DECIMAL` and for sums of
/// integers) read as numbers: integers when they have no fraction, floats
/// otherwise, whatever their width and scale.
#[test]
fn decimal_cells_are_numbers() {
    use arrow_array::{Decimal32Array, Decimal64Array, Decimal128Array, Decimal256Array};
    use arrow_buffer::i256;
    let d128 = |values: Vec<Option<i128>>, precision: u8, scale: i8| -> ArrayRef {
        Arc::new(
            Decimal128Array::from(values)
                .with_precision_and_scale(precision, scale)
                .unwrap(),
        )
    };
    let columns: Vec<(&str, ArrayRef)> = vec![
        // DECIMAL(10, 2): 3000.00, 12.50, null.
        ("cents", d128(vec![Some(300_000), Some(1250), None], 10, 2)),
        // A sum of integers: DECIMAL(38, 0).
        (
            "sum",
            d128(vec![Some(-7), Some(1 << 62), Some(1 << 64)], 38, 0),
        ),
        // A negative scale: 12 × 100.
        ("hundreds", d128(vec![Some(12), Some(0), Some(-3)], 5, -2)),
        (
            "d32",
            Arc::new(
                Decimal32Array::from(vec![Some(1500), None, Some(-1)])
                    .with_precision_and_scale(9, 3)
                    .unwrap(),
            ),
        ),
        (
            "d64",
            Arc::new(
                Decimal64Array::from(vec![Some(42), Some(0), None])
                    .with_precision_and_scale(18, 0)
                    .unwrap(),
            ),
        ),
        (
            "d256",
            Arc::new(
                Decimal256Array::from(vec![
                    Some(i256::from_i128(250)),
                    Some(i256::from_i128(i128::MAX) * i256::from_i128(1000)),
                    None,
                ])
                .with_precision_and_scale(76, 1)
                .unwrap(),
            ),
        ),
    ];
    let batch = RecordBatch::try_from_iter(columns).unwrap();
    let records = ArrowRecords::new("invoice", &batch).unwrap();
    let number = |text: &str| serde_json::from_str::<Value>(text).unwrap();
    let values: Vec<Vec<Value>> = (0..3)
        .map(|row| fields(&records, row).into_iter().map(|(_, v)| v).collect())
        .collect();
    assert_eq!(
        values,
        [
            vec![
                Value::from(3000),
                Value::from(-7),
                Value::from(1200),
                number("1.5"),
                Value::from(42),
                Value::from(25),
            ],
            vec![
                number("12.5"),
                Value::from(1_u64 << 62),
                Value::from(0),
                Value::Null,
                Value::from(0),
                number("1.7014118346046923e40"),
            ],
            vec![
                Value::Null,
                number("18446744073709551616.0"),
                Value::from(-300),
                number("-0.001"),
                Value::Null,
                Value::Null,
            ],
        ]
    );
}

#[test]
fn a_column_name_given_twice_is_refused() {
    use arrow_array::Int64Array;
    use arrow_schema::{DataType, Field, Schema};
    let schema = Schema::new(vec![
        Field::new("id", DataType::Int64, false),
        Field::new("amount", DataType::Int64, false),
        Field::new("amount", DataType::Int64, false),
    ]);
    let column: ArrayRef = Arc::new(Int64Array::from(vec![1]));
    let batch = RecordBatch::try_new(
        Arc::new(schema),
        vec![column.clone(), column.clone(), column],
    )
    .unwrap();
    let error = ArrowRecords::new("invoice", &batch).unwrap_err();
    assert_eq!(
        error.to_string(),
        "invoice ?: field `amount`: is two columns of the batch (columns 2 and 3); \
         give each field once"
    );
}
