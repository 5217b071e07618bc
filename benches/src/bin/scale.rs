//! The scale harness: for each size, load time (from in-memory records and
//! from JSONL files), full recompute, incremental upserts (median and p99),
//! report latency and memory. Prints one Markdown table per size.
//!
//! `scale` runs 100k invoices; `scale 1000000 ...` any sizes; `scale --full`
//! runs 100k, 1M and 10M. Build with `--release`.

use serde_json::{Value, json};
use std::io::Read;
use std::time::Duration;
use submetrics::model::Json;
use submetrics::{Error, Ledger, MovementFilter, RecordKind, ReportParams, Settings};
use submetrics_benches::generator::Spec;
use submetrics_benches::measure::{
    full_recompute, memory, ms, quantile, return_freed_memory, timed, us,
};
use submetrics_benches::write::{Streamed, generate_jsonl};

fn main() {
    submetrics_allocator::keep_freed_memory_longer();
    let args: Vec<String> = std::env::args().skip(1).collect();
    if let [flag, dir, as_of] = args.as_slice()
        && flag == "--load-jsonl"
    {
        let as_of = as_of.parse().expect("an RFC 3339 as_of");
        load_jsonl_and_report(std::path::Path::new(dir), as_of);
        return;
    }
    let sizes: Vec<usize> = match args.as_slice() {
        [] => vec![100_000],
        [full] if full == "--full" => vec![100_000, 1_000_000, 10_000_000],
        given => match given
            .iter()
            .map(|a| a.parse())
            .collect::<Result<Vec<usize>, _>>()
        {
            Ok(sizes) => sizes,
            Err(_) => {
                eprintln!(
                    "usage: scale [--full | INVOICES ...] | scale --load-jsonl DIR AS_OF \
                     (sizes are whole numbers, e.g. 1000000)"
                );
                std::process::exit(2);
            }
        },
    };
    println!(
        "threads: {}",
        std::thread::available_parallelism().map_or(1, |n| n.get())
    );
    for size in sizes {
        run(size);
    }
}

fn load(
    ledger: &mut Ledger,
    plans: &[Value],
    customers: &[Value],
    invoices: &[Value],
    fx: &[Value],
) {
    ledger
        .load_fx_rates(fx)
        .expect("generated FX rates are valid");
    ledger.upsert_plans(plans);
    ledger.upsert_customers(customers);
    for chunk in invoices.chunks(50_000) {
        ledger.upsert_invoices(chunk);
    }
}

/// Child-process mode, so memory is measured without the generator's
/// records in the same heap: loads the JSONL files of `dir` into a fresh
/// ledger (customers and plans as record trees, invoices streamed) and
/// prints the time in milliseconds, the invoice count, the growth of
/// resident memory right after the load, again once the allocator has
/// handed back the pages the load freed, and again once every customer's
/// replay at `as_of` is cached (what the first report builds and the
/// ledger keeps).
fn load_jsonl_and_report(dir: &std::path::Path, as_of: chrono::DateTime<chrono::Utc>) {
    let (rss_before, _) = memory();
    let mut ledger = Ledger::new(Settings::default());
    let (_, time) = timed(|| {
        for (name, kind) in [
            ("plans", RecordKind::Plans),
            ("customers", RecordKind::Customers),
        ] {
            let text = std::fs::read_to_string(dir.join(format!("{name}.jsonl")))
                .expect("generated file exists");
            let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
            let records = Json::parse_many(&lines).expect("generated records are JSON");
            if kind == RecordKind::Customers {
                ledger.reserve_customers(records.len());
            }
            ledger.upsert_trees(kind, &records);
        }
        let rates =
            std::fs::read_to_string(dir.join("fx_rates.jsonl")).expect("generated file exists");
        let rates: Vec<&str> = rates.lines().filter(|l| !l.trim().is_empty()).collect();
        ledger
            .load_fx_rates_trees(&Json::parse_many(&rates).expect("generated rates are JSON"))
            .expect("valid rates");
        let file = std::fs::File::open(dir.join("invoices.jsonl")).expect("generated file exists");
        load_invoices(&mut ledger, file).expect("readable invoices");
    });
    let (rss_after, _) = memory();
    return_freed_memory();
    let (rss_settled, _) = memory();
    let replays = ledger.customer_movements(as_of).expect("movements");
    let (rss_replayed, _) = memory();
    drop(replays);
    println!(
        "{} {} {} {} {}",
        time.as_millis(),
        ledger.counts().3,
        rss_after.saturating_sub(rss_before),
        rss_settled.saturating_sub(rss_before),
        rss_replayed.saturating_sub(rss_before)
    );
}

/// Streams a JSONL file of invoices into the ledger in blocks of whole
/// lines through [`Ledger::upsert_invoice_stream`], as `submetrics local`
/// does: the next block is read on every core while the one before is
/// stored.
fn load_invoices(ledger: &mut Ledger, file: std::fs::File) -> std::io::Result<()> {
    let file_size = file.metadata()?.len() as usize;
    let mut blocks = LineBlocks::new(file);
    let mut first = blocks.next()?;
    if let Some(block) = &first {
        // Room for the whole file, estimated from its first block's lines.
        let lines = block.iter().filter(|&&b| b == b'\n').count().max(1);
        let estimate = file_size / (block.len() / lines).max(1);
        ledger.reserve_invoices(estimate + estimate / 16);
    }
    let mut rejected = 0;
    ledger.upsert_invoice_stream(
        || -> std::io::Result<_> {
            let Some(block) = first
                .take()
                .map_or_else(|| blocks.next(), |b| Ok(Some(b)))?
            else {
                return Ok(None);
            };
            let text = std::str::from_utf8(&block)
                .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e))?;
            let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
            let read = Ledger::read_invoice_texts(&lines);
            drop(lines);
            blocks.recycle(block);
            Ok(Some(read))
        },
        |report| rejected += report.rejected().count(),
    )?;
    if rejected > 0 {
        eprintln!("{rejected} invoices rejected");
    }
    Ok(())
}

/// A file's text in blocks of whole lines of about [`LineBlocks::BLOCK`]
/// bytes (a longer line makes a longer block). A block handed back with
/// [`LineBlocks::recycle`] holds the next one, so the load reads into the
/// same memory instead of faulting in fresh pages for every block.
struct LineBlocks {
    file: std::fs::File,
    /// What was read and not yet handed out: the start of a line.
    buffer: Vec<u8>,
    /// A block handed back, for the next one.
    spare: Vec<u8>,
    done: bool,
}

impl LineBlocks {
    const BLOCK: usize = 8 << 20;

    fn new(file: std::fs::File) -> LineBlocks {
        LineBlocks {
            file,
            buffer: Vec::with_capacity(Self::BLOCK + (64 << 10)),
            spare: Vec::new(),
            done: false,
        }
    }

    /// The next block of whole lines; `None` at the end of the file.
    fn next(&mut self) -> std::io::Result<Option<Vec<u8>>> {
        let mut want = Self::BLOCK;
        loop {
            while !self.done && self.buffer.len() < want {
                let start = self.buffer.len();
                self.buffer.resize(want.max(start + (64 << 10)), 0);
                let n = self.file.read(&mut self.buffer[start..])?;
                self.buffer.truncate(start + n);
                self.done = n == 0;
            }
            let end = if self.done {
                self.buffer.len()
            } else {
                let last_newline = self.buffer.iter().rposition(|&b| b == b'\n');
                last_newline.map_or(0, |i| i + 1)
            };
            if end == 0 && !self.done {
                // A line longer than the block: read on until it ends.
                want *= 2;
                continue;
            }
            if end == 0 {
                return Ok(None);
            }
            // The rest of the buffer (a line's start) moves to the spare
            // block, which becomes the buffer.
            let mut block = std::mem::take(&mut self.spare);
            block.clear();
            block.extend_from_slice(&self.buffer[end..]);
            std::mem::swap(&mut self.buffer, &mut block);
            block.truncate(end);
            return Ok(Some(block));
        }
    }

    /// Hands a block back, to read the next one into.
    fn recycle(&mut self, block: Vec<u8>) {
        self.spare = block;
    }
}

fn run(size: usize) {
    let spec = Spec::with_invoices(size);
    let as_of = spec.as_of();
    let dir = std::env::temp_dir().join(format!("submetrics-scale-{size}-{}", std::process::id()));
    let (streamed, generate_time) =
        timed(|| generate_jsonl(&spec, &dir, 500).expect("temp dir is writable"));
    let Streamed {
        data,
        invoices: typed,
        sample,
    } = streamed;
    let invoices = typed.len();
    let mut rows: Vec<(String, String)> = vec![
        (
            "customers / invoices".into(),
            format!("{} / {}", data.customers.len(), invoices),
        ),
        (
            "generate (and write JSONL, build typed records)".into(),
            ms(generate_time),
        ),
    ];

    let child = std::process::Command::new(std::env::current_exe().expect("own path"))
        .arg("--load-jsonl")
        .arg(&dir)
        .arg(as_of.to_rfc3339())
        .output()
        .expect("the harness can run itself");
    let _ = std::fs::remove_dir_all(&dir);
    let report = String::from_utf8_lossy(&child.stdout);
    let fields: Vec<u64> = report
        .split_whitespace()
        .filter_map(|f| f.parse().ok())
        .collect();
    let (jsonl_time, ledger_bytes, settled_bytes, replayed_bytes) = match fields.as_slice() {
        [ms, _, bytes, settled, replayed] => {
            (Duration::from_millis(*ms), *bytes, *settled, *replayed)
        }
        _ => panic!(
            "the JSONL loader failed: {}",
            String::from_utf8_lossy(&child.stderr)
        ),
    };

    let mut ledger = Ledger::new(Settings::default());
    load(
        &mut ledger,
        &data.plans,
        &data.customers,
        &[],
        &data.fx_rates,
    );
    drop(data);
    let (_, load_time) = timed(|| ledger.upsert_invoice_records(typed));
    rows.push((
        "load in-memory records (typed invoices: validate, store)".into(),
        rate(load_time, invoices),
    ));
    rows.push((
        "load from JSONL (parse + load)".into(),
        rate(jsonl_time, invoices),
    ));

    let (_, recompute_time) = timed(|| full_recompute(&mut ledger, as_of));
    let (movements, listing_time) = timed(|| {
        ledger
            .movements(as_of, &MovementFilter::default())
            .expect("movements")
    });
    rows.push((
        "full recompute: every customer's timeline and replay".into(),
        ms(recompute_time),
    ));
    rows.push((
        format!(
            "list all {} movements in date order (cached replays)",
            movements.len()
        ),
        ms(listing_time),
    ));
    drop(movements);

    let mut upserts = Vec::new();
    for (i, invoice) in sample.iter().enumerate() {
        let mut changed = invoice.clone();
        if let Some(amount) = changed["amount"].as_i64() {
            changed["amount"] = json!(if changed["type"] == "refund" {
                amount
            } else {
                amount + (i as i64 % 3)
            });
        }
        let customer = changed["customer_id"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        let filter = MovementFilter {
            customer: Some(customer.as_str().into()),
            ..MovementFilter::default()
        };
        let (_, time) = timed(|| {
            ledger.upsert_invoices(std::slice::from_ref(&changed));
            ledger
                .movements(as_of, &filter)
                .expect("customer movements")
        });
        upserts.push(time);
    }
    rows.push((
        format!(
            "upsert 1 invoice + its customer's movements (n={})",
            upserts.len()
        ),
        format!(
            "median {} / p99 {}",
            us(quantile(&mut upserts, 0.5)),
            us(quantile(&mut upserts, 0.99))
        ),
    ));

    let last_year = format!(
        "{}-{}",
        (as_of - chrono::Duration::days(365)).format("%Y%m%d"),
        (as_of - chrono::Duration::days(1)).format("%Y%m%d")
    );
    let reports: [ReportCase; 7] = [
        ("summary", "summary", vec![]),
        (
            "mrr, 12 months",
            "mrr",
            vec![("date", &last_year), ("interval", "month")],
        ),
        (
            "mrr, 12 months, customers in the US",
            "mrr",
            vec![
                ("date", &last_year),
                ("interval", "month"),
                ("country", "US"),
            ],
        ),
        (
            "mrr by plan",
            "mrr",
            vec![
                ("date", &last_year),
                ("interval", "month"),
                ("breakdown", "plan"),
            ],
        ),
        (
            "movement-table, first 100 rows",
            "movement-table",
            vec![("date", &last_year), ("limit", "100")],
        ),
        (
            "movement-table, every row",
            "movement-table",
            vec![("date", &last_year)],
        ),
        ("cohort", "cohort", vec![("interval", "month")]),
    ];
    for (label, name, params) in reports {
        let params: ReportParams = params
            .into_iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        // The first run builds what the report keeps between runs (the
        // per-day totals of an unfiltered mrr); a cold run follows a write of
        // one invoice, so it replays and patches that customer.
        let (_, first_time) = timed(|| ledger.report(name, &params, as_of));
        ledger.upsert_invoices(&sample[..1]);
        let (cold, cold_time) = timed(|| ledger.report(name, &params, as_of));
        let cell = match cold {
            Err(Error::UnknownReport { .. }) => "not in the registry yet".to_string(),
            Err(error) => format!("error: {error}"),
            Ok(_) => {
                let mut warm: Vec<Duration> = (0..5)
                    .map(|_| timed(|| ledger.report(name, &params, as_of)).1)
                    .collect();
                format!(
                    "first {} / cold {} / warm {}",
                    ms(first_time),
                    ms(cold_time),
                    ms(quantile(&mut warm, 0.5))
                )
            }
        };
        rows.push((format!("report {label}"), cell));
    }
    let (_, peak) = memory();
    let per_invoice = |bytes: u64| {
        format!(
            "{} MiB ({:.1} bytes per invoice)",
            bytes >> 20,
            bytes as f64 / invoices.max(1) as f64
        )
    };
    rows.push((
        "memory: ledger right after a streaming JSONL load".into(),
        per_invoice(ledger_bytes),
    ));
    rows.push((
        "memory: that ledger once the allocator has handed back the pages the load freed".into(),
        per_invoice(settled_bytes),
    ));
    rows.push((
        "memory: that ledger with every customer's replay cached".into(),
        per_invoice(replayed_bytes),
    ));
    rows.push((
        "memory: peak RSS of the harness (records + ledger)".into(),
        format!("{} MiB", peak >> 20),
    ));

    println!("\n### {invoices} invoices\n\n| measure | value |\n|---|---|");
    for (measure, value) in rows {
        println!("| {measure} | {value} |");
    }
}

/// A report to time: label, report name, query parameters.
type ReportCase<'a> = (&'a str, &'a str, Vec<(&'a str, &'a str)>);

fn rate(time: Duration, count: usize) -> String {
    format!(
        "{} ({:.0} invoices/s)",
        ms(time),
        count as f64 / time.as_secs_f64().max(1e-9)
    )
}
