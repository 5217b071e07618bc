//! Finding and loading the record files of `local`: the `--data`
//! directory, the collection options and `--stripe`, with what the load
//! kept and rejected.

use super::pieces::{Pieces, load_pieces};
use crate::args::LocalArgs;
use crate::commands::files::{self, Records};
use crate::commands::places::Places;
use crate::commands::record_files::{self, RecordFile};
use crate::commands::stripe_files;
use crate::error::{CliError, Result};
use std::io::{IsTerminal, Write};
use std::path::Path;
use submetrics::{Ledger, RecordKind, Settings, StripeOptions, WriteReport};

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
/// `loaded`'s counts; rejected records go to stderr, each named by its file
/// and place there (see [`Places`]). Nothing loaded (no
/// records, or every record of a kind rejected) is an error, and so is a
/// source that gives nothing (the record files, or `--stripe`) and any
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
    if sources.is_empty() && args.stripe.is_none() {
        return Err(CliError::usage(
            "local needs --data DIR, --stripe DIR or the files of a collection (--invoices PATH, ...)",
        ));
    }
    let stripe_options = stripe_files::options(args)?;
    // Every file is found before any is read, so a pattern that matches
    // nothing is an error before anything loads.
    let files = if sources.is_empty() {
        None
    } else {
        Some(record_files(args)?)
    };
    let mut ledger = Ledger::new(settings);
    if let Some(files) = files {
        let read = load_records(&mut ledger, files, loaded)?;
        note_repeated_ids(&ledger, loaded);
        // FX rates alone are records only beside the Stripe objects they
        // convert.
        if read.records == 0 && (read.rates == 0 || args.stripe.is_none()) {
            return Err(CliError::usage(format!(
                "{}: no records (customers, plans and invoices as .json, .jsonl, .csv or .parquet)",
                sources.join(" and ")
            )));
        }
    }
    if let Some(dir) = &args.stripe {
        load_stripe(&mut ledger, dir, &stripe_options, loaded)?;
    }
    if loaded.rejected > 0 && args.strict {
        return Err(CliError::usage(format!(
            "{} record(s) rejected (--strict)",
            loaded.rejected
        )));
    }
    Ok(ledger)
}

/// Notes on stderr each kind whose records repeat an id given earlier in
/// the load: every record was stored, so the last of an id replaced the
/// others, and the ledger holds fewer than were loaded.
fn note_repeated_ids(ledger: &Ledger, loaded: &Loaded) {
    let (customers, plans, _, invoices) = ledger.counts();
    for (kind, given, kept) in [
        ("customer", loaded.customers, customers),
        ("plan", loaded.plans, plans),
        ("invoice", loaded.invoices, invoices),
    ] {
        if given > kept {
            eprintln!(
                "note: {} {kind} record(s) repeat an id given earlier; the last record of an id \
                 stands ({given} loaded, {kept} kept)",
                given - kept
            );
        }
    }
}

/// Loads the Stripe objects of `dir` into `loaded`'s counts; rejected
/// objects go to stderr. A directory of no Stripe object, or of none the
/// mapping keeps, is an error naming it.
fn load_stripe(
    ledger: &mut Ledger,
    dir: &Path,
    options: &StripeOptions,
    loaded: &mut Loaded,
) -> Result<()> {
    let named = format!("--stripe {}", dir.display());
    let objects = stripe_files::read(dir)?;
    if objects.is_empty() {
        return Err(CliError::usage(format!(
            "{named}: no records (Stripe objects as .json or .jsonl)"
        )));
    }
    let report = ledger.import_stripe(&objects, options);
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
    if report.customers + report.plans + report.invoices + report.removed > 0 {
        return Ok(());
    }
    if !report.rejected.is_empty() {
        return Err(CliError::usage(format!(
            "{named}: every Stripe object was rejected"
        )));
    }
    let first = report.skipped.first().map_or(String::new(), |skip| {
        let which = match (skip.object.as_str(), skip.id.as_str()) {
            ("?", _) => "a record".to_string(),
            (object, id) => format!("{object} {id}"),
        };
        format!(" (the first: {which} {})", skip.reason)
    });
    Err(CliError::usage(format!(
        "{named}: none of its {} records is a Stripe object the mapping keeps{first}; \
         it reads Stripe API objects as `stripe export` writes them",
        objects.len()
    )))
}

/// The files of one collection and where they were named (`--data DIR`,
/// or the collection's options), for errors.
struct CollectionSource {
    collection: &'static str,
    named_by: String,
    files: Vec<RecordFile>,
}

/// The files of each collection, in the order collections load (FX rates
/// first, invoices last): those its option names when given, else the
/// `--data` directory's; a file named twice, or two ways, is read once.
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
            files.extend(record_files::files_matching(option, pattern)?);
        }
        let files = record_files::read_once(files);
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

/// The error of a collection whose files hold no record (empty, or a CSV
/// header alone): named, as its data most likely did not get there.
fn no_records(collection: &str, files: &[RecordFile]) -> CliError {
    let paths: Vec<String> = files.iter().map(|f| f.path.display().to_string()).collect();
    CliError::usage(format!(
        "{}: no records of {collection} (the files are empty or a CSV header alone); \
         fill them or leave them out",
        paths.join(", ")
    ))
}

/// How many records the files of a load held: FX rates, and records of
/// every other kind.
struct Read {
    rates: usize,
    records: usize,
}

/// Loads the record files of each collection into `loaded`'s counts;
/// answers how many records the files held. Every record of a kind
/// rejected is an error naming where its files were named.
fn load_records(
    ledger: &mut Ledger,
    sources: Vec<CollectionSource>,
    loaded: &mut Loaded,
) -> Result<Read> {
    let show = std::io::stderr().is_terminal();
    let mut read = Read {
        rates: 0,
        records: 0,
    };
    // Collections whose every record was rejected, by where they were named.
    let mut all_rejected: Vec<(String, Vec<&str>)> = Vec::new();
    for source in sources {
        let CollectionSource {
            collection,
            named_by,
            files,
        } = source;
        if files.is_empty() {
            continue;
        }
        let empty = no_records(collection, &files);
        let kind = match collection {
            "fx_rates" => {
                let before = read.rates;
                for records in files::read_whole(files, collection)? {
                    read.rates += records.len().unwrap_or(0);
                    match records {
                        Records::Values(rates, _) if !rates.is_empty() => {
                            ledger.load_fx_rates(&rates)?;
                        }
                        Records::Batches(batches, _) => {
                            ledger.load_fx_rates_arrow(&batches)?;
                        }
                        // Files read whole are never streams.
                        _ => {}
                    }
                }
                if read.rates == before {
                    return Err(empty);
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
        let mut write = |report: WriteReport, places: &Places, loaded: &mut Loaded| {
            accepted += report.accepted();
            done += report.results.len();
            for (index, result) in report.results.iter().enumerate() {
                if let Some(error) = &result.import_error {
                    loaded.rejected += 1;
                    eprintln!("rejected: {}: {error}", places.of(index));
                }
            }
            if bar {
                progress(total.map_or(done, |t| done.min(t)), total, collection);
            }
        };
        load_pieces(
            ledger,
            kind,
            Pieces::new(&mut files),
            total,
            |report, places| write(report, places, loaded),
        )?;
        if bar && total.is_none() && done > 0 {
            eprintln!();
        }
        match kind {
            RecordKind::Customers => loaded.customers += accepted,
            RecordKind::Plans => loaded.plans += accepted,
            RecordKind::Invoices => loaded.invoices += accepted,
            _ => {}
        }
        read.records += done;
        if done == 0 {
            return Err(empty);
        }
        if accepted == 0 {
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
    Ok(read)
}
