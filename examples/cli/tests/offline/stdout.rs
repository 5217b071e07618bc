//! Where the answer goes: a reader that stops early and a stdout that
//! cannot be written.

use crate::fixture::*;
use std::process::{Command, Stdio};

/// A daily report over five years: far more than a pipe holds, so the
/// client is still writing when its reader goes away.
const LONG_ANSWER: &[&str] = &[
    "reports",
    "mrr",
    "--interval",
    "day",
    "--date",
    "20200101-20241231",
    "--format",
    "json",
];

fn local_command() -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_submetrics"));
    command.args([
        "local",
        "--data",
        &data_dir(),
        "--as-of",
        "2024-03-15T00:00:00Z",
    ]);
    command
}

#[test]
fn a_reader_that_stops_early_ends_the_output_quietly() {
    let mut child = local_command()
        .args(LONG_ANSWER)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run the client");
    drop(child.stdout.take());
    let output = child.wait_with_output().expect("wait");
    assert!(output.status.success(), "{}", stderr(&output));
    assert_eq!(stderr(&output), fixture_rejected() + FIXTURE_LOADED);
}

#[test]
fn a_stdout_that_cannot_be_written_is_an_error() {
    let full = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .expect("/dev/full");
    let output = local_command()
        .args(LONG_ANSWER)
        .stdout(full)
        .output()
        .expect("run the client");
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(
        stderr(&output),
        fixture_rejected()
            + "error: cannot write the answer to stdout: No space left on device (os error 28)\n"
            + FIXTURE_LOADED
    );
}
