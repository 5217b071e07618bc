//! Finding a collection's files. In a directory, a collection's records
//! are in `<collection>.<format>`, or split over several files
//! `<collection>-<part>.<format>` or under a directory `<collection>/`
//! (read in path order), each part in one form only; a collection option
//! names its files by path, directory or glob pattern instead
//! ([`files_matching`]). Each file's
//! format is its extension; a text format may be compressed, as its last
//! extension says (`invoices.jsonl.gz`, `customers.csv.zst`).
//! `super::files` reads them.

use super::text_source::Compression;
use crate::error::{CliError, Result};
use std::path::{Path, PathBuf};

/// The formats a collection's file may have, by extension.
const EXTENSIONS: &[&str] = &["json", "jsonl", "ndjson", "csv", "parquet"];

/// One file of records: its path, its format (one of [`EXTENSIONS`]) and
/// how it is compressed. Files sort by path.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct RecordFile {
    pub path: PathBuf,
    pub format: &'static str,
    pub compression: Option<Compression>,
}

impl RecordFile {
    /// The file at `path` when its name is that of a file of records (the
    /// name's stem, before the extensions, beside it): `part-0.snappy.parquet`
    /// is Parquet, `invoices.csv.gz` gzipped CSV, in any case
    /// (`INVOICES.JSONL`, `invoices.CSV.GZ`). Parquet compresses inside the
    /// file, so `x.parquet.gz` is none.
    fn named(path: &Path) -> Option<(RecordFile, &str)> {
        let name = path.file_name()?.to_str()?;
        let (rest, last) = name.rsplit_once('.')?;
        let compression = Compression::of_extension(&last.to_ascii_lowercase());
        let (stem, extension) = match compression {
            Some(_) => rest.rsplit_once('.')?,
            None => (rest, last),
        };
        let format = EXTENSIONS
            .iter()
            .find(|e| e.eq_ignore_ascii_case(extension))
            .copied()?;
        if compression.is_some() && format == "parquet" {
            return None;
        }
        let file = RecordFile {
            path: path.to_path_buf(),
            format,
            compression,
        };
        Some((file, stem))
    }
}

/// The files holding `collection` in `dir` (given by `option`, which
/// errors name): `<collection>.<ext>`, `<collection>-<part>.<ext>` and
/// every file under a directory `<collection>/` (as [`files_matching`]
/// reads a directory), in path order.
///
/// One part in two forms is an error naming both: `invoices.jsonl` beside
/// `invoices.jsonl.gz` or `invoices.parquet`, or `invoices.csv` beside a
/// directory `invoices/`. Reading both would read its records twice, and
/// which form wins would depend on the order of their names.
pub fn collection_files(option: &str, dir: &Path, collection: &str) -> Result<Vec<RecordFile>> {
    let entries = std::fs::read_dir(dir)
        .map_err(|e| CliError::Io(format!("cannot read {}: {e}", dir.display())))?;
    let mut parts: Vec<(String, RecordFile)> = Vec::new();
    for entry in entries.flatten() {
        let path = entry.path();
        let Some((file, stem)) = RecordFile::named(&path) else {
            continue;
        };
        if part_of(&[collection], stem).is_some() && path.is_file() {
            parts.push((stem.to_string(), file));
        }
    }
    parts.sort();
    let twice = |first: &Path, second: &Path| {
        let name = |path: &Path| path.file_name().unwrap_or_default().display().to_string();
        CliError::usage(format!(
            "{option} {}: {} and {} are the same part of {collection} in two forms; keep one",
            dir.display(),
            name(first),
            name(second)
        ))
    };
    if let Some(pair) = parts.windows(2).find(|pair| pair[0].0 == pair[1].0) {
        return Err(twice(&pair[0].1.path, &pair[1].1.path));
    }
    let dataset = dir.join(collection);
    let mut files: Vec<RecordFile> = Vec::with_capacity(parts.len());
    for (stem, file) in parts {
        if stem == collection && dataset.is_dir() {
            return Err(twice(&file.path, &dataset));
        }
        files.push(file);
    }
    if dataset.is_dir() {
        files.extend(files_matching(option, &dataset.to_string_lossy())?);
    }
    files.sort();
    Ok(read_once(files))
}

/// `files` with each file once, where it is first named: a file named two
/// ways (a symbolic link to another of the files, or a path with `..`) is
/// one file, whose records are read once.
pub fn read_once(files: Vec<RecordFile>) -> Vec<RecordFile> {
    let mut seen = std::collections::HashSet::new();
    files
        .into_iter()
        .filter(|file| {
            seen.insert(
                file.path
                    .canonicalize()
                    .unwrap_or_else(|_| file.path.clone()),
            )
        })
        .collect()
}

/// The files of records (by their names) in the directory `dir` (given by
/// `option`) that no collection reads: no part of the `collections`, and
/// not among the files `read` (named by the collections' options), such as
/// a report written beside the data. One whose name is a near miss of a
/// collection's (`invoice.jsonl`, `plan-groups.json`) is an error, and so
/// is a directory so named (`invoice/`): its records would go unread.
/// So is a file named as a collection's part whose extension is not that of
/// a format (`invoices.txt`, `invoices-2.xlsx`). Other directories are left
/// alone (a data set of its own, say), and so are names starting with `.`
/// or `_`.
pub fn unread_files(
    option: &str,
    dir: &Path,
    collections: &[&str],
    read: &[RecordFile],
) -> Result<Vec<String>> {
    let entries = std::fs::read_dir(dir)
        .map_err(|e| CliError::Io(format!("cannot read {}: {e}", dir.display())))?;
    let mut paths: Vec<PathBuf> = entries.flatten().map(|entry| entry.path()).collect();
    paths.sort();
    let read: Vec<PathBuf> = read
        .iter()
        .filter_map(|f| f.path.canonicalize().ok())
        .collect();
    // The whole name first (`plan-groups`), then its part before a
    // separator (`invoice-2024`, `invoices_2024`).
    let near = |name: &str| {
        let known = || collections.iter().copied();
        let base = name.split(['-', '_']).next().unwrap_or(name);
        submetrics::reports::near_miss(name, known())
            .or_else(|| submetrics::reports::near_miss(base, known()))
    };
    let unread = |name: String, collection: &str| {
        CliError::usage(format!(
            "{option} {}: {name} would go unread (did you mean {collection}?); {option} reads {}, \
             each from NAME.FORMAT, NAME-PART.FORMAT or a directory NAME/",
            dir.display(),
            collections.join(", ")
        ))
    };
    let mut unclaimed = Vec::new();
    for path in paths {
        if is_beside_the_data(&path, dir) {
            continue;
        }
        let name = path.file_name().unwrap_or_default().to_string_lossy();
        if path.is_dir() {
            if !collections.contains(&name.as_ref())
                && let Some(collection) = near(&name)
            {
                return Err(unread(format!("{name}/"), &format!("{collection}/")));
            }
            continue;
        }
        let Some((_, stem)) = RecordFile::named(&path) else {
            let before_extensions = name.split('.').next().unwrap_or_default();
            if let Some(collection) = part_of(collections, before_extensions) {
                return Err(CliError::usage(format!(
                    "{option} {}: {name} is named as a file of {collection} but its extension \
                     is not one of .{} (the text formats also .{}); its records would go unread",
                    dir.display(),
                    EXTENSIONS.join(", ."),
                    Compression::EXTENSIONS.join(" or .")
                )));
            }
            continue;
        };
        let claimed = part_of(collections, stem).is_some();
        if claimed || path.canonicalize().is_ok_and(|path| read.contains(&path)) {
            continue;
        }
        if let Some(collection) = near(stem) {
            return Err(unread(name.to_string(), collection));
        }
        unclaimed.push(name.to_string());
    }
    Ok(unclaimed)
}

/// The collection whose part a file of stem `stem` is: `invoices` of
/// `invoices` and `invoices-2`.
fn part_of<'c>(collections: &[&'c str], stem: &str) -> Option<&'c str> {
    collections.iter().copied().find(|collection| {
        stem.strip_prefix(collection)
            .is_some_and(|rest| rest.is_empty() || rest.starts_with('-'))
    })
}

/// Notes on stderr the files [`unread_files`] found.
pub fn note_unread(option: &str, dir: &Path, names: &[String]) {
    if !names.is_empty() {
        eprintln!(
            "note: {option} {}: not read, as no collection's files: {}",
            dir.display(),
            names.join(", ")
        );
    }
}

/// Whether a directory listing or a glob passes over a path: one whose
/// name, or the name of a directory on the way to it below `base`, starts
/// with `.` or `_`, as what Spark, Hadoop and editors write beside the data
/// does (`_SUCCESS`, `.part-0.parquet.crc`, `_temporary/`).
fn is_beside_the_data(path: &Path, base: &Path) -> bool {
    let below = path.strip_prefix(base).unwrap_or(path);
    below.components().any(|part| match part {
        std::path::Component::Normal(name) => name
            .to_str()
            .is_some_and(|name| name.starts_with('.') || name.starts_with('_')),
        _ => false,
    })
}

/// The directory a glob pattern starts from: its components before the
/// first with a wildcard.
fn glob_base(pattern: &str) -> PathBuf {
    Path::new(pattern)
        .components()
        .take_while(|part| {
            !part
                .as_os_str()
                .to_str()
                .is_some_and(|name| name.contains(['*', '?', '[']))
        })
        .collect()
}

/// The files a collection option (`--invoices PATH`, named `option` in
/// errors) names, in path order: one file; every file under a directory,
/// at any depth (a dataset written in parts, or partitioned into
/// directories such as `year=2024/`); or every file, and every file under a
/// directory, that a glob pattern matches (`*`, `?`, `[...]`, and `**` for
/// any depth). Names starting with `.` or `_` under a directory or a
/// pattern's wildcards are passed over. Each file's format is its
/// extension; any other file found, or a pattern that matches nothing, is
/// an error naming it.
pub fn files_matching(option: &str, pattern: &str) -> Result<Vec<RecordFile>> {
    let unreadable = |path: &Path, e: &dyn std::fmt::Display| {
        CliError::Io(format!(
            "{option} {pattern}: cannot read {}: {e}",
            path.display()
        ))
    };
    let path = Path::new(pattern);
    let named: Vec<PathBuf> = if path.exists() {
        vec![path.to_path_buf()]
    } else if pattern.contains(['*', '?', '[']) {
        let options = glob::MatchOptions {
            require_literal_leading_dot: true,
            ..glob::MatchOptions::new()
        };
        let matches = glob::glob_with(pattern, options)
            .map_err(|e| CliError::usage(format!("{option} {pattern}: {e}")))?;
        let base = glob_base(pattern);
        let mut named = Vec::new();
        for entry in matches {
            let entry = entry.map_err(|e| unreadable(e.path(), e.error()))?;
            if !is_beside_the_data(&entry, &base) {
                named.push(entry);
            }
        }
        named
    } else {
        return Err(CliError::usage(format!(
            "{option} {pattern}: no such file or directory"
        )));
    };
    let mut found = Vec::new();
    for entry in named {
        if entry.is_dir() {
            add_files_under(&entry, &mut found).map_err(|(dir, e)| unreadable(&dir, &e))?;
        } else {
            found.push(entry);
        }
    }
    found.sort();
    found.dedup();
    let mut files = Vec::with_capacity(found.len());
    for file in found {
        match RecordFile::named(&file) {
            Some((file, _)) => files.push(file),
            None => return Err(not_records(option, pattern, &file)),
        }
    }
    if files.is_empty() {
        return Err(CliError::usage(format!(
            "{option} {pattern}: matches no file of records"
        )));
    }
    Ok(read_once(files))
}

/// Adds every file under `dir`, at any depth, to `files`, passing over
/// names that start with `.` or `_` (see [`is_beside_the_data`]) and any
/// directory already walked (a symbolic link back up the tree); an error
/// names the directory that could not be read.
fn add_files_under(
    dir: &Path,
    files: &mut Vec<PathBuf>,
) -> std::result::Result<(), (PathBuf, std::io::Error)> {
    let mut walked = std::collections::HashSet::new();
    add_files_walking(dir, files, &mut walked)
}

fn add_files_walking(
    dir: &Path,
    files: &mut Vec<PathBuf>,
    walked: &mut std::collections::HashSet<PathBuf>,
) -> std::result::Result<(), (PathBuf, std::io::Error)> {
    let unreadable = |e| (dir.to_path_buf(), e);
    if !walked.insert(dir.canonicalize().map_err(unreadable)?) {
        return Ok(());
    }
    for entry in std::fs::read_dir(dir).map_err(unreadable)? {
        let entry = entry.map_err(unreadable)?.path();
        if is_beside_the_data(&entry, dir) {
            continue;
        }
        if entry.is_dir() {
            add_files_walking(&entry, files, walked)?;
        } else {
            files.push(entry);
        }
    }
    Ok(())
}

/// The error for a file a collection option names that holds no records
/// (by its extension).
fn not_records(option: &str, pattern: &str, path: &Path) -> CliError {
    CliError::usage(format!(
        "{option} {pattern}: {} is not a file of records (.{}; the text formats also .{})",
        path.display(),
        EXTENSIONS.join(", ."),
        Compression::EXTENSIONS.join(" or .")
    ))
}
