//! One customer's invoice positions in one heap block.

use std::fmt;

/// Positions in the invoice table of one customer's invoices, ascending (so
/// in insertion order): a timeline build reads its invoices by position, not
/// by hashing ids.
///
/// The block holds the length and a flag word, then the positions and the
/// room after them; an empty list that never held one has no block. A block
/// grows to at least a quarter more, in steps of 16 bytes (the size small
/// blocks are rounded to anyway): a customer's 14 positions take 64 bytes.
/// The flag word says whether the invoices' ids ascend with their positions,
/// so a timeline build knows whether to sort them by id.
#[derive(Default, Clone)]
pub(crate) struct PositionList(Option<Box<[u32]>>);

/// Header words in front of the positions: the length, the flags.
const HEADER: usize = 2;

/// The flag of a list whose invoices' ids do not ascend.
const IDS_OUT_OF_ORDER: u32 = 1;

impl PositionList {
    pub(crate) fn as_slice(&self) -> &[u32] {
        match &self.0 {
            Some(block) => &block[HEADER..HEADER + block[0] as usize],
            None => &[],
        }
    }

    fn len(&self) -> usize {
        self.0.as_ref().map_or(0, |block| block[0] as usize)
    }

    fn capacity(&self) -> usize {
        self.0.as_ref().map_or(0, |block| block.len() - HEADER)
    }

    /// Whether the invoices' ids ascend with their positions (always, for
    /// an empty list).
    pub(crate) fn ids_ascending(&self) -> bool {
        self.0
            .as_ref()
            .is_none_or(|block| block[0] == 0 || block[1] & IDS_OUT_OF_ORDER == 0)
    }

    /// Inserts `position` at `index` (at most the length), noting whether
    /// the ids still ascend.
    pub(super) fn insert(&mut self, index: usize, position: u32, ids_ascending: bool) {
        let len = self.len();
        assert!(
            index <= len,
            "insertion index {index} past the length {len}"
        );
        if len == self.capacity() {
            self.grow(1);
        }
        let block = self.0.as_mut().expect("a list with room has a block");
        block.copy_within(HEADER + index..HEADER + len, HEADER + index + 1);
        block[HEADER + index] = position;
        block[0] += 1;
        block[1] = if ids_ascending { 0 } else { IDS_OUT_OF_ORDER };
    }

    /// Removes the position at `index`; ids that ascended still do.
    pub(super) fn remove(&mut self, index: usize) {
        let len = self.len();
        assert!(index < len, "removal index {index} past the length {len}");
        let block = self.0.as_mut().expect("a list with positions has a block");
        block.copy_within(HEADER + index + 1..HEADER + len, HEADER + index);
        block[0] -= 1;
    }

    /// Keeps the positions for which `renumber` gives a new one, in place
    /// and in order; it must keep them ascending.
    pub(super) fn renumber(&mut self, mut renumber: impl FnMut(u32) -> Option<u32>) {
        let Some(block) = &mut self.0 else {
            return;
        };
        let len = block[0] as usize;
        let mut kept = 0;
        for k in HEADER..HEADER + len {
            if let Some(position) = renumber(block[k]) {
                block[HEADER + kept] = position;
                kept += 1;
            }
        }
        block[0] = kept as u32;
    }

    /// Makes room for `additional` more positions at once, so a run of
    /// them copies the block once at most.
    pub(super) fn reserve(&mut self, additional: usize) {
        if self.capacity() - self.len() < additional {
            self.grow(additional);
        }
    }

    /// Makes room for at least `additional` more positions, copying the
    /// block into a larger one: a quarter larger, at least 16 bytes more,
    /// or just large enough when that is more.
    fn grow(&mut self, additional: usize) {
        let needed_bytes = 4 * (HEADER + self.len() + additional);
        let words = match &self.0 {
            None => needed_bytes.max(16).next_multiple_of(16) / 4,
            Some(block) => {
                let old_bytes = 4 * block.len();
                (old_bytes + old_bytes / 4)
                    .max(old_bytes + 16)
                    .max(needed_bytes)
                    .next_multiple_of(16)
                    / 4
            }
        };
        u32::try_from(words - HEADER).expect("a customer has fewer than 2^32 invoices");
        let mut grown = vec![0; words].into_boxed_slice();
        if let Some(block) = &self.0 {
            grown[..block.len()].copy_from_slice(block);
        }
        self.0 = Some(grown);
    }
}

impl fmt::Debug for PositionList {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PositionList")
            .field("positions", &self.as_slice())
            .field("ids_ascending", &self.ids_ascending())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[derive(Debug, Clone)]
    enum Op {
        /// Insert at this fraction of the length, with this order flag.
        Insert(u8, u32, bool),
        Remove(u8),
        /// Keep the positions not divisible by this, each minus one.
        Renumber(u32),
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            4 => (any::<u8>(), any::<u32>(), any::<bool>()).prop_map(|(at, p, a)| Op::Insert(at, p, a)),
            1 => any::<u8>().prop_map(Op::Remove),
            1 => (2u32..5).prop_map(Op::Renumber),
        ]
    }

    proptest! {
        /// A list behaves like a `Vec<u32>` with a flag that an empty list
        /// reads as true, and a copy like the original.
        #[test]
        fn behaves_like_a_vector_and_a_flag(ops in proptest::collection::vec(op(), 1..200)) {
            let mut list = PositionList::default();
            let mut model: Vec<u32> = Vec::new();
            let mut ascending = true;
            for op in ops {
                match op {
                    Op::Insert(at, position, flag) => {
                        let index = usize::from(at) * (model.len() + 1) / 256;
                        list.insert(index, position, flag);
                        model.insert(index, position);
                        ascending = flag;
                    }
                    Op::Remove(at) if !model.is_empty() => {
                        let index = usize::from(at) * model.len() / 256;
                        list.remove(index);
                        model.remove(index);
                    }
                    Op::Remove(_) => {}
                    Op::Renumber(divisor) => {
                        let renumber = |p: u32| (!p.is_multiple_of(divisor)).then(|| p - 1);
                        list.renumber(renumber);
                        model = model.into_iter().filter_map(renumber).collect();
                    }
                }
                prop_assert_eq!(list.as_slice(), model.as_slice());
                prop_assert_eq!(list.ids_ascending(), ascending || model.is_empty());
                prop_assert!(list.capacity() >= model.len());
                prop_assert!(list.0.is_none() || (4 * (list.capacity() + HEADER)).is_multiple_of(16));
                let copy = list.clone();
                prop_assert_eq!(copy.as_slice(), model.as_slice());
                prop_assert_eq!(copy.ids_ascending(), list.ids_ascending());
            }
        }
    }

    #[test]
    fn a_reservation_makes_room_for_a_run_at_once() {
        let mut list = PositionList::default();
        list.reserve(14);
        // 16 words: the header and 14 positions, 64 bytes.
        assert_eq!(list.capacity(), 14);
        for position in 0..14 {
            list.insert(position as usize, position, true);
        }
        assert_eq!(list.capacity(), 14);
        // A small reservation grows a quarter, as one insertion does.
        list.reserve(1);
        assert_eq!(list.capacity(), 18);
        list.reserve(4);
        assert_eq!(list.capacity(), 18);
        list.reserve(30);
        assert_eq!((list.capacity(), list.as_slice().len()), (46, 14));
    }

    #[test]
    fn blocks_grow_by_a_quarter_in_steps_of_sixteen_bytes() {
        let mut list = PositionList::default();
        let mut capacities = Vec::new();
        for position in 0..40 {
            list.insert(position as usize, position, true);
            if capacities.last() != Some(&list.capacity()) {
                capacities.push(list.capacity());
            }
        }
        // Blocks of 16, 32, 48, 64, 80, 112, 144 and 192 bytes.
        assert_eq!(capacities, vec![2, 6, 10, 14, 18, 26, 34, 46]);
        assert!(list.ids_ascending());
    }
}
