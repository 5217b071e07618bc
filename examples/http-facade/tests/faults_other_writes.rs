//! Storage faults on every write of the description outside `/data/`
//! (account, keys, team, sessions, settings, imports, webhooks): under a
//! locked database and on a full disk (where a small tmpfs can be mounted;
//! the write-ahead log is emptied first, so that no write fits in space it
//! already has), each is answered `503 storage_unavailable`, every read of
//! the description answers as before meanwhile, and each write is taken
//! once the fault is gone.

mod common;

use common::faults::{
    SmallDisk, assert_all_refused, assert_all_taken, documented_reads, empty_write_ahead_log, fill,
    other_writes, prepare_all, settled_reads,
};
use common::{Server, data_dir};
/// Write operations of the description the extended fault tests leave
/// out: each first calls another service (Stripe, a webhook's target),
/// which the fault tests do not run; a resync without a Stripe connection
/// only recalculates the customer and stores nothing.
const NOT_FAULT_TESTED: &[(&str, &str)] = &[
    ("POST", "/customers/{id}/resync"),
    ("PUT", "/settings/payment-platform"),
    ("PUT", "/settings/stripe"),
    ("POST", "/webhooks/stripe/{account}"),
    ("POST", "/webhooks/{id}/test"),
    ("POST", "/webhooks/{id}/deliveries/{delivery_id}/redeliver"),
];

/// Every write operation of the description outside `/data/`.
fn documented_other_writes(server: &Server) -> Vec<(String, String)> {
    let (_, document) = server.call("GET", "/openapi.json", None, None);
    let mut found = Vec::new();
    for (path, operations) in document["paths"].as_object().expect("paths") {
        if path.starts_with("/data/") {
            continue;
        }
        for method in operations.as_object().expect("operations").keys() {
            if method != "get" {
                found.push((method.to_uppercase(), path.clone()));
            }
        }
    }
    found
}

#[test]
fn the_other_writes_cover_every_write_of_the_description() {
    let server = Server::start_in_with(data_dir(), &["--webhooks-allow-private"]);
    let prepared = prepare_all(&server);
    let covered: std::collections::BTreeSet<(String, String)> = other_writes(&prepared)
        .into_iter()
        .map(|(template, request)| {
            let template = template.replace("/{import}", "/data-sources/{source}/{collection}");
            (request.method.to_string(), template)
        })
        .collect();
    for (method, path) in documented_other_writes(&server) {
        let skipped = NOT_FAULT_TESTED
            .iter()
            .any(|(m, p)| *m == method && *p == path);
        assert!(
            skipped || covered.contains(&(method.clone(), path.clone())),
            "no fault test for {method} {path}"
        );
    }
}

#[test]
fn a_locked_database_refuses_every_other_write_with_503_and_then_takes_it() {
    let server = Server::start_in_with(
        data_dir(),
        &["--busy-timeout", "300", "--webhooks-allow-private"],
    );
    let prepared = prepare_all(&server);
    let writes = other_writes(&prepared);
    let reads = documented_reads(&server, &prepared);
    let before = settled_reads(&server, &reads);
    let lock = rusqlite::Connection::open(server.dir.join("submetrics.db")).expect("open");
    lock.execute_batch("BEGIN IMMEDIATE")
        .expect("take the write lock");
    assert_all_refused(&server, &writes, &reads, &before, "locked");
    drop(lock);
    assert_all_taken(&server, &writes, "locked");
    assert_eq!(server.get("/account").1["name"], "Renamed");
    assert_eq!(server.get("/data/customers/AR").0, 200);
}

/// Every write of the description on a full disk, with the log emptied
/// first so that no write fits in space the log already has: each answers
/// `503 storage_unavailable`, reads keep answering what is stored, and once
/// space is freed each write is taken.
#[test]
fn a_full_disk_refuses_every_other_write_with_503_and_then_takes_it() {
    let dir = data_dir();
    let Some(_disk) = SmallDisk::mount(&dir) else {
        eprintln!("no tmpfs mount here (not root?): the full disk is not tested");
        return;
    };
    let server = Server::start_in_with(dir.clone(), &["--webhooks-allow-private"]);
    let prepared = prepare_all(&server);
    // Disconnecting a payment platform that was never connected stores
    // nothing, so it needs no space and answers 200 on a full disk too.
    let writes: Vec<_> = other_writes(&prepared)
        .into_iter()
        .filter(|(_, request)| {
            !(request.method == "DELETE" && request.path.starts_with("/settings/"))
        })
        .collect();
    let reads = documented_reads(&server, &prepared);
    let before = settled_reads(&server, &reads);
    empty_write_ahead_log(&dir);
    let filler = fill(&dir);
    assert_all_refused(&server, &writes, &reads, &before, "full");
    std::fs::remove_file(filler).expect("free the disk");
    assert_all_taken(&server, &writes, "full");
    assert_eq!(server.get("/account").1["name"], "Renamed");
    assert_eq!(server.get("/data/customers/AR").0, 200);
}
