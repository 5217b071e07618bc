//! Aligned terminal tables: text left, numbers right, money formatted with
//! its currency, negative amounts red when color is on. Nested values show
//! as compact JSON. Which cells are money comes from the schema: money in
//! the row's currency uses the row's `currency` (else the result's); money
//! in the report's currency uses the result's `currency`, else the base
//! currency the caller knows. Money whose currency is not known prints as
//! its integer cents, as JSON and CSV give it, rather than with a
//! guessed currency.

use super::csv::columns;
use super::money::format;
use serde_json::{Map, Value};
use submetrics::reports::MoneyIn;

const RED: &str = "\x1b[31m";
const RESET: &str = "\x1b[0m";

/// Which currency a money cell is in: a known one, or not known.
#[derive(Clone, Copy)]
enum In<'a> {
    Currency(&'a str),
    Unknown,
}

impl<'a> In<'a> {
    fn of(code: Option<&'a str>) -> In<'a> {
        code.map_or(In::Unknown, In::Currency)
    }
}

fn cell(money: bool, value: Option<&Value>, currency: In) -> (String, bool, bool) {
    match value {
        None | Some(Value::Null) => (String::new(), false, false),
        Some(Value::Number(n)) if money && n.is_i64() => {
            let cents = n.as_i64().unwrap_or(0);
            let text = match currency {
                In::Currency(code) => format(cents, code),
                In::Unknown => cents.to_string(),
            };
            (text, true, cents < 0)
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

/// `currency` is the result's own (a report's, which is its base currency),
/// `base` the base currency when the caller knows it; `money(row, column)`
/// says which cells hold amounts and in which currency.
pub fn render(
    rows: &[Map<String, Value>],
    currency: Option<&str>,
    base: Option<&str>,
    color: bool,
    money: impl Fn(&Map<String, Value>, &str) -> Option<MoneyIn>,
) -> String {
    if rows.is_empty() {
        return "(no rows)\n".to_string();
    }
    let columns = columns(rows);
    let cells: Vec<Vec<(String, bool, bool)>> = rows
        .iter()
        .map(|row| {
            let row_currency = In::of(row.get("currency").and_then(Value::as_str).or(currency));
            let report_currency = In::of(currency.or(base));
            columns
                .iter()
                .map(|c| {
                    let money = money(row, c);
                    let currency = match money {
                        Some(MoneyIn::Report) => report_currency,
                        _ => row_currency,
                    };
                    cell(money.is_some(), row.get(c), currency)
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
