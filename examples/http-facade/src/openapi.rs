//! The OpenAPI 3 description, built from the route table
//! ([`crate::routes::endpoints`]): every endpoint the router serves, with its
//! summary, query parameters, responses and who may call it. A test checks
//! the document against the running service and `docs/openapi.json`.

mod operations;
pub mod reference;
mod schemas;

pub use operations::operation;
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
    /// Takes further query parameters of its own (reports, customer views),
    /// which its handler checks; any other endpoint refuses a parameter
    /// `query` does not name ([`crate::routes::Routes`]).
    pub free_query: bool,
    /// The further parameters a computed view reads, from the core, to
    /// document them one by one (a report's depend on its name and are
    /// listed by `GET /reports`).
    pub view_params: Option<fn() -> Vec<submetrics::reports::ReportParam>>,
    /// The status of success.
    pub status: u16,
    /// Only ever answers `400 {error: "Missing external_id"}`.
    pub missing_id: bool,
    /// A login endpoint (needs no key, checks credentials or a token):
    /// answers 400, 401, 403, 404, 409 and 429 as well.
    pub login: bool,
    /// Calls the payment platform, whose failure is a 502.
    pub upstream: bool,
}

impl Doc {
    const fn new(summary: &'static str, access: Access) -> Doc {
        Doc {
            summary,
            access,
            query: &[],
            free_query: false,
            view_params: None,
            status: 200,
            missing_id: false,
            login: false,
            upstream: false,
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

    /// Whether the endpoint answers in several formats, chosen by `format`
    /// or the `Accept` header (reports and the movements).
    pub fn offers_formats(&self) -> bool {
        self.query
            .iter()
            .any(|name| name.split('/').next() == Some("format"))
    }

    /// The query parameters' names as requests give them (`format/movements`
    /// is documented apart but named `format`).
    pub fn query_names(&self) -> impl Iterator<Item = &'static str> {
        self.query
            .iter()
            .map(|name| name.split('/').next().unwrap_or(name))
    }

    pub const fn free_query(mut self) -> Doc {
        self.free_query = true;
        self
    }

    /// Takes the further parameters `params` lists, checked by the view.
    pub const fn view_params(
        mut self,
        params: fn() -> Vec<submetrics::reports::ReportParam>,
    ) -> Doc {
        self.free_query = true;
        self.view_params = Some(params);
        self
    }

    pub const fn created(mut self) -> Doc {
        self.status = 201;
        self
    }

    pub const fn login(mut self) -> Doc {
        self.login = true;
        self
    }

    pub const fn missing_id(mut self) -> Doc {
        self.missing_id = true;
        self
    }

    pub const fn upstream(mut self) -> Doc {
        self.upstream = true;
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
        // Named apart for the one route that offers fewer formats.
        "format/movements" => {
            return json!({"name": "format", "in": "query", "required": false,
                "description": "json; arrow: the movements as an Arrow IPC stream of record batches of the movement columns (Accept: application/vnd.apache.arrow.stream does the same)",
                "schema": {"type": "string", "enum": ["json", "arrow"], "default": "json"}});
        }
        "format/results" => {
            return json!({"name": "format", "in": "query", "required": false,
                "description": "json; arrow: the per-record results as an Arrow IPC stream of one record batch with the columns id, import_status (dictionary-encoded) and import_error, the table the ledgers' Arrow upserts answer (Accept: application/vnd.apache.arrow.stream does the same); refusals stay JSON errors",
                "schema": {"type": "string", "enum": ["json", "arrow"], "default": "json"}});
        }
        "format" => (
            json!({"type": "string", "enum": ["json", "csv", "arrow"], "default": "json"}),
            "json; csv: one row per period, item or metric (Accept: text/csv does the same); arrow: those rows as an Arrow IPC stream of one record batch, columns typed by the report's schema (Accept: application/vnd.apache.arrow.stream does the same)",
        ),
        "source" => (json!({"type": "string"}), "Only plans of this data source"),
        "customer" => (
            json!({"type": "string"}),
            "Only the records of this customer",
        ),
        _ => (json!({"type": "string"}), ""),
    };
    json!({"name": name, "in": "query", "required": false, "description": description, "schema": schema})
}

/// The media types a `format` query parameter of this name answers in
/// besides JSON, with their schemas: each is listed beside JSON in the
/// success answer of an operation whose Doc names the parameter.
fn formats_answered(name: &str) -> Vec<(&'static str, Value)> {
    let csv = ("text/csv", json!({"type": "string"}));
    let arrow = (
        crate::routes::ARROW_STREAM,
        json!({"type": "string", "format": "binary"}),
    );
    match name {
        "format" => vec![csv, arrow],
        "format/movements" | "format/results" => vec![arrow],
        _ => Vec::new(),
    }
}

fn error(description: &str) -> Value {
    json!({"description": description, "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}})
}

/// The schema of a path parameter: report names and import collections are
/// closed sets.
fn path_schema(name: &str) -> Value {
    match name {
        "name" => json!({"type": "string", "enum": submetrics::reports::report_names()}),
        "collection" => {
            json!({"type": "string", "enum": ["customers", "plans", "plan_groups", "invoices"]})
        }
        // An empty segment cannot name a record: the URL would be another
        // path (`/data/plans/` is the list).
        _ => json!({"type": "string", "minLength": 1}),
    }
}

/// The group an endpoint is listed under: its path's first segment.
fn tag_of(path: &str) -> &str {
    match path.trim_start_matches('/').split('/').next() {
        Some("") | None => "service",
        Some("health" | "openapi.json" | "docs") => "service",
        Some(first) => first,
    }
}

/// The OpenAPI document of the served endpoints.
pub fn document() -> Value {
    let mut paths = Map::new();
    for endpoint in crate::routes::endpoints() {
        let (method, path, doc) = (endpoint.method, endpoint.path, endpoint.doc);
        let mut parameters: Vec<Value> = path
            .split('/')
            .filter_map(|segment| segment.strip_prefix('{').and_then(|s| s.strip_suffix('}')))
            .map(|name| json!({"name": name, "in": "path", "required": true, "schema": path_schema(name)}))
            .collect();
        let described = operation(method, path);
        parameters.extend(doc.query.iter().map(|name| query_parameter(name)));
        if let Some(view_params) = doc.view_params {
            parameters.extend(view_params().into_iter().map(|param| {
                json!({"name": param.name, "in": "query", "required": false,
                       "description": param.accepts, "schema": {"type": "string"}})
            }));
        } else if doc.free_query {
            parameters.push(json!({
                "name": "parameters", "in": "query", "required": false, "style": "form", "explode": true,
                "description": "Any further parameter of the report, as name=value (see docs/reports.md; GET /reports lists each report's, and a report refuses any other)",
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
            let (media_type, schema) = described
                .as_ref()
                .map(|op| (op.media_type, op.response.clone()))
                .unwrap_or(("application/json", json!({"type": "object"})));
            let mut content = Map::new();
            content.insert(media_type.into(), json!({"schema": schema}));
            for (media, schema) in doc.query.iter().flat_map(|name| formats_answered(name)) {
                content.insert(media.into(), json!({"schema": schema}));
            }
            responses.insert(
                doc.status.to_string(),
                json!({"description": success, "content": content}),
            );
            let invalid = match (doc.access, method) {
                (Access::Public, "post") => {
                    "A body or signature that does not check out, or a query parameter the endpoint does not take; the error names the field, header or parameter"
                }
                (Access::Public, _) => {
                    "A query parameter the endpoint does not take, or one given twice (named in `field`), or a body, which the endpoint does not read"
                }
                _ => "Invalid input; the error names the field or parameter",
            };
            responses.insert("400".into(), error(invalid));
        }
        if doc.login {
            responses.insert(
                "400".into(),
                error("Invalid input; the error names the field"),
            );
            responses.insert("401".into(), error("Wrong email or password"));
            responses.insert("403".into(), error("Another origin, or a disabled user"));
            responses.insert("404".into(), error("No invitation has this token"));
            responses.insert(
                "409".into(),
                error("The invitation is no longer pending, or the email is taken"),
            );
            responses.insert(
                "429".into(),
                error("Too many failed logins; see Retry-After"),
            );
        }
        if doc.access != Access::Public {
            responses.insert("401".into(), error("Missing, unknown or revoked key"));
            responses.insert("403".into(), error("The key's role may not do this"));
            responses.insert("404".into(), error("No such record or report"));
        }
        if doc.access == Access::Public && method == "post" {
            responses.insert("404".into(), error("No such account or connection"));
        }
        if doc.upstream {
            responses.insert("502".into(), error("The payment platform failed"));
        }
        responses.insert("405".into(), error("Method not allowed on this path"));
        let refused = if doc.offers_formats() {
            "The Accept header refuses every format the answer comes in (`field`: `Accept`)"
        } else {
            "The Accept header refuses the one type the answer comes in (`field`: `Accept`)"
        };
        responses.insert("406".into(), error(refused));
        if method != "get" && !doc.missing_id {
            responses.insert(
                "409".into(),
                error("The write conflicts with stored records"),
            );
        }
        if method == "post" || method == "put" {
            responses.insert(
                "408".into(),
                error("The body did not arrive within the body timeout (30 s unless set)"),
            );
            responses.insert(
                "413".into(),
                error("Body or record count over the limit (the body's also once decompressed)"),
            );
            responses.insert(
                "415".into(),
                error("A Content-Encoding other than gzip, zstd or identity, or a Content-Type the endpoint does not read (`field`: the header)"),
            );
        }
        responses.insert(
            "414".into(),
            error("The path and query are over the limit of 65534 bytes"),
        );
        responses.insert(
            "431".into(),
            error("The request's head is over its limit (about 400 KiB, 100 headers)"),
        );
        if doc.access != Access::Public {
            responses.insert(
                "429".into(),
                error("The key is over its request rate (with `Retry-After`; only when a rate limit is set)"),
            );
            responses.insert(
                "500".into(),
                error("The service failed; the body names an error id, logged with the cause"),
            );
        }
        if path == "/health" {
            responses.insert(
                "503".into(),
                json!({"description": "Degraded: `{status: \"degraded\", storage: why}` while the database cannot take writes (read-only, full, failing I/O)", "content": {"application/json": {"schema": {"type": "object"}}}}),
            );
        } else {
            responses.insert(
                "503".into(),
                error("Over the connection limit (with `Retry-After`), or the database cannot take writes now"),
            );
        }
        let mut operation = json!({
            "tags": [tag_of(path)],
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
        if let Some(described) = &described {
            operation["operationId"] = json!(described.id);
            if let Some(request) = &described.request {
                let mut content = json!({"application/json": {"schema": request}});
                if described.columnar_bodies {
                    content["application/x-ndjson"] = json!({"schema": {
                        "type": "string",
                        "description": "One JSON record per line; blank lines are skipped",
                    }});
                    content["text/csv"] = json!({"schema": {
                        "type": "string",
                        "description": "A header row naming the columns `submetrics local` reads, then one record per row",
                    }});
                    content[crate::routes::ARROW_STREAM] = json!({"schema": {
                        "type": "string",
                        "format": "binary",
                        "description": "An Arrow IPC stream, one record per row, a column per field",
                    }});
                }
                operation["requestBody"] = json!({"required": true, "content": content});
            }
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
        "security": [{"bearer": []}, {"session": []}],
        "components": {
            "securitySchemes": {
                "bearer": {"type": "http", "scheme": "bearer"},
                "session": {"type": "apiKey", "in": "cookie", "name": crate::session::SESSION_COOKIE,
                            "description": "A team member's session (POST /session); writes also send its CSRF token in X-CSRF-Token"}
            },
            "schemas": schemas::components(),
        },
        "paths": paths,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    /// Every `$ref` in `value`.
    fn references(value: &Value, out: &mut Vec<String>) {
        match value {
            Value::Object(map) => {
                if let Some(Value::String(target)) = map.get("$ref") {
                    out.push(target.clone());
                }
                map.values().for_each(|v| references(v, out));
            }
            Value::Array(items) => items.iter().for_each(|v| references(v, out)),
            _ => {}
        }
    }

    /// The paths to every empty `required` list in `value`.
    fn empty_required(value: &Value, path: String, out: &mut Vec<String>) {
        match value {
            Value::Object(map) => {
                if map
                    .get("required")
                    .and_then(Value::as_array)
                    .is_some_and(Vec::is_empty)
                {
                    out.push(path.clone());
                }
                for (key, v) in map {
                    empty_required(v, format!("{path}/{key}"), out);
                }
            }
            Value::Array(items) => {
                for (i, v) in items.iter().enumerate() {
                    empty_required(v, format!("{path}/{i}"), out);
                }
            }
            _ => {}
        }
    }

    /// OpenAPI 3.0 forbids an empty `required` list (a strict validator
    /// refuses the document): a schema with no required field has none.
    #[test]
    fn no_schema_lists_an_empty_required() {
        let mut found = Vec::new();
        empty_required(&document(), String::new(), &mut found);
        assert_eq!(found, Vec::<String>::new());
    }

    #[test]
    fn every_routed_endpoint_is_described_with_typed_bodies() {
        let document = document();
        let mut ids = BTreeSet::new();
        for endpoint in crate::routes::endpoints() {
            let (method, path) = (endpoint.method, endpoint.path);
            let described = operation(method, path).unwrap_or_else(|| {
                panic!("{method} {path} is routed but has no operation in openapi/operations.rs")
            });
            assert!(
                ids.insert(described.id),
                "operationId {} twice",
                described.id
            );
            let entry = &document["paths"][path][method];
            assert_eq!(entry["operationId"], described.id, "{method} {path}");
            assert!(!entry["summary"].as_str().unwrap_or_default().is_empty());
            if endpoint.doc.missing_id {
                continue;
            }
            let success = &entry["responses"][endpoint.doc.status.to_string()]["content"];
            let schema = success
                .as_object()
                .and_then(|content| content.values().next())
                .map(|media| &media["schema"])
                .unwrap_or_else(|| panic!("{method} {path}: no success schema"));
            assert_ne!(
                schema,
                &json!({"type": "object"}),
                "{method} {path}: untyped answer"
            );
            if method == "post" || method == "put" {
                let body = &entry["requestBody"]["content"]["application/json"]["schema"];
                // A resync and a redelivery read no body.
                let reads_no_body = [
                    "/customers/{id}/resync",
                    "/webhooks/{id}/deliveries/{delivery_id}/redeliver",
                ];
                if !reads_no_body.contains(&path) {
                    assert!(body.is_object(), "{method} {path}: no request schema");
                }
            }
        }
        let mut refs = Vec::new();
        references(&document, &mut refs);
        let schemas = document["components"]["schemas"].as_object().unwrap();
        for target in &refs {
            let name = target
                .strip_prefix("#/components/schemas/")
                .unwrap_or(target);
            assert!(
                schemas.contains_key(name),
                "{target} is referenced but not defined"
            );
        }
        // Every schema is used, directly or as documentation of a report.
        let used: BTreeSet<&str> = refs
            .iter()
            .map(|t| t.trim_start_matches("#/components/schemas/"))
            .collect();
        for name in schemas.keys() {
            let report_shape = [
                "SummaryReport",
                "MrrReport",
                "TableReport",
                "MovementTableReport",
            ];
            assert!(
                used.contains(name.as_str()) || report_shape.contains(&name.as_str()),
                "schema {name} is never used"
            );
        }
    }

    #[test]
    fn record_writes_describe_each_body_format_they_read_and_other_writes_json_only() {
        let document = document();
        let media = |path: &str| -> Vec<String> {
            let content = document["paths"][path]["post"]["requestBody"]["content"]
                .as_object()
                .unwrap();
            content.keys().cloned().collect()
        };
        assert_eq!(
            media("/data-sources/{source}/{collection}"),
            [
                "application/json",
                "application/x-ndjson",
                "text/csv",
                "application/vnd.apache.arrow.stream"
            ]
        );
        assert_eq!(media("/data/invoices"), media("/data/customers"));
        assert_eq!(media("/data/plans").len(), 4);
        assert_eq!(media("/data/fx-rates"), ["application/json"]);
    }

    #[test]
    fn the_customer_views_document_each_parameter_they_read() {
        let document = document();
        let names = |path: &str| -> Vec<String> {
            document["paths"][path]["get"]["parameters"]
                .as_array()
                .unwrap()
                .iter()
                .map(|p| {
                    format!(
                        "{}:{}",
                        p["in"].as_str().unwrap(),
                        p["name"].as_str().unwrap()
                    )
                })
                .collect()
        };
        let mut list = vec!["query:as_of".to_string()];
        list.extend(
            submetrics::reports::customer_list_params()
                .iter()
                .map(|p| format!("query:{}", p.name)),
        );
        assert_eq!(names("/customers"), list);
        assert!(list.contains(&"query:q".to_string()) && list.contains(&"query:sort".to_string()));
        assert_eq!(
            names("/customers/{id}"),
            ["path:id", "query:as_of", "query:baseCurrency"]
        );
        let q = &document["paths"]["/customers"]["get"]["parameters"][2];
        assert_eq!(
            (&q["name"], &q["description"]),
            (
                &json!("q"),
                &json!("customers whose name, email or id holds this text (any case)")
            )
        );
    }

    #[test]
    fn the_reference_page_shows_every_operation_and_loads_nothing_from_elsewhere() {
        let document = document();
        let page = reference::render(&document);
        for endpoint in crate::routes::endpoints() {
            let id = operation(endpoint.method, endpoint.path).unwrap().id;
            assert!(page.contains(&format!("id=\"op-{id}\"")), "{id} missing");
        }
        assert!(page.contains("id=\"schema-Invoice\""));
        assert!(page.contains(
            "<code>user</code></td><td><a href=\"#schema-TeamMember\">TeamMember</a> | null</td>"
        ));
        assert!(page.contains(
            "<code>sync_status</code></td><td>string: syncing, complete, error or null</td>"
        ));
        assert!(!page.contains("<script"));
        assert!(!page.contains("http://") && !page.contains("https://"));
    }
}
