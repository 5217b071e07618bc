//! Finding and loading the record files of `local`: the `--data`
//! directory, the collection options and `--stripe`, with what the load
//! kept and rejected.

use super::pieces::{Pieces, load_pieces};
use crate::args::LocalArgs;
use crate::commands::files::{self, Records};
use crate::commands::record_files::{self, RecordFile};
use crate::commands::stripe_files;
use crate::error::{CliError, Result};
use std::io::{IsTerminal, Write};
use submetrics::{Ledger, RecordKind, Settings, WriteReport};

/// Loads at least this large show a progress bar on a terminal.
const PROGRESS_FROM: usize = 50_000;

/// A progress line: a bar when the total is known, else the count so far
/// (the caller ends that line).
fn progress(done: usize, total: Option<usize>, what: &str) {
    let Some(total) = total else {
        eprint!("\r{what:<10} {done}");
        let _ = std::io::stderr().flush();
        return;
    };
    let width = 30;
    let filled = done * width / total.max(1);
    eprint!(
        "\r{what:<10} [{}{}] {done}/{total}",
        "#".repeat(filled),
        " ".repeat(width - filled)
    );
    if done == total {
        eprintln!();
    }
    let _ = std::io::stderr().flush();
}

/// What a load kept: the records accepted of the kinds reports rest on,
/// and every record rejected.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Loaded {
    pub customers: usize,
    pub plans: usize,
    pub invoices: usize,
    pub rejected: usize,
}

impl std::fmt::Display for Loaded {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "loaded {} customers, {} plans, {} invoices; rejected {}",
            self.customers, self.plans, self.invoices, self.rejected
        )
    }
}

/// Loads every file of the directories and collection options into
/// `loaded`'s counts; rejected records go to stderr. Nothing loaded (no
/// records, or every record of a kind rejected) is an error, and so is any
/// rejection with `--strict`.
pub(super) fn load(args: &LocalArgs, settings: Settings, loaded: &mut Loaded) -> Result<Ledger> {
    for (flag, dir) in [("--data", &args.data), ("--stripe", &args.stripe)] {
        if let Some(dir) = dir
            && !dir.is_dir()
        {
            return Err(CliError::usage(format!(
                "{flag} {}: not a directory",
                dir.display()
            )));
        }
    }
    let mut sources = Vec::new();
    if let Some(data) = &args.data {
        sources.push(format!("--data {}", data.display()));
    }
    for (_, option, paths) in args.collections.options() {
        sources.extend(paths.iter().map(|path| format!("{option} {path}")));
    }
    let records_given = !sources.is_empty();
    if let Some(stripe) = &args.stripe {
        sources.push(format!("--stripe {}", stripe.display()));
    }
    if sources.is_empty() {
        return Err(CliError::usage(
            "local needs --data DIR, --stripe DIR or the files of a collection (--invoices PATH, ...)",
        ));
    }
    let stripe_options = stripe_files::options(args)?;
    // Every file is found before any is read, so a pattern that matches
    // nothing is an error before anything loads.
    let files = if records_given {
        Some(record_files(args)?)
    } else {
        None
    };
    let mut ledger = Ledger::new(settings);
    let mut given_total = 0;
    if let Some(files) = files {
        given_total += load_records(&mut ledger, files, loaded)?;
    }
    if let Some(dir) = &args.stripe {
        let objects = stripe_files::read(dir)?;
        given_total += objects.len();
        let report = ledger.import_stripe(&objects, &stripe_options);
        loaded.customers += report.customers;
        loaded.plans += report.plans;
        loaded.invoices += report.invoices;
        for r in &report.rejected {
            loaded.rejected += 1;
            eprintln!(
                "rejected: {} {}: field `{}`: {}",
                r.object, r.id, r.field, r.reason
            );
        }
    }
    if given_total == 0 {
        let mut expected = Vec::new();
        if records_given {
            expected.push("customers, plans and invoices as .json, .jsonl, .csv or .parquet");
        }
        if args.stripe.is_some() {
            expected.push("Stripe objects as .json or .jsonl");
        }
        return Err(CliError::usage(format!(
            "{}: no records ({})",
            sources.join(" and "),
            expected.join("; ")
        )));
    }
    if loaded.rejected > 0 && args.strict {
        return Err(CliError::usage(format!(
            "{} record(s) rejected (--strict)",
            loaded.rejected
        )));
    }
    Ok(ledger)
}

/// The files of one collection and where they were named (`--data DIR`,
/// or the collection's options), for errors.
struct CollectionSource {
    collection: &'static str,
    named_by: String,
    files: Vec<RecordFile>,
}

/// The files of each collection, in the order collections load (FX rates
/// first, invoices last): those its option names when given (a file named
/// twice is read once), else the `--data` directory's.
fn record_files(args: &LocalArgs) -> Result<Vec<CollectionSource>> {
    let mut all = Vec::new();
    for (collection, option, patterns) in args.collections.options() {
        let mut files: Vec<RecordFile> = Vec::new();
        let named_by = if patterns.is_empty() {
            match &args.data {
                Some(dir) => {
                    files = record_files::collection_files("--data", dir, collection)?;
                    format!("--data {}", dir.display())
                }
                None => continue,
            }
        } else {
            let named: Vec<String> = patterns.iter().map(|p| format!("{option} {p}")).collect();
            named.join(" ")
        };
        for pattern in patterns {
            for file in record_files::files_matching(option, pattern)? {
                if !files.contains(&file) {
                    files.push(file);
                }
            }
        }
        all.push(CollectionSource {
            collection,
            named_by,
            files,
        });
    }
    if let Some(dir) = &args.data {
        let collections: Vec<&str> = args.collections.options().map(|(c, _, _)| c).to_vec();
        let read: Vec<RecordFile> = all.iter().flat_map(|s| s.files.clone()).collect();
        let unread = record_files::unread_files("--data", dir, &collections, &read)?;
        record_files::note_unread("--data", dir, &unread);
    }
    Ok(all)
}

/// Loads the record files of each collection into `loaded`'s counts;
/// returns how many records the files held. Every record of a kind
/// rejected is an error naming where its files were named.
fn load_records(
    ledger: &mut Ledger,
    sources: Vec<CollectionSource>,
    loaded: &mut Loaded,
) -> Result<usize> {
    let show = std::io::stderr().is_terminal();
    let mut given_total = 0;
    // Collections whose every record was rejected, by where they were named.
    let mut all_rejected: Vec<(String, Vec<&str>)> = Vec::new();
    for source in sources {
        let CollectionSource {
            collection,
            named_by,
            files,
        } = source;
        let kind = match collection {
            "fx_rates" => {
                for records in files::read_whole(files, collection)? {
                    match records {
                        Records::Values(rates) if !rates.is_empty() => {
                            ledger.load_fx_rates(&rates)?;
                        }
                        Records::Batches(batches) => {
                            for batch in &batches {
                                ledger.load_fx_rates_arrow(batch)?;
                            }
                        }
                        // Files read whole are never streams.
                        _ => {}
                    }
                }
                continue;
            }
            "data_sources" => RecordKind::DataSources,
            "customers" => RecordKind::Customers,
            "plans" => RecordKind::Plans,
            "plan_groups" => RecordKind::PlanGroups,
            _ => RecordKind::Invoices,
        };
        let mut files = files::read(files, collection)?;
        // Unknown while a CSV file is streamed.
        let total: Option<usize> = files.iter().map(|(_, records)| records.len()).sum();
        let bar = show && total.is_none_or(|total| total >= PROGRESS_FROM);
        let mut accepted = 0;
        let mut done = 0;
        let mut write = |report: WriteReport, loaded: &mut Loaded| {
            accepted += report.accepted();
            done += report.results.len();
            for result in report.rejected() {
                loaded.rejected += 1;
                eprintln!(
                    "rejected: {}",
                    result.import_error.clone().unwrap_or_default()
                );
            }
            if bar {
                progress(total.map_or(done, |t| done.min(t)), total, collection);
            }
        };
        load_pieces(ledger, kind, Pieces::new(&mut files), total, |report| {
            write(report, loaded)
        })?;
        if bar && total.is_none() && done > 0 {
            eprintln!();
        }
        match kind {
            RecordKind::Customers => loaded.customers += accepted,
            RecordKind::Plans => loaded.plans += accepted,
            RecordKind::Invoices => loaded.invoices += accepted,
            _ => {}
        }
        given_total += done;
        if done > 0 && accepted == 0 {
            match all_rejected.iter_mut().find(|(by, _)| *by == named_by) {
                Some((_, collections)) => collections.push(collection),
                None => all_rejected.push((named_by, vec![collection])),
            }
        }
    }
    if !all_rejected.is_empty() {
        let each: Vec<String> = all_rejected
            .iter()
            .map(|(named_by, collections)| {
                format!(
                    "{named_by}: every record of {} was rejected",
                    collections.join(", ")
                )
            })
            .collect();
        return Err(CliError::usage(each.join("; ")));
    }
    Ok(given_total)
}
