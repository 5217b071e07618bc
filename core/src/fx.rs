//! Exchange rates and conversion (SEMANTICS section 5). A rate is units of a
//! currency per one unit of the table's pivot currency; the latest rate on or
//! before a date applies. A missing rate is an error, never a silent 0.

use crate::error::{Error, Result};
use crate::model::{Node, View};
use crate::money::{Cents, Currency, round_cents, round_ratio_checked};
use chrono::{Datelike, NaiveDate};
use foldhash::fast::FixedState;
use rust_decimal::Decimal;
use rust_decimal::prelude::FromPrimitive;
use serde_json::Value;
use std::collections::HashMap;

/// One row of an FX table.
#[derive(Debug, Clone, PartialEq)]
pub struct FxRate {
    /// The day the rate applies from; a conversion on a later day without its own row uses the
    /// latest earlier one.
    pub date: NaiveDate,
    /// The currency the rate is for.
    pub currency: Currency,
    /// Units of `currency` per one unit of the pivot.
    pub rate: Decimal,
}

impl FxRate {
    /// Reads `{date, currency, rate}`.
    pub fn from_json(value: &Value) -> Result<FxRate> {
        Self::from_node(value)
    }

    /// Reads `{date, currency, rate}` from any record representation (a
    /// JSON value, an Arrow row).
    pub fn from_node<'a, N: Node<'a>>(node: N) -> Result<FxRate> {
        let f = crate::model::Fields::open("fx_rate", node, false)?;
        let date = f.required_timestamp(&["date"])?.local_date(chrono_tz::UTC);
        let currency = f.required_currency(&["currency"])?;
        let rate = node
            .get("rate")
            .map_or(Err(NOT_POSITIVE.to_string()), |r| match r.view() {
                View::Number(n) => n.as_f64().map_or(Err(NOT_POSITIVE.to_string()), kept_rate),
                View::String(s) => text_rate(s),
                _ => Err(NOT_POSITIVE.to_string()),
            })
            .map_err(|reason| f.error("rate", reason))?;
        Ok(FxRate {
            date,
            currency,
            rate,
        })
    }
}

/// Rates per currency, sorted by date, against one pivot currency.
#[derive(Debug, Clone, PartialEq)]
pub struct FxTable {
    pivot: Currency,
    rates: HashMap<Currency, RateSeries, FixedState>,
}

/// One currency's rates in date order, with the rate in force on each day
/// from the first rate's to the last one's, so a lookup is one subtraction
/// and one read: reports convert every customer at every period end.
#[derive(Debug, Clone, Default, PartialEq)]
struct RateSeries {
    rates: Vec<(NaiveDate, Decimal)>,
    /// Day number (from the common era) of the first rate.
    first_day: i32,
    /// For each day from `first_day` to the last rate's day, the index in
    /// `rates` of the rate in force. Empty when that span is longer than
    /// [`MAX_INDEXED_DAYS`]; lookups then search `rates`.
    in_force: Vec<u32>,
}

/// About 270 years of daily entries: 400 KB for one currency.
const MAX_INDEXED_DAYS: i64 = 100_000;

impl RateSeries {
    fn reindex(&mut self) {
        self.in_force.clear();
        let (Some((first, _)), Some((last, _))) = (self.rates.first(), self.rates.last()) else {
            return;
        };
        self.first_day = first.num_days_from_ce();
        let span = i64::from(last.num_days_from_ce()) - i64::from(self.first_day) + 1;
        if span > MAX_INDEXED_DAYS {
            return;
        }
        let mut index = 0u32;
        for offset in 0..span as i32 {
            let day = self.first_day + offset;
            while let Some((next, _)) = self.rates.get(index as usize + 1)
                && next.num_days_from_ce() <= day
            {
                index += 1;
            }
            self.in_force.push(index);
        }
    }

    /// The rate in force on `date`: the latest on or before it.
    fn on(&self, date: NaiveDate) -> Option<Decimal> {
        let offset = date.num_days_from_ce() - self.first_day;
        if offset < 0 {
            return None;
        }
        let index = match self.in_force.get(offset as usize) {
            Some(index) => *index as usize,
            None if !self.in_force.is_empty() => self.rates.len() - 1,
            None => self
                .rates
                .partition_point(|(d, _)| *d <= date)
                .checked_sub(1)?,
        };
        self.rates.get(index).map(|(_, rate)| *rate)
    }
}

impl FxTable {
    /// An empty table whose pivot (rate 1 on every date) is `pivot`.
    pub fn new(pivot: Currency) -> FxTable {
        FxTable {
            pivot,
            rates: HashMap::default(),
        }
    }

    /// The currency every rate is quoted against (the ledger's `fx_pivot`); it converts to
    /// itself at 1.
    pub fn pivot(&self) -> Currency {
        self.pivot
    }

    /// Whether no rate was loaded; then only amounts already in the target currency convert.
    pub fn is_empty(&self) -> bool {
        self.rates.is_empty()
    }

    /// Refuses a batch of rates that gives one currency two rates on one
    /// day (which one was meant is unknown), naming the second row (rows
    /// count from 1).
    pub(crate) fn check_batch(rates: &[FxRate]) -> Result<()> {
        let mut first_row: HashMap<(Currency, NaiveDate), usize> = HashMap::new();
        for (row, rate) in rates.iter().enumerate() {
            if let Some(first) = first_row.insert((rate.currency, rate.date), row) {
                return Err(Error::InvalidRecord {
                    kind: "fx_rate",
                    id: format!("row {}", row + 1),
                    field: "date".to_string(),
                    reason: format!(
                        "row {} gives the rate of {} on {} already; give each day's rate once",
                        first + 1,
                        rate.currency,
                        rate.date
                    ),
                });
            }
        }
        Ok(())
    }

    /// Adds rates; a row for an existing currency and date replaces it.
    pub fn insert(&mut self, rows: impl IntoIterator<Item = FxRate>) {
        let mut changed: Vec<Currency> = Vec::new();
        for row in rows {
            if row.currency == self.pivot {
                continue;
            }
            let series = &mut self.rates.entry(row.currency).or_default().rates;
            match series.binary_search_by_key(&row.date, |(d, _)| *d) {
                Ok(i) => series[i].1 = row.rate,
                Err(i) => series.insert(i, (row.date, row.rate)),
            }
            if !changed.contains(&row.currency) {
                changed.push(row.currency);
            }
        }
        for currency in changed {
            if let Some(series) = self.rates.get_mut(&currency) {
                series.reindex();
            }
        }
    }

    /// The rate of `currency` on `date` (the latest on or before it).
    pub fn rate(&self, currency: Currency, date: NaiveDate) -> Result<Decimal> {
        if currency == self.pivot {
            return Ok(Decimal::ONE);
        }
        let missing = || Error::MissingFxRate {
            currency: currency.to_string(),
            date: date.to_string(),
        };
        self.rates
            .get(&currency)
            .and_then(|series| series.on(date))
            .ok_or_else(missing)
    }

    /// The days from which a new rate of `currency` applies (none for the pivot).
    pub fn rate_days(&self, currency: Currency) -> impl Iterator<Item = NaiveDate> + '_ {
        self.rates
            .get(&currency)
            .into_iter()
            .flat_map(|series| &series.rates)
            .map(|(day, _)| *day)
    }

    /// Converts `amount` from one currency to another at the rates of `date`:
    /// `round(amount x rate_to / rate_from)`, half to even.
    pub fn convert(
        &self,
        amount: Cents,
        from: Currency,
        to: Currency,
        date: NaiveDate,
    ) -> Result<Cents> {
        if from == to || amount == 0 {
            return Ok(amount);
        }
        let rate_from = self.rate(from, date)?;
        let rate_to = self.rate(to, date)?;
        convert_at(amount, rate_from, rate_to).ok_or_else(|| Error::OutOfRange {
            what: format!("{amount} cents of {from} in {to} at the rates of {date}"),
            range: Error::CENTS,
        })
    }
}

/// `round(amount x rate_to / rate_from)`, half to even. Exact in 128-bit
/// integers when the amount times the rates' digits fits, which is the
/// common case and several times faster than decimal division; otherwise
/// in decimal arithmetic (28 significant digits). `None` when the result
/// lies outside the `i64` range.
fn convert_at(amount: Cents, rate_from: Decimal, rate_to: Decimal) -> Option<Cents> {
    // amount x (m_to / 10^s_to) / (m_from / 10^s_from)
    //   = amount x m_to x 10^s_from / (m_from x 10^s_to)
    let exact = || {
        let numerator = i128::from(amount)
            .checked_mul(rate_to.mantissa())?
            .checked_mul(10i128.checked_pow(rate_from.scale())?)?;
        let denominator = rate_from
            .mantissa()
            .checked_mul(10i128.checked_pow(rate_to.scale())?)?;
        // Rates are positive.
        Some(round_ratio_checked(numerator, denominator))
    };
    exact().unwrap_or_else(|| {
        Decimal::from(amount)
            .checked_mul(rate_to)?
            .checked_div(rate_from)
            .and_then(round_cents)
    })
}

const NOT_POSITIVE: &str = "must be a positive number";

/// The smallest rate kept: rates are decimals of at most 28 decimal places.
const SMALLEST_RATE: f64 = 1e-28;

/// How far keeping a rate to 28 decimal places may move it, relatively:
/// further, and the rate given is not the rate kept.
const RATE_TOLERANCE: f64 = 1e-12;

/// A rate given as a number, as the decimal kept; why not when it cannot
/// be kept (not positive, below [`SMALLEST_RATE`], above the largest
/// decimal, or changed by keeping it to 28 decimal places).
fn kept_rate(rate: f64) -> std::result::Result<Decimal, String> {
    use rust_decimal::prelude::ToPrimitive;
    if rate.is_nan() || rate <= 0.0 {
        return Err(NOT_POSITIVE.to_string());
    }
    if rate < SMALLEST_RATE {
        return Err(format!(
            "{rate:e} is below 1e-28, the smallest rate the engine keeps (rates have at most 28 decimal places)"
        ));
    }
    let Some(kept) = Decimal::from_f64(rate) else {
        return Err(format!(
            "{rate:e} is above {}, the largest rate the engine keeps",
            Decimal::MAX
        ));
    };
    match kept.to_f64() {
        Some(back) if (back - rate).abs() <= rate * RATE_TOLERANCE => Ok(kept),
        _ => Err(format!(
            "{rate:e} has more digits than the engine keeps (28 decimal places): it would be kept as {kept}"
        )),
    }
}

/// A rate given as text (`0.9`, `2.5e-9`): kept exactly when it has at
/// most 28 decimal places, else read as a number by [`kept_rate`], which
/// says why it cannot be kept.
fn text_rate(text: &str) -> std::result::Result<Decimal, String> {
    let text = text.trim();
    let exact = if text.contains(['e', 'E']) {
        Decimal::from_scientific(text)
    } else {
        Decimal::from_str_exact(text)
    };
    if let Ok(rate) = exact {
        return if rate > Decimal::ZERO {
            Ok(rate)
        } else {
            Err(NOT_POSITIVE.to_string())
        };
    }
    match text.parse::<f64>() {
        Ok(rate) if rate.is_finite() => kept_rate(rate),
        _ => Err(NOT_POSITIVE.to_string()),
    }
}

/// Parses a list of `{date, currency, rate}` rows.
pub fn parse_rates(values: &[Value]) -> Result<Vec<FxRate>> {
    read_rates(values)
}

/// Reads every row as an FX rate, all or none. Rates have no id, so an
/// error names its row by position, from 1 (`fx_rate row 3: field
/// \`rate\`: ...`).
pub fn read_rates<'a, N: Node<'a>>(rows: impl IntoIterator<Item = N>) -> Result<Vec<FxRate>> {
    rows.into_iter()
        .enumerate()
        .map(|(index, row)| {
            FxRate::from_node(row).map_err(|error| match error {
                Error::InvalidRecord {
                    kind,
                    field,
                    reason,
                    ..
                } => Error::InvalidRecord {
                    kind,
                    id: format!("row {}", index + 1),
                    field,
                    reason,
                },
                other => other,
            })
        })
        .collect()
}

impl FxRate {
    /// Convenience constructor from a bare date.
    pub fn on(date: NaiveDate, currency: Currency, rate: Decimal) -> FxRate {
        FxRate {
            date,
            currency,
            rate,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn decimal(mantissa: i64, scale: u32) -> Decimal {
        Decimal::new(mantissa, scale)
    }

    proptest::proptest! {
        /// The result is the nearest whole number to the exact quotient,
        /// an exact half going to the even neighbour; a quotient beyond the
        /// `i64` range is none.
        #[test]
        fn conversion_rounds_the_exact_quotient_half_to_even(
            amount in -10_000_000_000i64..10_000_000_000,
            from in 1i64..10_000_000,
            from_scale in 0u32..8,
            to in 1i64..10_000_000,
            to_scale in 0u32..8,
        ) {
            let converted = convert_at(amount, decimal(from, from_scale), decimal(to, to_scale));
            // amount x (to / 10^to_scale) / (from / 10^from_scale) = n / d
            let n = i128::from(amount) * i128::from(to) * 10i128.pow(from_scale);
            let d = i128::from(from) * 10i128.pow(to_scale);
            // Strictly inside: a quotient that truncates to an end may round past it.
            let inside = i128::from(i64::MIN) + 1..i128::from(i64::MAX);
            if !inside.contains(&(n / d)) {
                proptest::prop_assert_eq!(converted, None);
                return Ok(());
            }
            let converted = i128::from(converted.expect("in range"));
            let distance = (converted * d - n).abs();
            proptest::prop_assert!(2 * distance <= d, "{} is not nearest to {}/{}", converted, n, d);
            if 2 * distance == d {
                proptest::prop_assert_eq!(converted % 2, 0);
            }
        }
    }

    #[test]
    fn a_conversion_beyond_the_cents_range_is_an_error() {
        let (amount, from, to) = (-1_671_968_173, decimal(1, 4), decimal(551_648, 0));
        assert_eq!(convert_at(amount, from, to), None);
        assert_eq!(convert_at(-amount, from, to), None);
        let mut fx = FxTable::new(Currency::USD);
        let day = NaiveDate::from_ymd_opt(2024, 1, 1).unwrap();
        fx.insert([FxRate::on(
            day,
            Currency::parse("XAU").unwrap(),
            decimal(1, 17),
        )]);
        let error = fx
            .convert(3000, Currency::parse("XAU").unwrap(), Currency::USD, day)
            .unwrap_err();
        assert_eq!(
            error.to_string(),
            "3000 cents of XAU in USD at the rates of 2024-01-01 is outside the range of \
             64-bit cents (at most 9223372036854775807 either way)"
        );
        assert_eq!(error.code(), "out_of_range");
    }

    proptest::proptest! {
        /// The rate in force on a day is the latest on or before it, with
        /// the day index and without it (rates centuries apart).
        #[test]
        fn the_rate_in_force_is_the_latest_on_or_before_the_day(
            days in proptest::collection::vec(-400i64..400, 1..12),
            wide in proptest::bool::ANY,
            asked in -500i64..500,
            on_a_rate_day in proptest::option::of(0usize..12),
        ) {
            let start = NaiveDate::from_ymd_opt(2024, 1, 1).unwrap();
            let stretch = if wide { 400 } else { 1 };
            let day = |offset: i64| start + chrono::Duration::days(offset * stretch);
            let mut t = FxTable::new(Currency::USD);
            t.insert(days.iter().enumerate().map(|(i, offset)| {
                FxRate::on(day(*offset), Currency::parse("EUR").unwrap(), Decimal::from(i as i64 + 1))
            }));
            let mut expected: Vec<(NaiveDate, Decimal)> = Vec::new();
            for (i, offset) in days.iter().enumerate() {
                expected.retain(|(d, _)| *d != day(*offset));
                expected.push((day(*offset), Decimal::from(i as i64 + 1)));
            }
            expected.sort();
            let asked = on_a_rate_day.map_or(asked, |i| days[i % days.len()]);
            let asked = start + chrono::Duration::days(asked * stretch);
            let want = expected.iter().rev().find(|(d, _)| *d <= asked).map(|(_, r)| *r);
            let got = t.rate(Currency::parse("EUR").unwrap(), asked).ok();
            proptest::prop_assert_eq!(got, want);
        }
    }

    #[test]
    fn conversion_matches_decimal_arithmetic_where_that_is_exact() {
        // Into a foreign currency the decimal product is exact.
        for (amount, rate) in [
            (3000, decimal(9, 1)),
            (-1235, decimal(10_845, 4)),
            (5, decimal(5, 1)),
        ] {
            assert_eq!(
                convert_at(amount, Decimal::ONE, rate),
                round_cents(Decimal::from(amount) * rate)
            );
        }
        assert_eq!(convert_at(5, Decimal::ONE, decimal(5, 1)), Some(2));
        assert_eq!(convert_at(15, Decimal::ONE, decimal(5, 1)), Some(8));
    }

    #[test]
    fn conversion_beyond_128_bits_falls_back_to_decimal_and_is_none_out_of_range() {
        let fine = Decimal::from_i128_with_scale(12_345_678_901_234_567_890_123_456_789, 28);
        let coarse = Decimal::from_i128_with_scale(79_228_162_514_264_337_593_543_950_335, 0);
        assert_eq!(convert_at(1_000, fine, fine), Some(1_000));
        assert_eq!(convert_at(i64::MAX, Decimal::ONE, coarse), None);
        assert_eq!(convert_at(i64::MIN, Decimal::ONE, coarse), None);
    }

    fn table() -> FxTable {
        let mut t = FxTable::new(Currency::USD);
        t.insert(
            parse_rates(&[
                json!({"date": "2024-01-01", "currency": "EUR", "rate": 0.9}),
                json!({"date": "2024-02-01", "currency": "EUR", "rate": 0.8}),
                json!({"date": "2024-01-01", "currency": "GBP", "rate": 0.75}),
            ])
            .unwrap(),
        );
        t
    }

    fn day(s: &str) -> NaiveDate {
        s.parse().unwrap()
    }

    #[test]
    fn a_bad_rate_names_its_row() {
        let error = parse_rates(&[
            json!({"date": "2024-01-01", "currency": "EUR", "rate": 0.9}),
            json!({"date": "2024-01-02", "currency": "EUR", "rate": 0.9}),
            json!({"date": "2024-01-03", "currency": "EUR", "rate": 0}),
        ])
        .unwrap_err();
        assert_eq!(
            error.to_string(),
            "fx_rate row 3: field `rate`: must be a positive number"
        );
        assert_eq!(error.field(), Some("rate"));
    }

    #[test]
    fn latest_rate_on_or_before_applies() {
        let t = table();
        assert_eq!(
            t.convert(
                900,
                Currency::parse("EUR").unwrap(),
                Currency::USD,
                day("2024-01-31")
            )
            .unwrap(),
            1000
        );
        assert_eq!(
            t.convert(
                800,
                Currency::parse("EUR").unwrap(),
                Currency::USD,
                day("2024-02-15")
            )
            .unwrap(),
            1000
        );
    }

    #[test]
    fn cross_rates_go_through_the_pivot() {
        let t = table();
        let eur = Currency::parse("EUR").unwrap();
        let gbp = Currency::parse("GBP").unwrap();
        assert_eq!(t.convert(900, eur, gbp, day("2024-01-15")).unwrap(), 750);
    }

    #[test]
    fn a_missing_rate_names_currency_and_date() {
        let t = table();
        let err = t
            .convert(
                100,
                Currency::parse("EUR").unwrap(),
                Currency::USD,
                day("2023-12-31"),
            )
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "no exchange rate for EUR on or before 2023-12-31"
        );
        let err = t
            .rate(Currency::parse("JPY").unwrap(), day("2024-01-01"))
            .unwrap_err();
        assert_eq!(err.code(), "missing_fx_rate");
    }
}
