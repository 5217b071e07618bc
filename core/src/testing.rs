//! Helpers for tests, behind the `testing` feature and never part of the
//! engine: the scenario corpus run as one test case per file.

use libtest_mimic::{Arguments, Failed, Trial};
use serde_json::Value;
use std::path::{Path, PathBuf};

/// Every scenario file under `root`, in its folders to any depth: the paths
/// of its `*.json` files relative to `root`, folders joined by `/`, sorted.
///
/// # Panics
///
/// When a folder cannot be read.
pub fn scenario_files(root: &Path) -> Vec<String> {
    fn walk(dir: &Path, prefix: &str, files: &mut Vec<String>) {
        let entries = std::fs::read_dir(dir)
            .unwrap_or_else(|error| panic!("cannot read {}: {error}", dir.display()));
        for entry in entries {
            let path = entry
                .unwrap_or_else(|error| panic!("cannot read {}: {error}", dir.display()))
                .path();
            let name = path.file_name().unwrap_or_default().to_string_lossy();
            let relative = format!("{prefix}{name}");
            if path.is_dir() {
                walk(&path, &format!("{relative}/"), files);
            } else if path.extension().is_some_and(|x| x == "json") {
                files.push(relative);
            }
        }
    }
    let mut files = Vec::new();
    walk(root, "", &mut files);
    files.sort();
    files
}

/// The main of a test target that runs every scenario file under `root`
/// (see [`scenario_files`]) as its own test case, named by its relative path
/// (`semantics/001-lapse-churns-at-coverage.json`). `check` gets that name
/// and the parsed file and returns its failures; a case passes when there
/// are none, and fails listing them. A file that is not JSON fails naming
/// the parse error. Takes the standard test harness's arguments (filters,
/// `--list`, `--exact`, ...), so `cargo test` and `cargo nextest` run and
/// filter the files one by one; exits with the run's status.
///
/// # Panics
///
/// When `root` holds no scenario file: a run of nothing would pass.
pub fn run_scenario_files<F>(root: &Path, check: F) -> !
where
    F: Fn(&str, &Value) -> Vec<String> + Send + Sync + Clone + 'static,
{
    let files = scenario_files(root);
    assert!(
        !files.is_empty(),
        "no scenario files under {}",
        root.display()
    );
    let trials = files
        .into_iter()
        .map(|name| {
            let path: PathBuf = root.join(&name);
            let check = check.clone();
            Trial::test(name.clone(), move || {
                let text =
                    std::fs::read_to_string(&path).map_err(|e| Failed::from(e.to_string()))?;
                let scenario: Value = serde_json::from_str(&text)
                    .map_err(|e| Failed::from(format!("invalid JSON: {e}")))?;
                let failures = check(&name, &scenario);
                if failures.is_empty() {
                    Ok(())
                } else {
                    Err(Failed::from(failures.join("\n")))
                }
            })
        })
        .collect();
    libtest_mimic::run(&Arguments::from_args(), trials).exit()
}
