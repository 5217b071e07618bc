//! The core's layers point one way: every `crate::` path in a source file
//! names a module of the file's own layer or of one below it. The order is
//! the one the crate documentation states (`src/lib.rs`, "Layers").
//!
//! A file's layer is its first path component under `src/`; a path's layer
//! is that of the module it names right after `crate::` (a root item such
//! as `crate::Ledger` is the top layer's). Comments are skipped, and so are
//! unit tests, an inline `#[cfg(test)] mod ... { }` at the end of a file or
//! a file of its own named `tests.rs` or `tests_*.rs`: they may build a
//! whole ledger to drive the code under test.
//!
//! The shape the layers keep: no source file is longer than `MAX_LINES`.

use std::fs;
use std::path::{Path, PathBuf};

/// The layers from the bottom up, each with the modules (files or folders
/// directly under `src/`) it holds.
const LAYERS: &[(&str, &[&str])] = &[
    (
        "model",
        &[
            "error",
            "blank",
            "ids",
            "money",
            "period",
            "model",
            "normalize",
            "fx",
            "csv",
        ],
    ),
    ("store", &["store"]),
    ("derive", &["derive"]),
    ("query", &["query"]),
    ("reports", &["reports"]),
    (
        "ledger",
        &["ledger", "stripe", "scenario", "columnar", "testing", "lib"],
    ),
];

/// The layer index of a module under `src/`; a name no layer lists is a
/// root item (re-exported from `lib.rs`), the top layer's.
fn layer_of(module: &str) -> usize {
    LAYERS
        .iter()
        .position(|(_, modules)| modules.contains(&module))
        .unwrap_or(LAYERS.len() - 1)
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The file's code without comments and without a trailing inline test
/// module.
fn code_of(text: &str) -> Vec<(usize, String)> {
    let lines: Vec<&str> = text.lines().collect();
    let mut end = lines.len();
    for (i, line) in lines.iter().enumerate() {
        let next = lines.get(i + 1).map(|l| l.trim_start()).unwrap_or("");
        if line.trim() == "#[cfg(test)]" && next.starts_with("mod ") && next.ends_with('{') {
            end = i;
            break;
        }
    }
    lines[..end]
        .iter()
        .enumerate()
        .map(|(i, line)| {
            let code = match line.find("//") {
                Some(at) => &line[..at],
                None => line,
            };
            (i + 1, code.to_string())
        })
        .collect()
}

fn identifier(text: &str) -> &str {
    let end = text
        .find(|c: char| !(c.is_alphanumeric() || c == '_'))
        .unwrap_or(text.len());
    &text[..end]
}

/// The first module of each `crate::` path in `code`, with its line: for
/// `crate::{a::X, b}` both `a` and `b`. In a file directly under `src/`
/// or a folder's `mod.rs`, `super::` names the crate root too.
fn crate_paths(code: &[(usize, String)], super_is_root: bool) -> Vec<(usize, String)> {
    let text: String = code.iter().map(|(_, line)| format!("{line}\n")).collect();
    let line_at = |at: usize| code[text[..at].matches('\n').count()].0;
    let mut found = Vec::new();
    let mut prefixes = vec!["crate::"];
    if super_is_root {
        prefixes.push("super::");
    }
    for prefix in prefixes {
        for (at, _) in text.match_indices(prefix) {
            let preceded = text[..at]
                .chars()
                .next_back()
                .is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '$' || c == ':');
            if preceded {
                continue;
            }
            let rest = &text[at + prefix.len()..];
            let Some(group) = rest.strip_prefix('{') else {
                found.push((line_at(at), identifier(rest).to_string()));
                continue;
            };
            let mut depth = 1;
            let mut item = 0;
            for (i, c) in group.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' | ',' if depth == 1 => {
                        let name = identifier(group[item..i].trim_start());
                        if !name.is_empty() {
                            found.push((line_at(at), name.to_string()));
                        }
                        item = i + 1;
                        if c == '}' {
                            break;
                        }
                    }
                    '}' => depth -= 1,
                    _ => {}
                }
            }
        }
    }
    found
}

/// Every upward path in the sources under `src`, as messages.
fn upward_paths(src: &Path) -> Vec<String> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    files.sort();
    let mut upward = Vec::new();
    for file in files {
        let relative = file.strip_prefix(src).unwrap();
        let parts: Vec<String> = relative
            .iter()
            .map(|p| p.to_string_lossy().trim_end_matches(".rs").to_string())
            .collect();
        let name = &parts[parts.len() - 1];
        if name == "tests" || name.starts_with("tests_") {
            continue;
        }
        let own = layer_of(&parts[0]);
        let super_is_root = parts.len() == 1 || (parts.len() == 2 && parts[1] == "mod");
        let code = code_of(&fs::read_to_string(&file).unwrap());
        for (line, module) in crate_paths(&code, super_is_root) {
            if module == "self" || module == "super" {
                continue;
            }
            let target = layer_of(&module);
            if target > own {
                upward.push(format!(
                    "{}:{line}: the {} layer uses `crate::{module}` of the {} layer above it",
                    relative.display(),
                    LAYERS[own].0,
                    LAYERS[target].0,
                ));
            }
        }
    }
    upward
}

#[test]
fn no_module_uses_a_layer_above_its_own() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let upward = upward_paths(&src);
    assert!(upward.is_empty(), "upward paths:\n{}", upward.join("\n"));
}

/// The most lines a source file of the core may have: past it, a file
/// holds more than one idea and is split into modules.
const MAX_LINES: usize = 600;

#[test]
fn no_source_file_is_longer_than_the_limit() {
    let mut files = Vec::new();
    rust_files(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("src"),
        &mut files,
    );
    let long: Vec<String> = files
        .iter()
        .filter_map(|path| {
            let lines = fs::read_to_string(path).unwrap().lines().count();
            (lines > MAX_LINES).then(|| format!("{} ({lines} lines)", path.display()))
        })
        .collect();
    assert!(long.is_empty(), "files over {MAX_LINES} lines: {long:?}");
}

#[test]
fn every_module_under_src_belongs_to_a_layer() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut unlisted = Vec::new();
    for entry in fs::read_dir(&src).unwrap() {
        let name = entry.unwrap().file_name().to_string_lossy().to_string();
        let module = name.trim_end_matches(".rs");
        if !LAYERS.iter().any(|(_, modules)| modules.contains(&module)) {
            unlisted.push(module.to_string());
        }
    }
    assert!(unlisted.is_empty(), "modules in no layer: {unlisted:?}");
}

#[test]
fn an_upward_path_is_found_in_every_form() {
    let code = |text: &str| code_of(text);
    let paths = |text: &str| {
        crate_paths(&code(text), false)
            .into_iter()
            .map(|(line, module)| format!("{line}:{module}"))
            .collect::<Vec<_>>()
    };
    assert_eq!(paths("use crate::reports::Report;"), ["1:reports"]);
    assert_eq!(
        paths("use crate::{\n    error::Result,\n    ledger::Ledger,\n};"),
        ["1:error", "1:ledger"]
    );
    assert_eq!(
        paths("fn f() {\n    let x = crate::query::parse_day(\"\");\n}"),
        ["2:query"]
    );
    assert_eq!(
        paths("// crate::ledger::Ledger\n/// [`crate::Ledger`]"),
        Vec::<String>::new()
    );
    assert_eq!(
        paths("use crate::model::Settings;\n#[cfg(test)]\nmod tests {\n    use crate::Ledger;\n}"),
        ["1:model"]
    );
    assert_eq!(layer_of("Ledger"), LAYERS.len() - 1);
}
