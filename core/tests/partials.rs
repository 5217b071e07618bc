//! Property test of reports in parts: random histories, their customers
//! split into random partitions (some empty), for every report with a
//! partial form and every parameter family it reads: the merged partials
//! finish into exactly the single ledger's report, whatever the merge order
//! and grouping, and a partial survives its binary form unchanged and
//! finishes from it into the same report.

mod support;

use proptest::prelude::*;
use submetrics::reports::Report;
use submetrics::{ReportParams, ReportPartial};
use support::{as_of, finished, history, ledger_with, params, partials, split};

/// Parameter families; a set is used with every report that reads all of
/// its parameters.
fn parameter_sets() -> Vec<ReportParams> {
    let sets: &[&[(&str, &str)]] = &[
        &[],
        &[("interval", "week"), ("date", "20240101-20240331")],
        &[("interval", "quarter"), ("date", "20240101-20241231")],
        &[("interval", "day"), ("date", "20240301-20240320")],
        &[("date", "last-6-months")],
        &[("breakdown", "plan")],
        &[("breakdown", "currency")],
        &[("breakdown", "subtype")],
        &[("breakdown", "country")],
        &[("breakdown", "age")],
        &[("breakdown", "industry")],
        &[("breakdown", "plan"), ("breakdown-value", "m")],
        &[("breakdown", "currency"), ("breakdown-value", "eur")],
        &[("fix_fx", "true")],
        &[("fix_fx", "true"), ("fx_date", "20240301")],
        &[("baseCurrency", "EUR")],
        &[("currency", "EUR GBP")],
        &[("country", "DE US")],
        &[("status", "active")],
        &[("plan", "annual")],
        &[("industry", "retail")],
        &[("category", "churn contraction")],
        &[("subtype", "upgrade lapse new")],
        &[("selected-date", "2024-03-10")],
        &[("selected-date", "2024-03-10"), ("selected-type", "new")],
        &[("selected-date", "2024-05-10"), ("selected-type", "churn")],
        &[
            ("selected-date", "2024-02-10"),
            ("selected-type", "month_sub"),
        ],
        &[
            ("selected-date", "2024-12-10"),
            ("selected-type", "month_churn"),
        ],
        &[("selected-date", "2024-04-10"), ("interval", "week")],
        &[("limit", "3"), ("offset", "1")],
        &[("limit", "2")],
        &[("offset", "2")],
        &[("sort", "mrr_change"), ("order", "asc"), ("limit", "4")],
        &[("sort", "customer_name")],
        &[("sort", "customer_id"), ("order", "asc"), ("offset", "1")],
        &[("sort", "type")],
        &[("metric", "mrr")],
        &[("committed", "true")],
        &[("committed", "true"), ("limit", "3")],
        &[("customer", "c1 c2")],
        &[("customer", "c0"), ("selected-type", "refund")],
        &[("variable", "Industry")],
        &[("variable", "colour")],
    ];
    sets.iter().map(|pairs| params(pairs)).collect()
}

fn takes_all(report: &Report, params: &ReportParams) -> bool {
    params.keys().all(|name| report.takes(name))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn merged_partials_finish_into_the_single_ledger_report(
        (customers, invoices) in history(),
        parts in 1usize..5,
        assignment in prop::collection::vec(0usize..5, 8),
    ) {
        let ledger = ledger_with(&customers, &invoices);
        let ledgers = split(&ledger, parts, |i| assignment[i % assignment.len()]);
        let at = as_of();
        for report in Report::all().iter().filter(|r| r.parts().is_some()) {
            for set in parameter_sets().iter().filter(|p| takes_all(report, p)) {
                let context = format!("report {} with {:?}", report.name, set);
                let single = ledger.report(report.name, set, at);
                let whole = ledger.report_partial(report.name, set, at);
                let expected = match single {
                    Ok(expected) => expected,
                    Err(error) => {
                        // A request the report refuses is refused in parts
                        // too: when computing the parts, or at finish (a
                        // customer no partition holds).
                        let refused = whole.and_then(|p| p.finish()).err();
                        prop_assert_eq!(refused, Some(error.clone()), "{}", context);
                        if error.code() == "not_found" {
                            let merged = partials(&ledgers, report.name, set, at).and_then(finished);
                            prop_assert_eq!(merged.err(), Some(error), "{} (parts)", context);
                        }
                        continue;
                    }
                };
                prop_assert_eq!(&whole.unwrap().finish().unwrap(), &expected, "{} (one partial)", &context);
                let list = partials(&ledgers, report.name, set, at);
                let list = match list {
                    Ok(list) => list,
                    Err(error) => {
                        prop_assert!(false, "{}: a partition failed: {}", context, error);
                        unreachable!()
                    }
                };
                let mut read_back = Vec::with_capacity(list.len());
                for partial in &list {
                    let back = ReportPartial::from_bytes(&partial.to_bytes()).unwrap();
                    prop_assert_eq!(&back, partial, "{} (bytes)", &context);
                    read_back.push(back);
                }
                let in_order = ReportPartial::merge_all(list.clone()).unwrap();
                let reversed = ReportPartial::merge_all(list.iter().rev().cloned()).unwrap();
                prop_assert_eq!(&reversed, &in_order, "{} (reversed)", &context);
                if list.len() > 2 {
                    let mut rest = list.clone();
                    let first = rest.remove(0);
                    let grouped = first.merge(ReportPartial::merge_all(rest).unwrap()).unwrap();
                    prop_assert_eq!(&grouped, &in_order, "{} (grouped)", &context);
                }
                let actual = finished(list).unwrap();
                prop_assert_eq!(&actual, &expected, "{}", &context);
                // Rows read from bytes are text until the page reads them.
                let actual = finished(read_back).unwrap();
                prop_assert_eq!(&actual, &expected, "{} (finished from bytes)", &context);
            }
        }
    }
}
