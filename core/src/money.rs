//! Money: integer cents, currency codes, and the one rounding function.
//!
//! Amounts are `i64` cents everywhere. Intermediate arithmetic uses
//! `rust_decimal` and is rounded once, half to even, by [`round_cents`].

use rust_decimal::prelude::*;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;

/// Integer amount in the smallest unit of a currency.
pub type Cents = i64;

/// The largest absolute amount one record may carry: 10^12 cents (ten billion
/// units). Far above any real invoice, and low enough that sums over tens of
/// millions of invoices, times 12 for ARR, stay inside `i64`.
pub const MAX_AMOUNT: Cents = 1_000_000_000_000;

/// A three-letter ISO 4217 currency code, stored upper case.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Currency([u8; 3]);

impl Currency {
    /// US dollar, the default base currency.
    pub const USD: Currency = Currency(*b"USD");

    /// Parses three ASCII letters in any case; anything else is `None`.
    pub fn parse(code: &str) -> Option<Currency> {
        let bytes = code.trim().as_bytes();
        if bytes.len() != 3 || !bytes.iter().all(u8::is_ascii_alphabetic) {
            return None;
        }
        Some(Currency([
            bytes[0].to_ascii_uppercase(),
            bytes[1].to_ascii_uppercase(),
            bytes[2].to_ascii_uppercase(),
        ]))
    }

    pub fn as_str(&self) -> &str {
        // Only ASCII letters are ever stored.
        std::str::from_utf8(&self.0).unwrap_or("???")
    }
}

impl fmt::Display for Currency {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl fmt::Debug for Currency {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Currency({})", self.as_str())
    }
}

impl Serialize for Currency {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for Currency {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        Currency::parse(&s).ok_or_else(|| {
            serde::de::Error::custom(format!("`{s}` is not a three-letter currency code"))
        })
    }
}

/// Rounds a decimal to an integer number of cents, half to even. The only
/// place in the crate where money is rounded.
pub fn round_cents(value: Decimal) -> Cents {
    value
        .round_dp_with_strategy(0, RoundingStrategy::MidpointNearestEven)
        .to_i64()
        .unwrap_or(if value.is_sign_negative() {
            i64::MIN
        } else {
            i64::MAX
        })
}

/// `round(numerator / denominator)` for integers, half to even, in exact
/// integer arithmetic; 0 when the denominator is 0.
pub fn round_ratio(numerator: i128, denominator: i128) -> Cents {
    if denominator == 0 {
        return 0;
    }
    let (n, d) = if denominator < 0 {
        (-numerator, -denominator)
    } else {
        (numerator, denominator)
    };
    let quotient = n.div_euclid(d);
    let twice_remainder = 2 * n.rem_euclid(d);
    let rounded = if twice_remainder > d || (twice_remainder == d && quotient % 2 != 0) {
        quotient + 1
    } else {
        quotient
    };
    rounded.clamp(i128::from(i64::MIN), i128::from(i64::MAX)) as i64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn currency_is_stored_upper_case() {
        assert_eq!(Currency::parse("eur").unwrap().as_str(), "EUR");
    }

    #[test]
    fn currency_rejects_other_lengths_and_digits() {
        assert!(Currency::parse("EU").is_none());
        assert!(Currency::parse("EU1").is_none());
        assert!(Currency::parse("EURO").is_none());
    }

    #[test]
    fn rounding_is_half_to_even() {
        assert_eq!(round_ratio(5, 2), 2);
        assert_eq!(round_ratio(7, 2), 4);
        assert_eq!(round_ratio(-5, 2), -2);
        assert_eq!(round_ratio(52000, 12), 4333);
        assert_eq!(round_ratio(1, 0), 0);
        assert_eq!(round_ratio(-7, 2), -4);
        assert_eq!(round_ratio(7, -2), -4);
        assert_eq!(round_ratio(65_870, 20), 3294);
    }
}
