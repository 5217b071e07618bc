use super::*;
use proptest::prelude::*;
use proptest::sample::select;

#[test]
fn every_field_is_named_by_each_of_its_names_and_ids_as_every_record_reads_them() {
    for &field in Field::ALL {
        for name in field.names() {
            assert_eq!(Field::named(name), Some(field), "{name}");
        }
    }
    assert_eq!(Field::named("unknown"), None);
    assert_eq!(Field::Id.names(), crate::model::fields::ID_NAMES);
}

/// A line as the generator and most exports write one.
const LINE: &str = r#"{"id":"cus_1-inv0001","customer_id":"cus_1","type":"subscription","invoice_date":"2024-10-08","amount":2610,"currency":"EUR","plan_id":"basic-m-eur","quantity":2}"#;

#[test]
fn a_flat_line_is_read_straight_into_the_invoice_the_general_reader_gives() {
    let fast = Invoice::from_flat_text(LINE, &mut RecentIds::default()).expect("plain");
    assert_eq!(Ok(&fast), Invoice::from_json_text(LINE).as_ref());
    assert_eq!(
        (
            fast.id.as_str(),
            fast.amount,
            fast.quantity,
            fast.currency.as_str()
        ),
        ("cus_1-inv0001", 2610, 2, "EUR")
    );
}

#[test]
fn a_line_a_plain_reader_cannot_vouch_for_is_left_to_the_general_reader() {
    for line in [
        // A field under two names, or twice.
        r#"{"id":"i1","customer_id":"c","type":"one-time","invoice_date":"2024-01-01","amount":1,"amount_in_cents":2,"currency":"USD"}"#,
        r#"{"id":"i1","customer_id":"c","type":"one-time","invoice_date":"2024-01-01","amount":1,"amount":2,"currency":"USD"}"#,
        // A number for an id, a float amount, an escape, a nested value.
        r#"{"id":7,"customer_id":"c","type":"one-time","invoice_date":"2024-01-01","amount":1,"currency":"USD"}"#,
        r#"{"id":"i1","customer_id":"c","type":"one-time","invoice_date":"2024-01-01","amount":1.0,"currency":"USD"}"#,
        r#"{"id":"i\u0031","customer_id":"c","type":"one-time","invoice_date":"2024-01-01","amount":1,"currency":"USD"}"#,
        r#"{"id":"i1","customer_id":"c","type":"one-time","invoice_date":"2024-01-01","amount":1,"currency":"USD","lines":[]}"#,
        // A broken rule, or malformed text.
        r#"{"id":"i1","customer_id":"c","type":"refund","invoice_date":"2024-01-01","amount":1,"currency":"USD"}"#,
        r#"{"id":"i1","customer_id":"c","type":"one-time","invoice_date":"2024-01-01","amount":1,"currency":"USD""#,
    ] {
        assert_eq!(
            Invoice::from_flat_text(line, &mut RecentIds::default()),
            None,
            "{line}"
        );
    }
    // An unknown key, a null and a bool elsewhere change nothing.
    let line = r#"{"id":"i1","customer_id":"c","type":"one-time","invoice_date":"2024-01-01","amount":1,"currency":"USD","status":null,"x":true}"#;
    let fast = Invoice::from_flat_text(line, &mut RecentIds::default());
    assert_eq!(fast.as_ref(), Invoice::from_json_text(line).ok().as_ref());
    assert!(fast.is_some());
}

#[test]
fn a_tree_with_nested_values_is_left_to_the_general_reader() {
    let plain = Json::parse(LINE).expect("json");
    assert_eq!(
        Invoice::from_flat_tree(&plain, &mut RecentIds::default()).as_ref(),
        Invoice::from_node(&plain).ok().as_ref()
    );
    let nested = LINE.replace(r#""quantity":2"#, r#""quantity":2,"lines":[]"#);
    let nested = Json::parse(&nested).expect("json");
    assert_eq!(
        Invoice::from_flat_tree(&nested, &mut RecentIds::default()),
        None
    );
    assert!(Invoice::from_node(&nested).is_ok());
}

/// One key and value of an invoice line: mostly a field's valid value,
/// sometimes an invalid one, an alias, an unknown key or a value of
/// another JSON kind.
fn entry() -> impl Strategy<Value = String> {
    let valid = select(
        &[
            r#""id":"i1""#,
            r#""customer_id":"c1""#,
            r#""customer":" c2 ""#,
            r#""type":"subscription""#,
            r#""type":" Refund ""#,
            r#""type":"cancellation""#,
            r#""type":"onetime""#,
            r#""invoice_date":"2024-01-31""#,
            r#""date":"2024-02-01T10:00:00+02:00""#,
            r#""amount":100"#,
            r#""amount":0"#,
            r#""amount":-100"#,
            r#""amount_in_cents":1000000000000"#,
            r#""currency":"usd""#,
            r#""plan_id":"p1""#,
            r#""plan_id":" ""#,
            r#""status":" OPEN""#,
            r#""status":null"#,
            r#""quantity":3"#,
            r#""quantity":0"#,
            r#""tax_amount":10"#,
            r#""tax":0"#,
            r#""period_start":"2024-01-01""#,
            r#""period_end":"2024-02-01""#,
            r#""service_period_end":"""#,
            r#""subscription_id":"s1""#,
            r#""due_date":"2024-01-15T00:00:00Z""#,
            r#""paid_date":"2024-01-02""#,
            r#""payment_method":"card""#,
            r#""description":"é""#,
            r#""number":"N-1""#,
            r#""discount":5"#,
            r#""refunded_invoice_id":"i0""#,
            r#""data_source_id":"ds""#,
            r#""lines":null"#,
            r#""other":"x""#,
            r#""flag":true"#,
        ][..],
    );
    let invalid = select(
        &[
            r#""id":" ""#,
            r#""id":42"#,
            r#""customer_id":"""#,
            r#""type":"bogus""#,
            r#""invoice_date":"2201-01-01""#,
            r#""invoice_date":20240101"#,
            r#""amount":1.5"#,
            r#""amount":"12""#,
            r#""amount":1000000000001"#,
            r#""amount":18446744073709551615"#,
            r#""currency":"US""#,
            r#""status":"bogus""#,
            r#""quantity":-1"#,
            r#""quantity":1000000001"#,
            r#""quantity":true"#,
            r#""tax_amount":-1"#,
            r#""period_end":"2023-01-01""#,
            r#""description":"a\"b""#,
            r#""lines":[]"#,
            r#""transactions":"x""#,
            r#""nested":{"a":1}"#,
        ][..],
    );
    prop_oneof![12 => valid, 1 => invalid].prop_map(str::to_string)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(4_000))]

    /// Whatever a line holds, the plain reader reads it as the general
    /// reader does, or leaves it to it.
    #[test]
    fn a_line_is_read_as_the_general_reader_reads_it_or_not_at_all(
        entries in prop::collection::vec(entry(), 0..14),
        base in any::<bool>(),
        once in prop::bool::weighted(0.8),
    ) {
        // Most lines give each key once, and half start from a valid
        // invoice whose fields the entries replace, so the plain reader
        // answers often.
        let key = |entry: &str| entry.split(':').next().unwrap_or_default().to_string();
        let mut parts: Vec<String> = Vec::new();
        for entry in entries {
            if !once || !parts.iter().any(|part| key(part) == key(&entry)) {
                parts.push(entry);
            }
        }
        if base {
            for field in [r#""id":"i9""#, r#""customer_id":"c9""#, r#""type":"one-time""#,
                          r#""invoice_date":"2024-03-01""#, r#""amount":5"#, r#""currency":"EUR""#] {
                if !parts.iter().any(|part| key(part) == key(field)) {
                    parts.push(field.to_string());
                }
            }
        }
        let line = format!("{{{}}}", parts.join(","));
        if let Some(fast) = Invoice::from_flat_text(&line, &mut RecentIds::default()) {
            let general = Invoice::from_json_text(&line);
            prop_assert_eq!(general.as_ref().ok(), Some(&fast), "{}", line);
        }
        // The same record as a binding's tree.
        if let Ok(tree) = Json::parse(&line)
            && let Some(fast) = Invoice::from_flat_tree(&tree, &mut RecentIds::default())
        {
            let general = Invoice::from_node(&tree);
            prop_assert_eq!(general.as_ref().ok(), Some(&fast), "{}", line);
        }
    }
}
