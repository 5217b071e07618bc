//! Serializes a field's value into cells (see [`CellColumn`]): scalars
//! into the column, list items into its items, object fields into its
//! objects' rows, giving the cells `serde_json::to_value` would give the
//! value. The rare forms serde_json reads through a value of its own
//! (128-bit integers, `f32`, enum variants with several fields)
//! go through `serde_json::to_value` and take its errors.

use super::RowCells;
use super::column::{Cell, CellColumn};
use serde::Serialize;
use serde::ser::{self, Error as _};
use serde_json::{Map, Value};
use std::fmt::Write;

/// Writes one value into a column and answers its cell.
pub(super) struct CellWriter<'c> {
    pub(super) column: &'c mut CellColumn,
}

impl CellWriter<'_> {
    /// The cell of a value serde_json makes through its own value type.
    fn through_value<T: Serialize + ?Sized>(self, value: &T) -> serde_json::Result<Cell> {
        let value = serde_json::to_value(value)?;
        Ok(self.column.value_cell(value))
    }
}

impl<'c> ser::Serializer for CellWriter<'c> {
    type Ok = Cell;
    type Error = serde_json::Error;
    type SerializeSeq = ListWriter<'c>;
    type SerializeTuple = ListWriter<'c>;
    type SerializeTupleStruct = ListWriter<'c>;
    type SerializeTupleVariant = VariantWriter<'c>;
    type SerializeMap = ObjectWriter<'c>;
    type SerializeStruct = ObjectWriter<'c>;
    type SerializeStructVariant = VariantWriter<'c>;

    fn serialize_bool(self, b: bool) -> serde_json::Result<Cell> {
        Ok(Cell::Bool(b))
    }

    fn serialize_i8(self, n: i8) -> serde_json::Result<Cell> {
        Ok(Cell::Integer(n.into()))
    }

    fn serialize_i16(self, n: i16) -> serde_json::Result<Cell> {
        Ok(Cell::Integer(n.into()))
    }

    fn serialize_i32(self, n: i32) -> serde_json::Result<Cell> {
        Ok(Cell::Integer(n.into()))
    }

    fn serialize_i64(self, n: i64) -> serde_json::Result<Cell> {
        Ok(Cell::Integer(n))
    }

    fn serialize_i128(self, n: i128) -> serde_json::Result<Cell> {
        self.through_value(&n)
    }

    fn serialize_u8(self, n: u8) -> serde_json::Result<Cell> {
        Ok(Cell::Integer(n.into()))
    }

    fn serialize_u16(self, n: u16) -> serde_json::Result<Cell> {
        Ok(Cell::Integer(n.into()))
    }

    fn serialize_u32(self, n: u32) -> serde_json::Result<Cell> {
        Ok(Cell::Integer(n.into()))
    }

    fn serialize_u64(self, n: u64) -> serde_json::Result<Cell> {
        Ok(i64::try_from(n).map_or(Cell::Unsigned(n), Cell::Integer))
    }

    fn serialize_u128(self, n: u128) -> serde_json::Result<Cell> {
        self.through_value(&n)
    }

    fn serialize_f32(self, r: f32) -> serde_json::Result<Cell> {
        self.through_value(&r)
    }

    fn serialize_f64(self, r: f64) -> serde_json::Result<Cell> {
        Ok(if r.is_finite() {
            Cell::Real(r)
        } else {
            Cell::Null
        })
    }

    fn serialize_char(self, c: char) -> serde_json::Result<Cell> {
        Ok(self.column.text_cell(c.encode_utf8(&mut [0; 4])))
    }

    fn serialize_str(self, text: &str) -> serde_json::Result<Cell> {
        Ok(self.column.text_cell(text))
    }

    fn collect_str<T: std::fmt::Display + ?Sized>(self, value: &T) -> serde_json::Result<Cell> {
        let text = self.column.text_buffer();
        let start = text.len();
        write!(text, "{value}").map_err(serde_json::Error::custom)?;
        Ok(Cell::Text {
            start,
            end: text.len(),
        })
    }

    /// A list of numbers, as serde_json writes bytes.
    fn serialize_bytes(self, bytes: &[u8]) -> serde_json::Result<Cell> {
        let items = self.column.items_mut();
        let start = items.len();
        items
            .cells
            .extend(bytes.iter().map(|&b| Cell::Integer(b.into())));
        Ok(Cell::List {
            start,
            end: items.len(),
        })
    }

    fn serialize_none(self) -> serde_json::Result<Cell> {
        Ok(Cell::Null)
    }

    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> serde_json::Result<Cell> {
        value.serialize(self)
    }

    fn serialize_unit(self) -> serde_json::Result<Cell> {
        Ok(Cell::Null)
    }

    fn serialize_unit_struct(self, _: &'static str) -> serde_json::Result<Cell> {
        Ok(Cell::Null)
    }

    fn serialize_unit_variant(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
    ) -> serde_json::Result<Cell> {
        Ok(self.column.text_cell(variant))
    }

    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        value: &T,
    ) -> serde_json::Result<Cell> {
        value.serialize(self)
    }

    /// `{variant: value}`, as serde_json writes it.
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        value: &T,
    ) -> serde_json::Result<Cell> {
        let rows = self.column.objects_mut();
        rows.start_field(0, variant).push(value)?;
        Ok(Cell::Object(rows.end_row()))
    }

    fn serialize_seq(self, _: Option<usize>) -> serde_json::Result<ListWriter<'c>> {
        let items = self.column.items_mut();
        let start = items.len();
        Ok(ListWriter { items, start })
    }

    fn serialize_tuple(self, len: usize) -> serde_json::Result<ListWriter<'c>> {
        self.serialize_seq(Some(len))
    }

    fn serialize_tuple_struct(
        self,
        _: &'static str,
        len: usize,
    ) -> serde_json::Result<ListWriter<'c>> {
        self.serialize_seq(Some(len))
    }

    fn serialize_tuple_variant(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        _: usize,
    ) -> serde_json::Result<VariantWriter<'c>> {
        Ok(VariantWriter {
            column: self.column,
            variant,
            items: Vec::new(),
            fields: Map::new(),
        })
    }

    fn serialize_map(self, _: Option<usize>) -> serde_json::Result<ObjectWriter<'c>> {
        Ok(ObjectWriter {
            rows: self.column.objects_mut(),
            place: 0,
            key: None,
        })
    }

    fn serialize_struct(self, _: &'static str, _: usize) -> serde_json::Result<ObjectWriter<'c>> {
        self.serialize_map(None)
    }

    fn serialize_struct_variant(
        self,
        name: &'static str,
        index: u32,
        variant: &'static str,
        len: usize,
    ) -> serde_json::Result<VariantWriter<'c>> {
        self.serialize_tuple_variant(name, index, variant, len)
    }
}

/// Writes a list's items into its column's items.
pub(super) struct ListWriter<'c> {
    items: &'c mut CellColumn,
    start: usize,
}

impl ListWriter<'_> {
    fn item<T: Serialize + ?Sized>(&mut self, value: &T) -> serde_json::Result<()> {
        self.items.push(value)
    }

    fn cell(self) -> Cell {
        Cell::List {
            start: self.start,
            end: self.items.len(),
        }
    }
}

/// A list writer for each way serde writes a list (a sequence, a tuple, a
/// tuple struct), by the name of its method for an item.
macro_rules! list_writer {
    ($($trait:ident::$item:ident),* $(,)?) => {
        $(impl ser::$trait for ListWriter<'_> {
            type Ok = Cell;
            type Error = serde_json::Error;

            fn $item<T: Serialize + ?Sized>(&mut self, value: &T) -> serde_json::Result<()> {
                self.item(value)
            }

            fn end(self) -> serde_json::Result<Cell> {
                Ok(self.cell())
            }
        })*
    };
}

list_writer!(
    SerializeSeq::serialize_element,
    SerializeTuple::serialize_element,
    SerializeTupleStruct::serialize_field,
);

/// Writes an object's fields as a row of its column's objects.
pub(super) struct ObjectWriter<'c> {
    rows: &'c mut RowCells,
    /// The place of the next field in the object.
    place: usize,
    /// A map's key waiting for its value.
    key: Option<String>,
}

impl ObjectWriter<'_> {
    fn field<T: Serialize + ?Sized>(&mut self, name: &str, value: &T) -> serde_json::Result<()> {
        self.rows.start_field(self.place, name).push(value)?;
        self.place += 1;
        Ok(())
    }

    fn cell(self) -> Cell {
        Cell::Object(self.rows.end_row())
    }
}

impl ser::SerializeStruct for ObjectWriter<'_> {
    type Ok = Cell;
    type Error = serde_json::Error;

    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        name: &'static str,
        value: &T,
    ) -> serde_json::Result<()> {
        self.field(name, value)
    }

    fn end(self) -> serde_json::Result<Cell> {
        Ok(self.cell())
    }
}

impl ser::SerializeMap for ObjectWriter<'_> {
    type Ok = Cell;
    type Error = serde_json::Error;

    fn serialize_key<T: Serialize + ?Sized>(&mut self, key: &T) -> serde_json::Result<()> {
        self.key = Some(super::key_text(key)?);
        Ok(())
    }

    fn serialize_value<T: Serialize + ?Sized>(&mut self, value: &T) -> serde_json::Result<()> {
        let name = self.key.take().unwrap_or_default();
        self.field(&name, value)
    }

    fn end(self) -> serde_json::Result<Cell> {
        Ok(self.cell())
    }
}

/// Collects the fields of an enum variant with several fields as JSON
/// values, then stores `{variant: [...]}` or `{variant: {...}}`.
pub(super) struct VariantWriter<'c> {
    column: &'c mut CellColumn,
    variant: &'static str,
    items: Vec<Value>,
    fields: Map<String, Value>,
}

impl VariantWriter<'_> {
    fn cell(self, content: Value) -> Cell {
        let object = Map::from_iter([(self.variant.to_string(), content)]);
        self.column.value_cell(Value::Object(object))
    }
}

impl ser::SerializeTupleVariant for VariantWriter<'_> {
    type Ok = Cell;
    type Error = serde_json::Error;

    fn serialize_field<T: Serialize + ?Sized>(&mut self, value: &T) -> serde_json::Result<()> {
        self.items.push(serde_json::to_value(value)?);
        Ok(())
    }

    fn end(mut self) -> serde_json::Result<Cell> {
        let items = std::mem::take(&mut self.items);
        Ok(self.cell(Value::Array(items)))
    }
}

impl ser::SerializeStructVariant for VariantWriter<'_> {
    type Ok = Cell;
    type Error = serde_json::Error;

    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        name: &'static str,
        value: &T,
    ) -> serde_json::Result<()> {
        self.fields
            .insert(name.to_string(), serde_json::to_value(value)?);
        Ok(())
    }

    fn end(mut self) -> serde_json::Result<Cell> {
        let fields = std::mem::take(&mut self.fields);
        Ok(self.cell(Value::Object(fields)))
    }
}
