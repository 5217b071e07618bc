//! Writes a generated data set as files the CLI's offline mode loads:
//! `customers`, `plans`, `invoices` and `fx_rates`, each as JSONL or CSV.
//! CSV columns are the record's field names; nested objects flatten to
//! `metadata.<key>` columns; arrays are left out.

use crate::generator::{Dataset, Spec, generate_streaming};
use serde_json::Value;
use std::collections::BTreeSet;
use std::fs::File;
use std::io::{BufWriter, Result, Write};
use std::path::Path;
use submetrics::{Invoice, Ledger, Settings};

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

/// A data set generated as typed records: the collections other than
/// invoices, the invoices as typed records, and a sample of them as JSON.
pub struct Streamed {
    pub data: Dataset,
    pub invoices: Vec<Invoice>,
    pub sample: Vec<Value>,
}

/// Generates `spec` into `dir` as JSONL, streaming the invoices to their
/// file (so ten million never sit in memory as JSON), and keeps them as typed
/// records plus `samples` of them, evenly spread, as JSON.
pub fn generate_jsonl(spec: &Spec, dir: &Path, samples: usize) -> Result<Streamed> {
    std::fs::create_dir_all(dir)?;
    let mut out = BufWriter::new(File::create(dir.join("invoices.jsonl"))?);
    let streamed = generate_typed(spec, samples, |invoice| {
        serde_json::to_writer(&mut out, invoice)?;
        out.write_all(b"\n")
    })?;
    out.flush()?;
    write_dataset(&streamed.data, dir, Format::Jsonl)?;
    Ok(streamed)
}

/// Generates `spec` as typed invoices plus `samples` of them, evenly spread,
/// as JSON, handing each invoice's JSON to `each` on the way; the first error
/// (of `each`, or an invalid generated invoice) ends the run.
pub fn generate_typed(
    spec: &Spec,
    samples: usize,
    mut each: impl FnMut(&Value) -> Result<()>,
) -> Result<Streamed> {
    let every = (spec.invoices / samples.max(1)).max(1);
    let mut invoices: Vec<Invoice> = Vec::with_capacity(spec.invoices + spec.invoices / 20);
    let mut sample = Vec::new();
    let mut outcome: Result<()> = Ok(());
    let data = generate_streaming(spec, |chunk| {
        for invoice in chunk {
            if outcome.is_err() {
                return;
            }
            if invoices.len().is_multiple_of(every) && sample.len() < samples {
                sample.push(invoice.clone());
            }
            outcome = each(invoice).and_then(|()| match Invoice::from_json(invoice) {
                Ok(typed) => {
                    invoices.push(typed);
                    Ok(())
                }
                Err(error) => Err(std::io::Error::new(
                    std::io::ErrorKind::InvalidData,
                    format!("the generator made an invalid invoice: {error}"),
                )),
            });
        }
    });
    outcome?;
    Ok(Streamed {
        data,
        invoices,
        sample,
    })
}

impl Streamed {
    /// A ledger with default settings holding the whole data set (FX rates,
    /// plans, customers, then the typed invoices), and the sample.
    pub fn into_ledger(self) -> (Ledger, Vec<Value>) {
        let mut ledger = Ledger::new(Settings::default());
        ledger
            .load_fx_rates(&self.data.fx_rates)
            .expect("generated FX rates are valid");
        ledger.upsert_plans(&self.data.plans);
        ledger.upsert_customers(&self.data.customers);
        ledger.upsert_invoice_records(self.invoices);
        (ledger, self.sample)
    }
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
