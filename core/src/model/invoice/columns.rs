//! Invoices read straight from the columns of an Arrow record batch: each
//! field's column is found once per batch instead of once per row, and a
//! row's cells are read as plain values ([`Invoice::from_cells`]).

use super::plain::{Cell, Cells, FIELDS, Field};
use super::*;
use crate::ids::RecentIds;
use crate::model::View;
use crate::model::arrow_rows::{ArrowRecords, Column};

/// The columns of the invoice fields one batch has, each with its field.
pub(crate) struct InvoiceColumns<'a> {
    columns: Vec<(Field, &'a Column<'a>)>,
}

impl<'a> InvoiceColumns<'a> {
    /// The field columns of `records`; `None` when the batch gives a field
    /// under two of its names (a row then reads whichever is not null), so
    /// its rows are left to the general reader.
    pub(crate) fn new(records: &'a ArrowRecords<'a>) -> Option<InvoiceColumns<'a>> {
        let mut columns = Vec::new();
        for &field in Field::ALL {
            let mut present = field.names().iter().filter_map(|name| records.column(name));
            if let Some(column) = present.next() {
                columns.push((field, column));
            }
            if present.next().is_some() {
                return None;
            }
        }
        Some(InvoiceColumns { columns })
    }

    /// Row `row` as an invoice, when [`Invoice::from_cells`] can read it;
    /// `None` leaves the row to the general reader.
    pub(crate) fn read(&self, row: usize, recent: &mut RecentIds) -> Option<Invoice> {
        let mut cells: Cells<'_> = [Cell::Absent; FIELDS];
        for &(field, column) in &self.columns {
            cells[field as usize] = match column.view(row) {
                View::Null => Cell::Absent,
                View::String(text) => Cell::Text(text),
                View::Number(number) => number.as_i64().map_or(Cell::Other, Cell::Integer),
                View::Timestamp(timestamp) => Cell::Timestamp(timestamp),
                _ => Cell::Other,
            };
        }
        Invoice::from_cells(&cells, recent)
    }
}

#[cfg(test)]
mod tests;
