//! A report's rows as cells by column, serialized straight from the
//! report's typed rows: each field of a row becomes the JSON value of its
//! cell, under its column, with no JSON object per row (its keys, their
//! map and its lookups were most of the time of a table of a million
//! rows). Columns come in the order rows first name them, as in the
//! report's JSON answer.

use rayon::prelude::*;
use serde::Serialize;
use serde::ser::{self, Impossible, SerializeMap, SerializeStruct};
use serde_json::Value;
use std::collections::HashMap;

/// Rows as cells by column (see the module documentation).
#[derive(Debug, Default, PartialEq)]
pub(crate) struct RowCells {
    names: Vec<String>,
    positions: HashMap<String, usize>,
    /// A cell per row in each column: `None` where the row lacks the field.
    columns: Vec<Vec<Option<Value>>>,
    rows: usize,
    /// The rows a new column makes room for: the rows expected in all.
    room: usize,
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

    /// The cells of JSON rows (objects; any other row has no cells).
    pub(crate) fn of_values(rows: Vec<Value>) -> RowCells {
        let mut cells = RowCells::with_room(rows.len());
        for row in rows {
            if let Value::Object(fields) = row {
                for (place, (name, value)) in fields.into_iter().enumerate() {
                    cells.set(place, &name, value);
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

    /// The rows of `pieces` one after another, each column joined on a
    /// core of its own.
    pub(crate) fn concat(pieces: Vec<RowCells>) -> RowCells {
        let piece_rows: Vec<usize> = pieces.iter().map(|piece| piece.rows).collect();
        let mut all = RowCells::with_room(piece_rows.iter().sum());
        // parts[column][piece]: that piece's cells of the column, if any.
        let mut parts: Vec<Vec<Option<Vec<Option<Value>>>>> = Vec::new();
        for (piece, cells) in pieces.into_iter().enumerate() {
            for (name, column_cells) in cells.names.into_iter().zip(cells.columns) {
                let column = all.position_of(&name);
                if column == parts.len() {
                    parts.push(vec![None; piece_rows.len()]);
                }
                parts[column][piece] = Some(column_cells);
            }
        }
        let rows = all.room;
        all.columns = parts
            .into_par_iter()
            .map(|column_parts| {
                let mut column = Vec::with_capacity(rows);
                for (cells, &piece_rows) in column_parts.into_iter().zip(&piece_rows) {
                    match cells {
                        Some(cells) => column.extend(cells),
                        None => column.resize(column.len() + piece_rows, None),
                    }
                }
                column
            })
            .collect();
        all.rows = rows;
        all
    }

    /// How many rows.
    pub(crate) fn rows(&self) -> usize {
        self.rows
    }

    /// The column names, in the order rows first name them.
    pub(crate) fn names(&self) -> &[String] {
        &self.names
    }

    /// Frees the cells on every core (see
    /// [`drop_on_every_core`](super::answer::drop_on_every_core)).
    pub(crate) fn drop_on_every_core(self) {
        self.columns.into_par_iter().flatten().for_each(drop);
    }

    /// The cells of the column `name`; `None` for a name no row holds.
    pub(crate) fn cells(&self, name: &str) -> Option<&[Option<Value>]> {
        let column = *self.positions.get(name)?;
        Some(&self.columns[column])
    }

    /// Sets the cell of the row being written under `name`, the row's
    /// `place`-th field (a later value of one name replaces the earlier,
    /// as in a JSON object).
    fn set(&mut self, place: usize, name: &str, value: Value) {
        let column = self.column_named(place, name);
        let cells = &mut self.columns[column];
        if cells.len() > self.rows {
            cells.pop();
        }
        cells.push(Some(value));
    }

    /// The column `name`, which rows usually hold at `place`; added, empty
    /// for the rows before, when no row named it yet.
    fn column_named(&mut self, place: usize, name: &str) -> usize {
        if self.names.get(place).is_some_and(|known| known == name) {
            return place;
        }
        let column = self.position_of(name);
        if column == self.columns.len() {
            let mut cells = Vec::with_capacity(self.room.max(self.rows));
            cells.resize(self.rows, None);
            self.columns.push(cells);
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

    fn end_row(&mut self) {
        self.rows += 1;
        self.pad();
    }

    /// Fills the cells the rows so far did not set.
    fn pad(&mut self) {
        for cells in &mut self.columns {
            cells.resize(self.rows, None);
        }
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
        let value = serde_json::to_value(value).map_err(RowError::Json)?;
        self.cells.set(self.place, name, value);
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
        // As serde_json writes keys: numbers and booleans as their text.
        self.key = Some(match serde_json::to_value(key).map_err(RowError::Json)? {
            Value::String(key) => key,
            key @ (Value::Number(_) | Value::Bool(_)) => key.to_string(),
            _ => return Err(ser::Error::custom("key must be a string")),
        });
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
                    if let Some(value) = &cells.cells(name).unwrap()[row] {
                        object.insert(name.clone(), value.clone());
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
        assert_eq!(cells.cells("note").unwrap(), [None, Some(json!("x"))]);
        assert_eq!(cells.cells("absent"), None);
    }

    #[test]
    fn maps_rows_that_are_not_objects_and_joined_pieces_keep_their_columns() {
        let first = RowCells::of(&[json!({"a": 1, "b": {"c": [true]}}), json!(7)]).unwrap();
        let second = RowCells::of(&[json!({"b": null, "d": "x"})]).unwrap();
        let third = RowCells::of(&[json!({"a": 2})]).unwrap();
        let all = RowCells::concat(vec![first, second, third]);
        assert_eq!(all.names(), ["a", "b", "d"]);
        assert_eq!(all.rows(), 4);
        assert_eq!(
            as_rows(&all),
            [
                json!({"a": 1, "b": {"c": [true]}}),
                json!({}),
                json!({"b": null, "d": "x"}),
                json!({"a": 2}),
            ]
        );
        assert_eq!(RowCells::concat(Vec::new()), RowCells::default());
        let numbered = RowCells::of(&[std::collections::BTreeMap::from([(1, 2)])]).unwrap();
        assert_eq!(numbered.names(), ["1"]);
        let pairs = std::collections::BTreeMap::from([((1, 2), 3)]);
        assert_eq!(
            RowCells::of(&[pairs]).unwrap_err().to_string(),
            "key must be a string"
        );
    }
}
