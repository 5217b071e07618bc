//! Collections over several files: directories, globs, options that
//! replace the data directory's files, one part in two forms.

use crate::fixture::*;
use serde_json::Value;
use std::process::Output;

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
            "rejected: {bad} row 1: invoice bad: field `customer_id`: customer `Z` does not exist; send the customer first\n\
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
fn a_file_named_near_a_collection_is_an_error_and_other_files_are_noted() {
    let dir = scratch("unread");
    copy("customers.csv", &dir);
    copy("plans.json", &dir);
    copy("fx_rates.json", &dir);
    std::fs::copy(fixture().join("invoices.jsonl"), dir.join("invoice.jsonl")).unwrap();
    let refused = |what: &str| {
        let out = run(&dir, &["reports", "summary"]);
        assert!(!out.status.success());
        assert_eq!(
            String::from_utf8_lossy(&out.stderr),
            format!(
                "error: --data {}: {what}; --data reads fx_rates, data_sources, customers, \
                 plans, plan_groups, invoices, each from NAME.FORMAT, NAME-PART.FORMAT or a \
                 directory NAME/\n\
                 loaded 0 customers, 0 plans, 0 invoices; rejected 0\n",
                dir.display()
            )
        );
    };
    // Read as it was, the fixture's invoices went unread and every figure
    // was zero.
    refused("invoice.jsonl would go unread (did you mean invoices?)");
    std::fs::rename(dir.join("invoice.jsonl"), dir.join("invoices_2024.jsonl")).unwrap();
    refused("invoices_2024.jsonl would go unread (did you mean invoices?)");
    std::fs::rename(dir.join("invoices_2024.jsonl"), dir.join("invoices.jsonl")).unwrap();
    std::fs::write(dir.join("plan-groups.json"), "[]").unwrap();
    refused("plan-groups.json would go unread (did you mean plan_groups?)");
    std::fs::remove_file(dir.join("plan-groups.json")).unwrap();
    std::fs::create_dir(dir.join("customer")).unwrap();
    refused("customer/ would go unread (did you mean customers/?)");
    std::fs::remove_dir(dir.join("customer")).unwrap();

    // Read: a file a collection's option names. Noted: other files of
    // records, such as a report written beside the data. Passed over:
    // other files, names starting with `.` or `_`, and a directory of
    // another name (a data set of its own).
    let rows = fixture_invoices();
    write_parquet(&dir.join("march.parquet"), &batch(&rows[..1]));
    std::fs::write(dir.join("mrr.json"), "{}").unwrap();
    std::fs::write(dir.join("README.md"), "exports").unwrap();
    std::fs::write(dir.join("_SUCCESS"), "").unwrap();
    std::fs::write(dir.join(".invoices-old.jsonl"), "").unwrap();
    std::fs::create_dir(dir.join("archive")).unwrap();
    copy("invoices.jsonl", &dir.join("archive"));
    let march = dir.join("march.parquet");
    let out = run_from(
        &[
            "--data",
            dir.to_str().unwrap(),
            "--invoices",
            march.to_str().unwrap(),
        ],
        &["reports", "summary"],
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        format!(
            "note: --data {}: not read, as no collection's files: mrr.json\n\
             loaded 3 customers, 3 plans, 1 invoices; rejected 0\n",
            dir.display()
        )
    );
    std::fs::remove_file(march).unwrap();
    std::fs::remove_file(dir.join("mrr.json")).unwrap();
    assert_like_the_fixture(&dir);
}

#[test]
fn extensions_are_read_in_any_case_and_a_collections_file_of_another_is_an_error() {
    let dir = scratch("extension-case");
    std::fs::copy(fixture().join("customers.csv"), dir.join("customers.CSV")).unwrap();
    std::fs::copy(fixture().join("plans.json"), dir.join("plans.Json")).unwrap();
    copy("fx_rates.json", &dir);
    let invoices = std::fs::read(fixture().join("invoices.jsonl")).unwrap();
    std::fs::write(dir.join("invoices.JSONL.GZ"), gzip(&invoices)).unwrap();
    assert_like_the_fixture(&dir);
    // A collection option reads them alike.
    let parts = scratch("extension-case-parts");
    write_parquet(&parts.join("PART-0.PARQUET"), &batch(&fixture_invoices()));
    let customers = dir.join("customers.CSV");
    let plans = dir.join("plans.Json");
    let rates = dir.join("fx_rates.json");
    assert_read_like_the_fixture(&[
        "--invoices",
        parts.to_str().unwrap(),
        "--customers",
        customers.to_str().unwrap(),
        "--plans",
        plans.to_str().unwrap(),
        "--fx-rates",
        rates.to_str().unwrap(),
    ]);
    // A file named as a collection's part in no format would go unread.
    for name in [
        "invoices-2.txt",
        "invoices.jsonl.bak",
        "invoices.parquet.gz",
        "plans",
    ] {
        std::fs::write(dir.join(name), "").unwrap();
        let out = run(&dir, &["reports", "summary"]);
        assert_eq!(out.status.code(), Some(1), "{name}");
        let collection = name.split(['.', '-']).next().unwrap();
        assert_eq!(
            String::from_utf8_lossy(&out.stderr),
            format!(
                "error: --data {}: {name} is named as a file of {collection} but its extension \
                 is not one of .json, .jsonl, .ndjson, .csv, .parquet (the text formats also .gz \
                 or .zst); its records would go unread\n\
                 loaded 0 customers, 0 plans, 0 invoices; rejected 0\n",
                dir.display()
            )
        );
        std::fs::remove_file(dir.join(name)).unwrap();
    }
}

#[test]
fn a_file_named_two_ways_is_read_once() {
    let dir = scratch("named-two-ways");
    copy("customers.csv", &dir);
    copy("plans.json", &dir);
    copy("fx_rates.json", &dir);
    copy("invoices.jsonl", &dir);
    // A part of the collection that is a link to another part.
    std::os::unix::fs::symlink(dir.join("invoices.jsonl"), dir.join("invoices-2.jsonl")).unwrap();
    // A directory of the collection holding a link to a part beside it.
    std::fs::create_dir(dir.join("plans")).unwrap();
    std::fs::rename(dir.join("plans.json"), dir.join("plans").join("plans.json")).unwrap();
    std::os::unix::fs::symlink(
        dir.join("plans").join("plans.json"),
        dir.join("plans").join("again.json"),
    )
    .unwrap();
    assert_like_the_fixture(&dir);
    // Options that name one file through a link and through `..`.
    let at = |path: &str| dir.join(path).to_str().unwrap().to_string();
    let (customers, plans, rates) = (at("customers.csv"), at("plans"), at("fx_rates.json"));
    assert_read_like_the_fixture(&[
        "--invoices",
        &at("invoices.jsonl"),
        "--invoices",
        &at("invoices-2.jsonl"),
        "--invoices",
        &at("plans/../invoices.jsonl"),
        "--customers",
        &customers,
        "--plans",
        &plans,
        "--fx-rates",
        &rates,
    ]);
}
