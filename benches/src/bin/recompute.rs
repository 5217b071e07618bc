//! Times the full recompute repeatedly on a generated ledger, for profiling
//! and A/B comparisons: `recompute <invoices> <repeats>`, e.g.
//! `perf record -g target/release/recompute 1000000 10`. Prints the median
//! time of rebuilding every timeline and of replaying every movement.

use chrono::{DateTime, Utc};
use submetrics::{Ledger, MovementFilter, Settings};
use submetrics_benches::generator::{Spec, generate};
use submetrics_benches::measure::{ms, quantile, timed};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [size, repeats] = args.as_slice() else {
        eprintln!("usage: recompute <invoices> <repeats>");
        std::process::exit(2);
    };
    let (Ok(size), Ok(repeats)) = (size.parse::<usize>(), repeats.parse::<usize>()) else {
        eprintln!("<invoices> and <repeats> are counts");
        std::process::exit(2);
    };
    let spec = Spec::with_invoices(size);
    let as_of: DateTime<Utc> = format!("{}T00:00:00Z", spec.end())
        .parse()
        .expect("valid date");
    let data = generate(&spec);
    let mut ledger = Ledger::new(Settings::default());
    ledger
        .load_fx_rates(&data.fx_rates)
        .expect("generated FX rates are valid");
    ledger.upsert_plans(&data.plans);
    ledger.upsert_customers(&data.customers);
    for chunk in data.invoices.chunks(50_000) {
        ledger.upsert_invoices(chunk);
    }
    drop(data);
    let mut timelines = Vec::new();
    let mut movements = Vec::new();
    let mut count = 0;
    for _ in 0..repeats.max(1) {
        timelines.push(timed(|| ledger.rebuild_all()).1);
        let (rows, time) = timed(|| {
            ledger
                .movements(as_of, &MovementFilter::default())
                .expect("movements")
        });
        count = rows.len();
        movements.push(time);
    }
    println!(
        "timelines: median {} / movements ({count}): median {} over {repeats}",
        ms(quantile(&mut timelines, 0.5)),
        ms(quantile(&mut movements, 0.5)),
    );
}
