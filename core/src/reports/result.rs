//! A report's answer as one typed table: the rows of the report's typed
//! answer (`reports::answer`), and for each column its name, its [`Kind`]
//! from the report's [`ReportSchema`] and, for money in the report's
//! currency, that currency. An answer received as JSON (a client of the
//! service) is cut into the same rows by [`report_rows`]. Arrow batches
//! ([`Ledger::report_batch`](crate::Ledger::report_batch)), the service's
//! CSV and the CLI's tables are renderings of it.

use super::Report;
use super::row_keys::KeyOrder;
use super::schema::{Kind, MoneyIn, ReportSchema};
use crate::error::Result;
use serde::Serialize;
use serde_json::Value;

/// One column of a [`ReportTable`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TableColumn {
    /// The field name in the rows (a period's start for a `*-table`).
    pub name: String,
    /// What it holds ([`Kind::Text`] for a column the schema does not
    /// declare, which the schema tests keep from happening).
    #[serde(serialize_with = "kind_name")]
    pub kind: Kind,
    /// The currency of a money column in the report's currency, and of a
    /// `*-table` period column (whose money rows are); `None` for money in
    /// each row's own `currency` and for other kinds.
    pub currency: Option<String>,
}

fn kind_name<S: serde::Serializer>(
    kind: &Kind,
    serializer: S,
) -> std::result::Result<S::Ok, S::Error> {
    serializer.serialize_str(kind.name())
}

/// A report's answer as a typed table (see the module documentation).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ReportTable {
    /// The report's interface name.
    pub report: &'static str,
    /// The report's schema, for cells whose kind depends on their row.
    #[serde(skip)]
    pub schema: ReportSchema,
    /// The columns: every field the rows hold, in the order rows first
    /// name them; with no rows, the schema's top-level columns (`metric`
    /// only for a `*-table`).
    pub columns: Vec<TableColumn>,
    /// The rows, JSON objects as the report's JSON answer holds them.
    pub rows: Vec<Value>,
}

impl ReportTable {
    /// The answer `result` of the report `name` (as [`Ledger::report`](crate::Ledger::report)
    /// gives it, or a client receives it from the service) as a table.
    ///
    /// # Errors
    ///
    /// [`Error::UnknownReport`](crate::Error::UnknownReport) for a name the
    /// registry does not know.
    pub fn from_result(name: &str, result: Value) -> Result<ReportTable> {
        let report = Report::find(name)?;
        let currency = result
            .get("currency")
            .and_then(Value::as_str)
            .map(str::to_string);
        Ok(ReportTable::of_rows(report, currency, report_rows(result)))
    }

    /// The table of `report` over `rows`, money in the report's currency
    /// in `currency`.
    pub(crate) fn of_rows(
        report: &Report,
        currency: Option<String>,
        rows: Vec<Value>,
    ) -> ReportTable {
        let objects = rows.iter().filter_map(Value::as_object);
        let names: Vec<String> = KeyOrder::of(objects)
            .names()
            .iter()
            .map(|name| name.to_string())
            .collect();
        ReportTable {
            report: report.name,
            schema: report.schema(),
            columns: ReportTable::columns_of(report, currency, names, rows.len()),
            rows,
        }
    }

    /// The columns of `report` named `names` (the fields its `rows` rows
    /// hold, in order); with no rows, the schema's top-level columns
    /// (`metric` only for a `*-table`).
    pub(crate) fn columns_of(
        report: &Report,
        currency: Option<String>,
        mut names: Vec<String>,
        rows: usize,
    ) -> Vec<TableColumn> {
        let schema = report.schema();
        if rows == 0 {
            names = match schema {
                ReportSchema::Rows(columns) => columns.iter().map(|c| c.name.to_string()).collect(),
                ReportSchema::ByMetric(_) => vec!["metric".to_string()],
            };
        }
        names
            .into_iter()
            .map(|name| {
                let kind = match schema {
                    ReportSchema::Rows(_) => schema.column(&name).map_or(Kind::Text, |c| c.kind),
                    ReportSchema::ByMetric(_) => match name.as_str() {
                        "metric" | "label" | "type" => Kind::Text,
                        _ => Kind::Metric,
                    },
                };
                let currency = match kind {
                    Kind::Money(MoneyIn::Report) | Kind::Metric => currency.clone(),
                    _ => None,
                };
                TableColumn {
                    name,
                    kind,
                    currency,
                }
            })
            .collect()
    }

    /// Each row's cells in column order (`None` where the row lacks the
    /// column), found in one walk over the row's fields: what a rendering
    /// reads rather than looking each cell up by name in its row.
    pub fn row_cells(&self) -> impl Iterator<Item = Vec<Option<&Value>>> + '_ {
        let order = KeyOrder::named(self.columns.iter().map(|c| c.name.as_str()));
        self.rows.iter().map(move |row| {
            let mut cells = Vec::new();
            order.row(Some(row), &mut cells);
            cells
        })
    }

    /// The column `name`.
    pub fn column(&self, name: &str) -> Option<&TableColumn> {
        self.columns.iter().find(|c| c.name == name)
    }

    /// The kind of the cell `column` of row `row`: its column's, or for a
    /// `*-table` period cell its row's metric's (see
    /// [`ReportSchema::kind_of`]). `None` past the rows or for an unknown
    /// column or metric.
    pub fn cell_kind(&self, row: usize, column: &str) -> Option<Kind> {
        let kind = self.column(column)?.kind;
        match kind {
            Kind::Metric => self.schema.kind_of(self.rows.get(row)?, column),
            other => Some(other),
        }
    }

    /// The currency of the money cell `column` of row `row`: the report's
    /// for money in the report's currency, the row's `currency` for money
    /// in the row's; `None` for a cell that is not money or whose currency
    /// the answer does not name.
    pub fn cell_currency(&self, row: usize, column: &str) -> Option<&str> {
        match self.cell_kind(row, column)? {
            Kind::Money(MoneyIn::Report) => self.column(column)?.currency.as_deref(),
            Kind::Money(MoneyIn::Row) => self.rows.get(row)?.get("currency")?.as_str(),
            _ => None,
        }
    }
}

/// The rows of a report result: a table (`columns` and `rows` of `metric`
/// and `values`) gives one row per metric, its `metric` then one column per
/// period, named as `columns` names them; a series or list (`result` or
/// `result.list`, or a list itself) one row per entry; anything else one
/// row, the whole result (its nested objects as struct columns).
pub fn report_rows(result: Value) -> Vec<Value> {
    let mut result = result;
    if let (Some(Value::Array(columns)), Some(Value::Array(rows))) =
        (result.get("columns"), result.get("rows"))
    {
        return rows
            .iter()
            .map(|row| {
                let mut record = serde_json::Map::new();
                record.insert(
                    "metric".to_string(),
                    row.get("metric").cloned().unwrap_or(Value::Null),
                );
                let values = row.get("values").and_then(Value::as_array);
                for (i, column) in columns.iter().enumerate() {
                    let name = column
                        .as_str()
                        .map_or_else(|| column.to_string(), str::to_string);
                    let value = values.and_then(|v| v.get(i)).cloned();
                    record.insert(name, value.unwrap_or(Value::Null));
                }
                Value::Object(record)
            })
            .collect();
    }
    if let Some(inner) = result.get_mut("result") {
        result = inner.take();
    }
    if let Some(list) = result.get_mut("list").filter(|list| list.is_array()) {
        result = list.take();
    }
    match result {
        Value::Array(rows) => rows,
        other => vec![other],
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn row_cells_come_in_column_order_whatever_order_the_rows_hold() {
        let table = ReportTable::from_result(
            "movement-table",
            json!({"currency": "USD", "result": {"count": 3, "list": [
                {"date": "2024-01-01", "currency": "EUR", "mrr_change": 5},
                {"mrr_change": -2, "date": "2024-02-01"},
                {"date": "2024-03-01", "extra": true},
            ]}}),
        )
        .unwrap();
        let names: Vec<&str> = table.columns.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["date", "currency", "mrr_change", "extra"]);
        let rows: Vec<Vec<Option<Value>>> = table
            .row_cells()
            .map(|cells| cells.into_iter().map(|cell| cell.cloned()).collect())
            .collect();
        assert_eq!(
            rows,
            [
                vec![
                    Some(json!("2024-01-01")),
                    Some(json!("EUR")),
                    Some(json!(5)),
                    None
                ],
                vec![Some(json!("2024-02-01")), None, Some(json!(-2)), None],
                vec![Some(json!("2024-03-01")), None, None, Some(json!(true))],
            ]
        );
    }

    #[test]
    fn table_cells_take_their_kind_and_currency_from_the_row_metric_or_the_row() {
        let table = ReportTable::from_result(
            "mrr-table",
            json!({"currency": "EUR", "columns": ["2024-01-01"], "rows": [
                {"metric": "total_mrr", "label": "MRR", "values": [100]},
                {"metric": "nrr", "label": "NRR", "values": [99.5]},
            ]}),
        )
        .unwrap();
        let names: Vec<&str> = table.columns.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["metric", "2024-01-01"]);
        assert_eq!(table.columns[1].kind, Kind::Metric);
        assert_eq!(
            table.cell_kind(0, "2024-01-01"),
            Some(Kind::Money(MoneyIn::Report))
        );
        assert_eq!(table.cell_currency(0, "2024-01-01"), Some("EUR"));
        assert_eq!(table.cell_kind(1, "2024-01-01"), Some(Kind::Percent));
        assert_eq!(table.cell_currency(1, "2024-01-01"), None);

        let moves = ReportTable::from_result(
            "movement-table",
            json!({"currency": "USD", "result": {"count": 1, "list": [
                {"currency": "EUR", "mrr_change": -2700, "mrr_change_base_currency": -3000},
            ]}}),
        )
        .unwrap();
        assert_eq!(moves.cell_currency(0, "mrr_change"), Some("EUR"));
        assert_eq!(
            moves.cell_currency(0, "mrr_change_base_currency"),
            Some("USD")
        );
        assert_eq!(moves.cell_currency(0, "currency"), None);

        let empty = ReportTable::from_result("churn-scheduled", json!({"result": []})).unwrap();
        let names: Vec<&str> = empty.columns.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["date", "end_date", "churn", "customers"]);
        assert!(ReportTable::from_result("nope", json!({})).is_err());
    }
}
