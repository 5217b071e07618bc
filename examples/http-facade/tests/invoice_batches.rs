//! Batch bodies of the data API over real HTTP: batch objects and their
//! other fields, invoice batches answered per record (large ones read on
//! every core), imported under a data source or not, and batches that are
//! not JSON as a whole.

mod common;

use common::{Server, seed};
use serde_json::{Value, json};

#[test]
fn a_batch_key_with_the_wrong_type_is_400_naming_it() {
    let server = Server::start();
    for (path, body, field) in [
        ("/data/customers", json!({"customers": "x"}), "customers"),
        ("/data/invoices", json!({"invoices": 5}), "invoices"),
        ("/data/plans", json!({"plans": {"id": "p"}}), "plans"),
        (
            "/data/data-sources",
            json!({"data_sources": null}),
            "data_sources",
        ),
        ("/data/fx-rates", json!({"fx_rates": "1.1"}), "fx_rates"),
    ] {
        let (status, answer) = server.post(path, body);
        assert_eq!(status, 400, "{path}: {answer}");
        assert_eq!(answer["code"], "bad_request");
        assert_eq!(
            answer["error"],
            json!(format!("field `{field}` must be an array of records")),
            "{path}"
        );
    }
    assert_eq!(server.get("/data/customers").1["result"]["count"], 0);
}

/// A batch object holds its collection alone: records of another
/// collection, or record fields around the batch, are refused by name with
/// nothing stored, not dropped.
#[test]
fn a_batch_object_with_another_field_is_400_naming_it() {
    let server = Server::start();
    seed(&server);
    let invoice = json!({"id": "mixed", "customer_id": "A", "type": "subscription", "plan_id": "m",
                         "invoice_date": "2024-01-01", "amount": 3000, "currency": "USD"});
    for (path, body, other, key) in [
        (
            "/data/customers",
            json!({"customers": [{"id": "mix1", "name": "Y"}], "invoices": [invoice]}),
            "invoices",
            "customers",
        ),
        (
            "/data/invoices",
            json!({"invoices": [], "customers": [{"id": "mix3", "name": "Z"}]}),
            "customers",
            "invoices",
        ),
        (
            "/data/customers",
            json!({"id": "mix4", "name": "Y", "customers": [{"id": "mix5", "name": "Z"}]}),
            "id",
            "customers",
        ),
    ] {
        let (status, answer) = server.post(path, body);
        assert_eq!(
            (status, answer["error"].as_str()),
            (
                400,
                Some(
                    format!(
                        "field `{other}`: a batch object holds `{key}` alone; \
                         send other records in their own request"
                    )
                    .as_str()
                )
            ),
            "{path}: {answer}"
        );
    }
    for id in ["mix1", "mix3", "mix4", "mix5"] {
        assert_eq!(server.get(&format!("/data/customers/{id}")).0, 404, "{id}");
    }
    assert_eq!(server.get("/data/invoices/mixed").0, 404);
}

/// An invoice batch large enough to be read and stored on every core.
#[test]
fn an_invoice_batch_answers_per_record_and_keeps_what_it_accepted() {
    let server = Server::start();
    seed(&server);
    let mut batch: Vec<Value> = (0..600)
        .map(|i| {
            json!({"id": format!("v{i:03}"), "customer_id": if i % 2 == 0 { "A" } else { "B" },
                   "type": "subscription", "plan_id": "m", "invoice_date": "2024-02-01",
                   "amount": 3000 + i, "currency": "USD"})
        })
        .collect();
    // The other shape of the interface: external ids, `date`, cents and line items.
    batch.insert(
        100,
        json!({"external_id": "x1", "customer_external_id": "B", "type": "one-time",
               "date": "2024-02-03T10:00:00Z", "amount_in_cents": 500, "currency": "USD",
               "line_items": [{"description": "Setup", "amount_in_cents": 500}]}),
    );
    batch.insert(
        300,
        json!({"id": "bad", "customer_id": "nobody", "type": "subscription", "plan_id": "m",
               "invoice_date": "2024-02-01", "amount": 3000, "currency": "USD"}),
    );
    batch.insert(400, json!(["not", "a", "record"]));
    let (status, answer) = server.post("/data/invoices", json!(batch));
    assert_eq!(status, 200, "{answer}");
    let mut expected: Vec<Value> = (0..600)
        .map(|i| json!({"id": format!("v{i:03}"), "import_status": "inserted"}))
        .collect();
    expected.insert(100, json!({"id": "x1", "import_status": "inserted"}));
    expected.insert(
        300,
        json!({"id": "bad", "import_status": "error", "import_error":
               "invoice bad: field `customer_id`: customer `nobody` does not exist; send the customer first"}),
    );
    expected.insert(
        400,
        json!({"id": "", "import_status": "error", "import_error":
               "invoice ?: field `(record)`: must be a JSON object"}),
    );
    assert_eq!(answer, json!({ "result": expected }));

    let (_, before) = server.get("/data/invoices?limit=10000");
    assert_eq!(
        before["result"]["count"], 603,
        "a1, b1 and the 601 accepted"
    );
    let (_, other) = server.get("/data/invoices/x1");
    assert_eq!(
        (
            &other["customer_id"],
            &other["amount"],
            &other["invoice_date"],
            &other["lines"][0]["description"]
        ),
        (
            &json!("B"),
            &json!(500),
            &json!("2024-02-03T10:00:00Z"),
            &json!("Setup")
        )
    );
    let server = Server::start_in(server.kill());
    assert_eq!(server.get("/data/invoices?limit=10000").1, before);
    assert_eq!(server.get("/data/invoices/x1").1, other);
    assert_eq!(server.get("/data/invoices/bad").0, 404);
}

/// A batch whose array splits but that is not JSON as a whole (a number out
/// of range, a lone surrogate, nesting too deep) is refused whole with the
/// error of parsing it at once; nothing of it is stored.
#[test]
fn an_invoice_batch_that_is_not_json_as_a_whole_is_refused_whole() {
    let server = Server::start();
    seed(&server);
    let valid = r#"{"id": "ok", "customer_id": "A", "type": "subscription", "plan_id": "m", "invoice_date": "2024-02-01", "amount": 3000, "currency": "USD"}"#;
    // 127 levels: valid JSON on its own, one level too deep inside the array.
    let deep = format!(
        "{{\"id\": \"deep\", \"x\": {}{}}}",
        "[".repeat(126),
        "]".repeat(126)
    );
    for record in [
        r#"{"id": "big", "amount": 1e400}"#,
        r#"{"id": "s\ud800"}"#,
        &deep,
    ] {
        let body = format!("[{valid}, {record}]");
        let error = serde_json::from_str::<Value>(&body).expect_err("not JSON as a whole");
        let (status, answer) = server.raw(
            "POST",
            "/data/invoices",
            Some(common::OWNER_KEY),
            Some(body.into_bytes()),
        );
        assert_eq!(
            (status, answer),
            (
                400,
                json!({"error": format!("the body is not valid JSON: {error}"), "code": "bad_request"})
            ),
            "{record}"
        );
    }
    assert_eq!(server.get("/data/invoices/ok").0, 404);
    assert_eq!(server.get("/data/invoices").1["result"]["count"], 2);
}

/// An invoice batch that mixes `padding` valid records with records that
/// show every outcome: a data source of its own (`own`), a data source of
/// the wrong type (`typed`), the other input shape (`x1`), a bad field
/// (`bad`), an unknown customer (`orphan`), a record that is not an object
/// and one without an id. 500 records of padding make a body of over
/// 64 KiB, read on every core off the event loop.
fn mixed_invoices(padding: usize) -> Vec<Value> {
    let mut batch: Vec<Value> = (0..padding)
        .map(|i| {
            json!({"id": format!("p{i:03}"), "customer_id": if i % 2 == 0 { "A" } else { "B" },
                   "type": "subscription", "plan_id": "m", "invoice_date": "2024-02-01",
                   "amount": 3000 + i, "currency": "USD"})
        })
        .collect();
    batch.extend([
        json!({"id": "own", "customer_id": "A", "type": "subscription", "plan_id": "m",
               "invoice_date": "2024-02-01", "amount": 4000, "currency": "USD",
               "data_source": "other"}),
        json!({"id": "typed", "customer_id": "B", "type": "subscription", "plan_id": "m",
               "invoice_date": "2024-02-02", "amount": 4100, "currency": "USD",
               "data_source": true}),
        json!({"external_id": "x1", "customer_external_id": "B", "type": "one-time",
               "date": "2024-02-03T10:00:00Z", "amount_in_cents": 500, "currency": "USD",
               "line_items": [{"description": "Setup", "amount_in_cents": 500}]}),
        json!({"id": "bad", "customer_id": "A", "type": "subscription", "plan_id": "m",
               "invoice_date": "2024-02-01", "amount": "lots", "currency": "USD"}),
        json!({"id": "orphan", "customer_id": "nobody", "type": "subscription", "plan_id": "m",
               "invoice_date": "2024-02-01", "amount": 3000, "currency": "USD"}),
        json!(["not", "a", "record"]),
        json!({}),
    ]);
    batch
}

/// The answer to [`mixed_invoices`]: `typed` is stored when the write tags
/// every record with a data source (its own is replaced), else refused.
fn mixed_results(padding: usize, tagged: bool) -> Value {
    let mut results: Vec<Value> = (0..padding)
        .map(|i| json!({"id": format!("p{i:03}"), "import_status": "inserted"}))
        .collect();
    results.extend([
        json!({"id": "own", "import_status": "inserted"}),
        if tagged {
            json!({"id": "typed", "import_status": "inserted"})
        } else {
            json!({"id": "typed", "import_status": "error", "import_error":
                   "invoice typed: field `data_source`: must be a string"})
        },
        json!({"id": "x1", "import_status": "inserted"}),
        json!({"id": "bad", "import_status": "error", "import_error":
               "invoice bad: field `amount`: must be an integer, got \"lots\""}),
        json!({"id": "orphan", "import_status": "error", "import_error":
               "invoice orphan: field `customer_id`: customer `nobody` does not exist; send the customer first"}),
        json!({"id": "", "import_status": "error", "import_error":
               "invoice ?: field `(record)`: must be a JSON object"}),
        json!({"id": "", "import_status": "error", "import_error":
               "invoice ?: field `id`: is required"}),
    ]);
    json!({ "result": results })
}

/// The stored forms of `own` and `x1` with the given data sources.
fn mixed_stored(own_source: Value, x1_source: Value) -> (Value, Value) {
    (
        json!({"id": "own", "customer_id": "A", "type": "subscription",
               "invoice_date": "2024-02-01", "amount": 4000, "currency": "USD", "plan_id": "m",
               "period_start": null, "period_end": null, "subscription_id": null, "quantity": 1,
               "status": "paid", "due_date": null, "payment_date": null, "payment_method": null,
               "description": null, "invoice_number": null, "tax_amount": 0,
               "discount_amount": 0, "lines": [], "transactions": [],
               "refunded_invoice_id": null, "data_source": own_source}),
        json!({"id": "x1", "customer_id": "B", "type": "one-time",
               "invoice_date": "2024-02-03T10:00:00Z", "amount": 500, "currency": "USD",
               "plan_id": null, "period_start": null, "period_end": null,
               "subscription_id": null, "quantity": 1, "status": "paid", "due_date": null,
               "payment_date": null, "payment_method": null, "description": null,
               "invoice_number": null, "tax_amount": 0, "discount_amount": 0,
               "lines": [{"description": "Setup", "amount": 500, "quantity": 1,
                          "period_start": null, "period_end": null}],
               "transactions": [], "refunded_invoice_id": null, "data_source": x1_source}),
    )
}

/// Checks what [`mixed_invoices`] left stored, also after a restart; returns
/// the restarted server.
fn assert_mixed_stored(server: Server, padding: usize, own: &Value, x1: &Value) -> Server {
    let check = |server: &Server| {
        assert_eq!(server.get("/data/invoices/own"), (200, own.clone()));
        assert_eq!(server.get("/data/invoices/x1"), (200, x1.clone()));
        for refused in ["bad", "orphan"] {
            assert_eq!(server.get(&format!("/data/invoices/{refused}")).0, 404);
        }
        let (_, list) = server.get("/data/invoices?limit=10000");
        list
    };
    let before = check(&server);
    // a1 and b1 of the seed, the padding, own, x1 and maybe typed.
    let count = before["result"]["count"].as_u64().unwrap_or(0) as usize;
    assert!(count == padding + 4 || count == padding + 5, "{count}");
    let server = Server::start_in(server.kill());
    assert_eq!(check(&server), before);
    server
}

/// Invoices imported under a data source, as an array or as a batch object
/// `{"invoices": [...]}`, answer per record and are stored tagged with the
/// data source, which replaces a record's own.
#[test]
fn a_data_source_import_of_invoices_answers_per_record_in_both_shapes() {
    for padding in [0, 500] {
        let batch = mixed_invoices(padding);
        for body in [json!(batch), json!({ "invoices": batch })] {
            let server = Server::start();
            seed(&server);
            server.post("/data/data-sources", json!({"id": "src", "name": "Source"}));
            let (status, answer) = server.post("/v1/data-sources/src/invoices", body);
            assert_eq!((status, answer), (200, mixed_results(padding, true)));
            let (own, x1) = mixed_stored(json!("src"), json!("src"));
            let server = assert_mixed_stored(server, padding, &own, &x1);
            let (_, typed) = server.get("/data/invoices/typed");
            assert_eq!(typed["data_source"], "src");
            assert_eq!(
                server.get("/data/invoices?limit=10000").1["result"]["count"],
                padding + 5
            );
        }
    }
}

/// A batch object `{"invoices": [...]}` posted to `/data/invoices` answers
/// per record exactly as the same records in an array do, and stores the
/// same; records keep their own data source.
#[test]
fn an_invoice_batch_object_answers_per_record_as_an_array_does() {
    for padding in [0, 500] {
        let batch = mixed_invoices(padding);
        let mut stored = Vec::new();
        for body in [json!(batch), json!({ "invoices": batch })] {
            let server = Server::start();
            seed(&server);
            let (status, answer) = server.post("/data/invoices", body);
            assert_eq!((status, answer), (200, mixed_results(padding, false)));
            let (own, x1) = mixed_stored(json!("other"), Value::Null);
            let server = assert_mixed_stored(server, padding, &own, &x1);
            assert_eq!(server.get("/data/invoices/typed").0, 404);
            stored.push(server.get("/data/invoices?limit=10000").1);
        }
        assert_eq!(stored[0], stored[1]);
    }
}

/// Batch objects the split leaves alone answer as parsed whole: another
/// field is refused by name, a second `invoices` key refuses the body (which
/// of the two lists was meant is unknown), and a record nested too deep for
/// the whole body refuses it.
#[test]
fn invoice_batch_objects_with_more_fields_answer_as_parsed_whole() {
    let server = Server::start();
    seed(&server);
    server.post("/data/data-sources", json!({"id": "src", "name": "Source"}));
    let record = |id: &str| {
        format!(
            r#"{{"id": "{id}", "customer_id": "A", "type": "subscription", "plan_id": "m", "invoice_date": "2024-02-01", "amount": 3000, "currency": "USD"}}"#
        )
    };
    for path in ["/data/invoices", "/v1/data-sources/src/invoices"] {
        let post = |body: String| {
            server.raw(
                "POST",
                path,
                Some(common::OWNER_KEY),
                Some(body.into_bytes()),
            )
        };
        assert_eq!(
            post(format!(
                r#"{{"note": "x", "invoices": [{}]}}"#,
                record("n1")
            )),
            (
                400,
                json!({"error": "field `note`: a batch object holds `invoices` alone; \
                                 send other records in their own request",
                       "code": "bad_request", "field": "note"})
            )
        );
        assert_eq!(
            post(format!(
                r#"{{"invoices": [{}], "invoices": [{}]}}"#,
                record("d1"),
                record("d2")
            )),
            (
                400,
                json!({"error": "the body is not valid JSON: the key `invoices` is given twice in one object; give it once at line 1 column 164",
                       "code": "bad_request"})
            )
        );
        assert_eq!(server.get("/data/invoices/d2").0, 404);
        // A record nested `levels` deep.
        let nested = |levels: usize| {
            format!(
                "{{\"id\": \"deep\", \"x\": {}{}}}",
                "[".repeat(levels - 1),
                "]".repeat(levels - 1)
            )
        };
        // 126 levels: valid JSON on its own, one level too deep inside the
        // batch object's array.
        for body in [
            format!(r#"{{"invoices": [{}], "note": 1e400}}"#, record("big")),
            format!(r#"{{"invoices": [{}, {}]}}"#, record("big"), nested(126)),
        ] {
            let error = serde_json::from_str::<Value>(&body).expect_err("not JSON as a whole");
            assert_eq!(
                post(body),
                (
                    400,
                    json!({"error": format!("the body is not valid JSON: {error}"), "code": "bad_request"})
                )
            );
        }
        // One level less is read per record.
        assert_eq!(
            post(format!(r#"{{"invoices": [{}]}}"#, nested(125))),
            (
                200,
                json!({"result": [{"id": "deep", "import_status": "error", "import_error":
                                   "invoice deep: field `customer_id`: is required"}]})
            )
        );
    }
    for refused in ["d1", "d2", "big"] {
        assert_eq!(server.get(&format!("/data/invoices/{refused}")).0, 404);
    }
}

/// A record's own data source, under either of its names, is replaced by
/// the one imported into, read from text or as a value alike.
#[test]
fn an_import_replaces_a_records_own_data_source_under_either_name() {
    let server = Server::start();
    seed(&server);
    server.post("/data/data-sources", json!({"id": "src", "name": "Source"}));
    server.post(
        "/data/data-sources",
        json!({"id": "other", "name": "Other"}),
    );
    let invoice = |id: &str, field: &str| {
        json!({"id": id, "customer_id": "A", "type": "one-time", "invoice_date": "2024-02-01",
               "amount": 100, "currency": "USD", field: "other"})
    };
    let (status, answer) = server.post(
        "/v1/data-sources/src/invoices",
        json!([
            invoice("own", "data_source"),
            invoice("alias", "data_source_id")
        ]),
    );
    assert_eq!(
        (status, answer),
        (
            200,
            json!({"result": [{"id": "own", "import_status": "inserted"},
                              {"id": "alias", "import_status": "inserted"}]})
        )
    );
    for id in ["own", "alias"] {
        assert_eq!(
            server.get(&format!("/data/invoices/{id}")).1["data_source"],
            "src",
            "{id}"
        );
    }
}
