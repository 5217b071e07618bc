//! Benchmark support: a deterministic synthetic data generator with realistic
//! subscription histories, writers for the file formats the CLI's offline mode
//! loads, and small timing and memory helpers for the scale harness.

pub mod generator;
pub mod http_client;
pub mod measure;
pub mod write;

/// Every harness allocates through mimalloc, as the service does: with
/// glibc's allocator a bulk load spends more time in malloc than in the engine.
/// It is built without transparent huge pages (`no_thp`): on kernels that
/// grant them on request, every region mimalloc hands back and touches again
/// was a fresh 2 MiB page the kernel zeroed, which took most of a bulk load's
/// time.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// mimalloc's `purge_delay` option: its place in mimalloc's option
/// enumeration, which keeps retired options as placeholders so that the
/// numbers stay fixed.
const MIMALLOC_PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;

/// How long mimalloc keeps freed memory for reuse before handing it back to
/// the system, in milliseconds.
pub const FREED_MEMORY_KEPT_MS: std::ffi::c_long = 10_000;

/// Makes mimalloc keep freed memory for [`FREED_MEMORY_KEPT_MS`] instead of
/// its default second, as the service does; every harness that holds a
/// ledger calls this first. mimalloc 3 hands memory back by arena: once the
/// first range freed in an arena has waited the delay, every range freed
/// there since goes back too, also what was freed a moment ago. With a
/// second, a full recompute at 10M invoices (longer than a second, freeing
/// the replays it replaces and the rows of the report before it) gave back
/// memory it was about to reuse and faulted it in again: about a quarter
/// of its CPU. Resident memory read after [`measure::return_freed_memory`]
/// does not change; read right after a load, it counts more of what the
/// load freed.
pub fn keep_freed_memory_longer() {
    // SAFETY: setting an option is a store mimalloc reads on its next
    // purge; it changes when freed memory is handed back, never what a
    // live allocation holds.
    unsafe { libmimalloc_sys::mi_option_set(MIMALLOC_PURGE_DELAY, FREED_MEMORY_KEPT_MS) };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_purge_delay_option_is_the_one_set() {
        // SAFETY: reading an option has no effect on allocations.
        let read = || unsafe { libmimalloc_sys::mi_option_get(MIMALLOC_PURGE_DELAY) };
        if std::env::var_os("MIMALLOC_PURGE_DELAY").is_none() {
            // mimalloc 3's documented default for `purge_delay`, and no
            // other option's: the number names the right option.
            assert_eq!(read(), 1000);
        }
        keep_freed_memory_longer();
        assert_eq!(read(), FREED_MEMORY_KEPT_MS);
    }
}
