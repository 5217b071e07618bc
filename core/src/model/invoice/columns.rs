//! Invoices read straight from the columns of an Arrow record batch: each
//! field's column is found once per batch instead of once per row, and a
//! row's cells are read as plain values ([`Invoice::from_cells`]).

use super::plain::{Cell, Cells, FIELDS, Field};
use super::*;
use crate::ids::RecentIds;
use crate::model::View;
use crate::model::arrow_rows::{ArrowRecords, Column};

/// The column of each invoice field in one batch, by [`Field`] (`None`:
/// the batch has no column for it, so every row lacks the field).
pub(crate) struct InvoiceColumns<'a> {
    columns: [Option<&'a Column<'a>>; FIELDS],
}

impl<'a> InvoiceColumns<'a> {
    /// The field columns of `records`; `None` when the batch gives a field
    /// under two of its names (a row then reads whichever is not null), so
    /// its rows are left to the general reader.
    pub(crate) fn new(records: &'a ArrowRecords<'a>) -> Option<InvoiceColumns<'a>> {
        let mut columns = [None; FIELDS];
        for (slot, field) in columns.iter_mut().zip(Field::ALL) {
            let mut present = field.names().iter().filter_map(|name| records.column(name));
            *slot = present.next();
            if present.next().is_some() {
                return None;
            }
        }
        Some(InvoiceColumns { columns })
    }

    /// Row `row` as an invoice, when [`Invoice::from_cells`] can read it;
    /// `None` leaves the row to the general reader.
    pub(crate) fn read(&self, row: usize, recent: &mut RecentIds) -> Option<Invoice> {
        let cells: Cells<'_> = self
            .columns
            .map(|column| match column.map(|c| c.view(row)) {
                None | Some(View::Null) => Cell::Absent,
                Some(View::String(text)) => Cell::Text(text),
                Some(View::Number(number)) => number.as_i64().map_or(Cell::Other, Cell::Integer),
                Some(View::Timestamp(timestamp)) => Cell::Timestamp(timestamp),
                Some(_) => Cell::Other,
            });
        Invoice::from_cells(&cells, recent)
    }
}

#[cfg(test)]
mod tests;
