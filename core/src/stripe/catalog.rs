//! Customers, products and prices: Stripe's catalog as our customer and plan
//! records.

use super::object::{Obj, Objects};
use crate::error::Error;
use serde_json::{Map, Value, json};
use std::collections::HashMap;

/// A recurring price's billing cycle.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Recurring {
    pub interval: String,
    pub interval_count: i64,
    /// `licensed` or `metered`.
    pub usage_type: String,
}

/// What the mapping needs of a Stripe price (or legacy plan).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Price {
    pub id: String,
    pub currency: String,
    /// `None` for a one-time price.
    pub recurring: Option<Recurring>,
    pub nickname: Option<String>,
    pub product: Option<String>,
    /// The product's name when the price carried the product expanded.
    pub product_name: Option<String>,
}

impl Price {
    /// Reads a `price` object (`recurring.{interval, interval_count,
    /// usage_type}`) or a legacy `plan` object (the same at the top level).
    pub fn read(value: &Value) -> Result<Price, Error> {
        let kind = match value.get("object").and_then(Value::as_str) {
            Some("plan") => "plan",
            _ => "price",
        };
        let o = Obj::new(kind, value);
        let recurring = if kind == "plan" {
            Some(("interval", "interval_count", "usage_type"))
        } else if o.at("recurring").is_some() {
            Some((
                "recurring.interval",
                "recurring.interval_count",
                "recurring.usage_type",
            ))
        } else {
            None
        };
        let recurring = match recurring {
            None => None,
            Some((interval, count, usage)) => Some(Recurring {
                interval: o
                    .text(interval)?
                    .ok_or_else(|| o.error(interval, "is required for a recurring price"))?
                    .to_string(),
                interval_count: o.integer(count)?.unwrap_or(1),
                usage_type: o.text(usage)?.unwrap_or("licensed").to_string(),
            }),
        };
        Ok(Price {
            id: o.required_id("id")?.to_string(),
            currency: o.required_currency("currency")?,
            recurring,
            nickname: o.text("nickname")?.map(str::to_string),
            product: o.id_at("product")?.map(str::to_string),
            product_name: o.text("product.name")?.map(str::to_string),
        })
    }
}

/// Every price the batch shows, with product names, and the plan records
/// made of them.
#[derive(Debug, Default)]
pub(crate) struct Catalog {
    prices: HashMap<String, Price>,
    products: HashMap<String, String>,
    data_source: String,
    /// Plan records by id, in the order first made.
    pub plans: indexmap::IndexMap<String, Value>,
}

impl Catalog {
    /// Reads products, prices and plans, and the prices embedded in
    /// subscriptions and invoice lines (listed prices win over embedded
    /// copies). Unreadable prices are rejections.
    pub fn read(objects: &Objects<'_>, data_source: &str, rejected: &mut Vec<Error>) -> Catalog {
        let mut catalog = Catalog {
            data_source: data_source.to_string(),
            ..Catalog::default()
        };
        for product in objects.of("product") {
            let o = Obj::new("product", product);
            if let Ok(Some(name)) = o.text("name") {
                catalog.products.insert(o.id.to_string(), name.to_string());
            }
        }
        let mut listed = Vec::new();
        for kind in ["price", "plan"] {
            for value in objects.of(kind) {
                match Price::read(value) {
                    Ok(price) => {
                        listed.push(price.id.clone());
                        catalog.prices.entry(price.id.clone()).or_insert(price);
                    }
                    Err(error) => rejected.push(error),
                }
            }
        }
        let embedded = objects
            .of("subscription")
            .iter()
            .flat_map(|sub| embedded_lists(sub, "items"))
            .chain(
                objects
                    .of("invoice")
                    .iter()
                    .flat_map(|invoice| embedded_lists(invoice, "lines")),
            );
        for item in embedded {
            for path in ["price", "pricing.price_details.price", "plan"] {
                let candidate = path
                    .split('.')
                    .try_fold(item, |value, key| value.get(key))
                    .filter(|value| value.is_object());
                if let Some(Ok(price)) = candidate.map(Price::read) {
                    catalog.prices.entry(price.id.clone()).or_insert(price);
                    break;
                }
            }
        }
        for id in listed {
            if let Some(price) = catalog.prices.get(&id).cloned()
                && price.recurring.is_some()
            {
                catalog.plan_for(&price.id, &price.currency);
            }
        }
        catalog
    }

    pub fn price(&self, id: &str) -> Option<&Price> {
        self.prices.get(id)
    }

    /// The plan record id for `price` billed in `currency`, making the plan
    /// record on first use. A price billed in its own currency is the plan
    /// of the same id; a multi-currency price (`currency_options`) billed in
    /// another currency is the plan `{price}/{currency}` (lower case), since
    /// a plan has one currency. `None` for an unknown or one-time price.
    pub fn plan_for(&mut self, price_id: &str, currency: &str) -> Option<String> {
        let price = self.prices.get(price_id)?;
        let recurring = price.recurring.as_ref()?;
        let id = if price.currency.eq_ignore_ascii_case(currency) {
            price.id.clone()
        } else {
            format!("{}/{}", price.id, currency.to_ascii_lowercase())
        };
        if !self.plans.contains_key(&id) {
            let product_name = price.product_name.clone().or_else(|| {
                price
                    .product
                    .as_ref()
                    .and_then(|p| self.products.get(p).cloned())
            });
            let name = price
                .nickname
                .clone()
                .or_else(|| product_name.clone())
                .unwrap_or_else(|| price.id.clone());
            let mut plan = json!({
                "id": id,
                "name": name,
                "interval": recurring.interval,
                "interval_count": recurring.interval_count,
                "currency": currency.to_ascii_uppercase(),
                "pricing_model": if recurring.usage_type == "metered" { "metered" } else { "licensed" },
                "data_source": self.data_source,
            });
            if let Some(product_name) = product_name {
                plan["product_name"] = json!(product_name);
            }
            self.plans.insert(id.clone(), plan);
        }
        Some(id)
    }
}

/// The entries of a list field (`items`, `lines`) of an object.
fn embedded_lists<'a>(value: &'a Value, field: &str) -> impl Iterator<Item = &'a Value> {
    let list = value.get(field);
    let items = list
        .and_then(|l| l.get("data"))
        .or(list)
        .and_then(Value::as_array);
    items.into_iter().flatten()
}

/// A customer record from a Stripe customer: `name` (else the email, else
/// the id: our customers need a name), `email`, `country` from
/// `address.country` (else `shipping.address.country`), `created`,
/// `currency`, `metadata` as custom variables.
pub(crate) fn customer(value: &Value, data_source: &str) -> Result<Value, Error> {
    let o = Obj::new("customer", value);
    let id = o.required_id("id")?;
    let email = o.text("email")?;
    let name = o
        .text("name")?
        .filter(|n| !n.trim().is_empty())
        .or(email)
        .unwrap_or(id);
    let mut record = Map::new();
    record.insert("id".into(), json!(id));
    record.insert("name".into(), json!(name));
    if let Some(email) = email {
        record.insert("email".into(), json!(email));
    }
    let country = o
        .text("address.country")?
        .or(o.text("shipping.address.country")?);
    if let Some(country) = country.filter(|c| !c.is_empty()) {
        record.insert("country".into(), json!(country));
    }
    if let Some(created) = o.time("created")? {
        record.insert("created".into(), json!(created));
    }
    if let Some(currency) = o.currency("currency")? {
        record.insert("currency".into(), json!(currency));
    }
    match o.at("metadata") {
        None => {}
        Some(Value::Object(metadata)) if metadata.is_empty() => {}
        Some(metadata @ Value::Object(_)) => {
            record.insert("metadata".into(), metadata.clone());
        }
        Some(other) => return Err(o.error("metadata", format!("must be an object, got {other}"))),
    }
    record.insert("data_source".into(), json!(data_source));
    Ok(Value::Object(record))
}

/// A customer record from what an invoice says of its customer
/// (`customer_name`, `customer_email`, `customer_address.country`), for
/// invoices whose customer object is not in the batch (a deleted customer).
pub(crate) fn customer_from_invoice(
    invoice: &Obj<'_>,
    customer_id: &str,
    data_source: &str,
) -> Value {
    let email = invoice.text("customer_email").ok().flatten();
    let name = invoice
        .text("customer_name")
        .ok()
        .flatten()
        .filter(|n| !n.trim().is_empty())
        .or(email)
        .unwrap_or(customer_id);
    let mut record = json!({"id": customer_id, "name": name, "data_source": data_source});
    if let Some(email) = email {
        record["email"] = json!(email);
    }
    if let Some(country) = invoice
        .text("customer_address.country")
        .ok()
        .flatten()
        .filter(|c| !c.is_empty())
    {
        record["country"] = json!(country);
    }
    record
}
