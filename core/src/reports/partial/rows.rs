//! A partial of a list report: the rows a partition contributes to the
//! final page, with the key that orders them.
//!
//! A page of `limit` rows after `offset` holds only rows among the first
//! `offset + limit` of the whole list, and each of those is among the first
//! `offset + limit` of its own partition: so a partition keeps at most that
//! many rows, sorted, and merging two keeps the first `offset + limit` of
//! both. `count` adds up every row, kept or not. Keys must order rows
//! totally (they end with unique tie-breakers), so the merge order never
//! matters.
//!
//! Rows stay the values their report made until a partial is serialized
//! (to be merged in another process), which writes them as JSON text; a
//! report answered in one process hands its kept rows to the page as they
//! are, never writing and reading them back.

use crate::error::{Error, Result};
use crate::money::Total;
use chrono::{DateTime, Utc};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::any::Any;
use std::borrow::Cow;
use std::cmp::Ordering;
use std::collections::BTreeSet;
use std::fmt;

/// One component of a row's sort key.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum KeyPart {
    /// Ascending.
    Asc(Scalar),
    /// Descending.
    Desc(Scalar),
}

/// A value rows are sorted by.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Scalar {
    Int(i128),
    Text(String),
}

impl KeyPart {
    /// `value` ascending, or descending when `descending`.
    pub fn new(value: Scalar, descending: bool) -> KeyPart {
        if descending {
            KeyPart::Desc(value)
        } else {
            KeyPart::Asc(value)
        }
    }

    pub fn int(value: impl Into<i128>) -> KeyPart {
        KeyPart::Asc(Scalar::Int(value.into()))
    }

    pub fn text(value: impl Into<String>) -> KeyPart {
        KeyPart::Asc(Scalar::Text(value.into()))
    }
}

impl PartialOrd for KeyPart {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for KeyPart {
    fn cmp(&self, other: &Self) -> Ordering {
        match (self, other) {
            (KeyPart::Asc(a), KeyPart::Asc(b)) => a.cmp(b),
            (KeyPart::Desc(a), KeyPart::Desc(b)) => b.cmp(a),
            (KeyPart::Asc(_), KeyPart::Desc(_)) => Ordering::Less,
            (KeyPart::Desc(_), KeyPart::Asc(_)) => Ordering::Greater,
        }
    }
}

/// A list row and its sort key.
#[derive(Clone)]
pub struct Row {
    pub key: Vec<KeyPart>,
    value: RowValue,
}

/// A row as its report made it, or as the JSON text a serialized partial
/// held.
enum RowValue {
    Typed(Box<dyn TypedRow>),
    Written(String),
}

/// What a report's list rows are: values written as JSON only when their
/// partial is serialized.
pub trait ListValue: Serialize + Clone + Send + Sync + 'static {}

impl<T: Serialize + Clone + Send + Sync + 'static> ListValue for T {}

/// A report's row type, held without naming it: written out when its
/// partial is serialized, taken back as itself for the page.
trait TypedRow: Send + Sync {
    fn to_json(&self) -> String;
    fn as_any(&self) -> &dyn Any;
    fn into_any(self: Box<Self>) -> Box<dyn Any>;
    fn clone_box(&self) -> Box<dyn TypedRow>;
}

impl<T: ListValue> TypedRow for T {
    fn to_json(&self) -> String {
        serde_json::to_string(self).expect("report rows have text keys")
    }

    fn as_any(&self) -> &dyn Any {
        self
    }

    fn into_any(self: Box<Self>) -> Box<dyn Any> {
        self
    }

    fn clone_box(&self) -> Box<dyn TypedRow> {
        Box::new(self.clone())
    }
}

impl Clone for RowValue {
    fn clone(&self) -> Self {
        match self {
            RowValue::Typed(row) => RowValue::Typed(row.clone_box()),
            RowValue::Written(json) => RowValue::Written(json.clone()),
        }
    }
}

impl Row {
    /// The row `value` (a report's row struct) with its sort key.
    pub fn new(key: Vec<KeyPart>, value: impl ListValue) -> Row {
        Row {
            key,
            value: RowValue::Typed(Box::new(value)),
        }
    }

    /// The row's JSON text.
    fn json(&self) -> Cow<'_, str> {
        match &self.value {
            RowValue::Typed(row) => Cow::Owned(row.to_json()),
            RowValue::Written(json) => Cow::Borrowed(json),
        }
    }

    /// The row as the report's row type `T`: itself when the report made it
    /// as a `T`, else read from its JSON text; text that does not read as
    /// a `T` is [`Error::MalformedPartial`].
    fn into_value<T: DeserializeOwned + 'static>(self) -> Result<T> {
        let malformed = |reason: String| Error::MalformedPartial {
            reason: format!("a list row does not read: {reason}"),
        };
        let json = match self.value {
            RowValue::Typed(row) if row.as_any().is::<T>() => {
                return match row.into_any().downcast::<T>() {
                    Ok(value) => Ok(*value),
                    Err(_) => Err(malformed("it is not of the report's row type".into())),
                };
            }
            RowValue::Typed(row) => {
                debug_assert!(false, "a report reads its rows as another type");
                row.to_json()
            }
            RowValue::Written(json) => json,
        };
        serde_json::from_str(&json).map_err(|e| malformed(e.to_string()))
    }
}

/// How a row crosses a process: its key and its JSON text.
#[derive(Serialize, Deserialize)]
#[serde(rename = "Row")]
struct WrittenRow<'a> {
    key: Cow<'a, [KeyPart]>,
    json: Cow<'a, str>,
}

impl Serialize for Row {
    fn serialize<S: Serializer>(&self, serializer: S) -> std::result::Result<S::Ok, S::Error> {
        WrittenRow {
            key: Cow::Borrowed(&self.key),
            json: self.json(),
        }
        .serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for Row {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> std::result::Result<Row, D::Error> {
        let WrittenRow { key, json } = WrittenRow::deserialize(deserializer)?;
        Ok(Row {
            key: key.into_owned(),
            value: RowValue::Written(json.into_owned()),
        })
    }
}

/// Rows are equal when their keys and JSON texts are, however each is held.
impl PartialEq for Row {
    fn eq(&self, other: &Row) -> bool {
        self.key == other.key && self.json() == other.json()
    }
}

impl Eq for Row {}

impl fmt::Debug for Row {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Row")
            .field("key", &self.key)
            .field("json", &self.json())
            .finish()
    }
}

/// The first `keep` rows of a partition's list, sorted, and how many rows
/// the list has in all.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TopRows {
    pub count: u64,
    pub keep: u64,
    pub rows: Vec<Row>,
}

impl TopRows {
    /// The first `keep` of `rows` (in any order), counting them all.
    pub fn new(mut rows: Vec<Row>, keep: usize) -> TopRows {
        let count = rows.len() as u64;
        let keep_rows = keep.min(rows.len());
        if keep_rows < rows.len() {
            if keep_rows > 0 {
                rows.select_nth_unstable_by(keep_rows - 1, |a, b| a.key.cmp(&b.key));
            }
            rows.truncate(keep_rows);
        }
        rows.sort_unstable_by(|a, b| a.key.cmp(&b.key));
        TopRows {
            count,
            keep: keep as u64,
            rows,
        }
    }

    /// Both lists' first `keep` rows, in order.
    pub fn merge(self, other: TopRows) -> TopRows {
        let keep = self.keep.min(other.keep);
        let mut rows = Vec::with_capacity(self.rows.len() + other.rows.len());
        let (mut a, mut b) = (
            self.rows.into_iter().peekable(),
            other.rows.into_iter().peekable(),
        );
        while (rows.len() as u64) < keep {
            let next = match (a.peek(), b.peek()) {
                (Some(x), Some(y)) if x.key <= y.key => a.next(),
                (Some(_), Some(_)) => b.next(),
                (Some(_), None) => a.next(),
                (None, _) => b.next(),
            };
            match next {
                Some(row) => rows.push(row),
                None => break,
            }
        }
        TopRows {
            count: self.count + other.count,
            keep,
            rows,
        }
    }

    /// The rows after the first `offset`, at most `limit` of them, as the
    /// report's rows `T`; a written row that does not read is
    /// [`Error::MalformedPartial`].
    pub fn into_page<T: DeserializeOwned + 'static>(
        self,
        offset: usize,
        limit: usize,
    ) -> Result<Vec<T>> {
        self.rows
            .into_iter()
            .skip(offset)
            .take(limit)
            .map(Row::into_value)
            .collect()
    }
}

/// A list report's partial: its rows, and which of the customers the
/// request names by id this partition holds (a name no partition holds is
/// the report's `not_found` error, raised at finish).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ListPart {
    pub found: BTreeSet<String>,
    pub rows: TopRows,
}

impl ListPart {
    pub fn merge(mut self, other: ListPart) -> ListPart {
        self.found.extend(other.found);
        self.rows = self.rows.merge(other.rows);
        self
    }

    /// The first of `wanted` no partition holds, as the report's error.
    pub fn check_found(&self, wanted: &[String]) -> Result<()> {
        match wanted.iter().find(|id| !self.found.contains(*id)) {
            Some(id) => Err(Error::NotFound {
                kind: crate::model::Customer::KIND,
                id: id.clone(),
            }),
            None => Ok(()),
        }
    }
}

/// Figures that add up (counts and cents, in an order the report defines,
/// each an exact total) and an optional list.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SumsPart {
    pub sums: Vec<Total>,
    pub rows: TopRows,
}

impl SumsPart {
    pub fn merge(mut self, other: SumsPart) -> Result<SumsPart> {
        if self.sums.len() != other.sums.len() {
            return Err(Error::MalformedPartial {
                reason: format!(
                    "one partial has {} sums and the other {}",
                    self.sums.len(),
                    other.sums.len()
                ),
            });
        }
        for (into, from) in self.sums.iter_mut().zip(other.sums) {
            *into += from;
        }
        self.rows = self.rows.merge(other.rows);
        Ok(self)
    }
}

/// An instant as a sort key: nanoseconds since the epoch.
pub fn instant_key(t: DateTime<Utc>) -> i128 {
    i128::from(t.timestamp()) * 1_000_000_000 + i128::from(t.timestamp_subsec_nanos())
}
