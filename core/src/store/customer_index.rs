//! The customers' ids in the customer map's order, indexed by hash: what
//! resolving the customers of a large batch of invoices reads.
//!
//! The map finds a customer by reading its entry and its key's text, which
//! lie among all the customer records. Invoices in date order (as billing
//! platforms export them) name another customer nearly every time, so one
//! lookup at a time missed the cache about four times an invoice. This
//! index finds a batch's customers in two ordered passes instead:
//! candidate positions from the slots with the ids grouped by hash, then
//! the ids checked grouped by position, so both walk memory front to back
//! (a counting sort groups them, for less than a full sort).

use super::invoice_table::hash_id;
use super::position_index::{PositionIndex, bucket_bits, group_by_bucket};
use crate::ids::CustomerId;
use rayon::prelude::*;

/// Each customer's id at its index in the customer map, and an index from
/// id hashes to those positions. At most 3,221,225,471 customers (what the
/// index holds).
#[derive(Debug, Clone, Default)]
pub(crate) struct CustomerIndex {
    /// Clones of the map's keys, in its order.
    ids: Vec<CustomerId>,
    index: PositionIndex,
}

impl CustomerIndex {
    /// Makes room for `additional` more customers; a hint, dropped when the
    /// allocator refuses it.
    pub(super) fn reserve(&mut self, additional: usize) {
        if self.ids.try_reserve(additional).is_ok() {
            self.make_room(self.ids.len() + additional);
        }
    }

    /// Grows the index to room for `total` ids when it has less.
    fn make_room(&mut self, total: usize) {
        if !self.index.has_room_for(total) {
            let hashes = self.ids.iter().map(|id| hash_id(id.as_str()));
            self.index.rebuild(total, hashes.zip(0..));
        }
    }

    /// Adds the id of a customer the map just appended.
    pub(super) fn push(&mut self, id: CustomerId) {
        self.make_room(self.ids.len() + 1);
        self.index.add(hash_id(id.as_str()), self.ids.len() as u32);
        self.ids.push(id);
    }

    /// Starts again from the map's keys, in its order: after a customer
    /// left the map and every later one moved down a place.
    pub(super) fn rebuild(&mut self, ids: impl Iterator<Item = CustomerId>) {
        self.ids = ids.collect();
        self.index = PositionIndex::default();
        self.make_room(self.ids.len());
    }

    /// The index of the customer `id` in the map, and its stored id.
    fn find(&self, id: &str) -> Option<(usize, CustomerId)> {
        let position = self
            .index
            .find(hash_id(id), |p| self.ids[p as usize].as_str() == id)?;
        Some((position as usize, self.ids[position as usize].clone()))
    }

    /// For each of `named`, in order, the index and stored id of the
    /// customer it names (`None` when there is none, or no name). Each run
    /// of one shared id (what a bulk reader hands out for a customer's
    /// consecutive invoices) is looked up once. The first position whose
    /// fingerprint matches is each id's candidate, found with the ids
    /// grouped by the top bits of their hashes; the candidates are checked
    /// grouped by position, and one that is another id's is looked up
    /// again on its own.
    pub(super) fn find_all(
        &self,
        named: &[Option<CustomerId>],
    ) -> Vec<Option<(usize, CustomerId)>> {
        let repeats = |i: usize| {
            i > 0 && matches!((&named[i - 1], &named[i]), (Some(a), Some(b)) if a.shares(b))
        };
        let hashed: Vec<(u64, u32)> = named
            .par_iter()
            .enumerate()
            .filter(|&(i, _)| !repeats(i))
            .filter_map(|(i, id)| Some((hash_id(id.as_ref()?.as_str()), i as u32)))
            .collect();
        let bits = bucket_bits(hashed.len());
        let hash_shift = u64::BITS - bits;
        let (by_hash, _) = group_by_bucket(&hashed, 1 << bits, |&(hash, _)| {
            (hash >> hash_shift) as usize
        });
        let candidates = self
            .index
            .find_each(&by_hash, |&(hash, _)| hash, |_, _| true);
        let candidates: Vec<(u32, u32)> = by_hash
            .iter()
            .zip(candidates)
            .filter_map(|(&(_, i), candidate)| candidate.map(|p| (p, i)))
            .collect();
        let position_shift = (usize::BITS - self.ids.len().leading_zeros()).saturating_sub(bits);
        let (by_position, _) = group_by_bucket(
            &candidates,
            (self.ids.len() >> position_shift) + 1,
            |&(p, _)| (p >> position_shift) as usize,
        );
        let checked: Vec<(u32, Option<(usize, CustomerId)>)> = by_position
            .par_iter()
            .filter_map(|&(p, i)| {
                let id = named[i as usize].as_ref()?.as_str();
                let stored = &self.ids[p as usize];
                let found = if stored.as_str() == id {
                    Some((p as usize, stored.clone()))
                } else {
                    self.find(id)
                };
                Some((i, found))
            })
            .collect();
        let mut found = vec![None; named.len()];
        for (i, customer) in checked {
            found[i as usize] = customer;
        }
        for i in 1..named.len() {
            if repeats(i) {
                found[i] = found[i - 1].clone();
            }
        }
        found
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The ids `c0`.. of `count` customers, pushed one by one.
    fn pushed(count: usize) -> (CustomerIndex, Vec<CustomerId>) {
        let mut index = CustomerIndex::default();
        let ids: Vec<CustomerId> = (0..count)
            .map(|i| CustomerId::from(format!("c{i}").as_str()))
            .collect();
        for id in &ids {
            index.push(id.clone());
        }
        (index, ids)
    }

    #[test]
    fn finds_each_id_at_its_place_through_growth_and_rebuilds() {
        let (mut index, stored) = pushed(1000);
        let position = |index: &CustomerIndex, id: &str| index.find(id).map(|(p, _)| p);
        for (i, id) in stored.iter().enumerate() {
            let (found, shared) = index.find(id.as_str()).unwrap();
            assert_eq!(found, i);
            assert!(shared.shares(id));
        }
        assert_eq!(position(&index, "c1000"), None);
        // The map dropped `c3`: every later customer moved down a place.
        index.rebuild(stored.iter().filter(|id| id.as_str() != "c3").cloned());
        assert_eq!(position(&index, "c3"), None);
        assert_eq!(position(&index, "c2"), Some(2));
        assert_eq!(position(&index, "c4"), Some(3));
        assert_eq!(position(&index, "c999"), Some(998));
        index.reserve(5000);
        assert_eq!(position(&index, "c999"), Some(998));
    }

    #[test]
    fn a_batch_finds_what_one_at_a_time_finds() {
        let (index, stored) = pushed(3000);
        // Stored ids in a scattered order, repeats, unknown ids, gaps, and
        // runs of one shared id (stored or not).
        let unknown = CustomerId::from("unknown");
        let named: Vec<Option<CustomerId>> = (0..5000)
            .map(|k| match k % 7 {
                0 => None,
                1 => Some(CustomerId::from(format!("x{k}").as_str())),
                _ if k % 100 < 5 => Some(unknown.clone()),
                _ if k % 100 < 10 => Some(stored[42].clone()),
                _ => Some(stored[(k * 7919) % 3000].clone()),
            })
            .collect();
        let found = index.find_all(&named);
        let expected: Vec<Option<(usize, CustomerId)>> = named
            .iter()
            .map(|id| index.find(id.as_ref()?.as_str()))
            .collect();
        assert_eq!(found, expected);
        assert!(found.iter().flatten().all(|(p, id)| stored[*p].shares(id)));
        let unnamed = named.iter().filter(|id| id.is_none()).count();
        let unknown = named
            .iter()
            .flatten()
            .filter(|id| id.as_str().starts_with('x') || id.as_str() == "unknown")
            .count();
        assert_eq!(
            found.iter().filter(|f| f.is_none()).count(),
            unnamed + unknown
        );
        assert_eq!(found[6], Some((42, stored[42].clone())));
        // An unknown id whose hash matches a stored one's fingerprint on
        // its probe: a candidate the check turns down.
        let impostor = (0..10_000_000)
            .map(|k| format!("y{k}"))
            .find(|id| index.index.find(hash_id(id), |_| true).is_some())
            .expect("some id shares a fingerprint within ten million");
        let named = [Some(CustomerId::from(impostor.as_str())), named[2].clone()];
        let found = index.find_all(&named);
        assert_eq!(found[0], None, "{impostor}");
        assert_eq!(found[1], index.find(named[1].as_ref().unwrap().as_str()));
    }
}
