//! The rows of an Apache Arrow record batch read as records, through the same
//! [`Node`] interface as JSON, so every record rule and error message is the
//! one of the JSON path. A column is a field (named as the interface names
//! it, aliases included); a null cell, like a missing column, is an absent
//! field. Cells are read in place: strings are borrowed from the batch, no
//! JSON tree is built.
//!
//! Column types and what they read as:
//! - strings (`Utf8`, `LargeUtf8`, `Utf8View`, or a dictionary of them):
//!   JSON strings;
//! - integers and floats: JSON numbers (a NaN is null, as JSON has none;
//!   an infinity is refused by every field, and quoted as `Infinity`);
//! - decimals of any width: JSON numbers, integers when they have no
//!   fraction (`DECIMAL(38, 0)` sums, `3000.00`);
//! - booleans: JSON booleans;
//! - `Date32`/`Date64`: calendar dates (like `"2024-01-31"`);
//! - `Timestamp` of any unit: instants, UTC when the column has no zone
//!   (like a timestamp without an offset);
//! - lists: JSON arrays (invoice `lines` and `transactions`, plan-group
//!   `plans`);
//! - structs and maps with string keys: JSON objects (list items,
//!   `custom_variables`).
//!
//! Any other column type is refused for the whole batch, naming the column.

use crate::error::{Error, Result};
use crate::model::json::{NameSet, Node, View, infinity_text};
use arrow_array::cast::AsArray;
use arrow_array::types::{
    Int32Type, Int64Type, TimestampMicrosecondType, TimestampMillisecondType,
    TimestampNanosecondType, TimestampSecondType,
};
use arrow_array::{
    Array, BooleanArray, Date32Array, Float64Array, Int32Array, Int64Array, LargeStringArray,
    PrimitiveArray, RecordBatch, StringArray, StringViewArray,
};
use arrow_buffer::NullBuffer;
use arrow_schema::{DataType, TimeUnit};
use serde_json::{Map, Number, Value};
use std::ops::Range;

mod cells;

use cells::{cell_view, date_view, float_view, readable, timestamp_view};

/// The columns of one record batch by name, read row by row as records.
/// Each column's type is resolved once for the batch, not per cell.
#[derive(Debug)]
pub struct ArrowRecords<'a> {
    columns: Vec<Column<'a>>,
    /// The positions of the columns by the length of their names (the last
    /// bucket holds every longer name), in column order: a record asks for
    /// some thirty names per row, and most are told apart by length alone.
    by_length: Vec<Vec<usize>>,
    /// The column names, summarized for every row's lookups.
    names: NameSet,
    rows: usize,
}

/// Name lengths with a bucket of their own in [`ArrowRecords::by_length`].
const NAME_BUCKETS: usize = 32;

impl<'a> ArrowRecords<'a> {
    /// The records of `batch`, records of `kind` (named in errors). A column
    /// of a type no record field can be read from is an error naming it.
    pub fn new(kind: &'static str, batch: &'a RecordBatch) -> Result<ArrowRecords<'a>> {
        let schema = batch.schema_ref();
        let names: Vec<&str> = schema.fields().iter().map(|f| f.name().as_str()).collect();
        if let Some((first, second)) = crate::model::first_repeated(&names) {
            return Err(Error::invalid(
                kind,
                "?",
                names[first],
                format!(
                    "is two columns of the batch (columns {} and {}); give each field once",
                    first + 1,
                    second + 1
                ),
            ));
        }
        let mut columns = Vec::with_capacity(batch.num_columns());
        for (field, column) in schema.fields().iter().zip(batch.columns()) {
            if !readable(column.data_type()) {
                return Err(Error::invalid(
                    kind,
                    "?",
                    field.name(),
                    format!(
                        "column type {} cannot be read (strings, numbers, booleans, dates, \
                         timestamps, lists, structs and string-keyed maps can)",
                        column.data_type()
                    ),
                ));
            }
            columns.push(Column::new(field.name(), column.as_ref()));
        }
        let mut by_length = vec![Vec::new(); NAME_BUCKETS + 1];
        for (i, column) in columns.iter().enumerate() {
            by_length[column.name.len().min(NAME_BUCKETS)].push(i);
        }
        let names = columns
            .iter()
            .fold(NameSet::NONE, |names, column| names.with(column.name));
        Ok(ArrowRecords {
            columns,
            by_length,
            names,
            rows: batch.num_rows(),
        })
    }

    /// How many rows (records) the batch has.
    pub fn len(&self) -> usize {
        self.rows
    }

    /// Row `row` as a record.
    pub fn row(&'a self, row: usize) -> ArrowNode<'a> {
        ArrowNode::Row { records: self, row }
    }

    /// Every row as a record, in order.
    pub fn rows(&'a self) -> impl Iterator<Item = ArrowNode<'a>> + 'a {
        (0..self.rows).map(move |row| self.row(row))
    }

    /// The first column named `name`.
    pub(super) fn column(&self, name: &str) -> Option<&Column<'a>> {
        self.by_length[name.len().min(NAME_BUCKETS)]
            .iter()
            .map(|&i| &self.columns[i])
            .find(|column| column.name == name)
    }
}

/// One column of a batch, with its array downcast once for the common
/// flat types.
#[derive(Debug)]
pub(crate) struct Column<'a> {
    name: &'a str,
    array: &'a dyn Array,
    nulls: Option<&'a NullBuffer>,
    cells: Cells<'a>,
}

/// A column's array as its concrete type, for the types a generated or
/// exported record batch mostly holds; `Other` reads through the data type
/// cell by cell ([`cell_view`]), with the same result.
#[derive(Debug, Clone, Copy)]
enum Cells<'a> {
    Utf8(&'a StringArray),
    LargeUtf8(&'a LargeStringArray),
    Utf8View(&'a StringViewArray),
    Int32(&'a Int32Array),
    Int64(&'a Int64Array),
    Float64(&'a Float64Array),
    Boolean(&'a BooleanArray),
    Date32(&'a Date32Array),
    TimestampSecond(&'a PrimitiveArray<TimestampSecondType>),
    TimestampMillisecond(&'a PrimitiveArray<TimestampMillisecondType>),
    TimestampMicrosecond(&'a PrimitiveArray<TimestampMicrosecondType>),
    TimestampNanosecond(&'a PrimitiveArray<TimestampNanosecondType>),
    Other,
}

impl<'a> Column<'a> {
    fn new(name: &'a str, array: &'a dyn Array) -> Column<'a> {
        let cells = match array.data_type() {
            DataType::Utf8 => Cells::Utf8(array.as_string::<i32>()),
            DataType::LargeUtf8 => Cells::LargeUtf8(array.as_string::<i64>()),
            DataType::Utf8View => Cells::Utf8View(array.as_string_view()),
            DataType::Int32 => Cells::Int32(array.as_primitive::<Int32Type>()),
            DataType::Int64 => Cells::Int64(array.as_primitive::<Int64Type>()),
            DataType::Float64 => {
                Cells::Float64(array.as_primitive::<arrow_array::types::Float64Type>())
            }
            DataType::Boolean => Cells::Boolean(array.as_boolean()),
            DataType::Date32 => {
                Cells::Date32(array.as_primitive::<arrow_array::types::Date32Type>())
            }
            DataType::Timestamp(TimeUnit::Second, _) => {
                Cells::TimestampSecond(array.as_primitive())
            }
            DataType::Timestamp(TimeUnit::Millisecond, _) => {
                Cells::TimestampMillisecond(array.as_primitive())
            }
            DataType::Timestamp(TimeUnit::Microsecond, _) => {
                Cells::TimestampMicrosecond(array.as_primitive())
            }
            DataType::Timestamp(TimeUnit::Nanosecond, _) => {
                Cells::TimestampNanosecond(array.as_primitive())
            }
            _ => Cells::Other,
        };
        Column {
            name,
            array,
            nulls: array.nulls(),
            cells,
        }
    }

    /// The cell at `row`, as [`cell_view`] reads it. Inlined into the row
    /// readers, which then take the view apart in registers.
    #[inline(always)]
    pub(super) fn view(&'a self, row: usize) -> View<'a, ArrowNode<'a>> {
        let cells = self.cells;
        if matches!(cells, Cells::Other) {
            return cell_view(self.array, row);
        }
        if self.nulls.is_some_and(|nulls| nulls.is_null(row)) {
            return View::Null;
        }
        match cells {
            Cells::Utf8(a) => View::String(a.value(row)),
            Cells::LargeUtf8(a) => View::String(a.value(row)),
            Cells::Utf8View(a) => View::String(a.value(row)),
            Cells::Int32(a) => View::Number(Number::from(a.value(row))),
            Cells::Int64(a) => View::Number(Number::from(a.value(row))),
            Cells::Float64(a) => float_view(a.value(row)),
            Cells::Boolean(a) => View::Bool(a.value(row)),
            Cells::Date32(a) => date_view(i64::from(a.value(row))),
            Cells::TimestampSecond(a) => timestamp_view(TimeUnit::Second, a.value(row)),
            Cells::TimestampMillisecond(a) => timestamp_view(TimeUnit::Millisecond, a.value(row)),
            Cells::TimestampMicrosecond(a) => timestamp_view(TimeUnit::Microsecond, a.value(row)),
            Cells::TimestampNanosecond(a) => timestamp_view(TimeUnit::Nanosecond, a.value(row)),
            Cells::Other => cell_view(self.array, row),
        }
    }
}

/// A row of a batch (a record), one cell of a batch's column (a field of
/// a record) or one cell of a nested array (an item, a nested field).
#[derive(Debug, Clone, Copy)]
pub enum ArrowNode<'a> {
    Row {
        records: &'a ArrowRecords<'a>,
        row: usize,
    },
    Field {
        column: &'a Column<'a>,
        row: usize,
    },
    Cell {
        array: &'a dyn Array,
        row: usize,
    },
}

impl<'a> Node<'a> for ArrowNode<'a> {
    type Items = ArrowItems<'a>;
    type Entries = ArrowEntries<'a>;

    fn view(self) -> View<'a, Self> {
        match self {
            ArrowNode::Row { records, row } => View::Object(ArrowEntries::Row {
                records,
                row,
                next: 0,
            }),
            ArrowNode::Field { column, row } => column.view(row),
            ArrowNode::Cell { array, row } => cell_view(array, row),
        }
    }

    fn is_object(self) -> bool {
        match self {
            ArrowNode::Row { .. } => true,
            ArrowNode::Field { column, row } => ArrowNode::Cell {
                array: column.array,
                row,
            }
            .is_object(),
            ArrowNode::Cell { array, row } => {
                !array.is_null(row)
                    && matches!(array.data_type(), DataType::Struct(_) | DataType::Map(..))
            }
        }
    }

    fn get(self, name: &str) -> Option<Self> {
        match self {
            ArrowNode::Row { records, row } => records
                .column(name)
                .map(|column| ArrowNode::Field { column, row }),
            ArrowNode::Field { .. } | ArrowNode::Cell { .. } => match self.view() {
                View::Object(entries) => entries
                    .filter(|(key, _)| *key == name)
                    .last()
                    .map(|(_, value)| value),
                _ => None,
            },
        }
    }

    fn names(self) -> NameSet {
        match self {
            ArrowNode::Row { records, .. } => records.names,
            ArrowNode::Field { .. } | ArrowNode::Cell { .. } => NameSet::of(self.view()),
        }
    }

    fn to_value(self) -> Value {
        match self.view() {
            View::Null => Value::Null,
            View::Bool(b) => Value::Bool(b),
            View::Number(n) => Value::Number(n),
            View::Infinite(f) => Value::String(infinity_text(f).to_string()),
            View::String(s) => Value::String(s.to_string()),
            View::Timestamp(t) => Value::String(t.to_string()),
            View::Array(items) => Value::Array(items.map(Node::to_value).collect()),
            View::Object(entries) => Value::Object(
                entries
                    .map(|(key, value)| (key.to_string(), value.to_value()))
                    .collect::<Map<String, Value>>(),
            ),
        }
    }
}

/// The items of a list cell.
#[derive(Debug)]
pub struct ArrowItems<'a> {
    array: &'a dyn Array,
    range: Range<usize>,
}

impl<'a> Iterator for ArrowItems<'a> {
    type Item = ArrowNode<'a>;

    fn next(&mut self) -> Option<Self::Item> {
        let row = self.range.next()?;
        Some(ArrowNode::Cell {
            array: self.array,
            row,
        })
    }
}

/// The fields of a row, a struct cell or a map cell, in column order.
#[derive(Debug)]
pub enum ArrowEntries<'a> {
    Row {
        records: &'a ArrowRecords<'a>,
        row: usize,
        next: usize,
    },
    Struct {
        array: &'a arrow_array::StructArray,
        row: usize,
        next: usize,
    },
    Map {
        keys: &'a arrow_array::StringArray,
        values: &'a dyn Array,
        range: Range<usize>,
    },
}

impl<'a> Iterator for ArrowEntries<'a> {
    type Item = (&'a str, ArrowNode<'a>);

    fn next(&mut self) -> Option<Self::Item> {
        match self {
            ArrowEntries::Row { records, row, next } => {
                let column = records.columns.get(*next)?;
                *next += 1;
                Some((column.name, ArrowNode::Field { column, row: *row }))
            }
            ArrowEntries::Struct { array, row, next } => {
                let i = *next;
                let field = array.fields().get(i)?;
                *next += 1;
                Some((
                    field.name().as_str(),
                    ArrowNode::Cell {
                        array: array.column(i).as_ref(),
                        row: *row,
                    },
                ))
            }
            ArrowEntries::Map {
                keys,
                values,
                range,
            } => {
                let i = range.next()?;
                Some((
                    keys.value(i),
                    ArrowNode::Cell {
                        array: *values,
                        row: i,
                    },
                ))
            }
        }
    }
}

#[cfg(test)]
mod tests;
