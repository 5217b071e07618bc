//! What each report's columns hold, declared once per report (in its
//! registry entry) for the renderings that need more than JSON types: the
//! CLI formats money from it, Arrow batches type their columns by it, and
//! catalogues list it.
//!
//! Columns are those of a report's table rows (the rows of its typed
//! answer, which [`report_rows`](super::result::report_rows) also cuts from
//! its JSON): one row per period, item or group, or, for the
//! `*-table` reports, one row per `metric` with a column per period
//! ([`ReportSchema::ByMetric`]: a period cell is of its row's metric's kind).
//! Nested values (a summary's `current`, a movement's `lines`, an MRR
//! `breakdown`) declare their fields too.
//!
//! A column may be absent from a row (a breakdown without `breakdown=`) and
//! any column may be null (a rate over nothing, a customer without email);
//! a column present is always declared and of its kind. The `report_schema`
//! test runs every report query of the scenario corpus to hold that.

use crate::model::plain_date;
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
    /// An amount in integer cents (hundredths of a unit, in every currency).
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
        self.mismatch_at(value, Place::At("")).is_none()
    }

    /// Whether a string cell of this kind may hold `text`: a date kind a
    /// `YYYY-MM-DD` day, a timestamp kind such a day or an RFC 3339
    /// instant, a text kind any text, no other kind a text.
    pub(crate) fn admits_text(&self, text: &str) -> bool {
        match self {
            Kind::Date => is_date(text),
            Kind::Timestamp => is_date(text) || chrono::DateTime::parse_from_rfc3339(text).is_ok(),
            Kind::Text => true,
            _ => false,
        }
    }

    /// The first place under `value` (a path from `at`) that is not of this
    /// kind, in words; `None` when it is.
    pub fn mismatch(&self, value: &Value, at: &str) -> Option<String> {
        self.mismatch_at(value, Place::At(at))
    }

    /// [`Kind::mismatch`] with the path written only for a value that does
    /// not fit: checking every cell of a long report writes none.
    fn mismatch_at(&self, value: &Value, at: Place<'_>) -> Option<String> {
        if value.is_null() {
            return None;
        }
        let fits = match self {
            Kind::Money(_) | Kind::Count => value.is_i64(),
            Kind::Percent | Kind::Number | Kind::Metric => value.is_number(),
            Kind::Date | Kind::Timestamp | Kind::Text => {
                value.as_str().is_some_and(|text| self.admits_text(text))
            }
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
                    Kind::Object(fields).mismatch_at(item, Place::Item(&at, i))
                });
            }
            Kind::Percents(fields) => {
                let Some(object) = value.as_object() else {
                    return Some(format!("{at}: {value} is not an object"));
                };
                return object.iter().find_map(|(name, value)| {
                    let place = Place::Field(&at, name);
                    if fields.iter().any(|c| c.name == name) {
                        Kind::Percent.mismatch_at(value, place)
                    } else {
                        Some(format!("{place}: not declared"))
                    }
                });
            }
            Kind::Groups(fields) => {
                let Some(groups) = value.as_object() else {
                    return Some(format!("{at}: {value} is not an object of groups"));
                };
                return groups.iter().find_map(|(key, group)| {
                    Kind::Object(fields).mismatch_at(group, Place::Field(&at, key))
                });
            }
        };
        (!fits).then(|| format!("{at}: {value} is not {}", self.name()))
    }
}

/// Where a value sits under a cell or row, written out only in a mismatch's
/// words: `mrr`, `lines[2].amount`, `breakdown.US.mrr`.
#[derive(Clone, Copy)]
enum Place<'a> {
    /// The value itself, as its caller names it (empty for a row).
    At(&'a str),
    /// A field or group key of the value at the place before.
    Field(&'a Place<'a>, &'a str),
    /// An item of the list at the place before.
    Item(&'a Place<'a>, usize),
}

impl std::fmt::Display for Place<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Place::At(name) | Place::Field(Place::At(""), name) => f.write_str(name),
            Place::Field(before, name) => write!(f, "{before}.{name}"),
            Place::Item(before, i) => write!(f, "{before}[{i}]"),
        }
    }
}

/// The first field of `object` undeclared in `fields` or not of its kind.
fn object_mismatch(
    fields: &[Column],
    object: &serde_json::Map<String, Value>,
    at: Place<'_>,
) -> Option<String> {
    object.iter().find_map(|(name, value)| {
        let place = Place::Field(&at, name);
        match fields.iter().find(|c| c.name == name) {
            None => Some(format!("{place}: not declared")),
            Some(column) => column.kind.mismatch_at(value, place),
        }
    })
}

/// Whether `text` is a day written `YYYY-MM-DD` (plain digits are read
/// without the format parser, which takes what else the format admits).
fn is_date(text: &str) -> bool {
    text.len() == 10
        && (plain_date(text).is_some()
            || chrono::NaiveDate::parse_from_str(text, "%Y-%m-%d").is_ok())
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
            ReportSchema::Rows(columns) => object_mismatch(columns, object, Place::At("")),
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

mod declared;
pub(crate) mod of;

pub use declared::{CUSTOMERS, MOVEMENTS};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_mismatch_names_its_place_down_lists_groups_and_fields() {
        let movement = |lines: Value| json!({"date": "2024-01-01", "lines": lines});
        let bad_line = movement(json!([{"amount": 5}, {"amount": "x"}]));
        assert_eq!(
            MOVEMENTS.mismatch(&bad_line).as_deref(),
            Some(r#"lines[1].amount: "x" is not money"#)
        );
        let undeclared = movement(json!([{"amount": 5, "colour": "red"}]));
        assert_eq!(
            MOVEMENTS.mismatch(&undeclared).as_deref(),
            Some("lines[0].colour: not declared")
        );
        let groups = Kind::Groups(declared::MRR_GROUP);
        assert_eq!(
            groups.mismatch(&json!({"US": {"new": 1.5}}), "breakdown"),
            Some("breakdown.US.new: 1.5 is not money".to_string())
        );
        assert!(!groups.admits(&json!({"US": {"new": 1.5}})));
        assert!(groups.admits(&json!({"US": {"new": 15}, "FR": null})));
        assert_eq!(MOVEMENTS.mismatch(&movement(json!([{"amount": 5}]))), None);
    }

    #[test]
    fn a_date_is_what_the_format_reads_as_one() {
        assert!(is_date("2024-02-29"));
        assert!(!is_date("2023-02-29"));
        for text in [
            "2024-1-10 ",
            "+024-01-10",
            "2024-01-1a",
            " 2024-1-10",
            "20240110",
        ] {
            let by_format = chrono::NaiveDate::parse_from_str(text, "%Y-%m-%d").is_ok();
            assert_eq!(is_date(text), text.len() == 10 && by_format, "{text:?}");
        }
    }
}
