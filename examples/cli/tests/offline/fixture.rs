//! The fixture in testdata/local and the ways a test runs `local` on it
//! or on a directory of its own.

use serde_json::Value;
use std::process::{Command, Output};

pub(crate) fn data_dir() -> String {
    concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/local").to_string()
}

pub(crate) fn local(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_submetrics"))
        .args([
            "local",
            "--data",
            &data_dir(),
            "--as-of",
            "2024-03-15T00:00:00Z",
        ])
        .args(args)
        .output()
        .expect("run the client")
}

pub(crate) use crate::common::json;

/// `local --data DIR <options...>`: ledger options go before the command.
pub(crate) fn local_in(dir: &str, options: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_submetrics"))
        .args(["local", "--data", dir])
        .args(options)
        .output()
        .expect("run the client")
}

pub(crate) fn summary(output: &Output) -> (Value, Value) {
    let value = json(output);
    (
        value["currency"].clone(),
        value["summary"]["mrr_current"].clone(),
    )
}

/// The fixture's rejection, named by its file and line.
pub(crate) fn fixture_rejected() -> String {
    format!(
        "rejected: {}/invoices.jsonl line 7: invoice bad: field `customer_id`: customer `Z` \
         does not exist; send the customer first\n",
        data_dir()
    )
}

/// The fixture's closing stderr line: the `bad` invoice is rejected.
pub(crate) const FIXTURE_LOADED: &str = "loaded 3 customers, 3 plans, 6 invoices; rejected 1\n";

/// Refused before anything loads: no record is read (so none is rejected).
pub(crate) const NOTHING_LOADED: &str = "loaded 0 customers, 0 plans, 0 invoices; rejected 0\n";

/// The fixture of ids with leading zeros.
pub(crate) fn leading_zeros() -> String {
    format!("{}/leading-zeros", data_dir())
}

/// A fresh directory `name` of this test process, holding `files` (name,
/// text).
pub(crate) fn scratch_dir(name: &str, files: &[(&str, &str)]) -> String {
    let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("dir");
    for (file, text) in files {
        std::fs::write(dir.join(file), text).expect("write");
    }
    dir.to_string_lossy().into_owned()
}

/// What a run wrote on stdout.
pub(crate) fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// What a run wrote on stderr.
pub(crate) fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}
