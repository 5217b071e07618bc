//! Thin strings whose bytes live side by side in large chunks. A table of
//! millions of short ids keeps them here: a 20-byte id then takes its 21
//! bytes (and at most one of padding) instead of an allocator block, which
//! general-purpose allocators round up to a multiple of 16 (32 bytes for
//! that id), and storing one is a copy instead of an allocation.
//!
//! The arena frees its chunks only when it is dropped. A string that lives
//! in it must therefore never outlive it: its owner (the container holding
//! both) keeps such strings inside and hands out copies. Strings dropped
//! while the arena lives leave their bytes unused until the owner moves the
//! living ones into a fresh arena ([`ThinStrArena::worth_compacting`]).

use super::{IN_ARENA, ThinStr, encode_len};
use std::alloc::{Layout, alloc, dealloc, handle_alloc_error};
use std::ptr::NonNull;

/// The first chunk's size; each next one doubles, up to [`LARGEST_CHUNK`].
const FIRST_CHUNK: usize = 4 << 10;

/// The size chunks stop doubling at: 1 MiB, so a table of millions of ids
/// wastes at most one partly used chunk.
const LARGEST_CHUNK: usize = 1 << 20;

/// Chunks of thin strings' bytes (each a length then its text), filled in
/// order. Strings start at even addresses, so their pointers' lowest bit is
/// free to mark them as living here.
#[derive(Debug, Default)]
pub(crate) struct ThinStrArena {
    chunks: Vec<Chunk>,
    /// Bytes used in the last chunk.
    filled: usize,
    /// Bytes of the strings stored and not yet given up ([`Self::release`]).
    live: usize,
    /// Bytes of the strings given up.
    dead: usize,
}

#[derive(Debug)]
struct Chunk {
    start: NonNull<u8>,
    size: usize,
}

// SAFETY: the arena owns its chunks alone; the bytes of a stored string are
// written once, before the string exists, and only read after.
unsafe impl Send for ThinStrArena {}
// SAFETY: as above; shared references to the arena never write.
unsafe impl Sync for ThinStrArena {}

impl ThinStrArena {
    /// A copy of `text` whose bytes live in this arena; a text kept in its
    /// pointer stays there.
    ///
    /// # Safety
    /// The copy must be dropped (or replaced) before the arena is: it reads
    /// the arena's memory and does not keep it alive.
    pub(crate) unsafe fn store(&mut self, text: &ThinStr) -> ThinStr {
        if text.is_inline() {
            return text.clone();
        }
        let (header, header_len) = encode_len(text.len());
        let size = header_len + text.len();
        let padded = size + size % 2;
        let chunk = self.chunk_with_room(padded);
        // SAFETY: `chunk_with_room` left `padded` unused bytes at `filled`.
        let start = unsafe { chunk.as_ptr().add(self.filled) };
        // SAFETY: `start` has room for `size` bytes, which no source overlaps.
        unsafe {
            std::ptr::copy_nonoverlapping(header.as_ptr(), start, header_len);
            std::ptr::copy_nonoverlapping(text.as_ptr(), start.add(header_len), text.len());
        }
        self.filled += padded;
        self.live += padded;
        let tagged = start.map_addr(|address| address | IN_ARENA);
        // SAFETY: `start` points into an allocated chunk, so it is not null.
        ThinStr(unsafe { NonNull::new_unchecked(tagged) })
    }

    /// Counts a stored string's bytes as unused from now on.
    pub(crate) fn release(&mut self, text: &ThinStr) {
        debug_assert!(text.in_arena());
        let size = text.stored_len();
        let padded = size + size % 2;
        self.live -= padded;
        self.dead += padded;
    }

    /// Whether more than half of the stored bytes belong to strings given up:
    /// then moving the living strings into a fresh arena at least halves it.
    pub(crate) fn worth_compacting(&self) -> bool {
        self.dead > self.live
    }

    #[cfg(test)]
    pub(crate) fn live_and_released(&self) -> (usize, usize) {
        (self.live, self.dead)
    }

    /// The last chunk, after starting a new one if it has fewer than `size`
    /// unused bytes.
    fn chunk_with_room(&mut self, size: usize) -> NonNull<u8> {
        if let Some(last) = self.chunks.last()
            && last.size - self.filled >= size
        {
            return last.start;
        }
        let doubled = self
            .chunks
            .last()
            .map_or(FIRST_CHUNK, |chunk| (2 * chunk.size).min(LARGEST_CHUNK));
        let chunk = Chunk::new(doubled.max(size));
        let start = chunk.start;
        self.chunks.push(chunk);
        self.filled = 0;
        start
    }
}

impl Chunk {
    fn new(size: usize) -> Chunk {
        let layout = Chunk::layout(size);
        // SAFETY: the layout is not empty (a chunk holds at least one string,
        // whose length takes a byte).
        let start = unsafe { alloc(layout) };
        match NonNull::new(start) {
            Some(start) => Chunk { start, size },
            None => handle_alloc_error(layout),
        }
    }

    fn layout(size: usize) -> Layout {
        Layout::from_size_align(size, 2).expect("a chunk fits the address space")
    }
}

impl Drop for Chunk {
    fn drop(&mut self) {
        // SAFETY: allocated in `Chunk::new` with this layout.
        unsafe { dealloc(self.start.as_ptr(), Chunk::layout(self.size)) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::thin_str::INLINE_MAX;
    use proptest::prelude::*;

    proptest! {
        /// Stored strings read back as their text in order, whatever their
        /// lengths (one- and two-byte headers, odd and even sizes, strings
        /// larger than a chunk; texts of up to seven bytes stay in their
        /// pointers), and a clone outlives the arena.
        #[test]
        fn stored_strings_read_back_and_clones_outlive_the_arena(
            texts in proptest::collection::vec("\\PC{0,200}", 1..60),
            long in 0usize..3,
        ) {
            let mut texts = texts;
            texts.push("x".repeat(long * FIRST_CHUNK));
            let mut arena = ThinStrArena::default();
            let originals: Vec<ThinStr> = texts.iter().map(|t| ThinStr::new(t)).collect();
            // SAFETY: `stored` is dropped before `arena`.
            let stored: Vec<ThinStr> = originals.iter().map(|t| unsafe { arena.store(t) }).collect();
            for (thin, text) in stored.iter().zip(&texts) {
                prop_assert_eq!(thin.in_arena(), text.len() > INLINE_MAX);
                prop_assert!(!thin.has_block());
                prop_assert_eq!(thin.as_str(), text.as_str());
            }
            let live: usize = stored
                .iter()
                .filter(|t| t.in_arena())
                .map(|t| t.stored_len().next_multiple_of(2))
                .sum();
            prop_assert_eq!(arena.live, live);
            let copies: Vec<ThinStr> = stored.iter().map(ThinStr::clone).collect();
            drop(stored);
            drop(arena);
            for (copy, text) in copies.iter().zip(&texts) {
                prop_assert!(!copy.in_arena());
                prop_assert_eq!(copy.has_block(), text.len() > INLINE_MAX);
                prop_assert_eq!(copy.as_str(), text.as_str());
            }
        }
    }

    #[test]
    fn an_arena_is_worth_compacting_once_most_of_it_is_released() {
        let mut arena = ThinStrArena::default();
        // SAFETY: every stored string is dropped before `arena`.
        let stored: Vec<ThinStr> = ["abcdefgh", "ijklmnopq", "rstuvwxyz0"]
            .into_iter()
            .map(|t| unsafe { arena.store(&ThinStr::new(t)) })
            .collect();
        // Sizes with the length byte and padding: 10, 10 and 12.
        assert_eq!((arena.live, arena.dead), (32, 0));
        arena.release(&stored[0]);
        assert!(!arena.worth_compacting());
        arena.release(&stored[1]);
        assert_eq!((arena.live, arena.dead), (12, 20));
        assert!(arena.worth_compacting());
        assert_eq!(stored[2].as_str(), "rstuvwxyz0");
    }
}
