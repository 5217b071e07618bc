//! A report's table as CSV text: a header of its columns (the declared ones
//! when there are no rows), then a row per table row, CRLF line ends;
//! numbers as the JSON writes them (money in integer cents), texts as they
//! are, nested values as their JSON text, nulls and absent cells empty.

use super::result::{ReportTable, TableColumn};
use super::row_cells::{CellPieces, CellRef};
use rayon::prelude::*;
use serde_json::Value;
use std::borrow::Cow;

/// The header line of `columns`.
fn header(columns: &[TableColumn]) -> Vec<u8> {
    let mut writer = writer();
    write_row(&mut writer, columns.iter().map(|c| c.name.as_bytes()));
    finish(writer)
}

/// A writer of CSV lines into memory, CRLF-ended.
fn writer() -> csv::Writer<Vec<u8>> {
    csv::WriterBuilder::new()
        .terminator(csv::Terminator::CRLF)
        .from_writer(Vec::new())
}

/// Writes one line of fields. Writing into memory cannot fail, and every
/// line of a table has its columns' number of fields.
fn write_row<'a>(writer: &mut csv::Writer<Vec<u8>>, fields: impl Iterator<Item = &'a [u8]>) {
    writer
        .write_record(fields)
        .expect("CSV is written into memory");
}

fn finish(writer: csv::Writer<Vec<u8>>) -> Vec<u8> {
    writer.into_inner().expect("CSV is written into memory")
}

/// A cell's text (see the module documentation).
fn cell_text(cell: Option<&Value>) -> Cow<'_, [u8]> {
    match cell {
        None | Some(Value::Null) => Cow::Borrowed(&b""[..]),
        Some(Value::String(text)) => Cow::Borrowed(text.as_bytes()),
        Some(other) => Cow::Owned(other.to_string().into_bytes()),
    }
}

/// Writes one row's cells as a line.
fn write_cells<'a>(
    writer: &mut csv::Writer<Vec<u8>>,
    cells: impl Iterator<Item = Option<&'a Value>>,
) {
    let texts: Vec<Cow<'_, [u8]>> = cells.map(cell_text).collect();
    write_row(writer, texts.iter().map(|text| text.as_ref()));
}

/// A stored cell's text: [`cell_text`] of its JSON value.
fn stored_cell_text<'a>(cell: CellRef<'a>, number: &mut itoa::Buffer) -> Cow<'a, [u8]> {
    match cell {
        CellRef::Absent | CellRef::Null => Cow::Borrowed(&b""[..]),
        CellRef::Text(text) => Cow::Borrowed(text.as_bytes()),
        CellRef::Integer(n) => Cow::Owned(number.format(n).as_bytes().to_vec()),
        CellRef::Bool(b) => Cow::Borrowed(if b { &b"true"[..] } else { &b"false"[..] }),
        CellRef::Real(r) => Cow::Owned(Value::from(r).to_string().into_bytes()),
        CellRef::Unsigned(n) => Cow::Owned(number.format(n).as_bytes().to_vec()),
        nested @ (CellRef::List(_) | CellRef::Object(_)) => {
            Cow::Owned(serde_json::to_vec(&nested).expect("cells serialize as JSON values"))
        }
    }
}

impl ReportTable {
    /// The table as CSV text (see the module documentation).
    pub fn to_csv(&self) -> Vec<u8> {
        let mut writer = writer();
        for cells in self.row_cells() {
            write_cells(&mut writer, cells.into_iter());
        }
        let mut text = header(&self.columns);
        text.extend_from_slice(&finish(writer));
        text
    }
}

/// The CSV text of the table of `columns` over `cells`: what
/// [`ReportTable::to_csv`] writes of the same rows, written from the cells
/// of each column, a piece of rows per core.
pub(crate) fn of_cells(columns: &[TableColumn], cells: &CellPieces) -> Vec<u8> {
    let pieces: Vec<Vec<u8>> = cells
        .pieces()
        .par_iter()
        .map(|piece| {
            let by_column: Vec<_> = columns.iter().map(|c| piece.cells(&c.name)).collect();
            let mut writer = writer();
            let mut number = itoa::Buffer::new();
            let mut texts = Vec::with_capacity(by_column.len());
            for row in 0..piece.rows() {
                texts.clear();
                texts.extend(by_column.iter().map(|column| {
                    let cell = column.map_or(CellRef::Absent, |cells| cells.get(row));
                    stored_cell_text(cell, &mut number)
                }));
                write_row(&mut writer, texts.iter().map(|text| text.as_ref()));
            }
            finish(writer)
        })
        .collect();
    let mut text = header(columns);
    text.reserve(pieces.iter().map(Vec::len).sum());
    for piece in &pieces {
        text.extend_from_slice(piece);
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reports::Report;
    use crate::reports::row_cells::RowCells;
    use serde_json::json;

    #[test]
    fn a_report_table_is_csv_with_its_columns_and_raw_values() {
        let table = ReportTable::from_result(
            "movement-table",
            json!({"currency": "USD", "result": {"count": 2, "list": [
                {"date": "2024-03-01", "customer_name": "Smith, J", "mrr_change": -2700,
                 "currency": "EUR", "plans_before": ["e"], "customer_email": null},
                {"date": "2024-04-01", "customer_name": "B", "mrr_change": 3000, "currency": "USD"},
            ]}}),
        )
        .unwrap();
        assert_eq!(
            String::from_utf8(table.to_csv()).unwrap(),
            "date,customer_name,mrr_change,currency,plans_before,customer_email\r\n\
             2024-03-01,\"Smith, J\",-2700,EUR,\"[\"\"e\"\"]\",\r\n\
             2024-04-01,B,3000,USD,,\r\n"
        );
        let empty = ReportTable::from_result("churn-scheduled", json!({"result": []})).unwrap();
        assert_eq!(
            String::from_utf8(empty.to_csv()).unwrap(),
            "date,end_date,churn,customers\r\n"
        );
        assert_eq!(
            of_cells(&empty.columns, &CellPieces::default()),
            empty.to_csv()
        );
    }

    #[test]
    fn a_table_written_from_its_cells_in_pieces_is_its_table() {
        let rows: Vec<Value> = (0..20u64)
            .map(|k| {
                json!({"date": "2024-01-01", "customer_name": format!("C, {k}"),
                       "mrr_change": k, "plans_before": ["a", {"b": [k, 0.5]}],
                       "customer_email": null, "lines": [{"id": "x", "amount": u64::MAX - k}],
                       "quantity": k as f64 / 4.0, "flag": k % 2 == 0})
            })
            .collect();
        let movement_table = Report::find("movement-table").unwrap();
        let table = ReportTable::of_rows(movement_table, Some("USD".into()), rows.clone());
        let text = table.to_csv();
        let pieces = rows
            .chunks(7)
            .map(|piece| RowCells::of_values(piece.to_vec()));
        let cells = CellPieces::new(pieces.collect());
        assert_eq!(
            String::from_utf8(of_cells(&table.columns, &cells)),
            String::from_utf8(text.clone())
        );
        let text = String::from_utf8(text).unwrap();
        assert!(text.starts_with(
            "date,customer_name,mrr_change,plans_before,customer_email,lines,quantity,flag\r\n\
             2024-01-01,\"C, 0\",0,\"[\"\"a\"\",{\"\"b\"\":[0,0.5]}]\",,\
             \"[{\"\"id\"\":\"\"x\"\",\"\"amount\"\":18446744073709551615}]\",0.0,true\r\n"
        ));
        assert!(text.ends_with(
            "2024-01-01,\"C, 19\",19,\"[\"\"a\"\",{\"\"b\"\":[19,0.5]}]\",,\
             \"[{\"\"id\"\":\"\"x\"\",\"\"amount\"\":18446744073709551596}]\",4.75,false\r\n"
        ));
        assert_eq!(text.lines().count(), 21);
    }
}
