//! The columns shared between reports: periods, MRR figures, cash by
//! charge type, listed invoices, payments and movements.

use super::{Column, Kind, MoneyIn, ReportSchema};

pub(super) const fn col(name: &'static str, kind: Kind) -> Column {
    Column { name, kind }
}

pub(super) const MONEY: Kind = Kind::Money(MoneyIn::Report);
pub(super) const ROW_MONEY: Kind = Kind::Money(MoneyIn::Row);

/// The bounds of a period row.
pub(super) const PERIOD: [Column; 2] = [col("date", Kind::Date), col("end_date", Kind::Date)];

/// The figures of one MRR group: amounts, counts and rates.
pub(super) const MRR_GROUP: &[Column] = &[
    col("label", Kind::Text),
    col("total_mrr", MONEY),
    col("total_arr", MONEY),
    col("start_mrr", MONEY),
    col("new", MONEY),
    col("expansion", MONEY),
    col("contraction", MONEY),
    col("churn", MONEY),
    col("reactivation", MONEY),
    col("fx_adjustment", MONEY),
    col("mrr_diff", MONEY),
    col("arpa", MONEY),
    col("asp", MONEY),
    col("ltv", MONEY),
    col("total_customers", Kind::Count),
    col("start_customers", Kind::Count),
    col("customers_diff", Kind::Count),
    col("new_customers", Kind::Count),
    col("expansion_customers", Kind::Count),
    col("contraction_customers", Kind::Count),
    col("churn_customers", Kind::Count),
    col("reactivation_customers", Kind::Count),
    col("customer_churn_rate", Kind::Percent),
    col("customer_churn_avg", Kind::Percent),
    col("mrr_churn_rate", Kind::Percent),
    col("net_mrr_churn_rate", Kind::Percent),
    col("customer_retention_rate", Kind::Percent),
    col("mrr_retention_rate", Kind::Percent),
    col("nrr", Kind::Percent),
    col("quick_ratio", Kind::Number),
    col("customer_lifetime", Kind::Number),
];

/// `a` then `b`, as one array of `N` columns.
pub(super) const fn concat<const N: usize>(a: &[Column], b: &[Column]) -> [Column; N] {
    assert!(a.len() + b.len() == N, "N is the total length");
    let mut out = [col("", Kind::Text); N];
    let mut i = 0;
    while i < a.len() {
        out[i] = a[i];
        i += 1;
    }
    let mut j = 0;
    while j < b.len() {
        out[i + j] = b[j];
        j += 1;
    }
    out
}

/// `mrr`: a period's figures, with `breakdown` groups when asked.
pub(super) const MRR: [Column; MRR_GROUP.len() + 3] = concat(
    &[
        PERIOD[0],
        PERIOD[1],
        col("breakdown", Kind::Groups(MRR_GROUP)),
    ],
    MRR_GROUP,
);

/// The `*-table` metrics of `mrr-table-subtypes`: every movement subtype.
pub(super) const MRR_SUBTYPES: &[Column] = &[
    col("total_mrr", MONEY),
    col("new", MONEY),
    col("new_from_trial", MONEY),
    col("expansion", MONEY),
    col("upgrade", MONEY),
    col("contraction", MONEY),
    col("downgrade", MONEY),
    col("churn", MONEY),
    col("cancellation", MONEY),
    col("refund", MONEY),
    col("lapse", MONEY),
    col("reactivation", MONEY),
];

/// Amount and count per charge type (`transactions::CHARGE_TYPES`).
pub(super) const CHARGES: [Column; 12] = [
    col("month_sub", MONEY),
    col("month_sub_count", Kind::Count),
    col("year_sub", MONEY),
    col("year_sub_count", Kind::Count),
    col("week_sub", MONEY),
    col("week_sub_count", Kind::Count),
    col("day_sub", MONEY),
    col("day_sub_count", Kind::Count),
    col("metered", MONEY),
    col("metered_count", Kind::Count),
    col("one_time", MONEY),
    col("one_time_count", Kind::Count),
];

/// `transactions`: a period's cash by kind.
pub(super) const TRANSACTIONS: [Column; CHARGES.len() + 13] = concat(
    &[
        PERIOD[0],
        PERIOD[1],
        col("net", MONEY),
        col("count", Kind::Count),
        col("payments", MONEY),
        col("payments_count", Kind::Count),
        col("refund", MONEY),
        col("refund_count", Kind::Count),
        col("discount", MONEY),
        col("discount_count", Kind::Count),
        col("fee", MONEY),
        col("fee_count", Kind::Count),
        col("unknown", MONEY),
    ],
    &CHARGES,
);

/// `cashflow-failed-payments`: a period's failed payments by charge type.
pub(super) const FAILED: [Column; CHARGES.len() + 4] = concat(
    &[
        PERIOD[0],
        PERIOD[1],
        col("failed", MONEY),
        col("failed_count", Kind::Count),
    ],
    &CHARGES,
);

/// `cashflow-refunds`: a period's refunds by charge type.
pub(super) const REFUNDS: [Column; CHARGES.len() + 6] = concat(
    &[
        PERIOD[0],
        PERIOD[1],
        col("refunds", MONEY),
        col("refunds_count", Kind::Count),
        col("unknown", MONEY),
        col("unknown_count", Kind::Count),
    ],
    &CHARGES,
);

/// `cashflow-failure-rate`: a period's payment attempts.
pub(super) const FAILURE_RATE: &[Column] = &[
    PERIOD[0],
    PERIOD[1],
    col("attempts", Kind::Count),
    col("successful_count", Kind::Count),
    col("failed_count", Kind::Count),
    col("attempted", MONEY),
    col("failed", MONEY),
    col("failure_rate", Kind::Percent),
];

/// `leads`: a period's leads, trials and conversions.
pub(super) const LEADS: &[Column] = &[
    PERIOD[0],
    PERIOD[1],
    col("leads", Kind::Count),
    col("trials", Kind::Count),
    col("conversions", Kind::Count),
    col("lead_to_paid_rate", Kind::Percent),
    col("trial_to_paid_rate", Kind::Percent),
];

/// `leads-days`: how long conversions took, in days.
pub(super) const LEADS_DAYS: &[Column] = &[
    PERIOD[0],
    PERIOD[1],
    col("lead_to_trial_count", Kind::Count),
    col("lead_to_trial_days_avg", Kind::Number),
    col("lead_to_trial_days_median", Kind::Number),
    col("trial_to_paid_count", Kind::Count),
    col("trial_to_paid_days_avg", Kind::Number),
    col("trial_to_paid_days_median", Kind::Number),
    col("lead_to_paid_count", Kind::Count),
    col("lead_to_paid_days_avg", Kind::Number),
    col("lead_to_paid_days_median", Kind::Number),
];

/// The current and previous period of an event report, their change and
/// their change in percent, field by field.
pub(super) const fn summary_of(fields: &'static [Column]) -> [Column; 6] {
    [
        col("currency", Kind::Text),
        col("interval", Kind::Text),
        col("current", Kind::Object(fields)),
        col("previous", Kind::Object(fields)),
        col("change", Kind::Object(fields)),
        col("change_percent", Kind::Percents(fields)),
    ]
}

/// An invoice's line.
pub(super) const LINES: &[Column] = &[
    col("description", Kind::Text),
    col("amount", ROW_MONEY),
    col("mrr", ROW_MONEY),
    col("quantity", Kind::Count),
    col("period_start", Kind::Timestamp),
    col("period_end", Kind::Timestamp),
];

/// The customer columns of a listed row.
pub(super) const CUSTOMER: [Column; 3] = [
    col("customer_id", Kind::Text),
    col("customer_name", Kind::Text),
    col("customer_email", Kind::Text),
];

/// A payment, failed payment or refund listed by a `*-detail` report.
pub(super) const ATTEMPT: [Column; 13] = concat(
    &[
        col("transaction_id", Kind::Text),
        col("invoice_id", Kind::Text),
        col("date", Kind::Timestamp),
        col("type", Kind::Text),
        col("status", Kind::Text),
        col("description", Kind::Text),
        col("currency", Kind::Text),
        col("amount", ROW_MONEY),
        col("amount_base_currency", MONEY),
        col("lines", Kind::List(LINES)),
    ],
    &CUSTOMER,
);

/// A movement as the movement lists give it (`movement-table`, scheduled
/// churn and `cmrr-summary`'s `scheduled`).
pub(super) const MOVEMENT: [Column; 17] = concat(
    &[
        col("date", Kind::Date),
        col("movement_date", Kind::Date),
        col("period", Kind::Date),
        col("type", Kind::Text),
        col("subtype", Kind::Text),
        col("description", Kind::Text),
        col("currency", Kind::Text),
        col("mrr_change", ROW_MONEY),
        col("mrr_change_base_currency", MONEY),
        col("customer_count_change", Kind::Count),
        col("quantity_change", Kind::Count),
        col("plans_before", Kind::Texts),
        col("plans_after", Kind::Texts),
        col("lines", Kind::List(LINES)),
    ],
    &CUSTOMER,
);

/// An invoice listed by `invoices-detail`.
pub(super) const INVOICE: [Column; 17] = concat(
    &[
        col("invoice_ref", Kind::Text),
        col("invoice_number", Kind::Text),
        col("type", Kind::Text),
        col("invoice_status", Kind::Text),
        col("description", Kind::Text),
        col("invoice_date", Kind::Timestamp),
        col("due_date", Kind::Timestamp),
        col("payment_date", Kind::Timestamp),
        col("currency", Kind::Text),
        col("total", ROW_MONEY),
        col("tax_amount", ROW_MONEY),
        col("total_base_currency", MONEY),
        col("transaction_count", Kind::Count),
        col("lines", Kind::List(LINES)),
    ],
    &CUSTOMER,
);

/// An unpaid invoice listed by `cashflow-outstanding-unpaid`.
pub(super) const UNPAID: [Column; 15] = concat(
    &[
        col("invoice_id", Kind::Text),
        col("invoice_number", Kind::Text),
        col("type", Kind::Text),
        col("status", Kind::Text),
        col("invoice_date", Kind::Timestamp),
        col("due_date", Kind::Timestamp),
        col("days_past_due", Kind::Count),
        col("bucket", Kind::Text),
        col("currency", Kind::Text),
        col("total", ROW_MONEY),
        col("amount", ROW_MONEY),
        col("amount_base_currency", MONEY),
    ],
    &CUSTOMER,
);

/// The figures of a scheduled-churn period.
pub(super) const CHURN_SCHEDULED: &[Column] = &[
    PERIOD[0],
    PERIOD[1],
    col("churn", MONEY),
    col("customers", Kind::Count),
];

/// `churn-scheduled-summary`'s `summary`.
pub(super) const CHURN_SCHEDULED_SUMMARY: &[Column] = &[
    col("churn", MONEY),
    col("customers", Kind::Count),
    col("current", Kind::Object(CHURN_SCHEDULED)),
    col("next", Kind::Object(CHURN_SCHEDULED)),
    col("change", Kind::Object(CHURN_SCHEDULED)),
];

/// `cmrr-summary`'s `summary`.
pub(super) const CMRR: &[Column] = &[
    col("mrr_current", MONEY),
    col("cmrr", MONEY),
    col("change", MONEY),
    col("scheduled_new", MONEY),
    col("scheduled_expansion", MONEY),
    col("scheduled_contraction", MONEY),
    col("scheduled_churn", MONEY),
    col("scheduled_reactivation", MONEY),
    col("customers_current", Kind::Count),
    col("customers_committed", Kind::Count),
];

/// One period of a cohort's row.
pub(super) const COHORT_PERIOD: &[Column] = &[
    col("offset", Kind::Count),
    col("date", Kind::Date),
    col("customers", Kind::Count),
    col("mrr", MONEY),
    col("value", Kind::Number),
    col("percent", Kind::Percent),
    col("customers_percent", Kind::Percent),
    col("mrr_percent", Kind::Percent),
];

/// One value of a custom variable.
pub(super) const VARIABLE_VALUE: &[Column] = &[
    col("value", Kind::Text),
    col("customers", Kind::Count),
    col("mrr", MONEY),
    col("share", Kind::Percent),
];

/// The rows of the analytics customer list (`Ledger::analytics_customers`,
/// `GET /customers`): a customer, its billing `currency`, and its MRR
/// converted to the list's currency (its `baseCurrency`, else the base
/// currency), which the list itself does not name.
pub const CUSTOMERS: ReportSchema = ReportSchema::Rows(&[
    col("id", Kind::Text),
    col("name", Kind::Text),
    col("email", Kind::Text),
    col("created_date", Kind::Timestamp),
    col("country", Kind::Text),
    col("trial_started", Kind::Timestamp),
    col("paid_started", Kind::Timestamp),
    col("cancel_date", Kind::Timestamp),
    col("status", Kind::Text),
    col("currency", Kind::Text),
    col("mrr", MONEY),
]);

/// The rows of `Ledger::movements` (`GET /movements`): the movement columns
/// the movement lists share (amounts in the movement's currency and in the
/// base currency, which the list itself does not name).
pub const MOVEMENTS: ReportSchema = ReportSchema::Rows(&MOVEMENT);
