//! Reports on the paying customers at one instant: `map` (by country),
//! `customer-concentration` and `custom-variables`.
//!
//! The instant is `as_of`, or the end of `selected-date` when earlier (the
//! data as it stood then). MRR converts into `baseCurrency` at that day's
//! rate. The shared customer filters apply; `currency` keeps MRR in those
//! currencies.

use super::ReportParams;
use super::filters::{CustomerFacts, CustomerFilter, currency_filter};
use crate::error::Result;
use crate::ledger::Ledger;
use crate::model::Customer;
use crate::money::{Cents, Currency, round_ratio};
use crate::query::Query;
use chrono::{DateTime, Utc};
use serde_json::{Value, json};
use std::collections::BTreeMap;

/// The paying customers at the report's instant with their converted MRR,
/// highest first (ties by id).
struct Snapshot<'a> {
    currency: Currency,
    customers: Vec<(&'a Customer, Cents)>,
}

impl Snapshot<'_> {
    fn total(&self) -> Cents {
        self.customers.iter().map(|(_, mrr)| mrr).sum()
    }
}

fn snapshot<'a>(
    ledger: &'a Ledger,
    params: &ReportParams,
    as_of: DateTime<Utc>,
) -> Result<Snapshot<'a>> {
    let q = Query::new(params);
    let settings = ledger.settings();
    let tz = settings.timezone;
    let at = match q.date("selected-date")? {
        Some(day) => {
            let end = crate::model::start_of_day(day.succ_opt().unwrap_or(day), tz)
                - chrono::Duration::seconds(1);
            end.min(as_of)
        }
        None => as_of,
    };
    let day = at.with_timezone(&tz).date_naive();
    let currency = q.base_currency(settings)?;
    let filter = CustomerFilter::from_params(ledger, params)?;
    let currencies = currency_filter(params)?;
    let mut customers = Vec::new();
    for (id, replay) in ledger.replays(at)?.iter() {
        let Some(customer) = ledger.customer(id.as_str()) else {
            continue;
        };
        if !filter.is_empty()
            && !filter.matches(
                ledger,
                &CustomerFacts::gather(ledger, customer, Some(replay), at),
                day,
            )
        {
            continue;
        }
        let mut mrr = 0;
        for (from, amount) in replay.mrr_by_currency() {
            if currencies.is_empty() || currencies.contains(&from) {
                mrr += ledger.fx().convert(amount, from, currency, day)?;
            }
        }
        if mrr > 0 {
            customers.push((customer, mrr));
        }
    }
    customers.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.id.cmp(&b.0.id)));
    Ok(Snapshot {
        currency,
        customers,
    })
}

/// `100 x part / whole`, `null` when `whole` is 0.
fn share(part: Cents, whole: Cents) -> Value {
    if whole == 0 {
        Value::Null
    } else {
        json!(100.0 * part as f64 / whole as f64)
    }
}

/// `map`: customers, MRR, ARPA and share of MRR by country (`unknown` when
/// a customer has none), highest MRR first.
pub(super) fn map(ledger: &Ledger, params: &ReportParams, as_of: DateTime<Utc>) -> Result<Value> {
    let snap = snapshot(ledger, params, as_of)?;
    let total = snap.total();
    let mut countries: BTreeMap<String, (i64, Cents)> = BTreeMap::new();
    for (customer, mrr) in &snap.customers {
        let key = customer.country.as_deref().unwrap_or("unknown").to_string();
        let entry = countries.entry(key).or_default();
        entry.0 += 1;
        entry.1 += mrr;
    }
    let mut rows: Vec<(String, i64, Cents)> =
        countries.into_iter().map(|(c, (n, m))| (c, n, m)).collect();
    rows.sort_by(|a, b| b.2.cmp(&a.2).then_with(|| a.0.cmp(&b.0)));
    let result: Vec<Value> = rows
        .iter()
        .map(|(country, customers, mrr)| {
            json!({
                "country": country,
                "region": super::filters::region_of(country),
                "customers": customers,
                "mrr": mrr,
                "arr": mrr * 12,
                "arpa": round_ratio(i128::from(*mrr), i128::from(*customers)),
                "share": share(*mrr, total),
            })
        })
        .collect();
    Ok(json!({
        "currency": snap.currency.as_str(),
        "total": {"customers": snap.customers.len(), "mrr": total, "arpa": round_ratio(i128::from(total), snap.customers.len() as i128)},
        "result": result,
    }))
}

/// `customer-concentration`: customers by MRR with share and cumulative
/// share, the share of the top 1, 5, 10 and 20 percent of customers (at
/// least one customer each), and the Herfindahl index (sum of squared
/// shares as fractions, 0 to 1; `hhi` is the same on the 0 to 10,000 scale).
pub(super) fn concentration(
    ledger: &Ledger,
    params: &ReportParams,
    as_of: DateTime<Utc>,
) -> Result<Value> {
    let q = Query::new(params);
    let limit = q.count("limit", 100, None)?;
    let offset = q.count("offset", 0, None)?;
    let snap = snapshot(ledger, params, as_of)?;
    let total = snap.total();
    let count = snap.customers.len();
    let herfindahl: f64 = if total == 0 {
        0.0
    } else {
        snap.customers
            .iter()
            .map(|(_, mrr)| (*mrr as f64 / total as f64).powi(2))
            .sum()
    };
    let top: Vec<Value> = [1u32, 5, 10, 20]
        .iter()
        .map(|percent| {
            let n = if count == 0 {
                0
            } else {
                (count * *percent as usize).div_ceil(100).max(1)
            };
            let mrr: Cents = snap.customers.iter().take(n).map(|(_, m)| m).sum();
            json!({"percent": percent, "customers": n, "mrr": mrr, "share": share(mrr, total)})
        })
        .collect();
    let mut cumulative = 0;
    let list: Vec<Value> = snap
        .customers
        .iter()
        .enumerate()
        .map(|(i, (customer, mrr))| {
            cumulative += mrr;
            json!({
                "rank": i + 1,
                "customer_id": customer.id.as_str(),
                "customer_name": customer.name,
                "mrr": mrr,
                "share": share(*mrr, total),
                "cumulative_share": share(cumulative, total),
            })
        })
        .skip(offset)
        .take(limit)
        .collect();
    Ok(json!({
        "currency": snap.currency.as_str(),
        "total_mrr": total,
        "customers": count,
        "herfindahl": herfindahl,
        "hhi": herfindahl * 10_000.0,
        "top": top,
        "result": {"count": count, "list": list},
    }))
}

/// `custom-variables`: for each custom variable (or only `variable`), the
/// paying customers and MRR by value, highest MRR first; customers without
/// the variable are under `(none)`. Variable names and values keep the case
/// of their first appearance and match case-insensitively.
pub(super) fn custom_variables(
    ledger: &Ledger,
    params: &ReportParams,
    as_of: DateTime<Utc>,
) -> Result<Value> {
    let q = Query::new(params);
    let only = q.text("variable").map(str::to_lowercase);
    let snap = snapshot(ledger, params, as_of)?;
    let total = snap.total();
    // Lower-cased variable -> (display name, lower-cased value -> (display value, customers, MRR)).
    type Values = BTreeMap<String, (String, i64, Cents)>;
    let mut variables: BTreeMap<String, (String, Values)> = BTreeMap::new();
    for (customer, _) in &snap.customers {
        for key in customer.custom_variables.keys() {
            let lower = key.to_lowercase();
            if only.as_ref().is_none_or(|o| *o == lower) {
                variables
                    .entry(lower)
                    .or_insert_with(|| (key.to_string(), Values::new()));
            }
        }
    }
    if let Some(name) = &only {
        variables
            .entry(name.clone())
            .or_insert_with(|| (name.clone(), Values::new()));
    }
    for (lower, (_, values)) in variables.iter_mut() {
        for (customer, mrr) in &snap.customers {
            let value = customer.attribute(lower).unwrap_or("(none)");
            let entry = values
                .entry(value.to_lowercase())
                .or_insert_with(|| (value.to_string(), 0, 0));
            entry.1 += 1;
            entry.2 += mrr;
        }
    }
    let result: Vec<Value> = variables
        .values()
        .map(|(name, values)| {
            let mut rows: Vec<&(String, i64, Cents)> = values.values().collect();
            rows.sort_by(|a, b| b.2.cmp(&a.2).then_with(|| a.0.cmp(&b.0)));
            let values: Vec<Value> = rows
                .iter()
                .map(|(value, customers, mrr)| {
                    json!({"value": value, "customers": customers, "mrr": mrr, "share": share(*mrr, total)})
                })
                .collect();
            json!({"variable": name, "values": values})
        })
        .collect();
    Ok(json!({
        "currency": snap.currency.as_str(),
        "total": {"customers": snap.customers.len(), "mrr": total},
        "result": result,
    }))
}
