//! Runs one report repeatedly on a generated ledger, for profiling:
//! `report [--arrow|--csv|--text] <invoices> <repeats> <name> [key=value ...]`,
//! e.g. `perf record target/release/report 1000000 20 mrr interval=month`.
//! Each run builds the report's JSON value (`Ledger::report`), or with
//! `--arrow` its record batch (`Ledger::report_batch`), with `--csv` its
//! CSV text (`Ledger::report_csv`), with `--text` its JSON text
//! (`Ledger::report_json`). Prints the median time of the warm runs.

use submetrics::ReportParams;
use submetrics_benches::generator::{Spec, generate};
use submetrics_benches::measure::{ms, quantile, timed};

fn main() {
    submetrics_allocator::keep_freed_memory_longer();
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let rendering = match args.first().map(String::as_str) {
        Some(flag @ ("--arrow" | "--csv" | "--text")) => {
            let flag = flag.to_string();
            args.remove(0);
            flag
        }
        _ => "--value".to_string(),
    };
    let [size, repeats, name, pairs @ ..] = args.as_slice() else {
        eprintln!(
            "usage: report [--arrow|--csv|--text] <invoices> <repeats> <name> [key=value ...]"
        );
        std::process::exit(2);
    };
    let (Ok(size), Ok(repeats)) = (size.parse::<usize>(), repeats.parse::<usize>()) else {
        eprintln!("<invoices> and <repeats> are counts");
        std::process::exit(2);
    };
    let params: ReportParams = pairs
        .iter()
        .filter_map(|pair| pair.split_once('='))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let spec = Spec::with_invoices(size);
    let as_of = spec.as_of();
    let data = generate(&spec);
    let ledger = data.ledger();
    drop(data);
    let run = || match rendering.as_str() {
        "--arrow" => ledger.report_batch(name, &params, as_of).map(drop),
        "--csv" => ledger.report_csv(name, &params, as_of).map(drop),
        "--text" => ledger.report_json(name, &params, as_of).map(drop),
        _ => ledger.report(name, &params, as_of).map(drop),
    };
    let (first, cold) = timed(run);
    if let Err(error) = first {
        eprintln!("{error}");
        std::process::exit(1);
    }
    let mut warm: Vec<_> = (0..repeats).map(|_| timed(run).1).collect();
    println!(
        "{name}: cold {} / warm median {} over {repeats}",
        ms(cold),
        ms(quantile(&mut warm, 0.5))
    );
}
