//! Invoice writes: upserts checked against the stored customers and plans,
//! stored in one batch with the per-customer and per-plan indexes kept in
//! step, and deletes that keep every other invoice's order.

use super::position_index::group_by_bucket;
use super::{
    Index, InvoiceTable, PositionList, ReadInvoices, Store, WriteReport, not_found, validate,
};
use crate::error::{Error, Result};
use crate::ids::{CustomerId, PlanId};
use crate::model::{Invoice, InvoiceRecord};
use rayon::prelude::*;
use serde_json::Value;
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

/// A batch's changes to plan use counts, added up over each run of
/// invoices of one plan (a test by shared id) before they reach the counts.
struct PlanUses<'a> {
    uses: &'a mut Index<PlanId, usize>,
    run: Option<(PlanId, isize)>,
}

impl<'a> PlanUses<'a> {
    fn new(uses: &'a mut Index<PlanId, usize>) -> Self {
        PlanUses { uses, run: None }
    }

    fn count(&mut self, plan: Option<&PlanId>, delta: isize) {
        let Some(plan) = plan else {
            return;
        };
        match &mut self.run {
            Some((last, sum)) if last.shares(plan) => *sum += delta,
            _ => {
                self.flush();
                self.run = Some((plan.clone(), delta));
            }
        }
    }

    fn flush(&mut self) {
        if let Some((plan, sum)) = self.run.take() {
            count_plan_use(self.uses, Some(&plan), sum);
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
    let at = match positions.last() {
        Some(&last) if last < position => Err(positions.len()),
        _ => positions.binary_search(&position),
    };
    if let Err(i) = at {
        let after_previous = i == 0 || id(positions[i - 1]) < id(position);
        let before_next = positions.get(i).is_none_or(|&next| id(position) < id(next));
        let ascending = list.ids_ascending() && after_previous && before_next;
        list.insert(i, position, ascending);
    }
}

/// Batches of at least this many invoices find their customers together
/// (see `CustomerIndex::find_all`) and are checked on every core. Unit
/// tests lower it so their small batches take both ways.
const PARALLEL_CHECKS: usize = if cfg!(test) { 8 } else { 257 };

/// Batches touching at least this many runs of customers mark them stale
/// by index (see `Store::mark_stale_at`), smaller ones by id. Unit tests
/// lower it so their small batches take both ways.
const STALE_BY_INDEX: usize = if cfg!(test) { 2 } else { 1024 };

/// Batches adding at least this many positions add them on every core.
/// Unit tests lower it (and the lists per task) so their small batches
/// take both ways.
const PARALLEL_ADDITIONS: usize = if cfg!(test) { 8 } else { 4096 };

/// The lists of one task of [`add_positions`]: a task's lists are
/// contiguous, so tasks own disjoint ranges of them.
const LISTS_PER_TASK: usize = if cfg!(test) { 2 } else { 4096 };

/// Adds each `(customer index, position)` of `added` to that customer's
/// list, every customer's in the order given, and empties `added`. The
/// additions are grouped by customer first (see [`by_customer`]) and a
/// large batch works on every core, each core on its own range of
/// customers: invoices in date order name another customer nearly every
/// time, and going through the lists in order keeps their reads from
/// stalling one after the other. A list makes room for its customer's run
/// of additions at once.
fn add_positions(lists: &mut [PositionList], invoices: &InvoiceTable, added: &mut Vec<(u32, u32)>) {
    let added = by_customer(std::mem::take(added), lists.len());
    let add_range = |first: usize, lists: &mut [PositionList]| {
        let owner_below = |bound: usize| move |&(owner, _): &(u32, u32)| (owner as usize) < bound;
        let start = added.partition_point(owner_below(first));
        let end = added.partition_point(owner_below(first + lists.len()));
        for run in added[start..end].chunk_by(|a, b| a.0 == b.0) {
            let list = &mut lists[run[0].0 as usize - first];
            list.reserve(run.len());
            for &(_, position) in run {
                add_position(list, invoices, position);
            }
        }
    };
    if added.len() < PARALLEL_ADDITIONS {
        add_range(0, lists);
        return;
    }
    lists
        .par_chunks_mut(LISTS_PER_TASK)
        .enumerate()
        .for_each(|(task, lists)| add_range(task * LISTS_PER_TASK, lists));
}

/// Additions are grouped by a counting sort when there are at least
/// `additions` of them for `customers` customers (one for every eight, as
/// in a load), else sorted. Unit tests raise it so that their few
/// customers take both ways, the sort also on every core.
const COUNTED: (usize, usize) = if cfg!(test) { (4, 1) } else { (1, 8) };

/// `added` grouped by customer, each customer's additions in their order:
/// a counting sort when they are many (see [`COUNTED`]), else a stable
/// sort.
fn by_customer(mut added: Vec<(u32, u32)>, customers: usize) -> Vec<(u32, u32)> {
    let (additions, per_customers) = COUNTED;
    if added.len() * per_customers < customers * additions {
        added.par_sort_by_key(|&(owner, _)| owner);
        return added;
    }
    group_by_bucket(&added, customers, |&(owner, _)| owner as usize).0
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
        let (owners, failures) =
            self.check_references(&mut invoices, |invoice: &mut Invoice| Some(invoice));
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
        self.store_checked(invoices, owners);
        self.list_positions();
        report
    }

    /// Stores read invoices: checks their references, then stores them in
    /// the table and their customers' lists.
    pub(super) fn store_invoices(&mut self, read: ReadInvoices) -> WriteReport {
        let report = self.store_invoices_unlisted(read);
        self.list_positions();
        report
    }

    /// [`Store::store_invoices`] leaving the new positions out of their
    /// customers' lists, in `unlisted`: a stream adds those of all its
    /// chunks at its end, each list touched once, where invoices in date
    /// order would touch nearly every customer's list in every chunk.
    pub(super) fn store_invoices_unlisted(&mut self, mut read: ReadInvoices) -> WriteReport {
        let (owners, failures) =
            self.check_references(&mut read, |(_, outcome)| outcome.as_mut().ok());
        for (i, error) in failures {
            read[i].1 = Err(error);
        }
        let (report, checked) = WriteReport::split(read);
        self.store_checked(checked, owners);
        report
    }

    /// Adds the positions in `unlisted` to their customers' lists.
    pub(super) fn list_positions(&mut self) {
        add_positions(
            &mut self.invoices_by_customer,
            &self.invoices,
            &mut self.unlisted,
        );
    }

    /// The cross-record checks of a batch (see `validate`), which also share
    /// the invoices' ids with the stored records: the customer index of each
    /// invoice that passes, in order, and the failures, by index in
    /// ascending order. They only read customers and plans, so a large batch
    /// is checked on every core before anything is stored; `invoice` picks
    /// the invoice of an item, if it was read.
    fn check_references<T: Send>(
        &self,
        items: &mut [T],
        invoice: impl Fn(&mut T) -> Option<&mut Invoice> + Sync,
    ) -> (Vec<usize>, Vec<(usize, Error)>) {
        // The customer each item's invoice names, if it was read.
        let named: Vec<Option<CustomerId>> = items
            .iter_mut()
            .map(|item| invoice(item).map(|invoice| invoice.customer_id.clone()))
            .collect();
        let large = items.len() >= PARALLEL_CHECKS;
        let customers = if large {
            self.customer_index.find_all(&named)
        } else {
            let mut last = LastCustomer::default();
            let customers = &self.customers;
            let found = |name: &Option<CustomerId>| last.find(name.as_ref()?, customers);
            named.iter().map(found).collect()
        };
        let check = |(item, customer): (&mut T, Option<(usize, CustomerId)>)| {
            let checked = validate::invoice_references(invoice(item)?, customer, &self.plans);
            Some(checked.map_err(Box::new))
        };
        let checked: Vec<Option<std::result::Result<usize, Box<Error>>>> = if large {
            items.par_iter_mut().zip(customers).map(check).collect()
        } else {
            items.iter_mut().zip(customers).map(check).collect()
        };
        let mut owners = Vec::with_capacity(checked.len());
        let mut failures = Vec::new();
        for (i, checked) in checked.into_iter().enumerate() {
            match checked {
                Some(Ok(owner)) => owners.push(owner),
                Some(Err(error)) => failures.push((i, *error)),
                None => {}
            }
        }
        (owners, failures)
    }

    /// Stores checked invoices in order, then marks the customers they
    /// touched stale; `owners` holds each invoice's customer index (see
    /// `check_references`). A known id is replaced in place (keeping its
    /// position in listings); an invoice that moved to another customer
    /// touches both. New positions wait in `unlisted` for their lists (see
    /// [`Store::list_positions`]), except that those before an invoice that
    /// moved are listed before it leaves its former customer's list, so
    /// lists change in the order of the writes.
    fn store_checked(&mut self, checked: Vec<Invoice>, owners: Vec<usize>) {
        // Customer indexes, once for each run of one customer's invoices,
        // and the customers invoices moved away from.
        let mut touched: Vec<usize> = Vec::new();
        let mut moved_from = Vec::new();
        let mut last_owner = None;
        let Store {
            customers,
            invoices,
            invoices_by_customer,
            invoices_by_plan,
            unlisted,
            ..
        } = self;
        let mut plan_uses = PlanUses::new(invoices_by_plan);
        let mut owners = owners.into_iter();
        unlisted.reserve(checked.len());
        invoices.insert_batch(checked, |invoices, position, replaced| {
            let owner = owners.next();
            let Some(invoice) = invoices.at(position) else {
                return;
            };
            plan_uses.count(invoice.plan_id.as_ref(), 1);
            if owner != last_owner {
                touched.extend(owner);
                last_owner = owner;
            }
            if let Some(replaced) = replaced {
                plan_uses.count(replaced.plan_id.as_ref(), -1);
                if replaced.customer_id == invoice.customer_id {
                    return;
                }
                add_positions(invoices_by_customer, invoices, unlisted);
                if let Some(list) = customers
                    .get_index_of(&replaced.customer_id)
                    .and_then(|former| invoices_by_customer.get_mut(former))
                    && let Ok(i) = list.as_slice().binary_search(&position)
                {
                    list.remove(i);
                }
                moved_from.push(replaced.customer_id);
            }
            // Every stored invoice's customer has a record (see `validate`).
            // Customer indexes fit in 32 bits (see `CustomerIndex`).
            unlisted.extend(owner.map(|owner| (owner as u32, position)));
        });
        plan_uses.flush();
        if touched.len() >= STALE_BY_INDEX {
            self.mark_stale_at(touched);
        } else {
            touched.sort_unstable();
            touched.dedup();
            let touched: Vec<CustomerId> = touched
                .into_iter()
                .filter_map(|owner| customers.get_index(owner).map(|(id, _)| id.clone()))
                .collect();
            self.mark_stale(touched);
        }
        self.mark_stale(moved_from);
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Settings;
    use proptest::prelude::*;
    use serde_json::json;

    /// Customers `c0`..`c3` and plans `p0`, `p1` in USD, `e0` in EUR.
    fn store() -> Store {
        let mut store = Store::new(Settings::default());
        let customers: Vec<Value> = (0..4)
            .map(|c| json!({"id": format!("c{c}"), "name": format!("C{c}")}))
            .collect();
        let plans: Vec<Value> = [("p0", "USD"), ("p1", "USD"), ("e0", "EUR")]
            .into_iter()
            .map(|(id, currency)| {
                json!({"id": id, "name": id, "interval": "month", "currency": currency})
            })
            .collect();
        assert_eq!(store.upsert_customers(&customers).accepted(), 4);
        assert_eq!(store.upsert_plans(&plans).accepted(), 3);
        store.take_stale();
        store
    }

    /// An invoice of id `inv_{id}`: customer 4 does not exist, plan 3 is
    /// none (a one-time invoice) and plan 2 is in another currency.
    fn invoice((id, customer, plan, amount): (u8, u8, u8, i64)) -> Value {
        let mut invoice = json!({
            "id": format!("inv_{id}"), "customer_id": format!("c{customer}"),
            "type": "subscription", "invoice_date": "2024-01-01",
            "amount": amount, "currency": "USD",
        });
        match plan {
            3 => invoice["type"] = json!("one_time"),
            2 => invoice["plan_id"] = json!("e0"),
            _ => invoice["plan_id"] = json!(format!("p{plan}")),
        }
        invoice
    }

    fn invoices() -> impl Strategy<Value = Vec<(u8, u8, u8, i64)>> {
        proptest::collection::vec((0u8..40, 0u8..5, 0u8..4, 0i64..100), 0..120)
    }

    /// What the store holds about its invoices, and what went stale.
    fn state(store: &mut Store) -> impl PartialEq + std::fmt::Debug {
        let table: Vec<(String, String, i64)> = store
            .invoices
            .iter()
            .map(|i| (i.id().to_string(), i.customer_id.to_string(), i.amount))
            .collect();
        let lists: Vec<(Vec<u32>, bool)> = store
            .invoices_by_customer
            .iter()
            .map(|list| (list.as_slice().to_vec(), list.ids_ascending()))
            .collect();
        let mut uses: Vec<(String, usize)> = store
            .invoices_by_plan
            .iter()
            .map(|(plan, uses)| (plan.to_string(), *uses))
            .collect();
        uses.sort();
        (table, lists, uses, stale_ids(store))
    }

    /// Two copies of a store holding the invoices `before`, with nothing
    /// stale.
    fn twins(before: Vec<(u8, u8, u8, i64)>) -> (Store, Store) {
        let before: Vec<Value> = before.into_iter().map(invoice).collect();
        let mut store = store();
        store.upsert_invoices(&before);
        store.take_stale();
        let copy = store.clone();
        (store, copy)
    }

    /// The ids of the customers gone stale since the last look, sorted.
    fn stale_ids(store: &mut Store) -> Vec<String> {
        let mut stale: Vec<String> = store
            .take_stale()
            .customers
            .iter()
            .map(|c| c.to_string())
            .collect();
        stale.sort();
        stale
    }

    proptest! {
        /// Upserting a batch leaves the store as upserting its invoices one
        /// at a time does: the same invoices, customer lists, plan use
        /// counts, stale customers and per-record results, whether ids
        /// repeat in the batch, were stored before, move to another
        /// customer or fail their checks.
        #[test]
        fn a_batch_upserts_as_its_invoices_one_at_a_time(
            before in invoices(),
            batch in invoices(),
        ) {
            let batch: Vec<Value> = batch.into_iter().map(invoice).collect();
            let (mut batched, mut single) = twins(before.clone());
            let report = batched.upsert_invoices(&batch);
            let mut results = Vec::new();
            for record in &batch {
                results.extend(single.upsert_invoices(std::slice::from_ref(record)).results);
            }
            prop_assert_eq!(report.results, results);
            prop_assert_eq!(state(&mut batched), state(&mut single));
            let typed: Vec<Invoice> = batch
                .iter()
                .filter_map(|record| Invoice::from_json(record).ok())
                .collect();
            let (mut from_records, mut from_json) = twins(before);
            let accepted = from_records.upsert_invoice_records(typed).accepted();
            prop_assert_eq!(accepted, from_json.upsert_invoices(&batch).accepted());
            prop_assert_eq!(state(&mut from_records), state(&mut from_json));
        }
    }

    proptest! {
        /// A stream, which lists its invoices' positions only after its
        /// last chunk, leaves the store as upserting its chunks one after
        /// the other does, with the same reports, also when an invoice of
        /// an earlier chunk moves to another customer.
        #[test]
        fn a_stream_lists_positions_as_its_chunks_one_at_a_time_do(
            before in invoices(),
            streamed in invoices(),
            chunk in 1usize..20,
        ) {
            let streamed: Vec<Value> = streamed.into_iter().map(invoice).collect();
            let (mut stream, mut chunked) = twins(before);
            let mut reads = streamed.chunks(chunk).map(Store::read_invoice_values);
            let mut reports = Vec::new();
            let done: std::result::Result<(), ()> =
                stream.store_invoice_stream(|| Ok(reads.next()), |report| reports.push(report));
            prop_assert!(done.is_ok());
            let one_by_one: Vec<_> = streamed
                .chunks(chunk)
                .map(|records| chunked.upsert_invoices(records).results)
                .collect();
            let streamed_results: Vec<_> = reports.into_iter().map(|report| report.results).collect();
            prop_assert_eq!(streamed_results, one_by_one);
            prop_assert_eq!(state(&mut stream), state(&mut chunked));
        }
    }

    /// After a customer is deleted, every later customer moves down a
    /// place: a large batch still finds each customer at its new place and
    /// refuses the deleted one, as invoices upserted one at a time do.
    #[test]
    fn a_batch_finds_customers_after_one_is_deleted() {
        let mut store = store();
        store.delete_customer("c1").unwrap();
        let batch: Vec<Value> = (0..12).map(|i| invoice((i, i % 4, 0, 100))).collect();
        let mut single = store.clone();
        let report = store.upsert_invoices(&batch);
        assert_eq!(report.accepted(), 9);
        let mut results = Vec::new();
        for record in &batch {
            results.extend(single.upsert_invoices(std::slice::from_ref(record)).results);
        }
        assert_eq!(report.results, results);
        let lists: Vec<Vec<u32>> = store
            .invoices_by_customer
            .iter()
            .map(|list| list.as_slice().to_vec())
            .collect();
        // c0, c2 and c3, each with its own invoices' positions.
        assert_eq!(lists, [vec![0, 3, 6], vec![1, 4, 7], vec![2, 5, 8]]);
        let owner = |position: u32| store.invoices.at(position).unwrap().customer_id.to_string();
        assert_eq!(
            (owner(0), owner(1), owner(2)),
            ("c0".into(), "c2".into(), "c3".into())
        );
        assert_eq!(state(&mut store), state(&mut single));
    }

    /// Customers a large batch marked stale by index are named before a
    /// deletion moves the indexes.
    #[test]
    fn stale_marks_by_index_outlive_a_deletion() {
        let mut store = store();
        let batch: Vec<Value> = (0..4).map(|i| invoice((i, 2 + i % 2, 0, 100))).collect();
        assert_eq!(store.upsert_invoices(&batch).accepted(), 4);
        store.delete_customer("c0").unwrap();
        assert_eq!(stale_ids(&mut store), ["c0", "c2", "c3"]);
    }
}
