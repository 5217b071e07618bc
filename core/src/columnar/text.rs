//! `Utf8` columns and lists of them written a value at a time as bytes:
//! the values in one buffer and their ends in another, checked as UTF-8
//! once per column when it is finished. A value made as bytes (a date's
//! digits, a currency's code) needs no check of its own, and no builder
//! bookkeeping is paid per value.

use crate::error::{Error, Result};
use arrow_array::{ArrayRef, ListArray, StringArray};
use arrow_buffer::{Buffer, OffsetBuffer, ScalarBuffer};
use arrow_schema::{DataType, Field};
use std::sync::Arc;

/// A `Utf8` column without nulls, filled a value at a time.
pub(super) struct TextColumn {
    values: Vec<u8>,
    /// Where each value ends, after a leading 0. Held at `i32::MAX` once the
    /// values pass it, which [`TextColumn::finish`] refuses.
    ends: Vec<i32>,
}

impl TextColumn {
    /// Room for `rows` values of `bytes` bytes in all.
    pub(super) fn with_capacity(rows: usize, bytes: usize) -> TextColumn {
        let mut ends = Vec::with_capacity(rows + 1);
        ends.push(0);
        TextColumn {
            values: Vec::with_capacity(bytes),
            ends,
        }
    }

    /// Appends a value; the text of `str`s, or bytes the caller knows are
    /// UTF-8 (anything else fails the column when it is finished).
    #[inline]
    pub(super) fn push(&mut self, value: &[u8]) {
        self.values.extend_from_slice(value);
        self.ends
            .push(i32::try_from(self.values.len()).unwrap_or(i32::MAX));
    }

    /// The column, its values checked as UTF-8 in one pass; an error naming
    /// `column` when they are not, or pass the 2 GiB a `Utf8` column holds.
    pub(super) fn finish(self, column: &str) -> Result<StringArray> {
        if i32::try_from(self.values.len()).is_err() {
            return Err(Error::query(
                column,
                "the text of a batch passes the 2 GiB a Utf8 column holds",
            ));
        }
        let ends = OffsetBuffer::new(ScalarBuffer::from(self.ends));
        StringArray::try_new(ends, Buffer::from_vec(self.values), None)
            .map_err(|error| Error::query(column, error.to_string()))
    }
}

/// A column of lists of texts (`List<Utf8>`, items nullable as Arrow's
/// list builders declare them, none null), filled a list at a time.
pub(super) struct TextListColumn {
    items: TextColumn,
    /// Where each list ends in `items`, after a leading 0.
    ends: Vec<i32>,
}

impl TextListColumn {
    /// Room for `rows` lists.
    pub(super) fn with_capacity(rows: usize, items: usize, bytes: usize) -> TextListColumn {
        let mut ends = Vec::with_capacity(rows + 1);
        ends.push(0);
        TextListColumn {
            items: TextColumn::with_capacity(items, bytes),
            ends,
        }
    }

    /// Appends a list of the given items.
    #[inline]
    pub(super) fn push<'a>(&mut self, items: impl IntoIterator<Item = &'a str>) {
        for item in items {
            self.items.push(item.as_bytes());
        }
        let count = self.items.ends.len() - 1;
        self.ends.push(i32::try_from(count).unwrap_or(i32::MAX));
    }

    /// The column, checked as [`TextColumn::finish`] checks its items.
    pub(super) fn finish(self, column: &str) -> Result<ListArray> {
        if i32::try_from(self.items.ends.len() - 1).is_err() {
            return Err(Error::query(column, "a batch holds too many list items"));
        }
        let items: ArrayRef = Arc::new(self.items.finish(column)?);
        let ends = OffsetBuffer::new(ScalarBuffer::from(self.ends));
        ListArray::try_new(Arc::new(item_field()), ends, items, None)
            .map_err(|error| Error::query(column, error.to_string()))
    }
}

/// The item field of a [`TextListColumn`].
pub(super) fn item_field() -> Field {
    Field::new("item", DataType::Utf8, true)
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::Array;
    use arrow_array::cast::AsArray;

    #[test]
    fn texts_are_the_values_pushed() {
        let mut column = TextColumn::with_capacity(1, 1);
        for value in ["USD", "", "älv", "2024-01-01"] {
            column.push(value.as_bytes());
        }
        let column = column.finish("currency").unwrap();
        assert_eq!(column.null_count(), 0);
        let texts: Vec<&str> = column.iter().flatten().collect();
        assert_eq!(texts, ["USD", "", "älv", "2024-01-01"]);
    }

    #[test]
    fn bytes_that_are_not_utf8_fail_the_column() {
        let mut column = TextColumn::with_capacity(2, 4);
        column.push(b"ok");
        column.push(&[0xff, 0xfe]);
        let error = column.finish("customer_id").unwrap_err();
        assert_eq!(
            error.to_string(),
            "parameter `customer_id`: Invalid argument error: Encountered non UTF-8 data: invalid utf-8 sequence of 1 bytes from index 2"
        );
    }

    #[test]
    fn lists_hold_their_items_in_order() {
        let mut column = TextListColumn::with_capacity(3, 2, 8);
        column.push(["basic", "pro"]);
        column.push([]);
        column.push(["team"]);
        let column = column.finish("plans_after").unwrap();
        assert_eq!(column.data_type(), &DataType::List(Arc::new(item_field())));
        let lists: Vec<Vec<String>> = column
            .iter()
            .map(|list| {
                let list = list.unwrap();
                let items = list.as_string::<i32>();
                items.iter().map(|item| item.unwrap().to_string()).collect()
            })
            .collect();
        assert_eq!(lists, [vec!["basic", "pro"], vec![], vec!["team"]]);
    }
}
