//! Writes and reads of records, and the figures that follow them.

use super::*;
use crate::*;
use chrono::{DateTime, Utc};
use serde_json::json;

pub(super) fn as_of(text: &str) -> DateTime<Utc> {
    text.parse().unwrap()
}

pub(super) fn ledger() -> Ledger {
    let mut ledger = Ledger::default();
    ledger.upsert_plans(&[
        json!({"id": "m", "name": "Monthly", "billing_freq": "month", "currency": "USD"}),
        json!({"id": "m2", "name": "Plus", "billing_freq": "month", "currency": "USD"}),
    ]);
    ledger.upsert_customers(&[
        json!({"id": "a", "name": "A"}),
        json!({"id": "b", "name": "B"}),
    ]);
    ledger
}

pub(super) fn sub(id: &str, customer: &str, date: &str, amount: i64) -> Value {
    json!({"id": id, "customer_id": customer, "type": "subscription", "plan_id": "m",
           "invoice_date": date, "amount": amount, "currency": "USD"})
}

#[test]
fn a_batch_stores_the_valid_records_and_names_the_rest() {
    let mut ledger = ledger();
    let report = ledger.upsert_invoices(&[
        sub("i1", "a", "2024-01-01", 3000),
        sub("i2", "nobody", "2024-01-01", 3000),
        json!({"id": "i3", "customer_id": "a", "type": "subscription", "invoice_date": "2024-01-01", "amount": 1, "currency": "USD", "plan_id": "nope"}),
    ]);
    assert_eq!(report.accepted(), 1);
    let errors: Vec<_> = report
        .rejected()
        .map(|r| r.import_error.clone().unwrap())
        .collect();
    assert_eq!(
        errors,
        vec![
            "invoice i2: field `customer_id`: customer `nobody` does not exist; send the customer first",
            "invoice i3: field `plan_id`: plan `nope` does not exist; send the plan first",
        ]
    );
    assert!(ledger.invoice("i1").is_some());
}

/// Room no memory holds (a file claiming 2^50 rows) is not made, where
/// asking for it used to abort the process; the ledger works on.
#[test]
fn a_reservation_beyond_memory_is_dropped() {
    let mut ledger = ledger();
    ledger.reserve_customers(1 << 50);
    ledger.reserve_invoices(1 << 50);
    ledger.upsert_customers(&[json!({"id": "c", "name": "C"})]);
    let report = ledger.upsert_invoices(&[sub("i1", "c", "2024-01-01", 3000)]);
    assert_eq!(report.accepted(), 1);
    let summary = ledger
        .report(
            "summary",
            &ReportParams::new(),
            as_of("2024-01-15T00:00:00Z"),
        )
        .unwrap();
    assert_eq!(summary["summary"]["mrr_current"], 3000);
}

#[test]
fn a_subscription_invoice_must_share_its_plans_currency() {
    let mut ledger = ledger();
    let mut invoice = sub("i1", "a", "2024-01-01", 3000);
    invoice["currency"] = json!("EUR");
    let report = ledger.upsert_invoices(&[invoice]);
    assert_eq!(
        report.results[0].import_error.as_deref(),
        Some("invoice i1: field `currency`: EUR differs from plan `m`'s currency USD")
    );
}

#[test]
fn deleting_a_customer_removes_its_invoices() {
    let mut ledger = ledger();
    ledger.upsert_invoices(&[
        sub("i1", "a", "2024-01-01", 3000),
        sub("i2", "b", "2024-01-01", 3000),
    ]);
    ledger.delete_customer("a").unwrap();
    assert!(ledger.invoice("i1").is_none());
    assert!(ledger.invoice("i2").is_some());
    let rows = ledger
        .movements(as_of("2024-01-15T00:00:00Z"), &MovementFilter::default())
        .unwrap();
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0].customer_id.as_str(), "b");
    // Its plan is no longer in use by a's invoices.
    ledger.delete_invoice("i2").unwrap();
    ledger.delete_plan("m").unwrap();
}

#[test]
fn deleting_a_plan_in_use_is_refused() {
    let mut ledger = ledger();
    ledger.upsert_invoices(&[sub("i1", "a", "2024-01-01", 3000)]);
    let err = ledger.delete_plan("m").unwrap_err();
    assert_eq!(err.code(), "conflict");
    assert_eq!(
        err.to_string(),
        "plan m: 1 invoice(s) use this plan; delete or change them first"
    );
    assert!(ledger.plan("m").is_some());
}

#[test]
fn plan_groups_need_existing_plans_and_deleting_one_keeps_the_plans() {
    let mut ledger = ledger();
    let report = ledger.upsert_plan_groups(&[
        json!({"name": "Core", "plans": [{"id": "m"}, "m2"]}),
        json!({"name": "Bad", "plans": ["ghost"]}),
    ]);
    assert_eq!(report.results[0].id, "pg_1");
    assert_eq!(
        report.results[1].import_error.as_deref(),
        Some("plan_group ?: field `plans`: plan `ghost` does not exist")
    );
    assert_eq!(ledger.plan_group("pg_1").unwrap().plans.len(), 2);
    ledger.delete_plan_group("pg_1").unwrap();
    assert!(ledger.plan("m").is_some() && ledger.plan("m2").is_some());
    // Deleting an unused plan drops it from groups.
    ledger.upsert_plan_groups(&[json!({"id": "g", "name": "G", "plans": ["m", "m2"]})]);
    ledger.delete_plan("m2").unwrap();
    assert_eq!(
        ledger.plan_group("g").unwrap().plans,
        vec![PlanId::new("m")]
    );
}

#[test]
fn a_deleted_plan_group_id_is_never_handed_out_again() {
    let mut ledger = ledger();
    let group = || json!({"name": "Core", "plans": ["m"]});
    let first = ledger.upsert_plan_groups(&[group(), group()]);
    assert_eq!(first.results[0].id, "pg_1");
    assert_eq!(first.results[1].id, "pg_2");
    ledger.delete_plan_group("pg_2").unwrap();
    assert_eq!(ledger.upsert_plan_groups(&[group()]).results[0].id, "pg_3");
    // Ids stored earlier (a restart loading its groups) move the counter too.
    let mut reloaded = self::ledger();
    reloaded.upsert_plan_groups(&[json!({"id": "pg_7", "name": "Old", "plans": ["m"]})]);
    assert_eq!(
        reloaded.upsert_plan_groups(&[group()]).results[0].id,
        "pg_8"
    );
}

#[test]
fn the_fx_pivot_survives_a_base_currency_change_and_a_rebuild_from_saved_settings() {
    let mut ledger = ledger();
    ledger
        .load_fx_rates(&[json!({"date": "2024-01-01", "currency": "EUR", "rate": 0.8})])
        .unwrap();
    ledger.upsert_customers(&[json!({"id": "eu", "name": "EU"})]);
    ledger.upsert_plans(&[json!({"id": "e", "name": "E", "interval": "month", "currency": "EUR"})]);
    ledger.upsert_invoices(&[
        json!({"id": "e1", "customer_id": "eu", "type": "subscription",
        "plan_id": "e", "invoice_date": "2024-01-01", "amount": 4000, "currency": "EUR"}),
    ]);
    let at: DateTime<Utc> = "2024-01-10T00:00:00Z".parse().unwrap();
    let summary = |ledger: &Ledger| {
        ledger.report("summary", &Default::default(), at).unwrap()["summary"]["mrr_current"].clone()
    };
    // 4000 EUR at 0.8 EUR per USD is 5000 USD.
    assert_eq!(summary(&ledger), json!(5000));
    ledger
        .update_settings(&json!({"base_currency": "EUR"}))
        .unwrap();
    assert_eq!(
        ledger.settings().fx_pivot.map(|c| c.to_string()),
        Some("USD".into())
    );
    assert_eq!(summary(&ledger), json!(4000));
    // A service saves the settings as JSON and rebuilds from them.
    let saved = json!(ledger.settings());
    assert_eq!(saved["fx_pivot"], "USD");
    let mut rebuilt = Ledger::new(Settings::from_json(&saved).unwrap());
    rebuilt
        .load_fx_rates(&[json!({"date": "2024-01-01", "currency": "EUR", "rate": 0.8})])
        .unwrap();
    assert_eq!(rebuilt.fx().pivot().to_string(), "USD");
    let err = rebuilt
        .update_settings(&json!({"fx_pivot": "EUR"}))
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "setting `fx_pivot`: is USD for this ledger and cannot change once it exists"
    );
}

#[test]
fn a_replay_that_needs_a_missing_rate_fails_the_read_and_a_later_rate_mends_it() {
    let mut ledger = ledger();
    ledger.upsert_customers(&[json!({"id": "eu", "name": "EU"})]);
    ledger.upsert_plans(&[json!({"id": "e", "name": "E", "interval": "month", "currency": "EUR"})]);
    ledger.upsert_invoices(&[
        sub("i1", "a", "2024-01-01", 3000),
        json!({"id": "e1", "customer_id": "eu", "type": "subscription",
        "plan_id": "e", "invoice_date": "2024-01-01", "amount": 4000, "currency": "EUR"}),
    ]);
    let at = as_of("2024-01-10T00:00:00Z");
    // Every customer is replayed; the EUR customer's new movement has no
    // rate to convert with.
    for _ in 0..2 {
        let error = ledger
            .movements(at, &MovementFilter::default())
            .unwrap_err();
        assert_eq!(
            error.to_string(),
            Error::MissingFxRate {
                currency: "EUR".into(),
                date: "2024-01-01".into()
            }
            .to_string()
        );
    }
    ledger
        .load_fx_rates(&[json!({"date": "2024-01-01", "currency": "EUR", "rate": 0.8})])
        .unwrap();
    let changes: Vec<(String, i64)> = ledger
        .movements(at, &MovementFilter::default())
        .unwrap()
        .iter()
        .map(|m| (m.customer_id.to_string(), m.mrr_change_base_currency))
        .collect();
    assert_eq!(changes, [("a".to_string(), 3000), ("eu".to_string(), 5000)]);
}

#[test]
fn a_plan_change_recomputes_its_customers() {
    let mut ledger = ledger();
    ledger.upsert_invoices(&[sub("i1", "a", "2024-01-01", 12000)]);
    ledger
        .update_plan("m", &json!({"billing_freq": "year"}))
        .unwrap();
    let mrr = ledger
        .customer_mrr_at(
            "a",
            as_of("2024-02-01T00:00:00Z"),
            as_of("2024-02-01T00:00:00Z"),
        )
        .unwrap();
    assert_eq!(mrr.values().copied().collect::<Vec<_>>(), vec![1000]);
}

#[test]
fn lifecycle_fields_follow_the_invoices() {
    let mut ledger = ledger();
    let at = as_of("2024-01-10T00:00:00Z");
    assert_eq!(
        ledger.customer_profile("a", at).unwrap().status,
        CustomerStatus::Lead
    );
    ledger.upsert_invoices(&[sub("t", "a", "2024-01-01", 0)]);
    let trial = ledger.customer_profile("a", at).unwrap();
    assert_eq!(trial.status, CustomerStatus::Trial);
    assert_eq!(trial.trial_started, Some(as_of("2024-01-01T00:00:00Z")));
    ledger.upsert_invoices(&[
        sub("p", "a", "2024-01-05", 3000),
        json!({"id": "x", "customer_id": "a", "type": "cancellation", "invoice_date": "2024-01-25", "amount": 0, "currency": "USD"}),
    ]);
    let active = ledger.customer_profile("a", at).unwrap();
    assert_eq!(active.status, CustomerStatus::Active);
    assert_eq!(active.paid_started, Some(as_of("2024-01-05T00:00:00Z")));
    assert_eq!(
        active.cancel_date,
        Some(as_of("2024-01-25T00:00:00Z")),
        "a scheduled cancellation"
    );
    let later = ledger
        .customer_profile("a", as_of("2024-04-01T00:00:00Z"))
        .unwrap();
    assert_eq!(later.status, CustomerStatus::Cancelled);
    assert_eq!(later.cancel_date, Some(as_of("2024-01-25T00:00:00Z")));
    assert!(later.mrr.is_empty());
}

#[test]
fn current_subscriptions_list_paying_subscriptions() {
    let mut ledger = ledger();
    let mut second = sub("i2", "a", "2024-01-01", 5000);
    second["plan_id"] = json!("m2");
    second["subscription_id"] = json!("s2");
    ledger.upsert_invoices(&[sub("i1", "a", "2024-01-01", 3000), second]);
    let subs = ledger
        .current_subscriptions("a", as_of("2024-01-15T00:00:00Z"))
        .unwrap();
    let summary: Vec<(&str, i64)> = subs.iter().map(|s| (s.plan_id.as_str(), s.mrr)).collect();
    assert_eq!(summary, vec![("m", 3000), ("m2", 5000)]);
    assert_eq!(
        ledger
            .current_subscriptions("ghost", as_of("2024-01-15T00:00:00Z"))
            .unwrap_err()
            .code(),
        "not_found"
    );
}

#[test]
fn settings_changes_recompute_everything() {
    let mut ledger = ledger();
    ledger.upsert_invoices(&[sub("i1", "a", "2024-01-01", 3000)]);
    // Lapse at 2024-02-01; with grace 7 it shows on 2024-02-09, with 30 only after 2024-03-02.
    let at = as_of("2024-02-20T00:00:00Z");
    assert_eq!(
        ledger
            .movements(at, &MovementFilter::default())
            .unwrap()
            .len(),
        2
    );
    ledger
        .update_settings(&json!({"churn_grace_days": 30}))
        .unwrap();
    assert_eq!(
        ledger
            .movements(at, &MovementFilter::default())
            .unwrap()
            .len(),
        1
    );
    assert_eq!(
        ledger
            .update_settings(&json!({"timezone": "Nowhere"}))
            .unwrap_err()
            .code(),
        "invalid_setting"
    );
}

#[test]
fn listing_pages_in_insertion_order() {
    let ledger = ledger();
    let page = ledger.list_customers(1, 1);
    assert_eq!(page.count, 2);
    assert_eq!(page.list[0].id.as_str(), "b");
}
#[test]
fn typed_records_are_checked_and_stored_like_json_in_batches_of_every_size() {
    for size in [3, 600] {
        // Every 7th names an unknown customer, every 11th an unknown plan,
        // every 13th a currency the plan does not bill in; ids repeat, so
        // later records replace earlier ones.
        let values: Vec<Value> = (0..size)
            .map(|n| {
                let mut value = sub(
                    &format!("i{}", n % 250),
                    if n % 7 == 3 {
                        "nobody"
                    } else {
                        ["a", "b"][n % 2]
                    },
                    &format!("2024-{:02}-01", 1 + n % 12),
                    1000 + n as i64,
                );
                if n % 11 == 5 {
                    value["plan_id"] = json!("nope");
                }
                if n % 13 == 6 {
                    value["currency"] = json!("EUR");
                }
                value
            })
            .collect();
        let typed: Vec<Invoice> = values
            .iter()
            .map(|v| Invoice::from_json(v).unwrap())
            .collect();
        let mut from_json = ledger();
        let mut from_records = ledger();
        let expected = from_json.upsert_invoices(&values);
        let report = from_records.upsert_invoice_records(typed);
        assert_eq!(report, expected);
        let rejected = report.rejected().count();
        assert_eq!(
            rejected,
            (0..size)
                .filter(|n| n % 7 == 3 || n % 11 == 5 || n % 13 == 6)
                .count()
        );
        assert_eq!(report.results.len(), size);
        let stored = |l: &Ledger| l.invoices().map(|i| i.to_invoice()).collect::<Vec<_>>();
        assert_eq!(stored(&from_records), stored(&from_json));
        let filter = MovementFilter::default();
        assert_eq!(
            from_records
                .movements(as_of("2025-01-01T00:00:00Z"), &filter)
                .unwrap(),
            from_json
                .movements(as_of("2025-01-01T00:00:00Z"), &filter)
                .unwrap()
        );
    }
}

/// The ids of a customer's invoices, as `customer_invoices` lists them.
fn invoice_order(ledger: &Ledger, customer: &str) -> Vec<String> {
    let invoices = ledger.customer_invoices(customer);
    invoices.iter().map(|i| i.id().to_string()).collect()
}

#[test]
fn customer_invoices_keep_insertion_order_through_moves_and_deletes() {
    let mut ledger = ledger();
    ledger.upsert_customers(&[json!({"id": "c", "name": "C"})]);
    for (id, customer) in [
        ("i5", "a"),
        ("i2", "b"),
        ("i9", "a"),
        ("i1", "a"),
        ("i3", "b"),
        ("i7", "c"),
        ("i4", "a"),
    ] {
        ledger.upsert_invoices(&[sub(id, customer, "2024-01-01", 1000)]);
    }
    let strings = |ids: &[&str]| ids.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    assert_eq!(
        invoice_order(&ledger, "a"),
        strings(&["i5", "i9", "i1", "i4"])
    );
    // i9 moves to b, keeping its place in the listing.
    ledger.upsert_invoices(&[sub("i9", "b", "2024-02-01", 1000)]);
    assert_eq!(invoice_order(&ledger, "b"), strings(&["i2", "i9", "i3"]));
    ledger.delete_customer("a").unwrap();
    ledger.delete_invoice("i2").unwrap();
    let listed: Vec<String> = ledger.invoices().map(|i| i.id().to_string()).collect();
    assert_eq!(listed, strings(&["i9", "i3", "i7"]));
    assert_eq!(invoice_order(&ledger, "b"), strings(&["i9", "i3"]));
    assert_eq!(invoice_order(&ledger, "c"), strings(&["i7"]));
    assert!(invoice_order(&ledger, "a").is_empty());
    // A customer sent again, or changed, keeps its invoices; one created
    // again starts without any.
    ledger.upsert_customers(&[
        json!({"id": "a", "name": "A again"}),
        json!({"id": "b", "name": "B2"}),
    ]);
    ledger.update_customer("c", &json!({"name": "C2"})).unwrap();
    ledger.upsert_invoices(&[
        sub("i6", "a", "2024-03-01", 1000),
        sub("i8", "c", "2024-03-01", 1000),
    ]);
    assert_eq!(invoice_order(&ledger, "a"), strings(&["i6"]));
    assert_eq!(invoice_order(&ledger, "b"), strings(&["i9", "i3"]));
    assert_eq!(invoice_order(&ledger, "c"), strings(&["i7", "i8"]));
    // One list per customer, at the customer's index.
    assert_eq!(
        ledger.store.invoices_by_customer.len(),
        ledger.store.customers.len()
    );
}

#[test]
fn a_null_id_names_the_record_by_its_external_id() {
    let mut ledger = ledger();
    let mut invoice = sub("ignored", "a", "2024-01-01", 3000);
    invoice["id"] = Value::Null;
    invoice["external_id"] = json!("n1");
    let texts = [invoice.to_string()];
    for report in [
        ledger.upsert_invoices(std::slice::from_ref(&invoice)),
        ledger.upsert_invoice_texts(&texts),
    ] {
        assert_eq!(report.results[0].id, "n1");
        assert_eq!(report.accepted(), 1);
    }
    assert_eq!(ledger.invoice("n1").unwrap().amount, 3000);
    let report = ledger.upsert_customers(&[json!({"id": null, "external_id": "c9", "name": "C"})]);
    assert_eq!(report.results[0].id, "c9");
    assert!(ledger.customer("c9").is_some());
}

#[test]
fn get_names_the_kind_when_missing() {
    let ledger = Ledger::default();
    let e = ledger.get(RecordKind::PlanGroups, "G9").unwrap_err();
    assert_eq!(
        e,
        Error::NotFound {
            kind: "plan_group",
            id: "G9".to_string()
        }
    );
    assert_eq!(
        ledger.list(RecordKind::Invoices, Ledger::DEFAULT_LIST_LIMIT, 0),
        json!({"count": 0, "list": []})
    );
}

/// Movements of one day come in customer id order whatever order the
/// customers were stored in, ids that share their first sixteen bytes
/// (compared in full) and customers without a movement (sorted last)
/// included.
#[test]
fn a_days_movements_come_in_customer_id_order() {
    let mut ledger = ledger();
    let ids = [
        "cus_0000000000000b",
        "z",
        "cus_0000000000000a",
        "cus_00000000000009",
        "cus_0000000000000",
        "A",
    ];
    let customers: Vec<Value> = ids.iter().map(|id| json!({"id": id, "name": id})).collect();
    ledger.upsert_customers(&customers);
    let invoices: Vec<Value> = ids
        .iter()
        .enumerate()
        .map(|(k, id)| sub(&format!("i{k}"), id, "2024-01-01", 1000))
        .collect();
    assert_eq!(ledger.upsert_invoices(&invoices).accepted(), ids.len());
    let listed: Vec<String> = ledger
        .movements(as_of("2024-01-15T00:00:00Z"), &MovementFilter::default())
        .unwrap()
        .iter()
        .map(|movement| movement.customer_id.to_string())
        .collect();
    assert_eq!(
        listed,
        [
            "A",
            "cus_0000000000000",
            "cus_00000000000009",
            "cus_0000000000000a",
            "cus_0000000000000b",
            "z"
        ]
    );
}

/// Rows of a listing are built on every core, yet a listing that cannot
/// convert several of its invoices names the first of them in its order
/// (newest first), as a single core would.
#[test]
fn a_listing_names_its_first_unconvertible_invoice_in_list_order() {
    let mut ledger = ledger();
    ledger.upsert_plans(&[
        json!({"id": "e", "name": "Euro", "billing_freq": "month", "currency": "EUR"}),
    ]);
    let invoices: Vec<Value> = (1..=9)
        .map(|month| {
            json!({"id": format!("e{month}"), "customer_id": "a", "type": "subscription",
                   "plan_id": "e", "invoice_date": format!("2024-0{month}-01"),
                   "amount": 1000, "currency": "EUR"})
        })
        .collect();
    assert_eq!(ledger.upsert_invoices(&invoices).accepted(), 9);
    let params = ReportParams::new();
    let error = ledger
        .report("invoices-detail", &params, as_of("2024-12-01T00:00:00Z"))
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        "no exchange rate for EUR on or before 2024-09-01"
    );
}
