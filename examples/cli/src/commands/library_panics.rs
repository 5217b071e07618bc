//! Panics a library raises on malformed input, turned into errors. The
//! parquet reader panics on some broken files (a bit width past 64, a
//! column chunk at a negative offset, an embedded Arrow schema of an
//! unknown type) instead of answering an error: those are the file's
//! fault, so `local` reports them like any other unreadable file, without
//! the panic report the default hook would print first.

use std::any::Any;
use std::cell::Cell;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Once;

thread_local! {
    /// This thread is inside [`caught`]: a panic is reported as its error.
    static CATCHING: Cell<bool> = const { Cell::new(false) };
}

/// Puts a hook before the default one that stays quiet for panics
/// [`caught`] turns into errors, once per process.
static QUIET_HOOK: Once = Once::new();

/// What `work` answers, or the message of the panic it raised.
pub fn caught<T>(work: impl FnOnce() -> T) -> Result<T, String> {
    QUIET_HOOK.call_once(|| {
        let report = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if !CATCHING.get() {
                report(info);
            }
        }));
    });
    let outer = CATCHING.replace(true);
    let result = catch_unwind(AssertUnwindSafe(work));
    CATCHING.set(outer);
    result.map_err(|panic| message(&*panic))
}

/// The text a panic was raised with.
fn message(panic: &(dyn Any + Send)) -> String {
    panic
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| panic.downcast_ref::<&str>().map(|text| text.to_string()))
        .unwrap_or_else(|| "the reader failed".to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panic_is_its_message_and_an_answer_passes_through() {
        assert_eq!(caught(|| 7), Ok(7));
        assert_eq!(
            caught(|| -> u8 { panic!("bit width {} past 64", 65) }),
            Err("bit width 65 past 64".to_string())
        );
        let nested = caught(|| caught::<()>(|| panic!("inner")));
        assert_eq!(nested, Ok(Err("inner".to_string())));
        assert!(!CATCHING.get(), "the thread is outside again");
    }
}
