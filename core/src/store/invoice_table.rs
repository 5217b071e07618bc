//! The stored invoices: records in insertion order in one vector, their ids
//! in one text buffer beside it, found by id through an index of positions.
//! A bulk load hashes the ids on every core.

use super::position_index::{PositionIndex, bucket_bits, group_by_bucket};
use crate::ids::PackedIds;
use crate::model::{Invoice, InvoiceRecord, StoredInvoice};
use foldhash::fast::FixedState;
use rayon::prelude::*;
use std::hash::BuildHasher;

/// Invoices by position (insertion order) and by id. A table holds at most
/// 3,221,225,471 invoices (what its index can; see `PositionIndex`) whose
/// ids take at most 4 GiB together (see `PackedIds`).
///
/// Ids are written once, in position order, end to end; replacing an
/// invoice keeps its id, and removing invoices compacts the ids in the
/// same pass that compacts the records.
#[derive(Debug, Default, Clone)]
pub(crate) struct InvoiceTable {
    records: Vec<InvoiceRecord>,
    /// Every invoice's id, at its position.
    ids: PackedIds,
    index: PositionIndex,
}

/// Batches larger than this hash their ids on every core.
const PARALLEL_BATCH: usize = 256;

/// Batches of at least this many invoices are resolved in hash order (see
/// [`InvoiceTable::resolve`]); smaller ones probe the index record by
/// record. Unit tests lower it so their small batches take both ways.
const SORTED_BATCH: usize = if cfg!(test) { 8 } else { 4096 };

/// The fewest probes one task of a parallel resolve makes.
const PROBES_PER_TASK: usize = 4096;

impl InvoiceTable {
    pub(crate) fn len(&self) -> usize {
        self.records.len()
    }

    /// Every invoice in insertion order.
    pub(crate) fn iter(&self) -> impl ExactSizeIterator<Item = StoredInvoice<'_>> + Clone {
        (0..self.records.len()).map(|p| StoredInvoice::packed(&self.ids, p, &self.records[p]))
    }

    pub(crate) fn get(&self, id: &str) -> Option<StoredInvoice<'_>> {
        self.position_of(id).and_then(|p| self.at(p))
    }

    pub(crate) fn at(&self, position: u32) -> Option<StoredInvoice<'_>> {
        let p = position as usize;
        let record = self.records.get(p)?;
        Some(StoredInvoice::packed(&self.ids, p, record))
    }

    /// The id of the invoice at `p`, which must be stored.
    fn id_at(&self, p: usize) -> &str {
        self.ids.get(p)
    }

    pub(crate) fn position_of(&self, id: &str) -> Option<u32> {
        self.index
            .find(hash_id(id), |p| self.id_at(p as usize) == id)
    }

    /// Makes room for `additional` more invoices without growing step by
    /// step, when the memory is there. A reservation is a hint (a file's
    /// stated row count, an estimate), so one the allocator refuses is
    /// dropped and the table grows as records come.
    pub(crate) fn reserve(&mut self, additional: usize) {
        if self.records.try_reserve(additional).is_err() || !self.ids.try_reserve(additional) {
            return;
        }
        self.make_index_room(self.records.len() + additional);
    }

    /// Grows the index to room for `total` invoices when it has less,
    /// hashing every stored id again (the index keeps only a few bits of
    /// each hash).
    fn make_index_room(&mut self, total: usize) {
        if !self.index.has_room_for(total) {
            let ids = &self.ids;
            let hashes = (0..ids.len()).map(|p| hash_id(ids.get(p)));
            self.index.rebuild(total, hashes.zip(0..));
        }
    }

    /// Stores an invoice: a known id is replaced in place, keeping its
    /// position. Returns the position and the record replaced.
    #[cfg(test)]
    pub(crate) fn insert(&mut self, invoice: Invoice) -> (u32, Option<InvoiceRecord>) {
        let hash = hash_id(invoice.id.as_str());
        self.make_index_room(self.records.len() + 1);
        self.insert_hashed(invoice, hash)
    }

    /// Stores a batch in order, exactly as inserting one by one would (a
    /// later record of an id replaces the earlier one in place), calling
    /// `each` with the table, the position and the replaced record after
    /// each invoice is stored.
    ///
    /// A batch of [`SORTED_BATCH`] or more resolves its ids first (see
    /// [`InvoiceTable::resolve`]) and adds its new ids to the index only
    /// once every record is stored, so `each` must not look ids up.
    pub(crate) fn insert_batch(
        &mut self,
        batch: Vec<Invoice>,
        mut each: impl FnMut(&Self, u32, Option<InvoiceRecord>),
    ) {
        let hash = |invoice: &Invoice| hash_id(invoice.id.as_str());
        let hashes: Vec<u64> = if batch.len() > PARALLEL_BATCH {
            batch.par_iter().map(hash).collect()
        } else {
            batch.iter().map(hash).collect()
        };
        self.make_index_room(self.records.len() + batch.len());
        self.records.reserve(batch.len());
        self.reserve_ids(&batch);
        if batch.len() < SORTED_BATCH {
            for (invoice, hash) in batch.into_iter().zip(hashes) {
                let (position, previous) = self.insert_hashed(invoice, hash);
                each(self, position, previous);
            }
            return;
        }
        let Resolved { positions, added } = self.resolve(&batch, &hashes);
        for (invoice, position) in batch.into_iter().zip(positions) {
            let (id, record) = invoice.into_parts();
            let previous = if position as usize == self.records.len() {
                self.ids.push(id.as_str());
                self.records.push(record);
                None
            } else {
                Some(std::mem::replace(
                    &mut self.records[position as usize],
                    record,
                ))
            };
            each(self, position, previous);
        }
        self.index.add_each(&added);
    }

    /// Makes room in the id buffer for at least the batch's ids. When it
    /// must grow, it grows to the ids of every invoice the records have
    /// room for (as many as a bulk load reserved), at the batch's average
    /// length, so it is not copied again at each doubling.
    fn reserve_ids(&mut self, batch: &[Invoice]) {
        let batch_bytes: usize = batch.iter().map(|invoice| invoice.id.as_str().len()).sum();
        let records_room = self.records.capacity() - self.records.len();
        let average = batch_bytes.div_ceil(batch.len().max(1));
        self.ids
            .reserve(batch.len(), batch_bytes, average * records_room);
    }

    /// Where each invoice of a batch goes: the position of a stored id,
    /// else of the id's first record in the batch, else the next free one,
    /// handed out in batch order. The batch's ids are probed in the order
    /// of their hashes, on every core, so the probes walk the index front
    /// to back instead of missing the cache once an invoice; records of one
    /// id have equal hashes, so they sit together in that order.
    fn resolve(&self, batch: &[Invoice], hashes: &[u64]) -> Resolved {
        let order = hash_order(hashes);
        let id = |i: u32| batch[i as usize].id.as_str();
        // An empty table stores none of them (a first bulk load).
        let found: Vec<u32> = if self.records.is_empty() {
            Vec::new()
        } else {
            let is_key = |&(_, i): &(u64, u32), p: u32| self.id_at(p as usize) == id(i);
            order
                .par_chunks(PROBES_PER_TASK)
                .flat_map_iter(|probes| self.index.find_each(probes, |&(hash, _)| hash, is_key))
                .map(|known| known.unwrap_or(NOT_STORED))
                .collect()
        };
        // By batch index: the batch index of the id's first record, and
        // for a first record the stored position of its id, then its
        // position.
        let mut first: Vec<u32> = vec![0; batch.len()];
        let mut positions: Vec<u32> = vec![NOT_STORED; batch.len()];
        let mut run_start = 0;
        for (s, &(hash, i)) in order.iter().enumerate() {
            if order[run_start].0 != hash {
                run_start = s;
            }
            let earlier = order[run_start..s].iter().find(|&&(_, j)| id(j) == id(i));
            first[i as usize] = earlier.map_or(i, |&(_, j)| j);
            if let Some(&found) = found.get(s) {
                positions[i as usize] = found;
            }
        }
        let stored = self.records.len() as u32;
        let mut next = stored;
        for i in 0..batch.len() {
            let first = first[i] as usize;
            if first != i {
                positions[i] = positions[first];
            } else if positions[i] == NOT_STORED {
                positions[i] = next;
                next += 1;
            }
        }
        let mut added = order;
        added.retain(|&(_, i)| first[i as usize] == i && positions[i as usize] >= stored);
        for entry in &mut added {
            entry.1 = positions[entry.1 as usize];
        }
        Resolved { positions, added }
    }

    fn insert_hashed(&mut self, invoice: Invoice, hash: u64) -> (u32, Option<InvoiceRecord>) {
        let (id, record) = invoice.into_parts();
        let id = id.as_str();
        let known = self.index.find(hash, |p| self.id_at(p as usize) == id);
        match known {
            Some(position) => {
                let previous = std::mem::replace(&mut self.records[position as usize], record);
                (position, Some(previous))
            }
            None => {
                let position = self.records.len() as u32;
                self.ids.push(id);
                self.records.push(record);
                self.index.add(hash, position);
                (position, None)
            }
        }
    }

    /// Removes the invoices at the given ascending positions, keeping the
    /// others in order (each later position moves down by the number
    /// removed before it). Costs one pass over the table and its ids; only
    /// the ids the index moves back are hashed.
    pub(crate) fn remove_positions(&mut self, removed: &[u32]) {
        let ids = &self.ids;
        let hash_at = |p: u32| hash_id(ids.get(p as usize));
        for &position in removed {
            if (position as usize) < ids.len() {
                self.index.remove(hash_at(position), position, hash_at);
            }
        }
        self.ids
            .retain(|p| removed.binary_search(&(p as u32)).is_err());
        let mut position = 0u32;
        self.records.retain(|_| {
            let keep = removed.binary_search(&position).is_err();
            position += 1;
            keep
        });
        self.index
            .renumber(|p| p - removed.partition_point(|&r| r < p) as u32);
    }
}

/// Where [`InvoiceTable::resolve`] puts a batch: each invoice's position,
/// in batch order, and the new ids' (hash, position) in hash order.
struct Resolved {
    positions: Vec<u32>,
    added: Vec<(u64, u32)>,
}

/// What a probe finds for an id not stored.
const NOT_STORED: u32 = u32::MAX;

/// The (hash, index) of each of `hashes`, ordered by hash, then index: a
/// counting sort on the hashes' top bits (about one bucket for every four
/// hashes) and a sort of each small bucket.
fn hash_order(hashes: &[u64]) -> Vec<(u64, u32)> {
    let bits = bucket_bits(hashes.len());
    let shift = u64::BITS - bits;
    let pairs: Vec<(u64, u32)> = hashes.iter().copied().zip(0..).collect();
    let (mut order, starts) =
        group_by_bucket(&pairs, 1 << bits, |&(hash, _)| (hash >> shift) as usize);
    for bounds in starts.windows(2) {
        order[bounds[0]..bounds[1]].sort_unstable();
    }
    order
}

pub(super) fn hash_id(id: &str) -> u64 {
    FixedState::default().hash_one(id)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    fn invoice(id: &str, amount: i64) -> Invoice {
        Invoice::from_json(&json!({
            "id": id, "customer_id": "c", "type": "one_time",
            "invoice_date": "2024-01-01", "amount": amount, "currency": "USD",
        }))
        .unwrap()
    }

    /// What a table must hold after the operations: (id, amount) in order.
    fn contents(table: &InvoiceTable) -> Vec<(String, i64)> {
        table
            .iter()
            .map(|i| (i.id().to_string(), i.amount))
            .collect()
    }

    #[derive(Debug, Clone)]
    enum Op {
        Insert(u8, i64),
        Batch(Vec<(u8, i64)>),
        Remove(Vec<u8>),
        /// Room for this many more, which sizes the index to an odd count.
        Reserve(usize),
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            (0u8..40, 0i64..100).prop_map(|(id, amount)| Op::Insert(id, amount)),
            proptest::collection::vec((0u8..40, 0i64..100), 0..300).prop_map(Op::Batch),
            proptest::collection::vec(0u8..40, 0..4).prop_map(Op::Remove),
            (0usize..100).prop_map(|n| Op::Reserve(2 * n + 1)),
        ]
    }

    /// Ids of several lengths.
    fn id_text(id: u8) -> String {
        if id.is_multiple_of(2) {
            format!("inv_{id}")
        } else {
            format!("invoice-number-{id}")
        }
    }

    proptest! {
        /// The table behaves like a list of (id, amount) where a known id
        /// is replaced in place and removals keep the order of the rest.
        #[test]
        fn behaves_like_an_ordered_list_of_unique_ids(ops in proptest::collection::vec(op(), 1..12)) {
            let mut table = InvoiceTable::default();
            let mut model: Vec<(String, i64)> = Vec::new();
            let upsert = |model: &mut Vec<(String, i64)>, id: String, amount: i64| {
                match model.iter().position(|(known, _)| *known == id) {
                    Some(p) => model[p].1 = amount,
                    None => model.push((id, amount)),
                }
            };
            for op in ops {
                match op {
                    Op::Insert(id, amount) => {
                        let id = id_text(id);
                        let before = model.iter().position(|(known, _)| *known == id);
                        let (position, previous) = table.insert(invoice(&id, amount));
                        prop_assert_eq!(before.is_some(), previous.is_some());
                        let replaced = before.map(|p| model[p].1);
                        prop_assert_eq!(previous.map(|p| p.amount), replaced);
                        prop_assert_eq!(position as usize, before.unwrap_or(model.len()));
                        upsert(&mut model, id, amount);
                    }
                    Op::Batch(records) => {
                        let batch: Vec<Invoice> = records
                            .iter()
                            .map(|(id, amount)| invoice(&id_text(*id), *amount))
                            .collect();
                        let mut seen = Vec::new();
                        table.insert_batch(batch, |table, position, previous| {
                            let stored = table.at(position).unwrap();
                            seen.push((stored.id().to_string(), stored.amount, previous.map(|p| p.amount)));
                        });
                        for ((id, amount), (seen_id, seen_amount, replaced)) in records.iter().zip(&seen) {
                            let id = id_text(*id);
                            let known = model.iter().find(|(known, _)| *known == id);
                            prop_assert_eq!(*replaced, known.map(|(_, amount)| *amount));
                            prop_assert_eq!((&id, amount), (seen_id, seen_amount));
                            upsert(&mut model, id, *amount);
                        }
                        prop_assert_eq!(seen.len(), records.len());
                    }
                    Op::Remove(ids) => {
                        let mut positions: Vec<u32> = ids
                            .iter()
                            .filter_map(|&id| table.position_of(&id_text(id)))
                            .collect();
                        positions.sort_unstable();
                        positions.dedup();
                        table.remove_positions(&positions);
                        model.retain(|(id, _)| !ids.iter().any(|r| *id == id_text(*r)));
                    }
                    Op::Reserve(additional) => table.reserve(additional),
                }
                prop_assert_eq!(contents(&table), model.clone());
                let copy = table.clone();
                drop(table);
                prop_assert_eq!(contents(&copy), model.clone());
                table = copy;
                for (position, (id, amount)) in model.iter().enumerate() {
                    prop_assert_eq!(table.position_of(id), Some(position as u32));
                    prop_assert_eq!(table.get(id).map(|i| i.amount), Some(*amount));
                }
                prop_assert_eq!(table.get("inv_absent"), None);
            }
        }
    }

    proptest! {
        /// A batch stores exactly as inserting its invoices one by one
        /// would: the same positions, replaced records and contents, with
        /// ids repeated in the batch and ids stored before.
        #[test]
        fn a_batch_stores_as_one_by_one_inserts(
            stored in proptest::collection::vec((0u8..60, 0i64..100), 0..40),
            batch in proptest::collection::vec((0u8..60, 0i64..100), 0..200),
            reserve in any::<bool>(),
        ) {
            let mut batched = InvoiceTable::default();
            for (id, amount) in &stored {
                batched.insert(invoice(&id_text(*id), *amount));
            }
            if reserve {
                batched.reserve(batch.len());
            }
            let mut single = batched.clone();
            let mut seen = Vec::new();
            let invoices = batch.iter().map(|(id, amount)| invoice(&id_text(*id), *amount));
            batched.insert_batch(invoices.collect(), |table, position, previous| {
                let stored = table.at(position).map(|i| (i.id().to_string(), i.amount));
                seen.push((position, previous.map(|p| p.amount), stored));
            });
            let mut expected = Vec::new();
            for (id, amount) in &batch {
                let (position, previous) = single.insert(invoice(&id_text(*id), *amount));
                let stored = single.at(position).map(|i| (i.id().to_string(), i.amount));
                expected.push((position, previous.map(|p| p.amount), stored));
            }
            prop_assert_eq!(seen, expected);
            prop_assert_eq!(contents(&batched), contents(&single));
            for id in 0..60 {
                let id = id_text(id);
                prop_assert_eq!(batched.position_of(&id), single.position_of(&id));
            }
        }

        /// Hash order is the order of (hash, index), whatever the spread
        /// of the hashes.
        #[test]
        fn hash_order_sorts_by_hash_then_index(
            hashes in proptest::collection::vec(
                prop_oneof![0u64..4, any::<u64>(), (0u64..4).prop_map(|h| u64::MAX - h)],
                0..300,
            ),
        ) {
            let mut expected: Vec<(u64, u32)> = hashes.iter().copied().zip(0..).collect();
            expected.sort_unstable();
            prop_assert_eq!(hash_order(&hashes), expected);
        }
    }

    #[test]
    fn distinct_ids_of_equal_hashes_resolve_by_their_text() {
        let mut table = InvoiceTable::default();
        table.reserve(10);
        let batch: Vec<Invoice> = ["a", "b", "a", "c", "b"]
            .into_iter()
            .map(|id| invoice(id, 0))
            .collect();
        let Resolved { positions, added } = table.resolve(&batch, &[7; 5]);
        assert_eq!(positions, vec![0, 1, 0, 2, 1]);
        assert_eq!(added, vec![(7, 0), (7, 1), (7, 2)]);
    }

    #[test]
    fn an_empty_table_stores_a_batch_of_distinct_ids_in_order() {
        let mut table = InvoiceTable::default();
        let batch: Vec<Invoice> = (0..1000).map(|k| invoice(&format!("inv_{k}"), k)).collect();
        let mut positions = Vec::new();
        table.insert_batch(batch, |_, position, previous| {
            assert!(previous.is_none());
            positions.push(position);
        });
        assert_eq!(positions, (0..1000).collect::<Vec<u32>>());
        assert_eq!(table.position_of("inv_999"), Some(999));
        assert_eq!(table.get("inv_500").map(|i| i.amount), Some(500));
    }

    #[test]
    fn a_table_that_reserved_room_keeps_it_for_a_smaller_batch() {
        let mut table = InvoiceTable::default();
        table.reserve(5000);
        table.insert_batch(vec![invoice("a", 1), invoice("b", 2)], |_, _, _| {});
        assert!(table.records.capacity() >= 5000);
        assert_eq!(contents(&table), vec![("a".into(), 1), ("b".into(), 2)]);
    }

    #[test]
    fn the_id_buffer_grows_to_the_ids_the_records_have_room_for() {
        let mut table = InvoiceTable::default();
        table.reserve(5000);
        let room = table.records.capacity();
        // Ids of 6 and 8 bytes: 7 bytes on average, rounded up.
        table.insert_batch(
            vec![invoice("inv_01", 1), invoice("inv_0002", 2)],
            |_, _, _| {},
        );
        assert!(table.ids.text_capacity() >= 7 * (room - 2));
        let grown = table.ids.text_capacity();
        let batch: Vec<Invoice> = (0..1000).map(|k| invoice(&format!("i{k:05}"), k)).collect();
        table.insert_batch(batch, |_, _, _| {});
        assert_eq!(table.ids.text_capacity(), grown);
        assert_eq!(table.position_of("i00999"), Some(1001));
    }

    #[test]
    fn a_repeated_id_in_a_batch_into_an_empty_table_replaces_the_first() {
        let mut table = InvoiceTable::default();
        let batch = vec![invoice("a", 1), invoice("b", 2), invoice("a", 3)];
        let mut seen = Vec::new();
        table.insert_batch(batch, |_, position, previous| {
            seen.push((position, previous.map(|p| p.amount)));
        });
        assert_eq!(seen, vec![(0, None), (1, None), (0, Some(1))]);
        assert_eq!(contents(&table), vec![("a".into(), 3), ("b".into(), 2)]);
    }

    #[test]
    fn removing_renumbers_the_positions_after_it() {
        let mut table = InvoiceTable::default();
        for (k, id) in ["a", "b", "c", "d"].into_iter().enumerate() {
            table.insert(invoice(id, k as i64));
        }
        table.remove_positions(&[0, 2]);
        assert_eq!(contents(&table), vec![("b".into(), 1), ("d".into(), 3)]);
        assert_eq!(table.position_of("d"), Some(1));
        assert_eq!(table.position_of("c"), None);
    }
}
