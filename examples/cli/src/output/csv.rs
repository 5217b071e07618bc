//! CSV a spreadsheet opens: a header of every field seen (in first-seen
//! order), RFC 4180 quoting, amounts as raw cents, nested values as JSON.

use serde_json::{Map, Value};

fn field(value: Option<&Value>) -> String {
    let text = match value {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(s)) => s.clone(),
        Some(other) => other.to_string(),
    };
    if text.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", text.replace('"', "\"\""))
    } else {
        text
    }
}

pub fn columns(rows: &[Map<String, Value>]) -> Vec<String> {
    let mut columns: Vec<String> = Vec::new();
    for row in rows {
        for key in row.keys() {
            if !columns.contains(key) {
                columns.push(key.clone());
            }
        }
    }
    columns
}

/// The rows as CSV; with no row, a header of `declared` (the columns the
/// rows would have), or nothing at all when those are not known.
pub fn render(rows: &[Map<String, Value>], declared: &[String]) -> String {
    let columns = if rows.is_empty() {
        declared.to_vec()
    } else {
        columns(rows)
    };
    if columns.is_empty() {
        return String::new();
    }
    let mut out = String::new();
    out.push_str(
        &columns
            .iter()
            .map(|c| field(Some(&Value::String(c.clone()))))
            .collect::<Vec<_>>()
            .join(","),
    );
    out.push_str("\r\n");
    for row in rows {
        out.push_str(
            &columns
                .iter()
                .map(|c| field(row.get(c)))
                .collect::<Vec<_>>()
                .join(","),
        );
        out.push_str("\r\n");
    }
    out
}
