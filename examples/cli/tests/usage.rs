//! The command line itself, no server needed: --help and --version succeed,
//! every usage error exits 1 with its message on stderr and nothing on stdout.

use std::process::{Command, Output};

fn client(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_submetrics"))
        .args(args)
        .env_remove("SUBMETRICS_API_KEY")
        .env_remove("SUBMETRICS_API_URL")
        .env("HOME", env!("CARGO_TARGET_TMPDIR"))
        .output()
        .expect("run the client")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Exit 1, nothing on stdout, and exactly `stderr`.
fn usage_error(args: &[&str], stderr: &str) {
    let out = client(args);
    assert_eq!(out.status.code(), Some(1), "{args:?}");
    assert_eq!(text(&out.stdout), "", "{args:?}");
    assert_eq!(text(&out.stderr), stderr, "{args:?}");
}

#[test]
fn version_and_help_succeed_on_stdout() {
    let version = client(&["--version"]);
    assert_eq!(version.status.code(), Some(0));
    assert_eq!(
        text(&version.stdout),
        format!("submetrics {}\n", env!("CARGO_PKG_VERSION"))
    );
    assert_eq!(text(&version.stderr), "");

    let help = client(&["--help"]);
    assert_eq!(help.status.code(), Some(0));
    assert_eq!(text(&help.stderr), "");
    let help = text(&help.stdout);
    let commands: Vec<&str> = help
        .lines()
        .skip_while(|l| *l != "Commands:")
        .skip(1)
        .take_while(|l| !l.is_empty())
        .map(|l| l.split_whitespace().next().unwrap_or(""))
        .collect();
    assert_eq!(
        commands,
        vec![
            "reports",
            "customers",
            "plans",
            "data",
            "exports",
            "import",
            "settings",
            "integrations",
            "account",
            "api",
            "local",
            "stripe",
            "help"
        ]
    );
    assert_eq!(
        help.lines().take(3).collect::<Vec<_>>(),
        vec![
            "The submetrics client: reports, customers and data from the REST API, or offline from exported files",
            "",
            "Usage: submetrics [OPTIONS] <COMMAND>",
        ]
    );
    assert!(help.ends_with(
        "The API key comes from --api-key, else SUBMETRICS_API_KEY, else `api_key` in ~/.submetrics.json.\n"
    ));

    let sub = client(&["data", "--help"]);
    assert_eq!(sub.status.code(), Some(0));
    assert!(
        text(&sub.stdout).contains("Usage: submetrics data [OPTIONS] <RESOURCE> <COMMAND>"),
        "{}",
        text(&sub.stdout)
    );
}

#[test]
fn usage_errors_exit_1() {
    usage_error(
        &["frobnicate"],
        "error: unrecognized subcommand 'frobnicate'\n\nUsage: submetrics [OPTIONS] <COMMAND>\n\nFor more information, try '--help'.\n",
    );
    usage_error(
        &["customers", "get"],
        "error: the following required arguments were not provided:\n  <ID>\n\nUsage: submetrics customers get <ID>\n\nFor more information, try '--help'.\n",
    );
    usage_error(
        &["customers", "list", "--limit", "ten"],
        "error: invalid value 'ten' for '--limit <LIMIT>': invalid digit found in string\n\nFor more information, try '--help'.\n",
    );
    usage_error(
        &["data", "widgets", "list"],
        "error: invalid value 'widgets' for '<RESOURCE>'\n  [possible values: customers, plans, plan-groups, data-sources, invoices]\n\nFor more information, try '--help'.\n",
    );
    usage_error(
        &["--format", "xml", "reports", "mrr"],
        "error: invalid value 'xml' for '--format <FORMAT>'\n  [possible values: auto, json, table, csv]\n\nFor more information, try '--help'.\n",
    );
    // No command at all: the help goes to stderr, and it is an error.
    let bare = client(&[]);
    assert_eq!(bare.status.code(), Some(1));
    assert_eq!(text(&bare.stdout), "");
    assert!(text(&bare.stderr).contains("Usage: submetrics [OPTIONS] <COMMAND>"));
}

#[test]
fn a_bad_format_after_report_parameters_is_an_error() {
    for args in [
        &[
            "reports",
            "mrr",
            "--date",
            "20240101-20240229",
            "--format",
            "xml",
        ][..],
        &[
            "reports",
            "mrr",
            "--date",
            "20240101-20240229",
            "--format=xml",
        ][..],
    ] {
        usage_error(
            args,
            "error: invalid value 'xml' for '--format <FORMAT>' [possible values: auto, json, table, csv]\n",
        );
    }
    usage_error(
        &[
            "local", "--data", ".", "reports", "summary", "--format", "xml",
        ],
        "error: invalid value 'xml' for '--format <FORMAT>'\n  [possible values: auto, json, table, csv]\n\nFor more information, try '--help'.\n",
    );
    usage_error(
        &[
            "exports",
            "movements",
            "--date",
            "20240101-20240229",
            "--api-url",
        ],
        "error: --api-url needs a value\n",
    );
}

#[test]
fn a_get_with_a_body_is_refused() {
    usage_error(
        &["api", "GET", "/account", "--body", "{\"a\": 1}"],
        "error: GET sends no body: pass query parameters as key=value\n",
    );
    usage_error(
        &["api", "head", "/account", "--body", "-"],
        "error: HEAD sends no body: pass query parameters as key=value\n",
    );
}

#[test]
fn a_body_field_given_twice_is_refused_before_anything_is_sent() {
    // Port 9 answers nothing: each refusal comes before a request.
    fn run<'a>(args: &[&'a str]) -> Vec<&'a str> {
        [
            &["--api-url", "http://127.0.0.1:9", "--api-key", "sm_x"][..],
            args,
        ]
        .concat()
    }
    usage_error(
        &run(&[
            "data",
            "plans",
            "create",
            "--body",
            r#"{"id": "p", "name": "A", "name": "B"}"#,
        ]),
        "error: the body is not valid JSON: the key `name` is given twice in one object; \
         give it once at line 1 column 31\n",
    );
    usage_error(
        &run(&[
            "api",
            "POST",
            "/data/plans",
            "--body",
            r#"{"id": "p1"}"#,
            "id=p2",
        ]),
        "error: the body field `id` is given twice (in --body or as key=value); give it once\n",
    );
    usage_error(
        &run(&["api", "POST", "/data/plans", "name=One", "name=Two"]),
        "error: the body field `name` is given twice (in --body or as key=value); give it once\n",
    );
}

#[test]
fn reports_help_lists_every_report() {
    let names = "summary, mrr, cmrr-summary, cohort, churn-scheduled, churn-scheduled-movements, churn-scheduled-summary, map, customer-concentration, custom-variables, movement-table, invoices-detail, mrr-table, mrr-table-subtypes, leads, leads-days, leads-summary, leads-table, transactions, transactions-detail, transactions-summary, transactions-table, cashflow-failed-payments, cashflow-failed-payments-detail, cashflow-failed-payments-summary, cashflow-failed-payments-table, cashflow-refunds, cashflow-refunds-detail, cashflow-refunds-table, cashflow-failure-rate, cashflow-failure-rate-summary, cashflow-outstanding-unpaid";
    for args in [
        &["reports", "--help"][..],
        &["local", "--data", ".", "reports", "--help"][..],
    ] {
        let help = client(args);
        assert_eq!(help.status.code(), Some(0), "{args:?}");
        assert!(
            text(&help.stdout).ends_with(&format!(
                "Reports: {names}.\nGET /reports on the service lists each report's parameters.\n"
            )),
            "{args:?}: {}",
            text(&help.stdout)
        );
    }
}

#[test]
fn as_of_on_a_command_that_computes_nothing_is_refused() {
    usage_error(
        &[
            "data",
            "plans",
            "list",
            "--as-of",
            "2024-01-01",
            "--api-key",
            "k",
        ],
        "error: --as-of applies to reports, customers list and get, exports movements and local\n",
    );
}

#[test]
fn the_services_address_or_key_on_an_offline_command_is_refused() {
    // They used to be passed over: `local` never talks to the service.
    for option in ["--api-url", "--api-key"] {
        usage_error(
            &["local", "--data", ".", option, "x", "reports", "summary"],
            "error: --api-url and --api-key are the service's; local computes offline, from files\n",
        );
    }
    usage_error(
        &["stripe", "export", "--to", "out", "--api-url", "http://x"],
        "error: --api-url is the service's; stripe export talks to Stripe (its key is --api-key)\n",
    );
    // --verbose logs the service's traffic, which neither has.
    usage_error(
        &["stripe", "export", "--to", "out", "--verbose"],
        "error: --verbose logs the traffic with the service; stripe export talks to Stripe\n",
    );
}

#[test]
fn an_option_or_report_parameter_given_twice_is_refused() {
    // The later one used to win unseen.
    usage_error(
        &["--format", "csv", "reports", "mrr", "--format", "json"],
        "error: --format is given twice; give it once\n",
    );
    // A flag after the parameters too, and it takes no value.
    let summary = ["reports", "summary", "--baseCurrency", "USD"];
    for (more, message) in [
        (
            &["--no-color", "--no-color"][..],
            "--no-color is given twice; give it once",
        ),
        (&["--verbose=false"][..], "--verbose takes no value"),
    ] {
        usage_error(
            &[&summary[..], more].concat(),
            &format!("error: {message}\n"),
        );
    }
    usage_error(
        &[
            "--no-color",
            "reports",
            "summary",
            "--baseCurrency",
            "USD",
            "--no-color",
        ],
        "error: --no-color is given twice; give it once\n",
    );
    usage_error(
        &[
            "--as-of=2024-01-01",
            "local",
            "--data",
            ".",
            "--as-of",
            "2024-02-01",
            "reports",
            "mrr",
        ],
        "error: --as-of is given twice; give it once\n",
    );
    usage_error(
        &[
            "reports",
            "mrr",
            "--interval",
            "month",
            "--date",
            "20240101-20240301",
            "--interval=week",
        ],
        "error: --interval is given twice (`month`, then `week`); a parameter takes one value \
         (several ids go in one, space-separated)\n",
    );
    usage_error(
        &[
            "reports",
            "mrr",
            "--api-url",
            "http://127.0.0.1:9",
            "--plan",
            "a",
            "--plan",
            "b",
        ],
        "error: --plan is given twice (`a`, then `b`); a parameter takes one value (several ids go \
         in one, space-separated)\n",
    );
}

#[test]
fn a_local_option_given_again_after_the_report_parameters_is_refused() {
    let out = client(&[
        "local",
        "--data",
        ".",
        "--timezone",
        "UTC",
        "reports",
        "mrr",
        "--timezone",
        "Europe/Paris",
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(text(&out.stdout), "");
    assert!(
        text(&out.stderr).starts_with("error: --timezone is given twice; give it once\n"),
        "{}",
        text(&out.stderr)
    );
}
