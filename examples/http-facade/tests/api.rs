//! Every endpoint and response shape, over real HTTP.

mod common;

use common::{OWNER_KEY, Server, seed};
use serde_json::{Value, json};

#[test]
fn plans_follow_the_interface_shapes() {
    let server = Server::start();
    let (status, body) = server.post(
        "/data/plans",
        json!([{"id": "m", "name": "Monthly", "billing_freq": "month", "currency": "usd"}, {"id": "bad", "name": "Bad", "currency": "USD"}]),
    );
    assert_eq!(status, 200);
    assert_eq!(
        body["result"][0],
        json!({"id": "m", "import_status": "inserted"})
    );
    assert_eq!(body["result"][1]["import_status"], "error");
    assert_eq!(
        body["result"][1]["import_error"],
        "plan bad: field `billing_freq`: is required (day, week, month or year)"
    );
    let (_, list) = server.get("/data/plans");
    assert_eq!(list["result"]["count"], 1);
    assert_eq!(list["result"]["list"][0]["currency"], "USD");
    let (status, body) = server.put("/data/plans/m", json!({"name": "Monthly Basic"}));
    assert_eq!(
        (status, body),
        (200, json!({"result": "ok", "updated": "m"}))
    );
    assert_eq!(server.get("/data/plans/m").1["name"], "Monthly Basic");
    let (status, body) = server.put("/data/plans/", json!({"name": "x"}));
    assert_eq!(
        (status, body["error"].clone()),
        (400, json!("Missing external_id"))
    );
    let (status, body) = server.delete("/data/plans/m");
    assert_eq!(
        (status, body),
        (200, json!({"result": "ok", "deleted": "m"}))
    );
    assert_eq!(server.get("/data/plans/m").0, 404);
}

#[test]
fn customers_are_created_merged_and_deleted_with_their_invoices() {
    let server = Server::start();
    seed(&server);
    let (status, body) = server.post(
        "/data/customers",
        json!({"id": "C", "name": "Gamma", "custom_variables": {"industry": "SaaS"}}),
    );
    assert_eq!(status, 201);
    assert_eq!(body["result"]["count"], 1);
    assert_eq!(body["result"]["list"][0]["id"], "C");
    let (status, body) = server.put(
        "/data/customers/C",
        json!({"email": "g@gamma.test", "custom_variables": {"size": "small"}}),
    );
    assert_eq!(status, 200);
    assert_eq!(body["success"], true);
    assert_eq!(
        body["result"]["custom_variables"],
        json!({"industry": "SaaS", "size": "small"})
    );
    assert_eq!(body["result"]["email"], "g@gamma.test");
    let (_, a) = server.get("/data/customers/A");
    assert_eq!(a["id"], "A");
    assert!(a["current_mrr"].is_object());
    let (status, body) = server.delete("/data/customers/A");
    assert_eq!((status, body), (200, json!({"success": true, "id": "A"})));
    let (_, invoices) = server.get("/data/invoices");
    assert_eq!(invoices["result"]["count"], 1, "A's invoice went with it");
    // A single invalid customer is a 400 naming the field.
    let (status, body) = server.post("/data/customers", json!({"id": "X"}));
    assert_eq!(status, 400);
    assert_eq!(body["code"], "invalid_record");
    assert_eq!(body["field"], "name");
}

#[test]
fn plan_groups_get_service_ids_and_keep_plans_when_deleted() {
    let server = Server::start();
    seed(&server);
    let (status, body) = server.post(
        "/data/plan-groups",
        json!({"name": "Core", "plans": [{"id": "m"}, {"id": "m2"}]}),
    );
    assert_eq!(status, 200);
    assert_eq!(body["success"], true);
    let id = body["id"].as_str().expect("id").to_string();
    let (_, group) = server.get(&format!("/data/plan-groups/{id}"));
    assert_eq!(group["plans"][1]["name"], "Monthly Plus");
    let (status, _) = server.put(
        &format!("/data/plan-groups/{id}"),
        json!({"name": "Core only", "plans": [{"id": "m"}]}),
    );
    assert_eq!(status, 200);
    assert_eq!(
        server.get(&format!("/data/plan-groups/{id}")).1["plans"]
            .as_array()
            .map(Vec::len),
        Some(1)
    );
    let (status, body) = server.post(
        "/data/plan-groups",
        json!({"name": "Broken", "plans": [{"id": "nope"}]}),
    );
    assert_eq!(status, 400);
    assert!(body["error"].as_str().unwrap_or("").contains("nope"));
    assert_eq!(server.delete(&format!("/data/plan-groups/{id}")).0, 200);
    assert_eq!(server.get("/data/plans").1["result"]["count"], 2);
}

#[test]
fn a_resent_invoice_id_replaces_the_invoice() {
    let server = Server::start();
    seed(&server);
    let invoice = json!({"id": "a1", "customer_id": "A", "type": "subscription", "invoice_date": "2024-01-01", "amount": 4000, "currency": "USD", "plan_id": "m"});
    server.post("/data/invoices", invoice.clone());
    server.post("/data/invoices", invoice);
    let (_, invoices) = server.get("/data/invoices?customer=A");
    assert_eq!(invoices["result"]["count"], 1);
    assert_eq!(invoices["result"]["list"][0]["amount"], 4000);
    let (_, summary) = server.get("/reports/summary?as_of=2024-01-20");
    assert_eq!(summary["summary"]["mrr_current"], 9000);
}

#[test]
fn imports_tag_records_with_their_data_source() {
    let server = Server::start();
    let (status, _) = server.post(
        "/v1/data-sources/nope/customers",
        json!({"id": "A", "name": "Acme"}),
    );
    assert_eq!(status, 404);
    server.post(
        "/data/data-sources",
        json!({"id": "ds1", "name": "Billing", "type": "api"}),
    );
    server.post(
        "/v1/data-sources/ds1/plans",
        json!({"plans": [{"id": "m", "name": "Monthly", "interval": "month", "currency": "USD"}]}),
    );
    let (status, body) = server.post(
        "/v1/data-sources/ds1/customers",
        json!({"id": "A", "name": "Acme"}),
    );
    assert_eq!(status, 200);
    assert_eq!(body["result"][0]["import_status"], "inserted");
    let (_, body) = server.post(
        "/v1/data-sources/ds1/invoices",
        json!({"invoices": [{"id": "i1", "customer_id": "A", "type": "subscription", "invoice_date": "2024-01-01", "amount": 3000, "currency": "USD", "plan_id": "m"}]}),
    );
    assert_eq!(body["result"][0]["import_status"], "inserted");
    assert_eq!(server.get("/data/customers/A").1["data_source"], "ds1");
    assert_eq!(server.get("/data/plans?source=ds1").1["result"]["count"], 1);
    assert_eq!(
        server.get("/data/plans?source=other").1["result"]["count"],
        0
    );
    let (_, account) = server.get("/account");
    assert_eq!(
        account["data_sources"],
        json!([{"id": "ds1", "name": "Billing", "type": "api"}])
    );
}

#[test]
fn reports_run_by_name_at_as_of() {
    let server = Server::start();
    seed(&server);
    let (status, body) = server.get("/reports/mrr?date=20240101-20240131&as_of=2024-01-31");
    assert_eq!(status, 200);
    assert_eq!(body["result"][0]["total_mrr"], 8000);
    assert_eq!(body["result"][0]["new"], 8000);
    let (status, body) =
        server.get("/v1/reports/movement-table?date=20240101-20240131&as_of=2024-01-31");
    assert_eq!(status, 200);
    assert_eq!(body["result"]["list"][0]["customer_id"], "B");
    let (status, body) = server.get("/reports/nope");
    assert_eq!(status, 404);
    assert_eq!(body["code"], "unknown_report");
    let (status, body) = server.get("/reports/mrr?interval=hour");
    assert_eq!(status, 400);
    assert_eq!(body["field"], "interval");
    let (status, body) = server.get("/reports/mrr?as_of=yesterday");
    assert_eq!(status, 400);
    assert_eq!(body["field"], "as_of");
}

#[test]
fn analytics_customers_list_detail_and_resync() {
    let server = Server::start();
    seed(&server);
    let (_, list) = server.get("/customers?as_of=2024-01-20");
    assert_eq!(list["result"]["count"], 2);
    assert_eq!(list["result"]["list"][0]["id"], "B");
    assert_eq!(list["result"]["list"][0]["mrr"], 5000);
    let (_, detail) = server.get("/customers/A?as_of=2024-01-20");
    assert_eq!(detail["current_subscriptions"][0]["plan_id"], "m");
    assert_eq!(detail["converted_mrr"], 3000);
    assert_eq!(server.get("/customers/Z").0, 404);
    // The list's filters and paging are read; anything else is refused.
    let (_, list) = server.get("/customers?as_of=2024-01-20&sort=name&order=asc&limit=1&q=a");
    assert_eq!(list["result"]["list"][0]["id"], "A");
    let (status, body) = server.get("/customers?as_of=2024-01-20&sortt=name");
    assert_eq!(
        (status, body["field"].as_str()),
        (400, Some("sortt")),
        "{body}"
    );
    let (status, body) = server.get("/customers/A?as_of=2024-01-20&q=a");
    assert_eq!((status, body["field"].as_str()), (400, Some("q")), "{body}");
    let (status, body) = server.call("POST", "/customers/A/resync", Some(OWNER_KEY), None);
    assert_eq!(status, 200);
    assert!(
        body["message"]
            .as_str()
            .unwrap_or("")
            .starts_with("customer A recalculated from 1 invoice(s)")
    );
}

#[test]
fn account_settings_apply_to_reports() {
    let server = Server::start();
    seed(&server);
    let (status, account) = server.put(
        "/account",
        json!({"name": "Acme Inc", "timezone": "America/New_York", "churn_grace_days": 3}),
    );
    assert_eq!(status, 200);
    assert_eq!(account["name"], "Acme Inc");
    assert_eq!(account["timezone"], "America/New_York");
    assert_eq!(account["churn_grace_days"], 3);
    let (status, body) = server.put("/account", json!({"timezone": "Mars/Olympus"}));
    assert_eq!(status, 400);
    assert_eq!(body["code"], "invalid_setting");
    // Grace 3: at Feb 4 12:00 the Jan 1 invoice (coverage to Feb 1) has lapsed.
    let (_, summary) = server.get("/reports/summary?as_of=2024-02-04T17:00:00Z");
    assert_eq!(summary["summary"]["mrr_current"], 5000);
    let (_, profile) = server.put("/profile", json!({"first_name": "Ada", "locale": "de"}));
    assert_eq!(profile["first_name"], "Ada");
    assert_eq!(server.get("/profile").1["accounts"][0]["role"], "owner");
    assert_eq!(server.put("/profile", json!({"email": "x@y.z"})).0, 400);
    let (_, billing) = server.get("/account/billing");
    assert_eq!(billing["plan"], "scale");
    assert_eq!(billing["status"], "active");
    assert_eq!(billing["billing_cycle"], "monthly");
    assert_eq!(billing["mrr_limit"], 9_007_199_254_740_991_i64);
    assert_eq!(billing["customer_limit"], 9_007_199_254_740_991_i64);
    assert!(billing["current_mrr"].is_i64());
    assert!(billing["current_customers"].is_i64());
    let start = billing["current_period_start"].as_str().unwrap_or("");
    assert!(start.ends_with("-01T00:00:00Z"), "{start}");
    let (_, team) = server.get("/account/team");
    assert_eq!(team["result"]["count"], 1);
    assert_eq!(team["result"]["list"][0]["email"], "");
    assert_eq!(team["result"]["list"][0]["role"], "owner");
}

#[test]
fn notification_settings_merge_only_what_is_sent() {
    let server = Server::start();
    let (status, settings) = server.put(
        "/settings/notifications",
        json!({"email": {"enabled": true}, "slack": {"events": ["churn"]}}),
    );
    assert_eq!(status, 200);
    assert_eq!(settings["email"]["enabled"], true);
    assert_eq!(settings["email"]["frequency"], "weekly");
    assert_eq!(settings["slack"]["events"], json!(["churn"]));
    assert_eq!(server.get("/settings/notifications").1, settings);
    let (status, body) = server.put(
        "/settings/notifications",
        json!({"email": {"enabled": "yes"}}),
    );
    assert_eq!(status, 400);
    assert_eq!(
        body["error"],
        "notification setting `email.enabled` must be a boolean"
    );
    for path in [
        "/settings/payment-platform",
        "/settings/stripe",
        "/settings/crm",
        "/v1/settings/hubspot",
    ] {
        let (status, body) = server.get(path);
        assert_eq!(
            (status, body["connected"].clone()),
            (200, json!(false)),
            "{path}"
        );
    }
}

/// A conversion at an extreme rate is a 400 `out_of_range` naming it (and
/// the report), on the reports and the movements alike, not a 500 or a
/// capped number.
#[test]
fn an_amount_beyond_64_bit_cents_is_a_400_naming_it() {
    let server = Server::start();
    server.post(
        "/data/fx-rates",
        json!([{"date": "2024-01-01", "currency": "XAU", "rate": 1e-17}]),
    );
    server.post(
        "/data/plans",
        json!({"id": "g", "name": "Gold", "interval": "month", "currency": "XAU"}),
    );
    server.post("/data/customers", json!({"id": "G", "name": "Gold"}));
    server.post("/data/invoices", json!({"id": "g1", "customer_id": "G", "type": "subscription", "invoice_date": "2024-01-01", "amount": 3000, "currency": "XAU", "plan_id": "g"}));
    let conversion = "3000 cents of XAU in USD at the rates of 2024-01-01 is outside the range \
                      of 64-bit cents (at most 9223372036854775807 either way)";
    for (path, report) in [
        ("/reports/summary?as_of=2024-01-15", "report `summary`: "),
        ("/reports/mrr?as_of=2024-01-15", "report `mrr`: "),
        ("/movements?as_of=2024-01-15", ""),
    ] {
        let expected = json!({"error": format!("{report}{conversion}"), "code": "out_of_range"});
        assert_eq!(server.get(path), (400, expected), "{path}");
    }
}

/// A report total beyond 64-bit cents (ten customers of 10^18 cents each)
/// is a 400 `out_of_range` naming the report and the figure, not a 500 or
/// a wrapped number; the customers' movements, each inside, are answered.
#[test]
fn a_report_total_beyond_64_bit_cents_is_a_400_naming_it() {
    let server = Server::start();
    server.post(
        "/data/fx-rates",
        json!([{"date": "2024-01-01", "currency": "XAU", "rate": "0.000001"}]),
    );
    server.post(
        "/data/plans",
        json!({"id": "g", "name": "Gold", "interval": "month", "currency": "XAU"}),
    );
    let ids: Vec<String> = (0..10).map(|i| format!("G{i}")).collect();
    let customers: Vec<Value> = ids.iter().map(|id| json!({"id": id, "name": id})).collect();
    let invoices: Vec<Value> = ids
        .iter()
        .map(|id| {
            json!({"id": id, "customer_id": id, "type": "subscription", "invoice_date": "2024-01-01",
                   "amount": 1_000_000_000_000i64, "currency": "XAU", "plan_id": "g"})
        })
        .collect();
    server.post("/data/customers", json!(customers));
    server.post("/data/invoices", json!(invoices));
    let expected = json!({
        "error": "report `summary`: the `mrr_current` in USD is outside the range of 64-bit \
                  cents (at most 9223372036854775807 either way)",
        "code": "out_of_range",
    });
    assert_eq!(
        server.get("/reports/summary?as_of=2024-01-15"),
        (400, expected)
    );
    let (status, movements) = server.get("/movements?as_of=2024-01-15");
    assert_eq!(status, 200);
    assert_eq!(
        movements["result"][0]["mrr_change_base_currency"],
        1_000_000_000_000_000_000i64
    );
}

#[test]
fn fx_rates_convert_reports() {
    let server = Server::start();
    server.post(
        "/data/plans",
        json!({"id": "e", "name": "Euro", "interval": "month", "currency": "EUR"}),
    );
    server.post("/data/customers", json!({"id": "E", "name": "Euro"}));
    server.post("/data/invoices", json!({"id": "e1", "customer_id": "E", "type": "subscription", "invoice_date": "2024-01-01", "amount": 2700, "currency": "EUR", "plan_id": "e"}));
    let (status, body) = server.get("/reports/summary?as_of=2024-01-10");
    assert_eq!(status, 400);
    assert_eq!(body["code"], "missing_fx_rate");
    let (status, _) = server.post(
        "/data/fx-rates",
        json!([{"date": "2024-01-01", "currency": "EUR", "rate": 0.9}]),
    );
    assert_eq!(status, 200);
    assert_eq!(
        server.get("/reports/summary?as_of=2024-01-10").1["summary"]["mrr_current"],
        3000
    );
}

#[test]
fn openapi_lists_every_route_and_matches_the_committed_copy() {
    let server = Server::start();
    let (status, document) = server.call("GET", "/openapi.json", None, None);
    assert_eq!(status, 200);
    let committed = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../docs/openapi.json"
    ))
    .expect("docs/openapi.json exists (regenerate: GET /openapi.json)");
    let committed: serde_json::Value = serde_json::from_str(&committed).expect("valid JSON");
    assert_eq!(
        document, committed,
        "docs/openapi.json is out of date; regenerate it from GET /openapi.json"
    );
    assert_eq!(
        server.call("GET", "/v1/openapi.json", None, None).1,
        document
    );
    // Both directions, per path and method: every documented operation is
    // served (never the 404 of an unknown path, never 405), and every method
    // the document leaves out of a path is a 405, with and without /v1.
    let paths = document["paths"].as_object().expect("paths");
    assert_eq!(paths.len(), 46, "documented paths");
    for (path, operations) in paths {
        let concrete = path
            .replace("{id}", "x")
            .replace("{source}", "x")
            .replace("{delivery_id}", "1")
            .replace("{account}", "x")
            .replace("{name}", "summary")
            .replace("{collection}", "customers")
            .replace("{token}", "x");
        for method in ["get", "post", "put", "delete", "patch"] {
            let documented = operations.get(method).is_some();
            for prefix in ["", "/v1"] {
                let body = (method == "post" || method == "put").then(|| json!({}));
                let (status, answer) = server.call(
                    &method.to_uppercase(),
                    &format!("{prefix}{concrete}"),
                    Some(common::OWNER_KEY),
                    body.as_ref(),
                );
                let unrouted = status == 405
                    || (status == 404
                        && answer["error"]
                            .as_str()
                            .is_some_and(|e| e.starts_with("no endpoint")));
                assert_eq!(
                    !unrouted, documented,
                    "{method} {prefix}{path}: {status} {answer}"
                );
                if documented {
                    let operation = &operations[method];
                    assert!(
                        operation["responses"].get(status.to_string()).is_some(),
                        "{method} {path} answered {status}, which is not documented"
                    );
                }
            }
        }
    }
    for (method, path, status) in [
        ("post", "/data/customers", "201"),
        ("post", "/account/api-keys", "201"),
        ("get", "/data/plans", "200"),
    ] {
        assert!(
            document["paths"][path][method]["responses"]
                .get(status)
                .is_some(),
            "{method} {path} documents {status}"
        );
    }
    let parameters = &document["paths"]["/data/plans"]["get"]["parameters"];
    let names: Vec<&str> = parameters
        .as_array()
        .map(|p| p.iter().filter_map(|x| x["name"].as_str()).collect())
        .unwrap_or_default();
    assert_eq!(names, ["source", "limit", "offset"]);
}
