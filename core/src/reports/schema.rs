//! What each report's columns hold, declared once per report (in its
//! registry entry) for the renderings that need more than JSON types: the
//! CLI formats money from it, Arrow batches type their columns by it, and
//! catalogues list it.
//!
//! Columns are those of the rows [`report_rows`](super::result::report_rows)
//! cuts a result into: one row per period, item or group, or, for the
//! `*-table` reports, one row per `metric` with a column per period
//! ([`ReportSchema::ByMetric`]: a period cell is of its row's metric's kind).
//! Nested values (a summary's `current`, a movement's `lines`, an MRR
//! `breakdown`) declare their fields too.
//!
//! A column may be absent from a row (a breakdown without `breakdown=`) and
//! any column may be null (a rate over nothing, a customer without email);
//! a column present is always declared and of its kind. The `report_schema`
//! test runs every report query of the scenario corpus to hold that.

use serde::Serialize;
use serde::ser::{SerializeStruct, Serializer};
use serde_json::{Value, json};

/// Which currency a money column is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum MoneyIn {
    /// The report's currency (the result's `currency`: its base currency).
    Report,
    /// The row's own `currency` column (an invoice's or a movement's).
    Row,
}

/// What a column holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// An amount in integer minor units (cents) of a currency.
    Money(MoneyIn),
    /// A whole number of things (customers, payments, days past due).
    Count,
    /// A rate or share in percent (`12.5` is 12.5%); change percentages too.
    Percent,
    /// Another number: a ratio (quick ratio), months, days, an offset.
    Number,
    /// A day, `YYYY-MM-DD`.
    Date,
    /// An instant or a day as the input gave it (`YYYY-MM-DD` or RFC 3339).
    Timestamp,
    /// Text: ids, names, codes, labels.
    Text,
    /// `true` or `false`.
    Boolean,
    /// A list of texts (plan ids).
    Texts,
    /// An object with these fields.
    Object(&'static [Column]),
    /// A list of objects with these fields.
    List(&'static [Column]),
    /// An object keyed by a group (an MRR `breakdown`: plan, country, ...),
    /// each value an object with these fields.
    Groups(&'static [Column]),
    /// An object of changes in percent: the fields of these columns (by
    /// name), each a [`Kind::Percent`].
    Percents(&'static [Column]),
    /// A `*-table` period cell: of the kind its row's `metric` declares.
    Metric,
}

/// One column of a report's rows: its name and what it holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Column {
    /// The field name in the JSON rows.
    pub name: &'static str,
    /// What it holds.
    pub kind: Kind,
}

/// The columns of a report.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReportSchema {
    /// One row per period, item or group, with these columns.
    Rows(&'static [Column]),
    /// One row per `metric` (named by one of these columns), then one
    /// column per period holding that metric's values.
    ByMetric(&'static [Column]),
}

impl Kind {
    /// The kind's name in catalogues: `money`, `count`, `percent`,
    /// `number`, `date`, `timestamp`, `text`, `boolean`, `texts`, `object`,
    /// `list`, `groups`, `percents` or `metric`.
    pub fn name(&self) -> &'static str {
        match self {
            Kind::Money(_) => "money",
            Kind::Count => "count",
            Kind::Percent => "percent",
            Kind::Number => "number",
            Kind::Date => "date",
            Kind::Timestamp => "timestamp",
            Kind::Text => "text",
            Kind::Boolean => "boolean",
            Kind::Texts => "texts",
            Kind::Object(_) => "object",
            Kind::List(_) => "list",
            Kind::Groups(_) => "groups",
            Kind::Percents(_) => "percents",
            Kind::Metric => "metric",
        }
    }

    /// The fields of an object, list of objects or groups; empty otherwise.
    pub fn fields(&self) -> &'static [Column] {
        match self {
            Kind::Object(fields)
            | Kind::List(fields)
            | Kind::Groups(fields)
            | Kind::Percents(fields) => fields,
            _ => &[],
        }
    }

    /// Whether `value` (not null) is of this kind: money and counts integer
    /// numbers, percents and numbers any number, dates `YYYY-MM-DD`,
    /// timestamps a date or an RFC 3339 instant, texts strings, objects,
    /// lists and groups of their shape with every field declared. Null is of
    /// every kind. `Metric` takes any number (its row decides).
    pub fn admits(&self, value: &Value) -> bool {
        self.mismatch(value, "").is_none()
    }

    /// The first place under `value` (a path from `at`) that is not of this
    /// kind, in words; `None` when it is.
    pub fn mismatch(&self, value: &Value, at: &str) -> Option<String> {
        if value.is_null() {
            return None;
        }
        let fits = match self {
            Kind::Money(_) | Kind::Count => value.is_i64(),
            Kind::Percent | Kind::Number | Kind::Metric => value.is_number(),
            Kind::Date => value.as_str().is_some_and(is_date),
            Kind::Timestamp => value
                .as_str()
                .is_some_and(|s| is_date(s) || chrono::DateTime::parse_from_rfc3339(s).is_ok()),
            Kind::Text => value.is_string(),
            Kind::Boolean => value.is_boolean(),
            Kind::Texts => value
                .as_array()
                .is_some_and(|items| items.iter().all(Value::is_string)),
            Kind::Object(fields) => {
                return match value.as_object() {
                    Some(object) => object_mismatch(fields, object, at),
                    None => Some(format!("{at}: {value} is not an object")),
                };
            }
            Kind::List(fields) => {
                let Some(items) = value.as_array() else {
                    return Some(format!("{at}: {value} is not a list"));
                };
                return items.iter().enumerate().find_map(|(i, item)| {
                    Kind::Object(fields).mismatch(item, &format!("{at}[{i}]"))
                });
            }
            Kind::Percents(fields) => {
                let Some(object) = value.as_object() else {
                    return Some(format!("{at}: {value} is not an object"));
                };
                return object.iter().find_map(|(name, value)| {
                    let path = format!("{at}.{name}");
                    if fields.iter().any(|c| c.name == name) {
                        Kind::Percent.mismatch(value, &path)
                    } else {
                        Some(format!("{path}: not declared"))
                    }
                });
            }
            Kind::Groups(fields) => {
                let Some(groups) = value.as_object() else {
                    return Some(format!("{at}: {value} is not an object of groups"));
                };
                return groups.iter().find_map(|(key, group)| {
                    Kind::Object(fields).mismatch(group, &format!("{at}.{key}"))
                });
            }
        };
        (!fits).then(|| format!("{at}: {value} is not {}", self.name()))
    }
}

/// The first field of `object` undeclared in `fields` or not of its kind.
fn object_mismatch(
    fields: &[Column],
    object: &serde_json::Map<String, Value>,
    at: &str,
) -> Option<String> {
    object.iter().find_map(|(name, value)| {
        let path = if at.is_empty() {
            name.clone()
        } else {
            format!("{at}.{name}")
        };
        match fields.iter().find(|c| c.name == name) {
            None => Some(format!("{path}: not declared")),
            Some(column) => column.kind.mismatch(value, &path),
        }
    })
}

/// Whether `text` is a day written `YYYY-MM-DD`.
fn is_date(text: &str) -> bool {
    text.len() == 10 && chrono::NaiveDate::parse_from_str(text, "%Y-%m-%d").is_ok()
}

impl ReportSchema {
    /// The declared columns (for [`ReportSchema::ByMetric`], the metrics).
    pub fn columns(&self) -> &'static [Column] {
        match self {
            ReportSchema::Rows(columns) | ReportSchema::ByMetric(columns) => columns,
        }
    }

    /// The declared column `name` (a metric, for a table).
    pub fn column(&self, name: &str) -> Option<&'static Column> {
        self.columns().iter().find(|c| c.name == name)
    }

    /// The kind of the cell `column` of `row` (a row as
    /// [`report_rows`](super::result::report_rows) cuts it): the declared
    /// column's kind; in a table, `metric` is text and `label` and `type`
    /// too, any other column is a period whose kind is the row's metric's.
    /// `None` for an undeclared column or metric.
    pub fn kind_of(&self, row: &Value, column: &str) -> Option<Kind> {
        match self {
            ReportSchema::Rows(_) => self.column(column).map(|c| c.kind),
            ReportSchema::ByMetric(_) => match column {
                "metric" | "label" | "type" => Some(Kind::Text),
                _ => row
                    .get("metric")
                    .and_then(Value::as_str)
                    .and_then(|metric| self.column(metric))
                    .map(|c| c.kind),
            },
        }
    }

    /// The first cell of `row` undeclared or not of its declared kind, in
    /// words (`mrr: "x" is not money`); `None` when every cell fits.
    pub fn mismatch(&self, row: &Value) -> Option<String> {
        let Some(object) = row.as_object() else {
            return Some(format!("{row} is not an object"));
        };
        match self {
            ReportSchema::Rows(columns) => object_mismatch(columns, object, ""),
            ReportSchema::ByMetric(_) => {
                object
                    .iter()
                    .find_map(|(name, value)| match self.kind_of(row, name) {
                        None => Some(format!("{name}: metric {} not declared", row["metric"])),
                        Some(kind) => kind.mismatch(value, name),
                    })
            }
        }
    }

    /// The schema as JSON for catalogues: `{shape: rows|by_metric,
    /// columns: [{name, kind, currency?, fields?}]}`.
    pub fn describe(&self) -> Value {
        let shape = match self {
            ReportSchema::Rows(_) => "rows",
            ReportSchema::ByMetric(_) => "by_metric",
        };
        json!({"shape": shape, "columns": self.columns()})
    }
}

impl Serialize for Column {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let money = match self.kind {
            Kind::Money(currency) => Some(currency),
            _ => None,
        };
        let fields = self.kind.fields();
        let len = 2 + usize::from(money.is_some()) + usize::from(!fields.is_empty());
        let mut out = serializer.serialize_struct("Column", len)?;
        out.serialize_field("name", self.name)?;
        out.serialize_field("kind", self.kind.name())?;
        if let Some(currency) = money {
            out.serialize_field("currency", &currency)?;
        }
        if !fields.is_empty() {
            out.serialize_field("fields", fields)?;
        }
        out.end()
    }
}

const fn col(name: &'static str, kind: Kind) -> Column {
    Column { name, kind }
}

const MONEY: Kind = Kind::Money(MoneyIn::Report);
const ROW_MONEY: Kind = Kind::Money(MoneyIn::Row);

/// The bounds of a period row.
const PERIOD: [Column; 2] = [col("date", Kind::Date), col("end_date", Kind::Date)];

/// The figures of one MRR group: amounts, counts and rates.
const MRR_GROUP: &[Column] = &[
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
const fn concat<const N: usize>(a: &[Column], b: &[Column]) -> [Column; N] {
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
const MRR: [Column; MRR_GROUP.len() + 3] = concat(
    &[
        PERIOD[0],
        PERIOD[1],
        col("breakdown", Kind::Groups(MRR_GROUP)),
    ],
    MRR_GROUP,
);

/// The `*-table` metrics of `mrr-table-subtypes`: every movement subtype.
const MRR_SUBTYPES: &[Column] = &[
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
const CHARGES: [Column; 12] = [
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
const TRANSACTIONS: [Column; CHARGES.len() + 13] = concat(
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
const FAILED: [Column; CHARGES.len() + 4] = concat(
    &[
        PERIOD[0],
        PERIOD[1],
        col("failed", MONEY),
        col("failed_count", Kind::Count),
    ],
    &CHARGES,
);

/// `cashflow-refunds`: a period's refunds by charge type.
const REFUNDS: [Column; CHARGES.len() + 6] = concat(
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
const FAILURE_RATE: &[Column] = &[
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
const LEADS: &[Column] = &[
    PERIOD[0],
    PERIOD[1],
    col("leads", Kind::Count),
    col("trials", Kind::Count),
    col("conversions", Kind::Count),
    col("lead_to_paid_rate", Kind::Percent),
    col("trial_to_paid_rate", Kind::Percent),
];

/// `leads-days`: how long conversions took, in days.
const LEADS_DAYS: &[Column] = &[
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
const fn summary_of(fields: &'static [Column]) -> [Column; 6] {
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
const LINES: &[Column] = &[
    col("description", Kind::Text),
    col("amount", ROW_MONEY),
    col("mrr", ROW_MONEY),
    col("quantity", Kind::Count),
    col("period_start", Kind::Timestamp),
    col("period_end", Kind::Timestamp),
];

/// The customer columns of a listed row.
const CUSTOMER: [Column; 3] = [
    col("customer_id", Kind::Text),
    col("customer_name", Kind::Text),
    col("customer_email", Kind::Text),
];

/// A payment, failed payment or refund listed by a `*-detail` report.
const ATTEMPT: [Column; 13] = concat(
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
const MOVEMENT: [Column; 17] = concat(
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
const INVOICE: [Column; 17] = concat(
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
const UNPAID: [Column; 15] = concat(
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
const CHURN_SCHEDULED: &[Column] = &[
    PERIOD[0],
    PERIOD[1],
    col("churn", MONEY),
    col("customers", Kind::Count),
];

/// `churn-scheduled-summary`'s `summary`.
const CHURN_SCHEDULED_SUMMARY: &[Column] = &[
    col("churn", MONEY),
    col("customers", Kind::Count),
    col("current", Kind::Object(CHURN_SCHEDULED)),
    col("next", Kind::Object(CHURN_SCHEDULED)),
    col("change", Kind::Object(CHURN_SCHEDULED)),
];

/// `cmrr-summary`'s `summary`.
const CMRR: &[Column] = &[
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
const COHORT_PERIOD: &[Column] = &[
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
const VARIABLE_VALUE: &[Column] = &[
    col("value", Kind::Text),
    col("customers", Kind::Count),
    col("mrr", MONEY),
    col("share", Kind::Percent),
];

/// The rows of the analytics customer list (`Ledger::analytics_customers`,
/// `GET /customers`): a customer with its MRR in its billing currency.
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
    col("mrr", ROW_MONEY),
]);

/// The rows of `Ledger::movements` (`GET /movements`): the movement columns
/// the movement lists share (amounts in the movement's currency and in the
/// base currency, which the list itself does not name).
pub const MOVEMENTS: ReportSchema = ReportSchema::Rows(&MOVEMENT);

/// The schemas of the reports, by family, for their registry entries.
pub(crate) mod of {
    use super::*;

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
    pub(crate) const MRR: ReportSchema = ReportSchema::Rows(&super::MRR);
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
    pub(crate) const CHURN_SCHEDULED: ReportSchema = ReportSchema::Rows(super::CHURN_SCHEDULED);
    /// `churn-scheduled-movements` and `movement-table`.
    pub(crate) const MOVEMENTS: ReportSchema = ReportSchema::Rows(&MOVEMENT);
    /// `churn-scheduled-summary`.
    pub(crate) const CHURN_SCHEDULED_SUMMARY: ReportSchema = ReportSchema::Rows(&[
        col("currency", Kind::Text),
        col("summary", Kind::Object(super::CHURN_SCHEDULED_SUMMARY)),
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
    /// `customer-concentration`.
    pub(crate) const CONCENTRATION: ReportSchema = ReportSchema::Rows(&[
        col("rank", Kind::Count),
        col("customer_id", Kind::Text),
        col("customer_name", Kind::Text),
        col("mrr", MONEY),
        col("share", Kind::Percent),
        col("cumulative_share", Kind::Percent),
    ]);
    /// `custom-variables`.
    pub(crate) const VARIABLES: ReportSchema = ReportSchema::Rows(&[
        col("variable", Kind::Text),
        col("values", Kind::List(VARIABLE_VALUE)),
    ]);
    /// `invoices-detail`.
    pub(crate) const INVOICES: ReportSchema = ReportSchema::Rows(&INVOICE);
    /// `cashflow-outstanding-unpaid`.
    pub(crate) const UNPAID: ReportSchema = ReportSchema::Rows(&super::UNPAID);
    /// `leads`.
    pub(crate) const LEADS: ReportSchema = ReportSchema::Rows(super::LEADS);
    /// `leads-days`.
    pub(crate) const LEADS_DAYS: ReportSchema = ReportSchema::Rows(super::LEADS_DAYS);
    /// `leads-summary`.
    pub(crate) const LEADS_SUMMARY: ReportSchema = ReportSchema::Rows(&summary_of(super::LEADS));
    /// `leads-table`.
    pub(crate) const LEADS_TABLE: ReportSchema = ReportSchema::ByMetric(super::LEADS);
    /// `transactions`.
    pub(crate) const TRANSACTIONS: ReportSchema = ReportSchema::Rows(&super::TRANSACTIONS);
    /// `transactions-summary`.
    pub(crate) const TRANSACTIONS_SUMMARY: ReportSchema =
        ReportSchema::Rows(&summary_of(&super::TRANSACTIONS));
    /// `transactions-table`.
    pub(crate) const TRANSACTIONS_TABLE: ReportSchema =
        ReportSchema::ByMetric(&super::TRANSACTIONS);
    /// The `*-detail` reports of payments, failed payments and refunds.
    pub(crate) const ATTEMPTS: ReportSchema = ReportSchema::Rows(&ATTEMPT);
    /// `cashflow-failed-payments`.
    pub(crate) const FAILED: ReportSchema = ReportSchema::Rows(&super::FAILED);
    /// `cashflow-failed-payments-summary`.
    pub(crate) const FAILED_SUMMARY: ReportSchema = ReportSchema::Rows(&summary_of(&super::FAILED));
    /// `cashflow-failed-payments-table`.
    pub(crate) const FAILED_TABLE: ReportSchema = ReportSchema::ByMetric(&super::FAILED);
    /// `cashflow-refunds`.
    pub(crate) const REFUNDS: ReportSchema = ReportSchema::Rows(&super::REFUNDS);
    /// `cashflow-refunds-table`.
    pub(crate) const REFUNDS_TABLE: ReportSchema = ReportSchema::ByMetric(&super::REFUNDS);
    /// `cashflow-failure-rate`.
    pub(crate) const FAILURE_RATE: ReportSchema = ReportSchema::Rows(super::FAILURE_RATE);
    /// `cashflow-failure-rate-summary`.
    pub(crate) const FAILURE_RATE_SUMMARY: ReportSchema =
        ReportSchema::Rows(&summary_of(super::FAILURE_RATE));
}
