//! `custom-variables`: for each custom variable (or only `variable`), the
//! paying customers and MRR by value, highest MRR first; customers without
//! the variable are under `(none)`. Variable names and values keep the case
//! of their first appearance (customers in snapshot order: highest MRR
//! first, ties by id; a customer's variables in their order) and match
//! case-insensitively.
//!
//! In parts, each partition keeps per variable and value the customers,
//! the MRR and the display text with the rank of the customer it came
//! from, plus its paying customers, their MRR and the rank of its first
//! one: a variable a partition never saw counts all its customers under
//! `(none)`, first seen at that first customer.

use super::ReportParams;
use super::answer::{Head, ReportAnswer, Series};
use super::partial::{Body, wrong_body};
use super::runs::ITEMS_PER_RUN;
use super::snapshot::{Snapshot, currency, share, snapshot};
use crate::derive::Derived;
use crate::error::Result;
use crate::model::Customer;
use crate::money::{Cents, Currency, Total};
use crate::query::Query;
use chrono::{DateTime, Utc};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};

/// Where a text first appeared: the customer's place in snapshot order
/// (MRR negated, id) and the variable's place among the customer's.
type Rank = (Cents, String, u32);

/// A text and the rank of its first appearance.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct Display {
    text: String,
    rank: Rank,
}

impl Display {
    fn earlier(self, other: Display) -> Display {
        if other.rank < self.rank { other } else { self }
    }
}

/// One value of a variable.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct ValueSums {
    display: Display,
    customers: i64,
    mrr: Total,
}

/// One variable: its name and its values by lower-cased value.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct Variable {
    name: Display,
    values: BTreeMap<String, ValueSums>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct VariablesPart {
    customers: i64,
    total: Total,
    /// The rank of the first paying customer.
    first: Option<Rank>,
    /// By lower-cased variable name.
    variables: BTreeMap<String, Variable>,
}

const NONE: &str = "(none)";

/// `text` lower-cased (`str::to_lowercase`), borrowed when it already is:
/// most names and values are, and each is read once per customer.
fn lower_cased(text: &str) -> Cow<'_, str> {
    if text.is_ascii() && !text.bytes().any(|b| b.is_ascii_uppercase()) {
        Cow::Borrowed(text)
    } else {
        Cow::Owned(text.to_lowercase())
    }
}

impl VariablesPart {
    /// The part of the snapshot's customers: runs of them read on every
    /// core and merged in order, as parts of separate ledgers are.
    fn of(snap: &Snapshot, only: Option<&str>) -> VariablesPart {
        let parts: Vec<VariablesPart> = snap
            .customers
            .par_chunks(ITEMS_PER_RUN)
            .map(|run| VariablesPart::of_customers(run, only))
            .collect();
        parts
            .into_iter()
            .reduce(VariablesPart::merge)
            .unwrap_or_else(|| VariablesPart::of_customers(&[], only))
    }

    /// The part of some paying customers, in snapshot order.
    fn of_customers(customers: &[(&Customer, Cents)], only: Option<&str>) -> VariablesPart {
        let rank = |mrr: Cents, id: &str, place: u32| (-mrr, id.to_string(), place);
        let mut variables: BTreeMap<String, Variable> = BTreeMap::new();
        for (customer, mrr) in customers {
            for (place, key) in customer.custom_variables.keys().enumerate() {
                let lower = lower_cased(key);
                if only.is_none_or(|o| o == lower) && !variables.contains_key(&*lower) {
                    let name = Display {
                        text: key.to_string(),
                        rank: rank(*mrr, customer.id.as_str(), place as u32),
                    };
                    let values = BTreeMap::new();
                    variables.insert(lower.into_owned(), Variable { name, values });
                }
            }
        }
        for (lower, variable) in variables.iter_mut() {
            for (customer, mrr) in customers {
                let value = customer.attribute(lower).unwrap_or(NONE);
                let key = lower_cased(value);
                let sums = match variable.values.get_mut(&*key) {
                    Some(sums) => sums,
                    None => variable
                        .values
                        .entry(key.into_owned())
                        .or_insert(ValueSums {
                            display: Display {
                                text: value.to_string(),
                                rank: rank(*mrr, customer.id.as_str(), 0),
                            },
                            customers: 0,
                            mrr: Total::ZERO,
                        }),
                };
                sums.customers += 1;
                sums.mrr += *mrr;
            }
        }
        VariablesPart {
            customers: customers.len() as i64,
            total: customers.iter().map(|(_, mrr)| mrr).sum(),
            first: customers
                .first()
                .map(|(customer, mrr)| rank(*mrr, customer.id.as_str(), 0)),
            variables,
        }
    }

    /// This partition's customers, all under `(none)`: its part of a
    /// variable it never saw.
    fn unseen(&self, name: &Display) -> Variable {
        let values = self
            .first
            .clone()
            .map(|rank| {
                let display = Display {
                    text: NONE.to_string(),
                    rank,
                };
                let sums = ValueSums {
                    display,
                    customers: self.customers,
                    mrr: self.total,
                };
                (NONE.to_string(), sums)
            })
            .into_iter()
            .collect();
        Variable {
            name: name.clone(),
            values,
        }
    }

    /// The part of both partitions' customers. Variables move rather than
    /// being copied, and `other`'s values are added into this part's, so
    /// folding many small parts into one costs what their values are.
    pub(crate) fn merge(mut self, mut other: VariablesPart) -> VariablesPart {
        let names: BTreeSet<String> = self
            .variables
            .keys()
            .chain(other.variables.keys())
            .cloned()
            .collect();
        let mut variables = BTreeMap::new();
        for lower in names {
            let mine = self.variables.remove(&lower);
            let theirs = other.variables.remove(&lower);
            let (a, b) = match (mine, theirs) {
                (Some(a), Some(b)) => (a, b),
                (Some(a), None) => {
                    let b = other.unseen(&a.name);
                    (a, b)
                }
                (None, Some(b)) => (self.unseen(&b.name), b),
                (None, None) => continue,
            };
            variables.insert(lower, merge_variable(a, b));
        }
        VariablesPart {
            customers: self.customers + other.customers,
            total: self.total + other.total,
            first: match (self.first, other.first) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            },
            variables,
        }
    }
}

fn merge_variable(mut a: Variable, b: Variable) -> Variable {
    a.name = a.name.earlier(b.name);
    for (lower, sums) in b.values {
        match a.values.remove(&lower) {
            Some(mine) => {
                a.values.insert(
                    lower,
                    ValueSums {
                        display: mine.display.earlier(sums.display),
                        customers: mine.customers + sums.customers,
                        mrr: mine.mrr + sums.mrr,
                    },
                );
            }
            None => {
                a.values.insert(lower, sums);
            }
        }
    }
    a
}

fn only(params: &ReportParams) -> Option<String> {
    Query::new(params).text("variable").map(str::to_lowercase)
}

pub(super) fn custom_variables(
    ledger: &Derived<'_>,
    params: &ReportParams,
    as_of: DateTime<Utc>,
) -> Result<ReportAnswer> {
    let only = only(params);
    let snap = snapshot(ledger, params, as_of)?;
    let part = VariablesPart::of(&snap, only.as_deref());
    render(snap.currency, part, only)
}

pub(super) fn partial(
    ledger: &Derived<'_>,
    params: &ReportParams,
    as_of: DateTime<Utc>,
) -> Result<Body> {
    let only = only(params);
    let snap = snapshot(ledger, params, as_of)?;
    Ok(Body::CustomVariables(VariablesPart::of(
        &snap,
        only.as_deref(),
    )))
}

pub(super) fn finish(
    shape: &Derived<'_>,
    params: &ReportParams,
    _as_of: DateTime<Utc>,
    body: Body,
) -> Result<ReportAnswer> {
    match body {
        Body::CustomVariables(part) => render(currency(shape, params)?, part, only(params)),
        other => Err(wrong_body("custom-variables", &other)),
    }
}

/// The head of `custom-variables`: its currency and every paying
/// customer's count and MRR.
#[derive(Serialize)]
struct VariablesHead {
    currency: Currency,
    total: Everyone,
}

/// Every paying customer: how many, and their MRR.
#[derive(Serialize)]
struct Everyone {
    customers: i64,
    mrr: Cents,
}

impl Head for VariablesHead {
    fn currency(&self) -> Option<Currency> {
        Some(self.currency)
    }
}

/// One custom variable and its values, highest MRR first.
#[derive(Serialize)]
struct VariableRow {
    variable: String,
    values: Vec<ValueRow>,
}

/// One value of a variable: its customers, their MRR and its share of the
/// total.
#[derive(Serialize)]
struct ValueRow {
    value: String,
    customers: i64,
    mrr: Cents,
    share: Option<f64>,
}

fn render(currency: Currency, part: VariablesPart, only: Option<String>) -> Result<ReportAnswer> {
    let total = part.total;
    let mut variables = part.variables;
    if let Some(name) = only {
        variables.entry(name.clone()).or_insert_with(|| Variable {
            name: Display {
                text: name,
                rank: (0, String::new(), 0),
            },
            values: BTreeMap::new(),
        });
    }
    let result = variables
        .into_values()
        .map(|variable| {
            let mut rows: Vec<ValueSums> = variable.values.into_values().collect();
            rows.sort_by(|a, b| {
                b.mrr
                    .cmp(&a.mrr)
                    .then_with(|| a.display.text.cmp(&b.display.text))
            });
            let name = variable.name.text;
            let values = rows
                .into_iter()
                .map(|sums| {
                    let value = sums.display.text;
                    let what = || format!("the `mrr` of `{name}` = `{value}` in {currency}");
                    Ok(ValueRow {
                        share: share(sums.mrr, total),
                        mrr: sums.mrr.cents(what)?,
                        value,
                        customers: sums.customers,
                    })
                })
                .collect::<Result<_>>()?;
            Ok(VariableRow {
                variable: name,
                values,
            })
        })
        .collect::<Result<_>>()?;
    let head = VariablesHead {
        currency,
        total: Everyone {
            customers: part.customers,
            mrr: total.cents(|| format!("the `total.mrr` in {currency}"))?,
        },
    };
    Ok(Series { head, result }.into())
}

#[cfg(test)]
mod tests {
    use crate::{Ledger, RecordKind, Settings};
    use chrono::{DateTime, Utc};
    use serde_json::{Value, json};

    /// Customer `i` of 5,000 pays 1000 + i a month: its name for the
    /// variable and its value cycle through cases, and every fourth has none.
    fn ledger() -> Ledger {
        let mut ledger = Ledger::new(Settings::default());
        let plan = json!({"id": "m", "name": "M", "interval": "month", "currency": "USD"});
        ledger.upsert(RecordKind::Plans, &[plan]);
        let (customers, invoices): (Vec<Value>, Vec<Value>) = (0..5000)
            .map(|i| {
                let name = ["Tier", "TIER", "tier"][i % 3];
                let variables = match ["Gold", "gold", "SILVER", ""][i % 4] {
                    "" => json!({}),
                    value => json!({ name: value }),
                };
                let id = format!("c{i:04}");
                let customer = json!({"id": id, "name": id, "custom_variables": variables});
                let invoice = json!({"id": format!("i{i:04}"), "customer_id": id,
                    "type": "subscription", "plan_id": "m", "invoice_date": "2024-03-01",
                    "amount": 1000 + i, "currency": "USD"});
                (customer, invoice)
            })
            .unzip();
        ledger.upsert(RecordKind::Customers, &customers);
        assert_eq!(
            ledger.upsert(RecordKind::Invoices, &invoices).accepted(),
            5000
        );
        ledger
    }

    #[test]
    fn customers_over_several_runs_add_up_as_one_walk_would() {
        let as_of: DateTime<Utc> = "2024-03-15T00:00:00Z".parse().unwrap();
        let answer = ledger()
            .report("custom-variables", &Default::default(), as_of)
            .unwrap();
        let sum = |rest: &[usize]| -> i64 {
            (0..5000)
                .filter(|i| rest.contains(&(i % 4)))
                .map(|i| 1000 + i as i64)
                .sum()
        };
        assert_eq!(
            answer["total"],
            json!({"customers": 5000, "mrr": sum(&[0, 1, 2, 3])})
        );
        // The highest MRR is customer 4999's, which has no variable: 4998
        // is the first to name it (`Tier`, holding `SILVER`), and 4997 the
        // first to hold `gold` in any case.
        let variable = &answer["result"][0];
        assert_eq!(variable["variable"], "Tier");
        let values: Vec<(&str, i64, i64)> = variable["values"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| {
                let text = v["value"].as_str().unwrap();
                (
                    text,
                    v["customers"].as_i64().unwrap(),
                    v["mrr"].as_i64().unwrap(),
                )
            })
            .collect();
        assert_eq!(
            values,
            [
                ("gold", 2500, sum(&[0, 1])),
                ("(none)", 1250, sum(&[3])),
                ("SILVER", 1250, sum(&[2])),
            ]
        );
    }
}
