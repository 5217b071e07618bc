//! Storage faults on every record write of the description: a database
//! locked by another process and a full disk. Each write is answered a
//! clear `503 storage_unavailable` and changes nothing; reads, of the same
//! account included, and `/health` keep answering within a second
//! meanwhile; once the fault is gone the same writes succeed. (A read-only
//! database file is covered in reliability.rs.)

mod common;

use common::{OWNER_KEY, Server, data_dir, seed};
use serde_json::{Value, json};
use std::path::Path;
use std::time::{Duration, Instant};

/// A valid write for each record write operation of the description, on
/// the records `prepare` leaves: `(method, path, body)`.
fn writes(group: &str) -> Vec<(&'static str, String, Option<Value>)> {
    vec![
        (
            "POST",
            "/data/plans".into(),
            Some(json!({"id": "f", "name": "F", "interval": "month", "currency": "USD"})),
        ),
        (
            "PUT",
            "/data/plans/m".into(),
            Some(json!({"name": "Monthly renamed"})),
        ),
        ("DELETE", "/data/plans/spare".into(), None),
        (
            "POST",
            "/data/customers".into(),
            Some(json!({"id": "C", "name": "Cee"})),
        ),
        (
            "PUT",
            "/data/customers/A".into(),
            Some(json!({"name": "Acme renamed"})),
        ),
        (
            "POST",
            "/data/plan-groups".into(),
            Some(json!({"name": "New group", "plans": [{"id": "m"}]})),
        ),
        (
            "PUT",
            format!("/data/plan-groups/{group}"),
            Some(json!({"name": "Renamed group", "plans": [{"id": "m"}]})),
        ),
        ("DELETE", format!("/data/plan-groups/{group}"), None),
        (
            "POST",
            "/data/invoices".into(),
            Some(
                json!({"id": "c1", "customer_id": "A", "type": "subscription",
            "invoice_date": "2024-02-01", "amount": 4000, "currency": "USD", "plan_id": "m"}),
            ),
        ),
        (
            "PUT",
            "/data/invoices/a1".into(),
            Some(
                json!({"id": "a1", "customer_id": "A", "type": "subscription",
            "invoice_date": "2024-01-01", "amount": 3100, "currency": "USD", "plan_id": "m"}),
            ),
        ),
        ("DELETE", "/data/invoices/b1".into(), None),
        // Last: it takes B's invoices with it.
        ("DELETE", "/data/customers/B".into(), None),
        (
            "POST",
            "/data/data-sources".into(),
            Some(json!({"id": "ds2", "name": "Second"})),
        ),
        (
            "PUT",
            "/data/data-sources/ds1".into(),
            Some(json!({"id": "ds1", "name": "Renamed"})),
        ),
        ("DELETE", "/data/data-sources/ds1".into(), None),
        (
            "POST",
            "/data/fx-rates".into(),
            Some(json!([{"date": "2024-01-01", "currency": "EUR", "rate": 0.9}])),
        ),
    ]
}

/// Seeds the records the writes act on; returns the plan group's id.
fn prepare(server: &Server) -> String {
    seed(server);
    let (status, body) = server.post(
        "/data/plans",
        json!({"id": "spare", "name": "Spare", "interval": "month", "currency": "USD"}),
    );
    assert!((200..300).contains(&status), "{body}");
    let (status, body) = server.post("/data/data-sources", json!({"id": "ds1", "name": "First"}));
    assert!((200..300).contains(&status), "{body}");
    let (status, body) = server.post(
        "/data/plan-groups",
        json!({"name": "Group", "plans": [{"id": "m2"}]}),
    );
    assert_eq!(status, 200, "{body}");
    body["id"].as_str().expect("group id").to_string()
}

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
/// 5-second busy timeout) `/health`, `/openapi.json` and a read of the same
/// account answer within a second.
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
    let server = Server::start();
    let group = prepare(&server);
    let writes = writes(&group);
    let lock = rusqlite::Connection::open(server.dir.join("submetrics.db")).expect("open");
    lock.execute_batch("BEGIN IMMEDIATE")
        .expect("take the write lock");
    assert_refused(&server, &writes, "locked");
    drop(lock);
    assert_recovered(&server, &writes, "locked");
}

/// A small tmpfs mounted on `dir` (needs root and mount rights; `None`
/// where they are missing); unmounted when dropped.
struct SmallDisk(std::path::PathBuf);

impl SmallDisk {
    fn mount(dir: &Path) -> Option<SmallDisk> {
        let mounted = std::process::Command::new("mount")
            .args(["-t", "tmpfs", "-o", "size=8m", "tmpfs"])
            .arg(dir)
            .stderr(std::process::Stdio::null())
            .status()
            .ok()?;
        mounted.success().then(|| SmallDisk(dir.to_path_buf()))
    }
}

impl Drop for SmallDisk {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount")
            .arg("-l")
            .arg(&self.0)
            .status();
    }
}

/// Fills what is left of the file system of `dir`; returns the filler.
fn fill(dir: &Path) -> std::path::PathBuf {
    use std::io::Write;
    let filler = dir.join("filler");
    let mut file = std::fs::File::create(&filler).expect("filler");
    let chunk = vec![0u8; 4096];
    while file.write_all(&chunk).is_ok() {}
    let _ = file.sync_all();
    filler
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

/// While a write of an account waits for a database another process has
/// locked (the default 5-second busy timeout), reads of that same account
/// (its records, reports, settings, FX rates, keys and team) answer at
/// once with what is stored; the write then answers 503 without having
/// changed anything, and succeeds once the lock is gone. Reads used to wait
/// for the write's outcome, up to the busy timeout.
#[test]
fn reads_of_an_account_do_not_wait_for_its_write_on_a_locked_database() {
    let server = Server::start();
    seed(&server);
    let reads = [
        "/data/plans",
        "/data/plans/m",
        "/data/customers/A",
        "/data/invoices",
        "/data/fx-rates",
        "/reports/mrr?as_of=2024-06-01",
        "/account",
        "/settings/notifications",
        "/profile",
        "/account/api-keys",
        "/account/team",
    ];
    let stored: Vec<Value> = reads.iter().map(|path| server.get(path).1).collect();
    let writes: [(&str, &str, Value); 4] = [
        (
            "POST",
            "/data/plans",
            json!({"id": "new", "name": "New", "interval": "month", "currency": "USD"}),
        ),
        (
            "POST",
            "/data/fx-rates",
            json!([{"date": "2024-01-01", "currency": "EUR", "rate": 0.9}]),
        ),
        ("PUT", "/account", json!({"name": "Renamed"})),
        ("PUT", "/profile", json!({"first_name": "Ada"})),
    ];
    let lock = rusqlite::Connection::open(server.dir.join("submetrics.db")).expect("open");
    lock.execute_batch("BEGIN IMMEDIATE")
        .expect("take the write lock");
    for (method, path, body) in &writes {
        std::thread::scope(|scope| {
            let write = scope.spawn(|| {
                let sent = Instant::now();
                let answer = server.call(method, path, Some(OWNER_KEY), Some(body));
                (answer, sent.elapsed())
            });
            std::thread::sleep(Duration::from_millis(300));
            for (read, before) in reads.iter().zip(&stored) {
                let asked = Instant::now();
                let (status, answer) = server.get(read);
                let took = asked.elapsed();
                assert!(
                    took < Duration::from_secs(1),
                    "GET {read} took {took:?} while {method} {path} waited for the database"
                );
                assert_eq!(status, 200, "GET {read} during {method} {path}: {answer}");
                assert_eq!(&answer, before, "GET {read} during {method} {path}");
            }
            let ((status, answer), took) = write.join().expect("the write");
            assert_eq!(status, 503, "{method} {path}: {answer}");
            assert_eq!(answer["code"], "storage_unavailable", "{answer}");
            // It did wait out the busy timeout, while the reads did not.
            assert!(
                took >= Duration::from_secs(4),
                "{method} {path} took {took:?}"
            );
        });
    }
    for (read, before) in reads.iter().zip(&stored) {
        assert_eq!(
            &server.get(read).1,
            before,
            "GET {read} after the failed writes"
        );
    }
    drop(lock);
    for (method, path, body) in &writes {
        let (status, answer) = server.call(method, path, Some(OWNER_KEY), Some(body));
        assert!(
            (200..300).contains(&status),
            "{method} {path}: {status} {answer}"
        );
    }
    assert_eq!(server.get("/data/plans/new").0, 200);
    assert_eq!(server.get("/data/fx-rates").1["result"]["count"], 1);
    assert_eq!(server.get("/account").1["name"], "Renamed");
    assert_eq!(server.get("/profile").1["first_name"], "Ada");
}
