//! Arrow arrays built straight from a report's stored cells
//! ([`CellRef`]), typed as [`column_of`](super::column_of) types the same
//! cells as JSON values: no JSON value is made on the way.

use crate::error::{Error, Result};
use crate::reports::row_cells::CellRef;
use arrow_array::builder::StringBuilder;
use arrow_array::{
    ArrayRef, BooleanArray, Float64Array, Int64Array, NullArray, StringArray, StructArray,
};
use arrow_buffer::NullBuffer;
use arrow_schema::Field;
use rayon::prelude::*;
use std::collections::HashMap;
use std::sync::Arc;

/// Whether a cell is a number of any kind.
pub(super) fn is_number(cell: &CellRef<'_>) -> bool {
    matches!(
        cell,
        CellRef::Integer(_) | CellRef::Unsigned(_) | CellRef::Real(_)
    )
}

/// The integer cells as `Int64`, any other cell null.
pub(super) fn integers<'a>(cells: impl IntoIterator<Item = CellRef<'a>>) -> ArrayRef {
    let integer = |cell: CellRef<'a>| match cell {
        CellRef::Integer(n) => Some(n),
        _ => None,
    };
    Arc::new(cells.into_iter().map(integer).collect::<Int64Array>())
}

/// The number cells as `Float64`, any other cell null.
pub(super) fn reals<'a>(cells: impl IntoIterator<Item = CellRef<'a>>) -> ArrayRef {
    let real = |cell: CellRef<'a>| match cell {
        CellRef::Integer(n) => Some(n as f64),
        CellRef::Unsigned(n) => Some(n as f64),
        CellRef::Real(r) => Some(r),
        _ => None,
    };
    Arc::new(cells.into_iter().map(real).collect::<Float64Array>())
}

/// The largest whole number every `Float64` holds exactly: 2^53.
pub(super) const EXACT_IN_FLOAT: u64 = 1 << 53;

/// A `*-table` period column's cells (money, counts and rates of its rows'
/// metrics) as `Float64`, the one type that holds them all, so every
/// period column has the same type; a whole number beyond
/// [`EXACT_IN_FLOAT`] either way, which it would round, is
/// [`Error::OutOfRange`] naming the column.
pub(super) fn metric_reals<'a>(
    column: &str,
    cells: impl IntoIterator<Item = CellRef<'a>> + Clone,
) -> Result<ArrayRef> {
    let inexact = cells.clone().into_iter().find_map(|cell| match cell {
        CellRef::Integer(n) if n.unsigned_abs() > EXACT_IN_FLOAT => Some(n.to_string()),
        CellRef::Unsigned(n) if n > EXACT_IN_FLOAT => Some(n.to_string()),
        _ => None,
    });
    match inexact {
        Some(number) => Err(beyond_float(column, &number)),
        None => Ok(reals(cells)),
    }
}

/// Why a `*-table` cell cannot go into its `Float64` period column.
pub(super) fn beyond_float(column: &str, number: &str) -> Error {
    Error::OutOfRange {
        what: format!("{number} in the period column `{column}`"),
        range: "a `*-table` report's Arrow period columns, Float64, whole numbers exact to \
                2^53 (9007199254740992) either way; the report without `-table` holds \
                money as Int64",
    }
}

/// The text cells as `Utf8`, any other cell null.
pub(super) fn texts<'a>(cells: impl IntoIterator<Item = CellRef<'a>>) -> ArrayRef {
    let text = |cell: CellRef<'a>| -> Option<&'a str> {
        match cell {
            CellRef::Text(text) => Some(text),
            _ => None,
        }
    };
    Arc::new(cells.into_iter().map(text).collect::<StringArray>())
}

/// The boolean cells as `Boolean`, any other cell null.
pub(super) fn booleans<'a>(cells: impl IntoIterator<Item = CellRef<'a>>) -> ArrayRef {
    let flag = |cell: CellRef<'a>| match cell {
        CellRef::Bool(b) => Some(b),
        _ => None,
    };
    Arc::new(cells.into_iter().map(flag).collect::<BooleanArray>())
}

/// One column of cells typed by its values (see the module documentation
/// of [`columnar`](super)): null when no cell holds a value; else
/// booleans, integers, numbers, lists or objects when every value is one;
/// else texts, a value that is not a text written as its JSON text.
pub(super) fn column_of_cells(cells: &[CellRef<'_>]) -> ArrayRef {
    let mut present = cells.iter().filter(|cell| cell.is_present()).peekable();
    if present.peek().is_none() {
        return Arc::new(NullArray::new(cells.len()));
    }
    let valid = || NullBuffer::from_iter(cells.iter().map(|cell| cell.is_present()));
    let every = |kind: fn(&CellRef<'_>) -> bool| cells.iter().filter(|c| c.is_present()).all(kind);
    if every(|c| matches!(c, CellRef::Bool(_))) {
        return booleans(cells.iter().copied());
    }
    if every(|c| matches!(c, CellRef::Integer(_))) {
        return integers(cells.iter().copied());
    }
    if every(is_number) {
        return reals(cells.iter().copied());
    }
    if every(|c| matches!(c, CellRef::List(_))) {
        let mut items = Vec::new();
        let mut lengths = Vec::with_capacity(cells.len());
        for cell in cells {
            let before = items.len();
            if let CellRef::List(list) = cell {
                items.extend(list.items());
            }
            lengths.push(items.len() - before);
        }
        return super::list_of(column_of_cells(&items), lengths, valid());
    }
    if every(|c| matches!(c, CellRef::Object(_))) {
        return struct_of_cells(cells, valid());
    }
    let mut texts = StringBuilder::with_capacity(cells.len(), 0);
    for cell in cells {
        match cell {
            CellRef::Absent | CellRef::Null => texts.append_null(),
            CellRef::Text(text) => texts.append_value(text),
            other => texts.append_value(
                serde_json::to_string(other).expect("cells serialize as JSON values"),
            ),
        }
    }
    Arc::new(texts.finish())
}

/// Object cells (and nulls) as a struct column: a field per key in order
/// of first use, each typed by its values.
fn struct_of_cells(cells: &[CellRef<'_>], valid: NullBuffer) -> ArrayRef {
    let mut names: Vec<&str> = Vec::new();
    let mut positions: HashMap<&str, usize> = HashMap::new();
    let mut children: Vec<Vec<CellRef<'_>>> = Vec::new();
    for (row, cell) in cells.iter().enumerate() {
        let CellRef::Object(object) = cell else {
            continue;
        };
        for (place, (name, value)) in object.fields().enumerate() {
            let child = if names.get(place) == Some(&name) {
                place
            } else {
                *positions.entry(name).or_insert_with(|| {
                    names.push(name);
                    children.push(Vec::new());
                    names.len() - 1
                })
            };
            let column = &mut children[child];
            column.resize(row, CellRef::Absent);
            column.push(value);
        }
    }
    if names.is_empty() {
        return Arc::new(StructArray::new_empty_fields(cells.len(), Some(valid)));
    }
    for column in &mut children {
        column.resize(cells.len(), CellRef::Absent);
    }
    let arrays: Vec<ArrayRef> = children
        .par_iter()
        .map(|column| column_of_cells(column))
        .collect();
    let fields = names
        .iter()
        .zip(&arrays)
        .map(|(name, array)| Field::new(*name, array.data_type().clone(), true));
    Arc::new(StructArray::new(fields.collect(), arrays, Some(valid)))
}

#[cfg(test)]
mod tests {
    use super::super::column_of;
    use super::*;
    use crate::reports::row_cells::{CellPieces, RowCells};
    use serde_json::{Value, json};

    #[test]
    fn cells_are_typed_as_their_json_values_are() {
        let rows = [
            json!({"n": 1, "r": 1, "u": 1, "b": true, "mixed": 1, "list": [1, null],
                   "objects": {"a": 1, "b": [{"c": "x"}]}, "empty": {}, "nulls": null,
                   "texts": ["a"], "lists": [[1], [2.5]]}),
            json!({"n": null, "r": 2.5, "u": u64::MAX, "b": null, "mixed": "x", "list": null,
                   "objects": null, "empty": null, "texts": ["b", null]}),
            json!({"n": -3, "r": null, "mixed": [true, {"k": 1.5}], "list": [],
                   "objects": {"b": [], "d": false, "a": "text"}, "empty": {}}),
            json!({"mixed": {"z": null}, "objects": {"b": [{"c": null, "e": 1}, null]}}),
        ];
        let cells = CellPieces::new(vec![
            RowCells::of_values(rows[..2].to_vec()),
            RowCells::of_values(rows[2..].to_vec()),
        ]);
        assert_eq!(cells.names().len(), 11);
        for name in cells.names() {
            let values: Vec<Option<&Value>> = rows.iter().map(|row| row.get(name)).collect();
            let stored = column_of_cells(&cells.column(name).collect::<Vec<_>>());
            assert_eq!(stored.as_ref(), column_of(&values).as_ref(), "{name}");
        }
        let absent = column_of_cells(&[CellRef::Absent, CellRef::Null]);
        assert_eq!(
            absent.as_ref(),
            &NullArray::new(2) as &dyn arrow_array::Array
        );
    }
}
