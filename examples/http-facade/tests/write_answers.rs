//! Record writes answer their per-record results as an Arrow IPC stream for
//! `format=arrow` and for an `Accept` that prefers the Arrow type, with the
//! JSON answer's status and results; a format they cannot answer in is
//! refused before anything is written.

mod common;

use arrow_array::cast::AsArray;
use arrow_array::types::Int8Type;
use arrow_array::{Array, RecordBatch};
use common::Server;
use serde_json::{Value, json};

const ARROW_STREAM: &str = "application/vnd.apache.arrow.stream";

/// Each row of a results batch as `[id, import_status, import_error]`.
fn rows_of(batch: &RecordBatch) -> Vec<Value> {
    let ids = batch.column(0).as_string::<i32>();
    let statuses = batch.column(1).as_dictionary::<Int8Type>();
    let names = statuses.values().as_string::<i32>();
    let errors = batch.column(2).as_string::<i32>();
    (0..batch.num_rows())
        .map(|row| {
            let status = names.value(statuses.keys().value(row) as usize);
            let error = (!errors.is_null(row)).then(|| errors.value(row));
            json!([ids.value(row), status, error])
        })
        .collect()
}

/// Sends `body` as JSON with `headers`; answers the status, the content type
/// and the rows of the one results batch of the Arrow stream answered.
fn arrow_results(
    server: &Server,
    path: &str,
    headers: &[(&str, &str)],
    body: Value,
) -> (u16, String, Vec<Value>) {
    let mut all = vec![("Content-Type", "application/json")];
    all.extend_from_slice(headers);
    let (status, content_type, bytes) = server.send("POST", path, &all, body.to_string().into());
    let batches = submetrics::columnar::batches_from_ipc(&bytes, u64::MAX)
        .unwrap_or_else(|e| panic!("{status} {e}: {}", String::from_utf8_lossy(&bytes)));
    assert_eq!(batches.len(), 1);
    let schema = batches[0].schema();
    let names: Vec<&str> = schema.fields().iter().map(|f| f.name().as_str()).collect();
    assert_eq!(names, ["id", "import_status", "import_error"]);
    (status, content_type, rows_of(&batches[0]))
}

#[test]
fn record_writes_answer_their_results_as_an_arrow_stream_when_asked() {
    let server = Server::start();
    let accept = [("Accept", ARROW_STREAM)];
    let (status, content_type, rows) = arrow_results(
        &server,
        "/v1/data/plans",
        &accept,
        json!([{"id": "m", "name": "Monthly", "interval": "month", "currency": "USD"},
               {"id": "bad", "interval": "month", "currency": "USD"}]),
    );
    assert_eq!((status, content_type.as_str()), (200, ARROW_STREAM));
    assert_eq!(
        rows,
        [
            json!(["m", "inserted", null]),
            json!(["bad", "error", "plan bad: field `name`: is required"]),
        ]
    );
    // Customers keep their 201.
    let (status, _, rows) = arrow_results(
        &server,
        "/v1/data/customers?format=arrow",
        &[],
        json!([{"id": "A", "name": "Acme"}]),
    );
    assert_eq!((status, rows), (201, vec![json!(["A", "inserted", null])]));
    let invoices = json!([
        {"id": "i1", "customer_id": "A", "type": "subscription", "plan_id": "m",
         "invoice_date": "2024-01-01", "amount": 3000, "currency": "USD"},
        {"id": "who", "customer_id": "Z", "type": "subscription", "plan_id": "m",
         "invoice_date": "2024-01-20", "amount": 700, "currency": "USD"},
    ]);
    let (status, _, rows) = arrow_results(
        &server,
        "/v1/data/invoices",
        &[(
            "Accept",
            "application/json;q=0.5, application/vnd.apache.arrow.stream",
        )],
        invoices.clone(),
    );
    // The same results as the JSON answer of the same write.
    let (_, json_answer) = server.post("/v1/data/invoices", invoices);
    let as_rows: Vec<Value> = json_answer["result"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| json!([r["id"], r["import_status"], r["import_error"]]))
        .collect();
    assert_eq!((status, &rows), (200, &as_rows));
    assert_eq!(
        rows[1],
        json!([
            "who",
            "error",
            "invoice who: field `customer_id`: customer `Z` does not exist; send the customer first"
        ])
    );
    server.post(
        "/v1/data/data-sources",
        json!({"id": "s", "name": "Billing"}),
    );
    let (status, _, rows) = arrow_results(
        &server,
        "/v1/data-sources/s/customers",
        &accept,
        json!([{"id": "B", "name": "Beta"}]),
    );
    assert_eq!((status, rows), (200, vec![json!(["B", "inserted", null])]));
    assert_eq!(server.get("/v1/data/customers/B").1["data_source"], "s");
}

#[test]
fn a_write_asked_for_a_format_it_has_not_writes_nothing() {
    let server = Server::start();
    let plan = json!({"id": "m", "name": "Monthly", "interval": "month", "currency": "USD"});
    let send = |path: &str, headers: &[(&str, &str)]| {
        let mut all = vec![("Content-Type", "application/json")];
        all.extend_from_slice(headers);
        let (status, _, body) = server.send("POST", path, &all, plan.to_string().into());
        let body: Value = serde_json::from_slice(&body).unwrap();
        (
            status,
            body["error"].as_str().unwrap_or_default().to_string(),
        )
    };
    assert_eq!(
        send("/v1/data/plans", &[("Accept", "text/csv")]),
        (
            406,
            "header `Accept` accepts none of the types this answers in: application/json, \
             application/vnd.apache.arrow.stream (or ask with `format=`: json, arrow)"
                .to_string()
        )
    );
    assert_eq!(
        send("/v1/data/plans?format=csv", &[]),
        (
            400,
            "parameter `format`: `csv` is not one of json, arrow".to_string()
        )
    );
    assert_eq!(
        send("/v1/data/plans?formats=arrow", &[]).0,
        400,
        "an unknown parameter is refused"
    );
    assert_eq!(server.get("/v1/data/plans").1["result"]["count"], 0);
}
