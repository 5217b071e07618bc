//! The schemas of `GET /` and `GET /reports`.

use super::{answer, array_of, reference, string};
use serde_json::{Value, json};

/// `GET /` and `GET /reports`: where to start, and every report with the
/// parameters it takes and the columns it answers.
pub(super) fn discovery_schemas() -> Value {
    json!({
        "Index": answer(json!({
            "name": string(), "openapi": string(), "health": string(), "reports": string(),
        })),
        "ReportParameter": answer(json!({"name": string(), "accepts": string()})),
        "ReportColumn": {
            "type": "object",
            "description": "One column of a report's rows: what it holds. Money is in integer cents (hundredths, in every currency) of the report's currency (`currency: report`) or of the row's `currency` column (`currency: row`); `object`, `list`, `groups` and `percents` describe their `fields`; `metric` is a `*-table` period cell, of its row's metric's kind.",
            "properties": {
                "name": string(),
                "kind": {"type": "string", "enum": [
                    "money", "count", "percent", "number", "date", "timestamp", "text",
                    "boolean", "texts", "object", "list", "groups", "percents", "metric",
                ]},
                "currency": {"type": "string", "enum": ["report", "row"]},
                "fields": array_of(reference("ReportColumn")),
            },
            "required": ["name", "kind"],
        },
        "ReportColumns": answer(json!({
            "shape": {"type": "string", "enum": ["rows", "by_metric"]},
            "columns": array_of(reference("ReportColumn")),
        })),
        "ReportDescription": answer(json!({
            "name": string(),
            "parameters": array_of(reference("ReportParameter")),
            "columns": reference("ReportColumns"),
        })),
        "ReportCatalogue": answer(json!({"reports": array_of(reference("ReportDescription"))})),
    })
}
