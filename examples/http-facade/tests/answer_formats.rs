//! Reports and movements answer CSV for `format=csv` and `Accept:
//! text/csv`, and Arrow IPC streams for `format=arrow` and `Accept:
//! application/vnd.apache.arrow.stream`, the `Accept` header weighed by
//! its qualities.

mod common;

use arrow_array::RecordBatch;
use arrow_array::cast::AsArray;
use arrow_array::types::Int64Type;
use common::Server;
use common::formats::{ARROW_STREAM, invoices, send, send_for_bytes, start};
use serde_json::{Value, json};

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
