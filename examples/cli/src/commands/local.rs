//! Offline mode: load a directory of exported records into a ledger and run
//! reports, customer views and movements with the engine directly.

use super::files::{self, Chunk, Records};
use super::jsonl::Block;
use super::record_files::{self, RecordFile};
use super::stripe_files;
use crate::args::{LocalArgs, LocalCommand, LocalCustomers, pairs};
use crate::error::{CliError, Result};
use arrow_array::RecordBatch;
use serde_json::{Value, json};
use std::collections::VecDeque;
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;
use submetrics::model::Json;
use submetrics::{Ledger, MovementFilter, RecordKind, ReportParams, Settings, WriteReport};

/// Records sent to the ledger per batch (the progress bar moves per batch).
const BATCH: usize = 20_000;
/// Loads at least this large show a progress bar on a terminal.
const PROGRESS_FROM: usize = 50_000;

/// The ledger settings the options give.
fn settings(args: &LocalArgs) -> Result<Settings> {
    let mut config = serde_json::Map::new();
    if let Some(v) = &args.base_currency {
        config.insert("base_currency".into(), json!(v));
    }
    if let Some(v) = &args.timezone {
        config.insert("timezone".into(), json!(v));
    }
    if let Some(v) = args.first_day_of_week {
        config.insert("first_day_of_week".into(), json!(v));
    }
    if let Some(v) = args.churn_grace_days {
        config.insert("churn_grace_days".into(), json!(v));
    }
    if let Some(v) = &args.refund_handling {
        config.insert("refund_handling".into(), json!(v));
    }
    Ok(Settings::from_json(&Value::Object(config))?)
}

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
pub fn load(args: &LocalArgs, settings: Settings, loaded: &mut Loaded) -> Result<Ledger> {
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
        given_total += stripe_files::load(&mut ledger, dir, &stripe_options, loaded)?;
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
            files: record_files::once_each(files),
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

/// One chunk of a collection's records, from whichever of its files it
/// came: a block of JSONL lines, a record batch, or JSON values.
enum Piece {
    Lines(Block, PathBuf),
    Batch(RecordBatch),
    Values(Vec<Value>),
}

/// The chunks of a collection's files, one file after another, so that one
/// load reads the next chunk while the one before is stored across the
/// files' ends (a dataset of many small part files is read as one stream).
struct Pieces<'a> {
    files: std::slice::IterMut<'a, (PathBuf, Records)>,
    current: Option<&'a mut Records>,
    /// The chunks of a file read whole, not yet handed out.
    pending: VecDeque<Piece>,
}

impl<'a> Pieces<'a> {
    fn new(files: &'a mut [(PathBuf, Records)]) -> Pieces<'a> {
        Pieces {
            files: files.iter_mut(),
            current: None,
            pending: VecDeque::new(),
        }
    }

    /// The next chunk; `None` after the last file's last chunk. An error
    /// names the file (and the line).
    fn next(&mut self) -> Result<Option<Piece>> {
        loop {
            if let Some(piece) = self.pending.pop_front() {
                return Ok(Some(piece));
            }
            let Some(records) = &mut self.current else {
                match self.files.next() {
                    Some((_, records)) => self.current = Some(records),
                    None => return Ok(None),
                }
                continue;
            };
            let piece = match records {
                // Records read whole: every chunk at once, each moved once.
                Records::Values(values) => {
                    let mut values = std::mem::take(values).into_iter();
                    while values.len() > 0 {
                        let chunk = values.by_ref().take(BATCH).collect();
                        self.pending.push_back(Piece::Values(chunk));
                    }
                    None
                }
                Records::Batches(batches) => {
                    let batches = std::mem::take(batches).into_iter().map(Piece::Batch);
                    self.pending.extend(batches);
                    None
                }
                Records::LineStream(stream) => {
                    let path = stream.path().to_path_buf();
                    let block = stream
                        .next_block()
                        .map_err(|e| CliError::usage(format!("{}: {e}", path.display())))?;
                    block.map(|block| Piece::Lines(block, path))
                }
                Records::Stream(stream) => stream.next_chunk()?.map(|chunk| match chunk {
                    Chunk::Batch(batch) => Piece::Batch(batch),
                    Chunk::Values(values) => Piece::Values(values),
                }),
            };
            match piece {
                Some(piece) => return Ok(Some(piece)),
                None => self.current = None,
            }
        }
    }

    /// How many records the file being read holds, as far as can be told
    /// from what was read of it.
    fn estimate(&self) -> Option<usize> {
        match self.current.as_deref()? {
            Records::LineStream(stream) => stream.estimate(),
            Records::Stream(stream) => stream.estimate(),
            records => records.len(),
        }
    }
}

impl Piece {
    fn len_hint(&self) -> usize {
        match self {
            Piece::Lines(block, _) => block.records().len(),
            Piece::Batch(batch) => batch.num_rows(),
            Piece::Values(values) => values.len(),
        }
    }

    /// The block's records parsed; a malformed line is an error naming the
    /// file and the line.
    fn parse_lines<'b>(block: &'b Block, path: &Path) -> Result<Vec<Json<'b>>> {
        block
            .parse()
            .map_err(|(line, e)| super::files::at_line(path, line, &e.to_string()))
    }

    /// The piece's invoices read; a line of a JSONL file that is no JSON
    /// object is an error naming the file and the line, as for every kind
    /// (a record that is JSON but breaks a rule is that record's rejection).
    fn read_invoices(self) -> Result<submetrics::ReadInvoices> {
        Ok(match self {
            Piece::Lines(block, path) => {
                let read = Ledger::read_invoice_texts(&block.records());
                if let Some((line, reason)) = block.malformed(&read) {
                    return Err(super::files::at_line(&path, line, reason));
                }
                read
            }
            Piece::Batch(batch) => Ledger::read_invoice_batch(&batch)?,
            Piece::Values(values) => Ledger::read_invoice_values(&values),
        })
    }

    fn read_customers(self) -> Result<submetrics::ReadCustomers> {
        Ok(match self {
            Piece::Lines(block, path) => {
                Ledger::read_customer_trees(&Piece::parse_lines(&block, &path)?)
            }
            Piece::Batch(batch) => Ledger::read_customer_batch(&batch)?,
            Piece::Values(values) => Ledger::read_customer_values(&values),
        })
    }

    fn upsert(self, ledger: &mut Ledger, kind: RecordKind) -> Result<WriteReport> {
        Ok(match self {
            Piece::Lines(block, path) => {
                ledger.upsert_trees(kind, &Piece::parse_lines(&block, &path)?)
            }
            Piece::Batch(batch) => ledger.upsert_arrow(kind, &batch)?,
            Piece::Values(values) => ledger.upsert(kind, &values),
        })
    }
}

/// Loads a collection's chunks of `kind`, passing each chunk's report to
/// `write`. Invoice and customer chunks are read on every core while the
/// chunk before is stored, across the ends of files. A malformed line of
/// a JSONL file is an error naming the file and the line.
fn load_pieces(
    ledger: &mut Ledger,
    kind: RecordKind,
    mut pieces: Pieces<'_>,
    total: Option<usize>,
    mut write: impl FnMut(WriteReport) + Send,
) -> Result<()> {
    let Some(first) = pieces.next()? else {
        return Ok(());
    };
    // Room for the records before the first chunk is stored: the count
    // the files state (Parquet), else what the first file's first lines
    // suggest.
    let room = total.or(pieces.estimate()).unwrap_or(first.len_hint());
    match kind {
        RecordKind::Customers => ledger.reserve_customers(room),
        RecordKind::Invoices => ledger.reserve_invoices(room),
        _ => {}
    }
    let mut first = Some(first);
    let mut next = || match first.take() {
        Some(piece) => Ok(Some(piece)),
        None => pieces.next(),
    };
    match kind {
        RecordKind::Invoices => {
            ledger.upsert_invoice_stream(|| next()?.map(Piece::read_invoices).transpose(), write)
        }
        RecordKind::Customers => {
            ledger.upsert_customer_stream(|| next()?.map(Piece::read_customers).transpose(), write)
        }
        _ => {
            while let Some(piece) = next()? {
                write(piece.upsert(ledger, kind)?);
            }
            Ok(())
        }
    }
}

fn query(params: &[String]) -> Result<ReportParams> {
    Ok(pairs(params)
        .map_err(CliError::usage)?
        .into_iter()
        .collect())
}

/// Runs a `local` command at `as_of` (default now); `loaded` gets what
/// the load kept, also when the command fails.
pub fn run(args: LocalArgs, as_of: Option<&str>, loaded: &mut Loaded) -> Result<Value> {
    let settings = settings(&args)?;
    let as_of = match as_of {
        Some(text) => submetrics::parse_as_of(text, &settings)?,
        None => chrono::Utc::now(),
    };
    check_before_loading(&args.command, &settings, as_of)?;
    let started = Instant::now();
    let ledger = load(&args, settings, loaded)?;
    let load_time = started.elapsed();
    let timing = args.timing;
    let computed = Instant::now();
    let result = compute(&ledger, &args.command, as_of);
    // The process ends once the answer is printed, and the system takes its
    // memory back at once; freeing a large ledger record by record first
    // would only delay the answer (a quarter of a second at 10M invoices).
    std::mem::forget(ledger);
    if timing {
        eprintln!(
            "timing: load {:.3} s, compute {:.3} s",
            load_time.as_secs_f64(),
            computed.elapsed().as_secs_f64()
        );
    }
    result
}

/// Fails before anything loads when the command is refused whatever the
/// data: an unknown report or parameter, or a value that cannot be read. The
/// command runs on an empty ledger of the same settings, which is the
/// engine's own check at no cost; its other errors (a customer not found,
/// or a `plan` filter naming a plan the files hold) depend on the data and
/// are left to the run on the loaded ledger.
fn check_before_loading(
    command: &LocalCommand,
    settings: &Settings,
    as_of: chrono::DateTime<chrono::Utc>,
) -> Result<()> {
    match compute(&Ledger::new(settings.clone()), command, as_of) {
        Err(error @ CliError::Usage(_)) => Err(error),
        Err(CliError::Core(error))
            if matches!(error.code(), "unknown_report" | "invalid_query")
                && !matches!(&error, submetrics::Error::InvalidQuery { param, .. } if param == "plan") =>
        {
            Err(CliError::Core(error))
        }
        _ => Ok(()),
    }
}

/// Runs a `local` command on the loaded ledger.
fn compute(
    ledger: &Ledger,
    command: &LocalCommand,
    as_of: chrono::DateTime<chrono::Utc>,
) -> Result<Value> {
    match command {
        LocalCommand::Reports { name, params } => {
            Ok(ledger.report(name, &query(params)?, as_of)?)
        }
        LocalCommand::Customers { action } => match action {
            LocalCustomers::List { params } => {
                Ok(ledger.analytics_customers(&query(params)?, as_of)?)
            }
            LocalCustomers::Get { id } => {
                Ok(ledger.analytics_customer(id, &ReportParams::new(), as_of)?)
            }
        },
        LocalCommand::Movements {
            customer,
            from,
            to,
            kinds,
        } => {
            let mut params = ReportParams::new();
            let given = [
                ("customer", customer),
                ("from", from),
                ("to", to),
                ("kinds", kinds),
            ];
            for (name, value) in given {
                if let Some(value) = value {
                    params.insert(name.to_string(), value.clone());
                }
            }
            let filter = MovementFilter::from_params(&params, ledger.settings())?;
            Ok(json!(ledger.movements(as_of, &filter)?))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::{ArrayRef, Int64Array};
    use std::sync::Arc;

    fn batch(rows: i64) -> RecordBatch {
        let column: ArrayRef = Arc::new(Int64Array::from_iter_values(0..rows));
        RecordBatch::try_from_iter([("amount", column)]).unwrap()
    }

    /// A ledger of one paying customer.
    fn small_ledger(settings: &Settings) -> Ledger {
        let mut ledger = Ledger::new(settings.clone());
        let plan = json!({"id": "m", "name": "M", "interval": "month", "currency": "USD"});
        let customer = json!({"id": "c", "name": "C"});
        let invoice = json!({"id": "i", "customer_id": "c", "type": "subscription",
            "plan_id": "m", "invoice_date": "2024-01-01", "amount": 3000, "currency": "USD"});
        ledger.upsert(submetrics::RecordKind::Plans, &[plan]);
        ledger.upsert(submetrics::RecordKind::Customers, &[customer]);
        let stored = ledger.upsert(submetrics::RecordKind::Invoices, &[invoice]);
        assert_eq!(stored.accepted(), 1);
        ledger
    }

    #[test]
    fn the_check_before_loading_refuses_only_what_the_loaded_ledger_refuses_alike() {
        let as_of = chrono::Utc::now();
        let settings = Settings::default();
        let ledger = small_ledger(&settings);
        let mut commands: Vec<LocalCommand> = submetrics::reports::report_names()
            .into_iter()
            .map(|name| LocalCommand::Reports {
                name: name.to_string(),
                params: Vec::new(),
            })
            .collect();
        commands.push(LocalCommand::Customers {
            action: LocalCustomers::List { params: Vec::new() },
        });
        // A plan filter names a plan of the files, which an empty ledger lacks.
        for name in ["mrr", "summary"] {
            commands.push(LocalCommand::Reports {
                name: name.to_string(),
                params: vec!["--plan".to_string(), "m".to_string()],
            });
        }
        commands.push(LocalCommand::Movements {
            customer: None,
            from: None,
            to: None,
            kinds: None,
        });
        let mut refused = Vec::new();
        for command in &commands {
            let loaded = compute(&ledger, command, as_of).map_err(|e| e.to_string());
            match check_before_loading(command, &settings, as_of) {
                Ok(()) => assert!(loaded.is_ok(), "{loaded:?}"),
                Err(error) => {
                    assert_eq!(loaded, Err(error.to_string()));
                    refused.push(error.to_string());
                }
            }
        }
        // The reports of a period's customers need the period.
        let needs_date =
            "parameter `selected-date`: is required (the start of the period to list, YYYY-MM-DD)";
        // `summary` reads no `plan` (refused before loading), `mrr` does.
        let no_plan = "parameter `plan`: report `summary` has no such parameter. Its parameters: baseCurrency";
        assert_eq!(refused, [needs_date, needs_date, needs_date, no_plan]);
    }

    #[test]
    fn pieces_hand_out_every_files_chunks_in_order() {
        let values: Vec<Value> = (0..45_000).map(Value::from).collect();
        let mut files = vec![
            (PathBuf::from("a.json"), Records::Values(values)),
            (PathBuf::from("b.json"), Records::Values(Vec::new())),
            (
                PathBuf::from("c.parquet"),
                Records::Batches(vec![batch(3), batch(2)]),
            ),
        ];
        let mut pieces = Pieces::new(&mut files);
        let mut seen = Vec::new();
        while let Some(piece) = pieces.next().unwrap() {
            let first = match &piece {
                Piece::Values(values) => values[0].as_i64().unwrap(),
                Piece::Batch(batch) => -(batch.num_rows() as i64),
                Piece::Lines(..) => unreachable!("no JSONL file"),
            };
            seen.push((piece.len_hint(), first));
        }
        assert_eq!(
            seen,
            [
                (20_000, 0),
                (20_000, 20_000),
                (5_000, 40_000),
                (3, -3),
                (2, -2)
            ]
        );
    }
}
