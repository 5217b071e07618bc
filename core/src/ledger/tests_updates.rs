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
    let plan = ledger
        .update_plan("m", &json!({"interval": "year", "interval_count": 2}))
        .unwrap();
    assert_eq!(
        (plan.billing_freq, plan.billing_freq_count),
        (crate::model::Interval::Year, 2)
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
}
