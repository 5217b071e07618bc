//! The allocator the service, the CLI, the Python and Node extensions and
//! the benchmark harnesses run on, so that what is measured is what is
//! served. The engine allocates through whatever allocator its host
//! program uses; this crate is for programs that pick one (an extension
//! picks it for its own allocations only: Python's and JavaScript's
//! objects keep their runtime's allocator).
//!
//! It is mimalloc, for three reasons measured in `docs/benchmarks.md`: with
//! glibc's allocator a bulk load spends more time in `malloc` than in the
//! engine; mimalloc is built without transparent huge pages (`no_thp`),
//! because on kernels that grant them on request every region it handed
//! back and touched again was a fresh 2 MiB page for the kernel to zero;
//! and it keeps freed memory ten seconds (see [`keep_freed_memory_longer`]).
//!
//! One of the workspace's two modules allowed `unsafe` code (the other is
//! the Node binding's N-API reader): the calls into mimalloc.

#![allow(unsafe_code)]

use libmimalloc_sys as mi;
use std::alloc::{GlobalAlloc, Layout};
use std::ffi::c_void;

/// The alignment of every block mimalloc hands out: block sizes are whole
/// words and pages start at 16-byte boundaries.
const BLOCK_ALIGN: usize = size_of::<usize>();

/// mimalloc as the global allocator, entered by `mi_malloc`, `mi_zalloc`
/// and `mi_realloc` wherever a word's alignment is enough (nearly every
/// Rust allocation), and by the aligned functions only above that.
/// mimalloc 3's aligned functions, which a plain wrapper calls for every
/// allocation, take a slow path for blocks over 1 KiB: they allocate
/// `alignment - 1` bytes more and align by hand.
pub struct Mimalloc;

// SAFETY: every block comes from mimalloc with at least the layout's size
// and alignment (`BLOCK_ALIGN` by construction, more by the aligned
// functions), and goes back to `mi_free`, which takes blocks from all of
// them.
unsafe impl GlobalAlloc for Mimalloc {
    #[inline]
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: plain calls into the allocator with a valid size and a
        // power-of-two alignment (a `Layout`'s).
        unsafe {
            if layout.align() <= BLOCK_ALIGN {
                mi::mi_malloc(layout.size()).cast()
            } else {
                mi::mi_malloc_aligned(layout.size(), layout.align()).cast()
            }
        }
    }

    #[inline]
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: as in `alloc`.
        unsafe {
            if layout.align() <= BLOCK_ALIGN {
                mi::mi_zalloc(layout.size()).cast()
            } else {
                mi::mi_zalloc_aligned(layout.size(), layout.align()).cast()
            }
        }
    }

    #[inline]
    unsafe fn dealloc(&self, ptr: *mut u8, _layout: Layout) {
        // SAFETY: the caller passes a block this allocator handed out.
        unsafe { mi::mi_free(ptr.cast::<c_void>()) }
    }

    #[inline]
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: the caller passes a block this allocator handed out with
        // `layout`; the new block keeps its alignment.
        unsafe {
            if layout.align() <= BLOCK_ALIGN {
                mi::mi_realloc(ptr.cast::<c_void>(), new_size).cast()
            } else {
                mi::mi_realloc_aligned(ptr.cast::<c_void>(), new_size, layout.align()).cast()
            }
        }
    }
}

/// mimalloc's `purge_delay` option: its place in mimalloc's option
/// enumeration, which keeps retired options as placeholders so that the
/// numbers stay fixed.
const MIMALLOC_PURGE_DELAY: mi::mi_option_t = 15;

/// How long mimalloc keeps freed memory for reuse before handing it back to
/// the system, in milliseconds.
pub const FREED_MEMORY_KEPT_MS: std::ffi::c_long = 10_000;

/// Makes mimalloc keep freed memory for [`FREED_MEMORY_KEPT_MS`] instead of
/// its default second; the service and every harness that holds a ledger
/// call this first. mimalloc 3 hands memory back by arena: once the first
/// range freed in an arena has waited the delay, every range freed there
/// since goes back too, also what was freed a moment ago. With a second, a
/// full replay of millions of invoices (longer than a second, freeing the
/// replays it replaces) gave back memory it was about to reuse and faulted
/// it in again: about a quarter of its CPU. Resident memory read right
/// after a bulk load counts more of what the load freed.
pub fn keep_freed_memory_longer() {
    // SAFETY: setting an option is a store mimalloc reads on its next
    // purge; it changes when freed memory is handed back, never what a
    // live allocation holds.
    unsafe { mi::mi_option_set(MIMALLOC_PURGE_DELAY, FREED_MEMORY_KEPT_MS) };
}

/// Hands the pages freed so far on the calling thread's heap back to the
/// system now, instead of after [`FREED_MEMORY_KEPT_MS`]; for measuring
/// resident memory.
pub fn return_freed_memory_of_this_thread() {
    // SAFETY: collecting only releases pages no live allocation uses.
    unsafe { mi::mi_collect(true) };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_purge_delay_option_is_the_one_set() {
        // SAFETY: reading an option has no effect on allocations.
        let read = || unsafe { mi::mi_option_get(MIMALLOC_PURGE_DELAY) };
        if std::env::var_os("MIMALLOC_PURGE_DELAY").is_none() {
            // mimalloc 3's documented default for `purge_delay`, and no
            // other option's: the number names the right option.
            assert_eq!(read(), 1000);
        }
        keep_freed_memory_longer();
        assert_eq!(read(), FREED_MEMORY_KEPT_MS);
    }

    #[test]
    fn blocks_have_their_layouts_alignment_and_keep_their_bytes() {
        let sizes = [1, 7, 8, 24, 1000, 1025, 1500, 5000, 70_000, 3 << 20];
        for align in [1, 2, 4, 8, 16, 32, 64, 4096] {
            for size in sizes {
                let layout = Layout::from_size_align(size, align).unwrap();
                // SAFETY: a non-zero size; each block is freed once, with
                // its layout.
                unsafe {
                    let zeroed = Mimalloc.alloc_zeroed(layout);
                    assert_eq!(zeroed as usize % align, 0, "{size} bytes at {align}");
                    assert!((0..size).all(|i| *zeroed.add(i) == 0));
                    Mimalloc.dealloc(zeroed, layout);

                    let block = Mimalloc.alloc(layout);
                    assert_eq!(block as usize % align, 0, "{size} bytes at {align}");
                    for i in 0..size {
                        *block.add(i) = (i % 251) as u8;
                    }
                    let grown = Mimalloc.realloc(block, layout, size * 3);
                    assert_eq!(grown as usize % align, 0, "{size} bytes grown at {align}");
                    assert!((0..size).all(|i| *grown.add(i) == (i % 251) as u8));
                    Mimalloc.dealloc(grown, Layout::from_size_align(size * 3, align).unwrap());
                }
            }
        }
    }
}
