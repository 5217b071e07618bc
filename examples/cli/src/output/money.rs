//! Money for people: integer cents as `$1,234.56`, `-€12.00` or
//! `1,234.56 CHF` (symbols for USD, EUR, GBP, JPY; the code otherwise).
//! Which cells are money is the report's schema's to say (see `table`).

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
/// `-€12.00`, `¥1,234` (yen have no minor unit), `1,234.56 CHF`.
pub fn format(cents: i64, currency: Option<&str>) -> String {
    let sign = if cents < 0 { "-" } else { "" };
    let abs = cents.unsigned_abs();
    let number = number(abs);
    match currency.map(str::to_ascii_uppercase).as_deref() {
        Some("USD") | None => format!("{sign}${number}"),
        Some("EUR") => format!("{sign}€{number}"),
        Some("GBP") => format!("{sign}£{number}"),
        Some("JPY") => format!("{sign}¥{}", group(&abs.to_string())),
        Some(code) => format!("{sign}{number} {code}"),
    }
}
