//! Invoices: the only source of subscription state. Read from the import shape
//! of the interface plus the optional fields real billing exports carry
//! (SEMANTICS section 1). Checks that need other records (the customer, the
//! plan) are the ledger's.

use crate::error::Result;
use crate::ids::{CustomerId, DataSourceId, InvoiceId, PackedIds, PlanId, SubscriptionId};
use crate::model::{Fields, Json, Node, Timestamp};
use crate::money::{Cents, Currency};
use serde::Serialize;
use serde_json::Value;

#[cfg(feature = "arrow")]
mod columns;
mod plain;
mod read;
#[cfg(test)]
mod tests;

#[cfg(feature = "arrow")]
pub(crate) use columns::InvoiceColumns;

/// The largest quantity an invoice may carry (a billion seats), so summed
/// quantity changes stay far inside `i64`.
pub const MAX_QUANTITY: i32 = 1_000_000_000;

/// What an invoice does to MRR.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum InvoiceType {
    /// Sets its subscription's MRR from its effective date.
    Subscription,
    /// Non-recurring charge; never moves MRR.
    OneTime,
    /// Reduces MRR proportionally (unless refunds are ignored).
    Refund,
    /// Ends a subscription (or every subscription of the customer).
    Cancellation,
}

impl InvoiceType {
    /// The type names records use, as [`InvoiceType::as_str`] gives them.
    pub const NAMES: &'static [&'static str] =
        &["subscription", "one-time", "refund", "cancellation"];

    /// Parses a type name ignoring case and surrounding space; `one_time` and `onetime` are
    /// accepted for `one-time`. Anything else is `None`.
    pub fn parse(name: &str) -> Option<InvoiceType> {
        let name = crate::blank::trimmed(name);
        [
            ("subscription", InvoiceType::Subscription),
            ("one-time", InvoiceType::OneTime),
            ("one_time", InvoiceType::OneTime),
            ("onetime", InvoiceType::OneTime),
            ("refund", InvoiceType::Refund),
            ("cancellation", InvoiceType::Cancellation),
        ]
        .into_iter()
        .find(|(known, _)| known.eq_ignore_ascii_case(name))
        .map(|(_, kind)| kind)
    }

    /// The interface name: `subscription`, `one-time`, `refund` or `cancellation`.
    pub fn as_str(&self) -> &'static str {
        match self {
            InvoiceType::Subscription => "subscription",
            InvoiceType::OneTime => "one-time",
            InvoiceType::Refund => "refund",
            InvoiceType::Cancellation => "cancellation",
        }
    }
}

/// Payment state of an invoice.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum InvoiceStatus {
    /// Paid; the default when a record gives no status.
    Paid,
    /// Issued, not paid yet; a subscription invoice still moves MRR.
    Open,
    /// Payment failed; a subscription invoice still moves MRR until the subscription lapses or
    /// is cancelled.
    Failed,
    /// Never counts for anything.
    Void,
}

impl InvoiceStatus {
    /// The status names records use, as [`InvoiceStatus::as_str`] gives them.
    pub const NAMES: &'static [&'static str] = &["paid", "open", "failed", "void"];

    /// Parses a status name ignoring case and surrounding space; anything
    /// else is `None`.
    pub fn parse(name: &str) -> Option<InvoiceStatus> {
        let name = crate::blank::trimmed(name);
        [
            InvoiceStatus::Paid,
            InvoiceStatus::Open,
            InvoiceStatus::Failed,
            InvoiceStatus::Void,
        ]
        .into_iter()
        .find(|status| status.as_str().eq_ignore_ascii_case(name))
    }

    /// `paid`, `open`, `failed` or `void`.
    pub fn as_str(&self) -> &'static str {
        match self {
            InvoiceStatus::Paid => "paid",
            InvoiceStatus::Open => "open",
            InvoiceStatus::Failed => "failed",
            InvoiceStatus::Void => "void",
        }
    }
}

/// One line of an invoice (informational detail).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct InvoiceLine {
    /// The line's text, when given.
    pub description: Option<String>,
    /// The line's amount in cents, in the invoice's currency.
    pub amount: Cents,
    /// Units on the line; 1 when absent.
    pub quantity: i64,
    /// Start of the period the line bills, when given.
    pub period_start: Option<Timestamp>,
    /// End of the period the line bills, when given.
    pub period_end: Option<Timestamp>,
}

/// Whether a transaction moved money in or out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum TransactionType {
    /// Money in: a payment attempt.
    Payment,
    /// Money out: a refund.
    Refund,
}

/// Outcome of a transaction.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum TransactionResult {
    /// The money moved.
    Successful,
    /// The attempt failed; no money moved.
    Failed,
}

/// One payment attempt or refund of an invoice.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Transaction {
    /// The transaction's id.
    pub id: String,
    /// Payment or refund (`type` in records).
    #[serde(rename = "type")]
    pub kind: TransactionType,
    /// When it happened.
    pub date: Timestamp,
    /// Whether it succeeded.
    pub result: TransactionResult,
    /// The amount in cents, in the invoice's currency.
    pub amount: Cents,
}

/// An invoice as read: its id and every other field ([`InvoiceRecord`],
/// reached through `Deref`).
#[derive(Debug, Clone, PartialEq)]
pub struct Invoice {
    /// The invoice's external id.
    pub id: InvoiceId,
    record: InvoiceRecord,
}

/// A stored invoice: its id, borrowed from the ledger's ids, and its other
/// fields (reached through `Deref`). Serializes like an [`Invoice`].
#[derive(Clone, Copy)]
pub struct StoredInvoice<'a> {
    id: StoredId<'a>,
    record: &'a InvoiceRecord,
}

/// Where a stored invoice's id is. The text of an id among a table's ids
/// is found only when asked for: a scan that reads invoices' fields alone
/// (a timeline build whose invoices already come in id order) reads no id.
#[derive(Clone, Copy)]
enum StoredId<'a> {
    Text(&'a str),
    Packed(&'a PackedIds, usize),
}

/// Every field of an invoice but its id, as a ledger stores it (the ids
/// live in one buffer beside the records). The fields every metric reads
/// are inline; the rest ([`InvoiceDetails`]) are held out of line and only
/// when one is present, so a metrics-only import of millions of invoices
/// stays small.
#[derive(Debug, Clone, PartialEq)]
pub struct InvoiceRecord {
    /// The customer billed; must exist when the invoice is stored.
    pub customer_id: CustomerId,
    /// What the invoice does to MRR (`type` in records).
    pub kind: InvoiceType,
    /// When it was issued; the service period starts here unless `period_start` is given.
    pub invoice_date: Timestamp,
    /// Total in cents: >= 0 for subscription and one-time, <= 0 for refunds, 0 for cancellations.
    pub amount: Cents,
    /// The currency of every amount on the invoice; for a subscription invoice, its plan's
    /// currency.
    pub currency: Currency,
    /// The plan billed; required for subscription invoices and must exist.
    pub plan_id: Option<PlanId>,
    /// Start of the service period, when given.
    pub period_start: Option<Timestamp>,
    /// End of the service period, after its start; when absent the period lasts one plan
    /// interval. A shorter period than the interval prorates.
    pub period_end: Option<Timestamp>,
    /// The subscription the invoice belongs to; invoices without one form the customer's single
    /// implicit subscription.
    pub subscription_id: Option<SubscriptionId>,
    /// Seats or units billed: 1 when absent, 0 to a billion.
    pub quantity: i32,
    /// Payment state; `paid` when absent.
    pub status: InvoiceStatus,
    /// Tax included in `amount`; not revenue.
    pub tax_amount: Cents,
    /// `None` when every detail is absent; read through [`InvoiceRecord::details`].
    details: Option<Box<InvoiceDetails>>,
}

/// The fields of an invoice that no MRR figure reads (payment details,
/// descriptive text, the discount, lines, transactions and the data source)
/// or that only refunds carry (the refunded invoice).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct InvoiceDetails {
    /// When payment is due, when given.
    pub due_date: Option<Timestamp>,
    /// When it was paid, when given.
    pub payment_date: Option<Timestamp>,
    /// How it was paid, as the sender names it.
    pub payment_method: Option<String>,
    /// Free text.
    pub description: Option<String>,
    /// The sender's invoice number.
    pub invoice_number: Option<String>,
    /// Informational: `amount` is already net of discounts.
    pub discount_amount: Cents,
    /// The invoice's lines (informational: `amount` is the total).
    pub lines: Vec<InvoiceLine>,
    /// Payment attempts and refunds; when empty, the invoice's status and amount stand for its
    /// one payment.
    pub transactions: Vec<Transaction>,
    /// The invoice a refund refunds, when it names one.
    pub refunded_invoice_id: Option<InvoiceId>,
    /// The data source the invoice came from, when given.
    pub data_source: Option<DataSourceId>,
}

/// The details of an invoice that has none.
static NO_DETAILS: InvoiceDetails = InvoiceDetails {
    due_date: None,
    payment_date: None,
    payment_method: None,
    description: None,
    invoice_number: None,
    discount_amount: 0,
    lines: Vec::new(),
    transactions: Vec::new(),
    refunded_invoice_id: None,
    data_source: None,
};

/// Serialized as one flat record, the details in their place among the
/// other fields (absent details as `null`, `0` and `[]`).
impl Serialize for Invoice {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.as_stored().serialize(serializer)
    }
}

/// Serialized as one flat record, like [`Invoice`].
impl Serialize for StoredInvoice<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let details = self.details();
        let mut record = serializer.serialize_struct("Invoice", 23)?;
        record.serialize_field("id", self.id())?;
        record.serialize_field("customer_id", &self.customer_id)?;
        record.serialize_field("type", &self.kind)?;
        record.serialize_field("invoice_date", &self.invoice_date)?;
        record.serialize_field("amount", &self.amount)?;
        record.serialize_field("currency", &self.currency)?;
        record.serialize_field("plan_id", &self.plan_id)?;
        record.serialize_field("period_start", &self.period_start)?;
        record.serialize_field("period_end", &self.period_end)?;
        record.serialize_field("subscription_id", &self.subscription_id)?;
        record.serialize_field("quantity", &self.quantity)?;
        record.serialize_field("status", &self.status)?;
        record.serialize_field("due_date", &details.due_date)?;
        record.serialize_field("payment_date", &details.payment_date)?;
        record.serialize_field("payment_method", &details.payment_method)?;
        record.serialize_field("description", &details.description)?;
        record.serialize_field("invoice_number", &details.invoice_number)?;
        record.serialize_field("tax_amount", &self.tax_amount)?;
        record.serialize_field("discount_amount", &details.discount_amount)?;
        record.serialize_field("lines", &details.lines)?;
        record.serialize_field("transactions", &details.transactions)?;
        record.serialize_field("refunded_invoice_id", &details.refunded_invoice_id)?;
        record.serialize_field("data_source", &details.data_source)?;
        record.end()
    }
}

impl Invoice {
    /// The record kind errors name: `invoice`.
    pub const KIND: &'static str = "invoice";

    /// The invoice as a ledger hands it out, its id borrowed.
    pub fn as_stored(&self) -> StoredInvoice<'_> {
        StoredInvoice::new(self.id.as_str(), &self.record)
    }

    /// Splits the invoice into its id and its other fields.
    pub fn into_parts(self) -> (InvoiceId, InvoiceRecord) {
        (self.id, self.record)
    }
}

impl std::ops::Deref for Invoice {
    type Target = InvoiceRecord;
    fn deref(&self) -> &InvoiceRecord {
        &self.record
    }
}

impl std::ops::DerefMut for Invoice {
    fn deref_mut(&mut self) -> &mut InvoiceRecord {
        &mut self.record
    }
}

impl<'a> StoredInvoice<'a> {
    pub(crate) fn new(id: &'a str, record: &'a InvoiceRecord) -> Self {
        Self {
            id: StoredId::Text(id),
            record,
        }
    }

    /// The invoice whose id is at `place` among `ids`.
    pub(crate) fn packed(ids: &'a PackedIds, place: usize, record: &'a InvoiceRecord) -> Self {
        Self {
            id: StoredId::Packed(ids, place),
            record,
        }
    }

    /// The invoice's external id.
    #[inline]
    pub fn id(&self) -> &'a str {
        match self.id {
            StoredId::Text(id) => id,
            StoredId::Packed(ids, place) => ids.get(place),
        }
    }

    /// The invoice's details (see [`InvoiceRecord::details`]), borrowed for
    /// as long as the ledger is.
    pub fn details(&self) -> &'a InvoiceDetails {
        self.record.details()
    }

    /// Every field but the id, borrowed for as long as the ledger is.
    pub fn record(&self) -> &'a InvoiceRecord {
        self.record
    }

    /// An owned copy of the invoice.
    pub fn to_invoice(&self) -> Invoice {
        Invoice {
            id: InvoiceId::from(self.id()),
            record: self.record.clone(),
        }
    }
}

impl PartialEq for StoredInvoice<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.id() == other.id() && self.record == other.record
    }
}

impl std::fmt::Debug for StoredInvoice<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StoredInvoice")
            .field("id", &self.id())
            .field("record", self.record)
            .finish()
    }
}

impl<'a> std::ops::Deref for StoredInvoice<'a> {
    type Target = InvoiceRecord;
    fn deref(&self) -> &InvoiceRecord {
        self.record
    }
}

impl InvoiceRecord {
    /// Payment details, text, discount, lines, transactions, the refunded
    /// invoice and data source (all absent when the invoice carried none).
    pub fn details(&self) -> &InvoiceDetails {
        self.details.as_deref().unwrap_or(&NO_DETAILS)
    }

    /// When the invoice takes effect on its subscription: `period_start`,
    /// else `invoice_date`.
    #[inline]
    pub fn effective(&self) -> Timestamp {
        self.period_start.unwrap_or(self.invoice_date)
    }

    /// Whether the invoice counts at all (void invoices never do).
    #[inline]
    pub fn counts(&self) -> bool {
        self.status != InvoiceStatus::Void
    }
}

impl InvoiceDetails {
    /// `None` when every field is absent, else the details in a box.
    fn boxed_unless_empty(self) -> Option<Box<InvoiceDetails>> {
        (self != NO_DETAILS).then(|| Box::new(self))
    }
}
