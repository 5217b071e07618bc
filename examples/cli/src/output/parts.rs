//! The parts of an answer beside its rows: a report's totals, buckets and
//! the like (`submetrics::reports::beside_rows`), and the fields of a
//! summary answer beside its `summary` (`cmrr-summary`'s `scheduled`). A
//! table shows them after the rows; CSV, one table only, holds them only
//! as columns of a summary's one row, and refuses them otherwise.

use serde_json::{Map, Value};
use submetrics::reports::{Column, Kind, MoneyIn};

/// The fields of an answer that echo its query, which no rendering needs
/// to repeat: the result's currency shows in its money.
const ECHOES: &[&str] = &["currency", "interval", "metric", "as_of", "breakdown"];

/// Where an answer's rows come from (see `super::rows_of`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RowsFrom {
    /// A list: `result`, `result.list`, a `*-table`'s `rows`, or the answer
    /// itself.
    List,
    /// The fields of `summary`, one row.
    Summary,
    /// The whole answer, one row: nothing is beside it.
    Whole,
}

/// Where `value`'s rows come from.
pub fn rows_from(value: &Value) -> RowsFrom {
    match value {
        Value::Object(map) if map.contains_key("result") || map.contains_key("rows") => {
            RowsFrom::List
        }
        Value::Object(map) if map.get("summary").is_some_and(Value::is_object) => RowsFrom::Summary,
        Value::Object(_) => RowsFrom::Whole,
        _ => RowsFrom::List,
    }
}

/// The fields of `value` beside its rows, in the answer's order.
pub fn beside(value: &Value) -> Vec<(&str, &Value)> {
    let Value::Object(map) = value else {
        return Vec::new();
    };
    let rows = match rows_from(value) {
        RowsFrom::List => &["result", "rows", "columns"][..],
        RowsFrom::Summary => &["summary"][..],
        RowsFrom::Whole => return Vec::new(),
    };
    map.iter()
        .filter(|(name, _)| !rows.contains(&name.as_str()) && !ECHOES.contains(&name.as_str()))
        .map(|(name, part)| (name.as_str(), part))
        .collect()
}

/// The names of `parts` as a sentence: "`total`", "`a`, `b` and `c`".
pub fn named(parts: &[&str]) -> String {
    let quoted: Vec<String> = parts.iter().map(|name| format!("`{name}`")).collect();
    match quoted.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} and {last}", rest.join(", ")),
        _ => quoted.concat(),
    }
}

/// The declared kind of the part `name` among `declared`.
fn kind_of(declared: &[Column], name: &str) -> Option<Kind> {
    declared.iter().find(|c| c.name == name).map(|c| c.kind)
}

/// Which currency the field `column` of a part whose fields are `fields`
/// is money in.
fn money_in(fields: &[Column], column: &str) -> Option<MoneyIn> {
    match kind_of(fields, column) {
        Some(Kind::Money(currency)) => Some(currency),
        _ => None,
    }
}

/// One section of the parts beside the rows: its title (none for the
/// answer's own figures), its rows, and the declared fields of those rows.
pub struct Section<'a> {
    pub title: Option<&'a str>,
    pub rows: Vec<Map<String, Value>>,
    pub fields: &'a [Column],
}

impl Section<'_> {
    /// Which currency the cell `column` of this section is money in.
    pub fn money(&self, column: &str) -> Option<MoneyIn> {
        money_in(self.fields, column)
    }
}

/// The parts beside the rows as sections of a table: the answer's own
/// figures (numbers and texts) together, as one row, then each object as a
/// row and each list of objects as rows, titled by their names. `declared`
/// holds the parts' kinds.
pub fn sections<'a>(parts: &[(&'a str, &'a Value)], declared: &'a [Column]) -> Vec<Section<'a>> {
    let mut figures = Map::new();
    let mut sections = Vec::new();
    for (name, part) in parts {
        let fields = kind_of(declared, name).map_or(&[][..], |kind| kind.fields());
        let rows = match part {
            Value::Object(object) => vec![object.clone()],
            Value::Array(items) if items.iter().all(Value::is_object) => items
                .iter()
                .filter_map(|item| item.as_object().cloned())
                .collect(),
            other => {
                figures.insert(name.to_string(), (*other).clone());
                continue;
            }
        };
        sections.push(Section {
            title: Some(name),
            rows,
            fields,
        });
    }
    if !figures.is_empty() {
        sections.insert(
            0,
            Section {
                title: None,
                rows: vec![figures],
                fields: declared,
            },
        );
    }
    sections
}
