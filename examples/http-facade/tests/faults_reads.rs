//! Reads during a storage fault: while a write of an account waits for a
//! database another process has locked, reads of that same account answer
//! at once with what is stored.

mod common;

use common::{OWNER_KEY, Server, data_dir, seed};
use serde_json::{Value, json};
use std::time::{Duration, Instant};
/// While a write of an account waits for a database another process has
/// locked (the default 5-second busy timeout), reads of that same account
/// (its records, reports, settings, FX rates, keys, team, webhook
/// subscriptions and invitations) answer at once with what is stored; the write then answers 503 without having
/// changed anything, and succeeds once the lock is gone. Reads used to wait
/// for the write's outcome, up to the busy timeout.
#[test]
fn reads_of_an_account_do_not_wait_for_its_write_on_a_locked_database() {
    let server = Server::start_in_with(data_dir(), &["--webhooks-allow-private"]);
    seed(&server);
    let (status, hook) = server.post(
        "/webhooks",
        json!({"url": "http://127.0.0.1:9/in", "events": ["customer.churned"]}),
    );
    assert_eq!(status, 201, "{hook}");
    let (status, invitation) = server.post(
        "/account/team",
        json!({"email": "ada@example.test", "role": "admin"}),
    );
    assert_eq!(status, 201, "{invitation}");
    let hook = format!("/webhooks/{}", hook["id"].as_str().expect("id"));
    let deliveries = format!("{hook}/deliveries");
    let invitation = format!(
        "/invitations/{}",
        invitation["token"].as_str().expect("token")
    );
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
        "/webhooks",
        &hook,
        &deliveries,
        &invitation,
    ];
    let stored: Vec<Value> = reads.iter().map(|path| server.get(path).1).collect();
    let writes: [(&str, &str, Value); 6] = [
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
        (
            "POST",
            "/webhooks",
            json!({"url": "http://127.0.0.1:9/two", "events": ["customer.new"]}),
        ),
        (
            "POST",
            "/account/team",
            json!({"email": "bob@example.test", "role": "readonly"}),
        ),
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
