//! One cell of any readable column type as a JSON-like view: what
//! [`super::Column::view`] falls back to past the common types, and how
//! nested cells (list items, struct fields) are read.

use super::{ArrowEntries, ArrowItems, ArrowNode};
use crate::model::Timestamp;
use crate::model::json::View;
use arrow_array::Array;
use arrow_array::cast::AsArray;
use arrow_array::types::{
    Decimal32Type, Decimal64Type, Decimal128Type, Decimal256Type, Int8Type, Int16Type, Int32Type,
    Int64Type, TimestampMicrosecondType, TimestampMillisecondType, TimestampNanosecondType,
    TimestampSecondType, UInt8Type, UInt16Type, UInt32Type, UInt64Type,
};
use arrow_buffer::ArrowNativeType;
use arrow_schema::{DataType, TimeUnit};
use chrono::NaiveDate;
use serde_json::Number;

/// Whether cells of this type read as JSON-like values.
pub(super) fn readable(data_type: &DataType) -> bool {
    match data_type {
        DataType::Null
        | DataType::Boolean
        | DataType::Int8
        | DataType::Int16
        | DataType::Int32
        | DataType::Int64
        | DataType::UInt8
        | DataType::UInt16
        | DataType::UInt32
        | DataType::UInt64
        | DataType::Float32
        | DataType::Float64
        | DataType::Utf8
        | DataType::LargeUtf8
        | DataType::Utf8View
        | DataType::Date32
        | DataType::Date64
        | DataType::Timestamp(_, _)
        | DataType::Decimal32(_, _)
        | DataType::Decimal64(_, _)
        | DataType::Decimal128(_, _)
        | DataType::Decimal256(_, _) => true,
        DataType::List(item) | DataType::LargeList(item) => readable(item.data_type()),
        DataType::Struct(fields) => fields.iter().all(|f| readable(f.data_type())),
        DataType::Map(entries, _) => match entries.data_type() {
            DataType::Struct(pair) if pair.len() == 2 => {
                pair[0].data_type() == &DataType::Utf8 && readable(pair[1].data_type())
            }
            _ => false,
        },
        DataType::Dictionary(key, value) => {
            key.is_integer()
                && matches!(
                    value.as_ref(),
                    DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View
                )
        }
        _ => false,
    }
}

/// A float cell: a number, null for a NaN (pandas' missing value), or
/// [`View::Infinite`].
pub(super) fn float_view<'a>(f: f64) -> View<'a, ArrowNode<'a>> {
    if f.is_infinite() {
        return View::Infinite(f);
    }
    Number::from_f64(f).map_or(View::Null, View::Number)
}

/// The cell at `row` of `array` as a JSON-like view.
pub(super) fn cell_view<'a>(array: &'a dyn Array, row: usize) -> View<'a, ArrowNode<'a>> {
    if array.is_null(row) {
        return View::Null;
    }
    let integer = |n: i64| View::Number(Number::from(n));
    match array.data_type() {
        DataType::Boolean => View::Bool(array.as_boolean().value(row)),
        DataType::Int8 => integer(array.as_primitive::<Int8Type>().value(row).into()),
        DataType::Int16 => integer(array.as_primitive::<Int16Type>().value(row).into()),
        DataType::Int32 => integer(array.as_primitive::<Int32Type>().value(row).into()),
        DataType::Int64 => integer(array.as_primitive::<Int64Type>().value(row)),
        DataType::UInt8 => integer(array.as_primitive::<UInt8Type>().value(row).into()),
        DataType::UInt16 => integer(array.as_primitive::<UInt16Type>().value(row).into()),
        DataType::UInt32 => integer(array.as_primitive::<UInt32Type>().value(row).into()),
        DataType::UInt64 => {
            View::Number(Number::from(array.as_primitive::<UInt64Type>().value(row)))
        }
        DataType::Float32 => float_view(
            array
                .as_primitive::<arrow_array::types::Float32Type>()
                .value(row)
                .into(),
        ),
        DataType::Float64 => float_view(
            array
                .as_primitive::<arrow_array::types::Float64Type>()
                .value(row),
        ),
        DataType::Decimal32(_, scale) => decimal_view(
            array.as_primitive::<Decimal32Type>().value(row).into(),
            *scale,
        ),
        DataType::Decimal64(_, scale) => decimal_view(
            array.as_primitive::<Decimal64Type>().value(row).into(),
            *scale,
        ),
        DataType::Decimal128(_, scale) => {
            decimal_view(array.as_primitive::<Decimal128Type>().value(row), *scale)
        }
        DataType::Decimal256(_, scale) => {
            let unscaled = array.as_primitive::<Decimal256Type>().value(row);
            match unscaled.to_i128() {
                Some(unscaled) => decimal_view(unscaled, *scale),
                // Past 38 digits: only the float is near.
                None => float_view(
                    unscaled.to_string().parse::<f64>().unwrap_or(f64::NAN)
                        / 10f64.powi(i32::from(*scale)),
                ),
            }
        }
        DataType::Utf8 => View::String(array.as_string::<i32>().value(row)),
        DataType::LargeUtf8 => View::String(array.as_string::<i64>().value(row)),
        DataType::Utf8View => View::String(array.as_string_view().value(row)),
        DataType::Date32 => {
            let days = array
                .as_primitive::<arrow_array::types::Date32Type>()
                .value(row);
            date_view(i64::from(days))
        }
        DataType::Date64 => {
            let millis = array
                .as_primitive::<arrow_array::types::Date64Type>()
                .value(row);
            date_view(millis.div_euclid(86_400_000))
        }
        DataType::Timestamp(unit, _) => {
            let value = match unit {
                TimeUnit::Second => array.as_primitive::<TimestampSecondType>().value(row),
                TimeUnit::Millisecond => {
                    array.as_primitive::<TimestampMillisecondType>().value(row)
                }
                TimeUnit::Microsecond => {
                    array.as_primitive::<TimestampMicrosecondType>().value(row)
                }
                TimeUnit::Nanosecond => array.as_primitive::<TimestampNanosecondType>().value(row),
            };
            timestamp_view(*unit, value)
        }
        DataType::List(_) => {
            let list = array.as_list::<i32>();
            let offsets = list.value_offsets();
            View::Array(ArrowItems {
                array: list.values().as_ref(),
                range: offsets[row] as usize..offsets[row + 1] as usize,
            })
        }
        DataType::LargeList(_) => {
            let list = array.as_list::<i64>();
            let offsets = list.value_offsets();
            View::Array(ArrowItems {
                array: list.values().as_ref(),
                range: offsets[row] as usize..offsets[row + 1] as usize,
            })
        }
        DataType::Struct(_) => View::Object(ArrowEntries::Struct {
            array: array.as_struct(),
            row,
            next: 0,
        }),
        DataType::Map(..) => {
            let map = array.as_map();
            let offsets = map.value_offsets();
            View::Object(ArrowEntries::Map {
                keys: map.keys().as_string::<i32>(),
                values: map.values().as_ref(),
                range: offsets[row] as usize..offsets[row + 1] as usize,
            })
        }
        DataType::Dictionary(key, _) => {
            let index = match key.as_ref() {
                DataType::Int8 => dictionary_key::<Int8Type>(array, row),
                DataType::Int16 => dictionary_key::<Int16Type>(array, row),
                DataType::Int32 => dictionary_key::<Int32Type>(array, row),
                DataType::Int64 => dictionary_key::<Int64Type>(array, row),
                DataType::UInt8 => dictionary_key::<UInt8Type>(array, row),
                DataType::UInt16 => dictionary_key::<UInt16Type>(array, row),
                DataType::UInt32 => dictionary_key::<UInt32Type>(array, row),
                DataType::UInt64 => dictionary_key::<UInt64Type>(array, row),
                _ => None,
            };
            let values = array.as_any_dictionary().values().as_ref();
            match index {
                Some(index) if index < values.len() => cell_view(values, index),
                _ => View::Null,
            }
        }
        // `ArrowRecords::new` refuses every other type.
        _ => View::Null,
    }
}

/// The value index of a dictionary cell.
fn dictionary_key<K: arrow_array::types::ArrowDictionaryKeyType>(
    array: &dyn Array,
    row: usize,
) -> Option<usize> {
    let key = array.as_dictionary::<K>().keys().value(row);
    // Negative keys index nothing.
    key.to_usize()
}

/// A timestamp cell: `value` in `unit`s since the Unix epoch. Out of the
/// calendar's range it is the raw number, which the timestamp rule
/// refuses, quoting it.
pub(super) fn timestamp_view<'a>(unit: TimeUnit, value: i64) -> View<'a, ArrowNode<'a>> {
    // Finer units are floored to whole milliseconds, which is all a
    // timestamp keeps.
    let millis = match unit {
        TimeUnit::Second => value.checked_mul(1000),
        TimeUnit::Millisecond => Some(value),
        TimeUnit::Microsecond => Some(value.div_euclid(1000)),
        TimeUnit::Nanosecond => Some(value.div_euclid(1_000_000)),
    };
    millis
        .and_then(Timestamp::from_unix_millis)
        .map_or(View::Number(Number::from(value)), View::Timestamp)
}

/// A decimal cell, `unscaled` × 10^-`scale`, as a number: its exact integer
/// when it has no fraction (`10.00` is 10, as a float column's `10.0` is),
/// else the nearest float. Integers past `i64` and `u64` are floats too,
/// which the rules refuse as out of range, quoting them.
fn decimal_view<'a>(unscaled: i128, scale: i8) -> View<'a, ArrowNode<'a>> {
    let power = 10i128.checked_pow(u32::from(scale.unsigned_abs()));
    let exact = match (scale >= 0, power) {
        (true, Some(power)) => (unscaled % power == 0).then(|| unscaled / power),
        (false, Some(power)) => unscaled.checked_mul(power),
        (_, None) => (unscaled == 0).then_some(0),
    };
    let number = exact.and_then(|n| {
        i64::try_from(n)
            .map(Number::from)
            .or_else(|_| u64::try_from(n).map(Number::from))
            .ok()
    });
    number
        .or_else(|| Number::from_f64(unscaled as f64 / 10f64.powi(i32::from(scale))))
        .map_or(View::Null, View::Number)
}

/// A date cell: days since 1970-01-01.
pub(super) fn date_view<'a>(days: i64) -> View<'a, ArrowNode<'a>> {
    i32::try_from(days)
        .ok()
        .and_then(NaiveDate::from_epoch_days)
        .map_or(View::Number(Number::from(days)), |date| {
            View::Timestamp(Timestamp::from_date(date))
        })
}
