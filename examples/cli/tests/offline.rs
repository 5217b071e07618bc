//! Offline mode on the fixture in testdata/local: every command group of
//! `local`, each format, rejections and settings.

use serde_json::Value;
use std::process::{Command, Output};

fn data_dir() -> String {
    concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/local").to_string()
}

fn local(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_submetrics"))
        .args([
            "local",
            "--data",
            &data_dir(),
            "--as-of",
            "2024-03-15T00:00:00Z",
        ])
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
    serde_json::from_slice(&output.stdout).expect("JSON on stdout when piped")
}

#[test]
fn reports_run_offline_with_exact_values() {
    let out = local(&["reports", "summary"]);
    assert_eq!(json(&out)["summary"]["mrr_current"], 13000);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("rejected: invoice bad: field `customer_id`: customer `Z` does not exist"),
        "{stderr}"
    );
    let mrr = json(&local(&["reports", "mrr", "--date", "20240101-20240331"]));
    let totals: Vec<i64> = mrr["result"]
        .as_array()
        .expect("periods")
        .iter()
        .map(|p| p["total_mrr"].as_i64().expect("int"))
        .collect();
    assert_eq!(totals, vec![13000, 16000, 13000]);
    let filtered = json(&local(&[
        "reports",
        "mrr",
        "--date=20240101-20240331",
        "--country",
        "FR",
    ]));
    assert_eq!(filtered["result"][1]["new"], 3000);
}

#[test]
fn formats_table_and_csv() {
    let table = local(&[
        "reports",
        "mrr",
        "--date",
        "20240101-20240331",
        "--format",
        "table",
    ]);
    let text = String::from_utf8_lossy(&table.stdout);
    let lines: Vec<&str> = text.lines().collect();
    assert!(
        lines[0].starts_with("date        end_date    new"),
        "{text}"
    );
    assert!(
        lines[2].contains("$130.00") && lines[4].contains("-$30.00"),
        "{text}"
    );
    let csv = local(&[
        "--format",
        "csv",
        "reports",
        "movement-table",
        "--date",
        "20240101-20240331",
    ]);
    let text = String::from_utf8_lossy(&csv.stdout);
    let mut lines = text.split("\r\n");
    assert!(
        lines
            .next()
            .expect("header")
            .starts_with("date,movement_date,currency,customer_id,customer_name")
    );
    assert_eq!(
        lines
            .next()
            .expect("first row")
            .split(',')
            .take(5)
            .collect::<Vec<_>>(),
        vec!["2024-03-01", "2024-03-01", "EUR", "C", "Gamma"],
        "C's renewal never came: it lapsed at its coverage end, before its cancellation"
    );
    let customers = local(&[
        "customers",
        "list",
        "--status",
        "all",
        "--sort",
        "id",
        "--order",
        "asc",
        "--format",
        "csv",
    ]);
    let text = String::from_utf8_lossy(&customers.stdout);
    assert!(
        text.contains("A,\"Acme, Inc.\""),
        "quoted for a spreadsheet: {text}"
    );
}

#[test]
fn customers_and_movements() {
    let list = json(&local(&["customers", "list", "--status", "all"]));
    assert_eq!(list["result"]["count"], 3);
    let detail = json(&local(&["customers", "get", "B"]));
    assert_eq!(detail["converted_mrr"], 10000);
    assert_eq!(detail["current_subscriptions"][0]["plan_id"], "y");
    let churn = json(&local(&["movements", "--kinds", "churn"]));
    assert_eq!(churn.as_array().map(Vec::len), Some(1));
    assert_eq!(churn[0]["customer_id"], "C");
    assert_eq!(churn[0]["mrr_change_base_currency"], -3000);
    let missing = local(&["customers", "get", "Z"]);
    assert_eq!(missing.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&missing.stderr).contains("error: customer Z not found"));
}

/// `local --data DIR <options...>`: ledger options go before the command.
fn local_in(dir: &str, options: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_submetrics"))
        .args(["local", "--data", dir])
        .args(options)
        .output()
        .expect("run the client")
}

fn summary(output: &Output) -> (Value, Value) {
    let value = json(output);
    (
        value["currency"].clone(),
        value["summary"]["mrr_current"].clone(),
    )
}

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

fn leading_zeros() -> String {
    format!("{}/leading-zeros", data_dir())
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
            "--date",
            "20240101-20240229",
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
    let out_file = dir.join("out.json");
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
fn table_reports_format_money_rows_and_keep_counts_and_rates() {
    let out = local(&[
        "reports",
        "mrr-table",
        "--date",
        "20240101-20240331",
        "--format",
        "table",
    ]);
    assert!(out.status.success());
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "\
metric               label                      2024-01-01  2024-02-01  2024-03-01
-------------------  -------------------------  ----------  ----------  ----------
total_mrr            MRR                           $130.00     $160.00     $130.00
total_arr            ARR                         $1,560.00   $1,920.00   $1,560.00
total_customers      Customers                           2           3           2
new                  New MRR                       $130.00      $30.00       $0.00
expansion            Expansion MRR                   $0.00       $0.00       $0.00
contraction          Contraction MRR                 $0.00       $0.00       $0.00
churn                Churned MRR                     $0.00       $0.00     -$30.00
reactivation         Reactivation MRR                $0.00       $0.00       $0.00
fx_adjustment        FX adjustment                   $0.00       $0.00       $0.00
mrr_diff             Net MRR change                $130.00      $30.00     -$30.00
customers_diff       Net customer change                 2           1          -1
arpa                 ARPA                           $65.00      $53.33      $65.00
asp                  ASP                            $65.00      $30.00       $0.00
customer_churn_rate  Customer churn rate (%)                      0.00       33.33
mrr_churn_rate       MRR churn rate (%)                           0.00       18.75
net_mrr_churn_rate   Net MRR churn rate (%)                       0.00       18.75
nrr                  Net revenue retention (%)                  100.00       81.25
quick_ratio          Quick ratio                                              0.00
ltv                  LTV                                                   $390.00
"
    );
    let subtypes = local(&[
        "reports",
        "mrr-table-subtypes",
        "--date",
        "20240301-20240331",
        "--format",
        "table",
    ]);
    assert_eq!(
        String::from_utf8_lossy(&subtypes.stdout),
        "\
metric          type          label                2024-03-01
--------------  ------------  -------------------  ----------
new             new           New                       $0.00
new_from_trial  new           New from trial            $0.00
expansion       expansion     Expansion                 $0.00
upgrade         expansion     Upgrade                   $0.00
contraction     contraction   Contraction               $0.00
downgrade       contraction   Downgrade                 $0.00
cancellation    churn         Churn: cancellation       $0.00
refund          churn         Churn: refund             $0.00
lapse           churn         Churn: lapse            -$30.00
reactivation    reactivation  Reactivation              $0.00
total_mrr                     MRR                     $130.00
"
    );
    let transactions = local(&[
        "reports",
        "transactions-table",
        "--date",
        "20240101-20240131",
        "--format",
        "table",
    ]);
    assert_eq!(
        String::from_utf8_lossy(&transactions.stdout),
        "\
metric          label                  2024-01-01
--------------  ---------------------  ----------
net             Net cash                $1,230.00
payments        Payments                $1,230.00
month_sub       Monthly subscriptions      $30.00
year_sub        Annual subscriptions    $1,200.00
week_sub        Weekly subscriptions        $0.00
day_sub         Daily subscriptions         $0.00
metered         Metered                     $0.00
one_time        One-time                    $0.00
refund          Refunds                     $0.00
discount        Discounts                   $0.00
fee             Fees                        $0.00
count           Transactions                    2
payments_count  Payments (count)                2
refund_count    Refunds (count)                 0
"
    );
    let leads = local(&[
        "reports",
        "leads-table",
        "--date",
        "20240101-20240229",
        "--format",
        "table",
    ]);
    assert_eq!(
        String::from_utf8_lossy(&leads.stdout),
        "\
metric              label                   2024-01-01  2024-02-01
------------------  ----------------------  ----------  ----------
leads               Leads                            2           1
trials              Trials started                   0           0
conversions         Conversions                      2           1
lead_to_paid_rate   Lead-to-paid rate (%)       100.00      100.00
trial_to_paid_rate  Trial-to-paid rate (%)
"
    );
    // CSV keeps raw cents for a spreadsheet.
    let csv = local(&[
        "reports",
        "mrr-table",
        "--date",
        "20240101-20240331",
        "--format",
        "csv",
    ]);
    let text = String::from_utf8_lossy(&csv.stdout);
    assert_eq!(
        text.split("\r\n").take(2).collect::<Vec<_>>(),
        vec![
            "metric,label,2024-01-01,2024-02-01,2024-03-01",
            "total_mrr,MRR,13000,16000,13000"
        ]
    );
}

#[test]
fn movement_tables_show_base_amounts_in_the_base_currency() {
    let out = local(&["movements", "--kinds", "new,churn", "--format", "table"]);
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "\
date        customer_id  type   subtype  mrr_change  mrr_change_base_currency  customer_count_change  quantity_change  currency  plans_before  plans_after
----------  -----------  -----  -------  ----------  ------------------------  ---------------------  ---------------  --------  ------------  -----------
2024-01-01  A            new    new          $30.00                    $30.00                      1                1  USD       []            [\"m\"]
2024-01-15  B            new    new         $100.00                   $100.00                      1                1  USD       []            [\"y\"]
2024-02-01  C            new    new          €27.00                    $30.00                      1                1  EUR       []            [\"e\"]
2024-03-01  C            churn  lapse       -€27.00                   -$30.00                     -1               -1  EUR       [\"e\"]         []
"
    );
    let eur = local_in(
        &data_dir(),
        &[
            "--as-of",
            "2024-03-15T00:00:00Z",
            "--base-currency",
            "eur",
            "movements",
            "--kinds",
            "new",
            "--format",
            "table",
        ],
    );
    assert_eq!(
        String::from_utf8_lossy(&eur.stdout),
        "\
date        customer_id  type  subtype  mrr_change  mrr_change_base_currency  customer_count_change  quantity_change  currency  plans_before  plans_after
----------  -----------  ----  -------  ----------  ------------------------  ---------------------  ---------------  --------  ------------  -----------
2024-01-01  A            new   new          $30.00                    €27.00                      1                1  USD       []            [\"m\"]
2024-01-15  B            new   new         $100.00                    €90.00                      1                1  USD       []            [\"y\"]
2024-02-01  C            new   new          €27.00                    €27.00                      1                1  EUR       []            [\"e\"]
"
    );
}

/// The fixture's closing stderr line: the `bad` invoice is rejected.
const FIXTURE_LOADED: &str = "loaded 3 customers, 3 plans, 6 invoices; rejected 1\n";

/// Refused before anything loads: no record is read (so none is rejected).
const NOTHING_LOADED: &str = "loaded 0 customers, 0 plans, 0 invoices; rejected 0\n";

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
            "rejected: invoice bad: field `customer_id`: customer `Z` does not exist; send the customer first\n\
             error: customer nobody not found\n{FIXTURE_LOADED}"
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
    assert_eq!(
        String::from_utf8_lossy(&bad.stderr),
        "error: invalid value 'monday' for '--first-day-of-week': not a whole number\n"
    );
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
            "rejected: invoice i1: field `customer_id`: customer `Z` does not exist; send the customer first\n\
             error: --data {}: every record of invoices was rejected\n\
             loaded 1 customers, 0 plans, 0 invoices; rejected 1\n",
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
