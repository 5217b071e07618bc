//! Money for people: integer cents as `$1,234.56`, `-€12.00` or
//! `1,234.56 CHF` (symbols for USD, EUR, GBP, JPY; the code otherwise).

/// Fields that hold amounts in cents.
pub const MONEY_FIELDS: &[&str] = &[
    "mrr",
    "arr",
    "total_mrr",
    "total_arr",
    "start_mrr",
    "new",
    "expansion",
    "contraction",
    "churn",
    "reactivation",
    "mrr_diff",
    "fx_adjustment",
    "arpa",
    "asp",
    "ltv",
    "mrr_change",
    "mrr_change_base_currency",
    "amount",
    "amount_base_currency",
    "total",
    "total_base_currency",
    "converted_mrr",
    "mrr_current",
    "arr_current",
    "arpa_current",
    "cmrr",
    "change",
    "net",
    "tax_amount",
];

/// Row names (`metric`) of the *-table reports whose values are amounts in
/// cents, besides [`MONEY_FIELDS`] and the core's charge types; their other
/// rows are counts and rates.
const MONEY_METRICS: &[&str] = &[
    "new_from_trial",
    "upgrade",
    "downgrade",
    "cancellation",
    "refund",
    "refunds",
    "lapse",
    "payments",
    "discount",
    "fee",
    "failed",
    "unknown",
];

/// Whether a *-table report's row (by its `metric`) holds amounts.
pub fn is_money_metric(metric: &str) -> bool {
    MONEY_FIELDS.contains(&metric)
        || MONEY_METRICS.contains(&metric)
        || submetrics::reports::transactions::CHARGE_TYPES.contains(&metric)
}

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
