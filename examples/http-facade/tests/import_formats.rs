//! Imports as NDJSON and as Arrow IPC streams answer the per-record results
//! of the same records sent as JSON, and what they store survives a restart;
//! reports answer CSV for `format=csv` and `Accept: text/csv`, and Arrow
//! IPC streams for `format=arrow` and `Accept:
//! application/vnd.apache.arrow.stream`. Bodies travel compressed both ways.

mod common;

use arrow_array::cast::AsArray;
use arrow_array::types::Int64Type;
use arrow_array::{ArrayRef, Int64Array, RecordBatch, StringArray};
use arrow_ipc::CompressionType;
use common::{OWNER_KEY, Server};
use serde_json::{Value, json};
use std::sync::Arc;

/// Sends `body` with `headers` and the owner key; answers the status and
/// the body's text.
fn send(
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
fn send_for_bytes(
    server: &Server,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: Vec<u8>,
) -> (u16, String, Vec<u8>) {
    server.send(method, path, headers, body)
}

fn invoices() -> Vec<Value> {
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

fn start() -> Server {
    with_source_and_plan(Server::start())
}

/// The server with the data source `ds1` and its monthly plan `m`.
fn with_source_and_plan(server: Server) -> Server {
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
const ARROW_STREAM: &str = "application/vnd.apache.arrow.stream";
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

fn gzip(bytes: &[u8]) -> Vec<u8> {
    use std::io::Write;
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    encoder.write_all(bytes).unwrap();
    encoder.finish().unwrap()
}

/// Bodies sent with `Content-Encoding: gzip` or `zstd` answer what the
/// same bodies sent plain answer; another coding is a `415`, a body that
/// is not what its coding says a `400`, and one that inflates past the
/// body limit a `413`, none of them storing anything.
#[test]
fn compressed_bodies_answer_what_plain_ones_answer() {
    let server = start();
    let (status, expected) = server.post(
        "/v1/data-sources/ds1/invoices",
        json!({"invoices": invoices()}),
    );
    assert_eq!(status, 200);
    let lines: Vec<String> = invoices().iter().map(Value::to_string).collect();
    let ndjson = lines.join("\n");
    let json_body = json!({"invoices": invoices()}).to_string();
    let cases = [
        ("application/x-ndjson", "gzip", gzip(ndjson.as_bytes())),
        (
            "application/x-ndjson",
            "zstd",
            zstd::encode_all(ndjson.as_bytes(), 0).unwrap(),
        ),
        ("application/json", "GZIP", gzip(json_body.as_bytes())),
        (
            "application/json",
            "identity",
            json_body.clone().into_bytes(),
        ),
    ];
    for (content_type, coding, body) in cases {
        let headers = [("Content-Type", content_type), ("Content-Encoding", coding)];
        let (status, answer) = send(
            &server,
            "POST",
            "/v1/data-sources/ds1/invoices",
            &headers,
            body,
        );
        assert_eq!(status, 200, "{content_type} {coding}: {answer}");
        assert_eq!(serde_json::from_str::<Value>(&answer).unwrap(), expected);
    }

    let customer = |coding: &str, body: Vec<u8>| {
        let headers = [
            ("Content-Type", "application/json"),
            ("Content-Encoding", coding),
        ];
        let (status, answer) = send(&server, "POST", "/data/customers", &headers, body);
        (status, serde_json::from_str::<Value>(&answer).unwrap())
    };
    let record = json!({"id": "C", "name": "Gamma"}).to_string().into_bytes();
    assert_eq!(
        customer("br", record.clone()),
        (
            415,
            json!({"error": "Content-Encoding `br` is not supported; send the body as it is, or as gzip or zstd",
                   "code": "unsupported_media_type"})
        )
    );
    assert_eq!(
        customer("gzip", record),
        (
            400,
            json!({"error": "the body is not valid gzip (Content-Encoding): invalid gzip header",
                   "code": "bad_request"})
        )
    );
    // 64 MiB and one byte of spaces, a few kilobytes compressed.
    let spaces = vec![b' '; 64 * 1024 * 1024 + 1];
    assert_eq!(
        customer("zstd", zstd::encode_all(&spaces[..], 1).unwrap()),
        (
            413,
            json!({"error": "the body is over the limit of 67108864 bytes once decompressed (zstd)",
                   "code": "payload_too_large"})
        )
    );
    assert_eq!(server.get("/data/customers/C").0, 404);
}

/// A GET with `Accept-Encoding: accept` (none when empty), over a plain
/// TCP connection so that no HTTP client decodes anything: the status, the
/// answer's `Content-Encoding` and its body as it came (chunks joined).
fn get_encoded(server: &Server, path: &str, accept: &str) -> (u16, Option<String>, Vec<u8>) {
    use std::io::{Read, Write};
    let address = server.base.trim_start_matches("http://");
    let mut stream = std::net::TcpStream::connect(address).unwrap();
    let accept = if accept.is_empty() {
        String::new()
    } else {
        format!("Accept-Encoding: {accept}\r\n")
    };
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: {address}\r\nAuthorization: Bearer {OWNER_KEY}\r\n{accept}Connection: close\r\n\r\n"
    )
    .unwrap();
    let mut answer = Vec::new();
    stream.read_to_end(&mut answer).unwrap();
    let end = answer.windows(4).position(|w| w == b"\r\n\r\n").unwrap();
    let head = String::from_utf8(answer[..end].to_vec()).unwrap();
    let header = |name: &str| {
        head.lines()
            .filter_map(|line| line.split_once(':'))
            .find(|(key, _)| key.trim().eq_ignore_ascii_case(name))
            .map(|(_, value)| value.trim().to_string())
    };
    let status = head.split(' ').nth(1).unwrap().parse().unwrap();
    let mut body = answer[end + 4..].to_vec();
    if header("Transfer-Encoding").as_deref() == Some("chunked") {
        body = joined_chunks(&body);
    }
    (status, header("Content-Encoding"), body)
}

/// The data of a chunked body.
fn joined_chunks(mut chunked: &[u8]) -> Vec<u8> {
    let mut data = Vec::new();
    loop {
        let line_end = chunked.windows(2).position(|w| w == b"\r\n").unwrap();
        let size_text = std::str::from_utf8(&chunked[..line_end]).unwrap();
        let size = usize::from_str_radix(size_text.split(';').next().unwrap().trim(), 16).unwrap();
        if size == 0 {
            return data;
        }
        let start = line_end + 2;
        data.extend_from_slice(&chunked[start..start + size]);
        chunked = &chunked[start + size + 2..];
    }
}

/// Answers go compressed to a client that accepts gzip or zstd, and plain
/// to one that does not.
#[test]
fn answers_are_compressed_for_clients_that_accept_it() {
    let server = start();
    server.post(
        "/v1/data-sources/ds1/customers",
        json!([{"id": "A", "name": "Acme"}]),
    );
    server.post("/v1/data-sources/ds1/invoices", json!(invoices()));
    let path = "/reports/mrr?date=20240101-20240229&as_of=2024-02-15";
    let (status, plain_encoding, plain) = get_encoded(&server, path, "");
    assert_eq!((status, plain_encoding), (200, None));
    assert_eq!(
        serde_json::from_slice::<Value>(&plain).unwrap(),
        server.get(path).1
    );
    let (status, encoding, gzipped) = get_encoded(&server, path, "gzip");
    assert_eq!((status, encoding.as_deref()), (200, Some("gzip")));
    let mut unzipped = Vec::new();
    std::io::Read::read_to_end(
        &mut flate2::read::GzDecoder::new(&gzipped[..]),
        &mut unzipped,
    )
    .unwrap();
    assert_eq!(unzipped, plain);
    let (status, encoding, zstd_bytes) = get_encoded(&server, path, "zstd");
    assert_eq!((status, encoding.as_deref()), (200, Some("zstd")));
    assert_eq!(zstd::decode_all(&zstd_bytes[..]).unwrap(), plain);
    // A coding the service does not write: the answer is plain.
    let (status, encoding, bytes) = get_encoded(&server, path, "br");
    assert_eq!((status, encoding, bytes), (200, None, plain));
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

/// The record batches of the Arrow stream `GET path` answers with
/// `headers`, which must be a 200 of the Arrow stream type.
fn arrow_answer(server: &Server, path: &str, headers: &[(&str, &str)]) -> Vec<RecordBatch> {
    let (status, content_type, body) = send_for_bytes(server, "GET", path, headers, Vec::new());
    assert_eq!(
        (status, content_type.as_str()),
        (200, ARROW_STREAM),
        "{path}"
    );
    submetrics::columnar::batches_from_ipc(&body, u64::MAX).unwrap()
}

/// A server holding customers A and B and the accepted [`invoices`].
fn with_invoices() -> Server {
    let server = start();
    server.post(
        "/v1/data-sources/ds1/customers",
        json!([{"id": "A", "name": "Acme"}, {"id": "B", "name": "Beta"}]),
    );
    server.post("/v1/data-sources/ds1/invoices", json!(invoices()));
    server
}

#[test]
fn reports_answer_csv() {
    let server = with_invoices();
    let path = "/reports/mrr?date=20240101-20240229&as_of=2024-02-15";
    let (_, json) = server.get(path);
    let periods = json["result"].as_array().unwrap();
    let names: Vec<&str> = periods[0]
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    for (path, headers) in [
        (format!("{path}&format=csv"), &[][..]),
        (path.to_string(), &[("Accept", "text/csv")][..]),
    ] {
        let (status, csv) = send(&server, "GET", &path, headers, Vec::new());
        assert_eq!(status, 200, "{csv}");
        let lines: Vec<&str> = csv.split("\r\n").collect();
        assert_eq!(lines[0], names.join(","));
        assert_eq!(lines.len(), 4, "{csv}");
        let column = |line: &str, name: &str| {
            let at = names.iter().position(|n| *n == name).unwrap();
            line.split(',').nth(at).unwrap().to_string()
        };
        assert_eq!(
            (column(lines[1], "date"), column(lines[1], "total_mrr")),
            ("2024-01-01".to_string(), "5000".to_string())
        );
        // A's month ran out (with the grace days) before as_of.
        assert_eq!(column(lines[2], "total_mrr"), "2000");
        assert_eq!(column(lines[2], "total_customers"), "1");
        assert_eq!(lines[3], "");
        for (line, period) in lines[1..3].iter().zip(periods) {
            for name in &names {
                let cell = match &period[*name] {
                    Value::Null => String::new(),
                    Value::String(text) => text.clone(),
                    other => other.to_string(),
                };
                assert_eq!(column(line, name), cell, "{name}");
            }
        }
    }
    let (status, body) = send(
        &server,
        "GET",
        &format!("{path}&format=xml"),
        &[],
        Vec::new(),
    );
    assert_eq!(status, 400);
    assert!(
        body.contains("parameter `format`: `xml` is not one of json, csv, arrow"),
        "{body}"
    );
    let (status, json_again) = send(
        &server,
        "GET",
        &format!("{path}&format=json"),
        &[("Accept", "application/json")],
        Vec::new(),
    );
    assert_eq!(status, 200);
    assert_eq!(serde_json::from_str::<Value>(&json_again).unwrap(), json);
}

/// A report's format follows the qualities of the `Accept` header: the
/// highest wins, `q=0` refuses a type, and a header refusing every type a
/// report answers in is a 406; `format=` overrides the header.
#[test]
fn reports_answer_the_format_the_accept_header_prefers() {
    let server = with_invoices();
    let path = "/reports/mrr?date=20240101-20240229&as_of=2024-02-15";
    for (accept, answered) in [
        ("text/csv;q=0.5, application/json", "application/json"),
        (
            "application/json;q=0.5, text/csv",
            "text/csv; charset=utf-8",
        ),
        (
            "*/*;q=0.1, application/vnd.apache.arrow.stream;q=0.2",
            ARROW_STREAM,
        ),
        ("text/*", "text/csv; charset=utf-8"),
        ("text/csv;q=0, */*", "application/json"),
        ("*; q=.2", "application/json"),
    ] {
        let (status, content_type, _) =
            send_for_bytes(&server, "GET", path, &[("Accept", accept)], Vec::new());
        assert_eq!((status, content_type.as_str()), (200, answered), "{accept}");
    }
    let (status, body) = send(
        &server,
        "GET",
        path,
        &[("Accept", "application/json;q=0")],
        Vec::new(),
    );
    assert_eq!(status, 406, "{body}");
    assert!(
        body.contains("none of the types this answers in: application/json, text/csv, \
                       application/vnd.apache.arrow.stream (or ask with `format=`: json, csv, arrow)"),
        "{body}"
    );
    let (status, content_type, _) = send_for_bytes(
        &server,
        "GET",
        &format!("{path}&format=csv"),
        &[("Accept", "application/json;q=0")],
        Vec::new(),
    );
    assert_eq!(
        (status, content_type.as_str()),
        (200, "text/csv; charset=utf-8")
    );
    let (status, body) = send(
        &server,
        "GET",
        path,
        &[("Accept", "text/csv;q=2")],
        Vec::new(),
    );
    assert_eq!(status, 400, "{body}");
    assert!(
        body.contains("header `Accept`: `q=2` (in `text/csv;q=2`) is not a quality from 0 to 1"),
        "{body}"
    );
}

#[test]
fn reports_answer_arrow_streams_typed_by_their_schema() {
    let server = with_invoices();
    for (report, query, rows) in [
        ("mrr", "date=20240101-20240229", 2),
        ("invoices-detail", "limit=10", 2),
    ] {
        let path = format!("/reports/{report}?{query}&as_of=2024-02-15");
        let (_, json) = server.get(&path);
        let table = submetrics::ReportTable::from_result(report, json).unwrap();
        let expected = submetrics::columnar::batch_of_table(&table).unwrap();
        assert_eq!(expected.num_rows(), rows, "{report}");
        for (path, headers) in [
            (format!("{path}&format=arrow"), &[][..]),
            (path.clone(), &[("Accept", ARROW_STREAM)][..]),
            (
                path.clone(),
                &[("Accept", "application/vnd.apache.arrow.stream, */*")][..],
            ),
        ] {
            let batches = arrow_answer(&server, &path, headers);
            assert_eq!(batches, std::slice::from_ref(&expected), "{path}");
        }
    }
    let path = "/reports/mrr?date=20240101-20240229&as_of=2024-02-15&format=arrow";
    let batch = &arrow_answer(&server, path, &[])[0];
    let column = |name: &str| batch.column_by_name(name).unwrap().clone();
    let dates = column("date");
    let dates: Vec<&str> = dates.as_string::<i32>().iter().flatten().collect();
    assert_eq!(dates, ["2024-01-01", "2024-02-01"]);
    // A's month ran out (with the grace days) before as_of.
    let totals = column("total_mrr");
    assert_eq!(totals.as_primitive::<Int64Type>().values(), &[5000, 2000]);
    // An error is still JSON, whatever the format asked for.
    let (status, content_type, body) = send_for_bytes(
        &server,
        "GET",
        "/reports/nope?format=arrow",
        &[("Accept", ARROW_STREAM)],
        Vec::new(),
    );
    assert_eq!((status, content_type.as_str()), (404, "application/json"));
    let error: Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(error["code"], "unknown_report", "{error}");
}

#[test]
fn movements_answer_arrow_streams_of_the_movement_columns() {
    let server = with_invoices();
    for (query, customers) in [("", vec!["A", "B", "A"]), ("&customer=B", vec!["B"])] {
        let path = format!("/movements?as_of=2024-02-15{query}");
        let (_, json) = server.get(&path);
        let listed = json["result"].as_array().unwrap();
        let listed_ids: Vec<&str> = listed
            .iter()
            .map(|m| m["customer_id"].as_str().unwrap())
            .collect();
        assert_eq!(listed_ids, customers, "{path}");
        for (path, headers) in [
            (format!("{path}&format=arrow"), &[][..]),
            (path.clone(), &[("Accept", ARROW_STREAM)][..]),
        ] {
            let batches = arrow_answer(&server, &path, headers);
            let [batch] = batches.as_slice() else {
                panic!("{path}: {} batches", batches.len())
            };
            assert_eq!(
                batch.schema().as_ref(),
                &submetrics::columnar::movement_schema()
            );
            let texts = |name: &str| -> Vec<String> {
                let column = batch.column_by_name(name).unwrap();
                column
                    .as_string::<i32>()
                    .iter()
                    .map(|t| t.unwrap().to_string())
                    .collect()
            };
            let integers = |name: &str| -> Vec<i64> {
                let column = batch.column_by_name(name).unwrap();
                column.as_primitive::<Int64Type>().values().to_vec()
            };
            let listed_texts = |name: &str| -> Vec<String> {
                listed
                    .iter()
                    .map(|m| m[name].as_str().unwrap().to_string())
                    .collect()
            };
            let listed_integers = |name: &str| -> Vec<i64> {
                listed.iter().map(|m| m[name].as_i64().unwrap()).collect()
            };
            assert_eq!(texts("customer_id"), customers, "{path}");
            for name in ["date", "type", "currency"] {
                assert_eq!(texts(name), listed_texts(name), "{path} {name}");
            }
            for name in ["mrr_change", "customer_count_change", "quantity_change"] {
                assert_eq!(integers(name), listed_integers(name), "{path} {name}");
            }
        }
    }
    let (status, body) = send(&server, "GET", "/movements?format=csv", &[], Vec::new());
    assert_eq!(status, 400);
    assert!(
        body.contains("parameter `format`: `csv` is not one of json, arrow"),
        "{body}"
    );
    // CSV is no format of the movements: an Accept header asking for it
    // alone is refused, naming the types they answer in.
    let (status, body) = send(
        &server,
        "GET",
        "/movements?as_of=2024-02-15",
        &[("Accept", "text/csv")],
        Vec::new(),
    );
    assert_eq!(status, 406);
    assert_eq!(
        serde_json::from_str::<Value>(&body).unwrap(),
        json!({"error": "header `Accept` accepts none of the types this answers in: \
                         application/json, application/vnd.apache.arrow.stream \
                         (or ask with `format=`: json, arrow)",
               "code": "not_acceptable", "field": "Accept"})
    );
    // The first type named that the movements offer is the one answered.
    let (status, content_type, _) = send_for_bytes(
        &server,
        "GET",
        "/movements?as_of=2024-02-15",
        &[(
            "Accept",
            "text/csv, application/vnd.apache.arrow.stream;q=0.9",
        )],
        Vec::new(),
    );
    assert_eq!((status, content_type.as_str()), (200, ARROW_STREAM));
}
