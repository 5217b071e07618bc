//! The invoice table's index from id hashes to positions, in four bytes a
//! slot.

/// How many keys [`PositionIndex::find_each`] reads the home slots of
/// before probing them: enough misses in flight to keep the memory busy, few
/// enough that their cache lines are still there when probed.
const PROBE_GROUP: usize = 64;

/// How many bits of a key pick its bucket in [`group_by_bucket`] for
/// `count` keys: about four keys a bucket.
pub(super) fn bucket_bits(count: usize) -> u32 {
    (usize::BITS - count.leading_zeros())
        .saturating_sub(2)
        .max(1)
}

/// `items` grouped by their bucket (`bucket` gives one below `buckets`),
/// each bucket's items in their order, and where each bucket starts (then
/// where the last ends): a counting sort. Probing keys grouped by the top
/// bits of their hashes (their home slots), or reading records grouped by
/// position, walks memory front to back as a full sort would, for less.
pub(super) fn group_by_bucket<T: Copy>(
    items: &[T],
    buckets: usize,
    bucket: impl Fn(&T) -> usize,
) -> (Vec<T>, Vec<usize>) {
    let mut starts = vec![0usize; buckets + 1];
    for item in items {
        starts[bucket(item) + 1] += 1;
    }
    for b in 1..starts.len() {
        starts[b] += starts[b - 1];
    }
    let mut grouped = items.to_vec();
    let mut cursors = starts.clone();
    for item in items {
        let cursor = &mut cursors[bucket(item)];
        grouped[*cursor] = *item;
        *cursor += 1;
    }
    (grouped, starts)
}

/// An open-addressing index from id hashes to positions, probed linearly.
///
/// The hash's upper 32 bits pick the home slot, scaled to the slot count
/// (which need not be a power of two, so an index reserved for a known
/// count is sized to it). A slot holds the position plus one in its low
/// `position_bits` bits, so 0 is an empty slot, and the hash's lowest bits
/// above them as a fingerprint: a probe compares ids only where the
/// fingerprint matches. The more slots, the more bits a position needs and
/// the fewer the fingerprint keeps: 8 at 13.3M slots (10M invoices), none
/// from 2^31 slots on, where every probe compares ids. At most three
/// quarters of the slots are used, so an index holds at most 3,221,225,471
/// entries.
///
/// The fingerprint does not say where an entry's probe starts: growing and
/// removing read the entries' hashes again from their owner.
#[derive(Debug, Clone, Default)]
pub(super) struct PositionIndex {
    slots: Vec<u32>,
    /// Enough bits for any position plus one below the slot count.
    position_bits: u32,
}

impl PositionIndex {
    /// Whether `total` entries fit within the load limit.
    pub(super) fn has_room_for(&self, total: usize) -> bool {
        total * 4 <= self.slots.len() * 3
    }

    /// Replaces the index with one that has room for `total` entries and
    /// holds `entries` (hash, position), each known to be distinct: exactly
    /// that room when asked for more than twice the slots (a bulk load's
    /// reservation), else twice the slots, so entries added one by one
    /// cost amortized constant time.
    pub(super) fn rebuild(&mut self, total: usize, entries: impl Iterator<Item = (u64, u32)>) {
        let wanted = (total * 4 / 3 + 1)
            .max(2 * self.slots.len())
            .clamp(16, u32::MAX as usize);
        self.slots = vec![0; wanted];
        self.position_bits = usize::BITS - wanted.leading_zeros();
        for (hash, position) in entries {
            self.add(hash, position);
        }
    }

    /// The hash's fingerprint, in the bits of a slot above the position.
    fn fingerprint(&self, hash: u64) -> u32 {
        (u64::from(hash as u32) << self.position_bits) as u32
    }

    fn position_mask(&self) -> u32 {
        ((1u64 << self.position_bits) - 1) as u32
    }

    fn slot_of(&self, hash: u64, position: u32) -> u32 {
        self.fingerprint(hash) | (position + 1)
    }

    fn position(&self, slot: u32) -> u32 {
        (slot & self.position_mask()) - 1
    }

    /// The slot a hash's probe starts at: its upper half scaled to the slot
    /// count, so hashes spread evenly over any number of slots.
    fn home(&self, hash: u64) -> usize {
        (((hash >> 32) * self.slots.len() as u64) >> 32) as usize
    }

    /// The slot after `i`, wrapping around at the end.
    fn next(&self, i: usize) -> usize {
        if i + 1 == self.slots.len() { 0 } else { i + 1 }
    }

    /// How many slots a probe walks from `from` to reach `to`, wrapping.
    fn distance(&self, from: usize, to: usize) -> usize {
        if to >= from {
            to - from
        } else {
            to + self.slots.len() - from
        }
    }

    /// The first empty slot at or after the home slot of `hash`.
    fn first_free_slot(&self, hash: u64) -> usize {
        let mut i = self.home(hash);
        while self.slots[i] != 0 {
            i = self.next(i);
        }
        i
    }

    /// The position of the entry with this hash for which `is_key` holds.
    pub(super) fn find(&self, hash: u64, is_key: impl Fn(u32) -> bool) -> Option<u32> {
        if self.slots.is_empty() {
            return None;
        }
        let fingerprint = self.fingerprint(hash);
        let fingerprint_mask = !self.position_mask();
        let mut i = self.home(hash);
        loop {
            let slot = self.slots[i];
            if slot == 0 {
                return None;
            }
            if slot & fingerprint_mask == fingerprint && is_key(self.position(slot)) {
                return Some(self.position(slot));
            }
            i = self.next(i);
        }
    }

    /// [`PositionIndex::find`] for each of `keys`, whose hashes `hash`
    /// gives. The home slots of each group of [`PROBE_GROUP`] keys are read
    /// in one pass before any is probed, so their cache misses (about one a
    /// key in a large index) overlap instead of following one another; a
    /// key whose home slot is empty is absent without a second look.
    pub(super) fn find_each<K>(
        &self,
        keys: &[K],
        hash: impl Fn(&K) -> u64,
        is_key: impl Fn(&K, u32) -> bool,
    ) -> Vec<Option<u32>> {
        let mut found = Vec::with_capacity(keys.len());
        let mut homes = [0u32; PROBE_GROUP];
        for group in keys.chunks(PROBE_GROUP) {
            for (home, key) in homes.iter_mut().zip(group) {
                *home = self.slots.get(self.home(hash(key))).copied().unwrap_or(0);
            }
            for (&home, key) in homes.iter().zip(group) {
                found.push(if home == 0 {
                    None
                } else {
                    self.find(hash(key), |p| is_key(key, p))
                });
            }
        }
        found
    }

    /// Adds an entry known to be absent; there must be room for it.
    pub(super) fn add(&mut self, hash: u64, position: u32) {
        let free = self.first_free_slot(hash);
        self.slots[free] = self.slot_of(hash, position);
    }

    /// Adds entries known to be absent, each id once; there must be room
    /// for them. As in [`PositionIndex::find_each`], the home slots of each
    /// group are read in one pass before any entry is added, so their cache
    /// misses overlap.
    pub(super) fn add_each(&mut self, entries: &[(u64, u32)]) {
        for group in entries.chunks(PROBE_GROUP) {
            let homes_taken = group
                .iter()
                .filter(|&&(hash, _)| self.slots[self.home(hash)] != 0)
                .count();
            std::hint::black_box(homes_taken);
            for &(hash, position) in group {
                self.add(hash, position);
            }
        }
    }

    /// Removes the entry of `position`, shifting the entries after it back
    /// towards their home slots so no probe stops short. `hash_at` gives
    /// the hash of any entry's position.
    pub(super) fn remove(&mut self, hash: u64, position: u32, hash_at: impl Fn(u32) -> u64) {
        let Some(mut hole) = self.locate(hash, position) else {
            return;
        };
        self.slots[hole] = 0;
        let mut i = self.next(hole);
        while self.slots[i] != 0 {
            let home = self.home(hash_at(self.position(self.slots[i])));
            // The entry may move to the hole when the hole lies between its
            // home and where it sits.
            if self.distance(home, i) >= self.distance(hole, i) {
                self.slots[hole] = self.slots[i];
                self.slots[i] = 0;
                hole = i;
            }
            i = self.next(i);
        }
    }

    fn locate(&self, hash: u64, position: u32) -> Option<usize> {
        if self.slots.is_empty() {
            return None;
        }
        let wanted = self.slot_of(hash, position);
        let mut i = self.home(hash);
        while self.slots[i] != 0 {
            if self.slots[i] == wanted {
                return Some(i);
            }
            i = self.next(i);
        }
        None
    }

    /// Maps every stored position through `renumber`, in place.
    pub(super) fn renumber(&mut self, renumber: impl Fn(u32) -> u32) {
        let position_mask = self.position_mask();
        for slot in self.slots.iter_mut().filter(|slot| **slot != 0) {
            let position = (*slot & position_mask) - 1;
            *slot = (*slot & !position_mask) | (renumber(position) + 1);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::cell::Cell;

    /// Upper halves that crowd home slots: 0 and 1 share the first, the last
    /// three the last one, and 90% and 95% of the range sit a few slots
    /// before it, so probes wrap around the end.
    const UPPER: [u32; 7] = [
        0,
        1,
        u32::MAX / 2,
        u32::MAX / 10 * 9,
        u32::MAX / 20 * 19,
        u32::MAX - 1,
        u32::MAX,
    ];

    /// Lower halves: equal fingerprints, and ones that differ only in bits
    /// a large index gives to positions.
    const LOWER: [u32; 4] = [0, 1, 0x8000_0000, 0xffff_ffff];

    fn hashes() -> impl Strategy<Value = Vec<u64>> {
        proptest::collection::vec(
            (0..UPPER.len(), 0..LOWER.len())
                .prop_map(|(u, l)| (u64::from(UPPER[u]) << 32) | u64::from(LOWER[l])),
            12,
        )
    }

    proptest! {
        /// The index finds exactly the entries added and not removed, over
        /// slot counts that are not powers of two, whether it grew one
        /// entry at a time or was rebuilt for many.
        #[test]
        fn the_index_finds_what_was_added_and_not_removed(
            hash_of in hashes(),
            reserved in 0usize..40,
            ops in proptest::collection::vec((any::<bool>(), 0u32..12), 1..150),
        ) {
            let mut index = PositionIndex::default();
            index.rebuild(reserved, std::iter::empty());
            let mut present: Vec<u32> = Vec::new();
            for (add, position) in ops {
                let known = present.contains(&position);
                if add && !known {
                    if !index.has_room_for(present.len() + 1) {
                        let entries = present.iter().map(|&p| (hash_of[p as usize], p));
                        index.rebuild(present.len() + 1, entries);
                    }
                    index.add(hash_of[position as usize], position);
                    present.push(position);
                } else if !add && known {
                    index.remove(hash_of[position as usize], position, |p| hash_of[p as usize]);
                    present.retain(|&p| p != position);
                }
                let occupied = index.slots.iter().filter(|&&slot| slot != 0).count();
                prop_assert_eq!(occupied, present.len());
                for (position, &hash) in hash_of.iter().enumerate() {
                    let position = position as u32;
                    let found = index.find(hash, |p| p == position);
                    prop_assert_eq!(found, present.contains(&position).then_some(position));
                }
                let keys: Vec<u32> = (0..hash_of.len() as u32).collect();
                let found = index.find_each(&keys, |&k| hash_of[k as usize], |&k, p| p == k);
                let expected: Vec<Option<u32>> =
                    keys.iter().map(|k| present.contains(k).then_some(*k)).collect();
                prop_assert_eq!(found, expected);
            }
        }

        /// Entries added together are found as if added one at a time,
        /// in groups larger than a probe group too.
        #[test]
        fn entries_added_together_are_found(
            uppers in proptest::collection::vec(any::<u32>(), 0..200),
        ) {
            let entries: Vec<(u64, u32)> = uppers
                .iter()
                .zip(0..)
                .map(|(&upper, position)| ((u64::from(upper) << 32) | u64::from(position), position))
                .collect();
            let mut index = PositionIndex::default();
            index.rebuild(entries.len(), std::iter::empty());
            index.add_each(&entries);
            for &(hash, position) in &entries {
                prop_assert_eq!(index.find(hash, |p| p == position), Some(position));
            }
            let occupied = index.slots.iter().filter(|&&slot| slot != 0).count();
            prop_assert_eq!(occupied, entries.len());
            let found = index.find_each(&entries, |&(hash, _)| hash, |&(_, position), p| p == position);
            let positions: Vec<Option<u32>> = entries.iter().map(|&(_, p)| Some(p)).collect();
            prop_assert_eq!(found, positions);
        }
    }

    #[test]
    fn a_probe_compares_only_entries_whose_fingerprint_matches() {
        let mut index = PositionIndex::default();
        index.rebuild(10, std::iter::empty());
        // 16 slots: five bits of position, 27 of fingerprint.
        assert_eq!(index.position_bits, 5);
        let home = 7u64 << 60;
        for (position, fingerprint) in [(0, 1), (1, 2), (2, 3)] {
            index.add(home | fingerprint, position);
        }
        let compared = Cell::new(Vec::new());
        let is_key = |p: u32| {
            let mut seen = compared.take();
            seen.push(p);
            compared.set(seen);
            p == 2
        };
        assert_eq!(index.find(home | 3, is_key), Some(2));
        assert_eq!(compared.take(), vec![2]);
        // Fingerprints keep only the bits above the position: 2^27 + 2 has
        // the fingerprint of 2.
        assert_eq!(index.find(home | ((1 << 27) + 2), is_key), None);
        assert_eq!(compared.take(), vec![1]);
    }

    #[test]
    fn renumbering_keeps_fingerprints() {
        let mut index = PositionIndex::default();
        index.rebuild(3, [(5u64, 4), ((6u64 << 40) | 9, 8)].into_iter());
        index.renumber(|p| p / 2);
        assert_eq!(index.find(5, |p| p == 2), Some(2));
        assert_eq!(index.find((6u64 << 40) | 9, |p| p == 4), Some(4));
        assert_eq!(index.find((6u64 << 40) | 8, |_| true), None);
    }
}
