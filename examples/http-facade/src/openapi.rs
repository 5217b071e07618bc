//! The OpenAPI 3 description, built from the route table
//! ([`crate::routes::endpoints`]): every endpoint the router serves, with its
//! summary, query parameters, responses and who may call it. A test checks
//! the document against the running service and `docs/openapi.json`.

use serde_json::{Map, Value, json};

/// Who may call an endpoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    Public,
    /// Any valid key (readonly keys only for GET).
    Key,
    Admin,
}

/// The documentation of one endpoint, given where it is routed
/// ([`crate::routes`]).
#[derive(Debug, Clone, Copy)]
pub struct Doc {
    pub summary: &'static str,
    pub access: Access,
    /// Named query parameters.
    pub query: &'static [&'static str],
    /// Takes further query parameters of its own (reports, customer views).
    pub free_query: bool,
    /// The status of success.
    pub status: u16,
    /// Only ever answers `400 {error: "Missing external_id"}`.
    pub missing_id: bool,
}

impl Doc {
    const fn new(summary: &'static str, access: Access) -> Doc {
        Doc {
            summary,
            access,
            query: &[],
            free_query: false,
            status: 200,
            missing_id: false,
        }
    }

    pub const fn public(summary: &'static str) -> Doc {
        Doc::new(summary, Access::Public)
    }

    pub const fn key(summary: &'static str) -> Doc {
        Doc::new(summary, Access::Key)
    }

    pub const fn admin(summary: &'static str) -> Doc {
        Doc::new(summary, Access::Admin)
    }

    pub const fn query(mut self, names: &'static [&'static str]) -> Doc {
        self.query = names;
        self
    }

    pub const fn free_query(mut self) -> Doc {
        self.free_query = true;
        self
    }

    pub const fn created(mut self) -> Doc {
        self.status = 201;
        self
    }

    pub const fn missing_id(mut self) -> Doc {
        self.missing_id = true;
        self
    }
}

/// Query parameters of list endpoints.
pub const PAGE: &[&str] = &["limit", "offset"];

fn query_parameter(name: &str) -> Value {
    let (schema, description) = match name {
        "limit" => (
            json!({"type": "integer", "minimum": 0, "default": crate::routes::DEFAULT_LIMIT, "maximum": crate::routes::MAX_LIMIT}),
            "Most items returned (larger values are clamped to the maximum)",
        ),
        "offset" => (
            json!({"type": "integer", "minimum": 0, "default": 0}),
            "Items skipped before the first returned",
        ),
        "as_of" => (
            json!({"type": "string"}),
            "ISO 8601 instant or date to compute at; default now",
        ),
        "format" => (
            json!({"type": "string", "enum": ["json", "csv"], "default": "json"}),
            "json, or csv: one row per period, item or metric (Accept: text/csv does the same)",
        ),
        "source" => (json!({"type": "string"}), "Only plans of this data source"),
        "customer" => (json!({"type": "string"}), "Only invoices of this customer"),
        _ => (json!({"type": "string"}), ""),
    };
    json!({"name": name, "in": "query", "required": false, "description": description, "schema": schema})
}

fn error(description: &str) -> Value {
    json!({"description": description, "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}})
}

/// The OpenAPI document of the served endpoints.
pub fn document() -> Value {
    let mut paths = Map::new();
    for endpoint in crate::routes::endpoints() {
        let (method, path, doc) = (endpoint.method, endpoint.path, endpoint.doc);
        let mut parameters: Vec<Value> = path
            .split('/')
            .filter_map(|segment| segment.strip_prefix('{').and_then(|s| s.strip_suffix('}')))
            .map(|name| json!({"name": name, "in": "path", "required": true, "schema": {"type": "string"}}))
            .collect();
        parameters.extend(doc.query.iter().map(|name| query_parameter(name)));
        if doc.free_query {
            parameters.push(json!({
                "name": "parameters", "in": "query", "required": false, "style": "form", "explode": true,
                "description": "Any further parameter of the report or view, as name=value (see docs/reports.md; GET /reports lists each report's, and a report refuses any other)",
                "schema": {"type": "object", "additionalProperties": {"type": "string"}}
            }));
        }
        let mut responses = Map::new();
        if doc.missing_id {
            responses.insert(
                "400".into(),
                error("Always: `{error: \"Missing external_id\", code: \"bad_request\"}`"),
            );
        } else {
            let success = if doc.status == 201 {
                "Created"
            } else {
                "Success"
            };
            responses.insert(
                doc.status.to_string(),
                json!({"description": success, "content": {"application/json": {"schema": {"type": "object"}}}}),
            );
            if doc.access != Access::Public {
                responses.insert(
                    "400".into(),
                    error("Invalid input; the error names the field or parameter"),
                );
            }
        }
        if doc.access != Access::Public {
            responses.insert("401".into(), error("Missing, unknown or revoked key"));
            responses.insert("403".into(), error("The key's role may not do this"));
            responses.insert("404".into(), error("No such record or report"));
        }
        responses.insert("405".into(), error("Method not allowed on this path"));
        if method != "get" && !doc.missing_id {
            responses.insert(
                "409".into(),
                error("The write conflicts with stored records"),
            );
        }
        if method == "post" || method == "put" {
            responses.insert("413".into(), error("Body or record count over the limit"));
        }
        let mut operation = json!({
            "summary": doc.summary,
            "parameters": parameters,
            "responses": responses,
        });
        match doc.access {
            Access::Public => operation["security"] = json!([]),
            Access::Admin => operation["description"] = json!("Needs an owner or admin key."),
            Access::Key if method != "get" => {
                operation["description"] =
                    json!("Needs an owner or admin key (readonly keys only read).")
            }
            Access::Key => {}
        }
        if (method == "post" || method == "put") && !doc.missing_id {
            operation["requestBody"] =
                json!({"required": true, "content": {"application/json": {"schema": {}}}});
        }
        let entry = paths.entry(path.to_string()).or_insert_with(|| json!({}));
        entry[method] = operation;
    }
    json!({
        "openapi": "3.0.3",
        "info": {
            "title": "submetrics",
            "version": env!("CARGO_PKG_VERSION"),
            "description": "Subscription analytics: data API, imports, analytics customers, account, settings and reports. Every path is also served under /v1 (including /health and /openapi.json, which need no key)."
        },
        "servers": [{"url": "http://127.0.0.1:8080"}],
        "security": [{"bearer": []}],
        "components": {
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}},
            "schemas": {"Error": {
                "type": "object",
                "properties": {"error": {"type": "string"}, "code": {"type": "string"}, "id": {"type": "string"}, "field": {"type": "string"}},
                "required": ["error", "code"]
            }}
        },
        "paths": paths,
    })
}
