//! One column of a report's cells, kept as the values its rows hold:
//! integers, reals and booleans in place, texts in one buffer per column,
//! lists as ranges of a column of their items and objects as rows of cells
//! of their own, so a table of a million rows allocates per column, not
//! per cell, and builds no JSON value.

use super::RowCells;
use serde::Serialize;
use serde::ser::{SerializeMap, SerializeSeq};
use serde_json::{Map, Value};

/// One stored cell: texts are ranges of the column's text, lists ranges of
/// its items, objects rows of its objects.
#[derive(Debug, Clone, Copy)]
pub(super) enum Cell {
    Absent,
    Null,
    Bool(bool),
    Integer(i64),
    /// An integer beyond `i64`.
    Unsigned(u64),
    /// A finite real: a NaN or an infinity is `Null`, as in JSON.
    Real(f64),
    Text {
        start: usize,
        end: usize,
    },
    List {
        start: usize,
        end: usize,
    },
    Object(usize),
}

/// A cell as its readers see it: what the row's JSON value would be.
#[derive(Debug, Clone, Copy)]
pub(crate) enum CellRef<'a> {
    /// The row has no such field.
    Absent,
    Null,
    Bool(bool),
    Integer(i64),
    Unsigned(u64),
    Real(f64),
    Text(&'a str),
    List(ListRef<'a>),
    Object(ObjectRef<'a>),
}

/// The items of a list cell.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ListRef<'a> {
    items: &'a CellColumn,
    start: usize,
    end: usize,
}

/// The fields of an object cell: a row of its column's objects.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ObjectRef<'a> {
    rows: &'a RowCells,
    row: usize,
}

impl<'a> ListRef<'a> {
    pub(crate) fn len(&self) -> usize {
        self.end - self.start
    }

    pub(crate) fn items(&self) -> impl Iterator<Item = CellRef<'a>> + 'a {
        let items = self.items;
        (self.start..self.end).map(move |item| items.get(item))
    }
}

impl<'a> ObjectRef<'a> {
    /// The object's fields in the order it gave them.
    pub(crate) fn fields(&self) -> impl Iterator<Item = (&'a str, CellRef<'a>)> + 'a {
        let (rows, row) = (self.rows, self.row);
        rows.field_order(row)
            .map(move |column| (rows.name(column), rows.column(column).get(row)))
    }
}

impl CellRef<'_> {
    /// Whether the cell holds a value (null is none).
    #[cfg(feature = "arrow")]
    pub(crate) fn is_present(self) -> bool {
        !matches!(self, CellRef::Absent | CellRef::Null)
    }

    /// The JSON value of the cell; `None` for an absent one.
    pub(crate) fn to_value(self) -> Option<Value> {
        Some(match self {
            CellRef::Absent => return None,
            CellRef::Null => Value::Null,
            CellRef::Bool(b) => Value::Bool(b),
            CellRef::Integer(n) => Value::from(n),
            CellRef::Unsigned(n) => Value::from(n),
            CellRef::Real(r) => Value::from(r),
            CellRef::Text(text) => Value::String(text.to_string()),
            CellRef::List(list) => {
                Value::Array(list.items().filter_map(CellRef::to_value).collect())
            }
            CellRef::Object(object) => Value::Object(
                object
                    .fields()
                    .filter_map(|(name, cell)| Some((name.to_string(), cell.to_value()?)))
                    .collect::<Map<String, Value>>(),
            ),
        })
    }
}

impl PartialEq for CellRef<'_> {
    fn eq(&self, other: &CellRef<'_>) -> bool {
        self.to_value() == other.to_value()
    }
}

/// A cell serializes as its JSON value (an absent one as null).
impl Serialize for CellRef<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match *self {
            CellRef::Absent | CellRef::Null => serializer.serialize_unit(),
            CellRef::Bool(b) => serializer.serialize_bool(b),
            CellRef::Integer(n) => serializer.serialize_i64(n),
            CellRef::Unsigned(n) => serializer.serialize_u64(n),
            CellRef::Real(r) => serializer.serialize_f64(r),
            CellRef::Text(text) => serializer.serialize_str(text),
            CellRef::List(list) => {
                let mut seq = serializer.serialize_seq(Some(list.len()))?;
                for item in list.items() {
                    seq.serialize_element(&item)?;
                }
                seq.end()
            }
            CellRef::Object(object) => {
                let mut map = serializer.serialize_map(None)?;
                for (name, cell) in object.fields() {
                    map.serialize_entry(name, &cell)?;
                }
                map.end()
            }
        }
    }
}

/// The cells of one column, a cell per row (see the module documentation).
#[derive(Debug, Default)]
pub(crate) struct CellColumn {
    pub(super) cells: Vec<Cell>,
    text: String,
    /// The items of the column's list cells.
    items: Option<Box<CellColumn>>,
    /// The fields of the column's object cells, a row per object.
    objects: Option<Box<RowCells>>,
}

impl CellColumn {
    /// `rows` absent cells, with room for `room` cells in all.
    pub(super) fn absent(rows: usize, room: usize) -> CellColumn {
        let mut cells = Vec::with_capacity(room.max(rows));
        cells.resize(rows, Cell::Absent);
        CellColumn {
            cells,
            ..CellColumn::default()
        }
    }

    /// How many cells (rows) the column has.
    pub(crate) fn len(&self) -> usize {
        self.cells.len()
    }

    /// The cell of `row`, absent past the last.
    pub(crate) fn get(&self, row: usize) -> CellRef<'_> {
        match self.cells.get(row) {
            None | Some(Cell::Absent) => CellRef::Absent,
            Some(Cell::Null) => CellRef::Null,
            Some(&Cell::Bool(b)) => CellRef::Bool(b),
            Some(&Cell::Integer(n)) => CellRef::Integer(n),
            Some(&Cell::Unsigned(n)) => CellRef::Unsigned(n),
            Some(&Cell::Real(r)) => CellRef::Real(r),
            Some(&Cell::Text { start, end }) => CellRef::Text(&self.text[start..end]),
            Some(&Cell::List { start, end }) => CellRef::List(ListRef {
                items: self.items.as_deref().expect("a list cell has items"),
                start,
                end,
            }),
            Some(&Cell::Object(row)) => CellRef::Object(ObjectRef {
                rows: self.objects.as_deref().expect("an object cell has fields"),
                row,
            }),
        }
    }

    /// Every cell, in row order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = CellRef<'_>> + '_ {
        (0..self.cells.len()).map(|row| self.get(row))
    }

    /// Pads the column with absent cells up to `rows`.
    pub(super) fn pad(&mut self, rows: usize) {
        self.cells.resize(rows, Cell::Absent);
    }

    /// Appends a field's value: the cell `serde_json::to_value` would make
    /// the value (see [`CellRef`]).
    pub(super) fn push<T: Serialize + ?Sized>(&mut self, value: &T) -> serde_json::Result<()> {
        let cell = value.serialize(super::writer::CellWriter { column: self })?;
        self.cells.push(cell);
        Ok(())
    }

    /// Appends a JSON value.
    pub(super) fn push_value(&mut self, value: Value) {
        let cell = self.value_cell(value);
        self.cells.push(cell);
    }

    /// The cell of a JSON value, its text, items or fields stored.
    pub(super) fn value_cell(&mut self, value: Value) -> Cell {
        match value {
            Value::Null => Cell::Null,
            Value::Bool(b) => Cell::Bool(b),
            Value::Number(n) => match (n.as_i64(), n.as_u64(), n.as_f64()) {
                (Some(n), _, _) => Cell::Integer(n),
                (None, Some(n), _) => Cell::Unsigned(n),
                (None, None, r) => Cell::Real(r.unwrap_or_default()),
            },
            Value::String(text) => self.text_cell(&text),
            Value::Array(items) => {
                let column = self.items_mut();
                let start = column.len();
                for item in items {
                    column.push_value(item);
                }
                Cell::List {
                    start,
                    end: column.len(),
                }
            }
            Value::Object(fields) => {
                let rows = self.objects_mut();
                for (place, (name, value)) in fields.into_iter().enumerate() {
                    rows.start_field(place, &name).push_value(value);
                }
                Cell::Object(rows.end_row())
            }
        }
    }

    /// Stores `text` and answers its cell.
    pub(super) fn text_cell(&mut self, text: &str) -> Cell {
        let start = self.text.len();
        self.text.push_str(text);
        Cell::Text {
            start,
            end: self.text.len(),
        }
    }

    /// The buffer the column's texts are written into.
    pub(super) fn text_buffer(&mut self) -> &mut String {
        &mut self.text
    }

    /// The column of the items of the column's lists.
    pub(super) fn items_mut(&mut self) -> &mut CellColumn {
        self.items.get_or_insert_default()
    }

    /// The rows of the column's objects.
    pub(super) fn objects_mut(&mut self) -> &mut RowCells {
        self.objects
            .get_or_insert_with(|| Box::new(RowCells::of_objects()))
    }
}

impl PartialEq for CellColumn {
    fn eq(&self, other: &CellColumn) -> bool {
        self.len() == other.len() && self.iter().eq(other.iter())
    }
}
