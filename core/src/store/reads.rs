//! Reading records: one by id, all in insertion order, a page of them, or
//! one as JSON in its output shape.

use super::{Page, RecordKind, Store};
use crate::error::{Error, Result};
use crate::model::{Customer, DataSource, Invoice, Plan, PlanGroup, PlanGroupView, StoredInvoice};
use serde_json::{Value, json};

impl Store {
    /// The customer with this id, `None` when there is none.
    pub(crate) fn customer(&self, id: &str) -> Option<&Customer> {
        self.customers.get(id)
    }
    /// The plan with this id, `None` when there is none.
    pub(crate) fn plan(&self, id: &str) -> Option<&Plan> {
        self.plans.get(id)
    }
    /// The plan group with this id, `None` when there is none.
    pub(crate) fn plan_group(&self, id: &str) -> Option<&PlanGroup> {
        self.plan_groups.get(id)
    }
    /// The plan group with this id as read, its plans' records summarized.
    pub(crate) fn plan_group_view(&self, id: &str) -> Option<PlanGroupView<'_>> {
        let group = self.plan_group(id)?;
        Some(PlanGroupView::of(group, |plan| self.plan(plan)))
    }
    /// The invoice with this id, `None` when there is none.
    pub(crate) fn invoice(&self, id: &str) -> Option<StoredInvoice<'_>> {
        self.invoices.get(id)
    }
    /// The data source with this id, `None` when there is none.
    pub(crate) fn data_source(&self, id: &str) -> Option<&DataSource> {
        self.data_sources.get(id)
    }

    /// Every customer in insertion order.
    pub(crate) fn customers(&self) -> impl ExactSizeIterator<Item = &Customer> {
        self.customers.values()
    }
    /// Every plan in insertion order (an upsert of an existing id keeps its place).
    pub(crate) fn plans(&self) -> impl ExactSizeIterator<Item = &Plan> {
        self.plans.values()
    }
    /// Every plan group in insertion order.
    pub(crate) fn plan_groups(&self) -> impl ExactSizeIterator<Item = &PlanGroup> {
        self.plan_groups.values()
    }
    /// Every invoice in insertion order.
    pub(crate) fn invoices(&self) -> impl ExactSizeIterator<Item = StoredInvoice<'_>> {
        self.invoices.iter()
    }
    /// Every data source in insertion order.
    pub(crate) fn data_sources(&self) -> impl ExactSizeIterator<Item = &DataSource> {
        self.data_sources.values()
    }

    /// The invoices of one customer, in insertion order.
    pub(crate) fn customer_invoices(&self, id: &str) -> Vec<StoredInvoice<'_>> {
        self.customers
            .get_index_of(id)
            .into_iter()
            .filter_map(|index| self.invoices_by_customer.get(index))
            .flat_map(|invoices| self.invoices_at(invoices.as_slice()))
            .collect()
    }

    /// The invoices at the given positions of the invoice table.
    pub(crate) fn invoices_at<'a>(
        &'a self,
        positions: &'a [u32],
    ) -> impl Iterator<Item = StoredInvoice<'a>> {
        positions.iter().filter_map(|&p| self.invoices.at(p))
    }

    /// A page of customers: at most `limit` records after skipping `offset`,
    /// with the total count. An offset past the end gives an empty list.
    pub(crate) fn list_customers(&self, limit: usize, offset: usize) -> Page<&Customer> {
        page(self.customers.values(), limit, offset)
    }
    /// A page of plans, as [`Store::list_customers`].
    pub(crate) fn list_plans(&self, limit: usize, offset: usize) -> Page<&Plan> {
        page(self.plans.values(), limit, offset)
    }
    /// A page of plan groups, as [`Store::list_customers`].
    pub(crate) fn list_plan_groups(&self, limit: usize, offset: usize) -> Page<&PlanGroup> {
        page(self.plan_groups.values(), limit, offset)
    }
    /// A page of invoices, as [`Store::list_customers`].
    pub(crate) fn list_invoices(&self, limit: usize, offset: usize) -> Page<StoredInvoice<'_>> {
        page(self.invoices.iter(), limit, offset)
    }
    /// A page of data sources, as [`Store::list_customers`].
    pub(crate) fn list_data_sources(&self, limit: usize, offset: usize) -> Page<&DataSource> {
        page(self.data_sources.values(), limit, offset)
    }

    /// How many records of each kind: customers, plans, plan groups, invoices.
    pub(crate) fn counts(&self) -> (usize, usize, usize, usize) {
        (
            self.customers.len(),
            self.plans.len(),
            self.plan_groups.len(),
            self.invoices.len(),
        )
    }

    /// One record of a collection as JSON, in the record's output shape;
    /// [`Error::NotFound`] naming the kind and id when there is none.
    pub(crate) fn get(&self, kind: RecordKind, id: &str) -> Result<Value> {
        let (found, name) = match kind {
            RecordKind::Customers => (self.customer(id).map(|r| json!(r)), Customer::KIND),
            RecordKind::Plans => (self.plan(id).map(|r| json!(r)), Plan::KIND),
            RecordKind::PlanGroups => (self.plan_group_view(id).map(|r| json!(r)), PlanGroup::KIND),
            RecordKind::Invoices => (self.invoice(id).map(|r| json!(r)), Invoice::KIND),
            RecordKind::DataSources => (self.data_source(id).map(|r| json!(r)), DataSource::KIND),
        };
        found.ok_or_else(|| Error::NotFound {
            kind: name,
            id: id.to_string(),
        })
    }

    /// A page `{count, list}` of a collection in insertion order, as JSON.
    pub(crate) fn list(&self, kind: RecordKind, limit: usize, offset: usize) -> Value {
        match kind {
            RecordKind::Customers => json!(self.list_customers(limit, offset)),
            RecordKind::Plans => json!(self.list_plans(limit, offset)),
            RecordKind::PlanGroups => {
                let page = self.list_plan_groups(limit, offset);
                let views = page
                    .list
                    .into_iter()
                    .map(|group| PlanGroupView::of(group, |plan| self.plan(plan)));
                json!({"count": page.count, "list": views.collect::<Vec<_>>()})
            }
            RecordKind::Invoices => json!(self.list_invoices(limit, offset)),
            RecordKind::DataSources => json!(self.list_data_sources(limit, offset)),
        }
    }
}

fn page<T>(items: impl ExactSizeIterator<Item = T>, limit: usize, offset: usize) -> Page<T> {
    let count = items.len();
    Page {
        count,
        list: items.skip(offset).take(limit).collect(),
    }
}
