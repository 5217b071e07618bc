//! CSV bodies on the import endpoints: the columns `submetrics local`
//! reads, each row a record tagged with the data source.

mod common;

use common::{OWNER_KEY, Server};
use serde_json::{Value, json};

fn post_csv(server: &Server, path: &str, csv: &str) -> (u16, Value) {
    post_typed(server, path, "text/csv; charset=utf-8", csv)
}

fn post_typed(server: &Server, path: &str, content_type: &str, body: &str) -> (u16, Value) {
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .build()
        .into();
    let mut response = agent
        .post(format!("{}{path}", server.base))
        .header("Authorization", &format!("Bearer {OWNER_KEY}"))
        .header("Content-Type", content_type)
        .send(body.as_bytes())
        .unwrap();
    let status = response.status().as_u16();
    let text = response.body_mut().read_to_string().unwrap();
    (status, serde_json::from_str(&text).unwrap_or(Value::Null))
}

#[test]
fn csv_bodies_import_customers_plans_and_invoices() {
    let server = Server::start();
    server.post(
        "/data/data-sources",
        json!({"id": "sheet", "name": "Spreadsheet"}),
    );
    let (status, body) = post_csv(
        &server,
        "/v1/data-sources/sheet/plans",
        "id,name,interval,interval_count,currency\nm,Monthly,month,1,usd\n",
    );
    assert_eq!(
        (status, body["result"][0]["import_status"].clone()),
        (200, json!("inserted")),
        "{body}"
    );
    let (status, _) = post_csv(
        &server,
        "/v1/data-sources/sheet/customers",
        "id,name,country,custom_variables.segment\n007,\"Acme, Inc.\",de,smb\n",
    );
    assert_eq!(status, 200);
    let (status, body) = post_csv(
        &server,
        "/v1/data-sources/sheet/invoices",
        "id,customer_id,type,plan_id,invoice_date,amount,currency\n\
         i1,007,subscription,m,2024-01-01,3000,USD\n\
         i2,nobody,subscription,m,2024-01-01,3000,USD\n",
    );
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["result"][0]["import_status"], "inserted");
    assert!(
        body["result"][1]["import_error"]
            .as_str()
            .unwrap()
            .contains("customer `nobody` does not exist")
    );
    let (_, customer) = server.get("/data/customers/007");
    assert_eq!(customer["name"], "Acme, Inc.");
    assert_eq!(customer["custom_variables"]["segment"], "smb");
    assert_eq!(server.get("/data/invoices/i1").1["data_source"], "sheet");
    assert_eq!(
        server.get("/reports/summary?as_of=2024-01-15").1["summary"]["mrr_current"],
        3000
    );

    let refused = |csv: &str, error: &str| {
        let (status, body) = post_csv(&server, "/v1/data-sources/sheet/customers", csv);
        assert_eq!(
            (status, body["error"].as_str()),
            (400, Some(error)),
            "{csv:?}"
        );
    };
    refused(
        "id,name\nc1,\"open\n",
        "csv line 2: field `(row)`: a quoted field that opens on this line never ends",
    );
    // Blank lines and a cell's line breaks count: the short row is line 6.
    refused(
        "id,name\n\n\nc2,\"two\nlines\"\nc3\n",
        "csv line 6: field `(row)`: 1 fields where the header has 2",
    );
    refused(
        "id;name\nc1;A\n",
        "csv line 1: field `(row)`: the header is one column, \"id;name\": separate fields \
         with commas, not `;`",
    );
    // JSON under the CSV media type is not a header of unknown fields.
    refused(
        "{\"id\":\"CT1\",\"name\":\"ct\"}",
        "csv line 1: field `(row)`: the header is JSON text, not field names: send JSON as \
         JSON (or JSONL), or CSV with a header of field names",
    );
    assert_eq!(
        post_csv(
            &server,
            "/v1/data-sources/nope/customers",
            "id,name\nc1,A\n"
        )
        .0,
        404
    );
}

/// A `Content-Type` parameter the service does not read is refused (415)
/// before anything is stored: another charset, CSV without its header row,
/// a parameter no format has. UTF-8 and `header=present` are read.
#[test]
fn content_type_parameters_the_service_does_not_read_are_refused() {
    let server = Server::start();
    server.post(
        "/data/data-sources",
        json!({"id": "sheet", "name": "Sheet"}),
    );
    let path = "/v1/data-sources/sheet/customers";
    let csv = "id,name\nc1,Caf\u{e9}\n";
    for (content_type, error) in [
        (
            "text/csv; charset=latin1",
            "the body's charset latin1 is not read; send UTF-8",
        ),
        (
            "text/csv; header=absent",
            "a CSV body with header=absent is not read; send a header row naming the columns",
        ),
        (
            "application/x-ndjson; version=2",
            "the application/x-ndjson parameter version is not read",
        ),
        (
            "application/json; header=present",
            "the application/json parameter header is not read",
        ),
    ] {
        let (status, body) = post_typed(&server, path, content_type, csv);
        assert_eq!(status, 415, "{content_type}");
        assert_eq!(
            body,
            json!({"error": error, "code": "unsupported_media_type", "field": "Content-Type"}),
            "{content_type}"
        );
    }
    assert_eq!(server.get("/data/customers").1["result"]["count"], 0);
    let (status, body) = post_typed(
        &server,
        path,
        "text/csv; charset=\"UTF-8\"; header=present",
        csv,
    );
    assert_eq!(status, 200, "{body}");
    let (status, body) = post_typed(
        &server,
        path,
        "application/json; charset=utf-8",
        r#"[{"id": "c2", "name": "Json"}]"#,
    );
    assert_eq!(status, 200, "{body}");
    assert_eq!(server.get("/data/customers/c1").1["name"], "Caf\u{e9}");
    assert_eq!(server.get("/data/customers").1["result"]["count"], 2);
}

/// A UTF-8 byte order mark, which Windows tools and spreadsheets write at
/// the start of a text, is passed over in every text body: it was a JSON
/// syntax error, and in CSV it made the first column `\u{feff}id`.
#[test]
fn a_byte_order_mark_at_the_start_of_a_text_body_is_passed_over() {
    let server = Server::start();
    server.post(
        "/data/data-sources",
        json!({"id": "sheet", "name": "Sheet"}),
    );
    let import = "/v1/data-sources/sheet/customers";
    for (path, content_type, body, created) in [
        (import, "text/csv", "\u{feff}id,name\nc1,Csv\n", 200),
        (
            import,
            "application/x-ndjson",
            "\u{feff}{\"id\": \"c2\", \"name\": \"Lines\"}\n",
            200,
        ),
        (
            import,
            "application/json",
            "\u{feff}[{\"id\": \"c3\", \"name\": \"Json\"}]",
            200,
        ),
        (
            "/v1/data/customers",
            "application/json",
            "\u{feff}{\"id\": \"c4\", \"name\": \"Data\"}",
            201,
        ),
    ] {
        let (status, answer) = post_typed(&server, path, content_type, body);
        assert_eq!(status, created, "{content_type}: {answer}");
    }
    let names: Vec<Value> = ["c1", "c2", "c3", "c4"]
        .iter()
        .map(|id| server.get(&format!("/data/customers/{id}")).1["name"].clone())
        .collect();
    assert_eq!(
        names,
        [json!("Csv"), json!("Lines"), json!("Json"), json!("Data")]
    );
}
