//! What a report answers beside its rows (totals, buckets, shares), in a
//! table and as CSV, and the header of an empty list.

use crate::fixture::*;
use serde_json::Value;

/// A directory of the records of the scenario file `path` (under
/// testdata/scenarios), and its `as_of`.
fn scenario(path: &str) -> (String, String) {
    let file = format!("{}/../scenarios/{path}", data_dir());
    let scenario: Value = serde_json::from_str(&std::fs::read_to_string(file).unwrap()).unwrap();
    let texts: Vec<(String, String)> = ["customers", "plans", "invoices", "fx_rates"]
        .iter()
        .map(|kind| (format!("{kind}.json"), scenario[kind].to_string()))
        .collect();
    let files: Vec<(&str, &str)> = texts
        .iter()
        .map(|(n, t)| (n.as_str(), t.as_str()))
        .collect();
    let name = path.rsplit('/').next().unwrap().trim_end_matches(".json");
    let as_of = scenario["as_of"].as_str().unwrap().to_string();
    (scratch_dir(name, &files), as_of)
}

#[test]
fn a_table_shows_the_parts_beside_the_rows_after_them() {
    let (dir, as_of) = scenario("reports/cashflow/409-cashflow-outstanding-unpaid.json");
    let run = |args: &[&str]| {
        let out = local_in(
            &dir,
            &[&["--as-of", &as_of, "--format", "table"], args].concat(),
        );
        assert!(out.status.success(), "{}", stderr(&out));
        stdout(&out)
    };
    assert_eq!(
        run(&["reports", "cashflow-outstanding-unpaid", "--limit", "1"]),
        "\
invoice_id  invoice_number  customer_id  customer_name  customer_email  type      status  invoice_date          due_date  days_past_due  bucket  currency  total   amount  amount_base_currency
----------  --------------  -----------  -------------  --------------  --------  ------  --------------------  --------  -------------  ------  --------  ------  ------  --------------------
c7                          C            Gamma          c@gamma.test    one-time  open    2024-03-12T00:00:00Z                        8  0-30    USD       $20.00  $15.00                $15.00
(1 of 6 rows)

total:
count  amount
-----  -------
    6  $122.11

buckets:
bucket  count  amount
------  -----  ------
0-30        3  $57.00
31-60       1   $4.00
61-90       1  $11.11
90+         1  $50.00
"
    );
    assert_eq!(
        run(&["reports", "customer-concentration"]),
        "\
rank  customer_id  customer_name  mrr     share  cumulative_share
----  -----------  -------------  ------  -----  ----------------
   1  B            Beta           $83.33  60.24             60.24
   2  A            Alpha          $30.00  21.69             81.93
   3  C            Gamma          $25.00  18.07            100.00

total_mrr  customers  herfindahl  hhi
---------  ---------  ----------  -------
  $138.33          3        0.44  4425.82

top:
percent  customers  mrr     share
-------  ---------  ------  -----
      1          1  $83.33  60.24
      5          1  $83.33  60.24
     10          1  $83.33  60.24
     20          1  $83.33  60.24
"
    );
    assert_eq!(
        run(&["reports", "map"]),
        "\
country  region         customers  mrr     arr      arpa    share
-------  -------------  ---------  ------  -------  ------  -----
DE       europe                 1  $83.33  $999.96  $83.33  60.24
US       north_america          2  $55.00  $660.00  $27.50  39.76

total:
customers  mrr      arpa
---------  -------  ------
        3  $138.33  $46.11
"
    );
    assert_eq!(
        run(&["reports", "cmrr-summary"]),
        "\
mrr_current  cmrr     change  customers_current  customers_committed  scheduled_new  scheduled_expansion  scheduled_contraction  scheduled_churn  scheduled_reactivation
-----------  -------  ------  -----------------  -------------------  -------------  -------------------  ---------------------  ---------------  ----------------------
    $138.33  $138.33   $0.00                  3                    3          $0.00                $0.00                  $0.00            $0.00                   $0.00

scheduled:
(no rows)
"
    );
}

/// CSV holds one table: the parts beside the rows (totals and figures of
/// them) are left out with a note on stderr naming them, never silently.
#[test]
fn csv_leaves_out_parts_beside_the_rows_with_a_note() {
    let (dir, as_of) = scenario("reports/cashflow/409-cashflow-outstanding-unpaid.json");
    let run = |args: &[&str]| {
        local_in(
            &dir,
            &[&["--as-of", &as_of, "--format", "csv"], args].concat(),
        )
    };
    for (report, parts) in [
        ("cashflow-outstanding-unpaid", "`total` and `buckets`"),
        ("map", "`total`"),
        (
            "customer-concentration",
            "`total_mrr`, `customers`, `herfindahl`, `hhi` and `top`",
        ),
        ("custom-variables", "`total`"),
    ] {
        let out = run(&["reports", report]);
        assert_eq!(out.status.code(), Some(0), "{report}");
        assert_eq!(
            stderr(&out),
            format!(
                "note: the answer also holds {parts} beside its rows, which CSV (one table) \
                 leaves out; --format json or --format table shows them\n\
                 loaded 4 customers, 5 plans, 17 invoices; rejected 0\n"
            ),
            "{report}"
        );
    }
    assert_eq!(
        stdout(&run(&["reports", "map"])),
        "country,region,customers,mrr,arr,arpa,share\r\n\
         DE,europe,1,8333,99996,8333,60.24000578327188\r\n\
         US,north_america,2,5500,66000,2750,39.75999421672812\r\n"
    );
    // A summary's one row holds them as columns.
    assert_eq!(
        stdout(&run(&["reports", "cmrr-summary"])),
        "mrr_current,cmrr,change,customers_current,customers_committed,scheduled_new,\
         scheduled_expansion,scheduled_contraction,scheduled_churn,scheduled_reactivation,scheduled\r\n\
         13833,13833,0,3,3,0,0,0,0,0,[]\r\n"
    );
}

#[test]
fn an_empty_list_as_csv_has_its_header() {
    let run = |args: &[&str]| stdout(&local(&[&["--format", "csv"], args].concat()));
    assert_eq!(
        run(&["movements", "--from", "2020-01-01", "--to", "2020-01-31"]),
        "date,customer_id,type,subtype,mrr_change,mrr_change_base_currency,customer_count_change,\
         quantity_change,currency,plans_before,plans_after\r\n"
    );
    assert_eq!(
        run(&["customers", "list", "--q", "nobody"]),
        "id,name,email,created_date,country,trial_started,paid_started,cancel_date,status,currency,mrr\r\n"
    );
    // A report's declared columns, as the service's CSV names them.
    assert_eq!(
        run(&["reports", "movement-table", "--date", "20200101-20200131"]),
        "date,movement_date,period,type,subtype,description,currency,mrr_change,\
         mrr_change_base_currency,customer_count_change,quantity_change,plans_before,plans_after,\
         lines,customer_id,customer_name,customer_email\r\n"
    );
}
