//! The data API's less travelled endpoints over real HTTP: plan groups,
//! invoices, data sources, FX rates, plans without an id, paging and the
//! stored state after a restart.

mod common;

use common::{Server, seed};
use serde_json::{Value, json};

fn ids(list: &Value) -> Vec<String> {
    list["result"]["list"]
        .as_array()
        .map(|l| {
            l.iter()
                .map(|x| x["id"].as_str().unwrap_or("").to_string())
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn deleting_a_grouped_plan_keeps_the_stored_group_loadable() {
    let server = Server::start();
    seed(&server);
    let (status, _) = server.post(
        "/data/plans",
        json!({"id": "spare", "name": "Spare", "interval": "month", "currency": "USD"}),
    );
    assert_eq!(status, 200);
    let (status, body) = server.post(
        "/data/plan-groups",
        json!({"name": "With spare", "plans": [{"id": "spare"}, {"id": "m"}]}),
    );
    assert_eq!(status, 200, "{body}");
    let group = body["id"].as_str().expect("id").to_string();
    assert_eq!(
        server.delete("/data/plans/spare"),
        (200, json!({"result": "ok", "deleted": "spare"}))
    );
    let dir = server.kill();
    let server = Server::start_in(dir);
    let (status, stored) = server.get(&format!("/data/plan-groups/{group}"));
    assert_eq!(status, 200);
    assert_eq!(stored["name"], "With spare");
    assert_eq!(
        stored["plans"],
        json!([{"id": "m", "name": "Monthly", "billing_freq": "month",
                "billing_freq_count": 1, "product_name": null, "currency": "USD"}])
    );
    assert_eq!(server.get("/data/plans/spare").0, 404);
    assert_eq!(server.get("/data/plans").1["result"]["count"], 2);
    assert_eq!(server.get("/data/invoices").1["result"]["count"], 2);
}

#[test]
fn a_plan_group_id_cannot_be_chosen_by_the_client() {
    let server = Server::start();
    seed(&server);
    let (_, first) = server.post(
        "/data/plan-groups",
        json!({"name": "First", "plans": [{"id": "m"}]}),
    );
    let first = first["id"].as_str().expect("id").to_string();
    for field in ["id", "external_id"] {
        let (status, body) = server.post(
            "/data/plan-groups",
            json!({field: first, "name": "Intruder", "plans": [{"id": "m2"}]}),
        );
        assert_eq!(status, 200, "{body}");
        assert_ne!(body["id"], json!(first), "{field} is ignored");
    }
    let (_, group) = server.get(&format!("/data/plan-groups/{first}"));
    assert_eq!(group["name"], "First");
    assert_eq!(group["plans"][0]["id"], "m");
    // PUT keeps the id of the path whatever the body says.
    let (status, body) = server.put(
        &format!("/data/plan-groups/{first}"),
        json!({"external_id": "elsewhere", "name": "Renamed", "plans": [{"id": "m2"}]}),
    );
    assert_eq!((status, body), (200, json!({"success": true, "id": first})));
    assert_eq!(server.get("/data/plan-groups/elsewhere").0, 404);
}

#[test]
fn plan_groups_list_update_and_delete_shapes() {
    let server = Server::start();
    seed(&server);
    let (_, created) = server.post(
        "/data/plan-groups",
        json!({"name": "Core", "plans": [{"id": "m"}, {"id": "m2"}]}),
    );
    let id = created["id"].as_str().expect("id").to_string();
    let (status, list) = server.get("/data/plan-groups");
    assert_eq!(status, 200);
    assert_eq!(list["result"]["count"], 1);
    assert_eq!(list["result"]["list"][0]["id"], json!(id));
    assert_eq!(list["result"]["list"][0]["name"], "Core");
    assert_eq!(
        list["result"]["list"][0]["plans"][1],
        json!({"id": "m2", "name": "Monthly Plus", "billing_freq": "month",
               "billing_freq_count": 1, "product_name": null, "currency": "USD"})
    );
    assert_eq!(
        server.put(
            &format!("/data/plan-groups/{id}"),
            json!({"name": "Core", "plans": [{"id": "m"}]})
        ),
        (200, json!({"success": true, "id": id}))
    );
    assert_eq!(
        server.delete(&format!("/data/plan-groups/{id}")),
        (200, json!({"success": true, "id": id}))
    );
    assert_eq!(server.get("/data/plan-groups").1["result"]["count"], 0);
    assert_eq!(
        server.put("/data/plan-groups/none", json!({"name": "x"})).0,
        404
    );
}

#[test]
fn invoices_are_read_and_deleted_by_id() {
    let server = Server::start();
    seed(&server);
    let (status, invoice) = server.get("/data/invoices/a1");
    assert_eq!(status, 200);
    assert_eq!(invoice["id"], "a1");
    assert_eq!(invoice["customer_id"], "A");
    assert_eq!(invoice["plan_id"], "m");
    assert_eq!(
        server.delete("/data/invoices/a1"),
        (200, json!({"success": true, "id": "a1"}))
    );
    let (status, body) = server.get("/data/invoices/a1");
    assert_eq!(status, 404);
    assert_eq!(body["code"], "not_found");
    assert_eq!(ids(&server.get("/data/invoices").1), vec!["b1"]);
}

#[test]
fn data_sources_are_listed_read_updated_and_deleted() {
    let server = Server::start();
    let (status, body) = server.post(
        "/data/data-sources",
        json!([{"id": "ds1", "name": "Stripe EU", "type": "stripe"}, {"id": "ds2", "name": "Manual"}]),
    );
    assert_eq!(status, 200, "{body}");
    let (status, list) = server.get("/data/data-sources");
    assert_eq!(status, 200);
    assert_eq!(
        list,
        json!({"result": {"count": 2, "list": [
            {"id": "ds1", "name": "Stripe EU", "type": "stripe"},
            {"id": "ds2", "name": "Manual", "type": "api"}
        ]}})
    );
    assert_eq!(
        server.get("/data/data-sources/ds1"),
        (
            200,
            json!({"id": "ds1", "name": "Stripe EU", "type": "stripe"})
        )
    );
    assert_eq!(
        server.put("/data/data-sources/ds1", json!({"name": "Stripe US"})),
        (
            200,
            json!({"id": "ds1", "name": "Stripe US", "type": "stripe"})
        )
    );
    assert_eq!(
        server.put("/data/data-sources/ds2", json!({"type": "import"})),
        (
            200,
            json!({"id": "ds2", "name": "Manual", "type": "import"})
        )
    );
    let (status, body) = server.put("/data/data-sources/ds1", json!({"name": 5}));
    assert_eq!(status, 400);
    assert!(
        body["error"].as_str().unwrap_or("").contains("`name`"),
        "{body}"
    );
    let (status, body) = server.put("/data/data-sources/ds1", json!({"colour": "red"}));
    assert_eq!(status, 400);
    assert!(
        body["error"].as_str().unwrap_or("").contains("`colour`"),
        "{body}"
    );
    let (status, body) = server.put("/data/data-sources/nope", json!({"name": "X"}));
    assert_eq!((status, body["code"].clone()), (404, json!("not_found")));
    assert_eq!(
        server.delete("/data/data-sources/ds2"),
        (200, json!({"success": true, "id": "ds2"}))
    );
    assert_eq!(server.get("/data/data-sources/ds2").0, 404);
    // The update survives a restart.
    let server = Server::start_in(server.kill());
    assert_eq!(
        server.get("/data/data-sources"),
        (
            200,
            json!({"result": {"count": 1, "list": [{"id": "ds1", "name": "Stripe US", "type": "stripe"}]}})
        )
    );
}

#[test]
fn plans_without_an_id_answer_missing_external_id() {
    let server = Server::start();
    seed(&server);
    let missing = json!({"error": "Missing external_id", "code": "bad_request"});
    for (method, path) in [
        ("GET", "/data/plans/"),
        ("DELETE", "/data/plans"),
        ("DELETE", "/data/plans/"),
        ("PUT", "/data/plans"),
        ("PUT", "/data/plans/"),
    ] {
        let (status, body) = server.call(
            method,
            path,
            Some(common::OWNER_KEY),
            Some(&json!({"name": "x"})),
        );
        assert_eq!((status, &body), (400, &missing), "{method} {path}");
    }
    assert_eq!(server.get("/data/plans").1["result"]["count"], 2);
}

#[test]
fn imports_refuse_unknown_collections_and_take_a_single_invoice() {
    let server = Server::start();
    seed(&server);
    server.post("/data/data-sources", json!({"id": "src", "name": "Source"}));
    let (status, body) = server.post("/v1/data-sources/src/widgets", json!({"id": "w"}));
    assert_eq!(status, 404);
    assert_eq!(body["code"], "not_found");
    assert!(body["error"].as_str().unwrap_or("").contains("`widgets`"));
    let (status, body) = server.post(
        "/v1/data-sources/src/invoices",
        json!({"id": "a2", "customer_id": "A", "type": "subscription", "invoice_date": "2024-02-01",
               "amount": 3000, "currency": "USD", "plan_id": "m"}),
    );
    assert_eq!(status, 200);
    assert_eq!(
        body,
        json!({"result": [{"id": "a2", "import_status": "inserted"}]})
    );
    let (_, invoice) = server.get("/data/invoices/a2");
    assert_eq!(invoice["data_source"], "src");
}

#[test]
fn data_customers_list_has_no_current_mrr() {
    let server = Server::start();
    seed(&server);
    let (status, list) = server.get("/data/customers");
    assert_eq!(status, 200);
    assert_eq!(list["result"]["count"], 2);
    assert_eq!(ids(&list), vec!["A", "B"]);
    for item in list["result"]["list"].as_array().expect("list") {
        assert!(item.get("current_mrr").is_none(), "{item}");
    }
    assert_eq!(list["result"]["list"][0]["name"], "Acme");
    // The detail adds current_mrr (A churned long ago: nothing now).
    assert_eq!(server.get("/data/customers/A").1["current_mrr"], json!({}));
}

#[test]
fn a_plan_in_use_cannot_be_deleted() {
    let server = Server::start();
    seed(&server);
    let (status, body) = server.delete("/data/plans/m");
    assert_eq!(status, 409);
    assert_eq!(body["code"], "conflict");
    assert_eq!(server.get("/data/plans/m").0, 200);
}

#[test]
fn lists_default_to_100_and_clamp_limit() {
    let server = Server::start();
    let customers: Vec<Value> = (0..10_050)
        .map(|i| json!({"id": format!("c{i:05}"), "name": format!("C{i}")}))
        .collect();
    assert_eq!(server.post("/data/customers", json!(customers)).0, 201);
    let (_, page) = server.get("/data/customers");
    assert_eq!(page["result"]["count"], 10_050);
    assert_eq!(page["result"]["list"].as_array().map(Vec::len), Some(100));
    assert_eq!(page["result"]["list"][0]["id"], "c00000");
    let (_, page) = server.get("/data/customers?limit=100000");
    assert_eq!(
        page["result"]["list"].as_array().map(Vec::len),
        Some(10_000),
        "limit is clamped to 10,000"
    );
    let (_, page) = server.get("/data/customers?limit=5&offset=10048");
    assert_eq!(ids(&page), vec!["c10048", "c10049"]);
    let (status, body) = server.get("/data/customers?limit=-1");
    assert_eq!(status, 400);
    assert_eq!(
        body["error"],
        "query parameter `limit`: `-1` is not a whole number of 0 or more"
    );
}

/// FX rates are listed in pages, in date order and then by currency
/// whatever order they were written in (they used to come in the order of
/// their writes, so a page of the latest rates could not be asked for).
#[test]
fn fx_rates_are_paged_in_date_order() {
    let server = Server::start();
    let rows: Vec<Value> = [4, 2, 5, 1, 3]
        .map(|d| json!({"date": format!("2024-01-0{d}"), "currency": "EUR", "rate": 1.1}))
        .into();
    let (status, body) = server.post("/data/fx-rates", json!(rows));
    assert_eq!(status, 200, "{body}");
    let (status, body) = server.post(
        "/data/fx-rates",
        json!([{"date": "2024-01-02", "currency": "AUD", "rate": 1.6}]),
    );
    assert_eq!(status, 200, "{body}");
    let (status, page) = server.get("/data/fx-rates?limit=3&offset=1");
    assert_eq!(status, 200);
    assert_eq!(page["result"]["count"], 6);
    assert_eq!(
        page["result"]["list"],
        json!([
            {"date": "2024-01-02", "currency": "AUD", "rate": 1.6},
            {"date": "2024-01-02", "currency": "EUR", "rate": 1.1},
            {"date": "2024-01-03", "currency": "EUR", "rate": 1.1}
        ])
    );
    assert_eq!(
        server.get("/data/fx-rates").1["result"]["list"]
            .as_array()
            .map(Vec::len),
        Some(6)
    );
}
