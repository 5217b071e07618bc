//! The API reference page served at `GET /docs`: the OpenAPI document
//! rendered to one self-contained HTML page (no script, no stylesheet or
//! font from elsewhere), so it works offline and shows exactly what
//! `/openapi.json` describes.

use serde_json::Value;
use std::fmt::Write;

/// `text` with the HTML special characters escaped.
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// A schema in one line: a link for a reference, the type otherwise.
fn schema_summary(schema: &Value) -> String {
    if let Some(target) = schema.get("$ref").and_then(Value::as_str) {
        let name = target.rsplit('/').next().unwrap_or(target);
        return format!("<a href=\"#schema-{0}\">{0}</a>", escape(name));
    }
    if let Some(options) = schema.get("oneOf").and_then(Value::as_array) {
        let parts: Vec<String> = options.iter().map(schema_summary).collect();
        return parts.join(" | ");
    }
    if schema.get("enum") == Some(&serde_json::json!([null])) {
        return "null".into();
    }
    let kind = schema.get("type").and_then(Value::as_str).unwrap_or("any");
    let mut text = match kind {
        "array" => format!(
            "array of {}",
            schema
                .get("items")
                .map(schema_summary)
                .unwrap_or_else(|| "any".into())
        ),
        "object" => match schema.get("additionalProperties") {
            Some(values @ Value::Object(_)) if schema.get("properties").is_none() => {
                format!("map of {}", schema_summary(values))
            }
            _ if schema.get("properties").is_some() => "object (below)".into(),
            _ => "object".into(),
        },
        other => escape(other),
    };
    if let Some(values) = schema.get("enum").and_then(Value::as_array) {
        let values: Vec<String> = values
            .iter()
            .filter_map(Value::as_str)
            .map(escape)
            .collect();
        let _ = write!(text, ": {}", values.join(", "));
    }
    if schema.get("nullable") == Some(&Value::Bool(true)) {
        text.push_str(" or null");
    }
    text
}

/// The properties of an object schema as a table, nested objects inline.
fn properties_table(out: &mut String, schema: &Value) {
    let Some(properties) = schema.get("properties").and_then(Value::as_object) else {
        return;
    };
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|names| names.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    out.push_str("<table><tr><th>field</th><th>type</th><th>required</th><th>notes</th></tr>");
    for (name, property) in properties {
        let _ = write!(
            out,
            "<tr><td><code>{}</code></td><td>{}</td><td>{}</td><td>{}",
            escape(name),
            schema_summary(property),
            if required.contains(&name.as_str()) {
                "yes"
            } else {
                ""
            },
            escape(
                property
                    .get("description")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
            ),
        );
        if property.get("properties").is_some() {
            properties_table(out, property);
        }
        out.push_str("</td></tr>");
    }
    out.push_str("</table>");
}

const STYLE: &str = "body{font-family:system-ui,sans-serif;max-width:72rem;margin:2rem auto;padding:0 1rem;color:#222}\
code{background:#f3f3f3;padding:0 .2rem}table{border-collapse:collapse;margin:.5rem 0}\
td,th{border:1px solid #ddd;padding:.2rem .5rem;text-align:left;vertical-align:top}\
.method{display:inline-block;min-width:4rem;font-weight:bold;text-transform:uppercase}\
section.op{border-top:1px solid #ccc;padding:.5rem 0}h3{margin:.3rem 0}";

/// The reference page of `document`.
pub fn render(document: &Value) -> String {
    let info = &document["info"];
    let mut out = String::new();
    let _ = write!(
        out,
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>{} API reference</title><style>{STYLE}</style></head><body>",
        escape(info["title"].as_str().unwrap_or_default())
    );
    let _ = write!(
        out,
        "<h1>{} API {}</h1><p>{}</p><p>Authentication: <code>Authorization: Bearer &lt;key&gt;</code> on every endpoint unless marked public. The machine-readable description: <a href=\"/openapi.json\">/openapi.json</a>.</p>",
        escape(info["title"].as_str().unwrap_or_default()),
        escape(info["version"].as_str().unwrap_or_default()),
        escape(info["description"].as_str().unwrap_or_default()),
    );
    out.push_str("<h2>Endpoints</h2>");
    let empty = serde_json::Map::new();
    let paths = document["paths"].as_object().unwrap_or(&empty);
    for (path, methods) in paths {
        for (method, operation) in methods.as_object().unwrap_or(&empty) {
            let id = operation["operationId"].as_str().unwrap_or_default();
            let public = operation.get("security") == Some(&Value::Array(Vec::new()));
            let _ = write!(
                out,
                "<section class=\"op\" id=\"op-{0}\"><h3><span class=\"method\">{1}</span> <code>{2}</code>{3}</h3><p>{4} <small>(<code>{0}</code>)</small></p>",
                escape(id),
                escape(method),
                escape(path),
                if public { " <small>public</small>" } else { "" },
                escape(operation["summary"].as_str().unwrap_or_default()),
            );
            if let Some(description) = operation["description"].as_str() {
                let _ = write!(out, "<p>{}</p>", escape(description));
            }
            if let Some(parameters) = operation["parameters"].as_array().filter(|p| !p.is_empty()) {
                out.push_str(
                    "<table><tr><th>parameter</th><th>in</th><th>type</th><th>notes</th></tr>",
                );
                for parameter in parameters {
                    let _ = write!(
                        out,
                        "<tr><td><code>{}</code></td><td>{}</td><td>{}</td><td>{}</td></tr>",
                        escape(parameter["name"].as_str().unwrap_or_default()),
                        escape(parameter["in"].as_str().unwrap_or_default()),
                        schema_summary(&parameter["schema"]),
                        escape(parameter["description"].as_str().unwrap_or_default()),
                    );
                }
                out.push_str("</table>");
            }
            if let Some(schema) = operation.pointer("/requestBody/content/application~1json/schema")
            {
                let _ = write!(out, "<p>Body: {}</p>", schema_summary(schema));
            }
            out.push_str("<table><tr><th>status</th><th>answer</th></tr>");
            for (status, response) in operation["responses"].as_object().unwrap_or(&empty) {
                let schema = response["content"]
                    .as_object()
                    .and_then(|content| content.values().next())
                    .map(|media| schema_summary(&media["schema"]))
                    .unwrap_or_default();
                let _ = write!(
                    out,
                    "<tr><td>{}</td><td>{} {}</td></tr>",
                    escape(status),
                    escape(response["description"].as_str().unwrap_or_default()),
                    schema,
                );
            }
            out.push_str("</table></section>");
        }
    }
    out.push_str("<h2>Schemas</h2>");
    for (name, schema) in document["components"]["schemas"]
        .as_object()
        .unwrap_or(&empty)
    {
        let _ = write!(
            out,
            "<section class=\"op\" id=\"schema-{0}\"><h3>{0}</h3>",
            escape(name)
        );
        if let Some(description) = schema["description"].as_str() {
            let _ = write!(out, "<p>{}</p>", escape(description));
        }
        if schema.get("properties").is_some() {
            properties_table(&mut out, schema);
        } else {
            let _ = write!(out, "<p>{}</p>", schema_summary(schema));
        }
        out.push_str("</section>");
    }
    out.push_str("</body></html>");
    out
}
