//! The ledger: one account's records and everything derived from them.
//!
//! Records come in as JSON (either interface shape), are validated (the record
//! rules in `model`, the cross-record rules in `validate`) and stored by id; a
//! re-sent id replaces its record. Queries (`queries`) build each customer's
//! timeline from its invoices and replay it at an explicit `as_of`. Only
//! the replays are kept: a write marks the customers it touches for the next
//! read to replay, a settings or FX change drops them all.

#[cfg(feature = "arrow")]
#[path = "../store/arrow.rs"]
mod arrow;
#[path = "../store/invoice_table.rs"]
mod invoice_table;
#[path = "../store/position_index.rs"]
mod position_index;
#[path = "../store/position_list.rs"]
mod position_list;
mod queries;
#[path = "../derive/replays.rs"]
mod replays;
#[cfg(test)]
mod tests;
#[path = "../store/validate.rs"]
mod validate;
#[path = "../store/write.rs"]
mod write;

pub use queries::{
    CurrentSubscription, CustomerMovements, CustomerProfile, CustomerStatus, MovementFilter,
};
pub use write::{ImportStatus, Page, WriteReport, WriteResult};

pub(crate) use replays::{ReplayCache, ReplaySet, free_replays};

use invoice_table::InvoiceTable;
use position_list::PositionList;

use crate::error::{Error, Result};
use crate::fx::{FxTable, parse_rates};
use crate::ids::{CustomerId, DataSourceId, PlanGroupId, PlanId};
use crate::model::{
    Customer, DataSource, Invoice, InvoiceRecord, Node, Plan, PlanGroup, Settings, StoredInvoice,
    View,
};
use foldhash::fast::FixedState;
use indexmap::IndexMap;
use rayon::prelude::*;
use serde_json::Value;
use std::collections::{HashMap, HashSet};
use std::sync::Mutex;

/// Maps keyed by record ids: insertion-ordered, with a fast fixed-seed hasher
/// (ids are caller-chosen, not adversarial; order never depends on hashes).
type Records<K, V> = IndexMap<K, V, FixedState>;
type Index<K, V> = HashMap<K, V, FixedState>;

/// Counts an invoice's use of its plan (`delta` is +1 or -1), so a plan in
/// use cannot be deleted.
fn count_plan_use(uses: &mut Index<PlanId, usize>, plan: Option<&PlanId>, delta: isize) {
    if let Some(plan) = plan {
        match uses.get_mut(plan) {
            Some(count) => *count = count.saturating_add_signed(delta),
            None => {
                uses.insert(plan.clone(), delta.max(0) as usize);
            }
        }
    }
}

/// Adds a stored invoice's position to its customer's ascending list
/// (appending, unless an invoice moved from another customer), noting
/// whether ids still ascend with it. Ids ascending is kept conservatively:
/// an invoice that moves in from another customer between two others
/// clears it.
fn add_position(list: &mut PositionList, invoices: &InvoiceTable, position: u32) {
    let id = |p: u32| invoices.at(p).map(|invoice| invoice.id());
    let positions = list.as_slice();
    if let Err(i) = positions.binary_search(&position) {
        let after_previous = i == 0 || id(positions[i - 1]) < id(position);
        let before_next = positions.get(i).is_none_or(|&next| id(position) < id(next));
        let ascending = list.ids_ascending() && after_previous && before_next;
        list.insert(i, position, ascending);
    }
}

/// One account's records, settings, FX table and cached replays.
#[derive(Debug)]
pub struct Ledger {
    settings: Settings,
    customers: Records<CustomerId, Customer>,
    plans: Records<PlanId, Plan>,
    plan_groups: Records<PlanGroupId, PlanGroup>,
    invoices: InvoiceTable,
    data_sources: Records<DataSourceId, DataSource>,
    /// Where each customer's invoices are in `invoices`, by the customer's
    /// index in `customers`. Positions are `u32`; a ledger holds at most
    /// 3,221,225,471 invoices (see `InvoiceTable`).
    invoices_by_customer: Vec<PositionList>,
    invoices_by_plan: Index<PlanId, usize>,
    fx: FxTable,
    replay_cache: Mutex<Option<ReplayCache>>,
    /// The highest `pg_N` number given out or stored, so the id of a deleted
    /// plan group is never handed out again.
    last_plan_group_number: u64,
}

impl Default for Ledger {
    fn default() -> Self {
        Ledger::new(Settings::default())
    }
}

impl Clone for Ledger {
    fn clone(&self) -> Self {
        Ledger {
            settings: self.settings.clone(),
            customers: self.customers.clone(),
            plans: self.plans.clone(),
            plan_groups: self.plan_groups.clone(),
            invoices: self.invoices.clone(),
            data_sources: self.data_sources.clone(),
            invoices_by_customer: self.invoices_by_customer.clone(),
            invoices_by_plan: self.invoices_by_plan.clone(),
            fx: self.fx.clone(),
            replay_cache: Mutex::new(None),
            last_plan_group_number: self.last_plan_group_number,
        }
    }
}

/// Which record collection a generic call addresses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RecordKind {
    /// `customers`.
    Customers,
    /// `plans`.
    Plans,
    /// `plan_groups`.
    PlanGroups,
    /// `invoices`.
    Invoices,
    /// `data_sources`.
    DataSources,
}

impl RecordKind {
    /// Parses the plural collection name used by scenario steps and the API
    /// (`customers`, `plans`, `plan_groups` or `plan-groups`, `invoices`,
    /// `data_sources` or `data-sources`).
    pub fn parse(name: &str) -> Option<RecordKind> {
        match name.replace('-', "_").as_str() {
            "customers" => Some(RecordKind::Customers),
            "plans" => Some(RecordKind::Plans),
            "plan_groups" => Some(RecordKind::PlanGroups),
            "invoices" => Some(RecordKind::Invoices),
            "data_sources" => Some(RecordKind::DataSources),
            _ => None,
        }
    }
}

impl Ledger {
    /// An empty ledger with the given settings.
    pub fn new(mut settings: Settings) -> Ledger {
        let pivot = settings.pivot();
        settings.fx_pivot = Some(pivot);
        Ledger {
            settings,
            customers: Records::default(),
            plans: Records::default(),
            plan_groups: Records::default(),
            invoices: InvoiceTable::default(),
            data_sources: Records::default(),
            invoices_by_customer: Vec::new(),
            invoices_by_plan: Index::default(),
            fx: FxTable::new(pivot),
            replay_cache: Mutex::new(None),
            last_plan_group_number: 0,
        }
    }

    /// The settings in force (with `fx_pivot` always set to the ledger's pivot).
    pub fn settings(&self) -> &Settings {
        &self.settings
    }

    /// Replaces the settings and recomputes every customer. The FX pivot
    /// stays the one the ledger was created with: the loaded rates are quoted
    /// against it.
    pub fn set_settings(&mut self, mut settings: Settings) {
        settings.fx_pivot = Some(self.fx.pivot());
        self.settings = settings;
        self.forget_replays();
    }

    /// Merges the keys of a JSON object into the settings (see
    /// [`Settings::merged`]) and recomputes every customer. Naming another
    /// `fx_pivot` is an error: it is fixed when the ledger is created.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidSetting`] naming the first setting that cannot be used, or `fx_pivot`
    /// when it names another pivot; the settings are unchanged then.
    pub fn update_settings(&mut self, patch: &Value) -> Result<&Settings> {
        let settings = self.settings.merged(patch)?;
        if settings.pivot() != self.fx.pivot() {
            return Err(Error::InvalidSetting {
                setting: "fx_pivot".to_string(),
                reason: format!(
                    "is {} for this ledger and cannot change once it exists",
                    self.fx.pivot()
                ),
            });
        }
        self.set_settings(settings);
        Ok(&self.settings)
    }

    /// The exchange rates loaded so far.
    pub fn fx(&self) -> &FxTable {
        &self.fx
    }

    /// Adds exchange rates (`{date, currency, rate}`, units of `currency` per
    /// one unit of the base currency at the time of the first load). Either
    /// every row is valid and loaded, or none is.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidRecord`] naming the first row and field that cannot be read (a date, a
    /// three-letter currency, a positive rate); no row is loaded then.
    pub fn load_fx_rates(&mut self, rows: &[Value]) -> Result<usize> {
        let rates = parse_rates(rows)?;
        Ok(self.insert_fx_rates(rates))
    }

    /// Adds read rates to the FX table; answers how many.
    fn insert_fx_rates(&mut self, rates: Vec<crate::fx::FxRate>) -> usize {
        let count = rates.len();
        self.fx.insert(rates);
        self.forget_replays();
        count
    }

    // ---- writes -------------------------------------------------------

    /// Upserts records of the collection `kind`: the typed method of that
    /// kind (such as [`Ledger::upsert_customers`]) with its rules.
    ///
    /// # Errors
    ///
    /// None returned: each record is checked on its own, a rejected one is
    /// stored nowhere and reported in the [`WriteReport`] with its error (an
    /// [`Error::InvalidRecord`] naming the record and field), and the valid ones
    /// are stored.
    ///
    /// # Examples
    ///
    /// ```
    /// use serde_json::json;
    /// use submetrics::{Ledger, RecordKind, Settings};
    ///
    /// let mut ledger = Ledger::new(Settings::default());
    /// let report = ledger.upsert(RecordKind::Customers, &[
    ///     json!({"id": "acme", "name": "Acme"}),
    ///     json!({"name": "No id"}),
    /// ]);
    /// assert_eq!(report.accepted(), 1);
    /// let rejected = report.rejected().next().unwrap();
    /// assert_eq!(rejected.error.as_ref().unwrap().field(), Some("id"));
    /// ```
    pub fn upsert(&mut self, kind: RecordKind, records: &[Value]) -> WriteReport {
        match kind {
            RecordKind::Customers => self.upsert_customers(records),
            RecordKind::Plans => self.upsert_plans(records),
            RecordKind::PlanGroups => self.upsert_plan_groups(records),
            RecordKind::Invoices => self.upsert_invoices(records),
            RecordKind::DataSources => self.upsert_data_sources(records),
        }
    }

    /// Deletes the record `id` of the collection `kind`, with the rules of
    /// that kind's method (such as [`Ledger::delete_plan`]).
    ///
    /// # Errors
    ///
    /// [`Error::NotFound`] when there is no such record; [`Error::Conflict`]
    /// for a plan that invoices still use. Nothing is deleted then.
    ///
    /// # Examples
    ///
    /// ```
    /// # use serde_json::json;
    /// # use submetrics::{Ledger, Settings};
    /// # let mut ledger = Ledger::new(Settings::default());
    /// # ledger.upsert_plans(&[json!({"id": "m", "name": "Monthly", "billing_freq": "month", "currency": "USD"})]);
    /// # ledger.upsert_customers(&[json!({"id": "acme", "name": "Acme"})]);
    /// # ledger.upsert_invoices(&[json!({"id": "inv-1", "customer_id": "acme", "type": "subscription",
    /// #     "plan_id": "m", "invoice_date": "2024-01-15", "amount": 5000, "currency": "USD"})]);
    /// use submetrics::RecordKind;
    ///
    /// assert_eq!(ledger.delete(RecordKind::Plans, "m").unwrap_err().code(), "conflict");
    /// ledger.delete(RecordKind::Invoices, "inv-1")?;
    /// ledger.delete(RecordKind::Plans, "m")?;
    /// assert_eq!(ledger.delete(RecordKind::Plans, "m").unwrap_err().code(), "not_found");
    /// # Ok::<(), submetrics::Error>(())
    /// ```
    pub fn delete(&mut self, kind: RecordKind, id: &str) -> Result<()> {
        match kind {
            RecordKind::Customers => self.delete_customer(id),
            RecordKind::Plans => self.delete_plan(id),
            RecordKind::PlanGroups => self.delete_plan_group(id),
            RecordKind::Invoices => self.delete_invoice(id),
            RecordKind::DataSources => self.delete_data_source(id),
        }
    }

    /// Upserts customers; a known id replaces the record (its invoices
    /// stay) and its customer's figures follow the new record.
    ///
    /// # Errors
    ///
    /// None returned: each record is checked on its own, a rejected one is
    /// stored nowhere and reported in the [`WriteReport`] with its error (an
    /// [`Error::InvalidRecord`] naming the record and field), and the valid ones
    /// are stored.
    ///
    /// # Examples
    ///
    /// ```
    /// use serde_json::json;
    /// use submetrics::{Ledger, Settings};
    ///
    /// let mut ledger = Ledger::new(Settings::default());
    /// let report = ledger.upsert_customers(&[json!({"id": "acme", "name": "Acme", "country": "de"})]);
    /// assert_eq!(report.accepted(), 1);
    /// assert_eq!(ledger.customers().len(), 1);
    /// assert!(ledger.customer("acme").is_some());
    /// ```
    pub fn upsert_customers(&mut self, records: &[Value]) -> WriteReport {
        self.write_customers(records)
    }

    /// [`Ledger::upsert_customers`] from any record representation.
    fn write_customers<'a, N: Node<'a>>(
        &mut self,
        records: impl IntoIterator<Item = N>,
    ) -> WriteReport {
        let mut report = WriteReport::default();
        for value in records {
            let outcome = Customer::from_node(value).map(|customer| {
                self.store_customer(customer);
            });
            report.push(record_id(value), outcome);
        }
        report
    }

    /// Changes only the fields present in `patch`; `custom_variables` are
    /// merged into the existing ones, new keys winning.
    ///
    /// # Errors
    ///
    /// [`Error::NotFound`] when there is no such customer; [`Error::InvalidRecord`] when
    /// `patch` is not a JSON object or the patched record breaks a customer rule. The stored
    /// customer is unchanged then.
    pub fn update_customer(&mut self, id: &str, patch: &Value) -> Result<&Customer> {
        let existing = self
            .customer(id)
            .ok_or_else(|| not_found(Customer::KIND, id))?;
        let mut merged = serde_json::to_value(existing).unwrap_or(Value::Null);
        let patch_map = patch.as_object().ok_or_else(|| {
            Error::invalid(Customer::KIND, id, "(record)", "must be a JSON object")
        })?;
        for (key, value) in patch_map {
            if (key == "custom_variables" || key == "metadata")
                && let (Some(target), Some(incoming)) = (
                    merged["custom_variables"].as_object_mut(),
                    value.as_object(),
                )
            {
                for (k, v) in incoming {
                    target.insert(k.clone(), v.clone());
                }
                continue;
            }
            merged[key] = value.clone();
        }
        merged["id"] = Value::String(id.to_string());
        let customer = Customer::from_json(&merged)?;
        self.store_customer(customer);
        Ok(&self.customers[id])
    }

    /// Stores a customer record, a known id in place; a new customer gets
    /// an empty list of invoice positions at its index.
    fn store_customer(&mut self, customer: Customer) {
        let (index, _) = self.customers.insert_full(customer.id.clone(), customer);
        if index == self.invoices_by_customer.len() {
            self.invoices_by_customer.push(PositionList::default());
        }
    }

    /// Upserts plans. A changed plan recomputes the customers invoiced on it.
    ///
    /// # Errors
    ///
    /// None returned: each record is checked on its own, a rejected one is
    /// stored nowhere and reported in the [`WriteReport`] with its error (an
    /// [`Error::InvalidRecord`] naming the record and field), and the valid ones
    /// are stored. A currency change on a plan that invoices use is
    /// rejected that way (field `currency`), the stored plan unchanged.
    ///
    /// # Examples
    ///
    /// ```
    /// # use serde_json::json;
    /// # use submetrics::{Ledger, Settings};
    /// # let mut ledger = Ledger::new(Settings::default());
    /// # ledger.upsert_plans(&[json!({"id": "m", "name": "Monthly", "billing_freq": "month", "currency": "USD"})]);
    /// # ledger.upsert_customers(&[json!({"id": "acme", "name": "Acme"})]);
    /// # ledger.upsert_invoices(&[json!({"id": "inv-1", "customer_id": "acme", "type": "subscription",
    /// #     "plan_id": "m", "invoice_date": "2024-01-15", "amount": 5000, "currency": "USD"})]);
    /// let report = ledger.upsert_plans(&[
    ///     json!({"id": "m", "name": "Monthly", "billing_freq": "month", "currency": "EUR"}),
    /// ]);
    /// assert_eq!(report.accepted(), 0);
    /// let error = report.rejected().next().unwrap().error.as_ref().unwrap();
    /// assert_eq!(error.field(), Some("currency"));
    /// assert_eq!(ledger.plan("m").unwrap().currency.as_str(), "USD");
    /// ```
    pub fn upsert_plans(&mut self, records: &[Value]) -> WriteReport {
        self.write_plans(records)
    }

    /// [`Ledger::upsert_plans`] from any record representation.
    fn write_plans<'a, N: Node<'a>>(
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

    /// Changes only the fields present in `patch` of an existing plan.
    ///
    /// # Errors
    ///
    /// [`Error::NotFound`] when there is no such plan; [`Error::InvalidRecord`] when `patch` is
    /// not a JSON object, the patched record breaks a plan rule, or it changes the currency of
    /// a plan that invoices use. The stored plan is unchanged then.
    pub fn update_plan(&mut self, id: &str, patch: &Value) -> Result<&Plan> {
        let existing = self.plan(id).ok_or_else(|| not_found(Plan::KIND, id))?;
        let mut merged = serde_json::to_value(existing).unwrap_or(Value::Null);
        let patch_map = patch
            .as_object()
            .ok_or_else(|| Error::invalid(Plan::KIND, id, "(record)", "must be a JSON object"))?;
        for (key, value) in patch_map {
            let key = match key.as_str() {
                "interval" => "billing_freq",
                "interval_count" => "billing_freq_count",
                other => other,
            };
            merged[key] = value.clone();
        }
        merged["id"] = Value::String(id.to_string());
        let report = self.upsert_plans(&[merged]);
        if let Some(error) = report.results.into_iter().find_map(|r| r.error) {
            return Err(*error);
        }
        Ok(&self.plans[id])
    }

    /// Upserts plan groups. A group without an id gets one (`pg_1`, `pg_2`,
    /// ...).
    ///
    /// # Errors
    ///
    /// None returned: each record is checked on its own, a rejected one is
    /// stored nowhere and reported in the [`WriteReport`] with its error (an
    /// [`Error::InvalidRecord`] naming the record and field), and the valid ones
    /// are stored. A group naming a plan that does not exist is rejected
    /// that way.
    ///
    /// # Examples
    ///
    /// ```
    /// # use serde_json::json;
    /// # use submetrics::{Ledger, Settings};
    /// # let mut ledger = Ledger::new(Settings::default());
    /// # ledger.upsert_plans(&[json!({"id": "m", "name": "Monthly", "billing_freq": "month", "currency": "USD"})]);
    /// # ledger.upsert_customers(&[json!({"id": "acme", "name": "Acme"})]);
    /// # ledger.upsert_invoices(&[json!({"id": "inv-1", "customer_id": "acme", "type": "subscription",
    /// #     "plan_id": "m", "invoice_date": "2024-01-15", "amount": 5000, "currency": "USD"})]);
    /// let report = ledger.upsert_plan_groups(&[
    ///     json!({"name": "Monthly plans", "plans": ["m"]}),
    ///     json!({"name": "Nothing", "plans": ["nope"]}),
    /// ]);
    /// assert_eq!(report.results[0].id, "pg_1");
    /// assert_eq!(report.accepted(), 1);
    /// assert_eq!(ledger.plan_group("pg_1").unwrap().plans.len(), 1);
    /// ```
    pub fn upsert_plan_groups(&mut self, records: &[Value]) -> WriteReport {
        self.write_plan_groups(records)
    }

    /// [`Ledger::upsert_plan_groups`] from any record representation.
    fn write_plan_groups<'a, N: Node<'a>>(
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
            let id = outcome.clone().unwrap_or_else(|_| record_id(value));
            report.push(id, outcome.map(|_| ()));
        }
        report
    }

    /// Upserts data sources.
    pub fn upsert_data_sources(&mut self, records: &[Value]) -> WriteReport {
        self.write_data_sources(records)
    }

    /// [`Ledger::upsert_data_sources`] from any record representation.
    fn write_data_sources<'a, N: Node<'a>>(
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

    /// Upserts invoices: each is validated on its own and against the stored
    /// customers and plans; the touched customers are recomputed once, at the
    /// next read.
    ///
    /// # Errors
    ///
    /// None returned: each record is checked on its own, a rejected one is
    /// stored nowhere and reported in the [`WriteReport`] with its error (an
    /// [`Error::InvalidRecord`] naming the record and field), and the valid ones
    /// are stored. Among the cross-record rules: the customer must exist; a
    /// subscription invoice's plan must exist and share its currency.
    ///
    /// # Examples
    ///
    /// ```
    /// # use serde_json::json;
    /// # use submetrics::{Ledger, Settings};
    /// # let mut ledger = Ledger::new(Settings::default());
    /// # ledger.upsert_plans(&[json!({"id": "m", "name": "Monthly", "billing_freq": "month", "currency": "USD"})]);
    /// # ledger.upsert_customers(&[json!({"id": "acme", "name": "Acme"})]);
    /// # ledger.upsert_invoices(&[json!({"id": "inv-1", "customer_id": "acme", "type": "subscription",
    /// #     "plan_id": "m", "invoice_date": "2024-01-15", "amount": 5000, "currency": "USD"})]);
    /// let report = ledger.upsert_invoices(&[
    ///     json!({"id": "inv-2", "customer_id": "acme", "type": "subscription", "plan_id": "m",
    ///            "invoice_date": "2024-02-15", "amount": 7000, "currency": "USD"}),
    ///     json!({"id": "inv-3", "customer_id": "nobody", "type": "one-time",
    ///            "invoice_date": "2024-02-15", "amount": 100, "currency": "USD"}),
    /// ]);
    /// assert_eq!(report.accepted(), 1);
    /// let error = report.rejected().next().unwrap().error.as_ref().unwrap();
    /// assert_eq!(error.field(), Some("customer_id"));
    /// assert_eq!(ledger.invoices().len(), 2);
    /// ```
    pub fn upsert_invoices(&mut self, records: &[Value]) -> WriteReport {
        // Reading records is independent per record: large batches use every core.
        let parse = |value: &Value| (record_id(value), Invoice::from_json(value));
        let parsed: Vec<(String, Result<Invoice>)> = if records.len() > 256 {
            records.par_iter().map(parse).collect()
        } else {
            records.iter().map(parse).collect()
        };
        self.store_invoices(parsed)
    }

    /// Upserts invoices already built in Rust (skipping JSON), with the same
    /// cross-record validation and per-record results as [`Ledger::upsert_invoices`].
    pub fn upsert_invoice_records(
        &mut self,
        invoices: impl IntoIterator<Item = Invoice>,
    ) -> WriteReport {
        let mut invoices: Vec<Invoice> = invoices.into_iter().collect();
        let failures = self.check_references(&mut invoices, |invoice: &mut Invoice| Some(invoice));
        let mut report = WriteReport::inserted(&invoices);
        if !failures.is_empty() {
            let mut failed = failures.iter().map(|(i, _)| *i).peekable();
            let mut k = 0;
            invoices.retain(|_| {
                let keep = failed.next_if_eq(&k).is_none();
                k += 1;
                keep
            });
            for (i, error) in failures {
                report.fail(i, error);
            }
        }
        self.store_checked(invoices);
        report
    }

    /// Stores invoices read from JSON: checks their references, then stores.
    fn store_invoices(&mut self, mut read: Vec<(String, Result<Invoice>)>) -> WriteReport {
        for (i, error) in self.check_references(&mut read, |(_, outcome)| outcome.as_mut().ok()) {
            read[i].1 = Err(error);
        }
        let (report, checked) = WriteReport::split(read);
        self.store_checked(checked);
        report
    }

    /// The cross-record checks of a batch (see `validate`), which also share
    /// the invoices' ids with the stored records: the failures, by index in
    /// ascending order. They only read customers and plans, so a large batch
    /// is checked on every core before anything is stored; `invoice` picks
    /// the invoice of an item, if it was read.
    fn check_references<T: Send>(
        &self,
        items: &mut [T],
        invoice: impl Fn(&mut T) -> Option<&mut Invoice> + Sync,
    ) -> Vec<(usize, Error)> {
        let check = |(i, item): (usize, &mut T)| {
            let invoice = invoice(item)?;
            validate::invoice_references(invoice, &self.customers, &self.plans)
                .err()
                .map(|error| (i, error))
        };
        if items.len() > 256 {
            items.par_iter_mut().enumerate().filter_map(check).collect()
        } else {
            items.iter_mut().enumerate().filter_map(check).collect()
        }
    }

    /// Stores checked invoices in order, then recomputes the customers they
    /// touched. A known id is replaced in place (keeping its position in
    /// listings); an invoice that moved to another customer touches both.
    fn store_checked(&mut self, checked: Vec<Invoice>) {
        let mut touched: HashSet<CustomerId, FixedState> = HashSet::default();
        // The position of the invoice this batch stored last.
        let mut last_stored: Option<u32> = None;
        let Ledger {
            customers,
            invoices,
            invoices_by_customer,
            invoices_by_plan,
            ..
        } = self;
        let list_of = |id: &CustomerId| customers.get_index_of(id);
        invoices.insert_batch(checked, |invoices, position, replaced| {
            let Some(invoice) = invoices.at(position) else {
                return;
            };
            count_plan_use(invoices_by_plan, invoice.plan_id.as_ref(), 1);
            // Batches often hold a customer's invoices one after another.
            let same_customer_as_before = last_stored
                .and_then(|before| invoices.at(before))
                .is_some_and(|before| before.customer_id.shares(&invoice.customer_id));
            if !same_customer_as_before && !touched.contains(&invoice.customer_id) {
                touched.insert(invoice.customer_id.clone());
            }
            last_stored = Some(position);
            if let Some(replaced) = replaced {
                count_plan_use(invoices_by_plan, replaced.plan_id.as_ref(), -1);
                if replaced.customer_id == invoice.customer_id {
                    return;
                }
                if let Some(owner) = list_of(&replaced.customer_id)
                    .and_then(|owner| invoices_by_customer.get_mut(owner))
                    && let Ok(i) = owner.as_slice().binary_search(&position)
                {
                    owner.remove(i);
                }
                touched.insert(replaced.customer_id);
            }
            // Every stored invoice's customer has a record (see `validate`).
            if let Some(owner) =
                list_of(&invoice.customer_id).and_then(|owner| invoices_by_customer.get_mut(owner))
            {
                add_position(owner, invoices, position);
            }
        });
        self.mark_stale(touched);
    }

    /// Deletes a customer and every invoice of it.
    ///
    /// # Errors
    ///
    /// [`Error::NotFound`] when there is no such customer.
    ///
    /// # Examples
    ///
    /// ```
    /// # use serde_json::json;
    /// # use submetrics::{Ledger, Settings};
    /// # let mut ledger = Ledger::new(Settings::default());
    /// # ledger.upsert_plans(&[json!({"id": "m", "name": "Monthly", "billing_freq": "month", "currency": "USD"})]);
    /// # ledger.upsert_customers(&[json!({"id": "acme", "name": "Acme"})]);
    /// # ledger.upsert_invoices(&[json!({"id": "inv-1", "customer_id": "acme", "type": "subscription",
    /// #     "plan_id": "m", "invoice_date": "2024-01-15", "amount": 5000, "currency": "USD"})]);
    /// ledger.delete_customer("acme")?;
    /// assert!(ledger.invoice("inv-1").is_none());
    /// assert_eq!(ledger.delete_customer("acme").unwrap_err().code(), "not_found");
    /// # Ok::<(), submetrics::Error>(())
    /// ```
    pub fn delete_customer(&mut self, id: &str) -> Result<()> {
        let (index, _, _) = self
            .customers
            .shift_remove_full(id)
            .ok_or_else(|| not_found(Customer::KIND, id))?;
        if index < self.invoices_by_customer.len() {
            let positions = self.invoices_by_customer.remove(index);
            self.remove_invoices_at(positions.as_slice());
        }
        self.mark_stale([CustomerId::from(id)]);
        Ok(())
    }

    /// Deletes a plan; the plan groups that name it drop it.
    ///
    /// # Errors
    ///
    /// [`Error::NotFound`] when there is no such plan; [`Error::Conflict`]
    /// while invoices use it (delete or change them first).
    ///
    /// # Examples
    ///
    /// ```
    /// # use serde_json::json;
    /// # use submetrics::{Ledger, Settings};
    /// # let mut ledger = Ledger::new(Settings::default());
    /// # ledger.upsert_plans(&[json!({"id": "m", "name": "Monthly", "billing_freq": "month", "currency": "USD"})]);
    /// # ledger.upsert_customers(&[json!({"id": "acme", "name": "Acme"})]);
    /// # ledger.upsert_invoices(&[json!({"id": "inv-1", "customer_id": "acme", "type": "subscription",
    /// #     "plan_id": "m", "invoice_date": "2024-01-15", "amount": 5000, "currency": "USD"})]);
    /// let error = ledger.delete_plan("m").unwrap_err();
    /// assert!(matches!(error, submetrics::Error::Conflict { .. }));
    /// ledger.delete_invoice("inv-1")?;
    /// ledger.delete_plan("m")?;
    /// # Ok::<(), submetrics::Error>(())
    /// ```
    pub fn delete_plan(&mut self, id: &str) -> Result<()> {
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
    ///
    /// # Errors
    ///
    /// [`Error::NotFound`] when there is no such plan group.
    pub fn delete_plan_group(&mut self, id: &str) -> Result<()> {
        self.plan_groups
            .shift_remove(id)
            .ok_or_else(|| not_found(PlanGroup::KIND, id))?;
        Ok(())
    }

    /// Deletes an invoice; its customer is recomputed at the next read.
    ///
    /// # Errors
    ///
    /// [`Error::NotFound`] when there is no such invoice.
    ///
    /// # Examples
    ///
    /// ```
    /// # use serde_json::json;
    /// # use submetrics::{Ledger, Settings};
    /// # let mut ledger = Ledger::new(Settings::default());
    /// # ledger.upsert_plans(&[json!({"id": "m", "name": "Monthly", "billing_freq": "month", "currency": "USD"})]);
    /// # ledger.upsert_customers(&[json!({"id": "acme", "name": "Acme"})]);
    /// # ledger.upsert_invoices(&[json!({"id": "inv-1", "customer_id": "acme", "type": "subscription",
    /// #     "plan_id": "m", "invoice_date": "2024-01-15", "amount": 5000, "currency": "USD"})]);
    /// ledger.delete_invoice("inv-1")?;
    /// assert_eq!(ledger.invoices().len(), 0);
    /// assert_eq!(ledger.delete_invoice("inv-1").unwrap_err().code(), "not_found");
    /// # Ok::<(), submetrics::Error>(())
    /// ```
    pub fn delete_invoice(&mut self, id: &str) -> Result<()> {
        let invoice = self
            .remove_invoice_record(id)
            .ok_or_else(|| not_found(Invoice::KIND, id))?;
        self.mark_stale([invoice.customer_id]);
        Ok(())
    }

    /// Deletes a data source; records that name it keep the name.
    ///
    /// # Errors
    ///
    /// [`Error::NotFound`] when there is no such data source.
    pub fn delete_data_source(&mut self, id: &str) -> Result<()> {
        self.data_sources
            .shift_remove(id)
            .ok_or_else(|| not_found(DataSource::KIND, id))?;
        Ok(())
    }

    // ---- reads --------------------------------------------------------

    /// The customer with this id, `None` when there is none.
    pub fn customer(&self, id: &str) -> Option<&Customer> {
        self.customers.get(id)
    }
    /// The plan with this id, `None` when there is none.
    pub fn plan(&self, id: &str) -> Option<&Plan> {
        self.plans.get(id)
    }
    /// The plan group with this id, `None` when there is none.
    pub fn plan_group(&self, id: &str) -> Option<&PlanGroup> {
        self.plan_groups.get(id)
    }
    /// The invoice with this id, `None` when there is none.
    pub fn invoice(&self, id: &str) -> Option<StoredInvoice<'_>> {
        self.invoices.get(id)
    }
    /// The data source with this id, `None` when there is none.
    pub fn data_source(&self, id: &str) -> Option<&DataSource> {
        self.data_sources.get(id)
    }

    /// Every customer in insertion order.
    pub fn customers(&self) -> impl ExactSizeIterator<Item = &Customer> {
        self.customers.values()
    }
    /// Every plan in insertion order (an upsert of an existing id keeps its place).
    pub fn plans(&self) -> impl ExactSizeIterator<Item = &Plan> {
        self.plans.values()
    }
    /// Every plan group in insertion order.
    pub fn plan_groups(&self) -> impl ExactSizeIterator<Item = &PlanGroup> {
        self.plan_groups.values()
    }
    /// Every invoice in insertion order.
    pub fn invoices(&self) -> impl ExactSizeIterator<Item = StoredInvoice<'_>> {
        self.invoices.iter()
    }
    /// Every data source in insertion order.
    pub fn data_sources(&self) -> impl ExactSizeIterator<Item = &DataSource> {
        self.data_sources.values()
    }

    /// The invoices of one customer, in insertion order.
    pub fn customer_invoices(&self, id: &str) -> Vec<StoredInvoice<'_>> {
        self.invoices_of(id).collect()
    }

    fn invoices_of(&self, id: &str) -> impl Iterator<Item = StoredInvoice<'_>> {
        self.customers
            .get_index_of(id)
            .into_iter()
            .filter_map(|index| self.invoices_by_customer.get(index))
            .flat_map(|invoices| self.invoices_at(invoices.as_slice()))
    }

    /// The invoices at the given positions of the invoice table.
    fn invoices_at<'a>(&'a self, positions: &'a [u32]) -> impl Iterator<Item = StoredInvoice<'a>> {
        positions.iter().filter_map(|&p| self.invoices.at(p))
    }

    /// A page of [`Ledger::customers`]: at most `limit` records after skipping `offset`, with
    /// the total count. An offset past the end gives an empty list.
    pub fn list_customers(&self, limit: usize, offset: usize) -> Page<&Customer> {
        page(self.customers.values(), limit, offset)
    }
    /// A page of [`Ledger::plans`], as [`Ledger::list_customers`].
    pub fn list_plans(&self, limit: usize, offset: usize) -> Page<&Plan> {
        page(self.plans.values(), limit, offset)
    }
    /// A page of [`Ledger::plan_groups`], as [`Ledger::list_customers`].
    pub fn list_plan_groups(&self, limit: usize, offset: usize) -> Page<&PlanGroup> {
        page(self.plan_groups.values(), limit, offset)
    }
    /// A page of [`Ledger::invoices`], as [`Ledger::list_customers`].
    pub fn list_invoices(&self, limit: usize, offset: usize) -> Page<StoredInvoice<'_>> {
        page(self.invoices.iter(), limit, offset)
    }
    /// A page of [`Ledger::data_sources`], as [`Ledger::list_customers`].
    pub fn list_data_sources(&self, limit: usize, offset: usize) -> Page<&DataSource> {
        page(self.data_sources.values(), limit, offset)
    }

    /// How many records of each kind: customers, plans, plan groups, invoices.
    pub fn counts(&self) -> (usize, usize, usize, usize) {
        (
            self.customers.len(),
            self.plans.len(),
            self.plan_groups.len(),
            self.invoices.len(),
        )
    }

    fn remove_invoice_record(&mut self, id: &str) -> Option<InvoiceRecord> {
        let position = self.invoices.position_of(id)?;
        let invoice = self.invoices.at(position)?.record().clone();
        self.remove_invoices_at(&[position]);
        Some(invoice)
    }

    /// Removes the invoices at the given ascending positions, keeping the
    /// order of the others, and renumbers every customer's positions. It
    /// costs one pass over all invoices however many are removed.
    fn remove_invoices_at(&mut self, removed: &[u32]) {
        if removed.is_empty() {
            return;
        }
        let plans: Vec<PlanId> = removed
            .iter()
            .filter_map(|&p| self.invoices.at(p)?.plan_id.clone())
            .collect();
        for plan in &plans {
            count_plan_use(&mut self.invoices_by_plan, Some(plan), -1);
        }
        self.invoices.remove_positions(removed);
        for positions in &mut self.invoices_by_customer {
            positions.renumber(|p| {
                let removed_before = removed.partition_point(|&r| r < p);
                let is_removed = removed.get(removed_before) == Some(&p);
                (!is_removed).then(|| p - removed_before as u32)
            });
        }
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

/// A record's id as results name it, the way records read it: `id`, else
/// `external_id` (a `null` counts as absent); empty when neither is a string
/// or an integer records read as text (see [`Fields::text`]).
///
/// [`Fields::text`]: crate::model::Fields::text
fn record_id<'a>(json: impl Node<'a>) -> String {
    let id = ["id", "external_id"]
        .into_iter()
        .filter_map(|name| json.get(name))
        .find(|value| !matches!(value.view(), View::Null));
    match id.map(Node::view) {
        Some(View::String(s)) => s.to_string(),
        Some(View::Number(n)) => crate::model::integer_text(&n).unwrap_or_default(),
        _ => String::new(),
    }
}

fn not_found(kind: &'static str, id: &str) -> Error {
    Error::NotFound {
        kind,
        id: id.to_string(),
    }
}

fn page<T>(items: impl ExactSizeIterator<Item = T>, limit: usize, offset: usize) -> Page<T> {
    let count = items.len();
    Page {
        count,
        list: items.skip(offset).take(limit).collect(),
    }
}
