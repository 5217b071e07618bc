//! The query parameters reports read, in groups shared between reports,
//! and the near-miss suggestion for a name no report reads.

use super::ReportParams;
use crate::error::{Error, Result};
use serde::Serialize;

/// One query parameter of a report: its name as written in a query string
/// and what it takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct ReportParam {
    /// The parameter's name in a query string.
    pub name: &'static str,
    /// What values it takes, in words, for catalogues and error messages.
    pub accepts: &'static str,
}

pub(super) const fn param(name: &'static str, accepts: &'static str) -> ReportParam {
    ReportParam { name, accepts }
}

pub(super) const BASE_CURRENCY: &[ReportParam] = &[param(
    "baseCurrency",
    "the currency amounts are reported in (three-letter code; default the ledger's base currency)",
)];
pub(super) const FX: &[ReportParam] = &[
    param(
        "fix_fx",
        "true converts every amount at one day's rate (`fx_date`) instead of each day's",
    ),
    param(
        "fx_date",
        "the day of the fixed rate with fix_fx (yyyyMMdd or YYYY-MM-DD)",
    ),
];
pub(super) const DATE: ReportParam = param(
    "date",
    "the range yyyyMMdd-yyyyMMdd (inclusive) or a shortcut like last-12-months",
);
pub(super) const INTERVAL: ReportParam = param(
    "interval",
    "the period length: day, week, month, quarter, year (default month)",
);
pub(super) const SELECTED_DATE: ReportParam = param(
    "selected-date",
    "a day of the one period listed (yyyyMMdd or YYYY-MM-DD)",
);
pub(super) const SELECTED_TYPE: ReportParam = param(
    "selected-type",
    "the one type of row listed (the report's types)",
);
pub(super) const BREAKDOWN: ReportParam = param(
    "breakdown",
    "group by plan, currency, billing_freq, pricing_model, payment_method, subtype, market, country, industry, age or size",
);
pub(super) const BREAKDOWN_VALUE: ReportParam = param(
    "breakdown-value",
    "with breakdown: keep only rows of this group",
);
pub(super) const SORT: ReportParam = param("sort", "the field rows are sorted by");
pub(super) const ORDER: ReportParam = param("order", "asc or desc (default desc)");
pub(super) const PERIODS: &[ReportParam] = &[DATE, INTERVAL];
pub(super) const PAGE: &[ReportParam] = &[
    param("limit", "the most rows listed"),
    param("offset", "rows skipped before the first listed"),
];
/// `currency`: a filter of amounts, not of customers.
pub(super) const CURRENCY_FILTER: &[ReportParam] = &[param(
    "currency",
    "keep amounts in these currencies (space-separated codes)",
)];
/// Every customer filter (`CustomerFilter::from_params`).
pub(super) const CUSTOMER_FILTERS: &[ReportParam] = &[
    param("customer", "customers with these ids"),
    param(
        "plan",
        "customers billed on these plans or plan groups (ids)",
    ),
    param(
        "billing_freq",
        "customers billed on a plan of this frequency: day, week, month, year",
    ),
    param(
        "pricing_model",
        "customers billed on a plan of this model: licensed, metered",
    ),
    param(
        "status",
        "customers with this status: active, cancelled, trial, lead, all",
    ),
    param("country", "customers in these countries (codes)"),
    param(
        "region",
        "customers in these regions (europe, north_america, emea, ...)",
    ),
    param(
        "industry",
        "customers with these `industry` custom variable values",
    ),
    param("size", "customers with these `size` custom variable values"),
    param(
        "channel",
        "customers with these `channel` custom variable values",
    ),
    param(
        "market",
        "customers with these `market` custom variable values",
    ),
    param("payment_method", "customers paying by these methods"),
    param(
        "age",
        "customers whose months since first payment are N, in A-B, or N+",
    ),
    param("data_source", "customers from these data sources"),
];
/// Everything a scheduled-changes report reads besides its own parameters.
pub(super) const SCHEDULED: &[&[ReportParam]] =
    &[BASE_CURRENCY, FX, CURRENCY_FILTER, CUSTOMER_FILTERS];
/// The snapshot reports' shared parameters (the day and the filters).
pub(super) const SNAPSHOT: &[ReportParam] = &[param(
    "selected-date",
    "the day whose end the snapshot is taken at, when before as_of",
)];
/// An event report over a `date` range.
pub(super) const EVENTS_IN_RANGE: &[&[ReportParam]] = &[
    PERIODS,
    BASE_CURRENCY,
    FX,
    CURRENCY_FILTER,
    CUSTOMER_FILTERS,
];
/// An event report over the current and the previous period.
pub(super) const EVENTS_NOW: &[&[ReportParam]] = &[
    &[INTERVAL],
    BASE_CURRENCY,
    FX,
    CURRENCY_FILTER,
    CUSTOMER_FILTERS,
];
/// An event report listing one `selected-date` period.
pub(super) const EVENTS_SELECTED: &[&[ReportParam]] = &[
    &[INTERVAL, SELECTED_DATE, SELECTED_TYPE],
    BASE_CURRENCY,
    FX,
    CURRENCY_FILTER,
    CUSTOMER_FILTERS,
];
/// What the analytics customer list (`GET /customers`) reads.
pub(super) const CUSTOMER_LIST: &[&[ReportParam]] = &[
    BASE_CURRENCY,
    &[param(
        "q",
        "customers whose name, email or id holds this text (any case)",
    )],
    CURRENCY_FILTER,
    CUSTOMER_FILTERS,
    &[INTERVAL, SELECTED_DATE, SELECTED_TYPE],
    &[SORT, ORDER],
    PAGE,
];
/// What one customer's analytics view (`GET /customers/{id}`) reads.
pub(super) const CUSTOMER_DETAIL: &[&[ReportParam]] = &[BASE_CURRENCY];

/// Refuses a parameter `view` (a report, or another computed view) does not
/// read (the first in name order), naming it, suggesting the nearest one
/// it does read and listing them all.
pub(super) fn check_params(
    view: &str,
    groups: &[&[ReportParam]],
    params: &ReportParams,
) -> Result<()> {
    let known = || groups.iter().flat_map(|group| group.iter()).map(|p| p.name);
    match params
        .keys()
        .find(|name| !known().any(|k| k == name.as_str()))
    {
        None => Ok(()),
        Some(unknown) => Err(Error::UnknownParameter {
            report: view.to_string(),
            param: unknown.clone(),
            suggestion: near_miss(unknown, known()).map(str::to_string),
            known: known().collect::<Vec<_>>().join(", "),
        }),
    }
}

pub(super) const MOVEMENT_FILTERS: &[ReportParam] = &[
    param(
        "category",
        "movement types kept in the movement columns: new, expansion, contraction, churn, reactivation",
    ),
    param(
        "subtype",
        "movement subtypes kept in the movement columns (new_from_trial, upgrade, lapse, ...)",
    ),
];

/// A name compared loosely: lower case, without `-` and `_`.
fn loose(name: &str) -> String {
    name.chars()
        .filter(|c| *c != '-' && *c != '_')
        .flat_map(char::to_lowercase)
        .collect()
}

/// The known name nearest to `given`, when it is a near miss: at most one
/// edit away for names up to 4 characters, two for longer ones, ignoring
/// case, `-` and `_` (the first of equally near names).
pub fn near_miss<'k>(given: &str, known: impl Iterator<Item = &'k str>) -> Option<&'k str> {
    let given_loose = loose(given);
    let allowed = if given_loose.chars().count() <= 4 {
        1
    } else {
        2
    };
    known
        .map(|name| (edit_distance(&given_loose, &loose(name)), name))
        .filter(|(distance, _)| *distance <= allowed)
        .min_by_key(|(distance, _)| *distance)
        .map(|(_, name)| name)
}

/// The Levenshtein distance: the fewest inserted, removed or replaced
/// characters that turn `a` into `b`.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut previous: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut current = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            let replace = previous[j] + usize::from(ca != *cb);
            current[j + 1] = replace.min(previous[j + 1] + 1).min(current[j] + 1);
        }
        previous = current;
    }
    previous[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn near_misses_are_suggested_and_far_names_are_not() {
        let known = [
            "currency",
            "date",
            "interval",
            "selected-date",
            "baseCurrency",
        ];
        let near = |given| near_miss(given, known.iter().copied());
        assert_eq!(near("curency"), Some("currency"));
        assert_eq!(near("intervall"), Some("interval"));
        assert_eq!(near("selected_date"), Some("selected-date"));
        assert_eq!(near("base_currency"), Some("baseCurrency"));
        assert_eq!(near("dat"), Some("date"));
        assert_eq!(near("colour"), None);
        assert_eq!(near("x"), None);
        assert_eq!(edit_distance("kitten", "sitting"), 3);
    }
}
