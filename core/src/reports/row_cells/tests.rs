use super::*;
use serde_json::json;

#[derive(Serialize)]
struct Row {
    date: &'static str,
    mrr: i64,
    #[serde(skip_serializing_if = "Option::is_none")]
    note: Option<&'static str>,
    lines: Vec<i64>,
}

/// The cells as the JSON rows the answer would hold, for comparing.
fn as_rows(cells: &RowCells) -> Vec<Value> {
    (0..cells.rows())
        .map(|row| {
            let mut object = serde_json::Map::new();
            for name in cells.names() {
                if let Some(value) = cells.cells(name).unwrap().get(row).to_value() {
                    object.insert(name.clone(), value);
                }
            }
            Value::Object(object)
        })
        .collect()
}

#[test]
fn typed_rows_become_the_cells_of_their_json_rows() {
    let rows = [
        Row {
            date: "2024-01-01",
            mrr: 3000,
            note: None,
            lines: vec![1, 2],
        },
        Row {
            date: "2024-02-01",
            mrr: -5,
            note: Some("x"),
            lines: vec![],
        },
    ];
    let cells = RowCells::of(&rows).unwrap();
    assert_eq!(cells.names(), ["date", "mrr", "lines", "note"]);
    let json_rows: Vec<Value> = rows
        .iter()
        .map(|r| serde_json::to_value(r).unwrap())
        .collect();
    assert_eq!(as_rows(&cells), json_rows);
    assert_eq!(cells, RowCells::of_values(json_rows));
    let notes: Vec<CellRef<'_>> = cells.cells("note").unwrap().iter().collect();
    assert_eq!(notes, [CellRef::Absent, CellRef::Text("x")]);
    assert!(cells.cells("absent").is_none());
}

#[derive(Serialize)]
enum Shape {
    Flat,
    Nested(i64),
}

#[derive(Serialize)]
struct Scalars {
    big: u64,
    small: u64,
    nan: f64,
    real: f64,
    whole_real: f64,
    flag: bool,
    letter: char,
    day: chrono::NaiveDate,
    shape: Shape,
    tagged: Shape,
    none: Option<i64>,
    unit: (),
    inner: Row,
}

#[test]
fn each_value_is_the_cell_of_its_json_value() {
    let row = Scalars {
        big: u64::MAX,
        small: 7,
        nan: f64::NAN,
        real: 2.5,
        whole_real: 2.0,
        flag: true,
        letter: 'é',
        day: chrono::NaiveDate::from_ymd_opt(2024, 2, 29).unwrap(),
        shape: Shape::Flat,
        tagged: Shape::Nested(3),
        none: None,
        unit: (),
        inner: Row {
            date: "d",
            mrr: 1,
            note: None,
            lines: vec![],
        },
    };
    let cells = RowCells::of(std::slice::from_ref(&row)).unwrap();
    let json_row = serde_json::to_value(&row).unwrap();
    assert_eq!(as_rows(&cells), std::slice::from_ref(&json_row));
    assert_eq!(cells, RowCells::of_values(vec![json_row]));
    let cell = |name: &str| cells.cells(name).unwrap().get(0);
    assert!(matches!(cell("big"), CellRef::Unsigned(u64::MAX)));
    assert_eq!(cell("small"), CellRef::Integer(7));
    assert_eq!(cell("nan"), CellRef::Null);
    assert_eq!(cell("real"), CellRef::Real(2.5));
    assert_eq!(cell("whole_real"), CellRef::Real(2.0));
    assert_eq!(cell("flag"), CellRef::Bool(true));
    assert_eq!(cell("letter"), CellRef::Text("é"));
    assert_eq!(cell("day"), CellRef::Text("2024-02-29"));
    assert_eq!(cell("shape"), CellRef::Text("Flat"));
    assert_eq!(cell("tagged").to_value(), Some(json!({"Nested": 3})));
    assert_eq!((cell("none"), cell("unit")), (CellRef::Null, CellRef::Null));
    let inner = json!({"date": "d", "mrr": 1, "lines": []});
    assert_eq!(cell("inner").to_value(), Some(inner));
}

#[test]
fn maps_rows_that_are_not_objects_and_joined_pieces_keep_their_columns() {
    let first = RowCells::of(&[json!({"a": 1, "b": {"c": [true]}}), json!(7)]).unwrap();
    let second = RowCells::of(&[json!({"b": null, "d": "x"})]).unwrap();
    let third = RowCells::of(&[json!({"a": 2})]).unwrap();
    let fourth = RowCells::of(&[json!({"d": "yz", "b": [1]})]).unwrap();
    // A row naming a field twice keeps the later value, as JSON does.
    struct Twice;
    impl Serialize for Twice {
        fn serialize<S: ser::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
            let mut map = serializer.serialize_map(None)?;
            map.serialize_entry("d", "w")?;
            map.serialize_entry("d", "v")?;
            map.end()
        }
    }
    let fifth = RowCells::of(&[Twice]).unwrap();
    let all = CellPieces::new(vec![first, second, third, fourth, fifth]);
    assert_eq!(all.names(), ["a", "b", "d"]);
    assert_eq!(all.rows(), 6);
    let rows: Vec<Value> = all.pieces().iter().flat_map(as_rows).collect();
    let column_b: Vec<Option<Value>> = all.column("b").map(CellRef::to_value).collect();
    assert_eq!(
        column_b,
        [
            Some(json!({"c": [true]})),
            None,
            Some(Value::Null),
            None,
            Some(json!([1])),
            None
        ]
    );
    assert_eq!(
        rows,
        [
            json!({"a": 1, "b": {"c": [true]}}),
            json!({}),
            json!({"b": null, "d": "x"}),
            json!({"a": 2}),
            json!({"b": [1], "d": "yz"}),
            json!({"d": "v"}),
        ]
    );
    assert_eq!(CellPieces::new(Vec::new()).rows(), 0);
    let numbered = RowCells::of(&[std::collections::BTreeMap::from([(1, 2)])]).unwrap();
    assert_eq!(numbered.names(), ["1"]);
    let pairs = std::collections::BTreeMap::from([((1, 2), 3)]);
    assert_eq!(
        RowCells::of(&[pairs]).unwrap_err().to_string(),
        "key must be a string"
    );
}

#[test]
fn nested_objects_keep_each_ones_field_order_and_later_values() {
    struct Twice;
    impl Serialize for Twice {
        fn serialize<S: ser::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
            let mut map = serializer.serialize_map(None)?;
            map.serialize_entry("z", &[1])?;
            map.serialize_entry("y", "kept")?;
            map.serialize_entry("z", &[2, 3])?;
            map.end()
        }
    }
    #[derive(Serialize)]
    struct Nest {
        groups: std::collections::BTreeMap<&'static str, i64>,
        twice: Twice,
        bytes: serde_json::Value,
    }
    let rows = [
        Nest {
            groups: [("B", 1), ("C", 2)].into(),
            twice: Twice,
            bytes: json!([{"q": 1}, null]),
        },
        Nest {
            groups: [("A", 3), ("B", 4)].into(),
            twice: Twice,
            bytes: json!(null),
        },
    ];
    let cells = RowCells::of(&rows).unwrap();
    let json_rows: Vec<Value> = rows
        .iter()
        .map(|r| serde_json::to_value(r).unwrap())
        .collect();
    assert_eq!(json_rows[1]["groups"].to_string(), r#"{"A":3,"B":4}"#);
    assert_eq!(as_rows(&cells), json_rows);
    let twice = cells.cells("twice").unwrap().get(1);
    assert_eq!(
        serde_json::to_string(&twice).unwrap(),
        r#"{"z":[2,3],"y":"kept"}"#
    );
    assert_eq!(cells, RowCells::of_values(json_rows));
}
