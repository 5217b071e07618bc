//! Times the full recompute and one-invoice upserts repeatedly on a generated
//! ledger, for profiling and A/B comparisons: `recompute <invoices> <repeats>`,
//! after timing one in-memory load of the typed invoices,
//! e.g. `perf record -g target/release/recompute 1000000 10`. Prints the
//! median time of the full recompute (building every customer's timeline
//! and replaying it), its fastest and the first (into fresh memory), the median time of listing every
//! movement in date order from the cached replays and of the same rows as Arrow record batches (what
//! `movements_arrow` hands Python), the CPU time of each phase per repeat (steadier than wall
//! time on a busy machine), and the median of `repeats` x 1000 upserts of one changed invoice
//! (each a different one, evenly spread) followed by its customer's
//! movements, as the scale harness measures them.

use serde_json::json;
use std::time::Duration;
use submetrics::MovementFilter;
use submetrics_benches::generator::Spec;
use submetrics_benches::measure::{cpu_time, full_recompute, ms, quantile, timed, us};
use submetrics_benches::write::generate_typed;

fn main() {
    submetrics_allocator::keep_freed_memory_longer();
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
    let as_of = spec.as_of();
    let streamed = generate_typed(&spec, 1000 * repeats.max(1), |_| Ok(()))
        .expect("the generator makes valid invoices");
    let invoices = streamed.invoices.len();
    let ((mut ledger, sample), load_time) = timed(|| streamed.into_ledger());
    let (mut recomputes, mut listings, mut tables) = (Vec::new(), Vec::new(), Vec::new());
    let (mut recompute_cpu, mut listing_cpu, mut table_cpu) =
        (Duration::ZERO, Duration::ZERO, Duration::ZERO);
    let mut count = 0;
    let repeats = repeats.max(1);
    for _ in 0..repeats {
        let start = cpu_time();
        recomputes.push(timed(|| full_recompute(&mut ledger, as_of)).1);
        let middle = cpu_time();
        let (rows, listing_time) = timed(|| {
            ledger
                .movements(as_of, &MovementFilter::default())
                .expect("movements")
        });
        count = rows.len();
        drop(rows);
        listings.push(listing_time);
        recompute_cpu += middle - start;
        let listed = cpu_time();
        listing_cpu += listed - middle;
        let (batches, table_time) = timed(|| {
            ledger
                .movements_batches(as_of, &MovementFilter::default())
                .expect("movement batches")
        });
        assert_eq!(batches.iter().map(|b| b.num_rows()).sum::<usize>(), count);
        drop(batches);
        tables.push(table_time);
        table_cpu += cpu_time() - listed;
    }
    // The first recompute replays into fresh memory; later ones reuse what
    // the replays they replace freed.
    let first_recompute = recomputes[0];
    let mut upserts = Vec::new();
    for (i, invoice) in sample.iter().enumerate() {
        let mut changed = invoice.clone();
        if let Some(amount) = changed["amount"].as_i64()
            && changed["type"] != "refund"
        {
            changed["amount"] = json!(amount + (i as i64 % 3));
        }
        let filter = MovementFilter {
            customer: changed["customer_id"].as_str().map(Into::into),
            ..MovementFilter::default()
        };
        upserts.push(
            timed(|| {
                ledger.upsert_invoices(std::slice::from_ref(&changed));
                ledger
                    .movements(as_of, &filter)
                    .expect("customer movements")
            })
            .1,
        );
    }
    println!(
        "load: {:.0}k invoices/s / full recompute (timelines + replays): median {} (fastest {}, first {}, cpu {}) / listing {count} movements: median {} (cpu {}) / as Arrow batches: median {} (cpu {}) / upsert: median {} over {repeats}",
        invoices as f64 / load_time.as_secs_f64() / 1000.0,
        ms(quantile(&mut recomputes, 0.5)),
        ms(quantile(&mut recomputes, 0.0)),
        ms(first_recompute),
        ms(recompute_cpu / repeats as u32),
        ms(quantile(&mut listings, 0.5)),
        ms(listing_cpu / repeats as u32),
        ms(quantile(&mut tables, 0.5)),
        ms(table_cpu / repeats as u32),
        us(quantile(&mut upserts, 0.5)),
    );
}
