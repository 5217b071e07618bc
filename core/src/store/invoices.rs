//! Invoice writes: upserts checked against the stored customers and plans,
//! stored in one batch with the per-customer and per-plan indexes kept in
//! step, and deletes that keep every other invoice's order.

use super::{
    Index, InvoiceTable, PositionList, ReadInvoices, Store, WriteReport, not_found, validate,
};
use crate::error::{Error, Result};
use crate::ids::{CustomerId, PlanId};
use crate::model::{Invoice, InvoiceRecord};
use foldhash::fast::FixedState;
use rayon::prelude::*;
use serde_json::Value;
use std::collections::HashSet;
use validate::LastCustomer;

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

impl Store {
    /// Upserts invoices: each is validated on its own and against the
    /// stored customers and plans; the touched customers go stale.
    pub(crate) fn upsert_invoices(&mut self, records: &[Value]) -> WriteReport {
        let read = Store::read_invoice_values(records);
        self.store_invoices(read)
    }

    /// Upserts invoices already built in Rust (skipping JSON), with the same
    /// cross-record validation and per-record results as
    /// [`Store::upsert_invoices`].
    pub(crate) fn upsert_invoice_records(
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
    pub(super) fn store_invoices(&mut self, mut read: ReadInvoices) -> WriteReport {
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
        let check = |last: &mut LastCustomer, (i, item): (usize, &mut T)| {
            let invoice = invoice(item)?;
            validate::invoice_references(invoice, &self.customers, &self.plans, last)
                .err()
                .map(|error| (i, error))
        };
        if items.len() > 256 {
            let checked = items.par_iter_mut().enumerate();
            checked
                .map_init(LastCustomer::default, check)
                .flatten()
                .collect()
        } else {
            let mut last = LastCustomer::default();
            let checked = items.iter_mut().enumerate();
            checked.filter_map(|item| check(&mut last, item)).collect()
        }
    }

    /// Stores checked invoices in order, then marks the customers they
    /// touched stale. A known id is replaced in place (keeping its position
    /// in listings); an invoice that moved to another customer touches both.
    fn store_checked(&mut self, checked: Vec<Invoice>) {
        let mut touched: HashSet<CustomerId, FixedState> = HashSet::default();
        // The position of the invoice this batch stored last, and the index
        // of its customer.
        let mut last_stored: Option<u32> = None;
        let mut last_owner: Option<usize> = None;
        let Store {
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
            let owner = if same_customer_as_before {
                last_owner
            } else {
                list_of(&invoice.customer_id)
            };
            last_stored = Some(position);
            last_owner = owner;
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
            if let Some(owner) = owner.and_then(|owner| invoices_by_customer.get_mut(owner)) {
                add_position(owner, invoices, position);
            }
        });
        self.mark_stale(touched);
    }

    /// Deletes an invoice; its customer goes stale.
    pub(crate) fn delete_invoice(&mut self, id: &str) -> Result<()> {
        let invoice = self
            .remove_invoice_record(id)
            .ok_or_else(|| not_found(Invoice::KIND, id))?;
        self.mark_stale([invoice.customer_id]);
        Ok(())
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
    pub(super) fn remove_invoices_at(&mut self, removed: &[u32]) {
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
}
