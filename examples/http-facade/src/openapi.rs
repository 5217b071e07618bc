//! The OpenAPI 3 description, built from [`ROUTES`]: every endpoint the
//! router serves, its summary and who may call it. A test checks that every
//! entry is routed and that `docs/openapi.json` equals this document.

use serde_json::{Map, Value, json};

/// Who may call an endpoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    Public,
    /// Any valid key (readonly keys only for GET).
    Key,
    Admin,
}

/// (method, path, summary, access). Every path is also served under `/v1`.
pub const ROUTES: &[(&str, &str, &str, Access)] = &[
    ("get", "/health", "Liveness check", Access::Public),
    ("get", "/openapi.json", "This description", Access::Public),
    (
        "get",
        "/data/plans",
        "List plans (query: source, limit, offset)",
        Access::Key,
    ),
    (
        "post",
        "/data/plans",
        "Upsert one plan or an array of plans",
        Access::Key,
    ),
    ("get", "/data/plans/{id}", "Get a plan", Access::Key),
    (
        "put",
        "/data/plans/{id}",
        "Update fields of a plan",
        Access::Key,
    ),
    (
        "delete",
        "/data/plans/{id}",
        "Delete a plan no invoice uses",
        Access::Key,
    ),
    (
        "get",
        "/data/customers",
        "List customers (query: limit, offset)",
        Access::Key,
    ),
    (
        "post",
        "/data/customers",
        "Create or replace one customer or an array",
        Access::Key,
    ),
    (
        "get",
        "/data/customers/{id}",
        "Get a customer with current_mrr",
        Access::Key,
    ),
    (
        "put",
        "/data/customers/{id}",
        "Update fields of a customer (custom_variables merge)",
        Access::Key,
    ),
    (
        "delete",
        "/data/customers/{id}",
        "Delete a customer and its invoices",
        Access::Key,
    ),
    ("get", "/data/plan-groups", "List plan groups", Access::Key),
    (
        "post",
        "/data/plan-groups",
        "Create a plan group (the service assigns the id)",
        Access::Key,
    ),
    (
        "get",
        "/data/plan-groups/{id}",
        "Get a plan group",
        Access::Key,
    ),
    (
        "put",
        "/data/plan-groups/{id}",
        "Replace a plan group's name and plans",
        Access::Key,
    ),
    (
        "delete",
        "/data/plan-groups/{id}",
        "Delete a plan group (its plans stay)",
        Access::Key,
    ),
    (
        "get",
        "/data/invoices",
        "List invoices (query: customer, limit, offset)",
        Access::Key,
    ),
    (
        "post",
        "/data/invoices",
        "Upsert one invoice or an array",
        Access::Key,
    ),
    ("get", "/data/invoices/{id}", "Get an invoice", Access::Key),
    (
        "put",
        "/data/invoices/{id}",
        "Replace an invoice",
        Access::Key,
    ),
    (
        "delete",
        "/data/invoices/{id}",
        "Delete an invoice",
        Access::Key,
    ),
    (
        "get",
        "/data/data-sources",
        "List data sources",
        Access::Key,
    ),
    (
        "post",
        "/data/data-sources",
        "Upsert one data source or an array",
        Access::Key,
    ),
    (
        "get",
        "/data/data-sources/{id}",
        "Get a data source",
        Access::Key,
    ),
    (
        "delete",
        "/data/data-sources/{id}",
        "Delete a data source",
        Access::Key,
    ),
    (
        "get",
        "/data/fx-rates",
        "List the FX rate rows",
        Access::Key,
    ),
    (
        "post",
        "/data/fx-rates",
        "Add FX rate rows {date, currency, rate}",
        Access::Key,
    ),
    (
        "post",
        "/data-sources/{id}/{collection}",
        "Import customers, plans, plan_groups or invoices into a data source",
        Access::Key,
    ),
    ("get", "/customers", "Analytics customer list", Access::Key),
    (
        "get",
        "/customers/{id}",
        "Analytics customer detail",
        Access::Key,
    ),
    (
        "post",
        "/customers/{id}/resync",
        "Recalculate a customer",
        Access::Admin,
    ),
    (
        "get",
        "/account",
        "The account and its settings",
        Access::Admin,
    ),
    (
        "put",
        "/account",
        "Change the account name and settings",
        Access::Admin,
    ),
    ("get", "/profile", "The caller's profile", Access::Key),
    (
        "put",
        "/profile",
        "Change first_name, last_name, locale",
        Access::Key,
    ),
    (
        "get",
        "/account/billing",
        "Plan, limits and usage",
        Access::Admin,
    ),
    ("get", "/account/team", "Team members", Access::Admin),
    ("get", "/account/api-keys", "List API keys", Access::Admin),
    (
        "post",
        "/account/api-keys",
        "Create an API key {name, role}; the key is shown once",
        Access::Admin,
    ),
    (
        "delete",
        "/account/api-keys/{id}",
        "Revoke an API key",
        Access::Admin,
    ),
    (
        "get",
        "/settings/notifications",
        "Notification settings",
        Access::Admin,
    ),
    (
        "put",
        "/settings/notifications",
        "Change parts of the notification settings",
        Access::Admin,
    ),
    (
        "get",
        "/settings/payment-platform",
        "Payment-platform connection (read only)",
        Access::Admin,
    ),
    (
        "get",
        "/settings/crm",
        "CRM connection (read only)",
        Access::Admin,
    ),
    (
        "get",
        "/reports/{name}",
        "Any report by name, with its query parameters and as_of",
        Access::Key,
    ),
];

/// The OpenAPI document.
pub fn document() -> Value {
    let mut paths = Map::new();
    for (method, path, summary, access) in ROUTES {
        let parameters: Vec<Value> = path
            .split('/')
            .filter_map(|segment| segment.strip_prefix('{').and_then(|s| s.strip_suffix('}')))
            .map(|name| json!({"name": name, "in": "path", "required": true, "schema": {"type": "string"}}))
            .collect();
        let mut operation = json!({
            "summary": summary,
            "parameters": parameters,
            "responses": {
                "200": {"description": "Success", "content": {"application/json": {"schema": {"type": "object"}}}},
                "400": {"$ref": "#/components/responses/Error"},
                "401": {"$ref": "#/components/responses/Error"},
                "403": {"$ref": "#/components/responses/Error"},
                "404": {"$ref": "#/components/responses/Error"}
            }
        });
        match access {
            Access::Public => operation["security"] = json!([]),
            Access::Admin => operation["description"] = json!("Needs an owner or admin key."),
            Access::Key => {}
        }
        if *method == "post" || *method == "put" {
            operation["requestBody"] =
                json!({"required": true, "content": {"application/json": {"schema": {}}}});
        }
        let entry = paths.entry(path.to_string()).or_insert_with(|| json!({}));
        entry[*method] = operation;
    }
    json!({
        "openapi": "3.0.3",
        "info": {
            "title": "submetrics",
            "version": env!("CARGO_PKG_VERSION"),
            "description": "Subscription analytics: data API, imports, analytics customers, account, settings and reports. Every path is also served under /v1."
        },
        "servers": [{"url": "http://127.0.0.1:8080"}],
        "security": [{"bearer": []}],
        "components": {
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}},
            "responses": {"Error": {"description": "An error", "content": {"application/json": {"schema": {
                "type": "object",
                "properties": {"error": {"type": "string"}, "code": {"type": "string"}, "id": {"type": "string"}, "field": {"type": "string"}},
                "required": ["error", "code"]
            }}}}}
        },
        "paths": paths,
    })
}
