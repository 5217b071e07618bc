//! A report's answer as typed values, built once by the report and
//! rendered from there: the JSON answer is its serialization (fields in
//! struct order), and the [`ReportTable`] takes its rows and currency from
//! it (CSV, Arrow batches and the CLI's tables render the table).
//!
//! A report states its rows as a struct of its own (money as integer
//! cents of the answer's currency, counts, percents, dates) and answers in
//! one of four shapes, each with a *head*, the envelope's fields before the
//! rows (`currency`, `interval`, totals...):
//!
//! | shape | JSON | table rows |
//! |---|---|---|
//! | [`Series`] | `{<head>, result: [row...]}` | one per period, group or item |
//! | [`Listing`] | `{<head>, result: {count, list: [row...]}}` | the listed page |
//! | [`Pivot`] | `{<head>, columns: [period...], rows: [{metric, label, values}]}` | one per metric: `metric`, then a column per period |
//! | [`Single`] | the value itself | one, the whole value |

use super::result::ReportTable;
use super::result::TableColumn;
use super::row_cells::{CellPieces, RowCells};
use super::{Report, ReportParams};
use crate::derive::Derived;
use crate::error::Result;
use crate::money::{Cents, Currency};
use chrono::{DateTime, NaiveDate, Utc};
use rayon::prelude::*;
use serde::Serialize;
use serde_json::{Map, Value};

/// A report's answer (see the module documentation).
pub(crate) struct ReportAnswer(Box<dyn Answer>);

/// What every shape gives its renderings.
trait Answer: Send {
    /// The report's currency: the currency of its money in the report's
    /// currency; `None` for an answer without money in one currency.
    fn currency(&self) -> Option<Currency>;
    /// The whole answer as JSON.
    fn into_json(self: Box<Self>) -> Value;
    /// The text of [`Answer::into_json`], written from the typed values.
    fn into_json_text(self: Box<Self>) -> Vec<u8>;
    /// The table's rows, each a JSON object.
    fn into_rows(self: Box<Self>) -> Vec<Value>;
    /// The table's rows as cells by column: those of [`Answer::into_rows`]
    /// unless the shape writes its typed rows straight into cells.
    fn into_cells(self: Box<Self>) -> CellPieces {
        CellPieces::new(vec![RowCells::of_values(self.into_rows())])
    }
}

impl ReportAnswer {
    /// The answer as JSON, the report's interface response.
    pub(crate) fn into_json(self) -> Value {
        self.0.into_json()
    }

    /// The text of [`ReportAnswer::into_json`], written straight from the
    /// typed rows (a long list on every core) with no JSON value between.
    pub(crate) fn into_json_text(self) -> Vec<u8> {
        self.0.into_json_text()
    }

    /// The answer as the table of `report` (whose schema types it).
    pub(crate) fn into_table(self, report: &Report) -> ReportTable {
        let currency = self.0.currency().map(|c| c.as_str().to_string());
        ReportTable::of_rows(report, currency, self.0.into_rows())
    }

    /// The columns of the table of `report` and their cells, without a
    /// JSON object per row (see [`RowCells`]).
    pub(crate) fn into_cells(self, report: &Report) -> (Vec<TableColumn>, CellPieces) {
        let currency = self.0.currency().map(|c| c.as_str().to_string());
        let cells = self.0.into_cells();
        let names = cells.names().to_vec();
        let columns = ReportTable::columns_of(report, currency, names, cells.rows());
        (columns, cells)
    }
}

impl<A: Answer + 'static> From<A> for ReportAnswer {
    fn from(answer: A) -> ReportAnswer {
        ReportAnswer(Box::new(answer))
    }
}

/// Serializes a report's value; the shapes hold structs, sequences and
/// maps keyed by text only, which always serialize.
fn json<T: Serialize + ?Sized>(value: &T) -> Value {
    serde_json::to_value(value).expect("report values have text keys")
}

/// Writes a report's value as JSON text; see [`json`].
fn json_text<T: Serialize + ?Sized>(value: &T) -> Vec<u8> {
    serde_json::to_vec(value).expect("report values have text keys")
}

/// Rows per piece of a long list written as text on a core of its own.
const TEXT_ROWS_PER_CORE: usize = 1 << 13;

/// The text of an envelope whose last field is an empty array closed by
/// `closing` more bytes (`{..., "result": []}` or `{..., "result":
/// {"count": n, "list": []}}`), with `rows` written into that array, a
/// piece per core.
fn with_rows_written<R: Serialize + Sync>(
    mut envelope: Vec<u8>,
    closing: &[u8],
    rows: &[R],
) -> Vec<u8> {
    let pieces: Vec<Vec<u8>> = rows
        .par_chunks(TEXT_ROWS_PER_CORE)
        .map(|piece| {
            let mut text = Vec::with_capacity(piece.len() * 64);
            for (k, row) in piece.iter().enumerate() {
                if k > 0 {
                    text.push(b',');
                }
                serde_json::to_writer(&mut text, row).expect("report values have text keys");
            }
            text
        })
        .collect();
    let tail = closing.len() + 1;
    debug_assert!(envelope.ends_with(&[b"]".as_slice(), closing].concat()));
    envelope.truncate(envelope.len().saturating_sub(tail));
    envelope.reserve(pieces.iter().map(|piece| piece.len() + 1).sum::<usize>() + tail);
    for (k, piece) in pieces.iter().enumerate() {
        if k > 0 {
            envelope.push(b',');
        }
        envelope.extend_from_slice(piece);
    }
    envelope.push(b']');
    envelope.extend_from_slice(closing);
    envelope
}

/// Rows per piece of a long list written into cells on a core of its own.
const CELL_ROWS_PER_CORE: usize = 1 << 14;

/// Typed rows as cells, a piece per core for a long list; serializes as
/// [`json`] does.
fn cells<R: Serialize + Sync>(rows: &[R]) -> CellPieces {
    let pieces: Vec<RowCells> = rows
        .par_chunks(CELL_ROWS_PER_CORE)
        .map(|piece| RowCells::of(piece).expect("report values have text keys"))
        .collect();
    CellPieces::new(pieces)
}

/// Frees `items` on every core: a long list of rows made on every core is
/// otherwise freed by one, after the work it was made for.
pub(crate) fn drop_on_every_core<T: Send>(items: Vec<T>) {
    items.into_par_iter().for_each(drop);
}

/// The fields of an answer's envelope before its rows.
pub(crate) trait Head: Serialize + Send + 'static {
    /// The currency of the answer's money (see [`ReportAnswer`]).
    fn currency(&self) -> Option<Currency>;
}

/// A head without fields.
#[derive(Serialize)]
pub(crate) struct NoHead;

impl Head for NoHead {
    fn currency(&self) -> Option<Currency> {
        None
    }
}

/// A head of only the report's currency: `{currency}`.
#[derive(Serialize)]
pub(crate) struct InCurrency {
    pub(crate) currency: Currency,
}

impl Head for InCurrency {
    fn currency(&self) -> Option<Currency> {
        Some(self.currency)
    }
}

/// A head of the report's currency and its periods' interval:
/// `{currency, interval}`.
#[derive(Serialize)]
pub(crate) struct PerInterval {
    pub(crate) currency: Currency,
    pub(crate) interval: &'static str,
}

impl Head for PerInterval {
    fn currency(&self) -> Option<Currency> {
        Some(self.currency)
    }
}

/// `{<head>, result: [row...]}`.
#[derive(Serialize)]
pub(crate) struct Series<H, R> {
    #[serde(flatten)]
    pub(crate) head: H,
    pub(crate) result: Vec<R>,
}

impl<H: Head, R: Serialize + Send + Sync + 'static> Answer for Series<H, R> {
    fn currency(&self) -> Option<Currency> {
        self.head.currency()
    }

    fn into_json(self: Box<Self>) -> Value {
        json(&*self)
    }

    fn into_json_text(self: Box<Self>) -> Vec<u8> {
        #[derive(Serialize)]
        struct Envelope<'a, H> {
            #[serde(flatten)]
            head: &'a H,
            result: [(); 0],
        }
        let envelope = json_text(&Envelope {
            head: &self.head,
            result: [],
        });
        let text = with_rows_written(envelope, b"}", &self.result);
        drop_on_every_core(self.result);
        text
    }

    fn into_rows(self: Box<Self>) -> Vec<Value> {
        self.result.iter().map(json).collect()
    }

    fn into_cells(self: Box<Self>) -> CellPieces {
        let cells = cells(&self.result);
        drop_on_every_core(self.result);
        cells
    }
}

/// `{<head>, result: {count, list: [row...]}}`: a page of a list of
/// `count` entries.
pub(crate) struct Listing<H, R> {
    pub(crate) head: H,
    pub(crate) count: usize,
    pub(crate) list: Vec<R>,
}

impl<H: Head, R: Serialize + Send + Sync + 'static> Answer for Listing<H, R> {
    fn currency(&self) -> Option<Currency> {
        self.head.currency()
    }

    /// Lists can be long: their rows are written on every core.
    fn into_json(self: Box<Self>) -> Value {
        let list: Vec<Value> = self.list.par_iter().map(json).collect();
        let mut answer = match json(&self.head) {
            Value::Object(fields) => fields,
            _ => Map::new(),
        };
        let mut result = Map::new();
        result.insert("count".to_string(), Value::from(self.count));
        result.insert("list".to_string(), Value::Array(list));
        answer.insert("result".to_string(), Value::Object(result));
        Value::Object(answer)
    }

    fn into_json_text(self: Box<Self>) -> Vec<u8> {
        #[derive(Serialize)]
        struct Envelope<'a, H> {
            #[serde(flatten)]
            head: &'a H,
            result: Page,
        }
        #[derive(Serialize)]
        struct Page {
            count: usize,
            list: [(); 0],
        }
        let envelope = json_text(&Envelope {
            head: &self.head,
            result: Page {
                count: self.count,
                list: [],
            },
        });
        let text = with_rows_written(envelope, b"}}", &self.list);
        drop_on_every_core(self.list);
        text
    }

    fn into_rows(self: Box<Self>) -> Vec<Value> {
        self.list.par_iter().map(json).collect()
    }

    fn into_cells(self: Box<Self>) -> CellPieces {
        let cells = cells(&self.list);
        drop_on_every_core(self.list);
        cells
    }
}

/// `{<head>, columns: [period start...], rows: [{metric, label, values}]}`:
/// one row per metric, a value per period.
#[derive(Serialize)]
pub(crate) struct Pivot<H> {
    #[serde(flatten)]
    pub(crate) head: H,
    pub(crate) columns: Vec<NaiveDate>,
    pub(crate) rows: Vec<MetricRow>,
}

/// One metric of a [`Pivot`].
#[derive(Serialize)]
pub(crate) struct MetricRow {
    /// The metric's name (a column of the matching series report).
    pub(crate) metric: &'static str,
    /// The movement type of a subtype row: written only by
    /// `mrr-table-subtypes` (null for its total row).
    #[serde(rename = "type", skip_serializing_if = "Option::is_none")]
    pub(crate) movement: Option<Option<&'static str>>,
    /// The metric's label for display.
    pub(crate) label: &'static str,
    /// One value per column.
    pub(crate) values: Vec<Cell>,
}

/// A number in a [`Pivot`]: an integer (cents, a count), a real (a rate,
/// a ratio) or nothing (a rate over nothing).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(untagged)]
pub(crate) enum Cell {
    /// Cents or a count.
    Int(i64),
    /// A percent or another real number.
    Real(f64),
    /// No value.
    Null,
}

impl From<Cents> for Cell {
    fn from(value: Cents) -> Cell {
        Cell::Int(value)
    }
}

impl From<Option<Cents>> for Cell {
    fn from(value: Option<Cents>) -> Cell {
        value.map_or(Cell::Null, Cell::Int)
    }
}

impl From<Option<f64>> for Cell {
    fn from(value: Option<f64>) -> Cell {
        value.map_or(Cell::Null, Cell::Real)
    }
}

impl<H: Head> Answer for Pivot<H> {
    fn currency(&self) -> Option<Currency> {
        self.head.currency()
    }

    fn into_json(self: Box<Self>) -> Value {
        json(&*self)
    }

    fn into_json_text(self: Box<Self>) -> Vec<u8> {
        json_text(&*self)
    }

    fn into_rows(self: Box<Self>) -> Vec<Value> {
        let columns: Vec<String> = self.columns.iter().map(NaiveDate::to_string).collect();
        self.rows
            .iter()
            .map(|row| {
                let mut record = Map::new();
                record.insert("metric".to_string(), Value::from(row.metric));
                for (column, value) in columns.iter().zip(&row.values) {
                    record.insert(column.clone(), json(value));
                }
                Value::Object(record)
            })
            .collect()
    }
}

/// One value, one row: `T`'s fields are the table's columns.
pub(crate) struct Single<T> {
    /// The currency of the value's money.
    pub(crate) currency: Option<Currency>,
    /// The answer.
    pub(crate) value: T,
}

impl<T: Serialize + Send + 'static> Answer for Single<T> {
    fn currency(&self) -> Option<Currency> {
        self.currency
    }

    fn into_json(self: Box<Self>) -> Value {
        json(&self.value)
    }

    fn into_json_text(self: Box<Self>) -> Vec<u8> {
        json_text(&self.value)
    }

    fn into_rows(self: Box<Self>) -> Vec<Value> {
        vec![json(&self.value)]
    }
}

/// A report's function: its typed answer.
pub(crate) type ReportFn = fn(&Derived<'_>, &ReportParams, DateTime<Utc>) -> Result<ReportAnswer>;

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[derive(Serialize)]
    struct Row {
        date: NaiveDate,
        mrr: Cents,
        rate: Option<f64>,
    }

    fn usd() -> Currency {
        Currency::parse("USD").unwrap()
    }

    fn row(day: u32, mrr: Cents, rate: Option<f64>) -> Row {
        Row {
            date: NaiveDate::from_ymd_opt(2024, 1, day).unwrap(),
            mrr,
            rate,
        }
    }

    #[test]
    fn a_series_writes_its_head_then_its_rows_in_field_order() {
        let series = Series {
            head: InCurrency { currency: usd() },
            result: vec![row(1, 100, Some(12.5)), row(2, -3, None)],
        };
        let text = serde_json::to_string(&ReportAnswer::from(series).into_json()).unwrap();
        assert_eq!(
            text,
            r#"{"currency":"USD","result":[{"date":"2024-01-01","mrr":100,"rate":12.5},{"date":"2024-01-02","mrr":-3,"rate":null}]}"#
        );
    }

    #[test]
    fn a_listing_nests_its_page_under_result_and_its_rows_are_the_page() {
        let listing = || Listing {
            head: NoHead,
            count: 7,
            list: vec![row(1, 100, None)],
        };
        assert_eq!(
            ReportAnswer::from(listing()).into_json(),
            json!({"result": {"count": 7, "list": [{"date": "2024-01-01", "mrr": 100, "rate": null}]}})
        );
        let answer: Box<dyn Answer> = Box::new(listing());
        assert_eq!(answer.currency(), None);
        assert_eq!(
            answer.into_rows(),
            [json!({"date": "2024-01-01", "mrr": 100, "rate": null})]
        );
    }

    #[test]
    fn the_text_of_an_answer_is_the_text_of_its_json_value() {
        fn text_and_value(answer: impl Fn() -> ReportAnswer) -> (String, String) {
            let of_value = serde_json::to_vec(&answer().into_json()).unwrap();
            let text = answer().into_json_text();
            (
                String::from_utf8(text).unwrap(),
                String::from_utf8(of_value).unwrap(),
            )
        }
        // A list longer than a core's piece is joined from the pieces.
        let long = || {
            (1..=TEXT_ROWS_PER_CORE * 2 + 1)
                .map(|k| row(1 + (k % 28) as u32, k as Cents, None))
                .collect()
        };
        let (text, of_value) = text_and_value(|| {
            Listing {
                head: InCurrency { currency: usd() },
                count: 40_000,
                list: long(),
            }
            .into()
        });
        assert_eq!(text, of_value);
        assert!(text.starts_with(r#"{"currency":"USD","result":{"count":40000,"list":[{"date":"2024-01-02","mrr":1,"rate":null},"#));
        assert!(text.ends_with(r#"{"date":"2024-01-06","mrr":16385,"rate":null}]}}"#));
        let (text, of_value) = text_and_value(|| {
            Series {
                head: NoHead,
                result: long(),
            }
            .into()
        });
        assert_eq!(text, of_value);
        // No rows, no head.
        let (text, of_value) = text_and_value(|| {
            Listing {
                head: NoHead,
                count: 0,
                list: Vec::<Row>::new(),
            }
            .into()
        });
        assert_eq!(
            (text.as_str(), of_value.as_str()),
            (
                r#"{"result":{"count":0,"list":[]}}"#,
                r#"{"result":{"count":0,"list":[]}}"#
            )
        );
        let (text, of_value) = text_and_value(|| {
            Series {
                head: PerInterval {
                    currency: usd(),
                    interval: "month",
                },
                result: Vec::<Row>::new(),
            }
            .into()
        });
        assert_eq!(
            (text.as_str(), of_value.as_str()),
            (
                r#"{"currency":"USD","interval":"month","result":[]}"#,
                r#"{"currency":"USD","interval":"month","result":[]}"#
            )
        );
        let (text, of_value) = text_and_value(|| {
            Single {
                currency: None,
                value: row(3, 5, Some(0.5)),
            }
            .into()
        });
        assert_eq!(text, of_value);
    }

    #[test]
    fn a_pivot_row_is_its_metric_then_a_cell_per_column() {
        let pivot = Pivot {
            head: InCurrency { currency: usd() },
            columns: vec![
                NaiveDate::from_ymd_opt(2024, 1, 1).unwrap(),
                NaiveDate::from_ymd_opt(2024, 2, 1).unwrap(),
            ],
            rows: vec![MetricRow {
                metric: "nrr",
                movement: None,
                label: "NRR",
                values: vec![Cell::Real(99.5), Cell::from(None::<f64>)],
            }],
        };
        let answer: Box<dyn Answer> = Box::new(pivot);
        assert_eq!(answer.currency(), Some(usd()));
        assert_eq!(
            answer.into_rows(),
            [json!({"metric": "nrr", "2024-01-01": 99.5, "2024-02-01": null})]
        );
    }

    #[test]
    fn cells_are_numbers_or_null() {
        let cells = [
            Cell::Int(-5),
            Cell::Real(0.25),
            Cell::Null,
            Cell::Real(f64::NAN),
        ];
        assert_eq!(json(&cells[..]), json!([-5, 0.25, null, null]));
    }
}
