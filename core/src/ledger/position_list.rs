//! One customer's invoice positions in one heap block, one pointer wide.

use std::alloc::{Layout, alloc, dealloc, handle_alloc_error, realloc};
use std::fmt;
use std::ptr::NonNull;

/// Positions in the invoice table of one customer's invoices, ascending (so
/// in insertion order): a timeline build reads its invoices by position, not
/// by hashing ids.
///
/// The block holds the length and the capacity (four bytes each), then the
/// positions; an empty list that never held one has no block. A block grows
/// to at least a quarter more, in steps of 16 bytes (the size small blocks
/// are rounded to anyway): a customer's 14 positions take 64 bytes. The
/// pointer's lowest bit is set when the invoices' ids do not ascend with
/// their positions, so a timeline build knows whether to sort them by id.
#[derive(Default)]
pub(super) struct PositionList(Option<NonNull<u32>>);

/// The pointer bit of a list whose invoices' ids do not ascend.
const IDS_OUT_OF_ORDER: usize = 1;

/// Header words in front of the positions: the length, the capacity.
const HEADER: usize = 2;

// SAFETY: a list owns its block alone, like a `Vec<u32>`.
unsafe impl Send for PositionList {}
// SAFETY: as above; shared references only read.
unsafe impl Sync for PositionList {}

impl PositionList {
    pub(super) fn as_slice(&self) -> &[u32] {
        match self.block() {
            // SAFETY: the block holds the header and `len` positions.
            Some(block) => unsafe {
                std::slice::from_raw_parts(block.as_ptr().add(HEADER), self.len())
            },
            None => &[],
        }
    }

    /// Starts loading the block's first cache line: the header and up to 14
    /// positions, a typical customer's. It reads nothing itself.
    pub(super) fn prefetch(&self) {
        if let Some(block) = self.block() {
            crate::prefetch::prefetch_range(block.as_ptr() as usize, 64);
        }
    }

    fn len(&self) -> usize {
        // SAFETY: a block starts with its length.
        self.block()
            .map_or(0, |block| unsafe { *block.as_ptr() } as usize)
    }

    fn capacity(&self) -> usize {
        // SAFETY: a block's second word is its capacity.
        self.block()
            .map_or(0, |block| unsafe { *block.as_ptr().add(1) } as usize)
    }

    pub(super) fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether the invoices' ids ascend with their positions (always, for
    /// an empty list).
    pub(super) fn ids_ascending(&self) -> bool {
        self.is_empty()
            || self
                .0
                .is_none_or(|p| p.as_ptr().addr() & IDS_OUT_OF_ORDER == 0)
    }

    /// Notes whether the ids ascend; an empty list forgets it.
    fn set_ids_ascending(&mut self, ascending: bool) {
        self.0 = self.0.map(|pointer| tagged(pointer, ascending));
    }

    /// The block's start, without the pointer's bit.
    fn block(&self) -> Option<NonNull<u32>> {
        self.0.map(|pointer| tagged(pointer, true))
    }

    fn set_len(&mut self, len: usize) {
        if let Some(block) = self.block() {
            // SAFETY: a block starts with its length; `len` never exceeds
            // the capacity, itself a `u32`.
            unsafe { *block.as_ptr() = len as u32 };
        }
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
            self.grow();
        }
        let block = self.block().expect("a list with room has a block");
        // SAFETY: the block has room for `len + 1` positions; the ones from
        // `index` on move up by one within it.
        unsafe {
            let at = block.as_ptr().add(HEADER + index);
            std::ptr::copy(at, at.add(1), len - index);
            *at = position;
        }
        self.set_len(len + 1);
        self.set_ids_ascending(ids_ascending);
    }

    /// Removes the position at `index`; ids that ascended still do.
    pub(super) fn remove(&mut self, index: usize) {
        let len = self.len();
        assert!(index < len, "removal index {index} past the length {len}");
        if let Some(block) = self.block() {
            // SAFETY: the positions after `index` move down by one within the block.
            unsafe {
                let at = block.as_ptr().add(HEADER + index);
                std::ptr::copy(at.add(1), at, len - index - 1);
            }
        }
        self.set_len(len - 1);
    }

    /// Keeps the positions for which `renumber` gives a new one, in place
    /// and in order; it must keep them ascending.
    pub(super) fn renumber(&mut self, mut renumber: impl FnMut(u32) -> Option<u32>) {
        let Some(block) = self.block() else {
            return;
        };
        let len = self.len();
        // SAFETY: the block holds `len` positions, and nothing else reads it
        // while `self` is borrowed mutably.
        let positions = unsafe { std::slice::from_raw_parts_mut(block.as_ptr().add(HEADER), len) };
        let mut kept = 0;
        for k in 0..len {
            if let Some(position) = renumber(positions[k]) {
                positions[kept] = position;
                kept += 1;
            }
        }
        self.set_len(kept);
    }

    /// Makes room for at least one more position.
    fn grow(&mut self) {
        let old_capacity = self.capacity();
        let new_bytes = match self.block() {
            None => 16,
            Some(_) => {
                let old_bytes = layout(old_capacity).size();
                (old_bytes + old_bytes / 4)
                    .max(old_bytes + 16)
                    .next_multiple_of(16)
            }
        };
        let capacity = new_bytes / 4 - HEADER;
        let capacity_word =
            u32::try_from(capacity).expect("a customer has fewer than 2^32 invoices");
        let new_layout = layout(capacity);
        let ids_ascending = self.ids_ascending();
        // SAFETY: the old block (if any) was allocated with `layout(old_capacity)`,
        // and the new layout's size is not zero.
        let start = unsafe {
            match self.block() {
                Some(block) => realloc(
                    block.as_ptr().cast(),
                    layout(old_capacity),
                    new_layout.size(),
                ),
                None => {
                    let start = alloc(new_layout);
                    if !start.is_null() {
                        *start.cast::<u32>() = 0;
                    }
                    start
                }
            }
        };
        let Some(start) = NonNull::new(start.cast::<u32>()) else {
            handle_alloc_error(new_layout)
        };
        // SAFETY: the block's second word is its capacity.
        unsafe { *start.as_ptr().add(1) = capacity_word };
        self.0 = Some(tagged(start, ids_ascending));
    }
}

/// A pointer to a block with the bit that the ids do not ascend set as
/// `ids_ascending` says.
fn tagged(pointer: NonNull<u32>, ids_ascending: bool) -> NonNull<u32> {
    let bit = if ids_ascending { 0 } else { IDS_OUT_OF_ORDER };
    pointer.map_addr(|address| {
        (address.get() & !IDS_OUT_OF_ORDER | bit)
            .try_into()
            .expect("a block's address is not zero")
    })
}

/// The layout of a block with room for `capacity` positions.
fn layout(capacity: usize) -> Layout {
    Layout::array::<u32>(HEADER + capacity).expect("a block of positions fits in memory")
}

impl Drop for PositionList {
    fn drop(&mut self) {
        if let Some(block) = self.block() {
            // SAFETY: the block was allocated with the layout of its capacity.
            unsafe { dealloc(block.as_ptr().cast(), layout(self.capacity())) }
        }
    }
}

impl Clone for PositionList {
    fn clone(&self) -> Self {
        let mut copy = PositionList::default();
        for (index, &position) in self.as_slice().iter().enumerate() {
            copy.insert(index, position, true);
        }
        copy.set_ids_ascending(self.ids_ascending());
        copy
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
                prop_assert!(list.block().is_none() || layout(list.capacity()).size().is_multiple_of(16));
                let copy = list.clone();
                prop_assert_eq!(copy.as_slice(), model.as_slice());
                prop_assert_eq!(copy.ids_ascending(), list.ids_ascending());
            }
        }
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
