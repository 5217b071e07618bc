//! `local` on Parquet, plain CSV and JSONL files (and collections split
//! over several files): the fixture in testdata/local rewritten in each
//! format gives the same reports, to the cent, and the same rejections.

use arrow_array::{ArrayRef, Date32Array, RecordBatch, StringArray};
use parquet::arrow::ArrowWriter;
use parquet::basic::{BrotliLevel, Compression, GzipLevel, ZstdLevel};
use parquet::file::properties::WriterProperties;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::Arc;

fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/local")
}

/// A fresh directory for one test.
fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("columnar-{name}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn run(dir: &Path, args: &[&str]) -> Output {
    run_from(&["--data", dir.to_str().unwrap()], args)
}

/// `local` reading what the options in `sources` name.
fn run_from(sources: &[&str], args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_submetrics"))
        .arg("local")
        .args(sources)
        .args(["--as-of", "2024-03-15T00:00:00Z"])
        .args(args)
        .output()
        .expect("run the client")
}

fn json(output: &Output) -> Value {
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).expect("JSON on stdout")
}

fn fixture_invoices() -> Vec<Value> {
    std::fs::read_to_string(fixture().join("invoices.jsonl"))
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}

/// Records as a record batch, `invoice_date` as an Arrow date column.
fn batch(records: &[Value]) -> RecordBatch {
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
fn invoices_csv(invoices: &[Value]) -> String {
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

fn write_parquet(path: &Path, batch: &RecordBatch) {
    write_parquet_compressed(path, batch, Compression::SNAPPY);
}

fn write_parquet_compressed(path: &Path, batch: &RecordBatch, compression: Compression) {
    let file = std::fs::File::create(path).unwrap();
    let properties = WriterProperties::builder()
        .set_compression(compression)
        .build();
    let mut writer = ArrowWriter::try_new(file, batch.schema(), Some(properties)).unwrap();
    writer.write(batch).unwrap();
    writer.close().unwrap();
}

fn copy(from: &str, to: &Path) {
    std::fs::copy(fixture().join(from), to.join(from)).unwrap();
}

/// The mrr report and the summary as the fixture itself gives them, and
/// the closing line of stderr.
fn expected() -> (Value, Value) {
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
fn assert_like_the_fixture(dir: &Path) {
    assert_read_like_the_fixture(&["--data", dir.to_str().unwrap()]);
}

/// The same reports and rejections as the fixture, read from `sources`.
fn assert_read_like_the_fixture(sources: &[&str]) {
    let (mrr, summary) = expected();
    let out = run_from(sources, &["reports", "mrr", "--date", "20240101-20240331"]);
    assert_eq!(json(&out), mrr);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(
            "rejected: invoice bad: field `customer_id`: customer `Z` does not exist; send the customer first"
        ),
        "{stderr}"
    );
    assert!(
        stderr.ends_with("loaded 3 customers, 3 plans, 6 invoices; rejected 1\n"),
        "{stderr}"
    );
    assert_eq!(json(&run_from(sources, &["reports", "summary"])), summary);
}

#[test]
fn parquet_files_split_in_parts() {
    let dir = scratch("parquet");
    let invoices = fixture_invoices();
    write_parquet(&dir.join("invoices-1.parquet"), &batch(&invoices[..4]));
    write_parquet(&dir.join("invoices-2.parquet"), &batch(&invoices[4..]));
    let plans: Value =
        serde_json::from_str(&std::fs::read_to_string(fixture().join("plans.json")).unwrap())
            .unwrap();
    write_parquet(
        &dir.join("plans.parquet"),
        &batch(plans["plans"].as_array().unwrap()),
    );
    copy("customers.csv", &dir);
    copy("fx_rates.json", &dir);
    assert_like_the_fixture(&dir);
}

/// Amounts as SQL engines write them: `DECIMAL(38, 0)` (DuckDB's sum of
/// integers) read as the integers they hold.
#[test]
fn decimal_amounts_in_parquet() {
    let dir = scratch("parquet-decimal");
    let invoices = batch(&fixture_invoices());
    let index = invoices.schema().index_of("amount").unwrap();
    let amounts: arrow_array::Decimal128Array = invoices
        .column(index)
        .as_any()
        .downcast_ref::<arrow_array::Int64Array>()
        .unwrap()
        .iter()
        .map(|amount| amount.map(i128::from))
        .collect();
    let amounts = amounts.with_precision_and_scale(38, 0).unwrap();
    let mut fields: Vec<_> = invoices.schema().fields().iter().cloned().collect();
    fields[index] = Arc::new(arrow_schema::Field::new(
        "amount",
        arrow_schema::DataType::Decimal128(38, 0),
        true,
    ));
    let mut columns = invoices.columns().to_vec();
    columns[index] = Arc::new(amounts) as ArrayRef;
    let decimal =
        RecordBatch::try_new(Arc::new(arrow_schema::Schema::new(fields)), columns).unwrap();
    write_parquet(&dir.join("invoices.parquet"), &decimal);
    for name in ["plans.json", "customers.csv", "fx_rates.json"] {
        copy(name, &dir);
    }
    assert_like_the_fixture(&dir);
}

#[test]
fn parquet_files_of_every_compression() {
    // What writers choose: Spark, DuckDB, pandas and pyarrow snappy,
    // Polars zstd; gzip, brotli, LZ4 and none on request.
    let codecs = [
        ("none", Compression::UNCOMPRESSED),
        ("snappy", Compression::SNAPPY),
        ("zstd", Compression::ZSTD(ZstdLevel::default())),
        ("gzip", Compression::GZIP(GzipLevel::default())),
        ("brotli", Compression::BROTLI(BrotliLevel::default())),
        ("lz4", Compression::LZ4_RAW),
        ("lz4-hadoop", Compression::LZ4),
    ];
    let dir = scratch("compression");
    let invoices = fixture_invoices();
    for (part, (name, codec)) in invoices.chunks(1).zip(codecs) {
        write_parquet_compressed(
            &dir.join(format!("invoices-{name}.parquet")),
            &batch(part),
            codec,
        );
    }
    assert_eq!(invoices.len(), codecs.len());
    write_parquet_compressed(
        &dir.join("plans.parquet"),
        &batch(&fixture_plans()),
        Compression::ZSTD(ZstdLevel::default()),
    );
    copy("customers.csv", &dir);
    copy("fx_rates.json", &dir);
    assert_like_the_fixture(&dir);
}

/// The fixture's plans as records.
fn fixture_plans() -> Vec<Value> {
    let plans: Value =
        serde_json::from_str(&std::fs::read_to_string(fixture().join("plans.json")).unwrap())
            .unwrap();
    plans["plans"].as_array().unwrap().clone()
}

#[test]
fn collections_from_files_directories_and_globs() {
    let dir = scratch("lake");
    // Invoices as a Spark job writes a dataset: part files, a success
    // marker and checksum files beside them.
    let invoices = dir.join("invoices");
    std::fs::create_dir(&invoices).unwrap();
    let rows = fixture_invoices();
    write_parquet(
        &invoices.join("part-00000-c000.snappy.parquet"),
        &batch(&rows[..3]),
    );
    // A partition of the dataset in a directory of its own.
    let partition = invoices.join("year=2024");
    std::fs::create_dir(&partition).unwrap();
    write_parquet(
        &partition.join("part-00001-c000.snappy.parquet"),
        &batch(&rows[3..]),
    );
    std::fs::write(invoices.join("_SUCCESS"), b"").unwrap();
    // What a job still running leaves: passed over too.
    let unfinished = invoices.join("_temporary").join("0");
    std::fs::create_dir_all(&unfinished).unwrap();
    write_parquet(&unfinished.join("part-00000.parquet"), &batch(&rows[..1]));
    std::fs::write(invoices.join(".part-00000-c000.snappy.parquet.crc"), b"crc").unwrap();
    // Plans in two files of a month each, found by a pattern at any depth.
    let plans = fixture_plans();
    for (month, part) in [("2024-01", &plans[..1]), ("2024-02", &plans[1..])] {
        let month = dir.join("plans").join(month);
        std::fs::create_dir_all(&month).unwrap();
        write_parquet(&month.join("plans.parquet"), &batch(part));
    }
    // FX rates in two Parquet files: both load (the EUR rate is the second's).
    let rates: Value =
        serde_json::from_str(&std::fs::read_to_string(fixture().join("fx_rates.json")).unwrap())
            .unwrap();
    let rates = rates.as_array().unwrap();
    assert_eq!(rates[0]["currency"], "EUR");
    write_parquet(&dir.join("rates-usd.parquet"), &batch(&rates[1..]));
    write_parquet(&dir.join("rates-eur.parquet"), &batch(&rates[..1]));
    let at = |path: &str| dir.join(path).to_str().unwrap().to_string();
    let (invoices, customers) = (at("invoices"), fixture().join("customers.csv"));
    let (plans, rates) = (at("plans/**/*.parquet"), at("rates-*.parquet"));
    assert_read_like_the_fixture(&[
        "--invoices",
        &invoices,
        "--customers",
        customers.to_str().unwrap(),
        "--plans",
        &plans,
        "--fx-rates",
        &rates,
    ]);
}

#[test]
fn a_collection_directory_in_the_data_directory() {
    let dir = scratch("dataset");
    let rows = fixture_invoices();
    write_parquet(&dir.join("invoices-1.parquet"), &batch(&rows[..2]));
    let partition = dir.join("invoices").join("year=2024");
    std::fs::create_dir_all(&partition).unwrap();
    write_parquet(&partition.join("part-0.parquet"), &batch(&rows[2..]));
    std::fs::write(dir.join("invoices").join("_SUCCESS"), b"").unwrap();
    // A link back up the tree is walked once.
    std::os::unix::fs::symlink(dir.join("invoices"), partition.join("again")).unwrap();
    copy("customers.csv", &dir);
    copy("plans.json", &dir);
    copy("fx_rates.json", &dir);
    assert_like_the_fixture(&dir);

    std::fs::write(dir.join("invoices").join("notes.txt"), b"").unwrap();
    let out = run(&dir, &["reports", "summary"]);
    let notes = dir.join("invoices").join("notes.txt");
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        format!(
            "error: --data {}: {} is not a file of records \
             (.json, .jsonl, .ndjson, .csv, .parquet; the text formats also .gz or .zst)\n\
             loaded 0 customers, 0 plans, 0 invoices; rejected 0\n",
            dir.join("invoices").display(),
            notes.display()
        )
    );
}

#[test]
fn a_collection_option_replaces_the_data_directorys_files() {
    let dir = scratch("override");
    let rows = fixture_invoices();
    write_parquet(&dir.join("january.parquet"), &batch(&rows[..1]));
    let january = dir.join("january.parquet");
    // The same file named twice is read once.
    let out = run_from(
        &[
            "--data",
            fixture().to_str().unwrap(),
            "--invoices",
            january.to_str().unwrap(),
            "--invoices",
            dir.join("jan*.parquet").to_str().unwrap(),
        ],
        &["reports", "summary"],
    );
    assert_eq!(json(&out)["summary"]["mrr_current"], 0);
    assert!(
        String::from_utf8_lossy(&out.stderr)
            .ends_with("loaded 3 customers, 3 plans, 1 invoices; rejected 0\n"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    let bad: Vec<Value> = rows.into_iter().filter(|r| r["id"] == "bad").collect();
    write_parquet(&dir.join("bad.parquet"), &batch(&bad));
    let bad = dir.join("bad.parquet");
    let bad = bad.to_str().unwrap();
    let out = run_from(
        &["--data", fixture().to_str().unwrap(), "--invoices", bad],
        &["reports", "summary"],
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        format!(
            "rejected: invoice bad: field `customer_id`: customer `Z` does not exist; send the customer first\n\
             error: --invoices {bad}: every record of invoices was rejected\n\
             loaded 3 customers, 3 plans, 0 invoices; rejected 1\n"
        )
    );
}

#[test]
fn a_collection_option_that_names_no_file_of_records_is_an_error() {
    let dir = scratch("unmatched");
    std::fs::create_dir(dir.join("nested")).unwrap();
    std::fs::write(dir.join("notes.txt"), b"").unwrap();
    let at = |path: &str| dir.join(path).to_str().unwrap().to_string();
    let customers = fixture().join("customers.csv");
    let not_records = |pattern: &str, file: &str| {
        format!(
            "--invoices {pattern}: {file} is not a file of records \
             (.json, .jsonl, .ndjson, .csv, .parquet; the text formats also .gz or .zst)"
        )
    };
    let cases = [
        (
            at("invoices-*.parquet"),
            format!(
                "--invoices {}: matches no file of records",
                at("invoices-*.parquet")
            ),
        ),
        (
            at("missing.parquet"),
            format!(
                "--invoices {}: no such file or directory",
                at("missing.parquet")
            ),
        ),
        (
            at("notes.txt"),
            not_records(&at("notes.txt"), &at("notes.txt")),
        ),
        (at("*.*"), not_records(&at("*.*"), &at("notes.txt"))),
        // Given whole, a directory stands for every file under it.
        (at(""), not_records(&at(""), &at("notes.txt"))),
        (
            at("nested"),
            format!("--invoices {}: matches no file of records", at("nested")),
        ),
    ];
    for (pattern, error) in cases {
        let out = run_from(
            &[
                "--customers",
                customers.to_str().unwrap(),
                "--invoices",
                &pattern,
            ],
            &["reports", "summary"],
        );
        assert!(!out.status.success());
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(
            stderr,
            format!("error: {error}\nloaded 0 customers, 0 plans, 0 invoices; rejected 0\n")
        );
    }
}

#[test]
fn a_collection_in_files_of_every_format_loads_as_one_stream() {
    let dir = scratch("mixed");
    let rows = fixture_invoices();
    let json: Vec<Value> = rows[..2].to_vec();
    std::fs::write(dir.join("invoices-1.json"), Value::from(json).to_string()).unwrap();
    let lines: Vec<String> = rows[2..4].iter().map(Value::to_string).collect();
    std::fs::write(dir.join("invoices-2.jsonl"), lines.join("\n")).unwrap();
    write_parquet(&dir.join("invoices-3.parquet"), &batch(&rows[4..5]));
    std::fs::write(dir.join("invoices-4.csv"), invoices_csv(&rows[5..])).unwrap();
    copy("customers.csv", &dir);
    copy("plans.json", &dir);
    copy("fx_rates.json", &dir);
    assert_like_the_fixture(&dir);
}

#[test]
fn plain_csv_and_jsonl_files() {
    let dir = scratch("csv");
    std::fs::write(dir.join("invoices.csv"), invoices_csv(&fixture_invoices())).unwrap();
    std::fs::write(
        dir.join("plans.csv"),
        "id,name,interval,interval_count,currency\nm,Monthly,month,1,USD\n\
         y,Annual,year,1,USD\ne,Monthly EUR,month,1,EUR\n",
    )
    .unwrap();
    copy("customers.csv", &dir);
    copy("fx_rates.json", &dir);
    assert_like_the_fixture(&dir);

    let dir = scratch("jsonl");
    copy("invoices.jsonl", &dir);
    copy("customers.csv", &dir);
    copy("fx_rates.json", &dir);
    let plans: Value =
        serde_json::from_str(&std::fs::read_to_string(fixture().join("plans.json")).unwrap())
            .unwrap();
    let lines: Vec<String> = plans["plans"]
        .as_array()
        .unwrap()
        .iter()
        .map(Value::to_string)
        .collect();
    std::fs::write(dir.join("plans.ndjson"), lines.join("\n")).unwrap();
    assert_like_the_fixture(&dir);
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    use std::io::Write;
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    encoder.write_all(bytes).unwrap();
    encoder.finish().unwrap()
}

fn zstd(bytes: &[u8]) -> Vec<u8> {
    zstd::encode_all(bytes, 0).unwrap()
}

#[test]
fn compressed_text_files() {
    let dir = scratch("compressed");
    let read = |name: &str| std::fs::read(fixture().join(name)).unwrap();
    // Two gzip members, as `cat a.gz b.gz` writes them.
    let lines: Vec<String> = fixture_invoices().iter().map(Value::to_string).collect();
    let (first, rest) = lines.split_at(3);
    let members = [
        gzip(format!("{}\n", first.join("\n")).as_bytes()),
        gzip(rest.join("\n").as_bytes()),
    ];
    std::fs::write(dir.join("invoices.jsonl.gz"), members.concat()).unwrap();
    std::fs::write(dir.join("customers.csv.zst"), zstd(&read("customers.csv"))).unwrap();
    std::fs::write(dir.join("plans.json.gz"), gzip(&read("plans.json"))).unwrap();
    copy("fx_rates.json", &dir);
    assert_like_the_fixture(&dir);

    // Plain-column CSV, streamed batch by batch, from a pattern.
    let csv = dir.join("csv");
    std::fs::create_dir(&csv).unwrap();
    let invoices_csv = invoices_csv(&fixture_invoices());
    std::fs::write(csv.join("invoices.csv.zst"), zstd(invoices_csv.as_bytes())).unwrap();
    let pattern = format!("{}/*.csv.*", csv.display());
    assert_read_like_the_fixture(&["--data", dir.to_str().unwrap(), "--invoices", &pattern]);
}

#[test]
fn one_part_in_two_forms_is_an_error_naming_both() {
    let dir = scratch("two-forms");
    copy("customers.csv", &dir);
    copy("plans.json", &dir);
    copy("invoices.jsonl", &dir);
    let error = |first: &str, second: &str| {
        format!(
            "error: --data {}: {first} and {second} are the same part of invoices \
             in two forms; keep one\n\
             loaded 0 customers, 0 plans, 0 invoices; rejected 0\n",
            dir.display()
        )
    };
    let stderr = |out: Output| {
        assert!(!out.status.success());
        String::from_utf8_lossy(&out.stderr).into_owned()
    };

    let gzipped = gzip(&std::fs::read(dir.join("invoices.jsonl")).unwrap());
    std::fs::write(dir.join("invoices.jsonl.gz"), gzipped).unwrap();
    let out = run(&dir, &["reports", "summary"]);
    assert_eq!(stderr(out), error("invoices.jsonl", "invoices.jsonl.gz"));

    std::fs::remove_file(dir.join("invoices.jsonl.gz")).unwrap();
    std::fs::create_dir(dir.join("invoices")).unwrap();
    let out = run(&dir, &["reports", "summary"]);
    assert_eq!(stderr(out), error("invoices.jsonl", "invoices"));

    // Distinct parts beside a directory of parts all load.
    std::fs::rename(dir.join("invoices.jsonl"), dir.join("invoices-1.jsonl")).unwrap();
    write_parquet(&dir.join("invoices").join("part-0.parquet"), &batch(&[]));
    copy("fx_rates.json", &dir);
    assert_like_the_fixture(&dir);
}

#[test]
fn a_compressed_file_that_is_not_what_its_name_says_names_itself() {
    let dir = scratch("not-compressed");
    copy("customers.csv", &dir);
    copy("plans.json", &dir);
    copy("fx_rates.json", &dir);
    std::fs::copy(
        fixture().join("invoices.jsonl"),
        dir.join("invoices.jsonl.gz"),
    )
    .unwrap();
    let out = run(&dir, &["reports", "summary"]);
    assert_eq!(out.status.code(), Some(1));
    let invoices = dir.join("invoices.jsonl.gz");
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        format!(
            "error: {}: invalid gzip header\n\
             loaded 3 customers, 3 plans, 0 invoices; rejected 0\n",
            invoices.display()
        )
    );

    // Parquet compresses inside the file: a compressed Parquet file is none.
    std::fs::remove_file(&invoices).unwrap();
    let parquet = dir.join("invoices.parquet.gz");
    write_parquet(&dir.join("invoices.parquet"), &batch(&fixture_invoices()));
    std::fs::rename(dir.join("invoices.parquet"), &parquet).unwrap();
    let out = run_from(
        &["--invoices", parquet.to_str().unwrap()],
        &["reports", "summary"],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.starts_with(&format!(
            "error: --invoices {0}: {0} is not a file of records",
            parquet.display()
        )),
        "{stderr}"
    );
}

#[test]
fn timing_prints_load_and_compute_times() {
    let out = run(&fixture(), &["--timing", "reports", "summary"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let line = stderr
        .lines()
        .find(|line| line.starts_with("timing: load "))
        .unwrap_or_else(|| panic!("{stderr}"));
    let parts: Vec<&str> = line.split(' ').collect();
    assert_eq!(
        (parts[1], parts[3], parts[4], parts[6]),
        ("load", "s,", "compute", "s")
    );
    assert!(parts[2].parse::<f64>().unwrap() >= 0.0);
    assert!(parts[5].parse::<f64>().unwrap() >= 0.0);
}

#[test]
fn a_broken_parquet_file_names_itself() {
    let dir = scratch("broken");
    std::fs::write(dir.join("invoices.parquet"), b"not parquet").unwrap();
    let out = run(&dir, &["reports", "summary"]);
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.starts_with(&format!(
            "error: {}: Parquet error:",
            dir.join("invoices.parquet").display()
        )),
        "{stderr}"
    );
    let unreadable = {
        let ids: ArrayRef = Arc::new(StringArray::from(vec!["x"]));
        let blob: ArrayRef = Arc::new(arrow_array::BinaryArray::from(vec![&b"1"[..]]));
        RecordBatch::try_from_iter([("id", ids), ("amount", blob)]).unwrap()
    };
    write_parquet(&dir.join("invoices.parquet"), &unreadable);
    let out = run(&dir, &["reports", "summary"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.starts_with("error: invoice ?: field `amount`: column type Binary cannot be read"),
        "{stderr}"
    );
}

/// Files the parquet reader panics on instead of answering an error (see
/// testdata/broken-parquet): each is an unreadable file, named, with the
/// reader's message and no panic report; `local` used to crash.
#[test]
fn a_parquet_file_the_reader_panics_on_is_unreadable() {
    let broken = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/broken-parquet");
    for (file, reason) in [
        // Its footer's Arrow schema has a field of type NONE: opening fails.
        (
            "unknown-arrow-type",
            "not implemented: Type NONE not supported",
        ),
        // A column chunk at a negative offset: reading the first batch fails.
        (
            "negative-column-start",
            "column start and length should not be negative",
        ),
    ] {
        let path = broken.join(format!("{file}.parquet"));
        let out = run_from(
            &["--customers", path.to_str().unwrap()],
            &["reports", "summary"],
        );
        assert_eq!(out.status.code(), Some(1));
        assert_eq!(
            String::from_utf8_lossy(&out.stderr),
            format!(
                "error: {}: is not a readable Parquet file ({reason})\n\
                 loaded 0 customers, 0 plans, 0 invoices; rejected 0\n",
                path.display()
            )
        );
        assert!(out.stdout.is_empty());
    }
}

/// A CSV file of `rows` one-time invoices of customer A, one of them (at
/// `short`) missing its last field.
fn many_invoices_csv(dir: &Path, rows: usize, short: Option<usize>) {
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

#[test]
fn a_csv_file_is_read_batch_by_batch() {
    // More rows than one batch holds (65,536).
    let dir = scratch("csv-batches");
    many_invoices_csv(&dir, 70_000, None);
    let out = run(&dir, &["reports", "summary"]);
    assert_eq!(json(&out)["summary"]["mrr_current"], 0);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.ends_with("loaded 3 customers, 3 plans, 70000 invoices; rejected 0\n"),
        "{stderr}"
    );

    // A malformed row in the second batch names its line (the header is
    // line 1).
    many_invoices_csv(&dir, 70_000, Some(69_000));
    let out = run(&dir, &["reports", "summary"]);
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.starts_with(&format!(
            "error: {} line 69002: 5 fields where the header has 6",
            dir.join("invoices.csv").display()
        )),
        "{stderr}"
    );
}
