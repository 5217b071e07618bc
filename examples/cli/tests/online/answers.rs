//! What the client does with the server's answers: errors and their exit
//! code, large and compressed bodies.

use crate::server::start;
use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Write};
use std::process::Command;

#[test]
fn errors_exit_1_on_stderr_with_the_server_status() {
    let server = start();
    let out = server.run(&["customers", "get", "nobody"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty());
    assert_eq!(
        String::from_utf8_lossy(&out.stderr).trim(),
        "error: server answered 404: customer nobody not found"
    );
    let bad = server.run(&["reports", "mrr", "--interval", "hour"]);
    assert!(
        String::from_utf8_lossy(&bad.stderr).contains("server answered 400: parameter `interval`")
    );
    let body = server.run(&["data", "plans", "create", "--body", "{not json"]);
    assert!(String::from_utf8_lossy(&body.stderr).contains("the body is not valid JSON"));
    let unreachable = server
        .command()
        .args(["--api-url", "http://127.0.0.1:9", "account"])
        .output()
        .expect("run");
    assert_eq!(unreachable.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&unreachable.stderr).contains("cannot reach http://127.0.0.1:9")
    );
}

/// A stand-in for the service that answers one request with `body` (a
/// JSON text), gzip-compressed when the request accepts gzip; returns its
/// address and, once answered, the request's head.
fn answer_once(body: Vec<u8>) -> (String, std::thread::JoinHandle<String>) {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let address = format!("http://{}", listener.local_addr().unwrap());
    let handle = std::thread::spawn(move || {
        let (stream, _) = listener.accept().unwrap();
        let mut reader = BufReader::new(stream.try_clone().unwrap());
        let mut head = String::new();
        while reader.read_line(&mut head).unwrap() > 2 && !head.ends_with("\r\n\r\n") {}
        let gzip = head.to_ascii_lowercase().contains("accept-encoding: gzip");
        let (body, encoding) = if gzip {
            let mut encoder =
                flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
            encoder.write_all(&body).unwrap();
            (encoder.finish().unwrap(), "Content-Encoding: gzip\r\n")
        } else {
            (body, "")
        };
        let mut stream = stream;
        write!(
            stream,
            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n{encoding}Content-Length: {}\r\nConnection: close\r\n\r\n",
            body.len()
        )
        .unwrap();
        stream.write_all(&body).unwrap();
        head
    });
    (address, handle)
}

#[test]
fn a_large_answer_is_read_whole_and_travels_compressed() {
    // 20 MB of JSON: twice what an HTTP client reads by default.
    let rows: Vec<Value> = (0..200_000)
        .map(|i| json!({"customer_id": format!("cus_{i:08}"), "mrr_change": i, "type": "new"}))
        .collect();
    let answer = json!({"result": rows});
    let text = answer.to_string();
    assert!(text.len() > 12_000_000, "{}", text.len());
    let (address, served) = answer_once(text.into_bytes());
    let out = Command::new(env!("CARGO_BIN_EXE_submetrics"))
        .args(["--api-url", &address, "--api-key", "k", "--format", "json"])
        .args(["api", "GET", "/reports/movement-table"])
        .output()
        .expect("run");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let printed: Value = serde_json::from_slice(&out.stdout).expect("JSON on stdout");
    assert_eq!(printed, answer);
    let head = served.join().unwrap().to_ascii_lowercase();
    assert!(head.contains("accept-encoding: gzip"), "{head}");
}
