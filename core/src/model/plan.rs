//! Plans: a price's billing interval and currency. Read from the data-API
//! shape (`billing_freq`, `billing_freq_count`) or the import shape
//! (`interval`, `interval_count`).

use crate::error::Result;
use crate::ids::{DataSourceId, PlanId};
use crate::model::{DATA_SOURCE_NAMES, Fields, ID_NAMES, Node};
use crate::money::Currency;
use serde::Serialize;
use serde_json::Value;

/// The unit of a billing interval.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Interval {
    /// A day; 12/365 of a month when normalizing.
    Day,
    /// A week; 12/52 of a month when normalizing.
    Week,
    /// A calendar month (a month added to Jan 31 ends on Feb 28 or 29).
    Month,
    /// A year: twelve months.
    Year,
}

impl Interval {
    /// The interval names [`Interval::as_str`] gives, in increasing length.
    pub const NAMES: &'static [&'static str] = &["day", "week", "month", "year"];

    /// Parses a unit name, ignoring case and surrounding space; `daily`, `weekly`, `monthly`,
    /// `yearly` and `annual` are accepted too. Anything else is `None`.
    pub fn parse(name: &str) -> Option<Interval> {
        match name.trim().to_ascii_lowercase().as_str() {
            "day" | "daily" => Some(Interval::Day),
            "week" | "weekly" => Some(Interval::Week),
            "month" | "monthly" => Some(Interval::Month),
            "year" | "yearly" | "annual" => Some(Interval::Year),
            _ => None,
        }
    }

    /// The lower-case unit name used in records and reports.
    pub fn as_str(&self) -> &'static str {
        match self {
            Interval::Day => "day",
            Interval::Week => "week",
            Interval::Month => "month",
            Interval::Year => "year",
        }
    }
}

/// How a plan is priced.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum PricingModel {
    /// A fixed price per seat or unit; the default.
    Licensed,
    /// A price by usage.
    Metered,
}

impl PricingModel {
    /// `licensed` or `metered`.
    pub fn as_str(&self) -> &'static str {
        match self {
            PricingModel::Licensed => "licensed",
            PricingModel::Metered => "metered",
        }
    }
}

/// A plan as stored.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Plan {
    /// The plan's external id.
    pub id: PlanId,
    /// Display name; required.
    pub name: String,
    /// The unit of the billing period (`billing_freq`, or `interval` in the import shape).
    pub billing_freq: Interval,
    /// Number of `billing_freq` units per billing period, at least 1.
    pub billing_freq_count: u32,
    /// The currency its subscription invoices must be in.
    pub currency: Currency,
    /// The product the plan prices, when given.
    pub product_name: Option<String>,
    /// The data source the plan came from, when given.
    pub data_source: Option<DataSourceId>,
    /// Licensed unless the record says `metered`.
    pub pricing_model: PricingModel,
}

const FREQ: &[&str] = &["billing_freq", "interval"];
const COUNT: &[&str] = &["billing_freq_count", "interval_count"];

impl Plan {
    /// The record kind errors name: `plan`.
    pub const KIND: &'static str = "plan";

    /// Each field by the names a record may give it, the name it is stored
    /// (and serialized) under first.
    pub const FIELD_NAMES: &'static [&'static [&'static str]] = &[
        ID_NAMES,
        &["name"],
        FREQ,
        COUNT,
        &["currency"],
        &["product_name"],
        DATA_SOURCE_NAMES,
        &["pricing_model"],
    ];

    /// Reads and validates one plan record.
    pub fn from_json(value: &Value) -> Result<Plan> {
        Self::from_node(value)
    }

    /// Reads and validates one plan record from any record representation
    /// (a JSON value or text, an Arrow row).
    pub fn from_node<'a, N: Node<'a>>(node: N) -> Result<Plan> {
        let f = Fields::open(Self::KIND, node, true)?;
        let name = f.required_text(&["name"])?;
        let freq_text = f
            .text(FREQ)?
            .ok_or_else(|| f.error("billing_freq", "is required (day, week, month or year)"))?;
        let billing_freq = Interval::parse(&freq_text).ok_or_else(|| {
            f.error(
                f.name_of(FREQ),
                format!("`{freq_text}` is not one of day, week, month, year"),
            )
        })?;
        let count = f.integer(COUNT)?.unwrap_or(1);
        if !(1..=1000).contains(&count) {
            return Err(f.error(
                f.name_of(COUNT),
                format!("must be from 1 to 1000, got {count}"),
            ));
        }
        let pricing_model = match f.choice(&["pricing_model"], &["licensed", "metered"])? {
            Some("metered") => PricingModel::Metered,
            _ => PricingModel::Licensed,
        };
        Ok(Plan {
            id: PlanId::new(f.id()),
            name,
            billing_freq,
            billing_freq_count: count as u32,
            currency: f.required_currency(&["currency"])?,
            product_name: f.text(&["product_name"])?,
            data_source: f.text(DATA_SOURCE_NAMES)?.map(DataSourceId::new),
            pricing_model,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn import_shape_is_accepted() {
        let p = Plan::from_json(&json!({"id": "y", "name": "Annual", "interval": "year", "interval_count": 1, "currency": "usd"}))
            .unwrap();
        assert_eq!(p.billing_freq, Interval::Year);
        assert_eq!(p.currency.as_str(), "USD");
    }

    #[test]
    fn zero_count_is_rejected() {
        let err = Plan::from_json(&json!({"id": "p", "name": "P", "billing_freq": "month", "billing_freq_count": 0, "currency": "USD"}))
            .unwrap_err();
        assert_eq!(err.field(), Some("billing_freq_count"));
        // An import-shape field is named as the record wrote it.
        let err = Plan::from_json(
            &json!({"id": "f", "name": "F", "interval": "fortnight", "currency": "USD"}),
        )
        .unwrap_err();
        assert_eq!(
            err.to_string(),
            "plan f: field `interval`: `fortnight` is not one of day, week, month, year"
        );
        let err = Plan::from_json(&json!({"id": "f", "name": "F", "interval": "week", "interval_count": 0, "currency": "USD"}))
            .unwrap_err();
        assert_eq!(err.field(), Some("interval_count"));
    }
}
