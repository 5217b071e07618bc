//! Plain CSV and JSONL, compressed or not, read batch by batch.

use crate::fixture::*;
use serde_json::Value;

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

/// A date column mixing Unix seconds with ISO 8601 text cannot be typed as
/// one column: its rows are read record by record, with the same result.
#[test]
fn a_csv_date_column_mixing_unix_seconds_and_text() {
    let dir = scratch("csv-mixed-dates");
    let csv = invoices_csv(&fixture_invoices())
        .replacen(",2024-01-01,", ",1704067200,", 1)
        .replacen("\n", "\n\n\n", 1);
    assert!(
        csv.contains("a1,A,subscription,m,1704067200,3000,USD"),
        "{csv}"
    );
    std::fs::write(dir.join("invoices.csv"), csv).unwrap();
    copy("customers.csv", &dir);
    copy("plans.json", &dir);
    copy("fx_rates.json", &dir);
    assert_like_the_fixture(&dir);
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

/// A quote that never closes would make its cell run to the end of the
/// file, taking every row after it: it is an error at its row, whether
/// the file is read batch by batch (invoices of plain columns, here with
/// the quote in the last column, where the row keeps its width) or whole
/// (customers with custom variables, here a row left short).
#[test]
fn a_quote_that_never_closes_is_an_error_at_its_row() {
    let dir = scratch("csv-open-quote");
    let csv = invoices_csv(&fixture_invoices());
    let rows: Vec<&str> = csv.lines().collect();
    let row = rows[3].rsplit_once(',').unwrap().0.to_string() + ",\"USD";
    let mut opened = rows.clone();
    opened[3] = &row;
    std::fs::write(dir.join("invoices.csv"), opened.join("\n") + "\n").unwrap();
    copy("customers.csv", &dir);
    copy("plans.json", &dir);
    let reason = "a quoted field in this row never ends: it runs to the end of the file, taking every line after it";
    let out = run(&dir, &["reports", "summary"]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.starts_with(&format!(
            "error: {} line 4: {reason}\n",
            dir.join("invoices.csv").display()
        )),
        "{stderr}"
    );

    std::fs::write(dir.join("invoices.csv"), csv).unwrap();
    let customers = std::fs::read_to_string(fixture().join("customers.csv")).unwrap();
    assert!(customers.contains("\nB,Beta,US,SaaS\r\n"), "{customers}");
    std::fs::write(
        dir.join("customers.csv"),
        customers.replace("\nB,Beta,", "\nB,\"Beta,"),
    )
    .unwrap();
    let out = run(&dir, &["reports", "summary"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.starts_with(&format!(
            "error: {} line 3: {reason}\n",
            dir.join("customers.csv").display()
        )),
        "{stderr}"
    );
}

/// An error names the line its row starts on as an editor counts them,
/// with `\r\n` line ends and blank lines, in a compressed file read batch
/// by batch and in a file read whole.
#[test]
fn csv_errors_name_the_line_after_crlf_and_blank_lines() {
    let dir = scratch("csv-crlf-lines");
    copy("customers.csv", &dir);
    copy("plans.json", &dir);
    let csv = invoices_csv(&fixture_invoices()).replacen("\n", "\n\n\n", 1);
    let mut rows: Vec<String> = csv.lines().map(str::to_string).collect();
    // The header is line 1, two blank lines, then the rows from line 4.
    rows[5] = rows[5].rsplit_once(',').unwrap().0.to_string();
    let write = |rows: &[String]| {
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        std::io::Write::write_all(&mut gz, (rows.join("\r\n") + "\r\n").as_bytes()).unwrap();
        std::fs::write(dir.join("invoices.csv.gz"), gz.finish().unwrap()).unwrap();
    };
    write(&rows);
    let error = |out: std::process::Output| {
        let stderr = String::from_utf8_lossy(&out.stderr).to_string();
        stderr.lines().next().unwrap_or_default().to_string()
    };
    let invoices = dir.join("invoices.csv.gz");
    assert_eq!(
        error(run(&dir, &["reports", "summary"])),
        format!(
            "error: {} line 6: 6 fields where the header has 7",
            invoices.display()
        )
    );

    // Read whole (a custom variable column): the fixture's lines end in
    // `\r\n`; a blank line after the header puts Beta's row on line 4.
    write(&csv.lines().map(str::to_string).collect::<Vec<_>>());
    let customers = std::fs::read_to_string(fixture().join("customers.csv")).unwrap();
    let customers = customers
        .replacen("\r\n", "\r\n\r\n", 1)
        .replace("B,Beta,US,SaaS", "B,Beta,US");
    std::fs::write(dir.join("customers.csv"), customers).unwrap();
    assert_eq!(
        error(run(&dir, &["reports", "summary"])),
        format!(
            "error: {} line 4: 3 fields where the header has 4",
            dir.join("customers.csv").display()
        )
    );
}
