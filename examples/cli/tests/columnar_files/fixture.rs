//! The fixture in testdata/local rewritten in each format, and running
//! `local` on it.

use arrow_array::{ArrayRef, Date32Array, RecordBatch};
use parquet::arrow::ArrowWriter;
use parquet::basic::Compression;
use parquet::file::properties::WriterProperties;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::Arc;

pub(crate) fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/local")
}

/// A fresh directory for one test.
pub(crate) fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("columnar-{name}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

pub(crate) fn run(dir: &Path, args: &[&str]) -> Output {
    run_from(&["--data", dir.to_str().unwrap()], args)
}

/// `local` reading what the options in `sources` name.
pub(crate) fn run_from(sources: &[&str], args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_submetrics"))
        .arg("local")
        .args(sources)
        .args(["--as-of", "2024-03-15T00:00:00Z"])
        .args(args)
        .output()
        .expect("run the client")
}

pub(crate) use crate::common::json;

pub(crate) fn fixture_invoices() -> Vec<Value> {
    std::fs::read_to_string(fixture().join("invoices.jsonl"))
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}

/// Records as a record batch, `invoice_date` as an Arrow date column.
pub(crate) fn batch(records: &[Value]) -> RecordBatch {
    let batch = submetrics::columnar::batch_of_rows(records).unwrap();
    let Ok(index) = batch.schema().index_of("invoice_date") else {
        return batch;
    };
    let epoch = chrono::NaiveDate::from_ymd_opt(1970, 1, 1).unwrap();
    let days: Date32Array = records
        .iter()
        .map(|r| {
            let text = r["invoice_date"].as_str()?;
            let date = chrono::NaiveDate::parse_from_str(text, "%Y-%m-%d").ok()?;
            Some((date - epoch).num_days() as i32)
        })
        .collect();
    let mut columns = batch.columns().to_vec();
    columns[index] = Arc::new(days) as ArrayRef;
    let mut fields: Vec<_> = batch.schema().fields().iter().cloned().collect();
    fields[index] = Arc::new(arrow_schema::Field::new(
        "invoice_date",
        arrow_schema::DataType::Date32,
        true,
    ));
    RecordBatch::try_new(Arc::new(arrow_schema::Schema::new(fields)), columns).unwrap()
}

/// The fixture's invoices as a CSV file of plain columns.
pub(crate) fn invoices_csv(invoices: &[Value]) -> String {
    let mut csv = String::from("id,customer_id,type,plan_id,invoice_date,amount,currency\n");
    for invoice in invoices {
        let cell = |name: &str| invoice[name].as_str().unwrap_or_default().to_string();
        csv.push_str(&format!(
            "{},{},{},{},{},{},{}\n",
            cell("id"),
            cell("customer_id"),
            cell("type"),
            cell("plan_id"),
            cell("invoice_date"),
            invoice["amount"],
            cell("currency")
        ));
    }
    csv
}

pub(crate) fn write_parquet(path: &Path, batch: &RecordBatch) {
    write_parquet_compressed(path, batch, Compression::SNAPPY);
}

pub(crate) fn write_parquet_compressed(path: &Path, batch: &RecordBatch, compression: Compression) {
    let file = std::fs::File::create(path).unwrap();
    let properties = WriterProperties::builder()
        .set_compression(compression)
        .build();
    let mut writer = ArrowWriter::try_new(file, batch.schema(), Some(properties)).unwrap();
    writer.write(batch).unwrap();
    writer.close().unwrap();
}

pub(crate) fn copy(from: &str, to: &Path) {
    std::fs::copy(fixture().join(from), to.join(from)).unwrap();
}

/// The mrr report and the summary as the fixture itself gives them, and
/// the closing line of stderr.
pub(crate) fn expected() -> (Value, Value) {
    let mrr = json(&run(
        &fixture(),
        &["reports", "mrr", "--date", "20240101-20240331"],
    ));
    let totals: Vec<i64> = mrr["result"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["total_mrr"].as_i64().unwrap())
        .collect();
    assert_eq!(totals, [13000, 16000, 13000]);
    let summary = json(&run(&fixture(), &["reports", "summary"]));
    assert_eq!(summary["summary"]["mrr_current"], 13000);
    (mrr, summary)
}

/// The same reports and rejections as the fixture.
pub(crate) fn assert_like_the_fixture(dir: &Path) {
    assert_read_like_the_fixture(&["--data", dir.to_str().unwrap()]);
}

/// The same reports and rejections as the fixture, read from `sources`.
pub(crate) fn assert_read_like_the_fixture(sources: &[&str]) {
    let (mrr, summary) = expected();
    let out = run_from(sources, &["reports", "mrr", "--date", "20240101-20240331"]);
    assert_eq!(json(&out), mrr);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let (file, place) = rejected_place(&stderr);
    assert!(Path::new(&file).is_file(), "{stderr}");
    assert!(
        ["line ", "row "].iter().any(|kind| place
            .strip_prefix(kind)
            .is_some_and(|n| n.parse::<usize>().is_ok_and(|n| n > 0))),
        "{stderr}"
    );
    assert!(
        stderr.ends_with("loaded 3 customers, 3 plans, 6 invoices; rejected 1\n"),
        "{stderr}"
    );
    assert_eq!(json(&run_from(sources, &["reports", "summary"])), summary);
}

/// The file and place (`line 7`, `row 2`) the one rejection on `stderr`,
/// the fixture's `bad` invoice, names.
pub(crate) fn rejected_place(stderr: &str) -> (String, String) {
    let rejected: Vec<&str> = stderr
        .lines()
        .filter(|line| line.starts_with("rejected: "))
        .collect();
    let [line] = rejected.as_slice() else {
        panic!("one rejection: {stderr}");
    };
    let named = line
        .strip_prefix("rejected: ")
        .and_then(|line| line.strip_suffix(
            ": invoice bad: field `customer_id`: customer `Z` does not exist; send the customer first",
        ))
        .unwrap_or_else(|| panic!("the bad invoice: {stderr}"));
    let (file, kind, number) = named
        .rsplit_once(' ')
        .and_then(|(rest, number)| {
            rest.rsplit_once(' ')
                .map(|(file, kind)| (file, kind, number))
        })
        .unwrap_or_else(|| panic!("a file and a place: {stderr}"));
    (file.to_string(), format!("{kind} {number}"))
}

/// The fixture's plans as records.
pub(crate) fn fixture_plans() -> Vec<Value> {
    let plans: Value =
        serde_json::from_str(&std::fs::read_to_string(fixture().join("plans.json")).unwrap())
            .unwrap();
    plans["plans"].as_array().unwrap().clone()
}

pub(crate) fn gzip(bytes: &[u8]) -> Vec<u8> {
    use std::io::Write;
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    encoder.write_all(bytes).unwrap();
    encoder.finish().unwrap()
}

pub(crate) fn zstd(bytes: &[u8]) -> Vec<u8> {
    zstd::encode_all(bytes, 0).unwrap()
}

/// A CSV file of `rows` one-time invoices of customer A, one of them (at
/// `short`) missing its last field.
pub(crate) fn many_invoices_csv(dir: &Path, rows: usize, short: Option<usize>) {
    let mut csv = String::from("id,customer_id,type,invoice_date,amount,currency\n");
    for i in 0..rows {
        if Some(i) == short {
            csv.push_str(&format!("one-{i},A,one-time,2024-01-01,100\n"));
        } else {
            csv.push_str(&format!("one-{i},A,one-time,2024-01-01,100,USD\n"));
        }
    }
    std::fs::write(dir.join("invoices.csv"), csv).unwrap();
    copy("customers.csv", dir);
    copy("plans.json", dir);
}
