//! Loading: rejected records, `--strict`, ids as written, progress on a
//! terminal, broken files.

use crate::fixture::*;
use serde_json::Value;
use std::process::Command;

#[test]
fn strict_and_bad_directories() {
    let strict = local(&["--strict", "reports", "summary"]);
    assert_eq!(strict.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&strict.stderr).contains("1 record(s) rejected (--strict)"));
    let nowhere = Command::new(env!("CARGO_BIN_EXE_submetrics"))
        .args(["local", "--data", "/nonexistent-dir", "reports", "summary"])
        .output()
        .expect("run");
    assert_eq!(nowhere.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&nowhere.stderr),
        "error: --data /nonexistent-dir: not a directory\nloaded 0 customers, 0 plans, 0 invoices; rejected 0\n"
    );
}

#[test]
fn csv_ids_keep_leading_zeros_and_json_may_be_a_bare_array() {
    let dir = leading_zeros();
    let out = local_in(
        &dir,
        &["--as-of", "2024-02-15T00:00:00Z", "customers", "get", "007"],
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "loaded 1 customers, 1 plans, 3 invoices; rejected 0\n",
        "nothing rejected"
    );
    let customer = json(&out);
    assert_eq!(customer["id"], "007");
    assert_eq!(customer["custom_variables"]["account_no"], "000042");
    assert_eq!(customer["current_subscriptions"][0]["plan_id"], "0100");
    assert_eq!(customer["current_subscriptions"][0]["mrr"], 2500);
    let refund = local_in(
        &dir,
        &[
            "--as-of",
            "2024-02-15T00:00:00Z",
            "reports",
            "transactions-detail",
            "--selected-date",
            "2024-02-01",
            "--selected-type",
            "refund",
            "--format",
            "csv",
        ],
    );
    assert_eq!(
        String::from_utf8_lossy(&refund.stdout),
        "date,customer_id,customer_name,customer_email,type,status,transaction_id,invoice_id,currency,description,amount,amount_base_currency\r\n\
         2024-02-10T00:00:00Z,007,Bond Ltd,,refund,successful,0003,0003,USD,refund,-2500,-2500\r\n"
    );
}

/// A directory of `n` customers as JSONL, made once per test process.
fn large_load(n: usize) -> std::path::PathBuf {
    let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("cli-large-load-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let lines: String = (0..n)
        .map(|i| format!("{{\"id\": \"c{i}\", \"name\": \"Customer {i}\"}}\n"))
        .collect();
    std::fs::write(dir.join("customers.jsonl"), lines).expect("write");
    dir
}

#[test]
fn a_large_load_shows_progress_on_a_terminal_and_never_on_stdout() {
    let dir = large_load(50_000);
    // Beside the data directory: a file of records in it is noted as unread.
    let out_file = dir.with_extension("out.json");
    // stderr is a terminal (util-linux `script`), stdout goes to a file.
    let line = format!(
        "'{}' local --data '{}' --as-of 2024-03-15T00:00:00Z customers list --status all --limit 1 > '{}'",
        env!("CARGO_BIN_EXE_submetrics"),
        dir.display(),
        out_file.display()
    );
    let terminal = Command::new("script")
        .args(["-qec", &line, "/dev/null"])
        .output()
        .expect(
            "`script` (util-linux / bsdutils) must be installed: it gives the client a terminal",
        );
    assert!(terminal.status.success(), "{terminal:?}");
    // A JSONL file is streamed: the count so far, once per block read.
    assert_eq!(
        String::from_utf8_lossy(&terminal.stdout),
        "\rcustomers  50000\r\n\
         loaded 50000 customers, 0 plans, 0 invoices; rejected 0\r\n"
    );
    let written: Value =
        serde_json::from_str(&std::fs::read_to_string(&out_file).expect("out")).expect("pure JSON");
    assert_eq!(written["result"]["count"], 50_000);
    assert_eq!(written["result"]["list"][0]["id"], "c0");
    // A JSON array states its count: a bar, moved once per batch stored.
    let records: Vec<Value> = (0..50_000)
        .map(|i| serde_json::json!({"id": format!("c{i}"), "name": format!("Customer {i}")}))
        .collect();
    std::fs::remove_file(dir.join("customers.jsonl")).expect("remove");
    std::fs::write(
        dir.join("customers.json"),
        serde_json::to_string(&records).expect("json"),
    )
    .expect("write");
    let terminal = Command::new("script")
        .args(["-qec", &line, "/dev/null"])
        .output()
        .expect("script");
    assert!(terminal.status.success(), "{terminal:?}");
    assert_eq!(
        String::from_utf8_lossy(&terminal.stdout),
        "\rcustomers  [############                  ] 20000/50000\
         \rcustomers  [########################      ] 40000/50000\
         \rcustomers  [##############################] 50000/50000\r\n\
         loaded 50000 customers, 0 plans, 0 invoices; rejected 0\r\n"
    );
    // Piped stderr: no bar at all, only what was loaded.
    let piped = local_in(
        &dir.display().to_string(),
        &["customers", "list", "--status", "all", "--limit", "1"],
    );
    assert_eq!(
        String::from_utf8_lossy(&piped.stderr),
        "loaded 50000 customers, 0 plans, 0 invoices; rejected 0\n"
    );
    assert_eq!(json(&piped)["result"]["count"], 50_000);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_load_that_keeps_nothing_is_an_error_and_says_what_it_loaded() {
    let root = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("cli-nothing-loaded-{}", std::process::id()));
    let empty = root.join("empty");
    let orphans = root.join("orphans");
    std::fs::create_dir_all(&empty).expect("dir");
    std::fs::create_dir_all(&orphans).expect("dir");
    std::fs::write(
        orphans.join("customers.json"),
        r#"[{"id": "A", "name": "Acme"}]"#,
    )
    .expect("write");
    std::fs::write(
        orphans.join("invoices.jsonl"),
        "{\"id\": \"i1\", \"customer_id\": \"Z\", \"type\": \"one_time\", \"invoice_date\": \"2024-01-01\", \"amount\": 100, \"currency\": \"USD\"}\n",
    )
    .expect("write");
    let out = local_in(empty.to_str().unwrap(), &["reports", "summary"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty());
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        format!(
            "error: --data {}: no records (customers, plans and invoices as .json, .jsonl, .csv or .parquet)\n\
             loaded 0 customers, 0 plans, 0 invoices; rejected 0\n",
            empty.display()
        )
    );
    let out = local_in(orphans.to_str().unwrap(), &["reports", "summary"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty());
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        format!(
            "rejected: {}/invoices.jsonl line 1: invoice i1: field `customer_id`: customer `Z` does not exist; send the customer first\n\
             error: --data {}: every record of invoices was rejected\n\
             loaded 1 customers, 0 plans, 0 invoices; rejected 1\n",
            orphans.display(),
            orphans.display()
        )
    );
}

#[test]
fn a_malformed_line_of_a_customers_jsonl_file_names_the_file_and_its_line() {
    let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("cli-bad-customer-line-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    // Blank lines count: the broken record is on line 4 of the file.
    let good = |i: usize| format!("{{\"id\": \"c{i}\", \"name\": \"C{i}\"}}\r\n");
    let text = format!("{}\n{}{{\"id\": \"c3\", \"name\": }}\n", good(1), good(2));
    std::fs::write(dir.join("customers.jsonl"), text).expect("write");
    let out = local_in(dir.to_str().unwrap(), &["reports", "summary"]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        format!(
            "error: {} line 4: expected value at line 1 column 22\n\
             loaded 0 customers, 0 plans, 0 invoices; rejected 0\n",
            dir.join("customers.jsonl").display()
        )
    );
    let lines: String = (0..600).map(good).collect();
    std::fs::write(dir.join("customers.jsonl"), lines).expect("write");
    let out = local_in(
        dir.to_str().unwrap(),
        &["customers", "list", "--status", "all", "--limit", "1"],
    );
    assert!(out.status.success(), "{out:?}");
    assert_eq!(json(&out)["result"]["count"], 600);
}

/// Text files as Windows tools and spreadsheets write them: a byte order
/// mark before JSON is passed over; a CSV header split by semicolons is
/// refused at its line rather than every row rejected for lacking its id.
#[test]
fn a_byte_order_mark_is_passed_over_and_a_semicolon_header_is_refused() {
    let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("cli-windows-text-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("dir");
    std::fs::write(
        dir.join("customers.jsonl"),
        "\u{feff}{\"id\": \"c1\", \"name\": \"Bom\"}\r\n",
    )
    .expect("write");
    std::fs::write(
        dir.join("plans.json"),
        "\u{feff}[{\"id\": \"m\", \"name\": \"M\", \"interval\": \"month\", \"currency\": \"USD\"}]",
    )
    .expect("write");
    let out = local_in(
        dir.to_str().unwrap(),
        &["customers", "list", "--status", "all"],
    );
    assert!(out.status.success(), "{out:?}");
    assert_eq!(json(&out)["result"]["list"][0]["name"], "Bom");
    std::fs::write(
        dir.join("invoices.csv"),
        "id;customer_id;amount\ni1;c1;100\n",
    )
    .expect("write");
    let out = local_in(dir.to_str().unwrap(), &["reports", "summary"]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        format!(
            "error: {} line 1: the header is one column, \"id;customer_id;amount\": separate \
             fields with commas, not `;`\n\
             loaded 1 customers, 1 plans, 0 invoices; rejected 0\n",
            dir.join("invoices.csv").display()
        )
    );
    let utf16: Vec<u8> = [0xFF, 0xFE]
        .into_iter()
        .chain("id,customer_id\n".encode_utf16().flat_map(u16::to_le_bytes))
        .collect();
    std::fs::write(dir.join("invoices.csv"), utf16).expect("write");
    let out = local_in(dir.to_str().unwrap(), &["reports", "summary"]);
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        format!(
            "error: {}: it is UTF-16 text (it starts with a UTF-16 byte order mark); save it \
             as UTF-8\n\
             loaded 1 customers, 1 plans, 0 invoices; rejected 0\n",
            dir.join("invoices.csv").display()
        )
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// `local` with these arguments, not on the fixture.
fn local_with(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_submetrics"))
        .arg("local")
        .args(args)
        .output()
        .expect("run the client")
}

#[test]
fn a_stripe_directory_without_a_stripe_object_is_an_error_naming_it() {
    let invoices = std::fs::read_to_string(format!("{}/invoices.jsonl", data_dir())).unwrap();
    // Records of our own, where Stripe objects should be.
    let ours = scratch_dir("stripe-of-our-records", &[("customers.jsonl", &invoices)]);
    let out = local_with(&["--stripe", &ours, "reports", "summary"]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        stderr(&out),
        format!(
            "error: --stripe {ours}: none of its 7 records is a Stripe object the mapping keeps \
             (the first: a record has no `object` field); it reads Stripe API objects as \
             `stripe export` writes them\n{NOTHING_LOADED}"
        )
    );
    // Beside records that load, an empty Stripe directory is still an error.
    let empty = scratch_dir("stripe-empty", &[]);
    let out = local(&["--stripe", &empty, "reports", "summary"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty());
    assert_eq!(
        stderr(&out),
        format!(
            "{}error: --stripe {empty}: no records (Stripe objects as .json or .jsonl)\n{FIXTURE_LOADED}",
            fixture_rejected()
        )
    );
    // FX rates alone are what a directory may add to Stripe objects.
    let rates = std::fs::read_to_string(format!("{}/fx_rates.json", data_dir())).unwrap();
    let fx = scratch_dir("stripe-fx-rates", &[("fx_rates.json", &rates)]);
    let stripe = format!("{}/../stripe-export", data_dir());
    let out = local_with(&[
        "--data",
        &fx,
        "--stripe",
        &stripe,
        "--as-of",
        "2024-03-01",
        "reports",
        "summary",
    ]);
    assert_eq!(json(&out)["summary"]["mrr_current"], 11200);
    let out = local_with(&["--data", &fx, "reports", "summary"]);
    assert_eq!(
        stderr(&out),
        format!(
            "error: --data {fx}: no records (customers, plans and invoices as .json, .jsonl, .csv or .parquet)\n{NOTHING_LOADED}"
        )
    );
}

#[test]
fn a_malformed_line_of_an_invoices_jsonl_file_names_the_file_and_its_line() {
    let fixture = |name: &str| std::fs::read_to_string(format!("{}/{name}", data_dir())).unwrap();
    let invoices = fixture("invoices.jsonl");
    let mut lines: Vec<&str> = invoices.lines().collect();
    // Blank lines count: the broken record is on line 5 of the file.
    lines.insert(1, "");
    lines.insert(4, r#"{"id": "x1", "customer_id": "A", oops}"#);
    let dir = scratch_dir(
        "malformed-invoice-line",
        &[
            ("customers.csv", &fixture("customers.csv")),
            ("plans.json", &fixture("plans.json")),
            ("invoices.jsonl", &lines.join("\r\n")),
        ],
    );
    let out = local_in(&dir, &["reports", "summary"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty());
    assert_eq!(
        stderr(&out),
        format!(
            "error: {dir}/invoices.jsonl line 5: key must be a string at line 1 column 34\n\
             loaded 3 customers, 3 plans, 0 invoices; rejected 0\n"
        )
    );
}

/// A record whose id an earlier record of the load gave replaces it, as
/// any upsert does: the load says so, since fewer are kept than loaded.
#[test]
fn ids_given_twice_in_a_load_are_noted_with_what_was_kept() {
    let invoice = |amount: u32| {
        format!(
            "{{\"id\": \"x1\", \"customer_id\": \"A\", \"type\": \"subscription\", \"plan_id\": \
             \"m\", \"invoice_date\": \"2024-01-01\", \"amount\": {amount}, \"currency\": \"USD\"}}\n"
        )
    };
    let dir = scratch_dir(
        "repeated-ids",
        &[
            ("customers.csv", "id,name\nA,Acme\nA,Acme Inc.\n"),
            (
                "plans.json",
                "[{\"id\": \"m\", \"name\": \"M\", \"interval\": \"month\", \"currency\": \"USD\"}]",
            ),
            ("invoices-1.jsonl", &invoice(3000)),
            ("invoices-2.jsonl", &invoice(5000)),
        ],
    );
    let out = local_in(&dir, &["--as-of", "2024-01-15", "reports", "summary"]);
    assert_eq!(json(&out)["summary"]["mrr_current"], 5000);
    assert_eq!(
        stderr(&out),
        "note: 1 customer record(s) repeat an id given earlier; the last record of an id stands \
         (2 loaded, 1 kept)\n\
         note: 1 invoice record(s) repeat an id given earlier; the last record of an id stands \
         (2 loaded, 1 kept)\n\
         loaded 2 customers, 1 plans, 2 invoices; rejected 0\n"
    );
}

/// A collection named (or found in `--data`) whose files hold no record
/// is an error naming them, not a load of none.
#[test]
fn a_collection_of_files_without_records_is_an_error_naming_them() {
    let dir = scratch_dir(
        "empty-collection",
        &[
            ("customers.csv", "id,name\nA,Acme\n"),
            (
                "plans.json",
                "[{\"id\": \"m\", \"name\": \"M\", \"interval\": \"month\", \"currency\": \"USD\"}]",
            ),
            ("invoices.csv", "id,customer_id,amount\n"),
        ],
    );
    let out = local_in(&dir, &["reports", "summary"]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        stderr(&out),
        format!(
            "error: {dir}/invoices.csv: no records of invoices (the files are empty or a CSV \
             header alone); fill them or leave them out\n\
             loaded 1 customers, 1 plans, 0 invoices; rejected 0\n"
        )
    );
    std::fs::write(format!("{dir}/invoices.csv"), "").expect("write");
    std::fs::write(format!("{dir}/more.jsonl"), "\n\n").expect("write");
    let out = local_in(
        &dir,
        &[
            "--invoices",
            &format!("{dir}/more.jsonl"),
            "reports",
            "summary",
        ],
    );
    assert_eq!(
        stderr(&out),
        format!(
            "error: {dir}/more.jsonl: no records of invoices (the files are empty or a CSV \
             header alone); fill them or leave them out\n\
             loaded 1 customers, 1 plans, 0 invoices; rejected 0\n"
        )
    );
}
