//! Timing and memory helpers for the harnesses.

use chrono::{DateTime, NaiveDate, Utc};
use std::time::{Duration, Instant};
use submetrics::{Ledger, MovementFilter};

/// Runs `f` once and returns its result with the elapsed time.
pub fn timed<T>(f: impl FnOnce() -> T) -> (T, Duration) {
    let start = Instant::now();
    let value = f();
    (value, start.elapsed())
}

/// A full recompute: drops every cached replay, then reads the movements at
/// `as_of` through a filter that keeps no row, so every customer's timeline
/// is built and replayed and no row is copied (the listing times apart).
pub fn full_recompute(ledger: &mut Ledger, as_of: DateTime<Utc>) {
    ledger.forget_replays();
    let no_rows = MovementFilter {
        from: NaiveDate::from_ymd_opt(9999, 1, 1),
        ..MovementFilter::default()
    };
    ledger.movements(as_of, &no_rows).expect("movements");
}

/// The `q`-quantile (0..=1) of durations, by nearest rank.
pub fn quantile(samples: &mut [Duration], q: f64) -> Duration {
    if samples.is_empty() {
        return Duration::ZERO;
    }
    samples.sort();
    let rank = ((samples.len() as f64 * q).ceil() as usize).clamp(1, samples.len());
    samples[rank - 1]
}

/// Resident and peak resident memory of this process in bytes, from
/// `/proc/self/status` (`VmRSS`, `VmHWM`); zeros where unavailable.
pub fn memory() -> (u64, u64) {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find(|l| l.starts_with(name))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|kb| kb.parse::<u64>().ok())
            .map_or(0, |kb| kb * 1024)
    };
    (field("VmRSS:"), field("VmHWM:"))
}

/// Asks the allocator to hand the pages freed so far back to the system
/// now, on this thread and on every thread of the pool. mimalloc keeps freed
/// pages for a while to reuse them (ten seconds in the harnesses, see
/// `submetrics_allocator`), so resident memory read right after a bulk load
/// also counts what the load freed in that time.
pub fn return_freed_memory() {
    submetrics_allocator::return_freed_memory_of_this_thread();
    rayon::broadcast(|_| submetrics_allocator::return_freed_memory_of_this_thread());
}

/// CPU time this process has used so far, user and system, over all its
/// threads; zero where unavailable. Less disturbed than wall time when
/// other work shares the cores.
pub fn cpu_time() -> Duration {
    cpu_time_of("self")
}

/// CPU time the process `pid` (or `self`) has used so far, user and system,
/// over all its threads, from `/proc/PID/stat` (in clock ticks of 10 ms);
/// zero where unavailable.
pub fn cpu_time_of(pid: &str) -> Duration {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    // The command name may hold spaces; the fields after it are plain.
    let fields: Vec<u64> = stat
        .rsplit_once(')')
        .map(|(_, rest)| rest)
        .unwrap_or_default()
        .split_whitespace()
        .map(|f| f.parse().unwrap_or(0))
        .collect();
    // utime and stime are fields 14 and 15 of the line, 12 and 13 after the name.
    let ticks = fields.get(11).copied().unwrap_or(0) + fields.get(12).copied().unwrap_or(0);
    Duration::from_millis(ticks * 10)
}

/// A duration as milliseconds with enough precision for a table.
pub fn ms(d: Duration) -> String {
    let ms = d.as_secs_f64() * 1000.0;
    if ms < 1.0 {
        format!("{ms:.3} ms")
    } else if ms < 100.0 {
        format!("{ms:.1} ms")
    } else {
        format!("{ms:.0} ms")
    }
}

/// A duration in microseconds.
pub fn us(d: Duration) -> String {
    format!("{:.1} µs", d.as_secs_f64() * 1e6)
}

/// The resident memory of process `pid` in KiB (`VmRSS` of
/// `/proc/PID/status`), 0 where it cannot be read.
pub fn rss_kib(pid: &str) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|status| {
            let line = status.lines().find(|line| line.starts_with("VmRSS:"))?;
            line.split_whitespace().nth(1)?.parse().ok()
        })
        .unwrap_or(0)
}
