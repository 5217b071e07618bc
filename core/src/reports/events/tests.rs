//! Periods, summaries and details of event families.

use super::*;
use crate::Ledger;
use crate::model::Settings;
use crate::reports::runs::ITEMS_PER_RUN as CUSTOMERS_PER_RUN;
use chrono::{DateTime, Utc};

fn d(text: &str) -> NaiveDate {
    text.parse().unwrap()
}

fn params(pairs: &[(&str, &str)]) -> ReportParams {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

fn event<'a>(date: &str, kind: &'static str, amount: Cents, id: &'a str) -> Event<'a, ()> {
    Event {
        date: d(date),
        kind,
        amount,
        currency: Currency::parse("USD").unwrap(),
        amount_base: amount,
        customer_id: "c",
        id: id.into(),
        source: (),
    }
}

/// One tally per period of `events`.
fn tally(request: &EventRequest<'_>, events: &[Event<'_, ()>]) -> Vec<Tally> {
    let mut tallies = vec![Tally::default(); request.periods.len()];
    request.tally_into(&mut tallies, events);
    tallies
}

fn figures(tally: &Tally) -> Figures {
    let mut row = Figures::default();
    row.set("paid", tally.amount("paid"));
    row.set("paid_count", tally.count("paid"));
    row
}

const FAMILY: Family = Family {
    types: &[("paid", "Paid")],
    metrics: &[Metric::Types, Metric::One("paid_count", "Payments")],
    figures,
    money: true,
};

fn as_of() -> DateTime<Utc> {
    "2024-03-15T12:00:00Z".parse().unwrap()
}

#[test]
fn events_fall_into_their_period_and_outside_the_range_count_nowhere() {
    let ledger = Ledger::new(Settings::default());
    let ledger = ledger.derived();
    let p = params(&[("date", "20240115-20240229")]);
    let request = EventRequest::read(&ledger, &p, as_of(), Reading::of(Span::Range)).unwrap();
    let events = vec![
        event("2024-01-10", "paid", 100, "a"),
        event("2024-01-15", "paid", 200, "b"),
        event("2024-02-29", "paid", 300, "c"),
        event("2024-03-01", "paid", 400, "d"),
    ];
    let series = request
        .series_of(&FAMILY, tally(&request, &events))
        .unwrap()
        .into_json();
    assert_eq!(series["result"][0]["date"], "2024-01-01");
    assert_eq!(series["result"][0]["paid"], 200);
    assert_eq!(series["result"][1]["paid"], 300);
    assert_eq!(series["result"][1]["paid_count"], 1);
}

#[test]
fn summary_compares_the_current_period_with_the_previous() {
    let ledger = Ledger::new(Settings::default());
    let ledger = ledger.derived();
    let request = EventRequest::read(
        &ledger,
        &params(&[]),
        as_of(),
        Reading::of(Span::CurrentAndPrevious),
    )
    .unwrap();
    let events = vec![
        event("2024-02-03", "paid", 400, "a"),
        event("2024-03-02", "paid", 500, "b"),
        event("2024-03-03", "paid", 100, "c"),
    ];
    let summary = request
        .summary_of(&FAMILY, tally(&request, &events))
        .unwrap()
        .into_json();
    assert_eq!(summary["current"]["date"], "2024-03-01");
    assert_eq!(summary["current"]["end_date"], "2024-03-15");
    assert_eq!(summary["current"]["paid"], 600);
    assert_eq!(summary["previous"]["paid"], 400);
    assert_eq!(summary["change"]["paid"], 200);
    assert_eq!(summary["change_percent"]["paid"], 50.0);
    assert_eq!(summary["change"]["paid_count"], 1);
}

#[test]
fn detail_lists_the_selected_period_newest_first() {
    let ledger = Ledger::new(Settings::default());
    let ledger = ledger.derived();
    let p = params(&[("selected-date", "2024-02-10")]);
    let request = EventRequest::read(&ledger, &p, as_of(), Reading::of(Span::Selected)).unwrap();
    let events = vec![
        event("2024-02-03", "paid", 400, "a"),
        event("2024-02-20", "paid", 500, "b"),
        event("2024-03-03", "paid", 100, "c"),
    ];
    let rows = request.detail_part(events, Some("paid"), |e| e.id.to_string());
    let detail = crate::reports::event_parts::detail_answer::<String>(rows).unwrap();
    assert_eq!(
        detail.into_json(),
        serde_json::json!({"result": {"count": 2, "list": ["b", "a"]}})
    );
}

#[test]
fn the_metric_types_stand_for_the_family_types_with_their_labels() {
    assert_eq!(
        FAMILY.metrics(),
        [("paid", "Paid"), ("paid_count", "Payments")]
    );
}

#[test]
fn a_missing_selected_date_or_type_is_an_error_naming_it() {
    let ledger = Ledger::new(Settings::default());
    let ledger = ledger.derived();
    let err = EventRequest::read(&ledger, &params(&[]), as_of(), Reading::of(Span::Selected))
        .err()
        .unwrap();
    assert_eq!(err.field(), Some("selected-date"));
    let err = selected_type(&params(&[("selected-type", "x")]), &FAMILY, false).unwrap_err();
    assert_eq!(
        err.to_string(),
        "parameter `selected-type`: `x` is not one of paid"
    );
}

/// Customers over several runs of [`EventRequest::gather_customers`] come
/// back in id order, each with its own items in order, and the error is the
/// first failing customer's in that order.
#[test]
fn customers_are_gathered_in_id_order_and_the_first_error_in_it_wins() {
    let mut ledger = Ledger::new(Settings::default());
    let count = 3 * CUSTOMERS_PER_RUN + 5;
    // Inserted in an order unlike the ids' (reversed).
    let customers: Vec<serde_json::Value> = (0..count)
        .rev()
        .map(|n| serde_json::json!({"id": format!("c{n:05}"), "name": "N"}))
        .collect();
    let report = ledger.upsert_customers(&customers);
    assert!(report.results.iter().all(|r| r.error.is_none()));
    assert_eq!(ledger.customers().count(), count);
    let ledger = ledger.derived();
    let request =
        EventRequest::read(&ledger, &params(&[]), as_of(), Reading::of(Span::Range)).unwrap();
    let gathered = request
        .gather_customers(false, |customer, _, items| {
            items.push((customer.id.as_str(), 0));
            items.push((customer.id.as_str(), 1));
            Ok(())
        })
        .unwrap();
    let expected: Vec<(String, i32)> = (0..count)
        .flat_map(|n| [(format!("c{n:05}"), 0), (format!("c{n:05}"), 1)])
        .collect();
    let gathered: Vec<(String, i32)> = gathered
        .into_iter()
        .map(|(id, i)| (id.to_string(), i))
        .collect();
    assert_eq!(gathered, expected);
    // Customers 100 and 5000 fail, in different runs: 100's error is answered.
    let failed = request.gather_customers(false, |customer, _, items: &mut Vec<()>| {
        if let "c00100" | "c05000" = customer.id.as_str() {
            return Err(Error::query("customer", customer.id.as_str()));
        }
        items.push(());
        Ok(())
    });
    assert_eq!(
        failed.unwrap_err().to_string(),
        Error::query("customer", "c00100").to_string()
    );
}

/// Over several runs of customers, a series tallied a customer at a time
/// counts what the detail lists, and the detail lists it in its order.
#[test]
fn a_series_over_many_runs_counts_what_its_detail_lists() {
    use serde_json::json;
    let mut ledger = Ledger::new(Settings::default());
    let count = 2 * CUSTOMERS_PER_RUN + 7;
    ledger.upsert_plans(&[
        json!({"id": "m", "name": "Monthly", "billing_freq": "month",
        "currency": "USD"}),
    ]);
    let customers: Vec<serde_json::Value> = (0..count)
        .map(|n| json!({"id": format!("c{n:05}"), "name": "N"}))
        .collect();
    ledger.upsert_customers(&customers);
    // Customer n pays 100 + n cents on Jan 1 + (n mod 28) days, and every
    // third one has a 10-cent discount.
    let invoices: Vec<serde_json::Value> = (0..count)
        .map(|n| {
            json!({"id": format!("i{n:05}"), "customer_id": format!("c{n:05}"),
                "type": "subscription", "plan_id": "m", "amount": 100 + n,
                "currency": "USD", "invoice_date": format!("2024-01-{:02}", 1 + n % 28),
                "discount_amount": if n % 3 == 0 { 10 } else { 0 }})
        })
        .collect();
    let report = ledger.upsert_invoices(&invoices);
    assert!(report.results.iter().all(|r| r.error.is_none()));
    let at = as_of();
    let series = ledger
        .report(
            "transactions",
            &params(&[("date", "20240101-20240131")]),
            at,
        )
        .unwrap();
    let paid: i64 = (0..count as i64).map(|n| 100 + n).sum();
    let discounted = count.div_ceil(3) as i64;
    assert_eq!(series["result"][0]["month_sub"], paid);
    assert_eq!(series["result"][0]["month_sub_count"], count);
    assert_eq!(series["result"][0]["discount"], -10 * discounted);
    assert_eq!(series["result"][0]["discount_count"], discounted);
    let detail = |kind: &str| {
        let selected = [("selected-date", "2024-01-01"), ("selected-type", kind)];
        ledger
            .report("transactions-detail", &params(&selected), at)
            .unwrap()
    };
    let payments = detail("month_sub");
    assert_eq!(payments["result"]["count"], count);
    // Newest day first (Jan 28: customers 27, 55, ...), then by customer.
    let list = payments["result"]["list"].as_array().unwrap();
    assert_eq!(list[0]["customer_id"], "c00027");
    assert_eq!(list[0]["date"].as_str().unwrap()[..10], *"2024-01-28");
    assert_eq!(list[1]["customer_id"], "c00055");
    assert_eq!(list[count - 1]["customer_id"], "c04088");
    let discounts = detail("discount");
    assert_eq!(discounts["result"]["count"], discounted);
    assert_eq!(
        discounts["result"]["list"][0]["transaction_id"],
        "i00027-discount"
    );
}
