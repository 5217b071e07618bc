//! Bad report calls: each error has a stable code and a text naming the
//! parameter and the values it accepts.

use chrono::{DateTime, Utc};
use submetrics::reports::ReportParams;
use submetrics::{Ledger, Settings};

/// A report name, its parameters and the exact error text expected.
type Case = (
    &'static str,
    &'static [(&'static str, &'static str)],
    &'static str,
);

fn error_of(name: &str, params: &[(&str, &str)]) -> (String, String) {
    let params: ReportParams = params
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let as_of: DateTime<Utc> = "2024-06-01T00:00:00Z".parse().unwrap();
    let error = Ledger::new(Settings::default())
        .report(name, &params, as_of)
        .unwrap_err();
    (error.code().to_string(), error.to_string())
}

/// Each case fails with `invalid_query` and exactly its expected text.
fn assert_invalid_queries(cases: &[Case]) {
    for (name, params, expected) in cases {
        assert_eq!(
            error_of(name, params),
            ("invalid_query".to_string(), expected.to_string()),
            "{name} {params:?}"
        );
    }
}

#[test]
fn an_unknown_report_lists_every_known_name() {
    let (code, text) = error_of("revenue", &[]);
    assert_eq!(code, "unknown_report");
    let known = submetrics::reports::report_names().join(", ");
    assert_eq!(
        text,
        format!("unknown report `revenue`; known reports: {known}")
    );
    assert_eq!(submetrics::reports::report_names().len(), 32);
}

#[test]
fn a_parameter_the_report_does_not_read_is_refused_with_a_near_miss() {
    assert_invalid_queries(&[
        (
            "summary",
            &[("baseCurrency", "EUR"), ("curency", "EUR")],
            "parameter `curency`: report `summary` has no such parameter. Its parameters: baseCurrency",
        ),
        (
            "churn-scheduled-summary",
            &[("intervall", "month")],
            "parameter `intervall`: report `churn-scheduled-summary` has no such parameter; did you mean `interval`? Its parameters: interval, baseCurrency, fix_fx, fx_date, currency, customer, plan, billing_freq, pricing_model, status, country, region, industry, size, channel, market, payment_method, age, data_source",
        ),
        (
            "mrr-table",
            &[("breakdown", "plan")],
            "parameter `breakdown`: report `mrr-table` has no such parameter. Its parameters: date, interval, baseCurrency, fix_fx, fx_date, category, subtype, currency, customer, plan, billing_freq, pricing_model, status, country, region, industry, size, channel, market, payment_method, age, data_source",
        ),
        (
            "invoices-detail",
            &[("selected_date", "2024-01-01")],
            "parameter `selected_date`: report `invoices-detail` has no such parameter. Its parameters: customer, baseCurrency, limit, offset",
        ),
        // What is owed at `as_of`, converted on its day: a range or a fixed
        // rate would change nothing.
        (
            "cashflow-outstanding-unpaid",
            &[("date", "20240101-20240131")],
            "parameter `date`: report `cashflow-outstanding-unpaid` has no such parameter. Its parameters: baseCurrency, limit, offset, currency, customer, plan, billing_freq, pricing_model, status, country, region, industry, size, channel, market, payment_method, age, data_source",
        ),
        (
            "cashflow-outstanding-unpaid",
            &[("fix_fx", "true")],
            "parameter `fix_fx`: report `cashflow-outstanding-unpaid` has no such parameter. Its parameters: baseCurrency, limit, offset, currency, customer, plan, billing_freq, pricing_model, status, country, region, industry, size, channel, market, payment_method, age, data_source",
        ),
    ]);
}

#[test]
fn a_bad_parameter_value_names_the_parameter_and_what_it_accepts() {
    let cases: &[Case] = &[
        (
            "mrr",
            &[("breakdown", "planet")],
            "parameter `breakdown`: `planet` is not one of plan, currency, billing_freq, pricing_model, payment_method, subtype, market, country, industry, age, size",
        ),
        (
            "mrr",
            &[("category", "new gain")],
            "parameter `category`: `gain` is not one of new, expansion, contraction, churn, reactivation",
        ),
        (
            "mrr",
            &[("status", "sleeping")],
            "parameter `status`: `sleeping` is not one of active, cancelled, trial, lead, all",
        ),
        (
            "mrr",
            &[("interval", "hour")],
            "parameter `interval`: `hour` is not one of day, week, month, quarter, year",
        ),
        (
            "mrr",
            &[("fix_fx", "maybe")],
            "parameter `fix_fx`: `maybe` is not a boolean (true or false)",
        ),
        (
            "mrr",
            &[("age", "old")],
            "parameter `age`: `old` is not a number of months or a range like 0-6 or 12+",
        ),
        (
            "mrr",
            &[("billing_freq", "decade")],
            "parameter `billing_freq`: `decade` is not one of day, week, month, year",
        ),
        (
            "mrr",
            &[("plan", "ghost")],
            "parameter `plan`: `ghost` is neither a plan id nor a plan group id",
        ),
        (
            "mrr",
            &[("baseCurrency", "dollars")],
            "parameter `baseCurrency`: `dollars` is not a three-letter currency code",
        ),
        (
            "summary",
            &[("baseCurrency", "euro")],
            "parameter `baseCurrency`: `euro` is not a three-letter currency code",
        ),
        (
            "movement-table",
            &[("sort", "size")],
            "parameter `sort`: `size` is not one of date, mrr_change, customer_name, customer_id, type",
        ),
        (
            "movement-table",
            &[("order", "up")],
            "parameter `order`: `up` is not one of asc, desc",
        ),
        (
            "movement-table",
            &[("selected-type", "gain")],
            "parameter `selected-type`: `gain` is not one of new, expansion, contraction, churn, reactivation",
        ),
        // Days beyond the years records and `as_of` may name are slips.
        (
            "mrr",
            &[("date", "00000101-00000101")],
            "parameter `date`: `00000101-00000101` is outside the years 1900 to 2200",
        ),
        (
            "mrr",
            &[("date", "20240101-99991231")],
            "parameter `date`: `20240101-99991231` is outside the years 1900 to 2200",
        ),
        (
            "movement-table",
            &[("selected-date", "0000-01-01")],
            "parameter `selected-date`: `0000-01-01` is outside the years 1900 to 2200",
        ),
        (
            "mrr",
            &[("fix_fx", "true"), ("fx_date", "99991231")],
            "parameter `fx_date`: `99991231` is outside the years 1900 to 2200",
        ),
        (
            "cohort",
            &[("interval", "fortnight")],
            "parameter `interval`: `fortnight` is not one of day, week, month, quarter, year",
        ),
        (
            "transactions-detail",
            &[("selected-date", "2024-01-01"), ("selected-type", "gift")],
            "parameter `selected-type`: `gift` is not one of month_sub, year_sub, week_sub, day_sub, metered, one_time, refund, discount, fee",
        ),
        (
            "churn-scheduled-movements",
            &[("selected-type", "soon")],
            "parameter `selected-type`: `soon` is not one of day_churn, week_churn, month_churn, quarter_churn, year_churn",
        ),
    ];
    assert_invalid_queries(cases);
}

#[test]
fn a_malformed_date_names_the_parameter_and_the_accepted_forms() {
    let cases: &[Case] = &[
        (
            "mrr",
            &[("date", "2024-01-01")],
            "parameter `date`: `2024-01-01` is not a range yyyyMMdd-yyyyMMdd or a shortcut like last-12-months (days, weeks, months, quarters, years)",
        ),
        (
            "mrr",
            &[("fx_date", "yesterday")],
            "parameter `fx_date`: `yesterday` is not a date (yyyyMMdd or YYYY-MM-DD)",
        ),
        (
            "movement-table",
            &[("selected-date", "June")],
            "parameter `selected-date`: `June` is not a date (yyyyMMdd or YYYY-MM-DD)",
        ),
    ];
    assert_invalid_queries(cases);
}

/// A ledger billing one customer `amount` cents of XAU a month, with one
/// USD buys `xau_per_usd` XAU.
fn gold_ledger(amount: i64, xau_per_usd: &str) -> Ledger {
    use serde_json::json;
    let mut ledger = Ledger::new(Settings::default());
    ledger
        .load_fx_rates(&[json!({"date": "2024-01-01", "currency": "XAU", "rate": xau_per_usd})])
        .unwrap();
    ledger.upsert_plans(&[
        json!({"id": "g", "name": "Gold", "interval": "month", "currency": "XAU"}),
    ]);
    ledger.upsert_customers(&[json!({"id": "A", "name": "A"})]);
    let report = ledger.upsert_invoices(&[
        json!({"id": "i", "customer_id": "A", "type": "subscription",
        "plan_id": "g", "invoice_date": "2024-01-01", "amount": amount, "currency": "XAU"}),
    ]);
    assert_eq!(report.accepted(), 1);
    ledger
}

/// Amounts the data leads to beyond 64-bit cents are an `out_of_range`
/// error naming the report and the amount, never a capped or wrapped
/// number: a conversion at an extreme rate, and an ARR twelve times an MRR
/// that fits.
#[test]
fn an_amount_beyond_64_bit_cents_is_an_error_not_a_wrong_number() {
    let as_of: DateTime<Utc> = "2024-01-15T00:00:00Z".parse().unwrap();
    let report = |ledger: &Ledger, name: &str| {
        let error = ledger
            .report(name, &ReportParams::new(), as_of)
            .unwrap_err();
        (error.code().to_string(), error.to_string())
    };
    let beyond = " is outside the range of 64-bit cents (at most 9223372036854775807 either way)";
    let converted = gold_ledger(3000, "0.00000000000000001");
    for name in ["summary", "mrr", "map", "transactions"] {
        assert_eq!(
            report(&converted, name),
            (
                "out_of_range".to_string(),
                format!(
                    "report `{name}`: 3000 cents of XAU in USD at the rates of 2024-01-01{beyond}"
                )
            ),
            "{name}"
        );
    }
    // 10^12 XAU cents are 10^18 USD cents: an MRR that fits, an ARR that does not.
    let large = gold_ledger(1_000_000_000_000, "0.000001");
    let mrr = large
        .report("summary", &ReportParams::new(), as_of)
        .err()
        .map(|e| e.to_string());
    assert_eq!(
        mrr,
        Some(format!(
            "report `summary`: the ARR of 1000000000000000000 cents of MRR{beyond}"
        ))
    );
    for name in ["mrr", "mrr-table", "map"] {
        assert_eq!(
            report(&large, name).1,
            format!("report `{name}`: the ARR of 1000000000000000000 cents of MRR{beyond}"),
            "{name}"
        );
    }
}

/// A country filter names two-letter codes, as customers hold them: a name
/// or a three-letter code would silently match nobody.
#[test]
fn a_country_filter_that_is_not_a_code_is_refused() {
    assert_invalid_queries(&[
        (
            "cmrr-summary",
            &[("country", "Germany")],
            "parameter `country`: `Germany` is not a two-letter country code (ISO 3166-1, such as DE)",
        ),
        (
            "mrr",
            &[("country", "DE DEU")],
            "parameter `country`: `DEU` is not a two-letter country code (ISO 3166-1, such as DE)",
        ),
    ]);
}

/// Parameters that would change nothing are refused rather than passed
/// over: a breakdown value without its breakdown, a selected type whose
/// period the interval contradicts, an FX date without a fixed rate.
#[test]
fn a_parameter_that_would_change_nothing_is_refused() {
    assert_invalid_queries(&[
        (
            "churn-scheduled-movements",
            &[("breakdown-value", "usd")],
            "parameter `breakdown-value`: applies only with `breakdown`, which names what it is a value of",
        ),
        (
            "churn-scheduled-movements",
            &[("selected-date", "2024-07-01"), ("breakdown", "plan")],
            "parameter `breakdown-value`: is required with `breakdown`: the group to list, a value of what `breakdown` names",
        ),
        (
            "movement-table",
            &[("breakdown", "plan")],
            "parameter `breakdown-value`: is required with `breakdown`: the group to list, a value of what `breakdown` names",
        ),
        (
            "movement-table",
            &[("breakdown-value", "m")],
            "parameter `breakdown-value`: applies only with `breakdown`, which names what it is a value of",
        ),
        (
            "transactions-detail",
            &[
                ("selected-date", "2024-01-01"),
                ("selected-type", "month_sub"),
                ("date", "20240101-20240131"),
            ],
            "parameter `date`: applies only without `selected-date`, which names the one period listed",
        ),
        (
            "churn-scheduled-movements",
            &[("interval", "week"), ("selected-type", "month_churn")],
            "parameter `selected-type`: `month_churn` lists month periods, but `interval` asks for another",
        ),
        (
            "mrr",
            &[("fx_date", "2024-01-01")],
            "parameter `fx_date`: applies only with fix_fx=true (each day's rate is used otherwise)",
        ),
    ]);
}

/// The funnel reports count customers and carry no amounts: a currency, a
/// base currency or an FX choice would change nothing, so each is refused.
#[test]
fn the_funnel_reports_take_no_currency_or_fx_parameter() {
    const FUNNEL_PARAMS: &str = "customer, plan, billing_freq, pricing_model, status, country, region, industry, size, channel, market, payment_method, age, data_source";
    for (name, given) in [
        ("leads", "baseCurrency"),
        ("leads-table", "currency"),
        ("leads-days", "fix_fx"),
        ("leads-summary", "fx_date"),
    ] {
        let periods = if name == "leads-summary" {
            "interval"
        } else {
            "date, interval"
        };
        assert_eq!(
            error_of(name, &[(given, "EUR")]),
            (
                "invalid_query".to_string(),
                format!(
                    "parameter `{given}`: report `{name}` has no such parameter. Its parameters: {periods}, {FUNNEL_PARAMS}"
                )
            ),
        );
    }
}

/// An empty value is refused rather than read as absent: `customer=` would
/// otherwise filter nothing and answer everyone.
#[test]
fn an_empty_parameter_value_is_refused() {
    assert_invalid_queries(&[
        (
            "mrr",
            &[("customer", "")],
            "parameter `customer`: is empty; give a value, or leave the parameter out for its default",
        ),
        (
            "summary",
            &[("baseCurrency", "  ")],
            "parameter `baseCurrency`: is empty; give a value, or leave the parameter out for its default",
        ),
    ]);
}

/// A name given with no value (a binding's `None`, `undefined` or `null`)
/// means the parameter's default, but only a name the query reads may be
/// unset: any other is the error the query gives for it with a value.
#[test]
fn an_unset_parameter_name_is_checked_like_a_given_one() {
    use submetrics::reports::{ParamView, check_param_names};
    let none = ReportParams::new();
    let unset = |names: &[&str]| names.iter().map(|n| n.to_string()).collect::<Vec<_>>();
    // A known name unset passes: it means the default.
    assert!(check_param_names(ParamView::Report("mrr"), &none, &unset(&["interval"])).is_ok());
    let refused = |view, given: &[(&str, &str)], names: &[&str]| {
        let given: ReportParams = given
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let error = check_param_names(view, &given, &unset(names)).unwrap_err();
        (error.code().to_string(), error.to_string())
    };
    assert_eq!(
        refused(ParamView::Report("summary"), &[], &["bogus"]),
        error_of("summary", &[("bogus", "x")])
    );
    // The first unknown name in name order, whether given or unset.
    assert_eq!(
        refused(
            ParamView::Report("summary"),
            &[("curency", "EUR")],
            &["bogus"]
        ),
        error_of("summary", &[("bogus", "x"), ("curency", "EUR")])
    );
    assert_eq!(
        refused(ParamView::Report("revenue"), &[], &["bogus"]),
        error_of("revenue", &[])
    );
    assert_eq!(
        refused(ParamView::Customer, &[], &["bogus"]).1,
        "parameter `bogus`: report `customer` has no such parameter. Its parameters: baseCurrency"
    );
    assert_eq!(
        refused(ParamView::Movements, &[], &["kind"]).1,
        "parameter `kind`: report `movements` has no such parameter; did you mean `kinds`? Its parameters: customer, from, to, start, end, kinds"
    );
    let (code, text) = refused(ParamView::Customers, &[], &["qq"]);
    assert_eq!(code, "invalid_query");
    assert!(
        text.starts_with(
            "parameter `qq`: report `customers` has no such parameter; did you mean `q`?"
        ),
        "{text}"
    );
}

/// A listing's text filter given empty (or blank) is refused as an empty
/// report parameter is, not read as a filter no record matches.
#[test]
fn an_empty_listing_filter_is_refused() {
    let mut ledger = Ledger::new(Settings::default());
    ledger.upsert_customers(&[serde_json::json!({"id": "a", "name": "A"})]);
    let empty = |name: &str| {
        format!(
            "parameter `{name}`: is empty; give a value, or leave the parameter out for its default"
        )
    };
    for source in ["", "  "] {
        let error = ledger.list_source_plans(source, 10, 0).unwrap_err();
        assert_eq!(
            (error.code(), error.field(), error.to_string()),
            ("invalid_query", Some("source"), empty("source"))
        );
        let error = ledger.list_customer_invoices(source, 10, 0).unwrap_err();
        assert_eq!(
            (error.code(), error.field(), error.to_string()),
            ("invalid_query", Some("customer"), empty("customer"))
        );
    }
    assert_eq!(ledger.list_source_plans("stripe", 10, 0).unwrap().count, 0);
    assert_eq!(ledger.list_customer_invoices("a", 10, 0).unwrap().count, 0);
}

/// The sums of the reports are exact to the last cent of 64 bits and
/// refused beyond them. On a daily plan the largest amount, 10^12 cents a
/// day, is an MRR of round(10^12 x 365 / 12) = 30416666666667 cents:
/// 303,234 customers paying it sum to 9223367500000101078 cents, inside 64
/// bits, and one more is past them.
#[test]
fn the_sums_of_303235_customers_at_the_largest_daily_amount_are_refused_not_wrapped() {
    use serde_json::json;
    const INSIDE: usize = 303_234;
    let mut ledger = Ledger::new(Settings::default());
    ledger
        .upsert_plans(&[json!({"id": "d", "name": "Daily", "interval": "day", "currency": "USD"})]);
    let (customers, invoices): (Vec<_>, Vec<_>) = (0..=INSIDE)
        .map(|i| {
            let country = if i == INSIDE { "FR" } else { "DE" };
            let customer = json!({"id": format!("c{i}"), "name": "C", "country": country});
            let invoice = json!({"id": format!("i{i}"), "customer_id": format!("c{i}"),
                "type": "subscription", "plan_id": "d", "invoice_date": "2024-03-01",
                "amount": 1_000_000_000_000i64, "currency": "USD"});
            (customer, invoice)
        })
        .unzip();
    ledger.upsert_customers(&customers);
    assert_eq!(ledger.upsert_invoices(&invoices).accepted(), INSIDE + 1);
    let as_of: DateTime<Utc> = "2024-03-02T00:00:00Z".parse().unwrap();
    let run = |name: &str, params: &[(&str, &str)]| {
        let params: ReportParams = params
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        ledger.report(name, &params, as_of)
    };
    let beyond = " is outside the range of 64-bit cents (at most 9223372036854775807 either way)";
    let error = |name: &str, params: &[(&str, &str)]| run(name, params).unwrap_err().to_string();
    assert_eq!(
        error("summary", &[]),
        format!("report `summary`: the `mrr_current` in USD{beyond}")
    );
    let march = [("date", "20240301-20240331"), ("interval", "month")];
    assert_eq!(
        error("mrr", &march),
        format!("report `mrr`: the `new` of the period 2024-03-01 to 2024-03-31 in USD{beyond}")
    );
    // The customers in Germany: their MRR is exact, its ARR is refused.
    let committed = run("cmrr-summary", &[("country", "DE")]).unwrap();
    assert_eq!(
        committed["summary"]["mrr_current"],
        9_223_367_500_000_101_078i64
    );
    assert_eq!(committed["summary"]["customers_current"], INSIDE);
    assert_eq!(
        error("mrr", &[march[0], march[1], ("country", "DE")]),
        format!("report `mrr`: the ARR of 9223367500000101078 cents of MRR{beyond}")
    );
}
