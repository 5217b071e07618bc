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
    /// read from the pieces in place (what an Arrow column is built from).
    #[cfg(feature = "arrow")]
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
mod tests;
