//! Parquet files: in parts, of every compression, with decimal amounts,
//! and broken ones.

use crate::fixture::*;
use arrow_array::{ArrayRef, RecordBatch, StringArray};
use parquet::basic::{BrotliLevel, Compression, GzipLevel, ZstdLevel};
use serde_json::Value;
use std::path::Path;
use std::sync::Arc;

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
