//! Each report's schema, named for its registry entry.

use super::declared::{self, *};
use super::{Column, Kind, ReportSchema};

/// `summary`.
pub(crate) const SUMMARY: ReportSchema = ReportSchema::Rows(&[
    col("currency", Kind::Text),
    col(
        "summary",
        Kind::Object(&[
            col("mrr_current", MONEY),
            col("arr_current", MONEY),
            col("arpa_current", MONEY),
            col("subscribers_current", Kind::Count),
        ]),
    ),
]);
/// `mrr`.
pub(crate) const MRR: ReportSchema = ReportSchema::Rows(&declared::MRR);
/// `mrr-table`.
pub(crate) const MRR_TABLE: ReportSchema = ReportSchema::ByMetric(MRR_GROUP);
/// `mrr-table-subtypes`.
pub(crate) const MRR_TABLE_SUBTYPES: ReportSchema = ReportSchema::ByMetric(MRR_SUBTYPES);
/// `cmrr-summary`.
pub(crate) const CMRR_SUMMARY: ReportSchema = ReportSchema::Rows(&[
    col("currency", Kind::Text),
    col("summary", Kind::Object(CMRR)),
    col("scheduled", Kind::List(&MOVEMENT)),
]);
/// `cohort`.
pub(crate) const COHORT: ReportSchema = ReportSchema::Rows(&[
    col("cohort", Kind::Date),
    col("customers", Kind::Count),
    col("new_customers", Kind::Count),
    col("mrr", MONEY),
    col("periods", Kind::List(COHORT_PERIOD)),
]);
/// `churn-scheduled`.
pub(crate) const CHURN_SCHEDULED: ReportSchema = ReportSchema::Rows(declared::CHURN_SCHEDULED);
/// `churn-scheduled-movements` and `movement-table`.
pub(crate) const MOVEMENTS: ReportSchema = ReportSchema::Rows(&MOVEMENT);
/// `churn-scheduled-summary`.
pub(crate) const CHURN_SCHEDULED_SUMMARY: ReportSchema = ReportSchema::Rows(&[
    col("currency", Kind::Text),
    col("summary", Kind::Object(declared::CHURN_SCHEDULED_SUMMARY)),
]);
/// `map`.
pub(crate) const MAP: ReportSchema = ReportSchema::Rows(&[
    col("country", Kind::Text),
    col("region", Kind::Text),
    col("customers", Kind::Count),
    col("mrr", MONEY),
    col("arr", MONEY),
    col("arpa", MONEY),
    col("share", Kind::Percent),
]);
/// `map` beside its rows: the totals of every country.
pub(crate) const MAP_BESIDE: &[Column] = &[col(
    "total",
    Kind::Object(&[
        col("customers", Kind::Count),
        col("mrr", MONEY),
        col("arpa", MONEY),
    ]),
)];
/// `customer-concentration`.
pub(crate) const CONCENTRATION: ReportSchema = ReportSchema::Rows(&[
    col("rank", Kind::Count),
    col("customer_id", Kind::Text),
    col("customer_name", Kind::Text),
    col("mrr", MONEY),
    col("share", Kind::Percent),
    col("cumulative_share", Kind::Percent),
]);
/// `customer-concentration` beside its rows: the whole MRR, the
/// Herfindahl index (0 to 1, and times 10,000 as `hhi`) and the shares of
/// the top percents of customers.
pub(crate) const CONCENTRATION_BESIDE: &[Column] = &[
    col("total_mrr", MONEY),
    col("customers", Kind::Count),
    col("herfindahl", Kind::Number),
    col("hhi", Kind::Number),
    col(
        "top",
        Kind::List(&[
            col("percent", Kind::Percent),
            col("customers", Kind::Count),
            col("mrr", MONEY),
            col("share", Kind::Percent),
        ]),
    ),
];
/// `custom-variables`.
pub(crate) const VARIABLES: ReportSchema = ReportSchema::Rows(&[
    col("variable", Kind::Text),
    col("values", Kind::List(VARIABLE_VALUE)),
]);
/// `custom-variables` beside its rows: the totals of every customer.
pub(crate) const VARIABLES_BESIDE: &[Column] = &[col(
    "total",
    Kind::Object(&[col("customers", Kind::Count), col("mrr", MONEY)]),
)];
/// `invoices-detail`.
pub(crate) const INVOICES: ReportSchema = ReportSchema::Rows(&INVOICE);
/// `cashflow-outstanding-unpaid`.
pub(crate) const UNPAID: ReportSchema = ReportSchema::Rows(&declared::UNPAID);
/// `cashflow-outstanding-unpaid` beside its rows: the total and the
/// buckets of days past due.
pub(crate) const UNPAID_BESIDE: &[Column] = &[
    col(
        "total",
        Kind::Object(&[col("count", Kind::Count), col("amount", MONEY)]),
    ),
    col(
        "buckets",
        Kind::List(&[
            col("bucket", Kind::Text),
            col("count", Kind::Count),
            col("amount", MONEY),
        ]),
    ),
];
/// `leads`.
pub(crate) const LEADS: ReportSchema = ReportSchema::Rows(declared::LEADS);
/// `leads-days`.
pub(crate) const LEADS_DAYS: ReportSchema = ReportSchema::Rows(declared::LEADS_DAYS);
/// `leads-summary`.
pub(crate) const LEADS_SUMMARY: ReportSchema = ReportSchema::Rows(&summary_of(declared::LEADS));
/// `leads-table`.
pub(crate) const LEADS_TABLE: ReportSchema = ReportSchema::ByMetric(declared::LEADS);
/// `transactions`.
pub(crate) const TRANSACTIONS: ReportSchema = ReportSchema::Rows(&declared::TRANSACTIONS);
/// `transactions-summary`.
pub(crate) const TRANSACTIONS_SUMMARY: ReportSchema =
    ReportSchema::Rows(&summary_of(&declared::TRANSACTIONS));
/// `transactions-table`.
pub(crate) const TRANSACTIONS_TABLE: ReportSchema = ReportSchema::ByMetric(&declared::TRANSACTIONS);
/// The `*-detail` reports of payments, failed payments and refunds.
pub(crate) const ATTEMPTS: ReportSchema = ReportSchema::Rows(&ATTEMPT);
/// `cashflow-failed-payments`.
pub(crate) const FAILED: ReportSchema = ReportSchema::Rows(&declared::FAILED);
/// `cashflow-failed-payments-summary`.
pub(crate) const FAILED_SUMMARY: ReportSchema = ReportSchema::Rows(&summary_of(&declared::FAILED));
/// `cashflow-failed-payments-table`.
pub(crate) const FAILED_TABLE: ReportSchema = ReportSchema::ByMetric(&declared::FAILED);
/// `cashflow-refunds`.
pub(crate) const REFUNDS: ReportSchema = ReportSchema::Rows(&declared::REFUNDS);
/// `cashflow-refunds-table`.
pub(crate) const REFUNDS_TABLE: ReportSchema = ReportSchema::ByMetric(&declared::REFUNDS);
/// `cashflow-failure-rate`.
pub(crate) const FAILURE_RATE: ReportSchema = ReportSchema::Rows(declared::FAILURE_RATE);
/// `cashflow-failure-rate-summary`.
pub(crate) const FAILURE_RATE_SUMMARY: ReportSchema =
    ReportSchema::Rows(&summary_of(declared::FAILURE_RATE));
