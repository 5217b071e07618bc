//! Helpers every test binary of the client shares.

use serde_json::Value;
use std::process::Output;

/// The JSON a successful run wrote on stdout (piped, the client writes
/// JSON); a failed run fails the test with its stderr.
pub(crate) fn json(output: &Output) -> Value {
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).expect("JSON on stdout when piped")
}
