//! Writing results: JSON (pretty), a terminal table, or CSV. `auto` is a
//! table on a terminal and JSON when piped.

mod csv;
mod money;
mod parts;
mod table;

use serde_json::{Map, Value};
use std::io::{IsTerminal, Write};
use submetrics::reports::{Column, Kind, MoneyIn, ReportSchema};

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    Auto,
    Json,
    Table,
    Csv,
}

/// How to write.
pub struct Style {
    pub format: Format,
    pub color: bool,
    /// The currency of money in the report's currency, for an answer that
    /// does not name it: the command's `baseCurrency`, else the base
    /// currency (offline the ledger's, online the account's), when known.
    pub base: Option<String>,
    /// The columns of what is written (a report's, the customer list's or
    /// the movements'), when known: which cells are money, and in which
    /// currency.
    pub schema: Option<ReportSchema>,
    /// The kinds of the parts of the answer beside its rows (a report's
    /// `beside_rows`, or a summary answer's other fields).
    pub beside: &'static [Column],
    /// The columns CSV names when there is no row: the declared ones.
    pub header: Vec<String>,
}

impl Style {
    pub fn new(format: Format, no_color: bool) -> Style {
        let terminal = std::io::stdout().is_terminal();
        let format = match format {
            Format::Auto if terminal => Format::Table,
            Format::Auto => Format::Json,
            other => other,
        };
        let color = terminal && !no_color && std::env::var_os("NO_COLOR").is_none();
        Style {
            format,
            color,
            base: None,
            schema: None,
            beside: &[],
            header: Vec::new(),
        }
    }
}

/// The rows a result holds, and the currency its amounts are in: the list
/// of `{result: {list}}`, the array of `{result: [...]}`, `rows` of a
/// table report, a top-level array, or the object itself as one row.
pub fn rows_of(value: &Value) -> (Vec<Map<String, Value>>, Option<String>) {
    let currency = value
        .get("currency")
        .and_then(Value::as_str)
        .map(str::to_string);
    let list = match value {
        Value::Array(items) => items.clone(),
        Value::Object(map) => match map.get("result") {
            Some(Value::Object(inner)) if inner.get("list").is_some_and(Value::is_array) => {
                inner["list"].as_array().cloned().unwrap_or_default()
            }
            Some(Value::Array(items)) => items.clone(),
            _ => match map.get("rows") {
                Some(Value::Array(items)) => pivot_rows(value, items),
                _ => match map.get("summary") {
                    Some(summary @ Value::Object(_)) => vec![summary.clone()],
                    _ => vec![value.clone()],
                },
            },
        },
        other => vec![other.clone()],
    };
    let rows = list
        .into_iter()
        .map(|item| match item {
            Value::Object(map) => map,
            other => {
                let mut map = Map::new();
                map.insert("value".to_string(), other);
                map
            }
        })
        .collect();
    (rows, currency)
}

/// A `{columns, rows: [{metric, label, values}]}` table as one row per metric.
fn pivot_rows(value: &Value, rows: &[Value]) -> Vec<Value> {
    let columns: Vec<String> = value["columns"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|c| c.as_str().map(str::to_string))
        .collect();
    rows.iter()
        .map(|row| {
            let mut map = Map::new();
            map.insert("metric".to_string(), row["metric"].clone());
            if let Some(kind) = row.get("type") {
                map.insert("type".to_string(), kind.clone());
            }
            map.insert("label".to_string(), row["label"].clone());
            for (column, cell) in columns
                .iter()
                .zip(row["values"].as_array().into_iter().flatten())
            {
                map.insert(column.clone(), cell.clone());
            }
            Value::Object(map)
        })
        .collect()
}

/// Which currency the cell `column` of a row (cut by [`rows_of`]) is money
/// in, by `schema`: the kind of the column it declares (or of a field of an
/// object column, for a summary shown as its fields), or in a *-table the
/// kind of the row's metric; `None` for a cell that is not money.
fn money_in(schema: &ReportSchema, row: &Map<String, Value>, column: &str) -> Option<MoneyIn> {
    let kind = match schema {
        ReportSchema::ByMetric(_) => schema.kind_of(&Value::Object(row.clone()), column),
        ReportSchema::Rows(columns) => columns
            .iter()
            .find(|c| c.name == column)
            .or_else(|| {
                columns
                    .iter()
                    .filter(|c| matches!(c.kind, Kind::Object(_)))
                    .flat_map(|c| c.kind.fields())
                    .find(|c| c.name == column)
            })
            .map(|c| c.kind),
    };
    match kind {
        Some(Kind::Money(currency)) => Some(currency),
        _ => None,
    }
}

/// Whether writing `value` in `style` needs the currency of money in the
/// report's currency, which the answer does not name: a table of a schema
/// with such money, of an answer without `currency`.
pub fn needs_base(value: &Value, style: &Style) -> bool {
    let Some(schema) = &style.schema else {
        return false;
    };
    let report_money = |columns: &[submetrics::reports::Column]| {
        columns.iter().any(|c| {
            std::iter::once(c)
                .chain(c.kind.fields())
                .any(|c| c.kind == Kind::Money(MoneyIn::Report))
        })
    };
    let declared = match schema {
        ReportSchema::Rows(columns) => report_money(columns),
        ReportSchema::ByMetric(metrics) => report_money(metrics),
    };
    style.format == Format::Table && value.get("currency").is_none() && declared
}

/// The note for parts beside the rows (named `parts`) that CSV leaves
/// out: they are totals and figures of the rows, which the JSON and the
/// table hold.
fn csv_leaves_out(parts: &[&str]) -> String {
    format!(
        "note: the answer also holds {} beside its rows, which CSV (one table) leaves out; \
         --format json or --format table shows them",
        parts::named(parts)
    )
}

/// Writes a result to stdout in the chosen format; what CSV leaves out is
/// noted on stderr, never dropped silently. A reader that stops early (`|
/// head`) ends the output quietly; any other failure to write (a full
/// disk) is an error saying so.
pub fn print(value: &Value, style: &Style) -> Result<(), String> {
    let (text, note) = render(value, style)?;
    let mut stdout = std::io::stdout().lock();
    match stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush())
    {
        Err(error) if error.kind() == std::io::ErrorKind::BrokenPipe => return Ok(()),
        Err(error) => return Err(format!("cannot write the answer to stdout: {error}")),
        Ok(()) => {}
    }
    if let Some(note) = note {
        eprintln!("{note}");
    }
    Ok(())
}

/// A result as text in the chosen format: in a table, the parts beside
/// the rows follow them (and a page of a longer list says so); in CSV, a
/// summary's one row holds them as columns, and any other answer's are
/// left out with a note to print on stderr.
fn render(value: &Value, style: &Style) -> Result<(String, Option<String>), String> {
    let beside = parts::beside(value);
    let mut note = None;
    let text = match style.format {
        Format::Csv => {
            let (mut rows, _) = rows_of(value);
            if !beside.is_empty() {
                match (parts::rows_from(value), rows.as_mut_slice()) {
                    (parts::RowsFrom::Summary, [row]) => {
                        for (name, part) in &beside {
                            row.insert(name.to_string(), (*part).clone());
                        }
                    }
                    _ => {
                        let names: Vec<&str> = beside.iter().map(|(name, _)| *name).collect();
                        note = Some(csv_leaves_out(&names));
                    }
                }
            }
            csv::render(&rows, &style.header)
        }
        Format::Table => {
            let (rows, currency) = rows_of(value);
            let money = |row: &Map<String, Value>, column: &str| {
                style
                    .schema
                    .as_ref()
                    .and_then(|schema| money_in(schema, row, column))
            };
            let (currency, base) = (currency.as_deref(), style.base.as_deref());
            let mut text = table::render(&rows, currency, base, style.color, money);
            let count = value.pointer("/result/count").and_then(Value::as_u64);
            if let Some(count) = count.filter(|count| *count > rows.len() as u64) {
                text.push_str(&format!("({} of {count} rows)\n", rows.len()));
            }
            for section in parts::sections(&beside, style.beside) {
                text.push('\n');
                if let Some(title) = section.title {
                    text.push_str(&format!("{title}:\n"));
                }
                let money = |_: &Map<String, Value>, column: &str| section.money(column);
                text.push_str(&table::render(
                    &section.rows,
                    currency,
                    base,
                    style.color,
                    money,
                ));
            }
            text
        }
        Format::Json | Format::Auto => {
            serde_json::to_string_pretty(value).unwrap_or_default() + "\n"
        }
    };
    Ok((text, note))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn style(format: Format, report: &str) -> Style {
        Style {
            format,
            color: false,
            base: Some("USD".to_string()),
            schema: submetrics::reports::schema(report).ok(),
            beside: submetrics::reports::beside_rows(report).unwrap_or_default(),
            header: Vec::new(),
        }
    }

    #[test]
    fn money_cells_are_formatted_from_the_schema() {
        let moves = json!({"currency": "USD", "result": {"count": 2, "list": [
            {"date": "2024-02-01", "customer_id": "C", "mrr_change": 2700,
             "mrr_change_base_currency": 3000, "customer_count_change": 1, "currency": "EUR"},
            {"date": "2024-03-01", "customer_id": "A", "mrr_change": -123456,
             "mrr_change_base_currency": -123456, "customer_count_change": -1, "currency": "USD"},
        ]}});
        assert_eq!(
            render(&moves, &style(Format::Table, "movement-table"))
                .unwrap()
                .0,
            "\
date        customer_id  mrr_change  mrr_change_base_currency  customer_count_change  currency
----------  -----------  ----------  ------------------------  ---------------------  --------
2024-02-01  C                €27.00                    $30.00                      1  EUR
2024-03-01  A            -$1,234.56                -$1,234.56                     -1  USD
"
        );
        assert_eq!(
            render(&moves, &style(Format::Csv, "movement-table"))
                .unwrap()
                .0,
            "date,customer_id,mrr_change,mrr_change_base_currency,customer_count_change,currency\r\n\
             2024-02-01,C,2700,3000,1,EUR\r\n\
             2024-03-01,A,-123456,-123456,-1,USD\r\n"
        );
        // A *-table's row is money or not by its metric; a summary's
        // fields by the summary's declared fields.
        let table = json!({"currency": "EUR", "columns": ["2024-01-01"], "rows": [
            {"metric": "total_mrr", "label": "MRR", "values": [5000]},
            {"metric": "total_customers", "label": "Customers", "values": [2]},
            {"metric": "nrr", "label": "NRR", "values": [101.5]},
        ]});
        assert_eq!(
            render(&table, &style(Format::Table, "mrr-table"))
                .unwrap()
                .0,
            "\
metric           label      2024-01-01
---------------  ---------  ----------
total_mrr        MRR            €50.00
total_customers  Customers           2
nrr              NRR            101.50
"
        );
        let summary =
            json!({"currency": "GBP", "summary": {"mrr_current": 1000, "subscribers_current": 3}});
        assert_eq!(
            render(&summary, &style(Format::Table, "summary"))
                .unwrap()
                .0,
            "\
mrr_current  subscribers_current
-----------  -------------------
     £10.00                    3
"
        );
        // Without a schema nothing is money.
        let mut plain = style(Format::Table, "summary");
        plain.schema = None;
        assert!(render(&summary, &plain).unwrap().0.contains("       1000"));
    }
}
