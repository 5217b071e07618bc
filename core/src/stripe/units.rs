//! Stripe writes amounts in each currency's smallest unit: cents of most,
//! whole yen of JPY (a zero-decimal currency), thousandths of a dinar of KWD
//! (a three-decimal one). Ours are hundredths of every currency (SEMANTICS:
//! integer cents; 150000 JPY cents are 1500 yen), so a mapped amount is
//! scaled: x100 for a zero-decimal currency, /10 for a three-decimal one
//! (rounded half to even; Stripe asks for a last digit of 0 there). ISK,
//! HUF and TWD stay two-decimal in Stripe's API, as Stripe documents.

use crate::money::round_ratio;

/// Stripe's zero-decimal currencies, upper case.
const ZERO_DECIMAL: &[&str] = &[
    "BIF", "CLP", "DJF", "GNF", "JPY", "KMF", "KRW", "MGA", "PYG", "RWF", "UGX", "VND", "VUV",
    "XAF", "XOF", "XPF",
];

/// Stripe's three-decimal currencies, upper case.
const THREE_DECIMAL: &[&str] = &["BHD", "JOD", "KWD", "OMR", "TND"];

/// `amount` of `currency` (upper case) as Stripe writes it, in cents;
/// `None` when that is beyond 64 bits.
pub(crate) fn cents(amount: i64, currency: &str) -> Option<i64> {
    if ZERO_DECIMAL.contains(&currency) {
        amount.checked_mul(100)
    } else if THREE_DECIMAL.contains(&currency) {
        Some(round_ratio(i128::from(amount), 10))
    } else {
        Some(amount)
    }
}

#[cfg(test)]
mod tests {
    use super::cents;

    #[test]
    fn amounts_are_scaled_to_hundredths_of_the_currency() {
        assert_eq!(cents(1500, "USD"), Some(1500));
        assert_eq!(cents(1500, "JPY"), Some(150_000));
        assert_eq!(cents(-30, "KRW"), Some(-3000));
        assert_eq!(cents(5120, "KWD"), Some(512));
        assert_eq!(cents(5125, "KWD"), Some(512));
        assert_eq!(cents(5135, "KWD"), Some(514));
        assert_eq!(cents(100, "ISK"), Some(100));
        assert_eq!(cents(i64::MAX / 10, "JPY"), None);
    }
}
