//! Updates and replaces of one record: the write answers the record as now
//! stored, or the error that left it unchanged (a record that does not
//! exist, a field that is not the record's, a rule the new form breaks).

use super::Ledger;
use crate::error::{Error, Result};
use crate::model::{Customer, DataSource, Plan, PlanGroup, PlanGroupView};
use serde_json::Value;

impl Ledger {
    /// Changes only the fields present in `patch`; `custom_variables` are
    /// merged into the existing ones, new keys winning.
    ///
    /// # Errors
    ///
    /// [`Error::NotFound`](crate::Error::NotFound) when there is no such customer; [`Error::InvalidRecord`](crate::Error::InvalidRecord) when
    /// `patch` is not a JSON object or the patched record breaks a customer rule. The stored
    /// customer is unchanged then.
    pub fn update_customer(&mut self, id: &str, patch: &Value) -> Result<&Customer> {
        self.write(|store| store.update_customer(id, patch).map(|_| ()))?;
        Ok(&self.store.customers[id])
    }

    /// Changes only the fields present in `patch` of an existing plan.
    ///
    /// # Errors
    ///
    /// [`Error::NotFound`](crate::Error::NotFound) when there is no such plan; [`Error::InvalidRecord`](crate::Error::InvalidRecord) when `patch` is
    /// not a JSON object, the patched record breaks a plan rule, or it changes the currency of
    /// a plan that invoices use. The stored plan is unchanged then.
    pub fn update_plan(&mut self, id: &str, patch: &Value) -> Result<&Plan> {
        self.write(|store| store.update_plan(id, patch).map(|_| ()))?;
        Ok(&self.store.plans[id])
    }

    /// Changes the `name` and/or `type` (also `kind`) of an existing data
    /// source, each a non-empty string.
    ///
    /// # Errors
    ///
    /// [`Error::NotFound`](crate::Error::NotFound) when there is no such data source; [`Error::InvalidRecord`](crate::Error::InvalidRecord) when
    /// `patch` is not a JSON object, names another field or another id, or
    /// gives an empty or non-text name or type. The stored data source is unchanged then.
    pub fn update_data_source(&mut self, id: &str, patch: &Value) -> Result<&DataSource> {
        self.write(|store| store.update_data_source(id, patch).map(|_| ()))?;
        Ok(&self.store.data_sources[id])
    }

    /// Replaces an existing plan group's name and plans with those of
    /// `record`. Group ids are the ledger's to give (`pg_1`, ...), so an id
    /// in `record` is passed over, as a new group's is.
    ///
    /// # Errors
    ///
    /// [`Error::NotFound`](crate::Error::NotFound) when there is no such plan group; [`Error::InvalidRecord`](crate::Error::InvalidRecord) when
    /// `record` is not a JSON object or breaks a plan group rule (a plan that does not
    /// exist). The stored group is unchanged then.
    ///
    /// Answers the group as [`Ledger::plan_group_view`] shows it.
    pub fn replace_plan_group(&mut self, id: &str, record: &Value) -> Result<PlanGroupView<'_>> {
        self.write(|store| store.replace_plan_group(id, record).map(|_| ()))?;
        self.plan_group_view(id).ok_or_else(|| Error::NotFound {
            kind: PlanGroup::KIND,
            id: id.to_string(),
        })
    }

    /// Replaces the invoice `id` with `record` (creating it when there is
    /// none), whose `id`, when given, is `id`; the customer is recomputed at
    /// the next read.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidRecord`](crate::Error::InvalidRecord) when `record` is not a JSON object, gives another
    /// id, or breaks an invoice rule (as [`Ledger::upsert_invoices`] checks them). The stored
    /// invoice is unchanged then.
    pub fn replace_invoice(&mut self, id: &str, record: &Value) -> Result<()> {
        self.write(|store| store.replace_invoice(id, record))
    }
}
