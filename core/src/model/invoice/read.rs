//! Reading an invoice from any record representation, with every rule
//! that needs no other record.

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
        let customer_id = recent.customer(
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
            .map(|p| recent.plan(p.as_ref()));
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
                .map(|s| recent.subscription(s.as_ref())),
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
