//! Money: integer cents, currency codes, and the one rounding function.
//!
//! Amounts are `i64` cents everywhere. Intermediate arithmetic uses
//! `rust_decimal` and is rounded once, half to even, by [`round_cents`].

use crate::error::{Error, Result};
use rust_decimal::prelude::*;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;

/// Integer amount in the smallest unit of a currency.
pub type Cents = i64;

/// The largest absolute amount one record may carry: 10^12 cents (ten billion
/// units). Far above any real invoice, and low enough that sums over tens of
/// millions of invoices, times 12 for ARR, stay inside `i64`.
pub const MAX_AMOUNT: Cents = 1_000_000_000_000;

/// A three-letter ISO 4217 currency code, stored upper case as its place
/// among all three-letter codes in alphabetical order: two bytes, so that an
/// invoice packs into fewer, and codes order alphabetically.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Currency(u16);

/// Every code's letters by place: what [`Currency::as_str`] borrows.
static CODES: [[u8; 3]; 26 * 26 * 26] = {
    let mut codes = [[0u8; 3]; 26 * 26 * 26];
    let mut place = 0;
    while place < codes.len() {
        codes[place] = [
            b'A' + (place / (26 * 26)) as u8,
            b'A' + (place / 26 % 26) as u8,
            b'A' + (place % 26) as u8,
        ];
        place += 1;
    }
    codes
};

impl Currency {
    /// US dollar, the default base currency.
    pub const USD: Currency = Currency::from_upper(*b"USD");

    /// Parses three ASCII letters in any case; anything else is `None`.
    pub fn parse(code: &str) -> Option<Currency> {
        let bytes = crate::blank::trimmed(code).as_bytes();
        if bytes.len() != 3 || !bytes.iter().all(u8::is_ascii_alphabetic) {
            return None;
        }
        Some(Currency::from_upper([
            bytes[0].to_ascii_uppercase(),
            bytes[1].to_ascii_uppercase(),
            bytes[2].to_ascii_uppercase(),
        ]))
    }

    /// From three upper-case ASCII letters.
    const fn from_upper(code: [u8; 3]) -> Currency {
        const fn letter(byte: u8) -> u16 {
            (byte - b'A') as u16
        }
        Currency((letter(code[0]) * 26 + letter(code[1])) * 26 + letter(code[2]))
    }

    /// The code's three upper-case ASCII letters as bytes, for writers that
    /// take bytes (no UTF-8 check on the way).
    pub fn code(&self) -> &'static [u8; 3] {
        &CODES[usize::from(self.0)]
    }

    /// The upper-case ISO 4217 style code (three ASCII letters).
    pub fn as_str(&self) -> &'static str {
        // Only places of three letters are ever stored.
        std::str::from_utf8(&CODES[usize::from(self.0)]).unwrap_or("???")
    }

    /// Whether the currency has no minor unit (ISO 4217 exponent 0: JPY,
    /// KRW, ...), so people read its amounts in whole units. Amounts are
    /// hundredths of the unit all the same (150000 JPY cents are 1500 yen);
    /// this only says how to show them.
    pub fn has_no_minor_unit(&self) -> bool {
        const WHOLE_UNITS: &[&str] = &[
            "BIF", "CLP", "DJF", "GNF", "ISK", "JPY", "KMF", "KRW", "PYG", "RWF", "UGX", "UYI",
            "VND", "VUV", "XAF", "XOF", "XPF",
        ];
        WHOLE_UNITS.contains(&self.as_str())
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

/// Rounds a decimal to an integer number of cents, half to even; `None`
/// when that lies outside the `i64` range. The only place in the crate
/// where a decimal amount is rounded.
pub(crate) fn round_cents(value: Decimal) -> Option<Cents> {
    value
        .round_dp_with_strategy(0, RoundingStrategy::MidpointNearestEven)
        .to_i64()
}

/// [`round_ratio`] for a positive denominator, `None` when the quotient
/// lies outside the `i64` range rather than clamped to it.
pub(crate) fn round_ratio_checked(numerator: i128, denominator: i128) -> Option<Cents> {
    debug_assert!(denominator > 0);
    i64::try_from(round_half_even(numerator, denominator)).ok()
}

/// Twelve times a monthly amount: the ARR of an MRR. An ARR beyond the
/// `i64` range is [`Error::OutOfRange`].
pub(crate) fn arr_of(mrr: Cents) -> Result<Cents> {
    (Total::from(mrr) * 12).cents(|| format!("the ARR of {mrr} cents of MRR"))
}

/// An exact sum of amounts: what a report adds up over customers,
/// currencies, invoices or days before it answers. 128 bits hold the sum
/// of 2^64 amounts of 64-bit cents, more than any ledger holds, so adding
/// and subtracting totals never overflows or rounds, and a difference of
/// two totals is exact even when either is beyond 64-bit cents.
///
/// A total leaves as [`Cents`] only through [`Total::cents`], which answers
/// one beyond 64-bit cents as [`Error::OutOfRange`] naming the figure: a
/// report gives the right number or that error, never a wrapped or capped
/// one. Within a ledger's limits (no invoice amount beyond `MAX_AMOUNT`) a
/// total passes 64-bit cents with about 300,000 customers paying the
/// largest amount on a daily plan, a few whose service period of seconds
/// prorates it to a whole interval, or conversions at extreme rates.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
#[serde(transparent)]
pub struct Total(i128);

impl Total {
    /// The sum of no amounts.
    pub const ZERO: Total = Total(0);

    /// A total of exactly `value` cents.
    pub fn exact(value: i128) -> Total {
        Total(value)
    }

    /// `value` cents rounded half to even, as the report's float
    /// arithmetic gave them (an LTV). A value past 128 bits, or infinite,
    /// is held at the nearest end, far beyond what [`Total::cents`]
    /// accepts, so it is refused all the same; NaN is 0.
    pub fn rounded(value: f64) -> Total {
        Total(value.round_ties_even() as i128)
    }

    /// The total as cents, or [`Error::OutOfRange`] when it lies outside
    /// 64-bit cents; `what` names the figure, its period and currency
    /// ("the `total_mrr` of the period 2024-03-01 to 2024-03-31 in USD").
    pub fn cents(self, what: impl FnOnce() -> String) -> Result<Cents> {
        Cents::try_from(self.0).map_err(|_| Error::OutOfRange {
            what: what(),
            range: Error::CENTS,
        })
    }

    /// The total as a float, for rates and shares (rounded to 53 bits).
    pub fn as_f64(self) -> f64 {
        self.0 as f64
    }
}

impl From<Cents> for Total {
    fn from(cents: Cents) -> Total {
        Total(i128::from(cents))
    }
}

impl From<Total> for i128 {
    fn from(total: Total) -> i128 {
        total.0
    }
}

impl std::ops::Add for Total {
    type Output = Total;
    fn add(self, other: Total) -> Total {
        Total(self.0 + other.0)
    }
}

impl std::ops::Sub for Total {
    type Output = Total;
    fn sub(self, other: Total) -> Total {
        Total(self.0 - other.0)
    }
}

impl std::ops::Neg for Total {
    type Output = Total;
    fn neg(self) -> Total {
        Total(-self.0)
    }
}

/// A total times a count (an MRR times 12 months, an amount times the
/// customers holding it): 64-bit cents times a 64-bit count stay inside
/// 128 bits.
impl std::ops::Mul<i64> for Total {
    type Output = Total;
    fn mul(self, count: i64) -> Total {
        Total(self.0 * i128::from(count))
    }
}

impl std::ops::AddAssign for Total {
    fn add_assign(&mut self, other: Total) {
        self.0 += other.0;
    }
}

impl std::ops::AddAssign<Cents> for Total {
    fn add_assign(&mut self, cents: Cents) {
        self.0 += i128::from(cents);
    }
}

impl std::iter::Sum<Cents> for Total {
    fn sum<I: Iterator<Item = Cents>>(amounts: I) -> Total {
        Total(amounts.map(i128::from).sum())
    }
}

impl<'a> std::iter::Sum<&'a Cents> for Total {
    fn sum<I: Iterator<Item = &'a Cents>>(amounts: I) -> Total {
        amounts.copied().sum()
    }
}

impl std::iter::Sum for Total {
    fn sum<I: Iterator<Item = Total>>(totals: I) -> Total {
        Total(totals.map(|t| t.0).sum())
    }
}

/// `round(numerator / denominator)` for integers, half to even, in exact
/// integer arithmetic; 0 when the denominator is 0, clamped to the `i64`
/// range.
#[inline]
pub fn round_ratio(numerator: i128, denominator: i128) -> Cents {
    if denominator == 0 {
        return 0;
    }
    let (n, d) = if denominator < 0 {
        (-numerator, -denominator)
    } else {
        (numerator, denominator)
    };
    // The common case fits in 64 bits, where division is far cheaper.
    match (i64::try_from(n), i64::try_from(d)) {
        (Ok(n), Ok(d)) => round_half_even(n, d),
        _ => round_half_even(n, d).clamp(i128::from(i64::MIN), i128::from(i64::MAX)) as i64,
    }
}

/// `round(n / d)` half to even for `d > 0`. The result cannot overflow: it
/// rounds up only with a remainder, so never past `n`.
fn round_half_even<T>(n: T, d: T) -> T
where
    T: Copy
        + PartialOrd
        + std::ops::Sub<Output = T>
        + std::ops::Add<Output = T>
        + std::ops::Rem<Output = T>
        + From<u8>,
    T: Euclid,
{
    let quotient = n.div_euclid(d);
    let remainder = n.rem_euclid(d);
    let (zero, one, two) = (T::from(0), T::from(1), T::from(2));
    let odd = quotient % two != zero;
    let half_up = remainder > d - remainder || (remainder == d - remainder && odd);
    if half_up { quotient + one } else { quotient }
}

/// Euclidean division of the integer widths `round_ratio` works in.
trait Euclid {
    fn div_euclid(self, d: Self) -> Self;
    fn rem_euclid(self, d: Self) -> Self;
}

macro_rules! euclid {
    ($($t:ty),*) => {$(
        impl Euclid for $t {
            fn div_euclid(self, d: Self) -> Self {
                <$t>::div_euclid(self, d)
            }
            fn rem_euclid(self, d: Self) -> Self {
                <$t>::rem_euclid(self, d)
            }
        }
    )*};
}
euclid!(i64, i128);

#[cfg(test)]
mod tests {
    use super::*;

    proptest::proptest! {
        #[test]
        fn a_currency_reads_back_upper_case_and_orders_like_its_code(
            a in "[a-zA-Z]{3}",
            b in "[a-zA-Z]{3}",
        ) {
            let (a_code, b_code) = (a.to_ascii_uppercase(), b.to_ascii_uppercase());
            let (a, b) = (Currency::parse(&a).unwrap(), Currency::parse(&b).unwrap());
            proptest::prop_assert_eq!(a.as_str(), a_code.as_str());
            proptest::prop_assert_eq!(a.cmp(&b), a_code.cmp(&b_code));
            proptest::prop_assert_eq!(a == b, a_code == b_code);
        }
    }

    #[test]
    fn currency_is_stored_upper_case() {
        assert_eq!(Currency::parse("eur").unwrap().as_str(), "EUR");
        assert_eq!(Currency::USD.as_str(), "USD");
        assert_eq!(Currency::parse("aaa").unwrap().as_str(), "AAA");
        assert_eq!(Currency::parse("zzz").unwrap().as_str(), "ZZZ");
    }

    #[test]
    fn currency_rejects_other_lengths_and_digits() {
        assert!(Currency::parse("EU").is_none());
        assert!(Currency::parse("EU1").is_none());
        assert!(Currency::parse("EURO").is_none());
    }

    proptest::proptest! {
        #[test]
        fn narrow_and_wide_rounding_agree(n in proptest::num::i64::ANY, d in 1i64..=i64::MAX) {
            proptest::prop_assert_eq!(
                i128::from(round_half_even(n, d)),
                round_half_even(i128::from(n), i128::from(d))
            );
        }
    }

    fn beyond(what: &str) -> Error {
        Error::OutOfRange {
            what: what.to_string(),
            range: Error::CENTS,
        }
    }

    #[test]
    fn a_total_is_exact_past_64_bits_and_leaves_only_inside_them() {
        let max = Total::from(i64::MAX);
        let min = Total::from(i64::MIN);
        assert_eq!(max.cents(|| "max".into()), Ok(i64::MAX));
        assert_eq!(min.cents(|| "min".into()), Ok(i64::MIN));
        assert_eq!(
            (max + Total::from(1)).cents(|| "max + 1".into()),
            Err(beyond("max + 1"))
        );
        assert_eq!(
            (min + Total::from(-1)).cents(|| "min - 1".into()),
            Err(beyond("min - 1"))
        );
        // Three times the largest amount is beyond; less twice, it is back.
        let three: Total = [i64::MAX; 3].iter().sum();
        assert_eq!(i128::from(three), 3 * i128::from(i64::MAX));
        assert_eq!((three - max - max).cents(String::new), Ok(i64::MAX));
        let mut sum = Total::ZERO;
        sum += i64::MAX;
        sum += Total::from(i64::MAX);
        assert_eq!(sum, -(-max - max));
        assert_eq!(max * 12, Total::exact(12 * i128::from(i64::MAX)));
        // The figure is named only when it is refused.
        assert_eq!(Total::from(5).cents(|| unreachable!()), Ok(5));
    }

    #[test]
    fn a_float_total_is_rounded_half_to_even_and_an_enormous_one_refused() {
        assert_eq!(Total::rounded(2.5), Total::from(2));
        assert_eq!(Total::rounded(-3.5), Total::from(-4));
        assert_eq!(Total::rounded(f64::NAN), Total::ZERO);
        for enormous in [1e30, 1e60, f64::INFINITY, -f64::INFINITY] {
            assert!(
                Total::rounded(enormous).cents(String::new).is_err(),
                "{enormous}"
            );
        }
        assert_eq!(
            Total::rounded(9.2e18).cents(String::new),
            Ok(9_200_000_000_000_000_000)
        );
    }

    #[test]
    fn an_arr_beyond_64_bit_cents_is_refused() {
        assert_eq!(
            arr_of(768_614_336_404_564_650),
            Ok(9_223_372_036_854_775_800)
        );
        assert_eq!(
            arr_of(768_614_336_404_564_651),
            Err(beyond("the ARR of 768614336404564651 cents of MRR"))
        );
        assert_eq!(arr_of(-5), Ok(-60));
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
