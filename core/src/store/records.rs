//! Writes of customers, plans, plan groups and data sources: upserts,
//! partial updates, replaces and deletes, each with its record's rules;
//! and the replace of one invoice.

use super::stream::{PARALLEL_RECORDS, ReadCustomers};
use super::{PositionList, Store, WriteReport, not_found, record_id};
use crate::error::{Error, Result};
use crate::ids::{CustomerId, PlanGroupId, PlanId};
use crate::model::{Customer, DataSource, Invoice, Node, Plan, PlanGroup};
use rayon::prelude::*;
use serde_json::Value;
use std::collections::HashSet;

/// The record `stored` (as it serializes) with the fields of `patch` in
/// place. A patch names each field by any of its `fields` names (`created`
/// sets `created_date`); an object field (`custom_variables`) is merged
/// key by key, new keys winning. A name that is no field of the record,
/// or an id other than the record's, is an error naming it, and so is a
/// field given under two of its names with two values (`created` and
/// `created_date`): an update never answers success for a change it did
/// not make, nor one that hangs on the order of its keys.
fn patched(
    kind: &'static str,
    id: &str,
    mut stored: Value,
    patch: &Value,
    fields: &[&[&str]],
) -> Result<Value> {
    let patch = patch
        .as_object()
        .ok_or_else(|| Error::invalid(kind, id, "(record)", "must be a JSON object"))?;
    // The first name each field was given under, with its value.
    let mut given: Vec<(&str, &str, &Value)> = Vec::new();
    for (key, value) in patch {
        let Some(names) = fields.iter().find(|names| names.contains(&key.as_str())) else {
            let known: Vec<&str> = fields.iter().map(|names| names[0]).collect();
            return Err(Error::invalid(
                kind,
                id,
                key,
                format!(
                    "is not a field of a {kind}; its fields: {}",
                    known.join(", ")
                ),
            ));
        };
        let field = names[0];
        match given.iter().find(|(f, _, _)| *f == field) {
            Some((_, first, earlier)) if *earlier != value => {
                return Err(Error::invalid(
                    kind,
                    id,
                    first,
                    format!("`{key}` gives this field too, with another value; give one of them"),
                ));
            }
            Some(_) => continue,
            None => given.push((field, key, value)),
        }
        if field == "id" {
            if value.is_null() || names_id(value, id) {
                continue;
            }
            return Err(Error::invalid(
                kind,
                id,
                key,
                format!("cannot be changed by an update (this {kind} is `{id}`)"),
            ));
        }
        match (stored[field].as_object_mut(), value.as_object()) {
            (Some(target), Some(incoming)) => {
                target.extend(incoming.iter().map(|(k, v)| (k.clone(), v.clone())));
            }
            _ => stored[field] = value.clone(),
        }
    }
    stored["id"] = Value::String(id.to_string());
    Ok(stored)
}

/// `error`, about the merged record of an update, naming a field by the
/// name `patch` gave it under (`interval` for `billing_freq`): the caller
/// sees the name it wrote, as a whole record's error names it.
fn as_given(error: Error, patch: &Value, fields: &[&[&str]]) -> Error {
    let Error::InvalidRecord {
        kind,
        id,
        field,
        reason,
    } = error
    else {
        return error;
    };
    let (stored, rest) = field
        .split_once('.')
        .map_or((field.as_str(), ""), |(f, r)| (f, r));
    let given = fields
        .iter()
        .find(|names| names[0] == stored)
        .and_then(|names| names.iter().find(|name| patch.get(**name).is_some()));
    let field = match given {
        Some(name) if rest.is_empty() => name.to_string(),
        Some(name) => format!("{name}.{rest}"),
        None => field,
    };
    Error::InvalidRecord {
        kind,
        id,
        field,
        reason,
    }
}

/// `record` as the whole new form of the record `id`: a JSON object whose
/// id (`id` or `external_id`), when given, is `id`; an other id is an
/// error naming it, as in [`patched`].
fn replaced(kind: &'static str, id: &str, record: &Value) -> Result<Value> {
    let map = record
        .as_object()
        .ok_or_else(|| Error::invalid(kind, id, "(record)", "must be a JSON object"))?;
    for name in crate::model::ID_NAMES {
        match map.get(*name) {
            None | Some(Value::Null) => {}
            Some(given) if names_id(given, id) => {}
            Some(_) => {
                return Err(Error::invalid(
                    kind,
                    id,
                    name,
                    format!("cannot be changed by a replace (this {kind} is `{id}`)"),
                ));
            }
        }
    }
    let mut record = record.clone();
    record["id"] = Value::String(id.to_string());
    Ok(record)
}

/// Whether an id field's `value` names the record `id`, read as records
/// read ids: the string itself, or a whole number written any way (`42`,
/// `42.0` and `4.2e1` are the id `"42"`).
fn names_id(value: &Value, id: &str) -> bool {
    match value {
        Value::String(text) => text == id,
        Value::Number(n) => crate::model::integer_text(n).is_some_and(|text| text == id),
        _ => false,
    }
}

/// The error of a one-record write, if it was rejected.
fn rejection(report: WriteReport) -> Result<()> {
    match report.results.into_iter().find_map(|r| r.error) {
        Some(error) => Err(*error),
        None => Ok(()),
    }
}

impl Store {
    /// Upserts customers; a known id replaces the record (its invoices stay).
    pub(crate) fn upsert_customers(&mut self, records: &[Value]) -> WriteReport {
        self.write_customers(records)
    }

    /// [`Store::upsert_customers`] from any record representation. Each
    /// record is read on its own, on every core for a large batch, then
    /// the customers read are stored in order.
    pub(super) fn write_customers<'a, N: Node<'a> + Send + Sync>(
        &mut self,
        records: impl IntoIterator<Item = N>,
    ) -> WriteReport {
        let records: Vec<N> = records.into_iter().collect();
        let read = Store::read_customers(&records);
        self.store_read_customers(read)
    }

    /// Each record read as a customer, with its record id, on every core
    /// for a large batch: the first half of a customer upsert, which needs
    /// no store.
    pub(super) fn read_customers<'a, N: Node<'a> + Send + Sync>(records: &[N]) -> ReadCustomers {
        let read = |value: &N| (record_id(*value), Customer::from_node(*value));
        if records.len() > PARALLEL_RECORDS {
            records.par_iter().map(read).collect()
        } else {
            records.iter().map(read).collect()
        }
    }

    /// Stores customers read apart from the store, in order: the second
    /// half of a customer upsert.
    pub(super) fn store_read_customers(&mut self, read: ReadCustomers) -> WriteReport {
        let mut report = WriteReport::default();
        for (id, outcome) in read {
            let outcome = outcome.map(|customer| self.store_customer(customer));
            report.push(id, outcome);
        }
        report
    }

    /// Changes only the fields present in `patch`; `custom_variables` are
    /// merged into the existing ones, new keys winning. The stored customer
    /// is unchanged on an error.
    pub(crate) fn update_customer(&mut self, id: &str, patch: &Value) -> Result<&Customer> {
        let existing = self
            .customer(id)
            .ok_or_else(|| not_found(Customer::KIND, id))?;
        let stored = serde_json::to_value(existing).unwrap_or(Value::Null);
        let merged = patched(Customer::KIND, id, stored, patch, Customer::FIELD_NAMES)?;
        let customer = Customer::from_json(&merged)
            .map_err(|error| as_given(error, patch, Customer::FIELD_NAMES))?;
        self.store_customer(customer);
        Ok(&self.customers[id])
    }

    /// Stores a customer record, a known id in place; a new customer gets
    /// an empty list of invoice positions at its index. Replays do not read
    /// the customer record, so none goes stale.
    fn store_customer(&mut self, customer: Customer) {
        let id = customer.id.clone();
        let (index, _) = self.customers.insert_full(id.clone(), customer);
        if index == self.invoices_by_customer.len() {
            self.invoices_by_customer.push(PositionList::default());
            self.customer_index.push(id);
        }
    }

    /// Upserts plans. A changed plan makes the customers invoiced on it
    /// stale; a currency change on a plan that invoices use is rejected
    /// (field `currency`), the stored plan unchanged.
    pub(crate) fn upsert_plans(&mut self, records: &[Value]) -> WriteReport {
        self.write_plans(records)
    }

    /// [`Store::upsert_plans`] from any record representation.
    pub(super) fn write_plans<'a, N: Node<'a>>(
        &mut self,
        records: impl IntoIterator<Item = N>,
    ) -> WriteReport {
        let mut report = WriteReport::default();
        let mut changed: HashSet<PlanId> = HashSet::new();
        for value in records {
            let outcome = Plan::from_node(value).and_then(|plan| {
                self.check_plan_change(&plan)?;
                changed.insert(plan.id.clone());
                self.plans.insert(plan.id.clone(), plan);
                Ok(())
            });
            report.push(record_id(value), outcome);
        }
        if !changed.is_empty() {
            let customers: HashSet<CustomerId> = self
                .invoices
                .iter()
                .filter(|i| i.plan_id.as_ref().is_some_and(|p| changed.contains(p)))
                .map(|i| i.customer_id.clone())
                .collect();
            self.mark_stale(customers);
        }
        report
    }

    /// Changes only the fields present in `patch` of an existing plan, with
    /// the rules of [`Store::upsert_plans`].
    pub(crate) fn update_plan(&mut self, id: &str, patch: &Value) -> Result<&Plan> {
        let existing = self.plan(id).ok_or_else(|| not_found(Plan::KIND, id))?;
        let stored = serde_json::to_value(existing).unwrap_or(Value::Null);
        let merged = patched(Plan::KIND, id, stored, patch, Plan::FIELD_NAMES)?;
        rejection(self.upsert_plans(&[merged]))
            .map_err(|error| as_given(error, patch, Plan::FIELD_NAMES))?;
        Ok(&self.plans[id])
    }

    /// Upserts plan groups. A group without an id gets one (`pg_1`, `pg_2`,
    /// ...); a group naming a plan that does not exist is rejected.
    pub(crate) fn upsert_plan_groups(&mut self, records: &[Value]) -> WriteReport {
        self.write_plan_groups(records)
    }

    /// [`Store::upsert_plan_groups`] from any record representation.
    pub(super) fn write_plan_groups<'a, N: Node<'a>>(
        &mut self,
        records: impl IntoIterator<Item = N>,
    ) -> WriteReport {
        let mut report = WriteReport::default();
        for value in records {
            let outcome = PlanGroup::from_node(value).and_then(|mut group| {
                if let Some(missing) = group.plans.iter().find(|p| !self.plans.contains_key(*p)) {
                    let id = if group.id.as_str().is_empty() {
                        "?"
                    } else {
                        group.id.as_str()
                    };
                    return Err(Error::invalid(
                        PlanGroup::KIND,
                        id,
                        "plans",
                        format!("plan `{missing}` does not exist"),
                    ));
                }
                if group.id.as_str().is_empty() {
                    group.id = self.next_plan_group_id();
                }
                if let Some(number) = plan_group_number(&group.id) {
                    self.last_plan_group_number = self.last_plan_group_number.max(number);
                }
                let id = group.id.to_string();
                self.plan_groups.insert(group.id.clone(), group);
                Ok(id)
            });
            let id = outcome
                .clone()
                .unwrap_or_else(|_| record_id(value).to_string());
            report.push(id, outcome.map(|_| ()));
        }
        report
    }

    /// Upserts data sources.
    pub(crate) fn upsert_data_sources(&mut self, records: &[Value]) -> WriteReport {
        self.write_data_sources(records)
    }

    /// Changes the `name` and/or `type` of an existing data source, each a
    /// non-empty string (an update never resets one to its default). The
    /// stored data source is unchanged on an error.
    pub(crate) fn update_data_source(&mut self, id: &str, patch: &Value) -> Result<&DataSource> {
        let existing = self
            .data_sources
            .get(id)
            .ok_or_else(|| not_found(DataSource::KIND, id))?;
        let stored = serde_json::to_value(existing).unwrap_or(Value::Null);
        let merged = patched(DataSource::KIND, id, stored, patch, DataSource::FIELD_NAMES)?;
        let blank = ["name", "type"].into_iter().find(|field| {
            merged[*field]
                .as_str()
                .is_none_or(|text| text.trim().is_empty())
        });
        match blank {
            Some(field) => Err(Error::invalid(
                DataSource::KIND,
                id,
                field,
                "must be a non-empty string",
            )),
            None => rejection(self.upsert_data_sources(&[merged])),
        }
        .map_err(|error| as_given(error, patch, DataSource::FIELD_NAMES))?;
        Ok(&self.data_sources[id])
    }

    /// Replaces the invoice `id` with `record`, or creates it, with the
    /// rules of [`Store::upsert_invoices`].
    pub(crate) fn replace_invoice(&mut self, id: &str, record: &Value) -> Result<()> {
        let record = replaced(Invoice::KIND, id, record)?;
        rejection(self.upsert_invoices(std::slice::from_ref(&record)))
    }

    /// Replaces an existing plan group with the name and plans of `record`
    /// (with the rules of [`Store::upsert_plan_groups`]). Plan group ids are
    /// the ledger's to give, so any id `record` carries is passed over, as
    /// a new group's is.
    pub(crate) fn replace_plan_group(&mut self, id: &str, record: &Value) -> Result<&PlanGroup> {
        if !self.plan_groups.contains_key(id) {
            return Err(not_found(PlanGroup::KIND, id));
        }
        let mut record = record.clone();
        if let Some(map) = record.as_object_mut() {
            for name in crate::model::ID_NAMES {
                map.remove(*name);
            }
        }
        let record = replaced(PlanGroup::KIND, id, &record)?;
        rejection(self.upsert_plan_groups(&[record]))?;
        Ok(&self.plan_groups[id])
    }

    /// [`Store::upsert_data_sources`] from any record representation.
    pub(super) fn write_data_sources<'a, N: Node<'a>>(
        &mut self,
        records: impl IntoIterator<Item = N>,
    ) -> WriteReport {
        let mut report = WriteReport::default();
        for value in records {
            let outcome = DataSource::from_node(value).map(|source| {
                self.data_sources.insert(source.id.clone(), source);
            });
            report.push(record_id(value), outcome);
        }
        report
    }

    /// Deletes a customer and every invoice of it.
    pub(crate) fn delete_customer(&mut self, id: &str) -> Result<()> {
        // Indexes after the customer's move down a place.
        self.name_stale_indexes();
        let (index, _, _) = self
            .customers
            .shift_remove_full(id)
            .ok_or_else(|| not_found(Customer::KIND, id))?;
        if index < self.invoices_by_customer.len() {
            let positions = self.invoices_by_customer.remove(index);
            self.remove_invoices_at(positions.as_slice());
        }
        self.customer_index.rebuild(self.customers.keys().cloned());
        self.mark_stale([CustomerId::from(id)]);
        Ok(())
    }

    /// Deletes a plan that no invoice uses ([`Error::Conflict`] otherwise);
    /// the plan groups that name it drop it.
    pub(crate) fn delete_plan(&mut self, id: &str) -> Result<()> {
        if !self.plans.contains_key(id) {
            return Err(not_found(Plan::KIND, id));
        }
        let uses = self.invoices_by_plan.get(id).copied().unwrap_or(0);
        if uses > 0 {
            return Err(Error::Conflict {
                kind: Plan::KIND,
                id: id.to_string(),
                reason: format!("{uses} invoice(s) use this plan; delete or change them first"),
            });
        }
        self.plans.shift_remove(id);
        for group in self.plan_groups.values_mut() {
            group.plans.retain(|p| p.as_str() != id);
        }
        Ok(())
    }

    /// Deletes a plan group; its plans stay.
    pub(crate) fn delete_plan_group(&mut self, id: &str) -> Result<()> {
        self.plan_groups
            .shift_remove(id)
            .ok_or_else(|| not_found(PlanGroup::KIND, id))?;
        Ok(())
    }

    /// Deletes a data source; records that name it keep the name.
    pub(crate) fn delete_data_source(&mut self, id: &str) -> Result<()> {
        self.data_sources
            .shift_remove(id)
            .ok_or_else(|| not_found(DataSource::KIND, id))?;
        Ok(())
    }

    fn check_plan_change(&self, plan: &Plan) -> Result<()> {
        let Some(existing) = self.plans.get(&plan.id) else {
            return Ok(());
        };
        let used = self.invoices_by_plan.get(&plan.id).copied().unwrap_or(0) > 0;
        if used && existing.currency != plan.currency {
            return Err(Error::invalid(
                Plan::KIND,
                plan.id.as_str(),
                "currency",
                format!(
                    "cannot change from {} to {} while invoices use this plan",
                    existing.currency, plan.currency
                ),
            ));
        }
        Ok(())
    }

    fn next_plan_group_id(&self) -> PlanGroupId {
        (self.last_plan_group_number + 1..)
            .map(|n| PlanGroupId::new(format!("pg_{n}")))
            .find(|id| !self.plan_groups.contains_key(id))
            .unwrap_or_else(|| PlanGroupId::new("pg"))
    }
}

/// The `N` of a service-assigned plan group id `pg_N`.
fn plan_group_number(id: &PlanGroupId) -> Option<u64> {
    id.as_str().strip_prefix("pg_")?.parse().ok()
}
