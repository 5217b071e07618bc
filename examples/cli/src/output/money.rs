//! Money for people: an amount in cents (hundredths of the unit, in every
//! currency: SEMANTICS, "amounts are integer cents") as `$1,234.56`,
//! `-€12.00`, `¥1,500` or `1,234.56 KWD` (symbols for USD, EUR, GBP and
//! JPY; the code otherwise). A currency without a minor unit (JPY, KRW,
//! ...; `Currency::has_no_minor_unit`) is shown in whole units, rounded
//! half to even: 150000 JPY cents as `¥1,500`. Which cells are money is
//! the report's schema's to say (see `table`).

use submetrics::{Currency, round_ratio};

fn group(digits: &str) -> String {
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// `cents` of `currency` (a three-letter code in any case): `$1,234.56`,
/// `-€12.00`, `¥1,500`, `27,000 KRW`, `1,234.56 KWD`. A code that is not
/// three letters is shown as given, with two decimals.
pub fn format(cents: i64, currency: &str) -> String {
    let sign = if cents < 0 { "-" } else { "" };
    let code = currency.to_ascii_uppercase();
    let whole_units = Currency::parse(&code).is_some_and(|c| c.has_no_minor_unit());
    let number = if whole_units {
        group(
            &round_ratio(i128::from(cents), 100)
                .unsigned_abs()
                .to_string(),
        )
    } else {
        let abs = cents.unsigned_abs();
        format!("{}.{:02}", group(&(abs / 100).to_string()), abs % 100)
    };
    match code.as_str() {
        "USD" => format!("{sign}${number}"),
        "EUR" => format!("{sign}€{number}"),
        "GBP" => format!("{sign}£{number}"),
        "JPY" => format!("{sign}¥{number}"),
        _ => format!("{sign}{number} {code}"),
    }
}

#[cfg(test)]
mod tests {
    use super::format;

    #[test]
    fn cents_show_as_units_and_currencies_without_a_minor_unit_as_whole_ones() {
        let cases = [
            (123456, "USD", "$1,234.56"),
            (-1200, "eur", "-€12.00"),
            (5, "GBP", "£0.05"),
            (150_000, "JPY", "¥1,500"),
            (150_050, "JPY", "¥1,500"),
            (150_150, "JPY", "¥1,502"),
            (-2_700_000, "KRW", "-27,000 KRW"),
            (123_456, "KWD", "1,234.56 KWD"),
            (123456, "CHF", "1,234.56 CHF"),
        ];
        for (cents, currency, text) in cases {
            assert_eq!(format(cents, currency), text, "{cents} {currency}");
        }
    }
}
