//! Money for people: an amount in minor units of a currency as `$1,234.56`,
//! `-€12.00`, `¥1,234` or `1,234.567 KWD` (symbols for USD, EUR, GBP and
//! JPY; the code otherwise), with as many decimals as the currency's minor
//! unit has digits (`Currency::exponent`). Which cells are money is the
//! report's schema's to say (see `table`).

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

/// `abs` minor units as a grouped number of `exponent` decimals.
fn number(abs: u64, exponent: u32) -> String {
    let unit = 10u64.pow(exponent);
    let whole = group(&(abs / unit).to_string());
    if exponent == 0 {
        return whole;
    }
    let width = exponent as usize;
    format!("{whole}.{:0width$}", abs % unit)
}

/// `minor` units of `currency` (a three-letter code in any case):
/// `$1,234.56`, `-€12.00`, `¥1,234`, `27,000 KRW`, `1,234.567 KWD`. A
/// code that is not three letters is shown as given, the amount with two
/// decimals.
pub fn format(minor: i64, currency: &str) -> String {
    let sign = if minor < 0 { "-" } else { "" };
    let code = currency.to_ascii_uppercase();
    let exponent = Currency::parse(&code).map_or(2, |c| c.exponent());
    let number = number(minor.unsigned_abs(), exponent);
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
    fn decimals_follow_the_currencys_minor_unit() {
        let cases = [
            (123456, "USD", "$1,234.56"),
            (-1200, "eur", "-€12.00"),
            (5, "GBP", "£0.05"),
            (1234, "JPY", "¥1,234"),
            (-27000, "KRW", "-27,000 KRW"),
            (1234567, "KWD", "1,234.567 KWD"),
            (10001, "CLF", "1.0001 CLF"),
            (123456, "CHF", "1,234.56 CHF"),
        ];
        for (minor, currency, text) in cases {
            assert_eq!(format(minor, currency), text, "{minor} {currency}");
        }
    }
}
