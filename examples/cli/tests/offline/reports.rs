//! Reports, customers and movements offline, in every format, with exact
//! values.

use crate::fixture::*;

#[test]
fn reports_run_offline_with_exact_values() {
    let out = local(&["reports", "summary"]);
    assert_eq!(json(&out)["summary"]["mrr_current"], 13000);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(stderr, format!("{}{FIXTURE_LOADED}", fixture_rejected()));
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

#[test]
fn money_in_the_base_currency_is_shown_in_it_whatever_the_rows_currency() {
    // MRR of the customer list is converted to the base currency, not in
    // each customer's billing currency.
    let customers = local(&[
        "--base-currency",
        "EUR",
        "customers",
        "list",
        "--status",
        "all",
        "--format",
        "table",
    ]);
    assert_eq!(
        stdout(&customers),
        "\
id  name        email  created_date  country  trial_started  paid_started          cancel_date           status     currency  mrr
--  ----------  -----  ------------  -------  -------------  --------------------  --------------------  ---------  --------  ------
B   Beta                             US                      2024-01-15T00:00:00Z                        active     USD       €90.00
A   Acme, Inc.                       DE                      2024-01-01T00:00:00Z                        active     USD       €27.00
C   Gamma                            FR                      2024-02-01T00:00:00Z  2024-03-01T00:00:00Z  cancelled  EUR        €0.00
"
    );
    // A report's `baseCurrency` is the currency of its base amounts.
    let movements = local(&[
        "reports",
        "movement-table",
        "--date",
        "20240301-20240331",
        "--baseCurrency",
        "EUR",
        "--format",
        "table",
    ]);
    assert_eq!(
        stdout(&movements),
        "\
date        movement_date  currency  customer_id  customer_name  customer_email  type   subtype  description                       mrr_change  mrr_change_base_currency  customer_count_change  quantity_change  plans_before  plans_after
----------  -------------  --------  -----------  -------------  --------------  -----  -------  --------------------------------  ----------  ------------------------  ---------------------  ---------------  ------------  -----------
2024-03-01  2024-03-01     EUR       C            Gamma                          churn  lapse    Lapsed, not renewed: Monthly EUR     -€27.00                   -€27.00                     -1               -1  [\"e\"]         []
"
    );
}

/// Amounts are cents in every currency; one without a minor unit shows
/// in whole units: 123456700 KRW cents are 1,234,567 won.
#[test]
fn money_without_a_minor_unit_shows_whole_units() {
    let dir = scratch_dir(
        "zero-decimal-currencies",
        &[
            (
                "plans.json",
                r#"[{"id": "k", "name": "Won", "interval": "month", "currency": "KRW"}]"#,
            ),
            ("customers.json", r#"[{"id": "K", "name": "Kim"}]"#),
            (
                "invoices.json",
                r#"[{"id": "k1", "customer_id": "K", "type": "subscription", "plan_id": "k",
                     "invoice_date": "2024-01-01", "amount": 123456700, "currency": "KRW"}]"#,
            ),
        ],
    );
    let run = |args: &[&str]| {
        let out = local_in(
            &dir,
            &[&["--as-of", "2024-01-15", "--base-currency", "KRW"], args].concat(),
        );
        assert!(out.status.success(), "{}", stderr(&out));
        stdout(&out)
    };
    assert_eq!(
        run(&["reports", "summary", "--format", "table"]),
        "\
mrr_current    arr_current     subscribers_current  arpa_current
-------------  --------------  -------------------  -------------
1,234,567 KRW  14,814,804 KRW                    1  1,234,567 KRW
"
    );
    assert_eq!(
        run(&["movements", "--format", "table"]),
        "\
date        customer_id  type  subtype  mrr_change     mrr_change_base_currency  customer_count_change  quantity_change  currency  plans_before  plans_after
----------  -----------  ----  -------  -------------  ------------------------  ---------------------  ---------------  --------  ------------  -----------
2024-01-01  K            new   new      1,234,567 KRW             1,234,567 KRW                      1                1  KRW       []            [\"k\"]
"
    );
}
