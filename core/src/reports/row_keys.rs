//! The columns of JSON rows: their keys in order of first use, and each
//! key's cells, found in one walk over each row's fields. Rows serialized
//! from one struct hold their keys in one order, so a field is first
//! compared with the key at its own position, and looked up by name only
//! when it is elsewhere, rather than every cell being looked up by name
//! in every row (a quarter of the time of a million-row report as Arrow).

use serde_json::{Map, Value};
use std::collections::HashMap;

/// Keys in order of first use, with where each stands.
#[derive(Default)]
pub(crate) struct KeyOrder<'a> {
    names: Vec<&'a str>,
    positions: HashMap<&'a str, usize>,
}

impl<'a> KeyOrder<'a> {
    /// The keys of `objects` in order of first use.
    pub(crate) fn of(objects: impl IntoIterator<Item = &'a Map<String, Value>>) -> KeyOrder<'a> {
        let mut order = KeyOrder::default();
        for object in objects {
            for (place, key) in object.keys().enumerate() {
                order.position_of(place, key);
            }
        }
        order
    }

    /// Only these distinct names, in this order (the columns of a table,
    /// whose rows may hold fewer).
    pub(crate) fn named(names: impl IntoIterator<Item = &'a str>) -> KeyOrder<'a> {
        let mut order = KeyOrder::default();
        for name in names {
            let place = order.names.len();
            order.position_of(place, name);
        }
        order
    }

    pub(crate) fn names(&self) -> &[&'a str] {
        &self.names
    }

    /// Where `key`, the `place`-th field of its row, stands: `place` when
    /// the key there is the same, else its position, added at the end when
    /// new.
    fn position_of(&mut self, place: usize, key: &'a str) -> usize {
        if self.names.get(place) == Some(&key) {
            return place;
        }
        *self.positions.entry(key).or_insert_with(|| {
            self.names.push(key);
            self.names.len() - 1
        })
    }

    /// Where `key`, the `place`-th field of its row, stands among these
    /// keys, if it is one of them.
    fn find(&self, place: usize, key: &str) -> Option<usize> {
        if self.names.get(place) == Some(&key) {
            return Some(place);
        }
        self.positions.get(key).copied()
    }

    /// The cells of one row, a cell per key (`None` where the row, absent
    /// or not an object, lacks the key), into `cells`.
    pub(crate) fn row(&self, row: Option<&'a Value>, cells: &mut Vec<Option<&'a Value>>) {
        cells.clear();
        cells.resize(self.names.len(), None);
        let fields = row.and_then(Value::as_object).into_iter().flatten();
        for (place, (key, value)) in fields.enumerate() {
            if let Some(column) = self.find(place, key) {
                cells[column] = Some(value);
            }
        }
    }

    /// Each key's cells, a cell per row (see [`KeyOrder::row`]).
    #[cfg(feature = "arrow")]
    pub(crate) fn cells(&self, rows: &[Option<&'a Value>]) -> Vec<Vec<Option<&'a Value>>> {
        let mut columns = vec![Vec::with_capacity(rows.len()); self.names.len()];
        let mut cells = Vec::with_capacity(self.names.len());
        for row in rows {
            self.row(*row, &mut cells);
            for (column, cell) in columns.iter_mut().zip(&cells) {
                column.push(*cell);
            }
        }
        columns
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// Each key's cells of `rows` as integers.
    fn integer_cells(order: &KeyOrder, rows: &[Value]) -> Vec<Vec<Option<i64>>> {
        let cells: Vec<Option<&Value>> = rows.iter().map(Some).collect();
        let columns = order.cells(&cells);
        columns
            .iter()
            .map(|column| column.iter().map(|v| v.and_then(Value::as_i64)).collect())
            .collect()
    }

    #[test]
    fn keys_come_in_order_of_first_use_and_cells_under_their_key() {
        let rows = [
            json!({"a": 1, "b": 2}),
            json!({"b": 3, "c": 4}),
            json!(null),
            json!({"c": 5, "a": 6, "b": 7}),
            json!(8),
        ];
        let objects = rows.iter().filter_map(Value::as_object);
        let order = KeyOrder::of(objects);
        assert_eq!(order.names(), ["a", "b", "c"]);
        assert_eq!(
            integer_cells(&order, &rows),
            [
                vec![Some(1), None, None, Some(6), None],
                vec![Some(2), Some(3), None, Some(7), None],
                vec![None, Some(4), None, Some(5), None],
            ]
        );
    }

    #[test]
    fn named_keys_take_only_their_cells() {
        let rows = [json!({"x": 1, "y": 2}), json!({"y": 3})];
        let order = KeyOrder::named(["y", "z"]);
        assert_eq!(
            integer_cells(&order, &rows),
            [vec![Some(2), Some(3)], vec![None, None]]
        );
    }
}
