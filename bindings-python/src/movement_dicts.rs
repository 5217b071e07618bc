//! Movements as a list of dicts, built from the typed rows: each dict has
//! the keys and values of a movement's JSON form, in its order. Python
//! strings are immutable, so the ones rows repeat (days, kinds, currencies,
//! plan ids, a customer's id on its consecutive rows) are made once per
//! call and shared by every dict that holds them.

use chrono::NaiveDate;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyString};
use std::collections::HashMap;
use submetrics::{Currency, Movement};

/// The keys of a movement dict, in the order of its JSON form.
const KEYS: [&str; 11] = [
    "date",
    "customer_id",
    "type",
    "subtype",
    "mrr_change",
    "mrr_change_base_currency",
    "customer_count_change",
    "quantity_change",
    "currency",
    "plans_before",
    "plans_after",
];

/// `rows` as a list of dicts, in order.
pub fn movement_dicts<'py>(py: Python<'py>, rows: &[Movement]) -> PyResult<Bound<'py, PyList>> {
    let keys = KEYS.map(|key| PyString::intern(py, key));
    let mut strings = SharedStrings::new(py);
    let list = PyList::empty(py);
    for row in rows {
        let dict = PyDict::new(py);
        let values: [Bound<'py, PyAny>; 11] = [
            strings.day(row.date).into_any(),
            strings.customer(row.customer_id.as_str()).into_any(),
            strings.text(row.kind.as_str()).into_any(),
            strings.text(row.subtype.as_str()).into_any(),
            row.mrr_change.into_pyobject(py)?.into_any(),
            row.mrr_change_base_currency.into_pyobject(py)?.into_any(),
            row.customer_count_change.into_pyobject(py)?.into_any(),
            row.quantity_change.into_pyobject(py)?.into_any(),
            strings.currency(row.currency).into_any(),
            strings.plans(row.plans_before.iter().map(|plan| plan.as_str()))?,
            strings.plans(row.plans_after.iter().map(|plan| plan.as_str()))?,
        ];
        for (key, value) in keys.iter().zip(values) {
            dict.set_item(key, value)?;
        }
        list.append(dict)?;
    }
    Ok(list)
}

/// The Python strings made so far in one call, by what they spell.
struct SharedStrings<'py> {
    py: Python<'py>,
    days: HashMap<NaiveDate, Bound<'py, PyString>>,
    texts: HashMap<&'static str, Bound<'py, PyString>>,
    currencies: HashMap<Currency, Bound<'py, PyString>>,
    plan_ids: HashMap<String, Bound<'py, PyString>>,
    last_customer: Option<(String, Bound<'py, PyString>)>,
}

impl<'py> SharedStrings<'py> {
    fn new(py: Python<'py>) -> SharedStrings<'py> {
        SharedStrings {
            py,
            days: HashMap::new(),
            texts: HashMap::new(),
            currencies: HashMap::new(),
            plan_ids: HashMap::new(),
            last_customer: None,
        }
    }

    /// A day as `YYYY-MM-DD`.
    fn day(&mut self, day: NaiveDate) -> Bound<'py, PyString> {
        let py = self.py;
        self.days
            .entry(day)
            .or_insert_with(|| PyString::new(py, &day.to_string()))
            .clone()
    }

    fn text(&mut self, text: &'static str) -> Bound<'py, PyString> {
        let py = self.py;
        self.texts
            .entry(text)
            .or_insert_with(|| PyString::new(py, text))
            .clone()
    }

    fn currency(&mut self, currency: Currency) -> Bound<'py, PyString> {
        let py = self.py;
        self.currencies
            .entry(currency)
            .or_insert_with(|| PyString::new(py, currency.as_str()))
            .clone()
    }

    /// A customer's id, shared with the row before when it is the same
    /// customer's (a customer's rows of one day are consecutive).
    fn customer(&mut self, id: &str) -> Bound<'py, PyString> {
        match &self.last_customer {
            Some((last, text)) if last == id => text.clone(),
            _ => {
                let text = PyString::new(self.py, id);
                self.last_customer = Some((id.to_owned(), text.clone()));
                text
            }
        }
    }

    /// A new list (lists are mutable, so never shared) of shared plan ids.
    fn plans<'a>(&mut self, ids: impl Iterator<Item = &'a str>) -> PyResult<Bound<'py, PyAny>> {
        let list = PyList::empty(self.py);
        for id in ids {
            let py = self.py;
            let text = match self.plan_ids.get(id) {
                Some(text) => text.clone(),
                None => {
                    let text = PyString::new(py, id);
                    self.plan_ids.insert(id.to_owned(), text.clone());
                    text
                }
            };
            list.append(text)?;
        }
        Ok(list.into_any())
    }
}
