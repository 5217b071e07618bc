//! Updates of one record: the fields a patch may name, by any of their
//! names, and what it refuses.

use super::tests::ledger;
use crate::*;
use serde_json::json;

#[test]
fn update_customer_merges_custom_variables() {
    let mut ledger = ledger();
    ledger.upsert_customers(&[
        json!({"id": "a", "name": "A", "custom_variables": {"industry": "retail", "size": "s"}}),
    ]);
    let updated = ledger
        .update_customer(
            "a",
            &json!({"email": "a@example.com", "custom_variables": {"size": "m", "channel": "web"}}),
        )
        .unwrap();
    assert_eq!(updated.email.as_deref(), Some("a@example.com"));
    assert_eq!(&*updated.name, "A");
    let vars: Vec<(&str, &str)> = updated.custom_variables.iter().collect();
    assert_eq!(
        vars,
        vec![("industry", "retail"), ("size", "m"), ("channel", "web")]
    );
}

/// An update names fields by any name a record may use (`created` is
/// `created_date`, `metadata` is `custom_variables`, `interval` is
/// `billing_freq`); a name that is no field, or another id, is refused and
/// the record stays as it was.
#[test]
fn updates_take_every_field_name_and_refuse_any_other() {
    let mut ledger = ledger();
    ledger.upsert_customers(&[json!({"id": "a", "name": "A", "created_date": "2024-04-01"})]);
    let updated = ledger
        .update_customer(
            "a",
            &json!({"created": "2024-05-01", "metadata": {"size": "m"}, "external_id": "a"}),
        )
        .unwrap();
    assert_eq!(
        updated.created_date,
        crate::model::Timestamp::parse("2024-05-01")
    );
    assert_eq!(updated.attribute("size"), Some("m"));
    let refused = |result: Result<(), crate::Error>| result.unwrap_err().to_string();
    assert_eq!(
        refused(
            ledger
                .update_customer("a", &json!({"name": "B", "nmae": "B"}))
                .map(|_| ())
        ),
        "customer a: field `nmae`: is not a field of a customer; its fields: id, name, email, \
         created_date, country, currency, status, trial_started, paid_started, trial_end_date, \
         cancel_date, overdue_date, cancel_reason, custom_variables, data_source"
    );
    assert_eq!(
        refused(ledger.update_customer("a", &json!({"id": "b"})).map(|_| ())),
        "customer a: field `id`: cannot be changed by an update (this customer is `a`)"
    );
    assert_eq!(&*ledger.customer("a").unwrap().name, "A");
    // A numeric id names the record its text is, however it is written.
    ledger.upsert_customers(&[json!({"id": "77", "name": "Seventy-seven"})]);
    for id in [json!(77), json!(77.0), json!(7.7e1), json!("77")] {
        let updated = ledger
            .update_customer("77", &json!({"id": id, "country": "FR"}))
            .unwrap();
        assert_eq!(updated.country.as_deref(), Some("FR"), "{id}");
    }
    assert_eq!(
        refused(ledger.update_customer("77", &json!({"id": 78})).map(|_| ())),
        "customer 77: field `id`: cannot be changed by an update (this customer is `77`)"
    );
    let plan = ledger
        .update_plan("m", &json!({"interval": "year", "interval_count": 2}))
        .unwrap();
    assert_eq!(
        (plan.billing_freq, plan.billing_freq_count),
        (crate::model::Interval::Year, 2)
    );
    // A refused value is named as the patch wrote it.
    assert_eq!(
        refused(
            ledger
                .update_plan("m", &json!({"interval": "fortnight"}))
                .map(|_| ())
        ),
        "plan m: field `interval`: `fortnight` is not one of day, week, month, year"
    );
    assert_eq!(
        refused(
            ledger
                .update_plan("m", &json!({"interval_count": 1.5}))
                .map(|_| ())
        ),
        "plan m: field `interval_count`: must be an integer, got 1.5"
    );
    assert_eq!(
        refused(
            ledger
                .update_customer("a", &json!({"created": "notadate"}))
                .map(|_| ())
        ),
        "customer a: field `created`: must be an ISO 8601 date or timestamp string in the years \
         1900 to 2200, got \"notadate\""
    );
    assert_eq!(
        refused(
            ledger
                .update_customer("a", &json!({"metadata": {"": "x"}}))
                .map(|_| ())
        ),
        "customer a: field `metadata`: holds a variable without a name; name each one"
    );
    assert_eq!(
        refused(ledger.update_plan("m", &json!({"price": 100})).map(|_| ())),
        "plan m: field `price`: is not a field of a plan; its fields: id, name, billing_freq, \
         billing_freq_count, currency, product_name, data_source, pricing_model"
    );
}

/// The field names of a record kind list every field its records store
/// (their first names), in order: a patch can name each.
#[test]
fn field_names_cover_what_records_store() {
    fn stored(record: impl serde::Serialize) -> Vec<String> {
        let value = serde_json::to_value(record).unwrap();
        value.as_object().unwrap().keys().cloned().collect()
    }
    fn first_names(fields: &[&[&str]]) -> Vec<String> {
        fields.iter().map(|names| names[0].to_string()).collect()
    }
    let customer = Customer::from_json(&json!({"id": "c1", "name": "Acme"})).unwrap();
    assert_eq!(stored(customer), first_names(Customer::FIELD_NAMES));
    let plan =
        Plan::from_json(&json!({"id": "m", "name": "M", "interval": "month", "currency": "USD"}))
            .unwrap();
    assert_eq!(stored(plan), first_names(Plan::FIELD_NAMES));
    let source = DataSource::from_json(&json!({"id": "s"})).unwrap();
    assert_eq!(stored(source), first_names(DataSource::FIELD_NAMES));
}

#[test]
fn a_data_source_update_changes_its_name_or_type_only() {
    let mut ledger = ledger();
    ledger.upsert_data_sources(&[json!({"id": "s", "name": "Billing", "type": "api"})]);
    let updated = ledger
        .update_data_source("s", &json!({"kind": "stripe", "id": "s"}))
        .unwrap();
    assert_eq!(
        (updated.name.as_str(), updated.kind.as_str()),
        ("Billing", "stripe")
    );
    let refused = |ledger: &mut Ledger, patch: serde_json::Value| {
        ledger
            .update_data_source("s", &patch)
            .unwrap_err()
            .to_string()
    };
    assert_eq!(
        refused(&mut ledger, json!({"name": " "})),
        "data_source s: field `name`: must be a non-empty string"
    );
    assert_eq!(
        refused(&mut ledger, json!({"type": null})),
        "data_source s: field `type`: must be a non-empty string"
    );
    assert_eq!(
        refused(&mut ledger, json!({"kind": ""})),
        "data_source s: field `kind`: must be a non-empty string"
    );
    assert_eq!(
        refused(&mut ledger, json!({"created": "2024-01-01"})),
        "data_source s: field `created`: is not a field of a data_source; its fields: id, name, type"
    );
    assert_eq!(
        ledger
            .update_data_source("t", &json!({}))
            .unwrap_err()
            .to_string(),
        "data_source t not found"
    );
    assert_eq!(ledger.data_source("s").unwrap().kind, "stripe");
}

#[test]
fn a_replace_keeps_the_id_and_the_rules_of_an_upsert() {
    let mut ledger = ledger();
    ledger.upsert_plan_groups(&[json!({"id": "pg_1", "name": "All", "plans": ["m"]})]);
    let group = ledger
        .replace_plan_group("pg_1", &json!({"name": "Monthly", "plans": ["m"]}))
        .unwrap();
    assert_eq!(group.name, "Monthly");
    let refused = |result: Result<(), crate::Error>| result.unwrap_err().to_string();
    // Group ids are the ledger's to give: one in the record is passed over.
    let kept = ledger
        .replace_plan_group(
            "pg_1",
            &json!({"external_id": "mine", "name": "Kept", "plans": ["m"]}),
        )
        .unwrap();
    assert_eq!((kept.id.as_str(), kept.name), ("pg_1", "Kept"));
    assert!(ledger.plan_group("mine").is_none());
    assert_eq!(
        refused(
            ledger
                .replace_plan_group("pg_1", &json!({"name": "X", "plans": ["nope"]}))
                .map(|_| ())
        ),
        "plan_group pg_1: field `plans`: plan `nope` does not exist"
    );
    assert_eq!(
        refused(
            ledger
                .replace_plan_group("pg_9", &json!({"name": "X", "plans": []}))
                .map(|_| ())
        ),
        "plan_group pg_9 not found"
    );
    assert_eq!(ledger.plan_group("pg_1").unwrap().name, "Kept");
    ledger.upsert_customers(&[json!({"id": "a", "name": "A"})]);
    let invoice = json!({"customer_id": "a", "type": "subscription", "plan_id": "m",
                         "invoice_date": "2024-01-01", "amount": 3000, "currency": "USD"});
    ledger.replace_invoice("i1", &invoice).unwrap();
    assert_eq!(ledger.invoice("i1").unwrap().amount, 3000);
    ledger
        .replace_invoice("1", &json!({"id": 1.0, "customer_id": "a", "type": "one_time",
                                      "invoice_date": "2024-01-02", "amount": 100, "currency": "USD"}))
        .unwrap();
    assert_eq!(ledger.invoice("1").unwrap().amount, 100);
    assert_eq!(
        refused(ledger.replace_invoice("i1", &json!({"external_id": "i2"}))),
        "invoice i1: field `external_id`: cannot be changed by a replace (this invoice is `i1`)"
    );
    assert_eq!(
        refused(ledger.replace_invoice(
            "i1",
            &json!({"customer_id": "zz", "type": "one_time",
            "invoice_date": "2024-01-01", "amount": 5, "currency": "USD"})
        )),
        "invoice i1: field `customer_id`: customer `zz` does not exist; send the customer first"
    );
    assert_eq!(ledger.invoice("i1").unwrap().amount, 3000);
}

/// A plan group reads with its plans as objects, the interface's shape, in
/// the group's order, and loses a plan when the plan is deleted.
#[test]
fn a_plan_group_reads_with_its_plans_summarized() {
    let mut ledger = ledger();
    ledger.upsert_plans(
        &[json!({"id": "y", "name": "Yearly", "billing_freq": "year",
                                 "billing_freq_count": 2, "currency": "EUR",
                                 "product_name": "Pro", "data_source": "s"})],
    );
    ledger.upsert_plan_groups(&[json!({"id": "pg_1", "name": "All", "plans": ["y", "m"]})]);
    let expected = json!({"id": "pg_1", "name": "All", "plans": [
        {"id": "y", "name": "Yearly", "billing_freq": "year", "billing_freq_count": 2,
         "product_name": "Pro", "currency": "EUR"},
        {"id": "m", "name": "Monthly", "billing_freq": "month", "billing_freq_count": 1,
         "product_name": null, "currency": "USD"},
    ]});
    assert_eq!(
        ledger.get(RecordKind::PlanGroups, "pg_1").unwrap(),
        expected
    );
    assert_eq!(
        ledger.list(RecordKind::PlanGroups, 10, 0),
        json!({"count": 1, "list": [expected]})
    );
    let renamed = ledger
        .replace_plan_group("pg_1", &json!({"name": "Both", "plans": ["y", "m"]}))
        .unwrap();
    assert_eq!(json!(renamed)["name"], "Both");
    ledger.delete(RecordKind::Plans, "y").unwrap();
    assert_eq!(
        ledger.get(RecordKind::PlanGroups, "pg_1").unwrap()["plans"],
        json!([expected["plans"][1]])
    );
}

/// A field given under two of its names must be given once: two values are
/// refused naming both (the first no longer wins silently), the same value
/// under both is one value. So on every reader: JSON values, record texts.
#[test]
fn a_field_under_two_names_with_two_values_is_refused() {
    let mut ledger = ledger();
    let refused =
        |report: crate::WriteReport| report.results[0].import_error.clone().unwrap_or_default();
    assert_eq!(
        refused(
            ledger.upsert_plans(&[json!({"id": "p", "name": "P", "billing_freq": "year",
                                             "interval": "month", "currency": "USD"})])
        ),
        "plan p: field `interval`: `billing_freq` gives this field too, with another value; give one of them"
    );
    assert_eq!(
        refused(ledger.upsert_customers(&[json!({"id": "c", "name": "C",
            "created_date": "2024-01-01", "created": "2024-02-01"})])),
        "customer c: field `created`: `created_date` gives this field too, with another value; give one of them"
    );
    assert_eq!(
        refused(ledger.upsert_customers(&[json!({"id": "c", "external_id": "d", "name": "C"})])),
        "customer ?: field `external_id`: `id` gives this field too, with another value; give one of them"
    );
    let invoice = r#"{"id": "i", "customer_id": "a", "type": "subscription", "plan_id": "m",
        "invoice_date": "2024-01-01", "amount": 3000, "amount_in_cents": 5000, "currency": "USD"}"#;
    let message = "invoice i: field `amount_in_cents`: `amount` gives this field too, with another value; give one of them";
    assert_eq!(refused(ledger.upsert_invoice_texts(&[invoice])), message);
    let value: serde_json::Value = serde_json::from_str(invoice).unwrap();
    assert_eq!(refused(ledger.upsert_invoices(&[value])), message);
    assert!(ledger.plan("p").is_none() && ledger.invoice("i").is_none());
    // The same value under both names is the one value.
    let same = ledger.upsert_plans(&[json!({"id": "p", "name": "P", "billing_freq": "year",
                                            "interval": "year", "currency": "USD"})]);
    assert_eq!(same.accepted(), 1);
    assert_eq!(ledger.plan("p").unwrap().billing_freq, Interval::Year);
}

/// A base currency that every report would fail in is refused: a new one
/// without a rate while an invoice is in another currency. With a rate, or
/// with every invoice in it, it is taken.
#[test]
fn a_base_currency_without_a_rate_for_the_stored_amounts_is_refused() {
    let mut ledger = ledger();
    ledger.upsert_invoices(&[
        json!({"id": "i", "customer_id": "a", "type": "subscription",
        "plan_id": "m", "invoice_date": "2024-01-01", "amount": 3000, "currency": "USD"}),
    ]);
    let error = ledger
        .update_settings(&json!({"base_currency": "XYZ"}))
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        "setting `base_currency`: XYZ has no exchange rate, and amounts in USD (invoice i) \
         would need one; load its rates first"
    );
    assert_eq!(ledger.settings().base_currency, Currency::USD);
    ledger
        .load_fx_rates(&[json!({"date": "2024-01-01", "currency": "EUR", "rate": 0.9})])
        .unwrap();
    let settings = ledger
        .update_settings(&json!({"base_currency": "EUR"}))
        .unwrap();
    assert_eq!(settings.base_currency.as_str(), "EUR");
    let mut fresh = Ledger::default();
    assert_eq!(
        fresh
            .update_settings(&json!({"base_currency": "XYZ"}))
            .unwrap()
            .base_currency
            .as_str(),
        "XYZ"
    );
}

/// A field given under two of its names with two values is refused naming
/// both, whatever their order, and nothing changes; the same value twice is
/// that value.
#[test]
fn an_update_giving_a_field_two_values_under_two_names_is_refused() {
    let mut ledger = ledger();
    ledger.upsert_customers(&[json!({"id": "a", "name": "A", "created_date": "2024-04-01"})]);
    let error = ledger
        .update_customer(
            "a",
            &json!({"created": "2024-01-01", "created_date": "2024-02-01"}),
        )
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        "customer a: field `created`: `created_date` gives this field too, with another value; give one of them"
    );
    let created = |ledger: &crate::Ledger| {
        ledger
            .customer("a")
            .and_then(|c| c.created_date)
            .map(|t| t.to_string())
    };
    assert_eq!(created(&ledger).as_deref(), Some("2024-04-01"));
    let same = json!({"created_date": "2024-05-01", "created": "2024-05-01"});
    ledger.update_customer("a", &same).unwrap();
    assert_eq!(created(&ledger).as_deref(), Some("2024-05-01"));
    let error = ledger
        .update_plan("m", &json!({"interval": "year", "billing_freq": "week"}))
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        "plan m: field `interval`: `billing_freq` gives this field too, with another value; give one of them"
    );
}
