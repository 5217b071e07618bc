//! What the tests of body and answer formats share: requests with headers
//! answering text or bytes, the invoices they send, and a server with the
//! data source `ds1` and its plan `m`.

use super::Server;
use serde_json::{Value, json};

/// Sends `body` with `headers` and the owner key; answers the status and
/// the body's text.
pub fn send(
    server: &Server,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: Vec<u8>,
) -> (u16, String) {
    let (status, _, body) = send_for_bytes(server, method, path, headers, body);
    (status, String::from_utf8_lossy(&body).into_owned())
}

/// [`send`], answering the status, the content type and the body's bytes.
pub fn send_for_bytes(
    server: &Server,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: Vec<u8>,
) -> (u16, String, Vec<u8>) {
    server.send(method, path, headers, body)
}

/// Two accepted subscription invoices of A and B in plan `m`, a refund
/// with a positive amount and an invoice of an unknown customer.
pub fn invoices() -> Vec<Value> {
    vec![
        json!({"id": "i1", "customer_id": "A", "type": "subscription", "plan_id": "m",
               "invoice_date": "2024-01-01", "amount": 3000, "currency": "USD"}),
        json!({"id": "i2", "customer_id": "B", "type": "subscription", "plan_id": "m",
               "invoice_date": "2024-01-10", "amount": 2000, "currency": "USD"}),
        json!({"id": "bad", "customer_id": "A", "type": "refund", "plan_id": null,
               "invoice_date": "2024-01-20", "amount": 700, "currency": "USD"}),
        json!({"id": "who", "customer_id": "Z", "type": "subscription", "plan_id": "m",
               "invoice_date": "2024-01-20", "amount": 700, "currency": "USD"}),
    ]
}

pub fn start() -> Server {
    with_source_and_plan(Server::start())
}

/// The server with the data source `ds1` and its monthly plan `m`.
pub fn with_source_and_plan(server: Server) -> Server {
    server.post(
        "/data/data-sources",
        json!({"id": "ds1", "name": "Billing", "type": "api"}),
    );
    server.post(
        "/v1/data-sources/ds1/plans",
        json!([{"id": "m", "name": "Monthly", "interval": "month", "currency": "USD"}]),
    );
    server
}

pub const ARROW_STREAM: &str = "application/vnd.apache.arrow.stream";
