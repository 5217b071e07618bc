//! Writing results: JSON (pretty), a terminal table, or CSV. `auto` is a
//! table on a terminal and JSON when piped.

mod csv;
mod money;
mod table;

use serde_json::{Map, Value};
use std::io::IsTerminal;

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    Auto,
    Json,
    Table,
    Csv,
}

/// How to write.
pub struct Style {
    pub format: Format,
    pub color: bool,
    /// The base currency, when known (offline: the ledger's).
    pub base: Option<String>,
}

impl Style {
    pub fn new(format: Format, no_color: bool) -> Style {
        let terminal = std::io::stdout().is_terminal();
        let format = match format {
            Format::Auto if terminal => Format::Table,
            Format::Auto => Format::Json,
            other => other,
        };
        let color = terminal && !no_color && std::env::var_os("NO_COLOR").is_none();
        Style {
            format,
            color,
            base: None,
        }
    }
}

/// The rows a result holds, and the currency its amounts are in: the list
/// of `{result: {list}}`, the array of `{result: [...]}`, `rows` of a
/// table report, a top-level array, or the object itself as one row.
pub fn rows_of(value: &Value) -> (Vec<Map<String, Value>>, Option<String>) {
    let currency = value
        .get("currency")
        .and_then(Value::as_str)
        .map(str::to_string);
    let list = match value {
        Value::Array(items) => items.clone(),
        Value::Object(map) => match map.get("result") {
            Some(Value::Object(inner)) if inner.get("list").is_some_and(Value::is_array) => {
                inner["list"].as_array().cloned().unwrap_or_default()
            }
            Some(Value::Array(items)) => items.clone(),
            _ => match map.get("rows") {
                Some(Value::Array(items)) => pivot_rows(value, items),
                _ => match map.get("summary") {
                    Some(summary @ Value::Object(_)) => vec![summary.clone()],
                    _ => vec![value.clone()],
                },
            },
        },
        other => vec![other.clone()],
    };
    let rows = list
        .into_iter()
        .map(|item| match item {
            Value::Object(map) => map,
            other => {
                let mut map = Map::new();
                map.insert("value".to_string(), other);
                map
            }
        })
        .collect();
    (rows, currency)
}

/// A `{columns, rows: [{metric, label, values}]}` table as one row per metric.
fn pivot_rows(value: &Value, rows: &[Value]) -> Vec<Value> {
    let columns: Vec<String> = value["columns"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|c| c.as_str().map(str::to_string))
        .collect();
    rows.iter()
        .map(|row| {
            let mut map = Map::new();
            map.insert("metric".to_string(), row["metric"].clone());
            if let Some(kind) = row.get("type") {
                map.insert("type".to_string(), kind.clone());
            }
            map.insert("label".to_string(), row["label"].clone());
            for (column, cell) in columns
                .iter()
                .zip(row["values"].as_array().into_iter().flatten())
            {
                map.insert(column.clone(), cell.clone());
            }
            Value::Object(map)
        })
        .collect()
}

/// The cells of a *-table report's rows (pivoted by [`rows_of`]) that hold
/// amounts: every period column of a row whose metric is money.
pub fn money_cells(value: &Value) -> impl Fn(&Map<String, Value>, &str) -> bool {
    let periods: Vec<String> = match value.get("rows") {
        Some(Value::Array(_)) => value["columns"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|c| c.as_str().map(str::to_string))
            .collect(),
        _ => Vec::new(),
    };
    move |row, column| {
        periods.iter().any(|p| p == column)
            && row
                .get("metric")
                .and_then(Value::as_str)
                .is_some_and(money::is_money_metric)
    }
}

/// Writes a result to stdout in the chosen format.
pub fn print(value: &Value, style: &Style) {
    let text = match style.format {
        Format::Csv => {
            let (rows, _) = rows_of(value);
            csv::render(&rows)
        }
        Format::Table => {
            let (rows, currency) = rows_of(value);
            table::render(
                &rows,
                currency.as_deref(),
                style.base.as_deref(),
                style.color,
                money_cells(value),
            )
        }
        Format::Json | Format::Auto => {
            serde_json::to_string_pretty(value).unwrap_or_default() + "\n"
        }
    };
    print!("{text}");
}
