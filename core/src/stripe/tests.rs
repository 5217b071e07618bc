//! Rules that need more than one batch, and bad input. The movement rules
//! are tested end to end by the fixture sets in `testdata/stripe/`.

use super::*;
use crate::{Ledger, Settings};
use serde_json::json;

fn price() -> Value {
    json!({"id": "price_m", "object": "price", "currency": "usd",
           "recurring": {"interval": "month", "interval_count": 1, "usage_type": "licensed"}})
}

fn invoice(id: &str, created: i64, amount: Value) -> Value {
    json!({"id": id, "object": "invoice", "customer": "cus_1", "created": created,
           "currency": "usd", "status": "paid", "customer_name": "One",
           "lines": {"object": "list", "data": [{
               "id": format!("il_{id}"), "object": "line_item", "amount": amount, "quantity": 1,
               "period": {"start": created, "end": created + 31 * 86_400},
               "parent": {"type": "subscription_item_details", "subscription_item_details":
                   {"subscription": "sub_1", "subscription_item": "si_1", "proration": false}},
               "pricing": {"type": "price_details", "price_details": {"price": "price_m"}}}]}})
}

const JAN_1: i64 = 1_704_067_200;

fn subscription(fields: Value) -> Value {
    let mut sub = json!({"id": "sub_1", "object": "subscription", "customer": "cus_1",
        "currency": "usd", "status": "active",
        "items": {"object": "list", "data": [{"id": "si_1", "object": "subscription_item"}]}});
    for (k, v) in fields.as_object().unwrap() {
        sub[k] = v.clone();
    }
    sub
}

#[test]
fn a_customer_missing_from_the_batch_is_made_from_the_invoice() {
    let mut ledger = Ledger::new(Settings::default());
    let report = ledger.import_stripe(
        &[price(), invoice("in_1", JAN_1, json!(3000))],
        &StripeOptions::default(),
    );
    assert!(report.rejected.is_empty(), "{:?}", report.rejected);
    assert_eq!(&*ledger.customer("cus_1").unwrap().name, "One");
    assert_eq!(ledger.data_source("stripe").unwrap().kind, "stripe");
}

#[test]
fn bad_fields_are_rejected_by_stripe_id_and_field_without_losing_stored_records() {
    let mut ledger = Ledger::new(Settings::default());
    ledger.import_stripe(
        &[price(), invoice("in_1", JAN_1, json!(3000))],
        &StripeOptions::default(),
    );
    let mut bad = invoice("in_1", JAN_1, json!("lots"));
    bad["lines"]["data"][0]["id"] = json!("il_x");
    let report = ledger.import_stripe(
        &[
            bad,
            json!({"object": "invoice"}),
            json!(7),
            json!({"id": "x", "object": "payout"}),
        ],
        &StripeOptions::default(),
    );
    let rejected = &report.rejected[0];
    assert_eq!(
        (
            rejected.object.as_str(),
            rejected.id.as_str(),
            rejected.field.as_str(),
            rejected.reason.as_str()
        ),
        (
            "invoice",
            "in_1",
            "lines.data[0].amount",
            "must be an integer, got \"lots\""
        )
    );
    assert_eq!(report.rejected.len(), 1);
    assert_eq!(report.skipped.len(), 3, "{:?}", report.skipped);
    assert_eq!(
        ledger.invoice("in_1").unwrap().amount,
        3000,
        "the stored invoice stays"
    );
}

#[test]
fn a_credit_note_in_a_later_batch_names_the_stored_invoice_and_replaces_its_refund() {
    let mut ledger = Ledger::new(Settings::default());
    ledger.import_stripe(
        &[price(), invoice("in_1", JAN_1, json!(3000))],
        &StripeOptions::default(),
    );
    let refund = json!({"id": "re_1", "object": "refund", "amount": 1000, "currency": "usd",
        "created": JAN_1 + 86_400, "status": "succeeded",
        "charge": {"id": "ch_1", "object": "charge", "customer": "cus_1", "invoice": "in_1", "currency": "usd",
                   "amount": 3000, "status": "succeeded", "created": JAN_1}});
    let report = ledger.import_stripe(&[refund], &StripeOptions::default());
    assert!(report.rejected.is_empty(), "{:?}", report.rejected);
    let stored = ledger.invoice("re_1").unwrap();
    assert_eq!(stored.amount, -1000);
    assert_eq!(
        stored
            .details()
            .refunded_invoice_id
            .as_ref()
            .unwrap()
            .as_str(),
        "in_1"
    );
    let note = json!({"id": "cn_1", "object": "credit_note", "customer": "cus_1", "invoice": "in_1",
        "currency": "usd", "created": JAN_1 + 86_400, "status": "issued", "total": 1000,
        "refunds": [{"refund": "re_1", "amount_refunded": 1000}]});
    let report = ledger.import_stripe(&[note], &StripeOptions::default());
    assert_eq!((report.invoices, report.removed), (1, 1));
    assert!(
        ledger.invoice("re_1").is_none(),
        "counted once, as the credit note"
    );
    let note = ledger.invoice("cn_1").unwrap();
    assert_eq!(
        note.subscription_id.as_ref().unwrap().as_str(),
        "sub_1/si_1"
    );
}

#[test]
fn an_undone_cancellation_is_removed() {
    let mut ledger = Ledger::new(Settings::default());
    let scheduled =
        subscription(json!({"cancel_at": JAN_1 + 40 * 86_400, "cancel_at_period_end": true}));
    ledger.import_stripe(
        &[price(), invoice("in_1", JAN_1, json!(3000)), scheduled],
        &StripeOptions::default(),
    );
    let cancellation = ledger.invoice("sub_1/si_1/cancellation").unwrap();
    assert_eq!(
        cancellation.invoice_date.to_string(),
        "2024-02-10T00:00:00Z"
    );
    let report = ledger.import_stripe(&[subscription(json!({}))], &StripeOptions::default());
    assert_eq!(report.removed, 1);
    assert!(ledger.invoice("sub_1/si_1/cancellation").is_none());
}

#[test]
fn events_carry_their_object_and_the_latest_wins() {
    let event = |id: &str, amount: i64| {
        json!({"id": id, "object": "event", "type": "invoice.updated",
               "data": {"object": invoice("in_1", JAN_1, json!(amount))}})
    };
    let records = map_stripe_objects(
        &[
            price(),
            json!({"object": "list", "data": [event("evt_1", 3000), event("evt_2", 3500)]}),
            json!({"id": "evt_3", "object": "event", "type": "customer.deleted", "data": {"object": {"id": "cus_1", "object": "customer"}}}),
        ],
        &StripeOptions::default(),
        &NothingStored,
    );
    assert_eq!(records.invoices.len(), 1);
    assert_eq!(records.invoices[0]["amount"], 3500);
    assert_eq!(records.skipped[0].id, "evt_3");
}

#[test]
fn options_are_checked() {
    assert_eq!(
        StripeOptions::from_json(&json!({"uncollectible": "void", "data_source": "acct_1"}))
            .unwrap(),
        StripeOptions {
            uncollectible: UncollectibleAs::Void,
            data_source: "acct_1".to_string()
        }
    );
    let error = StripeOptions::from_json(&json!({"uncollectible": "maybe"})).unwrap_err();
    assert_eq!(
        error.to_string(),
        "parameter `uncollectible`: must be `failed` or `void`, got \"maybe\""
    );
    assert!(StripeOptions::from_json(&json!({"pause": "churn"})).is_err());
    // A null option keeps its default; an unknown one is refused null or not.
    assert_eq!(
        StripeOptions::from_json(&json!({"uncollectible": null, "data_source": null})).unwrap(),
        StripeOptions::default()
    );
    assert_eq!(
        StripeOptions::from_json(&json!({"pause": null}))
            .unwrap_err()
            .to_string(),
        "parameter `pause`: is not an option of the Stripe import (uncollectible, data_source)"
    );
    assert_eq!(
        StripeOptions::from_json(&json!({"data_source": ""}))
            .unwrap_err()
            .to_string(),
        "parameter `data_source`: must be a non-empty text, got \"\""
    );
}

#[test]
fn an_item_with_only_a_proration_credit_drops_to_zero_from_the_change() {
    let mut removed = invoice("in_2", JAN_1 + 15 * 86_400, json!(-1500));
    let line = &mut removed["lines"]["data"][0];
    line["parent"]["subscription_item_details"]["proration"] = json!(true);
    line["period"]["end"] = json!(JAN_1 + 31 * 86_400);
    let mut ledger = Ledger::new(Settings::default());
    let report = ledger.import_stripe(
        &[price(), invoice("in_1", JAN_1, json!(3000)), removed],
        &StripeOptions::default(),
    );
    assert!(report.rejected.is_empty(), "{:?}", report.rejected);
    let record = ledger.invoice("in_2").unwrap();
    assert_eq!((record.amount, record.quantity), (0, 0));
    assert_eq!(
        record.details().lines[0].amount,
        -1500,
        "the credit stays listed"
    );
    let as_of = "2024-01-20T00:00:00Z".parse().unwrap();
    let moves = ledger
        .movements(as_of, &crate::MovementFilter::default())
        .unwrap();
    let kinds: Vec<(&str, i64)> = moves
        .iter()
        .map(|m| (m.kind.as_str(), m.mrr_change))
        .collect();
    assert_eq!(kinds, [("new", 3000), ("churn", -3000)]);
}

#[test]
fn lines_whose_amounts_sum_beyond_64_bit_cents_are_refused_naming_the_invoice() {
    let rejected = |invoice: Value| {
        let mut ledger = Ledger::new(Settings::default());
        let report = ledger.import_stripe(&[price(), invoice], &StripeOptions::default());
        let r = &report.rejected[0];
        (r.id.clone(), r.field.clone(), r.reason.clone())
    };
    let half = i64::MAX / 2 + 1;
    let mut two_lines = invoice("in_1", JAN_1, json!(half));
    let mut second = two_lines["lines"]["data"][0].clone();
    second["id"] = json!("il_2");
    two_lines["lines"]["data"]
        .as_array_mut()
        .unwrap()
        .push(second);
    assert_eq!(
        rejected(two_lines),
        (
            "in_1".to_string(),
            "lines.data[0]".to_string(),
            "the lines' amounts total 9223372036854775808 cents, beyond 64-bit cents".to_string()
        )
    );
    let mut many = invoice("in_3", JAN_1, json!(1000));
    many["lines"]["data"][0]["quantity"] = json!(half);
    let mut second = many["lines"]["data"][0].clone();
    second["id"] = json!("il_3");
    many["lines"]["data"].as_array_mut().unwrap().push(second);
    assert_eq!(
        rejected(many),
        (
            "in_3".to_string(),
            "lines.data[0]".to_string(),
            "the lines' quantities total beyond 64-bit integers".to_string()
        )
    );
    let mut taxed = invoice("in_2", JAN_1, json!(half));
    taxed["lines"]["data"][0]["taxes"] = json!([{"amount": half, "tax_behavior": "exclusive"}]);
    assert_eq!(
        rejected(taxed),
        (
            "in_2".to_string(),
            "lines.data[0].amount".to_string(),
            "with discounts and exclusive taxes totals 9223372036854775808 cents, beyond 64-bit cents"
                .to_string()
        )
    );
}
