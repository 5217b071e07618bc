//! An immutable string that owns its text and is one pointer wide: the length
//! is stored in front of the text, in the same allocation, as a variable-length
//! integer (one byte up to 127 bytes of text). A text of at most seven bytes
//! (three on 32-bit targets), such as a country code, is kept inside the
//! pointer itself and allocates nothing. Made for text held by one record
//! alone, such as an invoice's id or a customer's name: a 20-byte id takes a
//! 21-byte block, where a shared string adds a 16-byte count and length (a
//! 36-byte block) and a boxed `str` is twice as wide in the record. (An
//! allocator rounds small blocks up, mimalloc and glibc's to a multiple of
//! 16: 32 and 48 bytes.) A clone copies the text.
//!
//! A container that holds many of them can keep their text in one
//! [`ThinStrArena`] instead of a block each (see there).

mod arena;

pub(crate) use arena::ThinStrArena;

use std::alloc::{Layout, alloc, dealloc, handle_alloc_error};
use std::fmt;
use std::hash::{Hash, Hasher};
use std::ptr::NonNull;

/// The most bytes a length takes: seven bits of it per byte.
const MAX_HEADER: usize = usize::BITS.div_ceil(7) as usize;

/// Points at the length's first byte; the text follows the length's last.
/// The pointer's two lowest bits say where the bytes are: `00` in a block of
/// its own (blocks are allocated at addresses divisible by four), `x1` in an
/// arena, which frees them all at once (strings start at even addresses
/// there, and the bit is cleared before reading), `10` inside the pointer
/// (see [`INLINE`]).
pub struct ThinStr(NonNull<u8>);

/// The pointer bit of a [`ThinStr`] whose bytes live in an arena.
const IN_ARENA: usize = 0b01;

/// The pointer bits of a [`ThinStr`] whose text is in the pointer: its
/// lowest byte holds these bits and the length above them, its other bytes
/// the text. Such a pointer is a plain number that is never dereferenced.
const INLINE: usize = 0b10;

/// The bits that tell the three kinds apart.
const KIND_BITS: usize = 0b11;

/// The most bytes of text a pointer holds: all its bytes but the lowest.
const INLINE_MAX: usize = size_of::<usize>() - 1;

/// Where the text starts among the pointer's bytes in memory: after its
/// lowest byte on little-endian targets, at the first byte on big-endian ones.
const INLINE_TEXT_AT: usize = if cfg!(target_endian = "little") { 1 } else { 0 };

// SAFETY: a `ThinStr` owns its bytes alone and never changes them, like a
// `Box<str>`.
unsafe impl Send for ThinStr {}
// SAFETY: as above; shared references only read.
unsafe impl Sync for ThinStr {}

impl ThinStr {
    pub fn new(text: &str) -> ThinStr {
        if text.len() <= INLINE_MAX {
            return ThinStr::inline(text);
        }
        let (header, header_len) = encode_len(text.len());
        let layout = layout_for(header_len, text.len());
        // SAFETY: the layout is at least one byte long (the header).
        let start = unsafe { alloc(layout) };
        let Some(start) = NonNull::new(start) else {
            handle_alloc_error(layout)
        };
        // SAFETY: the block holds `header_len + text.len()` bytes, and
        // neither source overlaps it.
        unsafe {
            std::ptr::copy_nonoverlapping(header.as_ptr(), start.as_ptr(), header_len);
            let text_start = start.as_ptr().add(header_len);
            std::ptr::copy_nonoverlapping(text.as_ptr(), text_start, text.len());
        }
        ThinStr(start)
    }

    /// A string whose text is kept in the pointer; at most [`INLINE_MAX`] bytes.
    fn inline(text: &str) -> ThinStr {
        let mut bytes = [0u8; size_of::<usize>()];
        bytes[INLINE_TEXT_AT..INLINE_TEXT_AT + text.len()].copy_from_slice(text.as_bytes());
        let word = usize::from_ne_bytes(bytes) | INLINE | (text.len() << 2);
        let pointer = std::ptr::without_provenance_mut::<u8>(word);
        ThinStr(NonNull::new(pointer).expect("the inline bits are not zero"))
    }

    fn is_inline(&self) -> bool {
        self.0.as_ptr().addr() & KIND_BITS == INLINE
    }

    #[inline]
    pub fn as_str(&self) -> &str {
        if self.is_inline() {
            let len = (self.0.as_ptr().addr() & 0xff) >> 2;
            // SAFETY: a pointer is `size_of::<usize>()` bytes wide and
            // readable as bytes for as long as `self` is borrowed; an inline
            // one carries no provenance to lose.
            let bytes = unsafe {
                std::slice::from_raw_parts((&raw const self.0).cast::<u8>(), size_of::<usize>())
            };
            // SAFETY: `inline` copied `len` bytes of a `str` there.
            return unsafe {
                std::str::from_utf8_unchecked(&bytes[INLINE_TEXT_AT..INLINE_TEXT_AT + len])
            };
        }
        let (header_len, len) = self.header();
        // SAFETY: `new` (or the arena) wrote `len` bytes of valid UTF-8 right
        // after the header, and they live as long as `self`.
        unsafe {
            let text = self.start().add(header_len);
            std::str::from_utf8_unchecked(std::slice::from_raw_parts(text, len))
        }
    }

    /// The header's byte count and the text's length.
    #[inline]
    fn header(&self) -> (usize, usize) {
        // SAFETY: `new` wrote a complete header, whose last byte has the
        // high bit clear, so decoding never reads past it.
        let byte_at = |index| unsafe { *self.start().add(index) };
        match byte_at(0) {
            short @ 0..0x80 => (1, usize::from(short)),
            _ => decode_len(byte_at),
        }
    }

    /// The length's first byte.
    #[inline]
    fn start(&self) -> *const u8 {
        self.0.as_ptr().map_addr(|address| address & !IN_ARENA)
    }

    /// Whether the bytes live in an arena rather than in a block of their own
    /// or in the pointer.
    pub(crate) fn in_arena(&self) -> bool {
        self.0.as_ptr().addr() & IN_ARENA != 0
    }

    /// Whether the string owns a block of its own (not an arena's bytes,
    /// not a text in the pointer).
    pub(crate) fn has_block(&self) -> bool {
        self.0.as_ptr().addr() & KIND_BITS == 0
    }

    /// The bytes a string in an arena or a block takes besides its pointer:
    /// the length and the text.
    pub(crate) fn stored_len(&self) -> usize {
        debug_assert!(!self.is_inline());
        let (header_len, len) = self.header();
        header_len + len
    }
}

/// A length in little-endian groups of seven bits, the high bit of every byte
/// but the last set; and how many bytes that is.
fn encode_len(mut len: usize) -> ([u8; MAX_HEADER], usize) {
    let mut header = [0u8; MAX_HEADER];
    let mut count = 0;
    loop {
        let low = (len & 0x7f) as u8;
        len >>= 7;
        if len == 0 {
            header[count] = low;
            return (header, count + 1);
        }
        header[count] = low | 0x80;
        count += 1;
    }
}

/// Reads back what [`encode_len`] wrote, given its bytes by position: the
/// header's byte count and the length.
fn decode_len(byte_at: impl Fn(usize) -> u8) -> (usize, usize) {
    let mut len = 0usize;
    for index in 0..MAX_HEADER {
        let byte = byte_at(index);
        len |= usize::from(byte & 0x7f) << (7 * index);
        if byte & 0x80 == 0 {
            return (index + 1, len);
        }
    }
    unreachable!("a header ends within {MAX_HEADER} bytes")
}

/// A block's layout: aligned to four bytes, so its address leaves
/// [`KIND_BITS`] clear.
fn layout_for(header_len: usize, text_len: usize) -> Layout {
    // A `str` is at most `isize::MAX` bytes and no address space comes
    // near it, so adding a header of ten bytes cannot overflow the layout.
    Layout::from_size_align(header_len + text_len, 4).expect("a string's size plus its header")
}

impl Drop for ThinStr {
    fn drop(&mut self) {
        if !self.has_block() {
            return;
        }
        let (header_len, len) = self.header();
        // SAFETY: the block was allocated in `new` with this same layout.
        unsafe { dealloc(self.0.as_ptr(), layout_for(header_len, len)) }
    }
}

impl Clone for ThinStr {
    fn clone(&self) -> ThinStr {
        ThinStr::new(self.as_str())
    }
}

impl std::ops::Deref for ThinStr {
    type Target = str;
    fn deref(&self) -> &str {
        self.as_str()
    }
}

impl From<&str> for ThinStr {
    fn from(text: &str) -> ThinStr {
        ThinStr::new(text)
    }
}

impl From<String> for ThinStr {
    fn from(text: String) -> ThinStr {
        ThinStr::new(&text)
    }
}

impl PartialEq for ThinStr {
    fn eq(&self, other: &ThinStr) -> bool {
        self.as_str() == other.as_str()
    }
}

impl Eq for ThinStr {}

impl PartialOrd for ThinStr {
    fn partial_cmp(&self, other: &ThinStr) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for ThinStr {
    fn cmp(&self, other: &ThinStr) -> std::cmp::Ordering {
        self.as_str().cmp(other.as_str())
    }
}

/// Hashes like the `str` it holds, so a map keyed by it can be searched by `&str`.
impl Hash for ThinStr {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.as_str().hash(state)
    }
}

impl fmt::Display for ThinStr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl serde::Serialize for ThinStr {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl fmt::Debug for ThinStr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_thin_string_is_one_pointer_and_its_header_one_byte_below_128() {
        assert_eq!(std::mem::size_of::<Option<ThinStr>>(), 8);
        assert_eq!(encode_len(0), ([0; MAX_HEADER], 1));
        assert_eq!(encode_len(127).1, 1);
        assert_eq!(encode_len(128).0[..2], [0x80, 0x01]);
        assert_eq!(encode_len(usize::MAX).1, MAX_HEADER);
        assert_eq!(ThinStr::new("").as_str(), "");
    }

    #[test]
    fn texts_of_up_to_seven_bytes_stay_in_the_pointer() {
        assert_eq!(INLINE_MAX, size_of::<usize>() - 1);
        for text in ["", "US", "unknown", "é", "日本"] {
            let thin = ThinStr::new(text);
            assert_eq!(thin.is_inline(), text.len() <= INLINE_MAX);
            assert!(!thin.in_arena());
            assert_eq!(thin.as_str(), text);
            assert_eq!(thin.clone(), thin);
        }
        let eight = ThinStr::new("eight by");
        assert!(eight.has_block());
        assert_eq!(eight.as_str(), "eight by");
    }

    proptest::proptest! {
        #[test]
        fn a_thin_string_holds_its_text(text in "\\PC{0,300}") {
            let thin = ThinStr::new(&text);
            proptest::prop_assert_eq!(thin.as_str(), text.as_str());
            proptest::prop_assert_eq!(thin.is_inline(), text.len() <= INLINE_MAX);
            if !thin.is_inline() {
                proptest::prop_assert_eq!(thin.header().0, encode_len(text.len()).1);
            }
            let copy = thin.clone();
            drop(thin);
            proptest::prop_assert_eq!(copy.as_str(), text.as_str());
        }

        #[test]
        fn a_length_reads_back_as_written(len in proptest::num::usize::ANY) {
            let (header, count) = encode_len(len);
            proptest::prop_assert!(header[..count - 1].iter().all(|byte| byte & 0x80 != 0));
            let (read_count, read) = decode_len(|index| header[index]);
            proptest::prop_assert_eq!(read_count, count);
            proptest::prop_assert_eq!(read, len);
        }
    }
}
