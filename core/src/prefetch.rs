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
/// observable, and is a no-op off x86-64. It names an address every 64
/// bytes from `start` and the last byte, so every line in between is
/// named; for a length known when compiling (a value's size) the loop
/// unrolls into a few instructions.
#[inline(always)]
pub(crate) fn prefetch_range(start: usize, len: usize) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
        // SAFETY: a prefetch reads nothing the program can observe and
        // cannot fault; `sse` is part of every x86-64 target.
        let hint = |address: usize| unsafe { _mm_prefetch::<_MM_HINT_T0>(address as *const i8) };
        let mut offset = 0;
        while offset < len {
            hint(start.wrapping_add(offset));
            offset = offset.saturating_add(64);
        }
        hint(start.wrapping_add(len.saturating_sub(1)));
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
