//! Invoices read straight from the columns of an Arrow record batch. Each
//! field's column is found once per batch instead of once per row, and a
//! cell is taken as the plain value it holds (a string, an integer, a date)
//! without going through a record's generic field lookups. A row this
//! reader is not sure of (a cell of another kind, a broken rule) is left to
//! the general reader ([`Invoice::from_node`]), which gives the same
//! invoice or the error, so both readers give every row the same answer.

use super::read::{amount_fault, names, period_in_order, quantity_value, tax_fault};
use super::*;
use crate::ids::RecentIds;
use crate::model::View;
use crate::model::arrow_rows::{ArrowRecords, Column};
use crate::money::MAX_AMOUNT;

/// The column of each invoice field in one batch (`None`: the batch has
/// no column for it, so every row lacks the field).
pub(crate) struct InvoiceColumns<'a> {
    id: Option<&'a Column<'a>>,
    customer_id: Option<&'a Column<'a>>,
    kind: Option<&'a Column<'a>>,
    invoice_date: Option<&'a Column<'a>>,
    amount: Option<&'a Column<'a>>,
    currency: Option<&'a Column<'a>>,
    plan_id: Option<&'a Column<'a>>,
    status: Option<&'a Column<'a>>,
    quantity: Option<&'a Column<'a>>,
    tax_amount: Option<&'a Column<'a>>,
    period_start: Option<&'a Column<'a>>,
    period_end: Option<&'a Column<'a>>,
    subscription_id: Option<&'a Column<'a>>,
    due_date: Option<&'a Column<'a>>,
    payment_date: Option<&'a Column<'a>>,
    payment_method: Option<&'a Column<'a>>,
    description: Option<&'a Column<'a>>,
    invoice_number: Option<&'a Column<'a>>,
    discount_amount: Option<&'a Column<'a>>,
    refunded_invoice_id: Option<&'a Column<'a>>,
    data_source: Option<&'a Column<'a>>,
}

impl<'a> InvoiceColumns<'a> {
    /// The field columns of `records`; `None` when the batch gives a field
    /// under two of its names (a row then reads whichever is not null) or
    /// has lines or transactions, whose rows only the general reader reads.
    pub(crate) fn new(records: &'a ArrowRecords<'a>) -> Option<InvoiceColumns<'a>> {
        let has_any = |names: &[&str]| names.iter().any(|name| records.column(name).is_some());
        if has_any(names::LINES) || has_any(names::TRANSACTIONS) {
            return None;
        }
        let only = |names: &[&str]| -> Option<Option<&'a Column<'a>>> {
            let mut present = names.iter().filter_map(|name| records.column(name));
            let first = present.next();
            present.next().is_none().then_some(first)
        };
        Some(InvoiceColumns {
            id: only(names::ID)?,
            customer_id: only(names::CUSTOMER_ID)?,
            kind: only(names::TYPE)?,
            invoice_date: only(names::INVOICE_DATE)?,
            amount: only(names::AMOUNT)?,
            currency: only(names::CURRENCY)?,
            plan_id: only(names::PLAN_ID)?,
            status: only(names::STATUS)?,
            quantity: only(names::QUANTITY)?,
            tax_amount: only(names::TAX)?,
            period_start: only(names::PERIOD_START)?,
            period_end: only(names::PERIOD_END)?,
            subscription_id: only(names::SUBSCRIPTION_ID)?,
            due_date: only(names::DUE_DATE)?,
            payment_date: only(names::PAYMENT_DATE)?,
            payment_method: only(names::PAYMENT_METHOD)?,
            description: only(names::DESCRIPTION)?,
            invoice_number: only(names::INVOICE_NUMBER)?,
            discount_amount: only(names::DISCOUNT)?,
            refunded_invoice_id: only(names::REFUNDED_INVOICE_ID)?,
            data_source: only(names::DATA_SOURCE)?,
        })
    }

    /// Row `row` as an invoice, when each of its cells is null or a plain
    /// value (a string for text, an integer for amounts and counts, a
    /// date, timestamp or date string for dates) and it keeps every rule;
    /// `None` leaves the row to the general reader.
    pub(crate) fn read(&self, row: usize, recent: &mut RecentIds) -> Option<Invoice> {
        let id = text(self.id, row)?.filter(|id| !id.trim().is_empty())?;
        let customer_id = text(self.customer_id, row)?.filter(|id| !id.trim().is_empty())?;
        let kind = InvoiceType::parse(text(self.kind, row)??)?;
        let invoice_date = timestamp(self.invoice_date, row)??;
        let amount = cents(self.amount, row)??;
        let currency = Currency::parse(text(self.currency, row)??)?;
        let plan_id = text(self.plan_id, row)?.filter(|id| !id.trim().is_empty());
        if kind == InvoiceType::Subscription && plan_id.is_none() {
            return None;
        }
        if amount_fault(kind, amount).is_some() {
            return None;
        }
        let status = match text(self.status, row)? {
            None => InvoiceStatus::Paid,
            Some(status) => InvoiceStatus::parse(status)?,
        };
        let quantity = quantity_value(integer(self.quantity, row)?).ok()?;
        let tax_amount = cents(self.tax_amount, row)?.unwrap_or(0);
        if tax_fault(amount, tax_amount).is_some() {
            return None;
        }
        let period_start = timestamp(self.period_start, row)?;
        let period_end = timestamp(self.period_end, row)?;
        if !period_in_order(period_start, period_end) {
            return None;
        }
        let subscription_id = text(self.subscription_id, row)?;
        let details = InvoiceDetails {
            due_date: timestamp(self.due_date, row)?,
            payment_date: timestamp(self.payment_date, row)?,
            payment_method: text(self.payment_method, row)?.map(str::to_string),
            description: text(self.description, row)?.map(str::to_string),
            invoice_number: text(self.invoice_number, row)?.map(str::to_string),
            discount_amount: cents(self.discount_amount, row)?.unwrap_or(0),
            lines: Vec::new(),
            transactions: Vec::new(),
            refunded_invoice_id: text(self.refunded_invoice_id, row)?.map(InvoiceId::from),
            data_source: text(self.data_source, row)?.map(DataSourceId::from),
        };
        Some(Invoice {
            id: InvoiceId::from(id),
            record: InvoiceRecord {
                customer_id: recent.customer(customer_id),
                kind,
                invoice_date,
                amount,
                currency,
                plan_id: plan_id.map(|id| recent.plan(id)),
                period_start,
                period_end,
                subscription_id: subscription_id.map(|id| recent.subscription(id)),
                quantity,
                status,
                tax_amount,
                details: details.boxed_unless_empty(),
            },
        })
    }
}

// Each cell reader answers `Some(None)` for a null cell or a missing
// column, `Some(Some(value))` for a plain value, and `None` for a cell the
// general reader has to read.

/// A string cell.
fn text<'a>(column: Option<&'a Column<'a>>, row: usize) -> Option<Option<&'a str>> {
    match column.map(|column| column.view(row)) {
        None | Some(View::Null) => Some(None),
        Some(View::String(text)) => Some(Some(text)),
        Some(_) => None,
    }
}

/// An integer cell.
fn integer(column: Option<&Column<'_>>, row: usize) -> Option<Option<i64>> {
    match column.map(|column| column.view(row)) {
        None | Some(View::Null) => Some(None),
        Some(View::Number(number)) => number.as_i64().map(Some),
        Some(_) => None,
    }
}

/// An integer cell within [`MAX_AMOUNT`] either way.
fn cents(column: Option<&Column<'_>>, row: usize) -> Option<Option<Cents>> {
    match integer(column, row)? {
        Some(cents) if cents.unsigned_abs() > MAX_AMOUNT.unsigned_abs() => None,
        cents => Some(cents),
    }
}

/// A date or timestamp cell, or a string one within [`Timestamp::YEARS`]
/// (a blank string is no date).
fn timestamp(column: Option<&Column<'_>>, row: usize) -> Option<Option<Timestamp>> {
    match column.map(|column| column.view(row)) {
        None | Some(View::Null) => Some(None),
        Some(View::String(text)) if text.trim().is_empty() => Some(None),
        Some(View::String(text)) => Timestamp::parse(text).map(Some),
        Some(View::Timestamp(timestamp)) => timestamp.within_years().then_some(Some(timestamp)),
        Some(_) => None,
    }
}

#[cfg(test)]
mod tests;
