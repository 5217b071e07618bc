//! Stripe invoices as our invoice records: one subscription invoice per
//! subscription item and invoice, proration lines as prorated invoices of
//! their own, one-time lines as one one-time invoice.

use super::catalog::Catalog;
use super::object::{Nested, Obj};
use super::{Stored, StripeOptions, Target, UncollectibleAs};
use crate::error::Error;
use serde_json::{Map, Value, json};
use std::collections::HashMap;

/// What one Stripe invoice became.
#[derive(Debug, Default)]
pub(crate) struct MappedInvoice {
    pub customer: String,
    pub records: Vec<Value>,
    /// Where refunds of this invoice go: its subscription records first
    /// (regular before proration), then its one-time record.
    pub targets: Vec<Target>,
    /// The record each Stripe line (`il_...`) went into.
    pub line_records: HashMap<String, String>,
}

/// Why an invoice made no record (not an error).
#[derive(Debug)]
pub(crate) enum Outcome {
    Mapped(MappedInvoice),
    Skipped(String),
}

/// One line, read.
struct Line<'a> {
    id: Option<&'a str>,
    /// Stripe's `amount`: before discounts, without exclusive tax.
    amount: i64,
    /// Our amount: `amount - discounts + exclusive tax`.
    net: i64,
    discount: i64,
    tax: i64,
    quantity: i64,
    period_start: Option<String>,
    period_end: Option<String>,
    description: Option<&'a str>,
    price: Option<&'a str>,
    /// `Some((subscription, subscription item))` for a subscription line.
    subscription: Option<(&'a str, Option<&'a str>)>,
    proration: bool,
    path: String,
}

/// The key of a group of lines that become one record.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum Group<'a> {
    Subscription {
        subscription: &'a str,
        item: Option<&'a str>,
        proration: bool,
    },
    OneTime,
}

impl Group<'_> {
    /// Our subscription id: `{subscription}/{item}`, or the subscription's
    /// id for lines that name no subscription item (old API versions).
    fn subscription_id(&self) -> Option<String> {
        match self {
            Group::Subscription {
                subscription,
                item: Some(item),
                ..
            } => Some(format!("{subscription}/{item}")),
            Group::Subscription { subscription, .. } => Some(subscription.to_string()),
            Group::OneTime => None,
        }
    }

    /// The suffix of the record id when an invoice makes several records.
    fn suffix(&self) -> String {
        match self {
            Group::Subscription {
                subscription,
                item,
                proration,
            } => {
                let key = item.unwrap_or(subscription);
                if *proration {
                    format!("{key}/proration")
                } else {
                    key.to_string()
                }
            }
            Group::OneTime => "one-time".to_string(),
        }
    }
}

/// The subscription item of each (subscription, price) the batch shows, from
/// subscription objects and from lines naming both, so a line that names
/// its subscription but no item (an invoice item added to a subscription)
/// joins its item's subscription: by its price, else by the subscription's
/// only item.
#[derive(Debug, Default)]
pub(crate) struct ItemIndex<'a> {
    by_price: HashMap<(&'a str, &'a str), &'a str>,
    /// Each subscription's items; more than one means no default.
    by_subscription: HashMap<&'a str, Vec<&'a str>>,
}

impl<'a> ItemIndex<'a> {
    pub fn read(subscriptions: &[&'a Value], invoices: &[&'a Value]) -> ItemIndex<'a> {
        let mut index = ItemIndex::default();
        for sub in subscriptions {
            let Some(sub_id) = sub.get("id").and_then(Value::as_str) else {
                continue;
            };
            for item in Obj::new("subscription", sub).list("items").unwrap_or(&[]) {
                let Some(item_id) = item.get("id").and_then(Value::as_str) else {
                    continue;
                };
                let price = item
                    .pointer("/price/id")
                    .or_else(|| item.pointer("/plan/id"))
                    .and_then(Value::as_str);
                index.add(sub_id, item_id, price);
            }
        }
        for invoice in invoices {
            for line in Obj::new("invoice", invoice).list("lines").unwrap_or(&[]) {
                let details = line.pointer("/parent/subscription_item_details");
                let sub = details
                    .and_then(|d| d.get("subscription"))
                    .or_else(|| line.get("subscription"))
                    .and_then(Value::as_str);
                let item = details
                    .and_then(|d| d.get("subscription_item"))
                    .or_else(|| line.get("subscription_item"))
                    .and_then(Value::as_str);
                let price = line
                    .pointer("/pricing/price_details/price")
                    .and_then(|p| p.as_str().or_else(|| p.get("id").and_then(Value::as_str)))
                    .or_else(|| line.pointer("/price/id").and_then(Value::as_str))
                    .or_else(|| line.pointer("/plan/id").and_then(Value::as_str));
                if let (Some(sub), Some(item)) = (sub, item) {
                    index.add(sub, item, price);
                }
            }
        }
        index
    }

    fn add(&mut self, subscription: &'a str, item: &'a str, price: Option<&'a str>) {
        if let Some(price) = price {
            self.by_price.entry((subscription, price)).or_insert(item);
        }
        let items = self.by_subscription.entry(subscription).or_default();
        if !items.contains(&item) {
            items.push(item);
        }
    }

    fn item_of(&self, subscription: &str, price: Option<&str>) -> Option<&'a str> {
        if let Some(item) = price.and_then(|p| self.by_price.get(&(subscription, p))) {
            return Some(item);
        }
        match self.by_subscription.get(subscription).map(Vec::as_slice) {
            Some([only]) => Some(only),
            _ => None,
        }
    }
}

/// Maps one invoice. `transactions` are the payment attempts of its charges.
pub(crate) fn map_invoice(
    value: &Value,
    items: &ItemIndex<'_>,
    catalog: &mut Catalog,
    stored: &dyn Stored,
    options: &StripeOptions,
    transactions: &[Value],
) -> Result<Outcome, Error> {
    let inv = Obj::new("invoice", value);
    let id = inv.required_id("id")?;
    let failed_attempt = transactions.iter().any(|t| t["result"] == "failed");
    let status = match inv.text("status")? {
        Some("draft") | None => {
            return Ok(Outcome::Skipped(
                "is a draft: only finalized invoices count".to_string(),
            ));
        }
        Some("paid") => "paid",
        Some("void") => "void",
        Some("open") if failed_attempt || inv.integer("attempt_count")?.unwrap_or(0) > 0 => {
            "failed"
        }
        Some("open") => "open",
        Some("uncollectible") => match options.uncollectible {
            UncollectibleAs::Failed => "failed",
            UncollectibleAs::Void => "void",
        },
        Some(other) => {
            return Err(inv.error(
                "status",
                format!("`{other}` is not one of draft, open, paid, void, uncollectible"),
            ));
        }
    };
    let customer = inv.required_id("customer")?;
    let currency = inv.required_currency("currency")?;
    let invoice_subscription = match inv.id_at("parent.subscription_details.subscription")? {
        Some(sub) => Some(sub),
        None => inv.id_at("subscription")?,
    };

    let mut lines = Vec::new();
    for (i, line) in inv.list("lines")?.iter().enumerate() {
        let n = inv.nested(format!("lines.data[{i}]"), line);
        let mut line = read_line(n, &currency, catalog, invoice_subscription)?;
        if let Some((subscription, item @ None)) = &mut line.subscription {
            *item = items.item_of(subscription, line.price);
        }
        lines.push(line);
    }

    let mut groups: Vec<(Group, Vec<&Line>)> = Vec::new();
    for line in &lines {
        let group = match line.subscription {
            Some((subscription, item)) => Group::Subscription {
                subscription,
                item,
                proration: line.proration,
            },
            None => Group::OneTime,
        };
        match groups.iter_mut().find(|(g, _)| *g == group) {
            Some((_, members)) => members.push(line),
            None => groups.push((group, vec![line])),
        }
    }
    // Regular subscription groups, then prorations, then the one-time group.
    groups.sort_by_key(|(group, _)| match group {
        Group::Subscription {
            proration: false, ..
        } => 0,
        Group::Subscription { .. } => 1,
        Group::OneTime => 2,
    });

    let invoice_date = inv.required_time("created")?;
    let mut common = Map::new();
    common.insert("customer_id".into(), json!(customer));
    common.insert("invoice_date".into(), json!(invoice_date));
    common.insert("currency".into(), json!(currency));
    common.insert("status".into(), json!(status));
    common.insert("data_source".into(), json!(options.data_source));
    if let Some(due) = inv.time("due_date")? {
        common.insert("due_date".into(), json!(due));
    }
    if let Some(paid) = inv.time("status_transitions.paid_at")? {
        common.insert("payment_date".into(), json!(paid));
    }
    if let Some(number) = inv.text("number")? {
        common.insert("invoice_number".into(), json!(number));
    }
    if let Some(description) = inv.text("description")? {
        common.insert("description".into(), json!(description));
    }

    let mut mapped = MappedInvoice {
        customer: customer.to_string(),
        ..MappedInvoice::default()
    };
    let several = groups.len() > 1;
    for (group, members) in &groups {
        let record_id = if several {
            format!("{id}/{}", group.suffix())
        } else {
            id.to_string()
        };
        let mut record = common.clone();
        record.insert("id".into(), json!(record_id));
        let proration = matches!(
            group,
            Group::Subscription {
                proration: true,
                ..
            }
        );
        // A proration group's credits ("unused time on ...") are cash, not
        // the subscription's new rate: the record carries the charges for
        // the remaining time only; the credits stay listed as lines.
        let counted: Vec<&&Line> = members
            .iter()
            .filter(|line| !proration || line.amount >= 0)
            .collect();
        let total = |figure: fn(&Line) -> i64, what: &str| {
            let sum: i128 = counted.iter().map(|l| i128::from(figure(l))).sum();
            i64::try_from(sum).map_err(|_| {
                inv.error(
                    &members[0].path,
                    format!("the lines' {what} total {sum} cents, beyond 64-bit cents"),
                )
            })
        };
        let amount = total(|l| l.net, "amounts")?;
        if amount < 0 {
            if *group == Group::OneTime {
                return Ok(Outcome::Skipped(format!(
                    "its one-time lines total {amount}: a credit, not revenue"
                )));
            }
            return Err(inv.error(
                &members[0].path,
                format!(
                    "subscription lines total {amount}: a subscription charge cannot be negative"
                ),
            ));
        }
        record.insert("amount".into(), json!(amount));
        record.insert("tax_amount".into(), json!(total(|l| l.tax, "taxes")?));
        let discount = total(|l| l.discount, "discounts")?;
        if discount != 0 {
            record.insert("discount_amount".into(), json!(discount));
        }
        let period_lines: Vec<&Line> = if counted.is_empty() {
            members.to_vec()
        } else {
            counted.iter().map(|l| **l).collect()
        };
        let start = period_lines
            .iter()
            .filter_map(|l| l.period_start.clone())
            .min();
        let end = period_lines
            .iter()
            .filter_map(|l| l.period_end.clone())
            .max();
        match group {
            Group::Subscription { .. } => {
                record.insert("type".into(), json!("subscription"));
                record.insert("subscription_id".into(), json!(group.subscription_id()));
                // The plan is the price of the line with the largest amount.
                let lead = period_lines
                    .iter()
                    .max_by_key(|l| l.amount)
                    .copied()
                    .unwrap_or(members[0]);
                let plan = plan_id(&inv, lead, &currency, catalog, stored)?;
                record.insert("plan_id".into(), json!(plan));
                let quantity = counted
                    .iter()
                    .try_fold(0_i64, |sum, l| sum.checked_add(l.quantity))
                    .ok_or_else(|| {
                        inv.error(
                            &members[0].path,
                            "the lines' quantities total beyond 64-bit integers",
                        )
                    })?;
                record.insert("quantity".into(), json!(quantity));
                if let (Some(start), Some(end)) = (&start, &end)
                    && end > start
                {
                    record.insert("period_start".into(), json!(start));
                    record.insert("period_end".into(), json!(end));
                }
            }
            Group::OneTime => {
                record.insert("type".into(), json!("one-time"));
                if let (Some(start), Some(end)) = (&start, &end)
                    && end > start
                {
                    record.insert("period_start".into(), json!(start));
                    record.insert("period_end".into(), json!(end));
                }
            }
        }
        if !record.contains_key("description")
            && let Some(description) = members.iter().find_map(|l| l.description)
        {
            record.insert("description".into(), json!(description));
        }
        record.insert(
            "lines".into(),
            Value::Array(members.iter().map(|l| line_record(l)).collect()),
        );
        if mapped.records.is_empty() && !transactions.is_empty() {
            record.insert("transactions".into(), Value::Array(transactions.to_vec()));
        }
        for line in members {
            if let Some(line_id) = line.id {
                mapped
                    .line_records
                    .insert(line_id.to_string(), record_id.clone());
            }
        }
        mapped.targets.push(Target {
            id: record_id,
            subscription_id: group.subscription_id(),
        });
        mapped.records.push(Value::Object(record));
    }
    if mapped.records.is_empty() {
        return Ok(Outcome::Skipped("has no lines".to_string()));
    }
    Ok(Outcome::Mapped(mapped))
}

/// Reads one line: its amounts (in cents of `currency`) after discounts and taxes, its subscription
/// item, proration flag and price, in the current API shape
/// (`parent.subscription_item_details`, `parent.invoice_item_details`,
/// `pricing.price_details.price`, `taxes`, `pretax_credit_amounts`) or an
/// older one (`subscription`, `subscription_item`, `proration`, `type`,
/// `price`/`plan`, `tax_amounts`, `discount_amounts`).
fn read_line<'a>(
    n: Nested<'a>,
    currency: &str,
    catalog: &Catalog,
    invoice_subscription: Option<&'a str>,
) -> Result<Line<'a>, Error> {
    let amount = n.amount("amount", currency)?;
    // Summed in 128 bits: the line's figures must each fit 64-bit cents.
    let mut discount: i128 = 0;
    let discount_amounts = n.list("discount_amounts")?;
    if !discount_amounts.is_empty() {
        for (i, d) in discount_amounts.iter().enumerate() {
            let d = n
                .parent
                .nested(format!("{}.discount_amounts[{i}]", n.path), d);
            discount += i128::from(d.amount("amount", currency)?);
        }
    } else {
        for (i, c) in n.list("pretax_credit_amounts")?.iter().enumerate() {
            let c = n
                .parent
                .nested(format!("{}.pretax_credit_amounts[{i}]", n.path), c);
            if c.text("type")? == Some("discount") {
                discount += i128::from(c.amount("amount", currency)?);
            }
        }
    }
    let (mut inclusive_tax, mut exclusive_tax): (i128, i128) = (0, 0);
    let taxes = n.list("taxes")?;
    if !taxes.is_empty() {
        for (i, t) in taxes.iter().enumerate() {
            let t = n.parent.nested(format!("{}.taxes[{i}]", n.path), t);
            let tax = i128::from(t.amount("amount", currency)?);
            match t.text("tax_behavior")? {
                Some("inclusive") => inclusive_tax += tax,
                _ => exclusive_tax += tax,
            }
        }
    } else {
        for (i, t) in n.list("tax_amounts")?.iter().enumerate() {
            let t = n.parent.nested(format!("{}.tax_amounts[{i}]", n.path), t);
            let tax = i128::from(t.amount("amount", currency)?);
            if t.boolean("inclusive")? {
                inclusive_tax += tax;
            } else {
                exclusive_tax += tax;
            }
        }
    }

    let parent_type = n.text("parent.type")?;
    let (subscription, item, proration, from_item) = match parent_type {
        Some("subscription_item_details") => (
            n.id_at("parent.subscription_item_details.subscription")?,
            n.id_at("parent.subscription_item_details.subscription_item")?,
            n.boolean("parent.subscription_item_details.proration")?,
            true,
        ),
        Some("invoice_item_details") => (
            n.id_at("parent.invoice_item_details.subscription")?,
            None,
            n.boolean("parent.invoice_item_details.proration")?,
            false,
        ),
        _ => {
            let is_subscription_line = n.text("type")? == Some("subscription");
            let subscription = n.id_at("subscription")?.or(if is_subscription_line {
                invoice_subscription
            } else {
                None
            });
            (
                subscription,
                n.id_at("subscription_item")?,
                n.boolean("proration")?,
                is_subscription_line,
            )
        }
    };
    let price = match n.id_at("pricing.price_details.price")? {
        Some(price) => Some(price),
        None => match n.id_at("price")? {
            Some(price) => Some(price),
            None => n.id_at("plan")?,
        },
    };
    let recurring_price = price
        .and_then(|p| catalog.price(p))
        .is_some_and(|p| p.recurring.is_some());
    let subscription = subscription
        .filter(|_| from_item || proration || recurring_price)
        .map(|sub| (sub, item));
    let cents = |value: i128, field: &str, what: &str| {
        i64::try_from(value)
            .map_err(|_| n.error(field, format!("{what} {value} cents, beyond 64-bit cents")))
    };
    Ok(Line {
        id: n.text("id")?,
        amount,
        net: cents(
            i128::from(amount) - discount + exclusive_tax,
            "amount",
            "with discounts and exclusive taxes totals",
        )?,
        discount: cents(discount, "discount_amounts", "the discounts total")?,
        tax: cents(inclusive_tax + exclusive_tax, "taxes", "the taxes total")?,
        quantity: n.integer("quantity")?.unwrap_or(1),
        period_start: n.time("period.start")?,
        period_end: n.time("period.end")?,
        description: n.text("description")?,
        price,
        subscription,
        proration,
        path: n.path.clone(),
    })
}

/// The plan of a subscription line: its price in the invoice's currency
/// (see [`Catalog::plan_for`]), or a plan an earlier import stored.
fn plan_id(
    inv: &Obj<'_>,
    line: &Line<'_>,
    currency: &str,
    catalog: &mut Catalog,
    stored: &dyn Stored,
) -> Result<String, Error> {
    let Some(price) = line.price else {
        return Err(inv.error(&line.path, "a subscription line needs a price (or plan)"));
    };
    if let Some(plan) = catalog.plan_for(price, currency) {
        return Ok(plan);
    }
    if catalog.price(price).is_some() {
        return Err(inv.error(
            &format!("{}.price", line.path),
            format!(
                "price `{price}` is not recurring: a subscription line needs a recurring price"
            ),
        ));
    }
    let variant = format!("{price}/{}", currency.to_ascii_lowercase());
    for candidate in [price.to_string(), variant] {
        if stored
            .plan_currency(&candidate)
            .is_some_and(|c| c.eq_ignore_ascii_case(currency))
        {
            return Ok(candidate);
        }
    }
    Err(inv.error(
        &format!("{}.price", line.path),
        format!("price `{price}` is unknown: include the prices (or expand them) in the import"),
    ))
}

/// A line as listed on the record (informational): its amount after
/// discounts and with exclusive tax, as the record's amount counts it.
fn line_record(line: &Line<'_>) -> Value {
    let mut record = json!({"amount": line.net, "quantity": line.quantity});
    if let Some(description) = line.description {
        record["description"] = json!(description);
    }
    if let (Some(start), Some(end)) = (&line.period_start, &line.period_end)
        && end > start
    {
        record["period_start"] = json!(start);
        record["period_end"] = json!(end);
    }
    record
}
