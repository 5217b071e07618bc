//! `import`: files of records sent to a data source in batches, stored as
//! `local` loads the same files; rejected records on stderr; errors that
//! name the file, the line or the data source.

use crate::server::{Server, start};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};

fn fixture(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../testdata/local")
        .join(name)
        .display()
        .to_string()
}

/// A server with the data sources `files` and `lake`, and the fixture's FX rates.
fn server_with_sources() -> Server {
    let server = start();
    for source in ["files", "lake"] {
        server.json(&[
            "data",
            "data-sources",
            "create",
            "--body",
            &json!({"id": source, "name": source, "type": "stripe"}).to_string(),
        ]);
    }
    let fx = format!("@{}", fixture("fx_rates.json"));
    server.json(&["api", "POST", "/data/fx-rates", "--body", &fx]);
    server
}

fn counts(source: &str, collection: &str, files: usize, records: usize, rejected: usize) -> Value {
    json!({
        "source": source, "collection": collection, "files": files,
        "records": records, "inserted": records - rejected, "rejected": rejected,
    })
}

fn failure(server: &Server, args: &[&str]) -> String {
    let out = server.run(args);
    assert!(!out.status.success(), "{args:?} succeeded");
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn every_format_goes_in_by_batches_and_reports_as_local_does() {
    let server = server_with_sources();
    let plans = fixture("plans.json");
    let customers = fixture("customers.csv");
    let invoices = fixture("invoices.jsonl");
    assert_eq!(
        server.json(&["import", "plans", "--source", "files", &plans]),
        counts("files", "plans", 1, 3, 0)
    );
    // A file named twice (here also by a pattern, and by a path through
    // `..`) is sent once.
    let pattern = customers.replace("customers.csv", "custom*.csv");
    let two_ways = customers.replace("/local/customers.csv", "/local/../local/customers.csv");
    assert_eq!(
        server.json(&[
            "import",
            "customers",
            "--source",
            "files",
            &customers,
            &pattern,
            &two_ways
        ]),
        counts("files", "customers", 1, 3, 0)
    );
    let out = server.run(&[
        "import", "invoices", "--source", "files", "--batch", "2", &invoices,
    ]);
    assert!(out.status.success(), "{out:?}");
    let answer: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(answer, counts("files", "invoices", 1, 7, 1));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        format!(
            "rejected: {invoices} line 7: invoice bad: field `customer_id`: customer `Z` does not exist; send the customer first\n"
        )
    );
    assert_eq!(
        server.json(&["data", "invoices", "get", "c1"])["data_source"],
        "files"
    );

    let report = ["reports", "mrr", "--date", "20240101-20240331"];
    let at = ["--as-of", "2024-03-15T00:00:00Z"];
    let online = server.json(&[&report[..], &at[..]].concat());
    let local =
        server.json(&[&["local", "--data", &fixture("")][..], &at[..], &report[..]].concat());
    assert_eq!(online["result"], local["result"]);
    assert_eq!(online["result"][2]["total_mrr"], json!(13000));

    // The same invoices as Parquet (read into Arrow columns, sent as Arrow
    // streams) move every invoice to the other data source.
    let parquet = parquet_of_invoices(&server.home, &invoices);
    let out = server.run(&[
        "import",
        "invoices",
        "--source",
        "lake",
        "--batch",
        "4",
        "--verbose",
        &parquet,
    ]);
    let answer: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(answer, counts("lake", "invoices", 1, 7, 1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        stderr
            .matches(" bytes of application/vnd.apache.arrow.stream)")
            .count(),
        2,
        "{stderr}"
    );
    assert!(
        stderr.contains(&format!(
            "\nrejected: {parquet} row 7: invoice bad: field `customer_id`: customer `Z` does not exist; send the customer first\n"
        )),
        "{stderr}"
    );

    assert_eq!(
        server.json(&["data", "invoices", "get", "c1"])["data_source"],
        "lake"
    );
    assert_eq!(
        server.json(&[&report[..], &at[..]].concat())["result"],
        local["result"]
    );

    // As CSV of plain columns, after a quoted line break and a blank line.
    let csv = server.home.join("invoices.csv");
    let mut text =
        String::from("id,customer_id,type,plan_id,invoice_date,amount,currency,description\n");
    for (i, line) in std::fs::read_to_string(&invoices)
        .unwrap()
        .lines()
        .enumerate()
    {
        let row: Value = serde_json::from_str(line).unwrap();
        let cell = |name: &str| row[name].as_str().unwrap_or_default().to_string();
        let description = if i == 0 { "\"two\nlines\"\n" } else { "" };
        text.push_str(&format!(
            "{},{},{},{},{},{},{},{description}\n",
            cell("id"),
            cell("customer_id"),
            cell("type"),
            cell("plan_id"),
            cell("invoice_date"),
            row["amount"],
            cell("currency"),
        ));
    }
    std::fs::write(&csv, text).unwrap();
    let csv = csv.display().to_string();
    let out = server.run(&[
        "import", "invoices", "--source", "lake", "--batch", "3", &csv,
    ]);
    assert_eq!(
        serde_json::from_slice::<Value>(&out.stdout).unwrap(),
        counts("lake", "invoices", 1, 7, 1)
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        format!(
            "rejected: {csv} line 10: invoice bad: field `customer_id`: customer `Z` does not exist; send the customer first\n"
        )
    );
}

/// The fixture's invoices written as a Parquet file beside the client's home.
fn parquet_of_invoices(dir: &Path, jsonl: &str) -> String {
    let rows: Vec<Value> = std::fs::read_to_string(jsonl)
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    let batch = submetrics::columnar::batch_of_rows(&rows).unwrap();
    let path: PathBuf = dir.join("invoices.parquet");
    let file = std::fs::File::create(&path).unwrap();
    let mut writer = parquet::arrow::ArrowWriter::try_new(file, batch.schema(), None).unwrap();
    writer.write(&batch).unwrap();
    writer.close().unwrap();
    path.display().to_string()
}

#[test]
fn what_cannot_be_imported_is_an_error_naming_it() {
    let server = server_with_sources();
    let customers = fixture("customers.csv");
    let stderr = failure(
        &server,
        &["import", "customers", "--source", "nowhere", &customers],
    );
    assert!(
        stderr.contains(&format!(
            "server answered 404: {customers}: data source `nowhere` does not exist"
        )) && stderr.contains("(0 record(s) sent before)"),
        "{stderr}"
    );
    // A line that is not JSON stops the import before its batch is sent;
    // the batches before it are stored.
    let broken = server.home.join("broken.jsonl");
    std::fs::write(
        &broken,
        "{\"id\": \"D\", \"name\": \"Dee\"}\n{\"id\": \"E\",\n",
    )
    .unwrap();
    let broken = broken.display().to_string();
    let args = [
        "import",
        "customers",
        "--source",
        "files",
        "--batch",
        "1",
        &broken,
    ];
    let stderr = failure(&server, &args);
    assert!(
        stderr.contains(&format!("{broken} line 2: EOF while parsing"))
            && stderr.ends_with(" (1 record(s) sent before)\n"),
        "{stderr}"
    );
    let listed = server.json(&["data", "customers", "list"]);
    assert_eq!(listed["result"]["list"][0]["id"], "D");
    assert_eq!(listed["result"]["count"], 1);

    let empty = server.home.join("empty.jsonl");
    std::fs::write(&empty, "\n").unwrap();
    let empty = empty.display().to_string();
    let invoices = fixture("invoices.jsonl");
    // Each after `import <collection> --source files`.
    let cases: [(&[&str], &str); 4] = [
        (
            &["invoices", "--strict", &invoices],
            "error: 7 record(s) rejected (--strict)\n",
        ),
        (
            &["customers", "--batch", "0", &customers],
            "invalid value '0' for '--batch <BATCH>'",
        ),
        (
            &["customers", "--as-of", "2024-01-01", &customers],
            "--as-of applies to reports",
        ),
        (
            &["customers", &empty],
            &format!("error: {empty}: no records\n"),
        ),
    ];
    for (args, error) in cases {
        let args = [&["import", "--source", "files"][..], args].concat();
        let stderr = failure(&server, &args);
        assert!(stderr.contains(error), "{args:?}: {stderr}");
    }
}

#[test]
fn without_a_source_records_go_to_the_data_api() {
    let server = start();
    let at = ["--as-of", "2024-03-15T00:00:00Z"];
    for (collection, file) in [("plans", "plans.json"), ("customers", "customers.csv")] {
        server.json(&["import", collection, &fixture(file)]);
    }
    let invoices = fixture("invoices.jsonl");
    let parquet = parquet_of_invoices(&server.home, &invoices);
    let answer = server.json(&["import", "invoices", "--batch", "3", &parquet]);
    assert_eq!(
        answer,
        json!({"source": null, "collection": "invoices", "files": 1,
               "records": 7, "inserted": 6, "rejected": 1})
    );
    let customer = server.json(&["data", "customers", "get", "A"]);
    assert_eq!(
        (&customer["name"], &customer["data_source"]),
        (&json!("Acme, Inc."), &Value::Null)
    );
    server.json(&[
        "api",
        "POST",
        "/data/fx-rates",
        "--body",
        &format!("@{}", fixture("fx_rates.json")),
    ]);
    let report = ["reports", "mrr", "--date", "20240101-20240331"];
    let local =
        server.json(&[&["local", "--data", &fixture("")][..], &at[..], &report[..]].concat());
    assert_eq!(
        server.json(&[&report[..], &at[..]].concat())["result"],
        local["result"]
    );
    let stderr = failure(&server, &["import", "plan-groups", &fixture("plans.json")]);
    assert!(
        stderr.contains("plan groups are imported into a data source: give --source"),
        "{stderr}"
    );
}
