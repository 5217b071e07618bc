//! Invoices: the only source of subscription state. Read from the import shape
//! of the interface plus the optional fields real billing exports carry
//! (SEMANTICS section 1). Checks that need other records (the customer, the
//! plan) are the ledger's.

use crate::error::Result;
use crate::ids::{CustomerId, DataSourceId, InvoiceId, PlanId, SubscriptionId};
use crate::model::{Fields, Json, Node, Timestamp};
use crate::money::{Cents, Currency};
use serde::Serialize;
use serde_json::Value;

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
        let name = name.trim();
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

/// A stored invoice: its id, borrowed from the ledger's id buffer, and its
/// other fields (reached through `Deref`). Serializes like an [`Invoice`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StoredInvoice<'a> {
    id: &'a str,
    record: &'a InvoiceRecord,
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
    /// `None` when every detail is absent; read through [`Invoice::details`].
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
        record.serialize_field("id", self.id)?;
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

    /// Reads one invoice and checks every rule that needs no other record.
    pub fn from_json(value: &Value) -> Result<Invoice> {
        Self::from_node(value)
    }

    /// Reads one invoice from any record representation (a JSON value or
    /// text, an Arrow row), with the same rules and errors.
    pub fn from_node<'a, N: Node<'a>>(node: N) -> Result<Invoice> {
        Self::read(Fields::open(Self::KIND, node, true)?)
    }

    /// Reads one invoice from its JSON text (one line of a JSONL file), with
    /// the same rules and errors as [`Invoice::from_json`] but without building
    /// a `serde_json::Value` first.
    pub fn from_json_text(text: &str) -> Result<Invoice> {
        Self::read_json(&Self::parse_text(text)?)
    }

    /// Reads one invoice from its parsed text.
    pub(crate) fn read_json(json: &Json) -> Result<Invoice> {
        Self::read(Fields::open(Self::KIND, json, true)?)
    }

    /// The JSON tree of an invoice's text; malformed JSON is an error about
    /// the whole record.
    pub(crate) fn parse_text(text: &str) -> Result<Json<'_>> {
        Json::parse(text).map_err(|e| {
            crate::error::Error::invalid(
                Self::KIND,
                "?",
                "(record)",
                format!("is not valid JSON: {e}"),
            )
        })
    }

    /// Reads one invoice, from whichever JSON representation.
    pub(crate) fn read<'a, N: Node<'a>>(f: Fields<'a, N>) -> Result<Invoice> {
        let customer_id = CustomerId::from(
            f.required_text_ref(&["customer_id", "customer_external_id", "customer"])?
                .as_ref(),
        );
        let type_text = f.text_ref(&["type"])?.ok_or_else(|| {
            f.error(
                "type",
                "is required (subscription, one-time, refund or cancellation)",
            )
        })?;
        let kind = InvoiceType::parse(&type_text).ok_or_else(|| {
            f.error(
                "type",
                format!(
                    "`{type_text}` is not one of {}",
                    InvoiceType::NAMES.join(", ")
                ),
            )
        })?;
        let invoice_date = f.required_timestamp(&["invoice_date", "date"])?;
        const AMOUNT: &[&str] = &["amount", "amount_in_cents"];
        let amount = f.required_cents(AMOUNT)?;
        let currency = f.required_currency(&["currency"])?;
        let plan_id = f
            .text_ref(&["plan_id"])?
            .filter(|p| !p.trim().is_empty())
            .map(|p| PlanId::from(p.as_ref()));
        if kind == InvoiceType::Subscription && plan_id.is_none() {
            return Err(f.error("plan_id", "is required for a subscription invoice"));
        }
        match kind {
            InvoiceType::Subscription | InvoiceType::OneTime if amount < 0 => {
                return Err(f.error(
                    f.name_of(AMOUNT),
                    format!(
                        "must be 0 or more for a {} invoice, got {amount}",
                        kind.as_str()
                    ),
                ));
            }
            InvoiceType::Refund if amount > 0 => {
                return Err(f.error(
                    f.name_of(AMOUNT),
                    format!("must be 0 or less for a refund, got {amount}"),
                ));
            }
            InvoiceType::Cancellation if amount != 0 => {
                return Err(f.error(
                    f.name_of(AMOUNT),
                    format!("must be 0 for a cancellation, got {amount}"),
                ));
            }
            _ => {}
        }
        let status = match f.choice(&["status"], &["paid", "open", "failed", "void"])? {
            Some("open") => InvoiceStatus::Open,
            Some("failed") => InvoiceStatus::Failed,
            Some("void") => InvoiceStatus::Void,
            _ => InvoiceStatus::Paid,
        };
        let quantity = f.integer(&["quantity"])?.unwrap_or(1);
        if quantity < 0 {
            return Err(f.error("quantity", format!("must be 0 or more, got {quantity}")));
        }
        let Some(quantity) = i32::try_from(quantity)
            .ok()
            .filter(|quantity| *quantity <= MAX_QUANTITY)
        else {
            return Err(f.error(
                "quantity",
                format!("must be at most {MAX_QUANTITY}, got {quantity}"),
            ));
        };
        const TAX: &[&str] = &["tax_amount", "tax"];
        let tax_amount = f.cents(TAX)?.unwrap_or(0);
        if tax_amount < 0 || (amount >= 0 && tax_amount > amount) {
            return Err(f.error(
                f.name_of(TAX),
                format!("must be from 0 to the amount, got {tax_amount}"),
            ));
        }
        const PERIOD_START: &[&str] = &["period_start", "service_period_start"];
        const PERIOD_END: &[&str] = &["period_end", "service_period_end"];
        let period_start = f.timestamp(PERIOD_START)?;
        let period_end = f.timestamp(PERIOD_END)?;
        if let (Some(start), Some(end)) = (period_start, period_end) {
            // Compared in UTC: a bare date and an instant may differ by a few
            // hours of time zone, which cannot reorder two valid periods.
            if end.instant(chrono_tz::UTC) <= start.instant(chrono_tz::UTC) {
                return Err(f.error(
                    f.name_of(PERIOD_END),
                    format!("must be after {}", f.name_of(PERIOD_START)),
                ));
            }
        }
        let id = InvoiceId::from(f.id());
        let record = InvoiceRecord {
            customer_id,
            kind,
            invoice_date,
            amount,
            currency,
            plan_id,
            period_start,
            period_end,
            subscription_id: f
                .text_ref(&["subscription_id", "subscription_external_id"])?
                .map(|s| SubscriptionId::from(s.as_ref())),
            quantity,
            status,
            tax_amount,
            details: InvoiceDetails {
                due_date: f.timestamp(&["due_date"])?,
                payment_date: f.timestamp(&["payment_date", "paid_date"])?,
                payment_method: f.text(&["payment_method"])?,
                description: f.text(&["description"])?,
                invoice_number: f.text(&["invoice_number", "number"])?,
                discount_amount: f.cents(&["discount_amount", "discount"])?.unwrap_or(0),
                lines: read_lines(&f)?,
                transactions: read_transactions(&f)?,
                refunded_invoice_id: f
                    .text_ref(&["refunded_invoice_id"])?
                    .map(|s| InvoiceId::from(s.as_ref())),
                data_source: f
                    .text_ref(&["data_source", "data_source_id"])?
                    .map(|s| DataSourceId::from(s.as_ref())),
            }
            .boxed_unless_empty(),
        };
        Ok(Invoice { id, record })
    }

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
        Self { id, record }
    }

    /// The invoice's external id.
    pub fn id(&self) -> &'a str {
        self.id
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
            id: InvoiceId::from(self.id),
            record: self.record.clone(),
        }
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

fn read_lines<'a, N: Node<'a>>(f: &Fields<'a, N>) -> Result<Vec<InvoiceLine>> {
    let mut lines = Vec::new();
    for (i, item) in f
        .array(&["lines", "line_items"])?
        .into_iter()
        .flatten()
        .enumerate()
    {
        let line = f.nested(format!("lines[{i}]"), item)?;
        lines.push(InvoiceLine {
            description: line.text(&["description"])?,
            amount: line.cents(&["amount", "amount_in_cents"])?.unwrap_or(0),
            quantity: line.integer(&["quantity"])?.unwrap_or(1),
            period_start: line.timestamp(&["period_start", "service_period_start"])?,
            period_end: line.timestamp(&["period_end", "service_period_end"])?,
        });
    }
    Ok(lines)
}

fn read_transactions<'a, N: Node<'a>>(f: &Fields<'a, N>) -> Result<Vec<Transaction>> {
    let mut transactions = Vec::new();
    for (i, item) in f
        .array(&["transactions"])?
        .into_iter()
        .flatten()
        .enumerate()
    {
        let t = f.nested(format!("transactions[{i}]"), item)?;
        let kind = match t.choice(&["type"], &["payment", "refund"])? {
            Some("refund") => TransactionType::Refund,
            _ => TransactionType::Payment,
        };
        let result = match t.choice(&["result"], &["successful", "failed"])? {
            Some("failed") => TransactionResult::Failed,
            _ => TransactionResult::Successful,
        };
        transactions.push(Transaction {
            id: t
                .text(&["id", "external_id"])?
                .unwrap_or_else(|| format!("{}-t{}", f.id(), i + 1)),
            kind,
            date: t.required_timestamp(&["date"])?,
            result,
            amount: t.cents(&["amount", "amount_in_cents"])?.unwrap_or(0),
        });
    }
    Ok(transactions)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::money::MAX_AMOUNT;
    use serde_json::json;

    fn base() -> Value {
        json!({"id": "i1", "customer_id": "c", "type": "subscription", "invoice_date": "2024-01-01",
               "amount": 3000, "currency": "USD", "plan_id": "m"})
    }

    fn error_of(patch: Value) -> String {
        let mut v = base();
        for (k, val) in patch.as_object().unwrap() {
            if val.is_null() {
                v.as_object_mut().unwrap().remove(k);
            } else {
                v[k] = val.clone();
            }
        }
        read_both(&v).unwrap_err().to_string()
    }

    /// Reads `v` as a value and as text: both must give the same invoice or
    /// the same error.
    fn read_both(v: &Value) -> Result<Invoice> {
        let from_value = Invoice::from_json(v);
        let from_text = Invoice::from_json_text(&v.to_string());
        assert_eq!(from_value, from_text, "{v}");
        from_value
    }

    #[test]
    fn reads_a_minimal_subscription_invoice() {
        let i = read_both(&base()).unwrap();
        assert_eq!(i.kind, InvoiceType::Subscription);
        assert_eq!(i.quantity, 1);
        assert_eq!(i.status, InvoiceStatus::Paid);
    }

    #[test]
    fn each_rule_names_its_field() {
        assert_eq!(
            error_of(json!({"plan_id": null})),
            "invoice i1: field `plan_id`: is required for a subscription invoice"
        );
        assert_eq!(
            error_of(json!({"amount": -1})),
            "invoice i1: field `amount`: must be 0 or more for a subscription invoice, got -1"
        );
        assert_eq!(
            error_of(json!({"type": "refund", "amount": 5})),
            "invoice i1: field `amount`: must be 0 or less for a refund, got 5"
        );
        assert_eq!(
            error_of(json!({"type": "cancellation", "amount": 5})),
            "invoice i1: field `amount`: must be 0 for a cancellation, got 5"
        );
        assert_eq!(
            error_of(json!({"currency": "dollars"})),
            "invoice i1: field `currency`: `dollars` is not a three-letter currency code"
        );
        assert_eq!(
            error_of(json!({"invoice_date": "soon"})),
            "invoice i1: field `invoice_date`: must be an ISO 8601 date or timestamp string in the years 1900 to 2200, got \"soon\""
        );
        assert_eq!(
            error_of(json!({"period_start": "2024-02-01", "period_end": "2024-01-01"})),
            "invoice i1: field `period_end`: must be after period_start"
        );
        assert_eq!(
            error_of(json!({"type": "gift"})),
            "invoice i1: field `type`: `gift` is not one of subscription, one-time, refund, cancellation"
        );
        assert_eq!(
            error_of(json!({"amount": "12.5"})),
            "invoice i1: field `amount`: must be an integer, got \"12.5\""
        );
    }

    #[test]
    fn amounts_and_quantities_are_bounded() {
        assert_eq!(
            error_of(json!({"amount": 1_000_000_000_001_i64})),
            "invoice i1: field `amount`: 1000000000001 is out of range: at most 1000000000000 cents either way"
        );
        assert_eq!(
            error_of(json!({"type": "refund", "amount": i64::MIN})),
            "invoice i1: field `amount`: -9223372036854775808 is out of range: at most 1000000000000 cents either way"
        );
        assert_eq!(
            error_of(json!({"quantity": 1_000_000_001})),
            "invoice i1: field `quantity`: must be at most 1000000000, got 1000000001"
        );
        let mut v = base();
        v["amount"] = json!(MAX_AMOUNT);
        assert_eq!(read_both(&v).unwrap().amount, 1_000_000_000_000);
        v["lines"] = json!([{"description": "seat", "amount": i64::MAX}]);
        let err = read_both(&v).unwrap_err();
        assert_eq!(err.field(), Some("lines[0].amount"));
        v["lines"] = json!([]);
        v["transactions"] = json!([{"type": "payment", "date": "2024-01-01", "amount": -i64::MAX}]);
        let err = read_both(&v).unwrap_err();
        assert_eq!(err.field(), Some("transactions[0].amount"));
    }

    #[test]
    fn text_and_value_read_every_field_alike() {
        let full = json!({"external_id": 17, "customer_external_id": "c", "type": " One_Time ",
            "date": "2024-01-01 10:00:00", "amount_in_cents": "3000", "currency": "usd",
            "tax": 3000.0, "discount": 5, "quantity": "2", "status": "VOID",
            "service_period_start": "2024-01-01T00:00:00Z", "service_period_end": "2024-02-01T00:00:00+01:00",
            "subscription_external_id": 9, "due_date": "", "paid_date": "2024-01-02",
            "payment_method": "card", "description": "caf\u{e9} \"x\"", "number": 12,
            "refunded_invoice_id": null, "data_source_id": "stripe", "unknown": [1, {"a": 2}],
            "line_items": [{"description": "seat", "amount": 100, "quantity": 3,
                            "period_start": "2024-01-01", "period_end": "2024-02-01"}, {}],
            "transactions": [{"type": "REFUND", "result": "failed", "date": "2024-01-03"},
                             {"id": "t9", "date": "2024-01-04", "amount": 7}]});
        let invoice = read_both(&full).unwrap();
        assert_eq!(invoice.kind, InvoiceType::OneTime);
        assert_eq!(invoice.details().transactions[0].id, "17-t1");
        assert_eq!(
            invoice.details().description.as_deref(),
            Some("caf\u{e9} \"x\"")
        );
        for (field, bad) in [
            ("id", json!(" ")),
            ("customer_id", json!(true)),
            ("type", json!(null)),
            ("invoice_date", json!(null)),
            ("invoice_date", json!({"a": 1})),
            ("amount", json!(1.5)),
            ("amount", json!([1])),
            ("currency", json!(7)),
            ("status", json!("lost")),
            ("quantity", json!(-1)),
            ("tax_amount", json!(4000)),
            ("period_end", json!("soon")),
            ("lines", json!({})),
            ("lines", json!([1])),
            ("lines", json!([{"amount": "x"}])),
            (
                "transactions",
                json!([{"date": "2024-01-01", "type": "gift"}]),
            ),
            ("transactions", json!([{"amount": 1}])),
        ] {
            let mut v = base();
            v[field] = bad;
            assert!(read_both(&v).is_err(), "{v}");
        }
        assert_eq!(
            Invoice::from_json_text("[1]").unwrap_err().to_string(),
            "invoice ?: field `(record)`: must be a JSON object"
        );
        assert_eq!(
            Invoice::from_json_text("{\"id\": ")
                .unwrap_err()
                .to_string(),
            "invoice ?: field `(record)`: is not valid JSON: EOF while parsing a value at line 1 column 7"
        );
    }

    #[test]
    fn details_are_kept_out_of_line_only_when_present() {
        let plain = Invoice::from_json(&base()).unwrap();
        assert!(plain.details.is_none());
        assert_eq!(
            serde_json::to_string(&plain).unwrap(),
            "{\"id\":\"i1\",\"customer_id\":\"c\",\"type\":\"subscription\",\
             \"invoice_date\":\"2024-01-01\",\"amount\":3000,\"currency\":\"USD\",\
             \"plan_id\":\"m\",\"period_start\":null,\"period_end\":null,\
             \"subscription_id\":null,\"quantity\":1,\"status\":\"paid\",\"due_date\":null,\
             \"payment_date\":null,\"payment_method\":null,\"description\":null,\
             \"invoice_number\":null,\"tax_amount\":0,\"discount_amount\":0,\"lines\":[],\
             \"transactions\":[],\"refunded_invoice_id\":null,\"data_source\":null}"
        );
        let mut value = base();
        value["discount_amount"] = json!(5);
        let discounted = Invoice::from_json(&value).unwrap();
        assert_eq!(discounted.details().discount_amount, 5);
        assert!(discounted.details.is_some());
        let text = serde_json::to_string(&discounted).unwrap();
        assert!(
            text.contains("\"tax_amount\":0,\"discount_amount\":5,"),
            "{text}"
        );
        let mut refund = base();
        refund["refunded_invoice_id"] = json!("i0");
        let refund = read_both(&refund).unwrap();
        assert_eq!(
            refund.details().refunded_invoice_id,
            Some(InvoiceId::from("i0"))
        );
        let text = serde_json::to_string(&refund).unwrap();
        assert!(text.contains("\"refunded_invoice_id\":\"i0\","), "{text}");
        assert_eq!(std::mem::size_of::<InvoiceRecord>(), 80);
        assert_eq!(std::mem::size_of::<Invoice>(), 96);
    }

    #[test]
    fn nested_errors_carry_their_path() {
        let mut v = base();
        v["transactions"] = json!([{"id": "t", "type": "payment", "date": "nope"}]);
        let err = read_both(&v).unwrap_err();
        assert_eq!(err.field(), Some("transactions[0].date"));
    }

    #[test]
    fn errors_name_the_field_as_the_record_wrote_it() {
        let err = |record: serde_json::Value| Invoice::from_json(&record).unwrap_err().to_string();
        assert_eq!(
            err(
                json!({"id": "r", "customer_id": "c", "type": "refund", "date": "2024-01-01", "amount_in_cents": 500, "currency": "USD"})
            ),
            "invoice r: field `amount_in_cents`: must be 0 or less for a refund, got 500"
        );
        assert_eq!(
            err(
                json!({"id": "t", "customer_id": "c", "type": "one_time", "date": "2024-01-01", "amount": 500, "tax": 900, "currency": "usd"})
            ),
            "invoice t: field `tax`: must be from 0 to the amount, got 900"
        );
        assert_eq!(
            err(
                json!({"id": "p", "customer_id": "c", "type": "one_time", "date": "2024-01-01", "amount": 500, "currency": "USD",
                "service_period_start": "2024-02-01", "service_period_end": "2024-01-01"})
            ),
            "invoice p: field `service_period_end`: must be after service_period_start"
        );
    }
}
