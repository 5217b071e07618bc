//! Ledger options and `--as-of` around the command, and commands refused
//! before any file is read.

use crate::fixture::*;
use serde_json::Value;

#[test]
fn ledger_options_bind_to_the_ledger() {
    let data = data_dir();
    let at = |as_of: &str, options: &[&str]| {
        let mut args = vec!["--as-of", as_of];
        args.extend_from_slice(options);
        args.extend_from_slice(&["reports", "summary"]);
        summary(&local_in(&data, &args))
    };
    // Base currency: USD 130.00 is EUR 117.00 at the fixture's 0.9.
    assert_eq!(
        at("2024-03-15T00:00:00Z", &[]),
        (Value::from("USD"), Value::from(13000))
    );
    assert_eq!(
        at("2024-03-15T00:00:00Z", &["--base-currency", "EUR"]),
        (Value::from("EUR"), Value::from(11700))
    );
    // Time zone: A's first invoice (dated 2024-01-01) starts at local
    // midnight, 08:00 UTC in Los Angeles, so at 05:00 UTC it has not begun.
    assert_eq!(
        at("2024-01-01T05:00:00Z", &[]),
        (Value::from("USD"), Value::from(3000))
    );
    assert_eq!(
        at(
            "2024-01-01T05:00:00Z",
            &["--timezone", "America/Los_Angeles"]
        ),
        (Value::from("USD"), Value::from(0))
    );
    // First day of the week: weeks from Monday (the default) or Sunday.
    let weeks = |options: &[&str]| {
        let mut args = vec!["--as-of", "2024-03-15T00:00:00Z"];
        args.extend_from_slice(options);
        args.extend_from_slice(&[
            "reports",
            "mrr",
            "--interval",
            "week",
            "--date",
            "20240101-20240114",
        ]);
        json(&local_in(&data, &args))["result"]
            .as_array()
            .expect("periods")
            .iter()
            .map(|p| {
                format!(
                    "{} {}",
                    p["date"].as_str().unwrap_or(""),
                    p["end_date"].as_str().unwrap_or("")
                )
            })
            .collect::<Vec<_>>()
    };
    assert_eq!(
        weeks(&[]),
        vec!["2024-01-01 2024-01-07", "2024-01-08 2024-01-14"]
    );
    assert_eq!(
        weeks(&["--first-day-of-week", "0"]),
        vec![
            "2023-12-31 2024-01-06",
            "2024-01-07 2024-01-13",
            "2024-01-14 2024-01-14"
        ]
    );
    // Churn grace: with 30 days C has not lapsed by Mar 15, so its
    // cancellation on Mar 10 is the churn (with the default 7 it lapsed Mar 1).
    let churn = |options: &[&str]| {
        let mut args = vec!["--as-of", "2024-03-15T00:00:00Z"];
        args.extend_from_slice(options);
        args.extend_from_slice(&["movements", "--kinds", "churn"]);
        let churn = json(&local_in(&data, &args));
        (churn[0]["date"].clone(), churn[0]["subtype"].clone())
    };
    assert_eq!(
        churn(&[]),
        (Value::from("2024-03-01"), Value::from("lapse"))
    );
    assert_eq!(
        churn(&["--churn-grace-days", "30"]),
        (Value::from("2024-03-10"), Value::from("cancellation"))
    );
    // Refund handling: the half refund of February cuts MRR unless ignored.
    let zeros = leading_zeros();
    let refund = |options: &[&str]| {
        let mut args = vec!["--as-of", "2024-02-15T00:00:00Z"];
        args.extend_from_slice(options);
        args.extend_from_slice(&["reports", "summary"]);
        summary(&local_in(&zeros, &args))
    };
    assert_eq!(refund(&[]), (Value::from("USD"), Value::from(2500)));
    assert_eq!(
        refund(&["--refund-handling", "ignore"]),
        (Value::from("USD"), Value::from(5000))
    );
    let bad = local_in(
        &data,
        &["--refund-handling", "sometimes", "reports", "summary"],
    );
    assert_eq!(bad.status.code(), Some(1));
    assert!(bad.stdout.is_empty());
    assert!(
        String::from_utf8_lossy(&bad.stderr).contains("refund_handling"),
        "{}",
        String::from_utf8_lossy(&bad.stderr)
    );
}

#[test]
fn an_unknown_report_parameter_is_an_error_with_a_near_miss() {
    let out = local(&["reports", "mrr", "--intervall", "month"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty());
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        format!(
            "error: parameter `intervall`: report `mrr` has no such parameter; did you mean `interval`? \
             Its parameters: date, interval, baseCurrency, fix_fx, fx_date, breakdown, category, subtype, \
             currency, customer, plan, billing_freq, pricing_model, status, country, region, industry, size, \
             channel, market, payment_method, age, data_source\n{NOTHING_LOADED}"
        )
    );
}

#[test]
fn a_command_refused_whatever_the_data_fails_before_the_data_is_read() {
    // Every file is broken: an error about the command shows none was read.
    let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("refused-before-loading");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    for file in ["customers.jsonl", "plans.jsonl", "invoices.jsonl"] {
        std::fs::write(dir.join(file), "not json\n").unwrap();
    }
    let dir = dir.to_str().unwrap();
    let cases: [(&[&str], &str); 5] = [
        (
            &["--as-of", "soon", "reports", "summary"],
            "parameter `as_of`: `soon` is not an ISO 8601 date or timestamp in the years 1900 to 2200",
        ),
        (
            &["reports", "mrr", "--interval", "fortnight"],
            "parameter `interval`: `fortnight` is not one of day, week, month, quarter, year",
        ),
        (
            &["reports", "mrr", "month"],
            "unexpected `month`: parameters are --name value",
        ),
        (
            &["movements", "--kinds", "growth"],
            "parameter `kinds`: `growth` is not one of new, expansion, contraction, churn, reactivation",
        ),
        (
            &["customers", "list", "--sort", "height"],
            "parameter `sort`: `height` is not one of mrr, created_date, country, paid_started, \
             cancel_date, trial_started, status, name, id",
        ),
    ];
    for (args, error) in cases {
        let out = local_in(dir, args);
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        assert_eq!(
            String::from_utf8_lossy(&out.stderr),
            format!("error: {error}\n{NOTHING_LOADED}"),
            "{args:?}"
        );
    }
    let out = local(&["reports", "nosuch"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.starts_with("error: unknown report `nosuch`; known reports: summary, mrr,"));
    assert!(stderr.ends_with(NOTHING_LOADED), "{stderr}");

    // A customer that is not there is known only once the data is read.
    let out = local(&["customers", "get", "nobody"]);
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        format!(
            "{}error: customer nobody not found\n{FIXTURE_LOADED}",
            fixture_rejected()
        )
    );
}

#[test]
fn as_of_and_local_options_mean_the_same_before_and_after_the_command() {
    let dir = data_dir();
    let before = local_in(&dir, &["--as-of", "2024-01-15", "reports", "summary"]);
    let after = local_in(&dir, &["reports", "summary", "--as-of", "2024-01-15"]);
    let inline = local_in(&dir, &["reports", "summary", "--as-of=2024-01-15"]);
    assert_eq!(json(&before)["summary"]["mrr_current"], 13000);
    assert_eq!(json(&after), json(&before));
    assert_eq!(json(&inline), json(&before));
    // Without it: now, long after the fixture's last invoice.
    assert_eq!(
        json(&local_in(&dir, &["reports", "summary"]))["summary"]["mrr_current"],
        0
    );
    // A `local` option after the command is that option, not a report parameter.
    let strict = local_in(&dir, &["reports", "summary", "--strict"]);
    assert_eq!(strict.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&strict.stderr).ends_with(&format!(
            "error: 1 record(s) rejected (--strict)\n{FIXTURE_LOADED}"
        )),
        "{}",
        String::from_utf8_lossy(&strict.stderr)
    );
    let euro = local_in(
        &dir,
        &[
            "reports",
            "summary",
            "--as-of",
            "2024-01-15",
            "--base-currency",
            "EUR",
        ],
    );
    assert_eq!(
        json(&euro),
        json(&local_in(
            &dir,
            &[
                "--base-currency",
                "EUR",
                "--as-of",
                "2024-01-15",
                "reports",
                "summary"
            ]
        ))
    );
    let bad = local_in(
        &dir,
        &["reports", "summary", "--first-day-of-week", "monday"],
    );
    assert_eq!(bad.status.code(), Some(1));
    let refused = "error: invalid value 'monday' for '--first-day-of-week <FIRST_DAY_OF_WEEK>': \
                   invalid digit found in string\n\nFor more information, try '--help'.\n";
    assert_eq!(stderr(&bad), refused);
    let before = local_in(
        &dir,
        &["--first-day-of-week", "monday", "reports", "summary"],
    );
    assert_eq!(stderr(&before), refused);
}

#[test]
fn local_options_are_taken_after_any_command_of_local() {
    let run = |args: &[&str]| {
        std::process::Command::new(env!("CARGO_BIN_EXE_submetrics"))
            .arg("local")
            .args(args)
            .output()
            .expect("run the client")
    };
    let data = data_dir();
    let at = ["--as-of", "2024-03-15T00:00:00Z"];
    // Options of the ledger after `movements` and after `customers get`.
    let after = run(&[
        &["--data", &data, "movements", "--base-currency", "EUR"],
        &at[..],
    ]
    .concat());
    let before = run(&[
        &["--data", &data, "--base-currency", "EUR", "movements"],
        &at[..],
    ]
    .concat());
    assert_eq!(json(&after), json(&before));
    assert_eq!(json(&after)[0]["mrr_change_base_currency"], 2700);
    let customer = run(&[
        &[
            "--data",
            &data,
            "customers",
            "get",
            "A",
            "--timezone",
            "America/Los_Angeles",
        ],
        &["--as-of", "2024-01-01T05:00:00Z"][..],
    ]
    .concat());
    assert_eq!(json(&customer)["status"], "lead");
    // Where the records are, after the command.
    let summary = run(&[&["reports", "summary", "--data", &data], &at[..]].concat());
    assert_eq!(json(&summary)["summary"]["mrr_current"], 13000);
    let strict = run(&[&["movements", "--data", &data, "--strict"], &at[..]].concat());
    assert_eq!(
        stderr(&strict),
        format!(
            "{}error: 1 record(s) rejected (--strict)\n{FIXTURE_LOADED}",
            fixture_rejected()
        )
    );
    // Given twice, before and after the command, an option is an error.
    for (args, name) in [
        (
            &[
                "--data",
                &data,
                "--timezone",
                "UTC",
                "movements",
                "--timezone",
                "UTC",
            ][..],
            "--timezone",
        ),
        (
            &["--data", &data, "reports", "summary", "--data", &data][..],
            "--data",
        ),
        (
            &[
                "--strict",
                "--data",
                &data,
                "customers",
                "get",
                "A",
                "--strict",
            ][..],
            "--strict",
        ),
    ] {
        let out = run(args);
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        assert_eq!(
            stderr(&out),
            format!("error: {name} is given twice; give it once\n")
        );
    }
}

#[test]
fn the_base_currency_twice_and_verbose_are_refused_offline_as_online() {
    // `--base-currency` is the reports' currency, as online where it is
    // `--baseCurrency`: both is one parameter given twice.
    for args in [
        &[
            "reports",
            "summary",
            "--base-currency",
            "EUR",
            "--baseCurrency",
            "USD",
        ][..],
        &[
            "--base-currency",
            "EUR",
            "customers",
            "list",
            "--baseCurrency=USD",
        ][..],
    ] {
        let out = local(args);
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        assert!(out.stdout.is_empty());
        assert_eq!(
            stderr(&out),
            format!(
                "error: --baseCurrency is given twice (`EUR`, then `USD`); a parameter takes one \
                 value (several ids go in one, space-separated)\n{NOTHING_LOADED}"
            ),
            "{args:?}"
        );
    }
    // Either alone is the currency of the answer.
    let summary = |args: &[&str]| json(&local(&[&["reports", "summary"], args].concat()));
    assert_eq!(
        summary(&["--baseCurrency", "EUR"]),
        summary(&["--base-currency", "EUR"])
    );
    // Offline there is no traffic to log.
    let out = local(&["--verbose", "movements"]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        stderr(&out),
        "error: --verbose logs the traffic with the service; local computes offline, from files\n"
    );
}

#[test]
fn an_empty_value_is_an_error_naming_its_option() {
    // Read as not given, it used to match everything.
    for (args, option) in [
        (&["movements", "--kinds", ""][..], "--kinds"),
        (&["movements", "--customer="][..], "--customer"),
        (&["reports", "mrr", "--plan", " "][..], "--plan"),
        (&["customers", "list", "--q", ""][..], "--q"),
    ] {
        let out = local(args);
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        assert!(out.stdout.is_empty());
        assert_eq!(
            stderr(&out),
            format!(
                "error: {option} has an empty value; give it one, or leave the option out\n{NOTHING_LOADED}"
            ),
            "{args:?}"
        );
    }
}
