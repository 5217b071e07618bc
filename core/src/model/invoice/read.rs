//! Reading an invoice from any record representation, with every rule
//! that needs no other record.

use super::plain::Field;
use super::*;
use crate::ids::RecentIds;

impl Invoice {
    /// Reads one invoice and checks every rule that needs no other record.
    pub fn from_json(value: &Value) -> Result<Invoice> {
        Self::from_node(value)
    }

    /// Reads one invoice from any record representation (a JSON value or
    /// text, an Arrow row), with the same rules and errors.
    pub fn from_node<'a, N: Node<'a>>(node: N) -> Result<Invoice> {
        Self::from_node_reusing(node, &mut RecentIds::default())
    }

    /// [`Invoice::from_node`] for one of many records read in a row,
    /// reusing the customer, plan and subscription ids of the records read
    /// before it ([`RecentIds`]).
    pub(crate) fn from_node_reusing<'a, N: Node<'a>>(
        node: N,
        recent: &mut RecentIds,
    ) -> Result<Invoice> {
        Self::read(Fields::open(Self::KIND, node, true)?, recent)
    }

    /// Reads one invoice from its JSON text (one line of a JSONL file), with
    /// the same rules and errors as [`Invoice::from_json`] but without building
    /// a `serde_json::Value` first.
    pub fn from_json_text(text: &str) -> Result<Invoice> {
        Self::from_node(&Self::parse_text(text)?)
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
    fn read<'a, N: Node<'a>>(f: Fields<'a, N>, recent: &mut RecentIds) -> Result<Invoice> {
        let customer_id = recent.customer(f.required_text_ref(Field::CustomerId.names())?.as_ref());
        let type_text = f.text_ref(Field::Type.names())?.ok_or_else(|| {
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
        let invoice_date = f.required_timestamp(Field::InvoiceDate.names())?;
        let amount = f.required_cents(Field::Amount.names())?;
        let currency = f.required_currency(Field::Currency.names())?;
        let plan_id = f
            .text_ref(Field::PlanId.names())?
            .filter(|p| !crate::blank::is_blank(p))
            .map(|p| recent.plan(p.as_ref()));
        if kind == InvoiceType::Subscription && plan_id.is_none() {
            return Err(f.error("plan_id", "is required for a subscription invoice"));
        }
        if let Some(fault) = amount_fault(kind, amount) {
            return Err(f.error(f.name_of(Field::Amount.names()), fault));
        }
        let status = f
            .choice(Field::Status.names(), InvoiceStatus::NAMES)?
            .and_then(InvoiceStatus::parse)
            .unwrap_or(InvoiceStatus::Paid);
        let quantity = quantity_value(f.integer(Field::Quantity.names())?)
            .map_err(|fault| f.error("quantity", fault))?;
        let tax_amount = f.cents(Field::Tax.names())?.unwrap_or(0);
        if let Some(fault) = tax_fault(amount, tax_amount) {
            return Err(f.error(f.name_of(Field::Tax.names()), fault));
        }
        let period_start = f.timestamp(Field::PeriodStart.names())?;
        let period_end = f.timestamp(Field::PeriodEnd.names())?;
        if !period_in_order(period_start, period_end) {
            return Err(f.error(
                f.name_of(Field::PeriodEnd.names()),
                format!("must be after {}", f.name_of(Field::PeriodStart.names())),
            ));
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
                .text_ref(Field::SubscriptionId.names())?
                .map(|s| recent.subscription(s.as_ref())),
            quantity,
            status,
            tax_amount,
            details: InvoiceDetails {
                due_date: f.timestamp(Field::DueDate.names())?,
                payment_date: f.timestamp(Field::PaymentDate.names())?,
                payment_method: f.text(Field::PaymentMethod.names())?,
                description: f.text(Field::Description.names())?,
                invoice_number: f.text(Field::InvoiceNumber.names())?,
                discount_amount: f.cents(Field::Discount.names())?.unwrap_or(0),
                lines: read_lines(&f)?,
                transactions: read_transactions(&f)?,
                refunded_invoice_id: f
                    .text_ref(Field::RefundedInvoiceId.names())?
                    .map(|s| InvoiceId::from(s.as_ref())),
                data_source: f
                    .text_ref(Field::DataSource.names())?
                    .map(|s| DataSourceId::from(s.as_ref())),
            }
            .boxed_unless_empty(),
        };
        Ok(Invoice { id, record })
    }
}

/// Why `amount` cannot be the total of an invoice of `kind`: subscription
/// and one-time invoices charge 0 or more, refunds give back 0 or more,
/// cancellations move no money.
pub(super) fn amount_fault(kind: InvoiceType, amount: Cents) -> Option<String> {
    match kind {
        InvoiceType::Subscription | InvoiceType::OneTime if amount < 0 => Some(format!(
            "must be 0 or more for a {} invoice, got {amount}",
            kind.as_str()
        )),
        InvoiceType::Refund if amount > 0 => {
            Some(format!("must be 0 or less for a refund, got {amount}"))
        }
        InvoiceType::Cancellation if amount != 0 => {
            Some(format!("must be 0 for a cancellation, got {amount}"))
        }
        _ => None,
    }
}

/// The quantity an invoice stores for the one it gives (1 when absent),
/// or why it cannot: from 0 to [`MAX_QUANTITY`].
pub(super) fn quantity_value(quantity: Option<i64>) -> std::result::Result<i32, String> {
    let quantity = quantity.unwrap_or(1);
    if quantity < 0 {
        return Err(format!("must be 0 or more, got {quantity}"));
    }
    i32::try_from(quantity)
        .ok()
        .filter(|quantity| *quantity <= MAX_QUANTITY)
        .ok_or_else(|| format!("must be at most {MAX_QUANTITY}, got {quantity}"))
}

/// Why `tax` cannot be the tax included in `amount`: it is 0 or more, and
/// at most the amount when the amount is not a refund's.
pub(super) fn tax_fault(amount: Cents, tax: Cents) -> Option<String> {
    (tax < 0 || (amount >= 0 && tax > amount))
        .then(|| format!("must be from 0 to the amount, got {tax}"))
}

/// Whether a service period may run from `start` to `end`: an end, when
/// both are given, comes after the start. Compared in UTC: a bare date and
/// an instant may differ by a few hours of time zone, which cannot reorder
/// two valid periods.
pub(super) fn period_in_order(start: Option<Timestamp>, end: Option<Timestamp>) -> bool {
    match (start, end) {
        (Some(start), Some(end)) => end.instant(chrono_tz::UTC) > start.instant(chrono_tz::UTC),
        _ => true,
    }
}

fn read_lines<'a, N: Node<'a>>(f: &Fields<'a, N>) -> Result<Vec<InvoiceLine>> {
    let mut lines = Vec::new();
    for (i, item) in f
        .array(Field::Lines.names())?
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
        .array(Field::Transactions.names())?
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
