//! Imports as NDJSON and as Arrow IPC streams answer the per-record results
//! of the same records sent as JSON, and what they store survives a restart;
//! bodies that are not what their type says are refused.

mod common;

use arrow_array::{ArrayRef, Int64Array, RecordBatch, StringArray};
use arrow_ipc::CompressionType;
use common::Server;
use common::formats::{ARROW_STREAM, invoices, send, start, with_source_and_plan};
use serde_json::{Value, json};
use std::sync::Arc;

/// The invoices as an Arrow IPC stream (amounts as int64), its buffers
/// compressed as `compression` says.
fn invoice_stream(compression: Option<CompressionType>) -> Vec<u8> {
    let text = |name: &str| -> ArrayRef {
        Arc::new(
            invoices()
                .iter()
                .map(|i| i[name].as_str().map(str::to_string))
                .collect::<StringArray>(),
        )
    };
    let amounts: ArrayRef = Arc::new(
        invoices()
            .iter()
            .map(|i| i["amount"].as_i64())
            .collect::<Int64Array>(),
    );
    let batch = RecordBatch::try_from_iter([
        ("id", text("id")),
        ("customer_id", text("customer_id")),
        ("type", text("type")),
        ("plan_id", text("plan_id")),
        ("invoice_date", text("invoice_date")),
        ("amount", amounts),
        ("currency", text("currency")),
    ])
    .unwrap();
    stream_of(&batch, compression)
}

/// `batch` as an Arrow IPC stream, its buffers compressed as asked.
fn stream_of(batch: &RecordBatch, compression: Option<CompressionType>) -> Vec<u8> {
    let options = arrow_ipc::writer::IpcWriteOptions::default()
        .try_with_compression(compression)
        .unwrap();
    let mut bytes = Vec::new();
    let mut writer =
        arrow_ipc::writer::StreamWriter::try_new_with_options(&mut bytes, &batch.schema(), options)
            .unwrap();
    writer.write(batch).unwrap();
    writer.finish().unwrap();
    drop(writer);
    bytes
}

const NDJSON: &[(&str, &str)] = &[("Content-Type", "application/x-ndjson")];

/// Imports invoice lines into `ds1` as NDJSON; answers the results.
fn import_ndjson(server: &Server, lines: &[impl AsRef<str>]) -> Value {
    let body: Vec<&str> = lines.iter().map(AsRef::as_ref).collect();
    let (status, answer) = send(
        server,
        "POST",
        "/v1/data-sources/ds1/invoices",
        NDJSON,
        body.join("\n").into(),
    );
    assert_eq!(status, 200, "{answer}");
    serde_json::from_str(&answer).unwrap()
}

const ARROW: &[(&str, &str)] = &[("Content-Type", ARROW_STREAM)];

#[test]
fn ndjson_and_arrow_imports_answer_what_json_answers() {
    let server = start();
    let customers = "{\"id\": \"A\", \"name\": \"Acme\"}\n\n{\"id\": \"B\", \"name\": \"Beta\"}\n";
    let (status, body) = send(
        &server,
        "POST",
        "/v1/data-sources/ds1/customers",
        NDJSON,
        customers.into(),
    );
    assert_eq!(status, 200, "{body}");
    let body: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(body["result"][1]["id"], "B");
    assert_eq!(server.get("/data/customers/B").1["data_source"], "ds1");

    let (status, expected) = server.post(
        "/v1/data-sources/ds1/invoices",
        json!({"invoices": invoices()}),
    );
    assert_eq!(status, 200);
    assert_eq!(
        expected["result"][2]["import_error"],
        "invoice bad: field `amount`: must be 0 or less for a refund, got 700"
    );
    assert_eq!(
        expected["result"][3]["import_error"],
        "invoice who: field `customer_id`: customer `Z` does not exist; send the customer first"
    );
    let lines: Vec<String> = invoices().iter().map(Value::to_string).collect();
    assert_eq!(import_ndjson(&server, &lines), expected);
    // Plain, and with buffers compressed as pyarrow and Polars write them
    // on request.
    for compression in [
        None,
        Some(CompressionType::LZ4_FRAME),
        Some(CompressionType::ZSTD),
    ] {
        let (status, body) = send(
            &server,
            "POST",
            "/v1/data-sources/ds1/invoices",
            ARROW,
            invoice_stream(compression),
        );
        assert_eq!(status, 200, "{compression:?}: {body}");
        assert_eq!(serde_json::from_str::<Value>(&body).unwrap(), expected);
    }

    // Stored with the data source, and still there after a restart.
    let dir = server.kill();
    let server = Server::start_in(dir);
    let (_, invoice) = server.get("/data/invoices/i2");
    assert_eq!(invoice["amount"], 2000);
    assert_eq!(invoice["data_source"], "ds1");
    let (_, summary) = server.get("/reports/summary?as_of=2024-01-20");
    assert_eq!(summary["summary"]["mrr_current"], 5000);
}

/// The upserts of `/data/customers`, `/data/plans` and `/data/invoices`
/// read NDJSON, CSV and Arrow streams as the imports do, with no data
/// source, answering each endpoint's own shape.
#[test]
fn record_upserts_read_ndjson_csv_and_arrow_as_json() {
    let server = Server::start();
    let (status, body) = send(
        &server,
        "POST",
        "/v1/data/plans",
        &[("Content-Type", "text/csv")],
        b"id,name,interval,currency\nm,Monthly,month,USD\nbad,,month,USD\n".to_vec(),
    );
    assert_eq!(status, 200, "{body}");
    assert_eq!(
        serde_json::from_str::<Value>(&body).unwrap(),
        json!({"result": [
            {"id": "m", "import_status": "inserted"},
            {"id": "bad", "import_status": "error", "import_error": "plan bad: field `name`: is required"},
        ]})
    );
    let customers = "{\"id\": \"A\", \"name\": \"Acme\"}\n{\"id\": \"B\", \"name\": \"Beta\"}\n";
    let (status, body) = send(
        &server,
        "POST",
        "/v1/data/customers",
        NDJSON,
        customers.into(),
    );
    assert_eq!(status, 201, "{body}");
    assert_eq!(
        serde_json::from_str::<Value>(&body).unwrap(),
        json!({"result": {"count": 2, "list": [
            {"id": "A", "import_status": "inserted"},
            {"id": "B", "import_status": "inserted"},
        ]}})
    );
    let (status, expected) = server.post("/v1/data/invoices", json!(invoices()));
    assert_eq!(status, 200);
    assert_eq!(expected["result"][3]["import_status"], "error");
    let (status, body) = send(
        &server,
        "POST",
        "/v1/data/invoices",
        ARROW,
        invoice_stream(None),
    );
    assert_eq!(status, 200, "{body}");
    assert_eq!(serde_json::from_str::<Value>(&body).unwrap(), expected);
    let (_, invoice) = server.get("/data/invoices/i2");
    assert_eq!(
        (&invoice["amount"], &invoice["data_source"]),
        (&json!(2000), &Value::Null)
    );
    // Stored as durably as JSON: still there after a restart.
    let dir = server.kill();
    let server = Server::start_in(dir);
    assert_eq!(server.get("/data/plans/m").1["name"], "Monthly");
    assert_eq!(server.get("/data/customers").1["result"]["count"], 2);
    let (_, summary) = server.get("/reports/summary?as_of=2024-01-20");
    assert_eq!(summary["summary"]["mrr_current"], 5000);
}

/// Invoices read from their own texts are logged as those texts: written
/// with aliases, a lower-case currency, a data source of their own and an
/// id given twice, they read back after a restart exactly as the ledger
/// held them.
#[test]
fn imported_invoices_read_back_the_same_after_a_restart() {
    let server = start();
    server.post(
        "/v1/data-sources/ds1/customers",
        json!([{"id": "A", "name": "Acme"}, {"id": "B", "name": "Beta"}]),
    );
    let lines = [
        r#"{"external_id": "i1", "customer": "A", "type": "subscription", "plan_id": "m", "date": "2024-01-01", "amount_in_cents": 3000, "currency": "usd", "data_source": "elsewhere"}"#,
        r#"{"id": "i2", "customer_id": "B", "type": "subscription", "plan_id": "m", "invoice_date": "2024-01-10T12:30:00+02:00", "amount": 2000, "currency": "USD", "tax": 100}"#,
        r#"{"id": "i1", "customer_id": "B", "type": "subscription", "plan_id": "m", "invoice_date": "2024-02-01", "amount": 4000, "currency": "USD"}"#,
    ];
    import_ndjson(&server, &lines);
    let before: Vec<Value> = ["i1", "i2"]
        .iter()
        .map(|id| server.get(&format!("/data/invoices/{id}")).1)
        .collect();
    assert_eq!(before[0]["customer_id"], "B");
    assert_eq!(before[0]["amount"], 4000);
    assert_eq!(before[1]["data_source"], "ds1");
    let (_, summary) = server.get("/reports/summary?as_of=2024-02-15");

    let dir = server.kill();
    let server = Server::start_in(dir);
    let after: Vec<Value> = ["i1", "i2"]
        .iter()
        .map(|id| server.get(&format!("/data/invoices/{id}")).1)
        .collect();
    assert_eq!(after, before);
    assert_eq!(server.get("/reports/summary?as_of=2024-02-15").1, summary);
}

/// An NDJSON import the database cannot take (locked by another process
/// past the busy timeout) is refused with 503 and stores none of its
/// records; sent again once the lock is gone, it answers the per-record
/// results of the same records as JSON, a rejected record in the middle
/// included, and its accepted records survive a restart.
#[test]
fn an_ndjson_import_the_database_refuses_stores_nothing() {
    let server = with_source_and_plan(Server::start_in_with(
        common::data_dir(),
        &["--busy-timeout", "500"],
    ));
    server.post(
        "/v1/data-sources/ds1/customers",
        json!([{"id": "A", "name": "Acme"}, {"id": "B", "name": "Beta"}]),
    );
    // The rejected refund sits between two accepted invoices.
    let records = [
        invoices()[0].clone(),
        invoices()[2].clone(),
        invoices()[1].clone(),
    ];
    let body: Vec<u8> = records
        .iter()
        .map(|record| format!("{record}\n"))
        .collect::<String>()
        .into();

    let lock = rusqlite::Connection::open(server.dir.join("submetrics.db")).expect("open");
    lock.execute_batch("BEGIN IMMEDIATE")
        .expect("take the write lock");
    let (status, answer) = send(
        &server,
        "POST",
        "/v1/data-sources/ds1/invoices",
        NDJSON,
        body.clone(),
    );
    assert_eq!(status, 503, "{answer}");
    assert_eq!(
        serde_json::from_str::<Value>(&answer).unwrap()["code"],
        "storage_unavailable"
    );
    drop(lock);
    assert_eq!(server.get("/data/invoices/i1").0, 404);
    assert_eq!(server.get("/data/invoices/i2").0, 404);

    let (status, answer) = send(
        &server,
        "POST",
        "/v1/data-sources/ds1/invoices",
        NDJSON,
        body,
    );
    assert_eq!(status, 200, "{answer}");
    let answer: Value = serde_json::from_str(&answer).unwrap();
    assert_eq!(
        answer["result"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| (
                r["id"].clone(),
                r["import_status"].clone(),
                r["import_error"].clone()
            ))
            .collect::<Vec<_>>(),
        [
            (json!("i1"), json!("inserted"), Value::Null),
            (
                json!("bad"),
                json!("error"),
                json!("invoice bad: field `amount`: must be 0 or less for a refund, got 700")
            ),
            (json!("i2"), json!("inserted"), Value::Null),
        ]
    );
    let dir = server.kill();
    let server = Server::start_in(dir);
    assert_eq!(server.get("/data/invoices/i1").1["data_source"], "ds1");
    assert_eq!(server.get("/data/invoices/i2").1["amount"], 2000);
    assert_eq!(server.get("/data/invoices/bad").0, 404);
}

#[test]
fn bad_ndjson_and_arrow_bodies_are_refused() {
    let server = start();
    let (status, body) = send(
        &server,
        "POST",
        "/v1/data-sources/ds1/customers",
        NDJSON,
        "{\"id\": \"A\", \"name\": \"Acme\"}\n{\"id\": \n".into(),
    );
    assert_eq!(status, 400);
    let error: Value = serde_json::from_str(&body).unwrap();
    // The record cut short is on line 2.
    assert_eq!(
        error["error"], "the body is not valid JSON: expected value at line 2 column 8",
        "{body}"
    );
    // Not a stream; one whose batch claims a petabyte of body, which used to
    // abort the server as it allocated what the stream claimed.
    let claiming = submetrics::testing::ipc_stream_claiming_body(1 << 50);
    // Each refused with a 400 whose error is the answer.
    let refused = |bytes: Vec<u8>| {
        let (status, body) = send(
            &server,
            "POST",
            "/v1/data-sources/ds1/invoices",
            ARROW,
            bytes,
        );
        assert_eq!(status, 400);
        serde_json::from_str::<Value>(&body).unwrap()["error"].clone()
    };
    for bytes in [b"not arrow".to_vec(), claiming] {
        assert_eq!(
            refused(bytes),
            "the body is not an Arrow IPC stream: it ends inside a message"
        );
    }
    // Buffers that decompress past the body limit, from a small body.
    let ids: ArrayRef = Arc::new(StringArray::from(vec!["x".repeat(70 << 10); 1000]));
    let bomb = stream_of(
        &RecordBatch::try_from_iter([("id", ids)]).unwrap(),
        Some(CompressionType::ZSTD),
    );
    assert!(bomb.len() < 1 << 20, "{} bytes", bomb.len());
    assert_eq!(
        refused(bomb),
        "the body is not an Arrow IPC stream: its buffers decompress to more than 67108864 bytes"
    );
    // A buffer past the body, and a validity bitmap shorter than its
    // column, which the arrow reader panics on (the server answered 500).
    let outside = submetrics::testing::ipc_stream_with_buffer_at(4, 1 << 40, 16);
    assert_eq!(
        refused(outside),
        "the body is not an Arrow IPC stream: a buffer lies outside its message"
    );
    let short_bitmap = submetrics::testing::ipc_stream_with_buffer_at(3, 0, 0);
    assert_eq!(
        refused(short_bitmap),
        "the body is not an Arrow IPC stream: it is malformed (buffer not large enough \
         (bit_offset: 0, bit_len: 2, buffer_len: 0))"
    );
    assert_eq!(server.get("/health").0, 200);
    let unreadable = {
        let ids: ArrayRef = Arc::new(StringArray::from(vec!["x"]));
        let blob: ArrayRef = Arc::new(arrow_array::BinaryArray::from(vec![&b"1"[..]]));
        stream_of(
            &RecordBatch::try_from_iter([("id", ids), ("amount", blob)]).unwrap(),
            None,
        )
    };
    let (status, body) = send(
        &server,
        "POST",
        "/v1/data-sources/ds1/invoices",
        ARROW,
        unreadable,
    );
    assert_eq!(status, 400, "{body}");
    assert!(
        body.contains("invoice ?: field `amount`: column type Binary cannot be read"),
        "{body}"
    );
    let (status, _) = send(
        &server,
        "POST",
        "/v1/data-sources/nope/invoices",
        ARROW,
        invoice_stream(None),
    );
    assert_eq!(status, 404);
    assert_eq!(server.get("/data/invoices").1["result"]["count"], 0);
}
