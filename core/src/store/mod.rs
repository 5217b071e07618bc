//! The store: one account's records, settings and FX table, with the indexes
//! that serve them, and nothing derived.
//!
//! Records come in as JSON (either interface shape), are validated (the record
//! rules in `model`, the cross-record rules in `validate`) and stored by id; a
//! re-sent id replaces its record. Every write notes which customers it
//! touched ([`Stale`]); the ledger hands that to its replay cache, which
//! lives a layer up and is no business of the store's.

#[cfg(feature = "arrow")]
mod arrow;
mod customer_index;
mod invoice_table;
mod invoices;
mod position_index;
mod position_list;
mod reads;
mod records;
mod stream;
mod validate;
mod write;

pub use stream::{ReadCustomers, ReadInvoices, ReadRecords};
pub use write::{ImportStatus, Page, WriteReport, WriteResult};

pub(crate) use customer_index::CustomerIndex;
pub(crate) use invoice_table::InvoiceTable;
pub(crate) use position_list::PositionList;

use crate::error::{Error, Result};
use crate::fx::{FxRate, FxTable, parse_rates};
use crate::ids::{CustomerId, DataSourceId, PlanGroupId, PlanId};
use crate::model::{Customer, DataSource, Node, Plan, PlanGroup, Settings, View};
use compact_str::CompactString;
use foldhash::fast::FixedState;
use indexmap::IndexMap;
use serde_json::Value;
use std::collections::{HashMap, HashSet};

/// Maps keyed by record ids: insertion-ordered, with a fast fixed-seed hasher
/// (ids are caller-chosen, not adversarial; order never depends on hashes).
pub(crate) type Records<K, V> = IndexMap<K, V, FixedState>;
pub(crate) type Index<K, V> = HashMap<K, V, FixedState>;

/// What the writes since the last [`Store::take_stale`] changed, for the
/// derived state to follow: the customers whose records changed, or
/// everything (a settings or FX change).
#[derive(Debug, Clone, Default)]
pub(crate) struct Stale {
    /// Customers whose invoices, plans or record changed.
    pub(crate) customers: HashSet<CustomerId, FixedState>,
    /// Everything derived is out of date.
    pub(crate) all: bool,
}

/// One account's records, settings and FX table.
#[derive(Debug, Clone)]
pub(crate) struct Store {
    pub(crate) settings: Settings,
    pub(crate) customers: Records<CustomerId, Customer>,
    /// The customers' ids in `customers`' order, for resolving the
    /// customers of large invoice batches (see `CustomerIndex`).
    customer_index: CustomerIndex,
    pub(crate) plans: Records<PlanId, Plan>,
    pub(crate) plan_groups: Records<PlanGroupId, PlanGroup>,
    pub(crate) invoices: InvoiceTable,
    pub(crate) data_sources: Records<DataSourceId, DataSource>,
    /// Where each customer's invoices are in `invoices`, by the customer's
    /// index in `customers`. Positions are `u32`; a store holds at most
    /// 3,221,225,471 invoices (see `InvoiceTable`).
    pub(crate) invoices_by_customer: Vec<PositionList>,
    pub(crate) invoices_by_plan: Index<PlanId, usize>,
    pub(crate) fx: FxTable,
    /// The highest `pg_N` number given out or stored, so the id of a deleted
    /// plan group is never handed out again.
    last_plan_group_number: u64,
    stale: Stale,
    /// Customers marked stale by their index in `customers`, a bit each,
    /// named in `stale` when it is taken (or before indexes move): a large
    /// write marks each customer once, however many of its chunks touch it.
    stale_indexes: Vec<u64>,
    /// `(customer index, position)` of each invoice a stream has stored but
    /// not yet added to its customer's list: a stream adds them all after
    /// its last chunk (see `Store::store_invoice_stream`). Empty between
    /// calls.
    unlisted: Vec<(u32, u32)>,
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

impl Store {
    /// An empty store with the given settings; the FX pivot is fixed here.
    pub(crate) fn new(mut settings: Settings) -> Store {
        let pivot = settings.pivot();
        settings.fx_pivot = Some(pivot);
        Store {
            settings,
            customers: Records::default(),
            customer_index: CustomerIndex::default(),
            plans: Records::default(),
            plan_groups: Records::default(),
            invoices: InvoiceTable::default(),
            data_sources: Records::default(),
            invoices_by_customer: Vec::new(),
            invoices_by_plan: Index::default(),
            fx: FxTable::new(pivot),
            last_plan_group_number: 0,
            stale: Stale::default(),
            stale_indexes: Vec::new(),
            unlisted: Vec::new(),
        }
    }

    /// What changed since the last call (see [`Stale`]).
    pub(crate) fn take_stale(&mut self) -> Stale {
        debug_assert!(
            self.unlisted.is_empty(),
            "a write left positions out of their customers' lists"
        );
        self.name_stale_indexes();
        std::mem::take(&mut self.stale)
    }

    /// Notes customers whose records changed, by their index in
    /// `customers`.
    pub(crate) fn mark_stale_at(&mut self, indexes: impl IntoIterator<Item = usize>) {
        for index in indexes {
            let word = index / 64;
            if word >= self.stale_indexes.len() {
                self.stale_indexes.resize(word + 1, 0);
            }
            self.stale_indexes[word] |= 1 << (index % 64);
        }
    }

    /// Names the customers marked by index in `stale`, for taking it, and
    /// before a deletion moves the indexes.
    pub(crate) fn name_stale_indexes(&mut self) {
        for (word, mut bits) in std::mem::take(&mut self.stale_indexes)
            .into_iter()
            .enumerate()
        {
            while bits != 0 {
                let index = word * 64 + bits.trailing_zeros() as usize;
                bits &= bits - 1;
                if let Some((id, _)) = self.customers.get_index(index) {
                    self.stale.customers.insert(id.clone());
                }
            }
        }
    }

    /// Notes customers whose records changed.
    pub(crate) fn mark_stale(&mut self, customers: impl IntoIterator<Item = CustomerId>) {
        self.stale.customers.extend(customers);
    }

    /// Notes that everything derived is out of date.
    pub(crate) fn mark_all_stale(&mut self) {
        self.stale.all = true;
    }

    /// The settings in force (with `fx_pivot` always set to the store's pivot).
    pub(crate) fn settings(&self) -> &Settings {
        &self.settings
    }

    /// Replaces the settings; the FX pivot stays the one the store was
    /// created with (the loaded rates are quoted against it).
    pub(crate) fn set_settings(&mut self, mut settings: Settings) {
        settings.fx_pivot = Some(self.fx.pivot());
        self.settings = settings;
        self.mark_all_stale();
    }

    /// Merges the keys of a JSON object into the settings; naming another
    /// `fx_pivot` is an [`Error::InvalidSetting`], the settings unchanged.
    pub(crate) fn update_settings(&mut self, patch: &Value) -> Result<&Settings> {
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
        self.check_settings(&settings)?;
        self.set_settings(settings);
        Ok(&self.settings)
    }

    /// Refuses settings that would make every report fail: a new base
    /// currency that is not the FX pivot and has no rate, while an invoice
    /// is in another currency (its amounts could not be converted).
    pub(crate) fn check_settings(&self, settings: &Settings) -> Result<()> {
        let base = settings.base_currency;
        if base == self.settings.base_currency
            || base == self.fx.pivot()
            || self.fx.rate_days(base).next().is_some()
        {
            return Ok(());
        }
        match self.invoices().find(|invoice| invoice.currency != base) {
            None => Ok(()),
            Some(invoice) => Err(Error::InvalidSetting {
                setting: "base_currency".to_string(),
                reason: format!(
                    "{base} has no exchange rate, and amounts in {} (invoice {}) would need one; \
                     load its rates first",
                    invoice.currency,
                    invoice.id()
                ),
            }),
        }
    }

    /// The exchange rates loaded so far.
    pub(crate) fn fx(&self) -> &FxTable {
        &self.fx
    }

    /// Adds exchange rates read from JSON rows: all of them, or none.
    pub(crate) fn load_fx_rates(&mut self, rows: &[Value]) -> Result<usize> {
        let rates = parse_rates(rows)?;
        self.insert_fx_rates(rates)
    }

    /// Adds read rates to the FX table, all of them or none (see
    /// [`FxTable::check_batch`]); answers how many.
    fn insert_fx_rates(&mut self, rates: Vec<FxRate>) -> Result<usize> {
        FxTable::check_batch(&rates)?;
        let count = rates.len();
        self.fx.insert(rates);
        self.mark_all_stale();
        Ok(count)
    }

    /// Upserts records of the collection `kind` with that kind's rules.
    pub(crate) fn upsert(&mut self, kind: RecordKind, records: &[Value]) -> WriteReport {
        match kind {
            RecordKind::Customers => self.upsert_customers(records),
            RecordKind::Plans => self.upsert_plans(records),
            RecordKind::PlanGroups => self.upsert_plan_groups(records),
            RecordKind::Invoices => self.upsert_invoices(records),
            RecordKind::DataSources => self.upsert_data_sources(records),
        }
    }

    /// Deletes the record `id` of the collection `kind` with that kind's rules.
    pub(crate) fn delete(&mut self, kind: RecordKind, id: &str) -> Result<()> {
        match kind {
            RecordKind::Customers => self.delete_customer(id),
            RecordKind::Plans => self.delete_plan(id),
            RecordKind::PlanGroups => self.delete_plan_group(id),
            RecordKind::Invoices => self.delete_invoice(id),
            RecordKind::DataSources => self.delete_data_source(id),
        }
    }
}

/// A record's id as results name it, the way records read it: `id`, else
/// `external_id` (a `null` counts as absent); empty when neither is a string
/// or an integer records read as text (see [`Fields::text`]).
///
/// [`Fields::text`]: crate::model::Fields::text
fn record_id<'a>(json: impl Node<'a>) -> CompactString {
    let id = ["id", "external_id"]
        .into_iter()
        .filter_map(|name| json.get(name))
        .find(|value| !matches!(value.view(), View::Null));
    match id.map(Node::view) {
        Some(View::String(s)) => s.into(),
        Some(View::Number(n)) => crate::model::integer_text(&n).unwrap_or_default().into(),
        _ => CompactString::default(),
    }
}

fn not_found(kind: &'static str, id: &str) -> Error {
    Error::NotFound {
        kind,
        id: id.to_string(),
    }
}
