//! The query parameters reports read, in groups shared between reports.

use crate::query::{ReportParam, param};

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
/// A funnel report (counts, no amounts) over a `date` range.
pub(super) const FUNNEL_IN_RANGE: &[&[ReportParam]] = &[PERIODS, CUSTOMER_FILTERS];
/// A funnel report over the current and the previous period.
pub(super) const FUNNEL_NOW: &[&[ReportParam]] = &[&[INTERVAL], CUSTOMER_FILTERS];
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
