//! Faults of the storage and hostile clients: the service keeps answering,
//! every answer is a JSON error with an honest status, and nothing is lost.

mod common;

use common::{OWNER_KEY, Server};
use serde_json::json;

/// Holds the database's write lock from another connection, as another
/// process writing to the file would: the service's writes then fail once
/// its busy timeout runs out.
fn lock_database(server: &Server) -> rusqlite::Connection {
    let connection =
        rusqlite::Connection::open(server.dir.join("submetrics.db")).expect("open the database");
    connection
        .execute_batch("BEGIN IMMEDIATE")
        .expect("take the write lock");
    connection
}

#[test]
fn a_failed_fx_rate_write_answers_and_the_service_keeps_answering() {
    let server = Server::start();
    let lock = lock_database(&server);
    // Over a plain connection with a read timeout: a hang fails the test.
    let (status, body) = server.raw_tcp(
        "POST",
        "/data/fx-rates",
        br#"[{"date": "2024-01-01", "currency": "EUR", "rate": 0.9}]"#.to_vec(),
    );
    assert_eq!(status, 500, "{body}");
    assert_eq!(body["code"], "internal");
    // A record write whose commit fails leaves nothing behind in memory.
    let (status, body) = server.raw_tcp(
        "POST",
        "/data/plans",
        br#"{"id": "m", "name": "Monthly", "interval": "month", "currency": "USD"}"#.to_vec(),
    );
    assert_eq!(status, 500, "{body}");
    drop(lock);
    assert_eq!(server.get("/data/plans/m").0, 404);
    assert_eq!(server.get("/data/fx-rates").1["result"]["count"], 0);
    let (status, _) = server.post(
        "/data/fx-rates",
        json!([{"date": "2024-01-01", "currency": "EUR", "rate": 0.9}]),
    );
    assert_eq!(status, 200);
    assert_eq!(server.get("/data/fx-rates").1["result"]["count"], 1);
    let (status, _) = server.call("GET", "/data/plans", Some(OWNER_KEY), None);
    assert_eq!(status, 200);
}
