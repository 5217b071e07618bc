//! The service under load, on loopback: starts the release server on a
//! fresh data directory, then measures
//!
//! 1. batch import: a generated data set posted in batches (invoices/s, durable),
//! 2. single invoice posts from many concurrent clients (throughput, p50, p99),
//! 3. report reads (`mrr`, 12 months) while those writers run (p50, p99).
//!
//! Each phase also reports the CPU time the server process used (user +
//! system, all threads): on a shared machine wall-clock rates move with
//! other load, the server's CPU per record much less.
//!
//! Bounded in count and time. Usage:
//! `load [INVOICES] [--clients N] [--posts-per-client N] [--rate POSTS_PER_S] [--readers N] [--server PATH]`
//! (defaults 100000, 50, 40, unpaced, 2, target/release/submetrics-server).
//!
//! Unpaced, every client posts again as soon as it has its answer: the
//! service runs saturated and latency is clients / throughput. With
//! `--rate`, the clients together offer that many posts per second on a
//! fixed schedule, and a post's latency counts from when it was due (so a
//! client that falls behind counts its wait too).

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};
use submetrics_benches::generator::{Spec, generate};
use submetrics_benches::measure::{ms, quantile};

const KEY: &str = "load-test-owner-key-0123456789";
const BATCH: usize = 10_000;
/// No phase runs longer than this.
const PHASE_LIMIT: Duration = Duration::from_secs(120);

struct Options {
    invoices: usize,
    clients: usize,
    posts_per_client: usize,
    rate: Option<f64>,
    readers: usize,
    server: String,
}

fn options() -> Options {
    let mut options = Options {
        invoices: 100_000,
        clients: 50,
        posts_per_client: 40,
        rate: None,
        readers: 2,
        server: "target/release/submetrics-server".to_string(),
    };
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let mut value = || args.next().unwrap_or_default();
        match arg.as_str() {
            "--clients" => options.clients = value().parse().unwrap_or(options.clients),
            "--posts-per-client" => {
                options.posts_per_client = value().parse().unwrap_or(options.posts_per_client)
            }
            "--rate" => options.rate = value().parse().ok().filter(|r: &f64| *r > 0.0),
            "--readers" => options.readers = value().parse().unwrap_or(options.readers),
            "--server" => options.server = value(),
            count => options.invoices = count.parse().unwrap_or(options.invoices),
        }
    }
    options
}

fn new_agent() -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .build()
        .into()
}

/// The status of a response, after reading its body: a client that reads
/// the whole answer keeps its connection for the next request (an unread
/// body closes it).
fn status(response: Result<ureq::http::Response<ureq::Body>, ureq::Error>) -> u16 {
    response
        .map(|mut r| {
            let _ = r.body_mut().with_config().limit(u64::MAX).read_to_vec();
            r.status().as_u16()
        })
        .unwrap_or(0)
}

fn post(agent: &ureq::Agent, url: &str, body: &str) -> u16 {
    status(
        agent
            .post(url)
            .header("Authorization", format!("Bearer {KEY}"))
            .header("Content-Type", "application/json")
            .send(body.as_bytes()),
    )
}

fn get(agent: &ureq::Agent, url: &str) -> u16 {
    status(
        agent
            .get(url)
            .header("Authorization", format!("Bearer {KEY}"))
            .call(),
    )
}

/// CPU time (user + system, all threads) the process `pid` has used so
/// far, from `/proc/PID/stat`; zero where unavailable.
fn cpu_time(pid: u32) -> Duration {
    // USER_HZ, the unit of these fields, is 100 on Linux.
    const TICKS_PER_SECOND: u64 = 100;
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    // The fields after the command name, which is in parentheses and may hold spaces.
    let rest = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
    let ticks: u64 = rest
        .split_whitespace()
        .skip(11) // state .. cmajflt; then utime, stime
        .take(2)
        .filter_map(|f| f.parse::<u64>().ok())
        .sum();
    Duration::from_millis(ticks * 1000 / TICKS_PER_SECOND)
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
    let data = generate(&Spec::with_invoices(options.invoices));
    let agent = new_agent();
    println!(
        "service load, {} invoices, {} customers; {} clients",
        data.invoices.len(),
        data.customers.len(),
        options.clients
    );

    let start = Instant::now();
    assert_eq!(
        post(
            &agent,
            &format!("{base}/data/fx-rates"),
            &serde_json::to_string(&data.fx_rates).unwrap_or_default()
        ),
        200
    );
    assert_eq!(
        post(
            &agent,
            &format!("{base}/data/plans"),
            &serde_json::to_string(&data.plans).unwrap_or_default()
        ),
        200
    );
    for chunk in data.customers.chunks(BATCH) {
        assert_eq!(
            post(
                &agent,
                &format!("{base}/data/customers"),
                &serde_json::to_string(chunk).unwrap_or_default()
            ),
            201
        );
    }
    let customers_done = start.elapsed();
    // Request bodies are written before the clock starts: the phase times
    // the service, not the client's JSON encoding on the same cores.
    let bodies: Vec<String> = data
        .invoices
        .chunks(BATCH)
        .map(|chunk| serde_json::to_string(chunk).unwrap_or_default())
        .collect();
    let invoices_cpu = cpu_time(child.id());
    let invoices_start = Instant::now();
    for body in &bodies {
        assert_eq!(post(&agent, &format!("{base}/data/invoices"), body), 200);
        assert!(
            invoices_start.elapsed() < PHASE_LIMIT,
            "batch import over the time limit"
        );
    }
    let invoices_time = invoices_start.elapsed();
    let invoices_cpu = cpu_time(child.id()).saturating_sub(invoices_cpu);
    println!(
        "batch import: customers+plans {}, invoices {} in batches of {BATCH}: {:.0} invoices/s (durable); server CPU {} ({:.1} µs/invoice)",
        ms(customers_done),
        ms(invoices_time),
        data.invoices.len() as f64 / invoices_time.as_secs_f64(),
        ms(invoices_cpu),
        invoices_cpu.as_secs_f64() * 1e6 / data.invoices.len().max(1) as f64
    );

    // Single posts from many clients while readers run the mrr report.
    let writing = Arc::new(AtomicBool::new(true));
    let customer_ids: Vec<String> = data
        .customers
        .iter()
        .filter_map(|c| c["id"].as_str().map(str::to_string))
        .collect();
    let plan = data.plans[0].clone();
    let readers: Vec<_> = (0..options.readers)
        .map(|_| {
            let (base, writing) = (base.clone(), Arc::clone(&writing));
            std::thread::spawn(move || {
                let agent = new_agent();
                let mut samples = Vec::new();
                let started = Instant::now();
                while writing.load(Ordering::Relaxed) && started.elapsed() < PHASE_LIMIT {
                    let t = Instant::now();
                    assert_eq!(
                        get(
                            &agent,
                            &format!("{base}/reports/mrr?date=20230101-20231231")
                        ),
                        200
                    );
                    samples.push(t.elapsed());
                }
                samples
            })
        })
        .collect();
    let posts_cpu = cpu_time(child.id());
    let phase = Instant::now();
    let writers: Vec<_> = (0..options.clients)
        .map(|client| {
            let base = base.clone();
            let customer_ids = customer_ids.clone();
            let plan = plan.clone();
            let posts = options.posts_per_client;
            // Each client's share of the rate, its first post staggered
            // within one interval so the clients do not post in lockstep.
            let interval = options
                .rate
                .map(|rate| Duration::from_secs_f64(options.clients as f64 / rate));
            let first_due = Instant::now()
                + interval.unwrap_or_default() * client as u32 / options.clients.max(1) as u32;
            std::thread::spawn(move || {
                let agent = new_agent();
                let mut samples = Vec::with_capacity(posts);
                for n in 0..posts {
                    let customer = &customer_ids[(client * 7919 + n * 104_729) % customer_ids.len()];
                    let body = serde_json::json!({
                        "id": format!("load-{client}-{n}"), "customer_id": customer, "type": "one_time",
                        "invoice_date": "2023-06-01", "amount": 1000, "currency": plan["currency"],
                    })
                    .to_string();
                    let t = match interval {
                        Some(interval) => {
                            let due = first_due + interval * n as u32;
                            std::thread::sleep(due.saturating_duration_since(Instant::now()));
                            due
                        }
                        None => Instant::now(),
                    };
                    assert_eq!(post(&agent, &format!("{base}/data/invoices"), &body), 200);
                    samples.push(t.elapsed());
                }
                samples
            })
        })
        .collect();
    let mut writes: Vec<Duration> = writers
        .into_iter()
        .flat_map(|w| w.join().unwrap_or_default())
        .collect();
    let write_time = phase.elapsed();
    let posts_cpu = cpu_time(child.id()).saturating_sub(posts_cpu);
    writing.store(false, Ordering::Relaxed);
    let mut reads: Vec<Duration> = readers
        .into_iter()
        .flat_map(|r| r.join().unwrap_or_default())
        .collect();
    println!(
        "single posts{}: {} from {} clients in {}: {:.0} posts/s, p50 {}, p99 {}; server CPU {} ({:.0} µs/post)",
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
        posts_cpu.as_secs_f64() * 1e6 / writes.len().max(1) as f64
    );
    if !reads.is_empty() {
        println!(
            "mrr report during writes: {} reads, p50 {}, p99 {}",
            reads.len(),
            ms(quantile(&mut reads, 0.5)),
            ms(quantile(&mut reads, 0.99))
        );
    }
    let _ = child.kill();
    let _ = child.wait();
    let _ = std::fs::remove_dir_all(&dir);
}
