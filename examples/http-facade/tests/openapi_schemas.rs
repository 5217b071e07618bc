//! The description is precise: every answer of a real session, each kind of
//! endpoint, is checked against the schema `/openapi.json` gives for its
//! operation and status (every required field there, no undeclared field
//! in a closed object, every type as declared), so generated clients read
//! exactly what the service writes.

mod common;

use common::{OWNER_KEY, Server};
use serde_json::{Value, json};

/// Checks `value` against `schema` (the OpenAPI 3.0 subset the document
/// uses) as a strict validator does: `nullable` admits null only beside a
/// `type`, and only when an `enum` there lists null too. Returns the first
/// mismatch as `path: what`.
fn check(document: &Value, schema: &Value, value: &Value, at: &str) -> Result<(), String> {
    if let Some(target) = schema.get("$ref").and_then(Value::as_str) {
        let name = target.trim_start_matches("#/components/schemas/");
        return check(
            document,
            &document["components"]["schemas"][name],
            value,
            at,
        );
    }
    if let Some(options) = schema.get("oneOf").and_then(Value::as_array) {
        return if options
            .iter()
            .any(|o| check(document, o, value, at).is_ok())
        {
            Ok(())
        } else {
            Err(format!("{at}: matches no option of oneOf: {value}"))
        };
    }
    if let Some(options) = schema.get("allOf").and_then(Value::as_array) {
        for option in options {
            check(document, option, value, at)?;
        }
    }
    if value.is_null() {
        let nullable =
            schema.get("nullable") == Some(&Value::Bool(true)) && schema.get("type").is_some();
        let listed = schema
            .get("enum")
            .and_then(Value::as_array)
            .is_none_or(|values| values.contains(&Value::Null));
        return if nullable && listed {
            Ok(())
        } else {
            Err(format!("{at}: null where the schema is not nullable"))
        };
    }
    if let Some(values) = schema.get("enum").and_then(Value::as_array)
        && !values.contains(value)
    {
        return Err(format!("{at}: {value} is not one of {values:?}"));
    }
    let kind = schema.get("type").and_then(Value::as_str);
    let fits = match kind {
        None => true,
        Some("string") => value.is_string(),
        Some("integer") => value.is_i64() || value.is_u64(),
        Some("number") => value.is_number(),
        Some("boolean") => value.is_boolean(),
        Some("array") => value.is_array(),
        Some("object") => value.is_object(),
        Some(other) => return Err(format!("{at}: unknown schema type {other}")),
    };
    if !fits {
        return Err(format!("{at}: {value} is not {}", kind.unwrap_or("any")));
    }
    if let (Some(items), Some(values)) = (schema.get("items"), value.as_array()) {
        for (i, item) in values.iter().enumerate() {
            check(document, items, item, &format!("{at}[{i}]"))?;
        }
    }
    if let Some(fields) = value.as_object() {
        let properties = schema.get("properties").and_then(Value::as_object);
        for name in schema["required"].as_array().into_iter().flatten() {
            let name = name.as_str().unwrap_or_default();
            if !fields.contains_key(name) {
                return Err(format!("{at}: required field `{name}` is missing"));
            }
        }
        for (name, field) in fields {
            let place = format!("{at}.{name}");
            match properties.and_then(|p| p.get(name)) {
                Some(declared) => check(document, declared, field, &place)?,
                None => match schema.get("additionalProperties") {
                    Some(Value::Object(values)) => {
                        check(document, &Value::Object(values.clone()), field, &place)?
                    }
                    Some(Value::Bool(true)) => {}
                    None if properties.is_none() => {}
                    _ => return Err(format!("{place}: not declared")),
                },
            }
        }
    }
    Ok(())
}

/// The schema of `method path`'s answer with `status`, found by matching
/// the concrete path against the document's templates.
fn answer_schema<'d>(document: &'d Value, method: &str, path: &str, status: u16) -> &'d Value {
    let path = path.split('?').next().unwrap_or(path);
    let concrete: Vec<&str> = path.split('/').collect();
    let (_, operations) = document["paths"]
        .as_object()
        .unwrap()
        .iter()
        .find(|(template, _)| {
            let parts: Vec<&str> = template.split('/').collect();
            parts.len() == concrete.len()
                && parts
                    .iter()
                    .zip(&concrete)
                    .all(|(t, c)| t.starts_with('{') || t == c)
        })
        .unwrap_or_else(|| panic!("{path} is not documented"));
    let content = &operations[method]["responses"][status.to_string()]["content"];
    &content
        .as_object()
        .and_then(|c| c.get("application/json"))
        .unwrap_or_else(|| panic!("{method} {path}: status {status} not documented"))["schema"]
}

#[test]
fn every_answer_of_a_session_matches_its_schema() {
    let server = Server::start();
    let (_, document) = server.call("GET", "/openapi.json", None, None);
    let steps: Vec<(&str, &str, Option<Value>)> = vec![
        (
            "POST",
            "/data/data-sources",
            Some(json!({"id": "ds", "name": "Stripe", "type": "stripe"})),
        ),
        (
            "POST",
            "/data/plans",
            Some(json!([
            {"id": "m", "name": "Monthly", "interval": "month", "currency": "USD"},
            {"id": "bad"}])),
        ),
        (
            "POST",
            "/data/customers",
            Some(json!({"customers": [
            {"id": "acme", "name": "Acme", "country": "DE", "custom_variables": {"industry": "saas"}}]})),
        ),
        (
            "POST",
            "/data/invoices",
            Some(json!([
            {"id": "i1", "customer_id": "acme", "type": "subscription", "plan_id": "m",
             "invoice_date": "2024-01-01", "amount": 3000, "currency": "USD"},
            {"id": "i2", "customer_id": "acme", "type": "subscription", "plan_id": "m",
             "invoice_date": "2024-02-01", "amount": 5000, "currency": "USD"}])),
        ),
        (
            "POST",
            "/data/plan-groups",
            Some(json!({"name": "G", "plans": ["m"]})),
        ),
        (
            "POST",
            "/data/fx-rates",
            Some(json!([{"date": "2024-01-01", "currency": "EUR", "rate": 0.9}])),
        ),
        (
            "POST",
            "/data-sources/ds/customers",
            Some(json!({"id": "c2", "name": "C2"})),
        ),
        ("GET", "/data/plans", None),
        ("GET", "/data/plans/m", None),
        ("GET", "/data/customers", None),
        ("GET", "/data/customers/acme", None),
        ("GET", "/data/invoices?customer=acme", None),
        ("GET", "/data/invoices/i1", None),
        ("GET", "/data/plan-groups", None),
        ("GET", "/data/plan-groups/pg_1", None),
        ("GET", "/data/data-sources", None),
        ("GET", "/data/data-sources/ds", None),
        ("GET", "/data/fx-rates", None),
        ("PUT", "/data/plans/m", Some(json!({"name": "Monthly 2"}))),
        (
            "PUT",
            "/data/customers/acme",
            Some(json!({"email": "a@acme.test"})),
        ),
        (
            "PUT",
            "/data/invoices/i1",
            Some(
                json!({"id": "i1", "customer_id": "acme", "type": "subscription",
            "plan_id": "m", "invoice_date": "2024-01-01", "amount": 3000, "currency": "USD"}),
            ),
        ),
        (
            "PUT",
            "/data/plan-groups/pg_1",
            Some(json!({"name": "G2", "plans": ["m"]})),
        ),
        ("PUT", "/data/data-sources/ds", Some(json!({"name": "S2"}))),
        ("GET", "/customers?as_of=2024-02-15", None),
        ("GET", "/customers/acme?as_of=2024-02-15", None),
        ("POST", "/customers/acme/resync", None),
        (
            "GET",
            "/movements?as_of=2024-02-15&kinds=new,expansion",
            None,
        ),
        ("GET", "/reports/summary?as_of=2024-02-15", None),
        (
            "GET",
            "/reports/mrr?as_of=2024-02-15&date=20240101-20240229",
            None,
        ),
        (
            "GET",
            "/reports/mrr-table?as_of=2024-02-15&date=20240101-20240229",
            None,
        ),
        (
            "GET",
            "/reports/movement-table?as_of=2024-02-15&date=20240101-20240229",
            None,
        ),
        ("GET", "/account", None),
        ("PUT", "/account", Some(json!({"name": "Acme analytics"}))),
        ("GET", "/profile", None),
        ("PUT", "/profile", Some(json!({"first_name": "Ada"}))),
        ("GET", "/account/billing", None),
        ("GET", "/account/team", None),
        ("GET", "/account/api-keys", None),
        (
            "POST",
            "/account/api-keys",
            Some(json!({"name": "dash", "role": "readonly"})),
        ),
        ("GET", "/settings/notifications", None),
        (
            "PUT",
            "/settings/notifications",
            Some(json!({"email": {"enabled": true}})),
        ),
        ("GET", "/settings/payment-platform", None),
        ("GET", "/settings/stripe", None),
        ("GET", "/session", None),
        ("GET", "/settings/crm", None),
        ("GET", "/settings/hubspot", None),
        ("GET", "/health", None),
        ("DELETE", "/data/plan-groups/pg_1", None),
        ("DELETE", "/data/invoices/i2", None),
        ("DELETE", "/data/customers/c2", None),
        ("DELETE", "/data/data-sources/ds", None),
        // Errors: each answers the Error schema.
        ("GET", "/data/plans/nobody", None),
        ("GET", "/reports/mrr?interval=hour", None),
        ("GET", "/reports/nope", None),
        ("DELETE", "/data/plans/m", None),
        ("PUT", "/data/plans", None),
    ];
    for (method, path, body) in steps {
        let (status, answer) = server.call(method, path, Some(OWNER_KEY), body.as_ref());
        let schema = answer_schema(&document, &method.to_lowercase(), path, status);
        if let Err(mismatch) = check(&document, schema, &answer, "answer") {
            panic!("{method} {path} ({status}): {mismatch}\n{answer}");
        }
    }
    // The reference page is HTML built from the same document.
    let page = ureq::get(format!("{}/docs", server.base))
        .call()
        .expect("GET /docs");
    assert_eq!(page.status(), 200);
    let text = page.into_body().read_to_string().expect("HTML");
    assert!(text.starts_with("<!doctype html>"));
    assert!(text.contains("id=\"op-listMovements\""));
}

/// A request and its answer's documentation: the method, the path as
/// documented and as sent, the body, the status and the media types listed
/// for that status.
type Case<'a> = (&'a str, &'a str, &'a str, Option<Value>, u16, Vec<&'a str>);

/// Every format an operation answers in, by `format` or `Accept`, is listed
/// in its success answer beside JSON, and an operation without a `format`
/// lists JSON alone: the media type of each real answer is one its status
/// documents.
#[test]
fn every_format_an_operation_answers_in_is_documented() {
    let server = Server::start();
    common::seed(&server);
    let (_, document) = server.call("GET", "/openapi.json", None, None);
    let (json, csv, arrow) = (
        "application/json",
        "text/csv",
        "application/vnd.apache.arrow.stream",
    );
    let source = json!({"id": "ds", "name": "Billing", "type": "api"});
    assert_eq!(server.post("/data/data-sources", source).0, 200);
    let plan = json!([{"id": "w", "name": "Weekly", "interval": "week", "currency": "USD"}]);
    let customer = json!([{"id": "C", "name": "Cee"}]);
    let invoice = json!([{"id": "c1", "customer_id": "C", "type": "subscription",
        "invoice_date": "2024-01-01", "amount": 700, "currency": "USD", "plan_id": "w"}]);
    let cases: Vec<Case> = vec![
        (
            "GET",
            "/reports/{name}",
            "/reports/summary?as_of=2024-02-01",
            None,
            200,
            vec![json, csv, arrow],
        ),
        (
            "GET",
            "/reports/{name}",
            "/reports/mrr?as_of=2024-02-01&format=csv",
            None,
            200,
            vec![json, csv, arrow],
        ),
        (
            "GET",
            "/reports/{name}",
            "/reports/mrr?as_of=2024-02-01&format=arrow",
            None,
            200,
            vec![json, csv, arrow],
        ),
        (
            "GET",
            "/movements",
            "/movements?as_of=2024-02-01&format=arrow",
            None,
            200,
            vec![json, arrow],
        ),
        (
            "GET",
            "/movements",
            "/movements?as_of=2024-02-01",
            None,
            200,
            vec![json, arrow],
        ),
        (
            "POST",
            "/data/plans",
            "/data/plans?format=arrow",
            Some(plan),
            200,
            vec![json, arrow],
        ),
        (
            "POST",
            "/data/customers",
            "/data/customers?format=arrow",
            Some(customer),
            201,
            vec![json, arrow],
        ),
        (
            "POST",
            "/data/invoices",
            "/data/invoices?format=arrow",
            Some(invoice),
            200,
            vec![json, arrow],
        ),
        (
            "POST",
            "/data-sources/{source}/{collection}",
            "/data-sources/ds/customers?format=arrow",
            Some(json!({"id": "D", "name": "Dee"})),
            200,
            vec![json, arrow],
        ),
        ("GET", "/data/plans", "/data/plans", None, 200, vec![json]),
        (
            "POST",
            "/data/data-sources",
            "/data/data-sources",
            Some(json!({"id": "ds2", "name": "B", "type": "api"})),
            200,
            vec![json],
        ),
    ];
    for (method, template, path, body, status, listed) in cases {
        let content = &document["paths"][template][method.to_lowercase()]["responses"]
            [status.to_string()]["content"];
        let documented: Vec<&str> = content
            .as_object()
            .map(|c| c.keys().map(String::as_str).collect())
            .unwrap_or_default();
        assert_eq!(documented, listed, "{method} {template}");
        let body = body.map(|b| b.to_string().into_bytes()).unwrap_or_default();
        let (answered, media, answer) = server.send(method, path, &[], body);
        let media = media.split(';').next().unwrap_or_default().trim();
        assert_eq!(
            answered,
            status,
            "{method} {path}: {}",
            String::from_utf8_lossy(&answer)
        );
        assert!(
            documented.contains(&media),
            "{method} {path} answered {media}, not among {documented:?}"
        );
        if media != json {
            assert_eq!(
                content[media]["schema"]["type"], "string",
                "{method} {template}"
            );
        }
    }
}

/// Every operation that needs no key refuses a query parameter it does not
/// take with a 400 naming it, without a key too, and its description lists
/// that 400.
#[test]
fn every_public_operation_documents_the_400_it_answers_without_a_key() {
    let server = Server::start();
    let (_, document) = server.call("GET", "/openapi.json", None, None);
    let mut public = Vec::new();
    for (template, operations) in document["paths"].as_object().unwrap() {
        for (method, operation) in operations.as_object().unwrap() {
            if operation["security"] != json!([]) {
                continue;
            }
            let path = template
                .replace("{account}", "1")
                .replace("{token}", "inv_unknown");
            let (status, answer) =
                server.call(&method.to_uppercase(), &format!("{path}?zzz=1"), None, None);
            assert_eq!(
                (status, &answer["code"], &answer["field"]),
                (400, &json!("bad_request"), &json!("zzz")),
                "{method} {template}: {answer}"
            );
            let schema = answer_schema(&document, method, template, 400);
            if let Err(mismatch) = check(&document, schema, &answer, "answer") {
                panic!("{method} {template}: {mismatch}");
            }
            public.push(format!(
                "{method} {template}: {}",
                operation["responses"]["400"]["description"]
                    .as_str()
                    .unwrap()
            ));
        }
    }
    let keyless_get = "A query parameter the endpoint does not take, or one given twice \
                       (named in `field`), or a body, which the endpoint does not read";
    let login = "Invalid input; the error names the field";
    let webhook = "A body or signature that does not check out, or a query parameter the \
                   endpoint does not take; the error names the field, header or parameter";
    assert_eq!(
        public,
        [
            format!("get /: {keyless_get}"),
            format!("get /health: {keyless_get}"),
            format!("get /openapi.json: {keyless_get}"),
            format!("get /docs: {keyless_get}"),
            format!("post /webhooks/stripe/{{account}}: {webhook}"),
            format!("get /reports: {keyless_get}"),
            format!("post /session: {login}"),
            format!("get /session: {keyless_get}"),
            format!("get /invitations/{{token}}: {login}"),
            format!("post /invitations/{{token}}: {login}"),
        ]
    );
}

/// The answers that hold null where a value of an enum or a component
/// schema stands otherwise match the description as a strict OpenAPI 3.0
/// validator reads it: a session by key or by no one (`user: null`), one
/// by a team member, and a payment platform never connected (`platform`
/// and `sync_status` null).
#[test]
fn nulls_beside_enums_and_references_are_described_as_validators_read_them() {
    let server = Server::start();
    let (_, document) = server.call("GET", "/openapi.json", None, None);
    let schemas = &document["components"]["schemas"];
    assert_eq!(
        schemas["Session"]["properties"]["user"],
        json!({"oneOf": [
            {"$ref": "#/components/schemas/TeamMember"},
            {"type": "object", "nullable": true, "enum": [null]},
        ]})
    );
    let platform = &schemas["PaymentPlatformSettings"]["properties"];
    assert_eq!(
        platform["platform"],
        json!({"type": "string", "enum": ["stripe", null], "nullable": true})
    );
    assert_eq!(
        platform["sync_status"],
        json!({"type": "string", "enum": ["syncing", "complete", "error", null], "nullable": true})
    );
    let (status, invitation) = server.post(
        "/account/team",
        json!({"email": "ada@example.test", "role": "admin"}),
    );
    assert_eq!(status, 201, "{invitation}");
    let accept = format!("/invitations/{}", invitation["token"].as_str().unwrap());
    let answers = [
        (
            "get",
            "/settings/payment-platform",
            server.get("/settings/payment-platform"),
        ),
        ("get", "/session", server.get("/session")),
        (
            "get",
            "/session",
            server.call("GET", "/session", None, None),
        ),
        (
            "post",
            "/invitations/{token}",
            server.call(
                "POST",
                &accept,
                None,
                Some(&json!({"password": "a long password"})),
            ),
        ),
    ];
    let nulls = [
        json!([null, null]),
        json!([null, "owner"]),
        json!([null, null]),
        json!(["ada@example.test", "admin"]),
    ];
    for ((method, template, (status, answer)), expected) in answers.iter().zip(nulls) {
        let shown = if *template == "/settings/payment-platform" {
            json!([answer["platform"], answer["sync_status"]])
        } else {
            json!([answer["user"]["email"], answer["account"]["role"]])
        };
        assert_eq!(shown, expected, "{method} {template}: {answer}");
        let schema = answer_schema(&document, method, template, *status);
        if let Err(mismatch) = check(&document, schema, answer, "answer") {
            panic!("{method} {template} ({status}): {mismatch}\n{answer}");
        }
    }
}
