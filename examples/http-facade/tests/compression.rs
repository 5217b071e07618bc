//! Bodies travel compressed both ways: requests sent with
//! `Content-Encoding: gzip` or `zstd` answer what plain ones answer, and
//! answers go compressed to a client that accepts it.

mod common;

use common::formats::{invoices, send, start};
use common::{OWNER_KEY, Server};
use serde_json::{Value, json};

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
                   "code": "unsupported_media_type", "field": "Content-Encoding"})
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
