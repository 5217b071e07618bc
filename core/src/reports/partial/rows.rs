//! A partial of a list report: the rows a partition contributes to the
//! final page, already written, with the key that orders them.
//!
//! A page of `limit` rows after `offset` holds only rows among the first
//! `offset + limit` of the whole list, and each of those is among the first
//! `offset + limit` of its own partition: so a partition keeps at most that
//! many rows, sorted, and merging two keeps the first `offset + limit` of
//! both. `count` adds up every row, kept or not. Keys must order rows
//! totally (they end with unique tie-breakers), so the merge order never
//! matters.

use crate::error::{Error, Result};
use chrono::{DateTime, Utc};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use std::cmp::Ordering;
use std::collections::BTreeSet;

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

/// A written row and its sort key.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Row {
    pub key: Vec<KeyPart>,
    /// The row's JSON text.
    pub json: String,
}

impl Row {
    /// The row `value` (a report's row struct, or JSON) written out.
    pub fn new<T: Serialize + ?Sized>(key: Vec<KeyPart>, value: &T) -> Row {
        Row {
            key,
            json: serde_json::to_string(value).expect("report rows have text keys"),
        }
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

    /// The rows after the first `offset`, at most `limit` of them, read
    /// back as the report's rows `T`; a row that does not read is
    /// [`Error::MalformedPartial`].
    pub fn page_of<T: DeserializeOwned>(&self, offset: usize, limit: usize) -> Result<Vec<T>> {
        self.rows
            .iter()
            .skip(offset)
            .take(limit)
            .map(|row| {
                serde_json::from_str(&row.json).map_err(|e| Error::MalformedPartial {
                    reason: format!("a list row does not read: {e}"),
                })
            })
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

/// Figures that add up (counts and cents, in an order the report defines)
/// and an optional list.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SumsPart {
    pub sums: Vec<i64>,
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
