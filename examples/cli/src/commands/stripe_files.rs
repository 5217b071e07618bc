//! A directory of Stripe API objects, one file per kind: `KIND.json` (a list
//! response `{"object": "list", "data": [...]}`, or a JSON array) or
//! `KIND.jsonl` (one object a line). `stripe export` writes it; `local
//! --stripe` reads it.

use crate::error::{CliError, Result};
use serde_json::Value;
use std::path::Path;

/// The kinds of a Stripe directory, in the order they are read (events last,
/// so they replace the listed objects they update).
pub const KINDS: &[&str] = &[
    "customers",
    "products",
    "prices",
    "plans",
    "subscriptions",
    "invoices",
    "credit_notes",
    "refunds",
    "charges",
    "events",
];

/// Every object of the directory; missing files are fine. Events are put
/// oldest first (Stripe lists them newest first).
pub fn read(dir: &Path) -> Result<Vec<Value>> {
    let mut objects = Vec::new();
    for kind in KINDS {
        let mut found = read_kind(dir, kind)?;
        if *kind == "events" {
            found.sort_by_key(|event| event.get("created").and_then(Value::as_i64));
        }
        objects.extend(found);
    }
    Ok(objects)
}

fn read_kind(dir: &Path, kind: &str) -> Result<Vec<Value>> {
    for extension in ["json", "jsonl"] {
        let path = dir.join(format!("{kind}.{extension}"));
        if !path.exists() {
            continue;
        }
        let text = std::fs::read_to_string(&path)
            .map_err(|e| CliError::Io(format!("cannot read {}: {e}", path.display())))?;
        let bad = |line: usize, e: String| {
            CliError::usage(format!("{} line {line}: {e}", path.display()))
        };
        if extension == "jsonl" {
            return text
                .lines()
                .enumerate()
                .filter(|(_, line)| !line.trim().is_empty())
                .map(|(i, line)| serde_json::from_str(line).map_err(|e| bad(i + 1, e.to_string())))
                .collect();
        }
        return match serde_json::from_str::<Value>(&text)
            .map_err(|e| bad(e.line(), e.to_string()))?
        {
            Value::Array(items) => Ok(items),
            Value::Object(mut map) => match map.remove("data") {
                Some(Value::Array(items)) => Ok(items),
                _ => Err(bad(
                    1,
                    "expected a list response {\"object\": \"list\", \"data\": [...]} or an array"
                        .to_string(),
                )),
            },
            _ => Err(bad(1, "expected a list of Stripe objects".to_string())),
        };
    }
    Ok(Vec::new())
}
