//! A read-only database (its file made immutable, where `chattr` can): the
//! server starts, answers every read of the description as before and
//! `/health` 503, refuses every write with `503 storage_unavailable`, and
//! takes them all once restarted on a writable file.

mod common;

use common::faults::{
    Request, assert_all_refused, assert_all_taken, documented_reads, other_writes, prepare_all,
    settled_reads, writes,
};
use common::{Immutable, Server, data_dir};
#[test]
fn a_read_only_database_answers_every_read_and_refuses_every_write() {
    let server = Server::start_in_with(data_dir(), &["--webhooks-allow-private"]);
    let prepared = prepare_all(&server);
    let reads = documented_reads(&server, &prepared);
    let before = settled_reads(&server, &reads);
    server.signal("TERM");
    let dir = server.dir.clone();
    assert!(server.wait().success());
    let Some(immutable) = Immutable::set(dir.join("submetrics.db")) else {
        eprintln!("no immutable files here (chattr): the read-only database is not tested");
        return;
    };
    let server = Server::start_in_with(dir.clone(), &["--webhooks-allow-private"]);
    assert_eq!(server.call("GET", "/health", None, None).0, 503);
    // The imports into `ds1` before the record writes delete it.
    let mut record_writes = other_writes(&prepared);
    record_writes.extend(
        writes(&prepared.group)
            .into_iter()
            .map(|(method, path, body)| ("", Request::json(method, path, body))),
    );
    assert_all_refused(&server, &record_writes, &reads, &before, "read-only");
    server.signal("TERM");
    assert!(server.wait().success());
    drop(immutable);
    let server = Server::start_in_with(dir, &["--webhooks-allow-private"]);
    assert_all_taken(&server, &record_writes, "read-only");
}
