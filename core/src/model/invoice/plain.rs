//! The invoice fields by name, and invoices read from rows of plain cells:
//! a batch's typed columns ([`super::InvoiceColumns`]), a flat JSON line
//! ([`Invoice::from_flat_text`]) or a binding's flat record tree
//! ([`Invoice::from_flat_tree`]). A plain reader takes each cell as the
//! plain value it holds (a string, an integer, a date) without the general
//! reader's per-field lookups, and leaves any row it is not sure of (a cell
//! of another kind, a broken rule) to the general reader
//! ([`Invoice::from_node`]), which gives the same invoice or the error.

use super::read::{amount_fault, period_in_order, quantity_value, tax_fault};
use super::*;
use crate::blank::is_blank;
use crate::ids::RecentIds;
use crate::model::json::{Scalar, visit_fields};
use crate::money::MAX_AMOUNT;
use smallvec::SmallVec;

/// Declares [`Field`] with the names each field is read under, so the
/// general reader's lookups and the plain readers' slots come from one
/// list.
macro_rules! fields {
    ($($field:ident => [$($name:literal),+],)+) => {
        /// An invoice field, read under the interface's name first, then the
        /// aliases of the import shape (the first present and not null wins).
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub(crate) enum Field {
            $($field,)+
        }

        impl Field {
            /// Every field, in slot order.
            pub(crate) const ALL: &'static [Field] = &[$(Field::$field,)+];

            /// The names the field is read under.
            pub(crate) const fn names(self) -> &'static [&'static str] {
                match self {
                    $(Field::$field => &[$($name),+],)+
                }
            }

            /// The field a record's key names, if any.
            pub(crate) fn named(key: &str) -> Option<Field> {
                match key {
                    $($($name)|+ => Some(Field::$field),)+
                    _ => None,
                }
            }
        }
    };
}

fields! {
    Id => ["id", "external_id"],
    CustomerId => ["customer_id", "customer_external_id", "customer"],
    Type => ["type"],
    InvoiceDate => ["invoice_date", "date"],
    Amount => ["amount", "amount_in_cents"],
    Currency => ["currency"],
    PlanId => ["plan_id"],
    Status => ["status"],
    Quantity => ["quantity"],
    Tax => ["tax_amount", "tax"],
    PeriodStart => ["period_start", "service_period_start"],
    PeriodEnd => ["period_end", "service_period_end"],
    SubscriptionId => ["subscription_id", "subscription_external_id"],
    DueDate => ["due_date"],
    PaymentDate => ["payment_date", "paid_date"],
    PaymentMethod => ["payment_method"],
    Description => ["description"],
    InvoiceNumber => ["invoice_number", "number"],
    Discount => ["discount_amount", "discount"],
    RefundedInvoiceId => ["refunded_invoice_id"],
    DataSource => ["data_source", "data_source_id"],
    Lines => ["lines", "line_items"],
    Transactions => ["transactions"],
}

/// How many fields an invoice has.
pub(crate) const FIELDS: usize = Field::ALL.len();

// A flat line notes the fields it gave in the bits of a `u32`.
const _: () = assert!(FIELDS <= 32);

/// One cell of a plain row, as a plain reader sees it.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) enum Cell<'a> {
    /// Null, or no such field.
    #[default]
    Absent,
    Text(&'a str),
    Integer(i64),
    /// A date or an instant, from a typed column.
    #[cfg_attr(not(feature = "arrow"), allow(dead_code))]
    Timestamp(Timestamp),
    /// Anything else: only the general reader reads it.
    Other,
}

/// The cells of one row, a slot per [`Field`].
pub(crate) type Cells<'a> = [Cell<'a>; FIELDS];

/// The cells of a record filled key by key, each field given under one
/// of its names only.
#[derive(Default)]
struct KeyedCells<'a> {
    cells: Cells<'a>,
    /// The fields given so far, a bit each.
    given: u32,
    /// The keys given so far that name no field.
    others: SmallVec<[&'a str; 8]>,
}

impl<'a> KeyedCells<'a> {
    /// Puts the cell of `key` in its field's slot (a key that names no
    /// field is passed over); `None` when the field was given already, under
    /// this name or another, or the key was (the general reader refuses
    /// an object that gives a key twice).
    fn put(&mut self, key: &'a str, cell: impl FnOnce() -> Cell<'a>) -> Option<()> {
        let Some(field) = Field::named(key) else {
            if self.others.contains(&key) {
                return None;
            }
            self.others.push(key);
            return Some(());
        };
        let bit = 1 << field as u32;
        if self.given & bit != 0 {
            return None;
        }
        self.given |= bit;
        self.cells[field as usize] = cell();
        Some(())
    }
}

impl Invoice {
    /// The invoice a flat JSON line of plain values gives (see
    /// [`visit_fields`]), each field under one name only, read as
    /// [`Invoice::from_json_text`] reads it; `None` leaves the line to
    /// the general reader.
    pub(crate) fn from_flat_text(text: &str, recent: &mut RecentIds) -> Option<Invoice> {
        let mut cells = KeyedCells::default();
        visit_fields(text, |key, value| {
            cells.put(key, || match value {
                Scalar::Null => Cell::Absent,
                Scalar::String(text) => Cell::Text(text),
                Scalar::Integer(n) => Cell::Integer(n),
                Scalar::Bool(_) | Scalar::Unsigned(_) => Cell::Other,
            })
        })?;
        Invoice::from_cells(&cells.cells, recent)
    }

    /// The invoice a record tree of plain values gives (an object whose
    /// values are strings, integers, booleans or nulls, as a binding reads
    /// one from its language's objects), read as [`Invoice::from_node`]
    /// reads it; `None` leaves the tree to the general reader.
    pub(crate) fn from_flat_tree(tree: &Json<'_>, recent: &mut RecentIds) -> Option<Invoice> {
        let Json::Object(entries) = tree else {
            return None;
        };
        let mut cells = KeyedCells::default();
        for (key, value) in entries {
            cells.put(key, || match value {
                Json::Null => Cell::Absent,
                Json::String(text) => Cell::Text(text),
                Json::Number(number) => number.as_i64().map_or(Cell::Other, Cell::Integer),
                Json::Bool(_) | Json::Array(_) | Json::Object(_) => Cell::Other,
            })?;
        }
        Invoice::from_cells(&cells.cells, recent)
    }

    /// The invoice of a row of plain cells when every cell holds the plain
    /// value its field takes (text, an integer, a date) and the invoice
    /// keeps every rule; `None` leaves the row to the general reader.
    pub(crate) fn from_cells(cells: &Cells<'_>, recent: &mut RecentIds) -> Option<Invoice> {
        let cell = |field: Field| cells[field as usize];
        if !matches!(cell(Field::Lines), Cell::Absent)
            || !matches!(cell(Field::Transactions), Cell::Absent)
        {
            return None;
        }
        let id = text(cell(Field::Id))?.filter(|id| !is_blank(id))?;
        let customer_id = text(cell(Field::CustomerId))?.filter(|id| !is_blank(id))?;
        let kind = InvoiceType::parse(text(cell(Field::Type))??)?;
        let invoice_date = timestamp(cell(Field::InvoiceDate))??;
        let amount = cents(cell(Field::Amount))??;
        let currency = Currency::parse(text(cell(Field::Currency))??)?;
        let plan_id = text(cell(Field::PlanId))?.filter(|id| !is_blank(id));
        if kind == InvoiceType::Subscription && plan_id.is_none() {
            return None;
        }
        if amount_fault(kind, amount).is_some() {
            return None;
        }
        let status = match text(cell(Field::Status))? {
            None => InvoiceStatus::Paid,
            Some(status) => InvoiceStatus::parse(status)?,
        };
        let quantity = quantity_value(integer(cell(Field::Quantity))?).ok()?;
        let tax_amount = cents(cell(Field::Tax))?.unwrap_or(0);
        if tax_fault(amount, tax_amount).is_some() {
            return None;
        }
        let period_start = timestamp(cell(Field::PeriodStart))?;
        let period_end = timestamp(cell(Field::PeriodEnd))?;
        if !period_in_order(period_start, period_end) {
            return None;
        }
        let subscription_id = text(cell(Field::SubscriptionId))?;
        let details = InvoiceDetails {
            due_date: timestamp(cell(Field::DueDate))?,
            payment_date: timestamp(cell(Field::PaymentDate))?,
            payment_method: text(cell(Field::PaymentMethod))?.map(str::to_string),
            description: text(cell(Field::Description))?.map(str::to_string),
            invoice_number: text(cell(Field::InvoiceNumber))?.map(str::to_string),
            discount_amount: cents(cell(Field::Discount))?.unwrap_or(0),
            lines: Vec::new(),
            transactions: Vec::new(),
            refunded_invoice_id: text(cell(Field::RefundedInvoiceId))?.map(InvoiceId::from),
            data_source: text(cell(Field::DataSource))?.map(DataSourceId::from),
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

// Each cell reader answers `Some(None)` for an absent cell, `Some(Some(value))`
// for a plain value, and `None` for a cell the general reader has to read.

/// A text cell.
fn text(cell: Cell<'_>) -> Option<Option<&str>> {
    match cell {
        Cell::Absent => Some(None),
        Cell::Text(text) => Some(Some(text)),
        _ => None,
    }
}

/// An integer cell.
fn integer(cell: Cell<'_>) -> Option<Option<i64>> {
    match cell {
        Cell::Absent => Some(None),
        Cell::Integer(n) => Some(Some(n)),
        _ => None,
    }
}

/// An integer cell within [`MAX_AMOUNT`] either way.
fn cents(cell: Cell<'_>) -> Option<Option<Cents>> {
    match integer(cell)? {
        Some(cents) if cents.unsigned_abs() > MAX_AMOUNT.unsigned_abs() => None,
        cents => Some(cents),
    }
}

/// A date or timestamp cell, or a text one, within [`Timestamp::YEARS`]
/// (blank text is no date). Inlined, so the timestamp reaches its invoice in
/// registers rather than through the stack in pieces.
#[inline(always)]
fn timestamp(cell: Cell<'_>) -> Option<Option<Timestamp>> {
    match cell {
        Cell::Absent => Some(None),
        Cell::Text(text) if is_blank(text) => Some(None),
        Cell::Text(text) => Timestamp::parse(text).map(Some),
        Cell::Timestamp(timestamp) => timestamp.within_years().then_some(Some(timestamp)),
        _ => None,
    }
}

#[cfg(test)]
mod tests;
