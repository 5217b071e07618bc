//! Reports: named and passed-through parameters, refusals, `--as-of`.

use crate::server::start;

#[test]
fn reports_with_named_and_passed_through_parameters() {
    let server = start();
    server.seed();
    let mrr = server.json(&[
        "reports",
        "mrr",
        "--date",
        "20240101-20240229",
        "--as-of",
        "2024-02-15",
    ]);
    assert_eq!(mrr["result"][1]["contraction"], -2000);
    assert_eq!(mrr["result"][1]["total_mrr"], 3000);
    let by_country = server.json(&[
        "reports",
        "mrr",
        "--date",
        "20240101-20240229",
        "--as-of",
        "2024-02-15",
        "--country",
        "DE",
        "--breakdown",
        "plan",
    ]);
    assert_eq!(by_country["result"][0]["breakdown"]["m"]["total_mrr"], 3000);
    let table = server.run(&[
        "reports",
        "movement-table",
        "--date",
        "20240101-20240229",
        "--as-of",
        "2024-02-15",
        "--format",
        "table",
        "--no-color",
    ]);
    let text = String::from_utf8_lossy(&table.stdout);
    assert!(
        text.contains("-$20.00") && text.contains("Contraction: Monthly"),
        "{text}"
    );
    let csv = server.run(&[
        "--format",
        "csv",
        "reports",
        "summary",
        "--as-of",
        "2024-02-15",
    ]);
    assert_eq!(
        String::from_utf8_lossy(&csv.stdout),
        "mrr_current,arr_current,subscribers_current,arpa_current\r\n3000,36000,2,1500\r\n"
    );
}

#[test]
fn an_unknown_report_parameter_is_refused_with_a_near_miss() {
    let server = start();
    server.seed();
    let out = server.run(&["reports", "summary", "--curency", "EUR"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty());
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "error: server answered 400: parameter `curency`: report `summary` has no such parameter. Its parameters: baseCurrency\n"
    );
    let out = server.run(&["reports", "churn-scheduled-summary", "--intervall", "month"]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "error: server answered 400: parameter `intervall`: report `churn-scheduled-summary` has no such parameter; \
         did you mean `interval`? Its parameters: interval, baseCurrency, fix_fx, fx_date, currency, customer, plan, \
         billing_freq, pricing_model, status, country, region, industry, size, channel, market, payment_method, age, \
         data_source\n"
    );
}

#[test]
fn as_of_means_the_same_before_and_after_the_command() {
    let server = start();
    server.seed();
    let before = server.json(&["--as-of", "2024-01-15", "reports", "summary"]);
    assert_eq!(before["summary"]["mrr_current"], 5000);
    assert_eq!(
        server.json(&["reports", "summary", "--as-of", "2024-01-15"]),
        before
    );
    let mrr = |args: &[&str]| server.json(args)["result"][0]["total_mrr"].clone();
    assert_eq!(
        mrr(&[
            "reports",
            "mrr",
            "--date",
            "20240101-20240131",
            "--as-of",
            "2024-01-15"
        ]),
        5000
    );
    assert_eq!(
        mrr(&[
            "--as-of",
            "2024-01-15",
            "reports",
            "mrr",
            "--date",
            "20240101-20240131"
        ]),
        5000
    );
}
