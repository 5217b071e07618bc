//! The service under load, on loopback: starts the release server on a
//! fresh data directory, then measures
//!
//! 1. batch import: a generated data set posted in batches (invoices/s, durable),
//! 2. single invoice posts from many concurrent clients (throughput, p50, p99),
//! 3. report reads (`mrr`, 12 months) while those writers run (p50, p99),
//! 4. long answers: every movement, and `invoices-detail` (a row per
//!    invoice), each asked for three times (time to the last byte).
//!
//! The server's resident memory (VmRSS) is reported before the single
//! posts, at its peak while they run (sampled every 50 ms) and after them.
//!
//! Each phase also reports the CPU time the server process used (user +
//! system, all threads): on a shared machine wall-clock rates move with
//! other load, the server's CPU per record much less. The batch import also
//! reports the bytes the server wrote per invoice (its database's log and
//! checkpoints, and its answers), which other load does not move at all.
//!
//! Bounded in count and time. Usage:
//! `load [INVOICES] [--clients N] [--posts-per-client N] [--rate POSTS_PER_S] [--readers N] [--server PATH] [--import json|ndjson]`
//! (defaults 100000, 50, 200, unpaced, 2, target/release/submetrics-server,
//! json: the invoices as JSON arrays to `POST /data/invoices`; ndjson: as
//! NDJSON bodies to `POST /v1/data-sources/load/invoices`).
//!
//! Unpaced, every client posts again as soon as it has its answer: the
//! service runs saturated and latency is clients / throughput. With
//! `--rate`, the clients together offer that many posts per second on a
//! fixed schedule, and a post's latency counts from when it was due (so a
//! client that falls behind counts its wait too).

use bytes::Bytes;
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};
use submetrics_benches::generator::{Spec, generate};
use submetrics_benches::http_client::Connection;
use submetrics_benches::measure::{cpu_time, cpu_time_of, ms, quantile, rss_kib};

const KEY: &str = "load-test-owner-key-0123456789";
const BATCH: usize = 10_000;
/// Times each long answer is asked for.
const LONG_ANSWER_RUNS: u32 = 3;
/// No phase runs longer than this.
const PHASE_LIMIT: Duration = Duration::from_secs(120);
/// How long a server must use no CPU to count as done with its work.
const QUIET: Duration = Duration::from_millis(500);

struct Options {
    invoices: usize,
    clients: usize,
    posts_per_client: usize,
    rate: Option<f64>,
    readers: usize,
    server: String,
    import: Import,
}

/// How the batch import sends the invoices.
#[derive(Clone, Copy, PartialEq)]
enum Import {
    /// JSON arrays to `POST /data/invoices`.
    Json,
    /// NDJSON bodies to `POST /v1/data-sources/load/invoices`.
    Ndjson,
}

fn options() -> Options {
    let mut options = Options {
        invoices: 100_000,
        clients: 50,
        posts_per_client: 200,
        rate: None,
        readers: 2,
        server: "target/release/submetrics-server".to_string(),
        import: Import::Json,
    };
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let mut value = || args.next().unwrap_or_default();
        let number = |text: String| {
            text.parse::<usize>()
                .unwrap_or_else(|_| panic!("{arg} takes a whole number, not `{text}`"))
        };
        match arg.as_str() {
            "--clients" => options.clients = number(value()),
            "--posts-per-client" => options.posts_per_client = number(value()),
            "--rate" => {
                let text = value();
                let rate: f64 = text.parse().unwrap_or_else(|_| {
                    panic!("--rate takes a number of posts a second, not `{text}`")
                });
                options.rate = (rate > 0.0).then_some(rate);
            }
            "--readers" => options.readers = number(value()),
            "--server" => options.server = value(),
            "--import" => {
                options.import = match value().as_str() {
                    "json" => Import::Json,
                    "ndjson" => Import::Ndjson,
                    other => panic!("--import takes json or ndjson, not `{other}`"),
                }
            }
            count => {
                options.invoices = count
                    .parse()
                    .unwrap_or_else(|_| panic!("unknown argument `{count}`"))
            }
        }
    }
    options
}

/// How long a process keeps working, and the CPU it spends, until half a
/// second passes in which it uses no CPU tick (at most the phase limit);
/// the quiet half second at the end is not counted.
fn work_until_quiet(pid: &str) -> (Duration, Duration) {
    let start = Instant::now();
    let first = cpu_time_of(pid);
    let mut last = first;
    let mut busy_until = Duration::ZERO;
    while start.elapsed() < PHASE_LIMIT && start.elapsed() - busy_until < QUIET {
        std::thread::sleep(Duration::from_millis(50));
        let now = cpu_time_of(pid);
        if now > last {
            last = now;
            busy_until = start.elapsed();
        }
    }
    (busy_until, last.saturating_sub(first))
}

fn main() {
    let options = options();
    let dir = std::env::temp_dir().join(format!("submetrics-load-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let mut child = Command::new(&options.server)
        .args(["--listen", "127.0.0.1:0", "--data-dir"])
        .arg(&dir)
        .env("SUBMETRICS_OWNER_KEY", KEY)
        .stdout(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| {
            panic!(
                "cannot start {} (build it with `cargo build --release -p submetrics-server`): {e}",
                options.server
            )
        });
    let mut lines = BufReader::new(child.stdout.take().expect("stdout")).lines();
    let base = loop {
        match lines.next() {
            Some(Ok(line)) if line.starts_with("listening on ") => {
                break line["listening on ".len()..].to_string();
            }
            Some(_) => continue,
            None => panic!("the server exited before listening"),
        }
    };
    std::thread::spawn(move || for _ in lines {});
    let server_pid = child.id().to_string();
    let data = generate(&Spec::with_invoices(options.invoices));
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime for the clients");
    let mut connection = runtime
        .block_on(Connection::open(&base, KEY))
        .expect("a connection to the server");
    let mut post_as = |path: &str, body: String, content_type: &'static str| {
        runtime.block_on(connection.post_as(path, body.into(), content_type))
    };
    let mut post = |path: &str, body: String| post_as(path, body, "application/json");
    println!(
        "service load, {} invoices, {} customers; {} clients",
        data.invoices.len(),
        data.customers.len(),
        options.clients
    );

    let start = Instant::now();
    let json = |values: &[serde_json::Value]| serde_json::to_string(values).unwrap_or_default();
    assert_eq!(post("/data/fx-rates", json(&data.fx_rates)), 200);
    assert_eq!(post("/data/plans", json(&data.plans)), 200);
    for chunk in data.customers.chunks(BATCH) {
        assert_eq!(post("/data/customers", json(chunk)), 201);
    }
    let customers_done = start.elapsed();
    // Request bodies are written before the clock starts: the phase times
    // the service, not the client's JSON encoding on the same cores.
    let (path, content_type) = match options.import {
        Import::Json => ("/data/invoices", "application/json"),
        Import::Ndjson => {
            assert_eq!(
                post("/data/data-sources", r#"{"id": "load"}"#.to_string()),
                200
            );
            ("/v1/data-sources/load/invoices", "application/x-ndjson")
        }
    };
    let bodies: Vec<String> = data
        .invoices
        .chunks(BATCH)
        .map(|chunk| match options.import {
            Import::Json => serde_json::to_string(chunk).unwrap_or_default(),
            Import::Ndjson => chunk.iter().map(|invoice| format!("{invoice}\n")).collect(),
        })
        .collect();
    let invoices_cpu = cpu_time_of(&server_pid);
    let invoices_written = bytes_written_by(&server_pid);
    let invoices_start = Instant::now();
    for body in bodies {
        assert_eq!(post_as(path, body, content_type), 200);
        assert!(
            invoices_start.elapsed() < PHASE_LIMIT,
            "batch import over the time limit"
        );
    }
    let invoices_time = invoices_start.elapsed();
    let invoices_cpu = cpu_time_of(&server_pid).saturating_sub(invoices_cpu);
    let invoices_written = bytes_written_by(&server_pid).saturating_sub(invoices_written);
    println!(
        "batch import ({}): customers+plans {}, invoices {} in batches of {BATCH}: {:.0} invoices/s (durable); server CPU {} ({:.1} µs/invoice), written {:.0} bytes/invoice",
        content_type,
        ms(customers_done),
        ms(invoices_time),
        data.invoices.len() as f64 / invoices_time.as_secs_f64(),
        ms(invoices_cpu),
        invoices_cpu.as_secs_f64() * 1e6 / data.invoices.len().max(1) as f64,
        invoices_written as f64 / data.invoices.len().max(1) as f64
    );
    // The events of the import are derived once its writes pause: the
    // server's work after its last request, until it goes quiet.
    let (events_time, events_cpu) = work_until_quiet(&server_pid);
    println!(
        "events of the import: the server worked {} more after its last request, {} of CPU",
        ms(events_time),
        ms(events_cpu)
    );

    // Single posts from many clients while readers run the mrr report. The
    // clients are tasks on one thread of this process (see `http_client`).
    let customer_ids: Vec<String> = data
        .customers
        .iter()
        .filter_map(|c| c["id"].as_str().map(str::to_string))
        .collect();
    let currency = data.plans[0]["currency"].clone();
    // Bodies are written before the clock starts, as for the batch import.
    let bodies: Vec<Vec<Bytes>> = (0..options.clients)
        .map(|client| {
            (0..options.posts_per_client)
                .map(|n| {
                    let customer =
                        &customer_ids[(client * 7919 + n * 104_729) % customer_ids.len()];
                    Bytes::from(
                        serde_json::json!({
                            "id": format!("load-{client}-{n}"), "customer_id": customer,
                            "type": "one_time", "invoice_date": "2023-06-01", "amount": 1000,
                            "currency": currency,
                        })
                        .to_string(),
                    )
                })
                .collect()
        })
        .collect();
    let rss_before = rss_kib(&server_pid);
    let sampling = Arc::new(AtomicBool::new(true));
    let sampler = {
        let (pid, sampling) = (server_pid.clone(), Arc::clone(&sampling));
        std::thread::spawn(move || {
            let mut peak = 0;
            while sampling.load(Ordering::Relaxed) {
                peak = peak.max(rss_kib(&pid));
                std::thread::sleep(Duration::from_millis(50));
            }
            peak
        })
    };
    let posts_cpu = cpu_time_of(&server_pid);
    let clients_cpu = cpu_time();
    let phase = Instant::now();
    let (mut writes, mut reads) = runtime.block_on(single_posts(&base, bodies, &options));
    let write_time = phase.elapsed();
    sampling.store(false, Ordering::Relaxed);
    let rss_peak = sampler.join().unwrap_or_default();
    std::thread::sleep(Duration::from_secs(1));
    let rss_after = rss_kib(&server_pid);
    let posts_cpu = cpu_time_of(&server_pid).saturating_sub(posts_cpu);
    let clients_cpu = cpu_time().saturating_sub(clients_cpu);
    println!(
        "single posts{}: {} from {} clients in {}: {:.0} posts/s, p50 {}, p99 {}; server CPU {} ({:.0} µs/post), clients' CPU {} ({:.0} µs/post)",
        options
            .rate
            .map(|rate| format!(" offered at {rate:.0}/s"))
            .unwrap_or_default(),
        writes.len(),
        options.clients,
        ms(write_time),
        writes.len() as f64 / write_time.as_secs_f64(),
        ms(quantile(&mut writes, 0.5)),
        ms(quantile(&mut writes, 0.99)),
        ms(posts_cpu),
        posts_cpu.as_secs_f64() * 1e6 / writes.len().max(1) as f64,
        ms(clients_cpu),
        clients_cpu.as_secs_f64() * 1e6 / writes.len().max(1) as f64
    );
    if !reads.is_empty() {
        println!(
            "mrr report during writes: {} reads, p50 {}, p99 {}",
            reads.len(),
            ms(quantile(&mut reads, 0.5)),
            ms(quantile(&mut reads, 0.99))
        );
    }
    // Long answers: every movement, and every invoice's detail (a row
    // per invoice), each from its request to its last byte.
    for path in ["/v1/movements", "/v1/reports/invoices-detail"] {
        let answers_cpu = cpu_time_of(&server_pid);
        let mut runs = Vec::new();
        let mut bytes = 0;
        for _ in 0..LONG_ANSWER_RUNS {
            let start = Instant::now();
            let (status, size) = runtime.block_on(connection.get_sized(path));
            assert_eq!(status, 200, "GET {path}");
            runs.push(start.elapsed());
            bytes = size;
        }
        let answers_cpu = cpu_time_of(&server_pid).saturating_sub(answers_cpu);
        println!(
            "long answer GET {path}: {:.1} MB, runs {}; server CPU {} per answer",
            bytes as f64 / 1e6,
            runs.iter()
                .map(|run| ms(*run))
                .collect::<Vec<_>>()
                .join(", "),
            ms(answers_cpu / LONG_ANSWER_RUNS)
        );
    }
    println!(
        "server RSS: before {:.0} MiB, peak during {:.0} MiB, after {:.0} MiB",
        rss_before as f64 / 1024.0,
        rss_peak as f64 / 1024.0,
        rss_after as f64 / 1024.0
    );
    let _ = child.kill();
    let _ = child.wait();
    let _ = std::fs::remove_dir_all(&dir);
}

/// Runs the clients, each posting its bodies in turn on its own connection,
/// and the readers, each getting the `mrr` report until the clients are
/// done. Answers every post's latency and every read's.
///
/// Paced (`--rate`), a post's latency counts from when it was due if its
/// client was still busy with the one before, and from when it was sent
/// otherwise: the runtime's timers fire up to a millisecond after their
/// due time, which is the load generator's delay, not the service's.
async fn single_posts(
    base: &str,
    bodies: Vec<Vec<Bytes>>,
    options: &Options,
) -> (Vec<Duration>, Vec<Duration>) {
    let writing = Arc::new(AtomicBool::new(true));
    let readers: Vec<_> = (0..options.readers)
        .map(|_| {
            let (base, writing) = (base.to_string(), Arc::clone(&writing));
            tokio::spawn(async move {
                let mut connection = Connection::open(&base, KEY).await.expect("a connection");
                let mut samples = Vec::new();
                let started = Instant::now();
                while writing.load(Ordering::Relaxed) && started.elapsed() < PHASE_LIMIT {
                    let t = Instant::now();
                    assert_eq!(
                        connection.get("/reports/mrr?date=20230101-20231231").await,
                        200
                    );
                    samples.push(t.elapsed());
                }
                samples
            })
        })
        .collect();
    let clients = bodies.len();
    // Each client's share of the rate, its first post staggered within one
    // interval so the clients do not post in lockstep.
    let interval = options
        .rate
        .map(|rate| Duration::from_secs_f64(clients as f64 / rate));
    let started = Instant::now();
    let writers: Vec<_> = bodies
        .into_iter()
        .enumerate()
        .map(|(client, bodies)| {
            let base = base.to_string();
            let first_due =
                started + interval.unwrap_or_default() * client as u32 / clients.max(1) as u32;
            tokio::spawn(async move {
                let mut connection = Connection::open(&base, KEY).await.expect("a connection");
                let mut samples = Vec::with_capacity(bodies.len());
                let mut idle_since = Instant::now();
                for (n, body) in bodies.into_iter().enumerate() {
                    let from = match interval {
                        Some(interval) => {
                            let due = first_due + interval * n as u32;
                            tokio::time::sleep_until(due.into()).await;
                            if idle_since <= due {
                                Instant::now()
                            } else {
                                due
                            }
                        }
                        None => Instant::now(),
                    };
                    assert_eq!(connection.post("/data/invoices", body).await, 200);
                    idle_since = Instant::now();
                    samples.push(idle_since - from);
                }
                samples
            })
        })
        .collect();
    let mut writes = Vec::new();
    for writer in writers {
        writes.extend(writer.await.unwrap_or_default());
    }
    writing.store(false, Ordering::Relaxed);
    let mut reads = Vec::new();
    for reader in readers {
        reads.extend(reader.await.unwrap_or_default());
    }
    (writes, reads)
}

/// The bytes process `pid` has written so far (`wchar` of
/// `/proc/PID/io`: every write call, the database's log, its checkpoints
/// and the answers), 0 where that is not readable.
fn bytes_written_by(pid: &str) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/io"))
        .ok()
        .and_then(|io| {
            io.lines()
                .find_map(|line| line.strip_prefix("wchar:"))
                .and_then(|n| n.trim().parse().ok())
        })
        .unwrap_or(0)
}
