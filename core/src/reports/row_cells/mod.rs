//! A report's rows as cells by column, serialized straight from the
//! report's typed rows: each field of a row becomes the cell of its
//! column (see [`CellColumn`]: scalars as they are, lists and objects as
//! columns of their own), with no JSON value per row or cell (building
//! them, their maps and their lookups were most of the time of a table of
//! a million rows). Columns come in the order rows first name them, as in
//! the report's JSON answer; a long table is written in pieces of rows, a
//! piece per core, read as one ([`CellPieces`]).

use serde::Serialize;
use serde::ser::{self, Impossible, SerializeMap, SerializeStruct};
use serde_json::Value;
use std::collections::HashMap;

mod column;
mod writer;

pub(crate) use column::{CellColumn, CellRef};

/// Rows as cells by column (see the module documentation).
#[derive(Debug, Default, PartialEq)]
pub(crate) struct RowCells {
    names: Vec<String>,
    positions: HashMap<String, usize>,
    /// A cell per row in each column, absent where the row lacks the field.
    columns: Vec<CellColumn>,
    rows: usize,
    /// The rows a new column makes room for: the rows expected in all.
    room: usize,
    /// Each row's fields in the order it gave them, for rows that are
    /// objects nested in a cell (whose fields are listed in that order).
    orders: Option<FieldOrders>,
}

/// Each row's columns in the order the row gave them: `columns` in rows,
/// each row's ending at its `ends` entry.
#[derive(Debug, Default, PartialEq)]
struct FieldOrders {
    columns: Vec<u32>,
    ends: Vec<usize>,
}

impl RowCells {
    /// The rows' cells: each row a struct or a map of text keys, or else a
    /// row without cells (as a JSON row that is not an object has none).
    pub(crate) fn of<R: Serialize>(rows: &[R]) -> serde_json::Result<RowCells> {
        let mut cells = RowCells::with_room(rows.len());
        for row in rows {
            cells.push(row)?;
        }
        Ok(cells)
    }

    /// No rows yet, with room in each column for `rows`.
    pub(crate) fn with_room(rows: usize) -> RowCells {
        RowCells {
            room: rows,
            ..RowCells::default()
        }
    }

    /// No rows yet, for the objects of a column, whose fields' order is
    /// kept.
    fn of_objects() -> RowCells {
        RowCells {
            orders: Some(FieldOrders::default()),
            ..RowCells::default()
        }
    }

    /// The cells of JSON rows (objects; any other row has no cells).
    pub(crate) fn of_values(rows: Vec<Value>) -> RowCells {
        let mut cells = RowCells::with_room(rows.len());
        for row in rows {
            if let Value::Object(fields) = row {
                for (place, (name, value)) in fields.into_iter().enumerate() {
                    cells.start_field(place, &name).push_value(value);
                }
            }
            cells.end_row();
        }
        cells
    }

    /// Appends one row.
    pub(crate) fn push<R: Serialize + ?Sized>(&mut self, row: &R) -> serde_json::Result<()> {
        match row.serialize(RowWriter {
            cells: self,
            place: 0,
            key: None,
        }) {
            Ok(()) | Err(RowError::NotAnObject) => {}
            Err(RowError::Json(error)) => return Err(error),
        }
        self.end_row();
        Ok(())
    }

    /// How many rows.
    pub(crate) fn rows(&self) -> usize {
        self.rows
    }

    /// The column names, in the order rows first name them.
    pub(crate) fn names(&self) -> &[String] {
        &self.names
    }

    /// The cells of the column `name`; `None` for a name no row holds.
    pub(crate) fn cells(&self, name: &str) -> Option<&CellColumn> {
        let column = *self.positions.get(name)?;
        Some(&self.columns[column])
    }

    fn name(&self, column: usize) -> &str {
        &self.names[column]
    }

    fn column(&self, column: usize) -> &CellColumn {
        &self.columns[column]
    }

    /// The columns row `row` gave, in its order (see [`RowCells::orders`]).
    fn field_order(&self, row: usize) -> impl Iterator<Item = usize> + '_ {
        let orders = self.orders.as_ref().expect("nested rows keep their order");
        let start = row.checked_sub(1).map_or(0, |before| orders.ends[before]);
        orders.columns[start..orders.ends[row]]
            .iter()
            .map(|&column| column as usize)
    }

    /// The column the row being written gives its `place`-th field, `name`,
    /// in, ready for the field's cell: a later value of one name replaces
    /// the earlier, as in a JSON object.
    fn start_field(&mut self, place: usize, name: &str) -> &mut CellColumn {
        let column = self.column_named(place, name);
        let cells = &mut self.columns[column];
        if cells.len() > self.rows {
            cells.cells.pop();
        } else if let Some(orders) = &mut self.orders {
            orders.columns.push(column as u32);
        }
        cells
    }

    /// The column `name`, which rows usually hold at `place`; added, empty
    /// for the rows before, when no row named it yet.
    fn column_named(&mut self, place: usize, name: &str) -> usize {
        if self.names.get(place).is_some_and(|known| known == name) {
            return place;
        }
        let column = self.position_of(name);
        if column == self.columns.len() {
            self.columns
                .push(CellColumn::absent(self.rows, self.room.max(self.rows)));
        }
        column
    }

    /// The position of the column `name`, which becomes the next one when
    /// no row named it yet.
    fn position_of(&mut self, name: &str) -> usize {
        if let Some(column) = self.positions.get(name) {
            return *column;
        }
        self.names.push(name.to_string());
        self.positions
            .insert(name.to_string(), self.names.len() - 1);
        self.names.len() - 1
    }

    /// Ends the row being written, filling the cells it did not set;
    /// answers its index.
    fn end_row(&mut self) -> usize {
        self.rows += 1;
        for cells in &mut self.columns {
            cells.pad(self.rows);
        }
        if let Some(orders) = &mut self.orders {
            orders.ends.push(orders.columns.len());
        }
        self.rows - 1
    }
}

/// A table's rows as cells, in pieces of consecutive rows (each written on
/// a core of its own), read as one.
#[derive(Debug, Default)]
pub(crate) struct CellPieces {
    pieces: Vec<RowCells>,
    /// The columns of every piece, in the order rows first name them.
    names: Vec<String>,
}

impl CellPieces {
    pub(crate) fn new(pieces: Vec<RowCells>) -> CellPieces {
        let mut names: Vec<String> = Vec::new();
        let mut known = std::collections::HashSet::new();
        for piece in &pieces {
            for name in piece.names() {
                if known.insert(name.as_str()) {
                    names.push(name.clone());
                }
            }
        }
        CellPieces { pieces, names }
    }

    /// How many rows in all.
    pub(crate) fn rows(&self) -> usize {
        self.pieces.iter().map(RowCells::rows).sum()
    }

    /// The column names, in the order rows first name them.
    pub(crate) fn names(&self) -> &[String] {
        &self.names
    }

    /// The pieces, in row order.
    pub(crate) fn pieces(&self) -> &[RowCells] {
        &self.pieces
    }

    /// Every row's cell of the column `name`, absent where a row lacks it,
    /// read from the pieces in place.
    pub(crate) fn column<'a>(
        &'a self,
        name: &'a str,
    ) -> impl Iterator<Item = CellRef<'a>> + Clone + 'a {
        self.pieces.iter().flat_map(move |piece| {
            let column = piece.cells(name);
            (0..piece.rows()).map(move |row| column.map_or(CellRef::Absent, |cells| cells.get(row)))
        })
    }

    /// Frees the cells on every core.
    pub(crate) fn drop_on_every_core(self) {
        super::answer::drop_on_every_core(self.pieces);
    }
}

/// A map key's text, as serde_json writes keys: a string as it is, a
/// number or a boolean as its text.
fn key_text<T: Serialize + ?Sized>(key: &T) -> serde_json::Result<String> {
    match serde_json::to_value(key)? {
        Value::String(key) => Ok(key),
        key @ (Value::Number(_) | Value::Bool(_)) => Ok(key.to_string()),
        _ => Err(ser::Error::custom("key must be a string")),
    }
}

/// Why a row was not written as cells: it is not a struct or map (it then
/// has none), or a field's value is not JSON.
#[derive(Debug)]
enum RowError {
    NotAnObject,
    Json(serde_json::Error),
}

impl std::fmt::Display for RowError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RowError::NotAnObject => f.write_str("a row is not an object"),
            RowError::Json(error) => error.fmt(f),
        }
    }
}

impl std::error::Error for RowError {}

impl ser::Error for RowError {
    fn custom<T: std::fmt::Display>(message: T) -> Self {
        RowError::Json(serde_json::Error::custom(message))
    }
}

/// Writes one row's fields into the cells.
struct RowWriter<'c> {
    cells: &'c mut RowCells,
    /// The place of the next field in the row.
    place: usize,
    /// A map's key waiting for its value.
    key: Option<String>,
}

impl RowWriter<'_> {
    fn field<T: Serialize + ?Sized>(&mut self, name: &str, value: &T) -> Result<(), RowError> {
        self.cells
            .start_field(self.place, name)
            .push(value)
            .map_err(RowError::Json)?;
        self.place += 1;
        Ok(())
    }
}

impl SerializeStruct for RowWriter<'_> {
    type Ok = ();
    type Error = RowError;

    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        name: &'static str,
        value: &T,
    ) -> Result<(), RowError> {
        self.field(name, value)
    }

    fn end(self) -> Result<(), RowError> {
        Ok(())
    }
}

impl SerializeMap for RowWriter<'_> {
    type Ok = ();
    type Error = RowError;

    fn serialize_key<T: Serialize + ?Sized>(&mut self, key: &T) -> Result<(), RowError> {
        self.key = Some(key_text(key).map_err(RowError::Json)?);
        Ok(())
    }

    fn serialize_value<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), RowError> {
        let name = self.key.take().unwrap_or_default();
        self.field(&name, value)
    }

    fn end(self) -> Result<(), RowError> {
        Ok(())
    }
}

/// A row that is not a struct or map has no cells.
macro_rules! not_an_object {
    ($($method:ident($($arg:ty),*)),* $(,)?) => {
        $(fn $method(self, $(_: $arg),*) -> Result<(), RowError> {
            Err(RowError::NotAnObject)
        })*
    };
}

impl<'c> ser::Serializer for RowWriter<'c> {
    type Ok = ();
    type Error = RowError;
    type SerializeSeq = Impossible<(), RowError>;
    type SerializeTuple = Impossible<(), RowError>;
    type SerializeTupleStruct = Impossible<(), RowError>;
    type SerializeTupleVariant = Impossible<(), RowError>;
    type SerializeMap = RowWriter<'c>;
    type SerializeStruct = RowWriter<'c>;
    type SerializeStructVariant = Impossible<(), RowError>;

    not_an_object!(
        serialize_bool(bool),
        serialize_i8(i8),
        serialize_i16(i16),
        serialize_i32(i32),
        serialize_i64(i64),
        serialize_u8(u8),
        serialize_u16(u16),
        serialize_u32(u32),
        serialize_u64(u64),
        serialize_f32(f32),
        serialize_f64(f64),
        serialize_char(char),
        serialize_str(&str),
        serialize_bytes(&[u8]),
        serialize_none(),
        serialize_unit(),
        serialize_unit_struct(&'static str),
        serialize_unit_variant(&'static str, u32, &'static str),
    );

    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result<(), RowError> {
        value.serialize(self)
    }

    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        value: &T,
    ) -> Result<(), RowError> {
        value.serialize(self)
    }

    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: &T,
    ) -> Result<(), RowError> {
        Err(RowError::NotAnObject)
    }

    fn serialize_seq(self, _: Option<usize>) -> Result<Self::SerializeSeq, RowError> {
        Err(RowError::NotAnObject)
    }

    fn serialize_tuple(self, _: usize) -> Result<Self::SerializeTuple, RowError> {
        Err(RowError::NotAnObject)
    }

    fn serialize_tuple_struct(
        self,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeTupleStruct, RowError> {
        Err(RowError::NotAnObject)
    }

    fn serialize_tuple_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeTupleVariant, RowError> {
        Err(RowError::NotAnObject)
    }

    fn serialize_map(self, _: Option<usize>) -> Result<Self::SerializeMap, RowError> {
        Ok(self)
    }

    fn serialize_struct(
        self,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeStruct, RowError> {
        Ok(self)
    }

    fn serialize_struct_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeStructVariant, RowError> {
        Err(RowError::NotAnObject)
    }
}

#[cfg(test)]
mod tests {
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
}
