//! The invoice rules, field by field.

use super::*;
use crate::money::MAX_AMOUNT;
use serde_json::json;

fn base() -> Value {
    json!({"id": "i1", "customer_id": "c", "type": "subscription", "invoice_date": "2024-01-01",
           "amount": 3000, "currency": "USD", "plan_id": "m"})
}

fn error_of(patch: Value) -> String {
    let mut v = base();
    for (k, val) in patch.as_object().unwrap() {
        if val.is_null() {
            v.as_object_mut().unwrap().remove(k);
        } else {
            v[k] = val.clone();
        }
    }
    read_both(&v).unwrap_err().to_string()
}

/// Reads `v` as a value and as text: both must give the same invoice or
/// the same error.
fn read_both(v: &Value) -> Result<Invoice> {
    let from_value = Invoice::from_json(v);
    let from_text = Invoice::from_json_text(&v.to_string());
    assert_eq!(from_value, from_text, "{v}");
    from_value
}

/// Amounts as text, as CSV cells and spreadsheets write them: a fraction
/// of zeros reads as the integer, as the number `3000.0` does.
#[test]
fn an_amount_text_with_a_zero_fraction_is_its_integer() {
    for (text, cents) in [
        ("3000", 3000),
        (" 3000.00 ", 3000),
        ("3000.", 3000),
        ("+3000.0", 3000),
    ] {
        let mut v = base();
        v["amount"] = json!(text);
        assert_eq!(read_both(&v).unwrap().amount, cents, "{text}");
    }
    let mut refund = base();
    refund["type"] = json!("refund");
    refund["amount"] = json!("-500.000");
    assert_eq!(read_both(&refund).unwrap().amount, -500);
}

#[test]
fn reads_a_minimal_subscription_invoice() {
    let i = read_both(&base()).unwrap();
    assert_eq!(i.kind, InvoiceType::Subscription);
    assert_eq!(i.quantity, 1);
    assert_eq!(i.status, InvoiceStatus::Paid);
}

#[test]
fn each_rule_names_its_field() {
    assert_eq!(
        error_of(json!({"plan_id": null})),
        "invoice i1: field `plan_id`: is required for a subscription invoice"
    );
    assert_eq!(
        error_of(json!({"amount": -1})),
        "invoice i1: field `amount`: must be 0 or more for a subscription invoice, got -1"
    );
    assert_eq!(
        error_of(json!({"type": "refund", "amount": 5})),
        "invoice i1: field `amount`: must be 0 or less for a refund, got 5"
    );
    assert_eq!(
        error_of(json!({"type": "cancellation", "amount": 5})),
        "invoice i1: field `amount`: must be 0 for a cancellation, got 5"
    );
    assert_eq!(
        error_of(json!({"currency": "dollars"})),
        "invoice i1: field `currency`: `dollars` is not a three-letter currency code"
    );
    assert_eq!(
        error_of(json!({"invoice_date": "soon"})),
        "invoice i1: field `invoice_date`: must be an ISO 8601 date or timestamp string in the years 1900 to 2200, got \"soon\""
    );
    assert_eq!(
        error_of(json!({"period_start": "2024-02-01", "period_end": "2024-01-01"})),
        "invoice i1: field `period_end`: must be after period_start"
    );
    assert_eq!(
        error_of(json!({"type": "gift"})),
        "invoice i1: field `type`: `gift` is not one of subscription, one-time, refund, cancellation"
    );
    assert_eq!(
        error_of(json!({"amount": "12.5"})),
        "invoice i1: field `amount`: must be an integer, got \"12.5\""
    );
    for text in ["12.50", ".0", "1e3", "12.0.0", "-", "."] {
        assert_eq!(
            error_of(json!({"amount": text})),
            format!("invoice i1: field `amount`: must be an integer, got \"{text}\""),
        );
    }
}

/// A whole number too large for an integer is out of range, not "not an
/// integer", whether written as a number or as text.
#[test]
fn whole_numbers_beyond_any_integer_are_out_of_range() {
    let huge: Value = serde_json::from_str("100000000000000000000000").unwrap();
    assert_eq!(
        error_of(json!({"amount": huge})),
        "invoice i1: field `amount`: 1e+23 is out of range"
    );
    assert_eq!(
        error_of(json!({"amount": u64::MAX})),
        "invoice i1: field `amount`: 18446744073709551615 is out of range"
    );
    for text in [
        "100000000000000000000",
        "-9999999999999999999",
        " 99999999999999999999.00 ",
    ] {
        assert_eq!(
            error_of(json!({"amount": text})),
            format!("invoice i1: field `amount`: \"{text}\" is out of range"),
        );
    }
    assert_eq!(
        error_of(json!({"quantity": 1e20})),
        "invoice i1: field `quantity`: 1e+20 is out of range"
    );
    // A whole float an integer holds is that integer, checked against the
    // field's own range, as an integer written out is.
    assert_eq!(
        error_of(json!({"amount": 1e16})),
        "invoice i1: field `amount`: 10000000000000000 is out of range: at most 1000000000000 cents either way"
    );
    assert_eq!(
        error_of(json!({"amount": 1e16})),
        error_of(json!({"amount": 10_000_000_000_000_000_i64}))
    );
    assert_eq!(
        error_of(json!({"amount": 1.5e20})),
        "invoice i1: field `amount`: 1.5e+20 is out of range"
    );
}

#[test]
fn amounts_and_quantities_are_bounded() {
    assert_eq!(
        error_of(json!({"amount": 1_000_000_000_001_i64})),
        "invoice i1: field `amount`: 1000000000001 is out of range: at most 1000000000000 cents either way"
    );
    assert_eq!(
        error_of(json!({"type": "refund", "amount": i64::MIN})),
        "invoice i1: field `amount`: -9223372036854775808 is out of range: at most 1000000000000 cents either way"
    );
    assert_eq!(
        error_of(json!({"quantity": 1_000_000_001})),
        "invoice i1: field `quantity`: must be at most 1000000000, got 1000000001"
    );
    let mut v = base();
    v["amount"] = json!(MAX_AMOUNT);
    assert_eq!(read_both(&v).unwrap().amount, 1_000_000_000_000);
    v["lines"] = json!([{"description": "seat", "amount": i64::MAX}]);
    let err = read_both(&v).unwrap_err();
    assert_eq!(err.field(), Some("lines[0].amount"));
    v["lines"] = json!([]);
    v["transactions"] = json!([{"type": "payment", "date": "2024-01-01", "amount": -i64::MAX}]);
    let err = read_both(&v).unwrap_err();
    assert_eq!(err.field(), Some("transactions[0].amount"));
}

#[test]
fn text_and_value_read_every_field_alike() {
    let full = json!({"external_id": 17, "customer_external_id": "c", "type": " One_Time ",
        "date": "2024-01-01 10:00:00", "amount_in_cents": "3000", "currency": "usd",
        "tax": 3000.0, "discount": 5, "quantity": "2", "status": "VOID",
        "service_period_start": "2024-01-01T00:00:00Z", "service_period_end": "2024-02-01T00:00:00+01:00",
        "subscription_external_id": 9, "due_date": "", "paid_date": "2024-01-02",
        "payment_method": "card", "description": "caf\u{e9} \"x\"", "number": 12,
        "refunded_invoice_id": null, "data_source_id": "stripe", "unknown": [1, {"a": 2}],
        "line_items": [{"description": "seat", "amount": 100, "quantity": 3,
                        "period_start": "2024-01-01", "period_end": "2024-02-01"}, {}],
        "transactions": [{"type": "REFUND", "result": "failed", "date": "2024-01-03"},
                         {"id": "t9", "date": "2024-01-04", "amount": 7}]});
    let invoice = read_both(&full).unwrap();
    assert_eq!(invoice.kind, InvoiceType::OneTime);
    assert_eq!(invoice.details().transactions[0].id, "17-t1");
    assert_eq!(
        invoice.details().description.as_deref(),
        Some("caf\u{e9} \"x\"")
    );
    for (field, bad) in [
        ("id", json!(" ")),
        ("customer_id", json!(true)),
        ("type", json!(null)),
        ("invoice_date", json!(null)),
        ("invoice_date", json!({"a": 1})),
        ("amount", json!(1.5)),
        ("amount", json!([1])),
        ("currency", json!(7)),
        ("status", json!("lost")),
        ("quantity", json!(-1)),
        ("tax_amount", json!(4000)),
        ("period_end", json!("soon")),
        ("lines", json!({})),
        ("lines", json!([1])),
        ("lines", json!([{"amount": "x"}])),
        (
            "transactions",
            json!([{"date": "2024-01-01", "type": "gift"}]),
        ),
        ("transactions", json!([{"amount": 1}])),
    ] {
        let mut v = base();
        v[field] = bad;
        assert!(read_both(&v).is_err(), "{v}");
    }
    assert_eq!(
        Invoice::from_json_text("[1]").unwrap_err().to_string(),
        "invoice ?: field `(record)`: must be a JSON object"
    );
    assert_eq!(
        Invoice::from_json_text("{\"id\": ")
            .unwrap_err()
            .to_string(),
        "invoice ?: field `(record)`: is not valid JSON: EOF while parsing a value at line 1 column 7"
    );
}

#[test]
fn details_are_kept_out_of_line_only_when_present() {
    let plain = Invoice::from_json(&base()).unwrap();
    assert!(plain.details.is_none());
    assert_eq!(
        serde_json::to_string(&plain).unwrap(),
        "{\"id\":\"i1\",\"customer_id\":\"c\",\"type\":\"subscription\",\
         \"invoice_date\":\"2024-01-01\",\"amount\":3000,\"currency\":\"USD\",\
         \"plan_id\":\"m\",\"period_start\":null,\"period_end\":null,\
         \"subscription_id\":null,\"quantity\":1,\"status\":\"paid\",\"due_date\":null,\
         \"payment_date\":null,\"payment_method\":null,\"description\":null,\
         \"invoice_number\":null,\"tax_amount\":0,\"discount_amount\":0,\"lines\":[],\
         \"transactions\":[],\"refunded_invoice_id\":null,\"data_source\":null}"
    );
    let mut value = base();
    value["discount_amount"] = json!(5);
    let discounted = Invoice::from_json(&value).unwrap();
    assert_eq!(discounted.details().discount_amount, 5);
    assert!(discounted.details.is_some());
    let text = serde_json::to_string(&discounted).unwrap();
    assert!(
        text.contains("\"tax_amount\":0,\"discount_amount\":5,"),
        "{text}"
    );
    let mut refund = base();
    refund["refunded_invoice_id"] = json!("i0");
    let refund = read_both(&refund).unwrap();
    assert_eq!(
        refund.details().refunded_invoice_id,
        Some(InvoiceId::from("i0"))
    );
    let text = serde_json::to_string(&refund).unwrap();
    assert!(text.contains("\"refunded_invoice_id\":\"i0\","), "{text}");
    assert_eq!(std::mem::size_of::<InvoiceRecord>(), 80);
    assert_eq!(std::mem::size_of::<Invoice>(), 104);
}

#[test]
fn nested_errors_carry_their_path() {
    let mut v = base();
    v["transactions"] = json!([{"id": "t", "type": "payment", "date": "nope"}]);
    let err = read_both(&v).unwrap_err();
    assert_eq!(err.field(), Some("transactions[0].date"));
}

#[test]
fn errors_name_the_field_as_the_record_wrote_it() {
    let err = |record: serde_json::Value| Invoice::from_json(&record).unwrap_err().to_string();
    assert_eq!(
        err(
            json!({"id": "r", "customer_id": "c", "type": "refund", "date": "2024-01-01", "amount_in_cents": 500, "currency": "USD"})
        ),
        "invoice r: field `amount_in_cents`: must be 0 or less for a refund, got 500"
    );
    assert_eq!(
        err(
            json!({"id": "t", "customer_id": "c", "type": "one_time", "date": "2024-01-01", "amount": 500, "tax": 900, "currency": "usd"})
        ),
        "invoice t: field `tax`: must be from 0 to the amount, got 900"
    );
    assert_eq!(
        err(
            json!({"id": "p", "customer_id": "c", "type": "one_time", "date": "2024-01-01", "amount": 500, "currency": "USD",
            "service_period_start": "2024-02-01", "service_period_end": "2024-01-01"})
        ),
        "invoice p: field `service_period_end`: must be after service_period_start"
    );
}
