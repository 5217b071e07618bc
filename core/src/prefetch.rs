//! Asking the processor to start loading memory that is about to be read.
//! Full rebuilds walk records scattered over gigabytes, one cache miss after
//! another; naming the next customer's records while the current one is
//! computed lets those misses overlap with the work.

/// Starts loading the cache lines that hold `value`.
#[inline(always)]
pub(crate) fn prefetch<T>(value: &T) {
    prefetch_range(value as *const T as usize, std::mem::size_of::<T>());
}

/// Starts loading the cache lines of `len` bytes from address `start`. A
/// hint only: it never faults, whatever the address, changes nothing
/// observable, and is a no-op off x86-64.
#[inline(always)]
pub(crate) fn prefetch_range(start: usize, len: usize) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
        // A plain loop: a stepped range works out its count first, which
        // costs more than the few lines it names.
        let end = start.saturating_add(len.max(1));
        let mut line = start & !63;
        while line < end {
            // SAFETY: a prefetch reads nothing the program can observe and
            // cannot fault; `sse` is part of every x86-64 target.
            unsafe { _mm_prefetch::<_MM_HINT_T0>(line as *const i8) };
            line = match line.checked_add(64) {
                Some(next) => next,
                None => break,
            };
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (start, len);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn any_address_and_length_is_only_a_hint() {
        prefetch_range(0, 0);
        prefetch_range(usize::MAX - 10, 100);
        let values = [1u64, 2, 3];
        prefetch(&values);
        assert_eq!(values, [1, 2, 3]);
    }
}
