//! Aligned terminal tables: text left, numbers right, money formatted with
//! its currency, negative amounts red when color is on. Nested values show
//! as compact JSON.

use super::csv::columns;
use super::money::{MONEY_FIELDS, format};
use serde_json::{Map, Value};

const RED: &str = "\x1b[31m";
const RESET: &str = "\x1b[0m";

fn cell(money: bool, value: Option<&Value>, currency: Option<&str>) -> (String, bool, bool) {
    match value {
        None | Some(Value::Null) => (String::new(), false, false),
        Some(Value::Number(n)) if money && n.is_i64() => {
            let cents = n.as_i64().unwrap_or(0);
            (format(cents, currency), true, cents < 0)
        }
        Some(Value::Number(n)) => match n.as_f64() {
            Some(f) if !n.is_i64() => (format!("{f:.2}"), true, false),
            _ => (n.to_string(), true, n.as_i64().is_some_and(|i| i < 0)),
        },
        Some(Value::String(s)) => (s.clone(), false, false),
        Some(Value::Bool(b)) => (b.to_string(), false, false),
        Some(other) => (other.to_string(), false, false),
    }
}

/// `money(row, column)` says which cells beyond [`MONEY_FIELDS`] columns hold
/// amounts (the periods of a *-table report's money rows).
pub fn render(
    rows: &[Map<String, Value>],
    currency: Option<&str>,
    color: bool,
    money: impl Fn(&Map<String, Value>, &str) -> bool,
) -> String {
    if rows.is_empty() {
        return "(no rows)\n".to_string();
    }
    let columns = columns(rows);
    let cells: Vec<Vec<(String, bool, bool)>> = rows
        .iter()
        .map(|row| {
            let row_currency = row.get("currency").and_then(Value::as_str).or(currency);
            columns
                .iter()
                .map(|c| {
                    let is_money = MONEY_FIELDS.contains(&c.as_str()) || money(row, c);
                    cell(is_money, row.get(c), row_currency)
                })
                .collect()
        })
        .collect();
    let widths: Vec<usize> = columns
        .iter()
        .enumerate()
        .map(|(i, c)| {
            cells
                .iter()
                .map(|r| r[i].0.chars().count())
                .max()
                .unwrap_or(0)
                .max(c.chars().count())
        })
        .collect();
    let mut out = String::new();
    let header: Vec<String> = columns
        .iter()
        .zip(&widths)
        .map(|(c, w)| format!("{c:<w$}"))
        .collect();
    out.push_str(header.join("  ").trim_end());
    out.push('\n');
    out.push_str(
        &widths
            .iter()
            .map(|w| "-".repeat(*w))
            .collect::<Vec<_>>()
            .join("  "),
    );
    out.push('\n');
    for row in &cells {
        let line: Vec<String> = row
            .iter()
            .zip(&widths)
            .map(|((text, numeric, negative), w)| {
                let padded = if *numeric {
                    format!("{text:>w$}")
                } else {
                    format!("{text:<w$}")
                };
                if *negative && color {
                    format!("{RED}{padded}{RESET}")
                } else {
                    padded
                }
            })
            .collect();
        out.push_str(line.join("  ").trim_end());
        out.push('\n');
    }
    out
}
