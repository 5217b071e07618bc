//! Writes a generated data set as files the CLI's offline mode loads:
//! `customers`, `plans`, `invoices` and `fx_rates`, each as JSONL or CSV.
//! CSV columns are the record's field names; nested objects flatten to
//! `metadata.<key>` columns; arrays are left out.

use crate::generator::Dataset;
use serde_json::Value;
use std::collections::BTreeSet;
use std::fs::File;
use std::io::{BufWriter, Result, Write};
use std::path::Path;

/// Output format of [`write_dataset`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Jsonl,
    Csv,
}

/// Writes every collection of `data` into `dir` (created if needed). An
/// empty collection writes no file (and leaves one already there alone), so
/// invoices streamed to their own file are not overwritten.
pub fn write_dataset(data: &Dataset, dir: &Path, format: Format) -> Result<()> {
    std::fs::create_dir_all(dir)?;
    for (name, records) in [
        ("customers", &data.customers),
        ("plans", &data.plans),
        ("invoices", &data.invoices),
        ("fx_rates", &data.fx_rates),
    ] {
        if records.is_empty() {
            continue;
        }
        match format {
            Format::Jsonl => write_jsonl(&dir.join(format!("{name}.jsonl")), records)?,
            Format::Csv => write_csv(&dir.join(format!("{name}.csv")), records)?,
        }
    }
    Ok(())
}

fn write_jsonl(path: &Path, records: &[Value]) -> Result<()> {
    let mut out = BufWriter::new(File::create(path)?);
    for record in records {
        serde_json::to_writer(&mut out, record)?;
        out.write_all(b"\n")?;
    }
    out.flush()
}

fn flatten(record: &Value) -> Vec<(String, String)> {
    let mut cells = Vec::new();
    if let Value::Object(map) = record {
        for (key, value) in map {
            match value {
                Value::Object(inner) => {
                    for (k, v) in inner {
                        cells.push((format!("{key}.{k}"), scalar(v)));
                    }
                }
                Value::Array(_) | Value::Null => {}
                other => cells.push((key.clone(), scalar(other))),
            }
        }
    }
    cells
}

fn scalar(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

fn quote(cell: &str) -> String {
    if cell.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", cell.replace('"', "\"\""))
    } else {
        cell.to_string()
    }
}

fn write_csv(path: &Path, records: &[Value]) -> Result<()> {
    let rows: Vec<Vec<(String, String)>> = records.iter().map(flatten).collect();
    let mut columns: Vec<String> = Vec::new();
    let mut seen = BTreeSet::new();
    for row in &rows {
        for (column, _) in row {
            if seen.insert(column.clone()) {
                columns.push(column.clone());
            }
        }
    }
    let mut out = BufWriter::new(File::create(path)?);
    writeln!(
        out,
        "{}",
        columns
            .iter()
            .map(|c| quote(c))
            .collect::<Vec<_>>()
            .join(",")
    )?;
    for row in rows {
        let cells: Vec<String> = columns
            .iter()
            .map(|c| {
                row.iter()
                    .find(|(k, _)| k == c)
                    .map_or(String::new(), |(_, v)| quote(v))
            })
            .collect();
        writeln!(out, "{}", cells.join(","))?;
    }
    out.flush()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn csv_quotes_and_flattens() {
        let dir = std::env::temp_dir().join(format!("submetrics-write-{}", std::process::id()));
        let data = Dataset {
            customers: vec![
                json!({"id": "c1", "name": "A, Inc.", "metadata": {"industry": "x"}}),
                json!({"id": "c2", "name": "B"}),
            ],
            ..Dataset::default()
        };
        write_dataset(&data, &dir, Format::Csv).unwrap();
        let text = std::fs::read_to_string(dir.join("customers.csv")).unwrap();
        assert_eq!(text, "id,name,metadata.industry\nc1,\"A, Inc.\",x\nc2,B,\n");
        std::fs::remove_dir_all(dir).unwrap();
    }
}
