//! `local --stripe DIR`: a directory of Stripe API objects computed offline,
//! exactly as the core's mapping does.

mod common;

use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::Command;

/// Writes a fixture set's objects as a Stripe directory: one list response
/// per kind (`invoices.json`, ...), the customers as JSON lines.
fn stripe_dir(fixture: &str, name: &str) -> (PathBuf, Value) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../testdata/stripe")
        .join(fixture);
    let scenario: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let dir = std::env::temp_dir().join(format!("submetrics-stripe-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let mut by_kind: std::collections::BTreeMap<String, Vec<Value>> = Default::default();
    let mut flat = Vec::new();
    for object in scenario["stripe"].as_array().unwrap() {
        match object["object"].as_str() {
            Some("list") => flat.extend(object["data"].as_array().unwrap().iter().cloned()),
            _ => flat.push(object.clone()),
        }
    }
    for object in flat {
        let kind = object["object"].as_str().unwrap().to_string();
        by_kind.entry(format!("{kind}s")).or_default().push(object);
    }
    for (kind, objects) in by_kind {
        if kind == "customers" {
            let lines: Vec<String> = objects.iter().map(Value::to_string).collect();
            std::fs::write(dir.join("customers.jsonl"), lines.join("\n")).unwrap();
        } else {
            let list = json!({"object": "list", "data": objects, "has_more": false});
            std::fs::write(dir.join(format!("{kind}.json")), list.to_string()).unwrap();
        }
    }
    (dir, scenario)
}

/// `local --stripe DIR --as-of AS_OF movements` as (date, customer, type,
/// MRR change) rows.
fn movements(dir: &Path, as_of: &str) -> Vec<(String, String, String, i64)> {
    movements_with(dir, as_of, &[])
}

/// [`movements`] with more options of `local`.
fn movements_with(dir: &Path, as_of: &str, options: &[&str]) -> Vec<(String, String, String, i64)> {
    let out = Command::new(env!("CARGO_BIN_EXE_submetrics"))
        .args(["local", "--stripe"])
        .arg(dir)
        .args(options)
        .args(["--as-of", as_of, "movements"])
        .output()
        .unwrap();
    let movements = common::json(&out);
    movements
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            let text = |k: &str| m[k].as_str().unwrap().to_string();
            (
                text("date"),
                text("customer_id"),
                text("type"),
                m["mrr_change"].as_i64().unwrap(),
            )
        })
        .collect()
}

#[test]
fn local_stripe_computes_the_fixture_movements() {
    let (dir, scenario) = stripe_dir("09-cancellations.json", "cancellations");
    let got = movements(&dir, scenario["as_of"].as_str().unwrap());
    let s = |x: &str| x.to_string();
    assert_eq!(
        got,
        vec![
            (s("2024-01-01"), s("cus_N"), s("new"), 2000),
            (s("2024-01-01"), s("cus_P"), s("new"), 2000),
            (s("2024-01-20"), s("cus_N"), s("churn"), -2000),
            (s("2024-02-01"), s("cus_S"), s("new"), 2000),
            (s("2024-03-01"), s("cus_P"), s("churn"), -2000),
        ]
    );
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn an_uncollectible_invoice_counts_as_the_option_says() {
    // Offline, the option of the service's Stripe connection used to be
    // out of reach: every uncollectible invoice counted as failed.
    let (dir, scenario) = stripe_dir("10-uncollectible.json", "uncollectible");
    let as_of = scenario["as_of"].as_str().unwrap();
    let s = |x: &str| x.to_string();
    let churn_on = |day: &str| {
        vec![
            (s("2024-01-01"), s("cus_V"), s("new"), 2000),
            (s(day), s("cus_V"), s("churn"), -2000),
        ]
    };
    assert_eq!(movements(&dir, as_of), churn_on("2024-03-01"));
    assert_eq!(
        movements_with(&dir, as_of, &["--stripe-uncollectible", "failed"]),
        churn_on("2024-03-01")
    );
    assert_eq!(
        movements_with(&dir, as_of, &["--stripe-uncollectible", "void"]),
        churn_on("2024-02-01")
    );
    let out = Command::new(env!("CARGO_BIN_EXE_submetrics"))
        .args(["local", "--stripe"])
        .arg(&dir)
        .args(["--stripe-uncollectible", "never", "movements"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&out.stderr).starts_with(
            "error: --stripe-uncollectible: parameter `uncollectible`: must be `failed` or `void`, got \"never\"\n"
        ),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn local_stripe_prints_rejections_and_strict_fails() {
    let (dir, scenario) = stripe_dir("01-monthly.json", "monthly");
    let run = |strict: bool| {
        let mut command = Command::new(env!("CARGO_BIN_EXE_submetrics"));
        command.args(["local", "--stripe"]).arg(&dir);
        if strict {
            command.arg("--strict");
        }
        command
            .args([
                "--as-of",
                scenario["as_of"].as_str().unwrap(),
                "reports",
                "summary",
            ])
            .output()
            .unwrap()
    };
    let out = run(false);
    assert!(out.status.success());
    let summary: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(summary["summary"]["mrr_current"], 2000);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(
            "rejected: invoice in_bad: field `lines.data[0].price`: price `price_gone` is unknown"
        ),
        "{stderr}"
    );
    assert!(!run(true).status.success());
    let missing = Command::new(env!("CARGO_BIN_EXE_submetrics"))
        .args(["local", "--stripe", "/nonexistent-dir", "movements"])
        .output()
        .unwrap();
    assert!(
        String::from_utf8_lossy(&missing.stderr)
            .contains("--stripe /nonexistent-dir: not a directory")
    );
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn a_file_of_no_stripe_kind_is_an_error_naming_it() {
    let (dir, scenario) = stripe_dir("01-monthly.json", "stray");
    std::fs::rename(dir.join("invoices.json"), dir.join("invoice.json")).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_submetrics"))
        .args(["local", "--stripe"])
        .arg(&dir)
        .args(["--as-of", scenario["as_of"].as_str().unwrap(), "movements"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        format!(
            "error: --stripe {}: invoice.json would go unread (did you mean invoices?); \
             --stripe reads customers, products, prices, plans, \
             subscriptions, invoices, credit_notes, refunds, charges, events, each from \
             NAME.FORMAT, NAME-PART.FORMAT or a directory NAME/\n\
             loaded 0 customers, 0 plans, 0 invoices; rejected 0\n",
            dir.display()
        )
    );
    std::fs::remove_dir_all(dir).unwrap();
}

/// `stripe export` of what `fake` serves into `dir`, with `key`.
fn export(fake: &fake_stripe::FakeStripe, key: &str, dir: &Path) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_submetrics"))
        .args([
            "stripe",
            "export",
            "--api-key",
            key,
            "--api-base",
            &fake.base,
        ])
        .arg("--to")
        .arg(dir)
        .output()
        .unwrap()
}

/// Every file of `dir` by name, with its bytes.
fn files_in(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut files: Vec<(String, Vec<u8>)> = std::fs::read_dir(dir)
        .unwrap()
        .map(|entry| {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            (name, std::fs::read(&path).unwrap())
        })
        .collect();
    files.sort();
    files
}

fn proration_objects() -> Vec<Value> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../testdata/stripe/04-upgrade-proration.json");
    let scenario: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    scenario["stripe"].as_array().unwrap().clone()
}

#[test]
fn a_failed_export_leaves_the_directory_as_it_was() {
    let root = std::env::temp_dir().join(format!("submetrics-stripe-kept-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    let dir = root.join("export");
    let objects = proration_objects();
    let fake = fake_stripe::FakeStripe::start(&objects, 100);
    common::json(&export(&fake, fake_stripe::KEY, &dir));
    let before = files_in(&dir);
    let names: Vec<&str> = before.iter().map(|(name, _)| name.as_str()).collect();
    assert_eq!(
        names,
        [
            "charges.json",
            "credit_notes.json",
            "customers.json",
            "invoices.json",
            "prices.json",
            "products.json",
            "refunds.json",
            "subscriptions.json"
        ]
    );

    // Customers come first and are written; the invoices then fail.
    let mut renamed = objects.clone();
    for object in &mut renamed {
        if object["object"] == "customer" {
            object["name"] = json!("Renamed");
        }
    }
    let failing = fake_stripe::FakeStripe::start(&renamed, 100);
    failing.refuse("/v1/invoices");
    let out = export(&failing, fake_stripe::KEY, &dir);
    assert!(!out.status.success());
    assert_eq!(
        String::from_utf8_lossy(&out.stderr).lines().last(),
        Some("error: Stripe answered 400 to GET /v1/invoices: Refused by the test.")
    );
    assert_eq!(files_in(&dir), before);

    // A refused key makes no directory.
    let fresh = root.join("fresh");
    let out = export(&fake, "sk_test_wrong", &fresh);
    assert!(!out.status.success());
    assert!(!fresh.exists());
    std::fs::remove_dir_all(root).unwrap();
}

#[test]
fn a_page_over_ten_megabytes_is_read_whole() {
    let dir = std::env::temp_dir().join(format!("submetrics-stripe-large-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let mut objects = proration_objects();
    let long = "x".repeat(11 << 20);
    for object in &mut objects {
        if object["object"] == "customer" {
            object["description"] = json!(long);
        }
    }
    let fake = fake_stripe::FakeStripe::start(&objects, 100);
    common::json(&export(&fake, fake_stripe::KEY, &dir));
    let customers: Value =
        serde_json::from_slice(&std::fs::read(dir.join("customers.json")).unwrap()).unwrap();
    let descriptions: Vec<usize> = customers["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["description"].as_str().unwrap().len())
        .collect();
    assert_eq!(descriptions, [11 << 20]);
    std::fs::remove_dir_all(dir).unwrap();
}

#[path = "../../http-facade/tests/common/fake_stripe.rs"]
mod fake_stripe;

#[test]
fn stripe_export_downloads_what_local_stripe_reads() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../testdata/stripe/04-upgrade-proration.json");
    let scenario: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let mut objects = scenario["stripe"].as_array().unwrap().clone();
    // An invoice whose lines continue on another page.
    for object in &mut objects {
        if object["id"] == "in_U2" {
            object["lines"]["has_more"] = json!(true);
        }
    }
    let fake = fake_stripe::FakeStripe::start(&objects, 1);
    fake.rate_limit_next(2);
    let dir = std::env::temp_dir().join(format!("submetrics-stripe-export-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let out = Command::new(env!("CARGO_BIN_EXE_submetrics"))
        .args([
            "stripe",
            "export",
            "--api-key",
            fake_stripe::KEY,
            "--api-base",
            &fake.base,
            "--to",
        ])
        .arg(&dir)
        .output()
        .unwrap();
    let summary = common::json(&out);
    assert_eq!(summary["objects"]["invoices"], 3);
    assert_eq!(summary["objects"]["prices"], 2);
    let log = fake.log();
    assert!(
        log.iter().any(|r| r.contains("starting_after=")),
        "paginated: {log:?}"
    );
    assert!(
        log.iter()
            .any(|r| r.starts_with("/v1/invoices/in_U2/lines")),
        "lines fetched: {log:?}"
    );
    assert!(
        log.iter()
            .any(|r| r.starts_with("/v1/subscriptions") && r.contains("status=all"))
    );

    let got: Vec<(String, i64)> = movements(&dir, "2024-02-15T00:00:00Z")
        .into_iter()
        .map(|(_, _, kind, change)| (kind, change))
        .collect();
    assert_eq!(
        got,
        vec![("new".to_string(), 3100), ("expansion".to_string(), 3100)]
    );
    std::fs::remove_dir_all(dir).unwrap();

    let refused = Command::new(env!("CARGO_BIN_EXE_submetrics"))
        .args([
            "stripe",
            "export",
            "--api-key",
            "sk_test_wrong",
            "--api-base",
            &fake.base,
            "--to",
            "/tmp/unused-export",
        ])
        .output()
        .unwrap();
    assert!(!refused.status.success());
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(
        stderr.contains("the key was refused: Stripe answered 401"),
        "{stderr}"
    );
}
