//! A terminal gets tables and colours; a pipe gets JSON.

use crate::server::start;
use serde_json::Value;

#[test]
fn a_terminal_gets_a_table_and_a_pipe_gets_json() {
    let server = start();
    server.seed();
    let piped = server.run(&["plans", "list"]);
    let piped: Value = serde_json::from_slice(&piped.stdout).expect("JSON when piped");
    assert_eq!(piped["result"]["list"][0]["id"], "m");
    assert_eq!(
        server.terminal(&["plans", "list"], &[]),
        "\
id  name     billing_freq  billing_freq_count  currency  product_name  data_source  pricing_model
--  -------  ------------  ------------------  --------  ------------  -----------  -------------
m   Monthly  month                          1  USD                                  licensed
"
    );
    // An explicit format wins over the terminal, and over the pipe.
    let json_on_terminal = server.terminal(&["--format", "json", "plans", "list"], &[]);
    assert_eq!(
        serde_json::from_str::<Value>(&json_on_terminal).expect("JSON on a terminal"),
        piped
    );
    assert_eq!(
        server.json(&["--format", "json", "plans", "list"]),
        piped,
        "--format json when piped"
    );
    let table_piped = server.run(&["plans", "list", "--format", "table"]);
    assert_eq!(
        String::from_utf8_lossy(&table_piped.stdout),
        server.terminal(&["plans", "list"], &[])
    );
}

#[test]
fn negative_amounts_are_red_on_a_terminal_unless_no_color() {
    let server = start();
    server.seed();
    let args = [
        "reports",
        "movement-table",
        "--date",
        "20240201-20240229",
        "--as-of",
        "2024-02-15",
    ];
    let colored = server.terminal(&args, &[]);
    let plain = "\
date        movement_date  currency  customer_id  customer_name  customer_email  type         subtype      description           mrr_change  mrr_change_base_currency  customer_count_change  quantity_change  plans_before  plans_after
----------  -------------  --------  -----------  -------------  --------------  -----------  -----------  --------------------  ----------  ------------------------  ---------------------  ---------------  ------------  -----------
2024-02-01  2024-02-01     USD       A            Acme                           contraction  contraction  Contraction: Monthly     -$20.00                   -$20.00                      0                0  [\"m\"]         [\"m\"]
";
    let red_row = "2024-02-01  2024-02-01     USD       A            Acme                           contraction  contraction  Contraction: Monthly  \x1b[31m   -$20.00\x1b[0m  \x1b[31m                 -$20.00\x1b[0m                      0                0  [\"m\"]         [\"m\"]\n";
    let (head, _) = plain.split_at(plain.find("2024-02-01").expect("the row"));
    assert_eq!(colored, format!("{head}{red_row}"));
    assert_eq!(server.terminal(&args, &[("NO_COLOR", "1")]), plain);
    let mut no_color = args.to_vec();
    no_color.push("--no-color");
    assert_eq!(server.terminal(&no_color, &[]), plain);
    // Piped tables never carry escapes.
    let piped = server.run(&[&args[..], &["--format", "table"]].concat());
    assert_eq!(String::from_utf8_lossy(&piped.stdout), plain);
}

#[test]
fn base_amounts_of_an_answer_that_names_no_currency_are_in_the_accounts_base_currency() {
    let server = start();
    server.seed();
    let customers = [
        "customers",
        "list",
        "--as-of",
        "2024-02-15",
        "--format",
        "table",
    ];
    let table = "\
id  name  email  created_date  country  trial_started  paid_started          cancel_date  status  currency  mrr
--  ----  -----  ------------  -------  -------------  --------------------  -----------  ------  --------  ------
B   Beta                                               2024-01-10T00:00:00Z               active  USD       $20.00
A   Acme                       DE                      2024-01-01T00:00:00Z               active  USD       $10.00
";
    let out = server.run(&customers);
    assert_eq!(String::from_utf8_lossy(&out.stdout), table);
    // Asked with --verbose, the account is read for its base currency.
    let verbose = server.run(&[&customers[..], &["--verbose"]].concat());
    let requests: Vec<String> = String::from_utf8_lossy(&verbose.stderr)
        .lines()
        .filter_map(|line| line.strip_prefix("> GET ").map(str::to_string))
        .collect();
    assert_eq!(
        requests,
        [
            format!("{}/customers?as_of=2024-02-15", server.url),
            format!("{}/account", server.url)
        ]
    );
    // A key that may not read the account gets the amounts as the answer
    // gives them, in cents, rather than with a guess at decimals.
    let readonly = server.json(&["api", "POST", "/account/api-keys", "role=readonly"]);
    let key = readonly["key"].as_str().expect("a readonly key");
    let out = server
        .command()
        .args(customers)
        .env("SUBMETRICS_API_KEY", key)
        .output()
        .expect("run");
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "\
id  name  email  created_date  country  trial_started  paid_started          cancel_date  status  currency  mrr
--  ----  -----  ------------  -------  -------------  --------------------  -----------  ------  --------  ----
B   Beta                                               2024-01-10T00:00:00Z               active  USD       2000
A   Acme                       DE                      2024-01-01T00:00:00Z               active  USD       1000
"
    );
}
