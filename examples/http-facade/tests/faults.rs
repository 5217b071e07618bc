//! Storage faults on every record write of the description (`/data/`): a
//! database locked by another process and a full disk (where a small tmpfs
//! can be mounted). Each write is answered a clear `503
//! storage_unavailable` and changes nothing; `/health`, `/openapi.json` and
//! reads of the same account keep answering meanwhile; once the fault is
//! gone the same writes succeed.

mod common;

use common::faults::{SmallDisk, fill, prepare, writes};
use common::{OWNER_KEY, Server, data_dir};
use serde_json::Value;
use std::time::{Duration, Instant};
/// Every record write operation of the description (paths under `/data/`
/// with an id or a collection), so a new one must be added to [`writes`].
fn documented_writes(server: &Server) -> Vec<(String, String)> {
    let (_, document) = server.call("GET", "/openapi.json", None, None);
    let mut found = Vec::new();
    for (path, operations) in document["paths"].as_object().expect("paths") {
        if !path.starts_with("/data/") {
            continue;
        }
        for (method, operation) in operations.as_object().expect("operations") {
            // The id-less forms are always a 400, never a write.
            let always_refused = operation["summary"]
                .as_str()
                .is_some_and(|s| s.starts_with("Without an id"));
            if method != "get" && !always_refused {
                found.push((method.to_uppercase(), path.clone()));
            }
        }
    }
    found.sort();
    found
}

fn template(path: &str) -> String {
    path.split('/')
        .enumerate()
        .map(|(n, segment)| {
            if n == 3 {
                "{id}".to_string()
            } else {
                segment.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("/")
}

/// Sends every write while the fault holds: each is a 503
/// `storage_unavailable`, and a read of the account answers 200 after it.
/// While the write is under way (a locked database makes it wait out the
/// busy timeout, 2 s here) `/health`, `/openapi.json` and a read of the
/// same account answer within a second.
fn assert_refused(server: &Server, writes: &[(&'static str, String, Option<Value>)], fault: &str) {
    for (method, path, body) in writes {
        std::thread::scope(|scope| {
            let write = scope.spawn(|| server.call(method, path, Some(OWNER_KEY), body.as_ref()));
            std::thread::sleep(Duration::from_millis(200));
            let asked = Instant::now();
            server.call("GET", "/health", None, None);
            assert_eq!(server.call("GET", "/openapi.json", None, None).0, 200);
            assert_eq!(server.get("/data/invoices/a1").0, 200);
            assert!(
                asked.elapsed() < Duration::from_secs(1),
                "{fault}: /health, /openapi.json and a read took {:?} during {method} {path}",
                asked.elapsed()
            );
            let (status, answer) = write.join().expect("the write");
            assert_eq!(status, 503, "{fault}: {method} {path}: {answer}");
            assert_eq!(
                answer["code"], "storage_unavailable",
                "{fault}: {method} {path}: {answer}"
            );
            assert_eq!(
                server.get("/data/plans").0,
                200,
                "{fault}: a read after {method} {path}"
            );
        });
    }
}

/// Once the fault is gone every write succeeds.
fn assert_recovered(
    server: &Server,
    writes: &[(&'static str, String, Option<Value>)],
    fault: &str,
) {
    for (method, path, body) in writes {
        let (status, answer) = server.call(method, path, Some(OWNER_KEY), body.as_ref());
        assert!(
            (200..300).contains(&status),
            "{fault}, after: {method} {path}: {status} {answer}"
        );
    }
    assert_eq!(server.get("/data/plans/f").0, 200);
    assert_eq!(server.get("/data/invoices/b1").0, 404);
}

#[test]
fn the_writes_cover_every_record_write_of_the_description() {
    let server = Server::start();
    let covered: std::collections::BTreeSet<(String, String)> = writes("g")
        .into_iter()
        .map(|(method, path, _)| (method.to_string(), template(&path)))
        .collect();
    for (method, path) in documented_writes(&server) {
        assert!(
            covered.contains(&(method.clone(), path.clone())),
            "no fault test for {method} {path}"
        );
    }
}

#[test]
fn a_locked_database_refuses_every_write_with_503_and_then_recovers() {
    let server = Server::start_in_with(data_dir(), &["--busy-timeout", "1000"]);
    let group = prepare(&server);
    let writes = writes(&group);
    let lock = rusqlite::Connection::open(server.dir.join("submetrics.db")).expect("open");
    lock.execute_batch("BEGIN IMMEDIATE")
        .expect("take the write lock");
    assert_refused(&server, &writes, "locked");
    drop(lock);
    assert_recovered(&server, &writes, "locked");
}

#[test]
fn a_full_disk_refuses_every_write_with_503_and_then_recovers() {
    let dir = data_dir();
    let Some(_disk) = SmallDisk::mount(&dir) else {
        eprintln!("no tmpfs mount here (not root?): the full disk is not tested");
        return;
    };
    let server = Server::start_in(dir.clone());
    let group = prepare(&server);
    let writes = writes(&group);
    let filler = fill(&dir);
    assert_refused(&server, &writes, "full");
    std::fs::remove_file(filler).expect("free the disk");
    assert_recovered(&server, &writes, "full");
    drop(server);
}
