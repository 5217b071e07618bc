//! Money for people: integer cents as `$1,234.56`, `-€12.00` or
//! `1,234.56 CHF` (symbols for USD, EUR, GBP, JPY; the code otherwise), and
//! currencies without a minor unit in whole units (`¥1,500`).
//! Which cells are money is the report's schema's to say (see `table`).

use submetrics::Currency;

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

fn number(abs: u64) -> String {
    format!("{}.{:02}", group(&(abs / 100).to_string()), abs % 100)
}

/// Cents as a grouped number with two decimals and no currency: `-1,234.56`.
pub fn plain(cents: i64) -> String {
    let sign = if cents < 0 { "-" } else { "" };
    format!("{sign}{}", number(cents.unsigned_abs()))
}

/// Cents in `currency` (dollars when none is named): `$1,234.56`,
/// `-€12.00`, `1,234.56 CHF`; a currency without a minor unit in whole
/// units, rounded half to even: 150000 JPY cents as `¥1,500`, as `1,500 KRW`.
pub fn format(cents: i64, currency: Option<&str>) -> String {
    let sign = if cents < 0 { "-" } else { "" };
    let code = currency.map(str::to_ascii_uppercase);
    let whole_units = code
        .as_deref()
        .and_then(Currency::parse)
        .is_some_and(|c| c.has_no_minor_unit());
    let number = if whole_units {
        let units = submetrics::round_ratio(i128::from(cents), 100).unsigned_abs();
        group(&units.to_string())
    } else {
        number(cents.unsigned_abs())
    };
    match code.as_deref() {
        Some("USD") | None => format!("{sign}${number}"),
        Some("EUR") => format!("{sign}€{number}"),
        Some("GBP") => format!("{sign}£{number}"),
        Some("JPY") => format!("{sign}¥{number}"),
        Some(code) => format!("{sign}{number} {code}"),
    }
}

#[cfg(test)]
mod tests {
    use super::format;

    #[test]
    fn currencies_without_a_minor_unit_show_whole_units() {
        assert_eq!(format(123_456, Some("usd")), "$1,234.56");
        assert_eq!(format(-1200, Some("EUR")), "-€12.00");
        assert_eq!(format(150_000, Some("JPY")), "¥1,500");
        assert_eq!(format(150_050, Some("JPY")), "¥1,500");
        assert_eq!(format(150_150, Some("JPY")), "¥1,502");
        assert_eq!(format(-2_500_000, Some("krw")), "-25,000 KRW");
        assert_eq!(format(512, Some("KWD")), "5.12 KWD");
    }
}
