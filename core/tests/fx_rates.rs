//! FX rates the engine cannot keep (too small, too large, too precise)
//! are refused saying why; what it can keep is read exactly.

use rust_decimal::Decimal;
use serde_json::{Value, json};
use submetrics::{Ledger, Settings};

#[test]
fn a_rate_the_engine_cannot_keep_says_why() {
    let reason = |rate: Value| -> Result<Decimal, String> {
        let mut ledger = Ledger::new(Settings::default());
        ledger
            .load_fx_rates(&[json!({"date": "2024-01-01", "currency": "EUR", "rate": rate})])
            .map_err(|error| error.to_string())?;
        let eur = submetrics::Currency::parse("EUR").unwrap();
        let day = chrono::NaiveDate::from_ymd_opt(2024, 1, 1).unwrap();
        Ok(ledger.fx().rate(eur, day).unwrap())
    };
    let row = "fx_rate row 1: field `rate`: ";
    assert_eq!(
        reason(json!(1e-300)).unwrap_err(),
        format!(
            "{row}1e-300 is below 1e-28, the smallest rate the engine keeps (rates have at most 28 decimal places)"
        )
    );
    assert_eq!(
        reason(json!("1e-300")).unwrap_err(),
        reason(json!(1e-300)).unwrap_err()
    );
    assert_eq!(
        reason(json!(1e30)).unwrap_err(),
        format!(
            "{row}1e30 is above 79228162514264337593543950335, the largest rate the engine keeps"
        )
    );
    assert_eq!(
        reason(json!(1.23456789e-25)).unwrap_err(),
        format!(
            "{row}1.23456789e-25 has more digits than the engine keeps (28 decimal places): it would be kept as 0.0000000000000000000000001235"
        )
    );
    for bad in [
        json!(0),
        json!(-1),
        json!("0"),
        json!("x"),
        json!("NaN"),
        json!(null),
    ] {
        assert_eq!(
            reason(bad).unwrap_err(),
            format!("{row}must be a positive number")
        );
    }
    // What the engine keeps is read: a tiny rate, text in scientific
    // notation, a decimal of 28 places given as text, exactly.
    assert_eq!(
        reason(json!(1e-28)),
        Ok(Decimal::from_i128_with_scale(1, 28))
    );
    assert_eq!(
        reason(json!(2.5e-9)),
        Ok(Decimal::from_i128_with_scale(25, 10))
    );
    assert_eq!(reason(json!("9e-1")), Ok(Decimal::new(9, 1)));
    assert_eq!(reason(json!("0.9")), Ok(Decimal::new(9, 1)));
    assert_eq!(
        reason(json!("1.2345678901234567890123e-5")),
        Ok(Decimal::from_i128_with_scale(
            12_345_678_901_234_567_890_123,
            27
        ))
    );
    assert_eq!(
        reason(json!("0.1234567890123456789012345678")),
        Ok(Decimal::from_i128_with_scale(
            1_234_567_890_123_456_789_012_345_678,
            28
        ))
    );
}

/// Two rates of one currency on one day in one batch leave the day's rate
/// to chance: the batch is refused naming the second row, and nothing of
/// it is kept. The same day in two batches is a correction: the later
/// one stands.
#[test]
fn one_currency_twice_on_one_day_in_a_batch_is_refused() {
    let mut ledger = Ledger::new(Settings::default());
    let rate = |day: &str, rate: f64| json!({"date": day, "currency": "EUR", "rate": rate});
    let refused = ledger
        .load_fx_rates(&[
            rate("2024-01-01", 0.9),
            rate("2024-02-01", 0.91),
            rate("2024-01-01", 0.92),
        ])
        .unwrap_err();
    assert_eq!(
        refused.to_string(),
        "fx_rate row 3: field `date`: row 1 gives the rate of EUR on 2024-01-01 already; give each day's rate once"
    );
    assert!(ledger.fx().is_empty());
    let eur = submetrics::Currency::parse("EUR").unwrap();
    let day = chrono::NaiveDate::from_ymd_opt(2024, 1, 1).unwrap();
    for (value, expected) in [(0.9, "0.9"), (0.92, "0.92")] {
        assert_eq!(
            ledger.load_fx_rates(&[rate("2024-01-01", value)]).unwrap(),
            1
        );
        assert_eq!(ledger.fx().rate(eur, day).unwrap().to_string(), expected);
    }
}
