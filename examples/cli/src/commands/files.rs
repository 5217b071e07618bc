//! Reading exported records from a directory: `<collection>.json` (an array,
//! an object with the collection's key, a list response with `data`, as
//! the Stripe API answers, or a page of the data API as `submetrics data
//! <kind> list --format json` writes it: `{"result": {"list": [...]}}`),
//! `.jsonl` (one record per line) or `.csv` (read by the core's
//! [`submetrics::csv`], as the service reads CSV bodies, so what the client
//! exports, `local` reads back).

use crate::error::{CliError, Result};
use serde_json::Value;
use std::path::Path;

/// The records of one collection, or none when no file holds it.
pub fn read(dir: &Path, collection: &str) -> Result<Vec<Value>> {
    for extension in ["json", "jsonl", "csv"] {
        let path = dir.join(format!("{collection}.{extension}"));
        if !path.exists() {
            continue;
        }
        let text = std::fs::read_to_string(&path)
            .map_err(|e| CliError::Io(format!("cannot read {}: {e}", path.display())))?;
        let bad = |line: usize, e: String| {
            CliError::usage(format!("{} line {line}: {e}", path.display()))
        };
        return match extension {
            "json" => match serde_json::from_str::<Value>(&text)
                .map_err(|e| bad(e.line(), e.to_string()))?
            {
                Value::Array(items) => Ok(items),
                Value::Object(mut map) => {
                    let listed = map.remove(collection).or_else(|| map.remove("data"));
                    match (listed, map.remove("result")) {
                        (Some(Value::Array(items)), _) => Ok(items),
                        (None, Some(Value::Object(mut page))) => match page.remove("list") {
                            Some(Value::Array(items)) => Ok(items),
                            _ => Err(bad(
                                1,
                                "expected {\"result\": {\"list\": [...]}}".to_string(),
                            )),
                        },
                        _ => Err(bad(
                            1,
                            format!(
                                "expected an array, {{\"{collection}\": [...]}}, {{\"data\": [...]}} or {{\"result\": {{\"list\": [...]}}}}"
                            ),
                        )),
                    }
                }
                _ => Err(bad(1, "expected an array of records".to_string())),
            },
            "jsonl" => text
                .lines()
                .enumerate()
                .filter(|(_, line)| !line.trim().is_empty())
                .map(|(i, line)| serde_json::from_str(line).map_err(|e| bad(i + 1, e.to_string())))
                .collect(),
            _ => submetrics::csv::records(&text)
                .map_err(|e| CliError::usage(format!("{}: {e}", path.display()))),
        };
    }
    Ok(Vec::new())
}
