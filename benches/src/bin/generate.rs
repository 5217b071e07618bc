//! `generate N DIR [jsonl|csv]`: writes about N invoices (with their
//! customers, plans and FX rates) into DIR for the CLI's offline mode.

use std::path::PathBuf;
use submetrics_benches::generator::{Spec, generate};
use submetrics_benches::write::{Format, write_dataset};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let usage = || -> ! {
        eprintln!("usage: generate INVOICES DIR [jsonl|csv]");
        std::process::exit(2);
    };
    let (Some(count), Some(dir), true) = (
        args.first().and_then(|n| n.parse::<usize>().ok()),
        args.get(1),
        args.len() <= 3,
    ) else {
        usage()
    };
    let format = match args.get(2).map(String::as_str) {
        None | Some("jsonl") => Format::Jsonl,
        Some("csv") => Format::Csv,
        Some(_) => usage(),
    };
    let spec = Spec::with_invoices(count);
    let data = generate(&spec);
    if let Err(error) = write_dataset(&data, &PathBuf::from(dir), format) {
        eprintln!("cannot write {dir}: {error}");
        std::process::exit(1);
    }
    println!(
        "wrote {} customers, {} plans, {} invoices to {dir}; use --as-of {}T00:00:00Z",
        data.customers.len(),
        data.plans.len(),
        data.invoices.len(),
        spec.end()
    );
}
