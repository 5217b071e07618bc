//! Errors of reports in parts: a merge of partials of different requests
//! names what differs, bytes that are not a partial are refused (never a
//! panic), and names and parameters are checked as `Ledger::report` checks
//! them.

mod support;

use submetrics::{Ledger, ReportPartial, Settings};
use support::{as_of, params};

fn ledger() -> Ledger {
    support::ledger_with(
        &[serde_json::json!({"id": "c0", "name": "Zero"})],
        &[
            serde_json::json!({"id": "i0", "customer_id": "c0", "type": "subscription", "plan_id": "m",
            "invoice_date": "2024-01-10", "amount": 3000, "currency": "USD"}),
        ],
    )
}

#[test]
fn partials_of_different_requests_do_not_merge_and_the_error_names_the_difference() {
    let ledger = ledger();
    let at = as_of();
    let summary = ledger.report_partial("summary", &params(&[]), at).unwrap();
    let map = ledger.report_partial("map", &params(&[]), at).unwrap();
    let err = summary.clone().merge(map).unwrap_err();
    assert_eq!(err.code(), "invalid_partial");
    assert_eq!(
        err.to_string(),
        "partials of different requests do not merge: their reports differ (`summary` and `map`)"
    );
    let euro = ledger
        .report_partial("summary", &params(&[("baseCurrency", "EUR")]), at)
        .unwrap();
    let err = summary.clone().merge(euro).unwrap_err();
    assert_eq!(
        err.to_string(),
        "partials of different requests do not merge: their parameters differ (`{}` and `{\"baseCurrency\":\"EUR\"}`)"
    );
    let later = ledger
        .report_partial(
            "summary",
            &params(&[]),
            "2024-10-01T00:00:00Z".parse().unwrap(),
        )
        .unwrap();
    let err = summary.clone().merge(later).unwrap_err();
    assert_eq!(
        err.to_string(),
        "partials of different requests do not merge: their as_of differ (`2024-09-15T12:00:00+00:00` and `2024-10-01T00:00:00+00:00`)"
    );
    let mut berlin = Ledger::new(Settings::default());
    berlin
        .update_settings(&serde_json::json!({"timezone": "Europe/Berlin"}))
        .unwrap();
    let other = berlin.report_partial("summary", &params(&[]), at).unwrap();
    let err = summary.merge(other).unwrap_err();
    assert!(
        err.to_string()
            .starts_with("partials of different requests do not merge: their settings differ"),
        "{err}"
    );
    assert!(err.to_string().contains("Europe/Berlin"), "{err}");
}

#[test]
fn bytes_that_are_not_a_partial_are_refused_with_the_reason() {
    let good = ledger()
        .report_partial("summary", &params(&[]), as_of())
        .unwrap()
        .to_bytes();
    let message = |bytes: &[u8]| ReportPartial::from_bytes(bytes).unwrap_err().to_string();
    assert_eq!(
        message(b"SM"),
        "not a report partial: 2 bytes are too few for the 6 byte header"
    );
    assert_eq!(
        message(b"PAR1\x01\x00"),
        "not a report partial: the bytes do not start with the magic `SMRP`"
    );
    let mut newer = good.clone();
    newer[4] = 9;
    assert_eq!(
        message(&newer),
        "not a report partial: format version 9; this build reads version 1"
    );
    assert!(
        message(&good[..good.len() - 3])
            .starts_with("not a report partial: the body does not decode")
    );
    let mut longer = good.clone();
    longer.push(0);
    assert_eq!(
        message(&longer),
        "not a report partial: 1 bytes follow the body"
    );
    // Every truncation and every single-byte change is an error or a
    // partial, never a panic.
    for end in 0..good.len() {
        let _ = ReportPartial::from_bytes(&good[..end]);
    }
    for i in 0..good.len() {
        for value in [0u8, 1, 0x7f, 0x80, 0xff] {
            let mut changed = good.clone();
            changed[i] = value;
            if let Ok(partial) = ReportPartial::from_bytes(&changed) {
                let _ = partial.finish();
            }
        }
    }
    assert!(ReportPartial::merge_all(Vec::new()).is_err());
}

#[test]
fn names_and_parameters_are_checked_as_the_report_checks_them() {
    let ledger = ledger();
    let at = as_of();
    for (name, pairs) in [
        ("nope", vec![]),
        ("mrr", vec![("curency", "EUR")]),
        ("mrr", vec![("interval", "hour")]),
        ("mrr", vec![("plan", "nope")]),
        ("mrr", vec![("breakdown", "colour")]),
        ("summary", vec![("baseCurrency", "euro")]),
        ("customer-concentration", vec![("limit", "many")]),
        ("map", vec![("selected-date", "2024-13-01")]),
        ("map", vec![("plan", "nope")]),
    ] {
        let p = params(&pairs);
        let expected = ledger.report(name, &p, at).unwrap_err();
        let actual = ledger.report_partial(name, &p, at).unwrap_err();
        assert_eq!(actual, expected, "{name} {pairs:?}");
    }
}

#[test]
fn every_report_can_be_computed_in_parts() {
    let missing: Vec<&str> = submetrics::reports::Report::all()
        .iter()
        .filter(|r| r.parts().is_none())
        .map(|r| r.name)
        .collect();
    assert_eq!(missing, Vec::<&str>::new());
    let unsupported = submetrics::Error::PartialUnsupported {
        report: "x".to_string(),
    };
    assert_eq!(
        unsupported.to_string(),
        "report x cannot be computed in parts yet"
    );
    assert_eq!(unsupported.code(), "invalid_partial");
}
