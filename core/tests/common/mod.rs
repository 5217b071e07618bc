//! JSON records as Arrow record batches, for the tests that check the
//! Arrow writes against the JSON writes.

use arrow_array::{
    ArrayRef, BooleanArray, Float64Array, Int64Array, ListArray, NullArray, RecordBatch,
    StringArray, StructArray,
};
use arrow_buffer::{NullBuffer, OffsetBuffer};
use arrow_schema::{Field, Fields, Schema};
use serde_json::Value;
use std::sync::Arc;

/// One column of JSON values (absent or null as `None`), typed by what its
/// values are: `None` when they mix kinds (say strings and numbers).
fn column(values: &[Option<&Value>]) -> Option<ArrayRef> {
    let present: Vec<&Value> = values
        .iter()
        .flatten()
        .copied()
        .filter(|v| !v.is_null())
        .collect();
    let valid = || {
        NullBuffer::from(
            values
                .iter()
                .map(|v| v.is_some_and(|v| !v.is_null()))
                .collect::<Vec<bool>>(),
        )
    };
    let array: ArrayRef = if present.is_empty() {
        Arc::new(NullArray::new(values.len()))
    } else if present.iter().all(|v| v.is_boolean()) {
        Arc::new(
            values
                .iter()
                .map(|v| v.and_then(Value::as_bool))
                .collect::<BooleanArray>(),
        )
    } else if present.iter().all(|v| v.is_i64()) {
        Arc::new(
            values
                .iter()
                .map(|v| v.and_then(Value::as_i64))
                .collect::<Int64Array>(),
        )
    } else if present.iter().all(|v| v.is_number()) {
        Arc::new(
            values
                .iter()
                .map(|v| v.and_then(Value::as_f64))
                .collect::<Float64Array>(),
        )
    } else if present.iter().all(|v| v.is_string()) {
        Arc::new(
            values
                .iter()
                .map(|v| v.and_then(Value::as_str))
                .collect::<StringArray>(),
        )
    } else if present.iter().all(|v| v.is_array()) {
        let mut items: Vec<Option<&Value>> = Vec::new();
        let mut lengths = Vec::new();
        for value in values {
            let list = value
                .and_then(Value::as_array)
                .map_or(&[][..], Vec::as_slice);
            lengths.push(list.len());
            items.extend(list.iter().map(Some));
        }
        let child = column(&items)?;
        let field = Arc::new(Field::new("item", child.data_type().clone(), true));
        Arc::new(ListArray::new(
            field,
            OffsetBuffer::from_lengths(lengths),
            child,
            Some(valid()),
        ))
    } else if present.iter().all(|v| v.is_object()) {
        let mut keys: Vec<&str> = Vec::new();
        for object in present.iter().filter_map(|v| v.as_object()) {
            for key in object.keys() {
                if !keys.contains(&key.as_str()) {
                    keys.push(key);
                }
            }
        }
        if keys.is_empty() {
            return Some(Arc::new(StructArray::new_empty_fields(
                values.len(),
                Some(valid()),
            )));
        }
        let mut fields = Vec::new();
        let mut columns = Vec::new();
        for key in keys {
            let cells: Vec<Option<&Value>> =
                values.iter().map(|v| v.and_then(|v| v.get(key))).collect();
            let child = column(&cells)?;
            fields.push(Field::new(key, child.data_type().clone(), true));
            columns.push(child);
        }
        Arc::new(StructArray::new(
            Fields::from(fields),
            columns,
            Some(valid()),
        ))
    } else {
        return None;
    };
    Some(array)
}

/// JSON objects as one record batch, a column per key (in first-seen
/// order); `None` when a column would mix kinds of values.
pub fn batch_of(records: &[Value]) -> Option<RecordBatch> {
    let mut keys: Vec<&str> = Vec::new();
    for record in records {
        for key in record.as_object()?.keys() {
            if !keys.contains(&key.as_str()) {
                keys.push(key);
            }
        }
    }
    let mut fields = Vec::new();
    let mut columns = Vec::new();
    for key in keys {
        let cells: Vec<Option<&Value>> = records.iter().map(|r| r.get(key)).collect();
        let array = column(&cells)?;
        fields.push(Field::new(key, array.data_type().clone(), true));
        columns.push(array);
    }
    let options = arrow_array::RecordBatchOptions::new().with_row_count(Some(records.len()));
    Some(
        RecordBatch::try_new_with_options(Arc::new(Schema::new(fields)), columns, &options)
            .unwrap(),
    )
}
