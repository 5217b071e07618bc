//! A rejected record is named by its file and its place there: the line
//! it starts on in JSONL and CSV (whatever the line endings, blank lines and
//! quoted line breaks before it), its row in a Parquet file (counted per
//! file), its place among a JSON file's records.

use crate::fixture::*;
use serde_json::json;

fn stderr(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Asserts that `out`'s stderr ends with `end`.
fn assert_stderr_ends_with(out: &std::process::Output, end: &str) {
    let stderr = stderr(out);
    assert!(stderr.ends_with(end), "{stderr}");
}

#[test]
fn a_rejected_record_is_named_by_its_file_and_its_line_row_or_place() {
    let dir = scratch("places");
    std::fs::write(
        dir.join("plans.json"),
        r#"[{"id": "m", "name": "M", "interval": "month", "currency": "USD"},
            {"id": "x", "interval": "month", "currency": "USD"}]"#,
    )
    .unwrap();
    // A `custom_variables.` column: read whole, record by record.
    std::fs::write(
        dir.join("customers.csv"),
        "id,name,custom_variables.tier\r\nA,Acme,gold\r\n\r\nB,,silver\r\n",
    )
    .unwrap();
    // Plain columns: streamed into columns.
    std::fs::write(
        dir.join("invoices.csv"),
        "id,customer_id,type,plan_id,invoice_date,amount,currency,description\r\n\
         i1,A,subscription,m,2024-01-01,3000,USD,\"two\r\nlines\"\r\n\
         \r\n\
         ,A,subscription,m,2024-02-01,3000,USD,x\r\n\
         i3,A,subscription,m,2024-03-01,abc,USD,y\r\n",
    )
    .unwrap();
    let at = |name: &str| dir.join(name).display().to_string();
    let expected = format!(
        "rejected: {} line 4: customer B: field `name`: is required\n\
         rejected: {} record 2: plan x: field `name`: is required\n\
         rejected: {} line 5: invoice ?: field `id`: is required\n\
         rejected: {} line 6: invoice i3: field `amount`: must be an integer, got \"abc\"\n\
         loaded 1 customers, 1 plans, 1 invoices; rejected 4\n",
        at("customers.csv"),
        at("plans.json"),
        at("invoices.csv"),
        at("invoices.csv"),
    );
    assert_eq!(stderr(&run(&dir, &["reports", "summary"])), expected);
    // The same lines when they end in a lone \r, as Excel's "CSV
    // (Macintosh)" writes them.
    for file in ["customers.csv", "invoices.csv"] {
        let text = std::fs::read_to_string(dir.join(file)).unwrap();
        std::fs::write(dir.join(file), text.replace("\r\n", "\r")).unwrap();
    }
    assert_eq!(stderr(&run(&dir, &["reports", "summary"])), expected);

    // Parquet rows count per file, across the parts of a collection.
    std::fs::remove_file(dir.join("invoices.csv")).unwrap();
    let invoice = |id: &str, customer: &str, date: &str| {
        json!({"id": id, "customer_id": customer, "type": "subscription", "plan_id": "m",
               "invoice_date": date, "amount": 3000, "currency": "USD"})
    };
    let parts = dir.join("invoices");
    std::fs::create_dir_all(&parts).unwrap();
    write_parquet(
        &parts.join("part-0.parquet"),
        &batch(&[
            invoice("i1", "A", "2024-01-01"),
            invoice("i2", "A", "2024-02-01"),
        ]),
    );
    write_parquet(
        &parts.join("part-1.parquet"),
        &batch(&[
            invoice("i3", "A", "2024-03-01"),
            invoice("i4", "Z", "2024-03-01"),
            invoice("i5", "A", "2024-04-01"),
        ]),
    );
    assert_stderr_ends_with(
        &run(&dir, &["reports", "summary"]),
        &format!(
            "rejected: {} row 2: invoice i4: field `customer_id`: customer `Z` does not exist; \
             send the customer first\n\
             loaded 1 customers, 1 plans, 4 invoices; rejected 3\n",
            parts.join("part-1.parquet").display()
        ),
    );

    // Compressed JSONL: lines as the file counts them, blank ones too.
    std::fs::remove_dir_all(&parts).unwrap();
    let lines = format!(
        "\n{}\n\n{}\n",
        invoice("i1", "A", "2024-01-01"),
        invoice("i2", "Z", "2024-02-01")
    );
    let mut gzipped = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    std::io::Write::write_all(&mut gzipped, lines.as_bytes()).unwrap();
    std::fs::write(dir.join("invoices.jsonl.gz"), gzipped.finish().unwrap()).unwrap();
    assert_stderr_ends_with(
        &run(&dir, &["reports", "summary"]),
        &format!(
            "rejected: {} line 4: invoice i2: field `customer_id`: customer `Z` does not exist; \
             send the customer first\n\
             loaded 1 customers, 1 plans, 1 invoices; rejected 3\n",
            at("invoices.jsonl.gz")
        ),
    );
}
