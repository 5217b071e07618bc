//! Peer comparison: the same monthly movements computed by submetrics and by
//! DuckDB SQL (`benches/peer/movements.sql`) on the same generated data. The
//! results must be equal (the run fails otherwise); the time ratio is printed,
//! for aggregating the rows where the replays hold them and for listing every
//! row in date order first.
//!
//! `peer [INVOICES]` (default 100000). The Python with `duckdb` installed is
//! `$SUBMETRICS_PEER_PYTHON`, else `target/bench-venv/bin/python`
//! (`scripts/bench` creates it). Build with `--release`.

use chrono::Datelike;
use rayon::prelude::*;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::Command;
use submetrics::{Currency, Ledger, Movement, MovementFilter, MovementKind, Settings};
use submetrics_benches::generator::Spec;
use submetrics_benches::measure::{ms, timed};
use submetrics_benches::write::generate_jsonl;

/// (month, currency, kind) -> (sum of mrr_change, number of movements)
type Monthly = BTreeMap<(String, String, String), (i64, i64)>;

fn main() {
    submetrics_allocator::keep_freed_memory_longer();
    let args: Vec<String> = std::env::args().skip(1).collect();
    let size = match args.as_slice() {
        [] => Some(100_000),
        [size] => size.parse().ok(),
        _ => None,
    }
    .unwrap_or_else(|| {
        eprintln!("usage: peer [INVOICES] (a whole number, default 100000)");
        std::process::exit(2);
    });
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let python = std::env::var("SUBMETRICS_PEER_PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|_| root.join("target/bench-venv/bin/python"));
    let spec = Spec::with_invoices(size);
    let dir = std::env::temp_dir().join(format!("submetrics-peer-{}", std::process::id()));
    let streamed = generate_jsonl(&spec, &dir, 0).expect("temp dir is writable");
    let data = streamed.data;
    let invoice_count = streamed.invoices.len();

    let mut ledger = Ledger::new(Settings::default());
    ledger.load_fx_rates(&data.fx_rates).expect("valid rates");
    ledger.upsert_plans(&data.plans);
    ledger.upsert_customers(&data.customers);
    ledger.upsert_invoice_records(streamed.invoices);
    let as_of = spec.as_of();
    // Two ways through the same recompute: aggregating the rows where the
    // replays hold them (as the SQL's GROUP BY does), and listing every row
    // in date order first (`Ledger::movements`, what the scale harness times).
    let (totals, our_time) = timed(|| {
        ledger.forget_replays();
        let movements = ledger.customer_movements(as_of).expect("movements");
        let customers: Vec<&[Movement]> = movements.customers().map(|(_, rows)| rows).collect();
        customers
            .par_iter()
            .fold(Totals::new, |totals, rows| add_monthly(totals, rows))
            .reduce(Totals::new, merge)
    });
    let (listed_totals, listed_time) = timed(|| {
        ledger.forget_replays();
        let movements = ledger
            .movements(as_of, &MovementFilter::default())
            .expect("movements");
        movements
            .par_chunks(4096)
            .fold(Totals::new, add_monthly)
            .reduce(Totals::new, merge)
    });
    assert_eq!(totals, listed_totals, "both ways give the same totals");
    // Keys are spelled as the SQL spells them only after the clock stops.
    let ours: Monthly = totals
        .into_iter()
        .map(|((year, month, currency, kind), sums)| {
            let key = (
                format!("{year:04}-{month:02}"),
                currency.to_string(),
                kind.as_str().to_string(),
            );
            (key, sums)
        })
        .collect();

    let output = Command::new(&python)
        .arg(root.join("benches/peer/duckdb_movements.py"))
        .arg(&dir)
        .arg(spec.end().to_string())
        .output()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}", python.display()));
    let _ = std::fs::remove_dir_all(&dir);
    assert!(
        output.status.success(),
        "DuckDB side failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let peer: Value = serde_json::from_slice(&output.stdout).expect("DuckDB side prints JSON");
    let mut theirs = Monthly::new();
    for row in peer["rows"].as_array().into_iter().flatten() {
        let text = |k: &str| row[k].as_str().unwrap_or_default().to_string();
        theirs.insert(
            (text("month"), text("currency"), text("kind")),
            (
                row["mrr_change"].as_i64().unwrap_or(0),
                row["movements"].as_i64().unwrap_or(0),
            ),
        );
    }
    let differences: Vec<String> = ours
        .keys()
        .chain(theirs.keys())
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .filter(|key| ours.get(*key) != theirs.get(*key))
        .map(|key| {
            format!(
                "{key:?}: submetrics {:?}, duckdb {:?}",
                ours.get(key),
                theirs.get(key)
            )
        })
        .collect();
    let their_ms = peer["query_ms"].as_f64().unwrap_or(f64::NAN);
    println!(
        "\n### Peer: monthly movements, {} invoices\n",
        invoice_count
    );
    println!("| engine | time |\n|---|---|");
    println!(
        "| submetrics full recompute (timelines + movements + monthly totals) | {} |",
        ms(our_time)
    );
    println!(
        "| the same, listing every row in date order first | {} |",
        ms(listed_time)
    );
    println!(
        "| DuckDB {} SQL query (data already loaded; load took {:.0} ms) | {their_ms:.1} ms |",
        peer["duckdb"].as_str().unwrap_or("?"),
        peer["load_ms"].as_f64().unwrap_or(0.0)
    );
    println!(
        "| ratio (DuckDB / submetrics) | {:.2}x (listing first: {:.2}x) |",
        their_ms / (our_time.as_secs_f64() * 1000.0),
        their_ms / (listed_time.as_secs_f64() * 1000.0)
    );
    if differences.is_empty() {
        println!(
            "\nresults equal: {} (month, currency, kind) groups",
            ours.len()
        );
    } else {
        eprintln!(
            "results differ in {} groups:\n{}",
            differences.len(),
            differences
                .iter()
                .take(20)
                .cloned()
                .collect::<Vec<_>>()
                .join("\n")
        );
        std::process::exit(1);
    }
}

/// (year, month, currency, kind) -> (sum of mrr_change, number of movements).
type Totals = BTreeMap<(i32, u32, Currency, MovementKind), (i64, i64)>;

/// Adds movements to monthly sums and counts. A few hundred groups: an
/// ordered map beats hashing every row.
fn add_monthly(mut totals: Totals, movements: &[Movement]) -> Totals {
    for m in movements {
        let entry = totals
            .entry((m.date.year(), m.date.month(), m.currency, m.kind))
            .or_insert((0, 0));
        entry.0 += m.mrr_change;
        entry.1 += 1;
    }
    totals
}

fn merge(mut into: Totals, from: Totals) -> Totals {
    for (key, (sum, count)) in from {
        let entry = into.entry(key).or_insert((0, 0));
        entry.0 += sum;
        entry.1 += count;
    }
    into
}
