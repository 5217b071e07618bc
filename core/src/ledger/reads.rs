//! Reads of records: one by id, all in insertion order, pages, and JSON in
//! the records' output shapes.

use super::Ledger;
use crate::error::{Error, Result};
use crate::model::{Customer, DataSource, Plan, PlanGroup, PlanGroupView, StoredInvoice};
use crate::query::local_day;
use crate::store::{Page, RecordKind};
use chrono::NaiveDate;
use serde_json::Value;

impl Ledger {
    /// The page size of a listing when the caller gives none.
    pub const DEFAULT_LIST_LIMIT: usize = 100;

    /// The customer with this id, `None` when there is none.
    pub fn customer(&self, id: &str) -> Option<&Customer> {
        self.store.customer(id)
    }

    /// The plan with this id, `None` when there is none.
    pub fn plan(&self, id: &str) -> Option<&Plan> {
        self.store.plan(id)
    }

    /// The plan group with this id, `None` when there is none.
    pub fn plan_group(&self, id: &str) -> Option<&PlanGroup> {
        self.store.plan_group(id)
    }

    /// The plan group with this id as the interface shows it: its plans as
    /// summaries of their records (id, name, billing frequency, product,
    /// currency). `None` when there is none.
    pub fn plan_group_view(&self, id: &str) -> Option<PlanGroupView<'_>> {
        self.store.plan_group_view(id)
    }

    /// The invoice with this id, `None` when there is none.
    pub fn invoice(&self, id: &str) -> Option<StoredInvoice<'_>> {
        self.store.invoice(id)
    }

    /// The data source with this id, `None` when there is none.
    pub fn data_source(&self, id: &str) -> Option<&DataSource> {
        self.store.data_source(id)
    }

    /// Every customer in insertion order.
    pub fn customers(&self) -> impl ExactSizeIterator<Item = &Customer> {
        self.store.customers()
    }

    /// Every plan in insertion order (an upsert of an existing id keeps its place).
    pub fn plans(&self) -> impl ExactSizeIterator<Item = &Plan> {
        self.store.plans()
    }

    /// Every plan group in insertion order.
    pub fn plan_groups(&self) -> impl ExactSizeIterator<Item = &PlanGroup> {
        self.store.plan_groups()
    }

    /// Every invoice in insertion order.
    pub fn invoices(&self) -> impl ExactSizeIterator<Item = StoredInvoice<'_>> {
        self.store.invoices()
    }

    /// Every data source in insertion order.
    pub fn data_sources(&self) -> impl ExactSizeIterator<Item = &DataSource> {
        self.store.data_sources()
    }

    /// The invoices of one customer, in insertion order.
    pub fn customer_invoices(&self, id: &str) -> Vec<StoredInvoice<'_>> {
        self.store.customer_invoices(id)
    }

    /// A page of [`Ledger::customers`]: at most `limit` records after skipping `offset`, with
    /// the total count. An offset past the end gives an empty list.
    pub fn list_customers(&self, limit: usize, offset: usize) -> Page<&Customer> {
        self.store.list_customers(limit, offset)
    }

    /// A page of [`Ledger::plans`], as [`Ledger::list_customers`].
    pub fn list_plans(&self, limit: usize, offset: usize) -> Page<&Plan> {
        self.store.list_plans(limit, offset)
    }

    /// A page of the plans of data source `source` (those whose
    /// `data_source` is it), as [`Ledger::list_customers`]; none for a
    /// source no plan names.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidQuery`] naming `source` when it is empty (or blank):
    /// no data source has that id, and a filter on nothing is more likely
    /// a form's unset field than a choice (as reports refuse `customer=`).
    pub fn list_source_plans(
        &self,
        source: &str,
        limit: usize,
        offset: usize,
    ) -> Result<Page<&Plan>> {
        filter_text("source", source)?;
        let plans: Vec<&Plan> = self
            .plans()
            .filter(|plan| {
                plan.data_source
                    .as_ref()
                    .is_some_and(|d| d.as_str() == source)
            })
            .collect();
        Ok(Page {
            count: plans.len(),
            list: plans.into_iter().skip(offset).take(limit).collect(),
        })
    }

    /// A page of [`Ledger::plan_groups`], as [`Ledger::list_customers`].
    pub fn list_plan_groups(&self, limit: usize, offset: usize) -> Page<&PlanGroup> {
        self.store.list_plan_groups(limit, offset)
    }

    /// A page of [`Ledger::invoices`], as [`Ledger::list_customers`].
    pub fn list_invoices(&self, limit: usize, offset: usize) -> Page<StoredInvoice<'_>> {
        self.store.list_invoices(limit, offset)
    }

    /// A page of one customer's invoices ([`Ledger::customer_invoices`]),
    /// as [`Ledger::list_customers`].
    ///
    /// # Errors
    ///
    /// [`Error::NotFound`](crate::Error::NotFound) when there is no customer
    /// `id`; [`Error::InvalidQuery`] naming `customer` when `id` is empty
    /// (or blank), as [`Ledger::list_source_plans`] refuses one.
    pub fn list_customer_invoices(
        &self,
        id: &str,
        limit: usize,
        offset: usize,
    ) -> Result<Page<StoredInvoice<'_>>> {
        filter_text("customer", id)?;
        if self.customer(id).is_none() {
            return Err(Error::NotFound {
                kind: "customer",
                id: id.to_string(),
            });
        }
        let invoices = self.customer_invoices(id);
        Ok(Page {
            count: invoices.len(),
            list: invoices.into_iter().skip(offset).take(limit).collect(),
        })
    }

    /// A page of [`Ledger::data_sources`], as [`Ledger::list_customers`].
    pub fn list_data_sources(&self, limit: usize, offset: usize) -> Page<&DataSource> {
        self.store.list_data_sources(limit, offset)
    }

    /// How many records of each kind: customers, plans, plan groups, invoices.
    pub fn counts(&self) -> (usize, usize, usize, usize) {
        self.store.counts()
    }

    /// One record of a collection as JSON, in the record's output shape: a
    /// plan group as [`Ledger::plan_group_view`] shows it, its plans as
    /// objects; the others as stored.
    ///
    /// # Errors
    ///
    /// [`Error::NotFound`](crate::Error::NotFound) naming the record kind and id when there is no such
    /// record.
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
    /// let invoice = ledger.get(RecordKind::Invoices, "inv-1")?;
    /// assert_eq!(invoice["amount"], 5000);
    /// let missing = ledger.get(RecordKind::Customers, "nobody").unwrap_err();
    /// assert_eq!(missing.to_string(), "customer nobody not found");
    /// # Ok::<(), submetrics::Error>(())
    /// ```
    pub fn get(&self, kind: RecordKind, id: &str) -> Result<Value> {
        self.store.get(kind, id)
    }

    /// A page `{count, list}` of a collection in insertion order, as JSON:
    /// at most `limit` records after skipping `offset`, and the count of all,
    /// each in its output shape as [`Ledger::get`] answers it.
    ///
    /// # Errors
    ///
    /// None: an offset past the end gives an empty list.
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
    /// let page = ledger.list(RecordKind::Customers, Ledger::DEFAULT_LIST_LIMIT, 0);
    /// assert_eq!(page["count"], 1);
    /// assert_eq!(page["list"][0]["id"], "acme");
    /// assert_eq!(ledger.list(RecordKind::Customers, 10, 5)["list"], json!([]));
    /// ```
    pub fn list(&self, kind: RecordKind, limit: usize, offset: usize) -> Value {
        self.store.list(kind, limit, offset)
    }

    /// The day a report parameter names in this ledger: a date as it is, an
    /// ISO instant as its day in the ledger's time zone (what bindings send
    /// for a datetime or `Date` parameter).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidQuery`](crate::Error::InvalidQuery) naming `param` when `text` is neither a date nor an ISO instant,
    /// or names a day outside the years 1900 to 2200.
    pub fn param_day(&self, param: &str, text: &str) -> Result<NaiveDate> {
        local_day(param, text, self.settings())
    }
}

/// Refuses an empty (or blank) value of the text filter `name` of a
/// listing, with the error reports give an empty parameter.
fn filter_text(name: &str, value: &str) -> Result<()> {
    if value.trim().is_empty() {
        return Err(Error::query(name, crate::query::EMPTY_VALUE));
    }
    Ok(())
}
