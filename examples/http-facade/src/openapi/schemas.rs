//! The schemas of the OpenAPI document: every request and response body the
//! service reads or answers, as it reads or answers it. Record inputs name
//! each field by its canonical name and mention its aliases; the service
//! also accepts fields it does not know (they are ignored), so inputs stay
//! open. Responses list every field the service writes, with `nullable`
//! where it writes `null`.

mod discovery;
mod sessions;
mod webhooks;

use serde_json::{Map, Value, json};

/// A reference to a component schema.
pub fn reference(name: &str) -> Value {
    json!({ "$ref": format!("#/components/schemas/{name}") })
}

fn string() -> Value {
    json!({"type": "string"})
}

/// The id of a record to store: a string with something besides blanks
/// (a blank id is refused as missing).
fn record_id() -> Value {
    json!({"type": "string", "minLength": 1, "pattern": "\\S"})
}

fn nullable_string() -> Value {
    json!({"type": "string", "nullable": true})
}

/// One of `values`, or null. OpenAPI 3.0's `nullable` adds null to the
/// type only: an `enum` must list null itself.
fn nullable_enum(values: &[&str]) -> Value {
    let mut listed: Vec<Value> = values.iter().map(|value| json!(value)).collect();
    listed.push(Value::Null);
    json!({"type": "string", "enum": listed, "nullable": true})
}

/// The component schema `name`, or null. In OpenAPI 3.0 `nullable` only
/// counts beside a `type`, and a `$ref` takes no siblings, so null is an
/// option of its own.
fn nullable_reference(name: &str) -> Value {
    json!({"oneOf": [reference(name), {"type": "object", "nullable": true, "enum": [null]}]})
}

fn integer() -> Value {
    json!({"type": "integer", "format": "int64"})
}

fn nullable_number() -> Value {
    json!({"type": "number", "nullable": true})
}

fn array_of(items: Value) -> Value {
    json!({"type": "array", "items": items})
}

fn string_map() -> Value {
    json!({"type": "object", "additionalProperties": {"type": "string"}})
}

/// An object of the given properties, all of them required (the service
/// always writes every field of its answers, `null` included).
fn answer(properties: Value) -> Value {
    let required: Vec<Value> = properties
        .as_object()
        .map(|fields| fields.keys().map(|k| json!(k)).collect())
        .unwrap_or_default();
    json!({"type": "object", "properties": properties, "required": required})
}

/// An input object: `required` fields must be there, others may; fields
/// the service does not know are ignored.
fn input(description: &str, properties: Value, required: &[&str]) -> Value {
    let mut schema = json!({
        "type": "object",
        "description": description,
        "properties": properties,
        "additionalProperties": true,
    });
    // OpenAPI 3.0 forbids an empty `required` list: none is left out.
    if !required.is_empty() {
        schema["required"] = json!(required);
    }
    schema
}

/// `fields` with each alias given the schema of the field it stands for.
fn with_aliases(fields: &Value, aliases: &[(&str, &str)]) -> Value {
    let mut all = fields.clone();
    for (alias, field) in aliases {
        all[*alias] = fields[*field].clone();
    }
    all
}

/// The body of a settings or account request: exactly its fields, any
/// other refused (records, [`input`], may carry more).
fn closed_input(description: &str, properties: Value, required: &[&str]) -> Value {
    let mut schema = input(description, properties, required);
    schema["additionalProperties"] = json!(false);
    schema
}

/// `{count, list: [item]}`: a page of a list and how many there are in all.
fn page_of(item: &str) -> Value {
    json!({
        "type": "object",
        "properties": {
            "count": {"type": "integer", "description": "How many items there are in all, before paging"},
            "list": array_of(reference(item)),
        },
        "required": ["count", "list"],
    })
}

/// `{result: {count, list}}`: the answer of a list endpoint.
fn list_answer(page: &str) -> Value {
    answer(json!({"result": reference(page)}))
}

/// The request body of a record write: one record, an array of records, or
/// a batch object `{collection: [...]}`.
pub fn records_body(input: &str, collection: &str) -> Value {
    json!({"oneOf": [
        reference(input),
        array_of(reference(input)),
        {
            "type": "object",
            "properties": {collection: array_of(reference(input))},
            "required": [collection],
        },
    ]})
}

/// The error codes the service answers with.
pub const ERROR_CODES: &[&str] = &[
    "bad_request",
    "invalid_record",
    "invalid_query",
    "invalid_setting",
    "missing_fx_rate",
    "out_of_range",
    "unauthorized",
    "forbidden",
    "not_found",
    "unknown_report",
    "method_not_allowed",
    "not_acceptable",
    "conflict",
    "payload_too_large",
    "unsupported_media_type",
    "uri_too_long",
    "headers_too_large",
    "request_timeout",
    "rate_limited",
    "upstream",
    "unavailable",
    "storage_unavailable",
    "internal",
];

/// Every component schema by name.
pub fn components() -> Map<String, Value> {
    let plan_fields = json!({
        "id": string(),
        "name": string(),
        "billing_freq": {"type": "string", "enum": ["day", "week", "month", "year"]},
        "billing_freq_count": integer(),
        "currency": string(),
        "product_name": nullable_string(),
        "data_source": nullable_string(),
        "pricing_model": {"type": "string", "enum": ["licensed", "metered"]},
    });
    let customer_fields = json!({
        "id": string(),
        "name": nullable_string(),
        "email": nullable_string(),
        "created_date": nullable_string(),
        "country": nullable_string(),
        "currency": nullable_string(),
        "status": nullable_string(),
        "trial_started": nullable_string(),
        "paid_started": nullable_string(),
        "trial_end_date": nullable_string(),
        "cancel_date": nullable_string(),
        "overdue_date": nullable_string(),
        "cancel_reason": nullable_string(),
        "custom_variables": string_map(),
        "data_source": nullable_string(),
    });
    let mut customer_detail_fields = customer_fields.clone();
    customer_detail_fields["current_mrr"] = json!({
        "type": "object",
        "description": "MRR per currency code, in cents",
        "additionalProperties": integer(),
    });
    let analytics_customer_fields = json!({
        "id": string(),
        "name": nullable_string(),
        "email": nullable_string(),
        "created_date": nullable_string(),
        "country": nullable_string(),
        "trial_started": nullable_string(),
        "paid_started": nullable_string(),
        "cancel_date": nullable_string(),
        "status": string(),
        "currency": nullable_string(),
    });
    let mut analytics_item = analytics_customer_fields.clone();
    analytics_item["mrr"] = integer();
    let mut analytics_detail = analytics_customer_fields;
    analytics_detail["current_subscriptions"] = array_of(reference("CurrentSubscription"));
    analytics_detail["converted_mrr"] = integer();
    analytics_detail["converted_currency"] = string();
    analytics_detail["custom_variables"] = string_map();
    let data_source = answer(json!({"id": string(), "name": string(), "type": string()}));
    let movement_kind = json!({"type": "string", "enum": ["new", "expansion", "contraction", "churn", "reactivation"]});
    let mrr_period = answer(json!({
        "date": string(), "end_date": string(),
        "new": integer(), "expansion": integer(), "contraction": integer(), "churn": integer(),
        "reactivation": integer(), "mrr_diff": integer(), "customers_diff": integer(),
        "start_mrr": integer(), "start_customers": integer(), "total_mrr": integer(),
        "total_arr": integer(), "total_customers": integer(), "arpa": integer(), "asp": integer(),
        "quick_ratio": nullable_number(), "customer_churn_rate": nullable_number(),
        "mrr_churn_rate": nullable_number(), "net_mrr_churn_rate": nullable_number(),
        "customer_retention_rate": nullable_number(), "mrr_retention_rate": nullable_number(),
        "nrr": nullable_number(), "customer_churn_avg": nullable_number(),
        "ltv": nullable_number(), "customer_lifetime": nullable_number(),
        "fx_adjustment": integer(),
    }));
    let mut mrr_period = mrr_period;
    mrr_period["properties"]["breakdown"] = json!({
        "type": "object",
        "description": "With a `breakdown` parameter: the period's figures per value",
        "additionalProperties": {"type": "object"},
    });
    let mut movement_row = answer(json!({
        "date": string(), "movement_date": string(), "currency": string(),
        "customer_id": string(), "customer_name": nullable_string(), "customer_email": nullable_string(),
        "type": movement_kind.clone(), "subtype": string(), "description": string(),
        "mrr_change": integer(), "mrr_change_base_currency": integer(),
        "customer_count_change": integer(), "quantity_change": integer(),
        "plans_before": array_of(string()), "plans_after": array_of(string()),
    }));
    movement_row["properties"]["lines"] = array_of(answer(json!({
        "description": string(), "mrr": integer(), "quantity": integer(),
    })));

    let mut schemas = Map::new();
    extend(
        &mut schemas,
        json!({
        "Error": {
            "type": "object",
            "description": "Every error answer: a message, a stable code, and the record id and field at fault when one is; a 5xx answer carries the id its cause is logged under instead of the cause",
            "properties": {
                "error": string(),
                "code": {"type": "string", "enum": ERROR_CODES},
                "id": string(),
                "field": {"type": "string", "description": "The query or path parameter, header or body field at fault, as the request named it: `Accept` on every 406, `Content-Encoding` or `Content-Type` on a 415"},
                "error_id": {"type": "string", "description": "On a 5xx answer: the id under which the cause is logged"},
            },
            "required": ["error", "code"],
        },
        "Health": {
            "type": "object",
            "description": "`ok`, or (with status 503) `degraded` with why the database cannot take writes",
            "properties": {
                "status": {"type": "string", "enum": ["ok", "degraded"]},
                "storage": string(),
            },
            "required": ["status"],
        },
        "OpenApiDocument": {"type": "object", "description": "This OpenAPI 3 document", "additionalProperties": true},
        "Success": answer(json!({"success": {"type": "boolean"}, "id": string()})),
        "ImportResult": {
            "type": "object",
            "description": "One record's outcome: its id (its `id`, else `external_id`), whether it was stored, and why not",
            "properties": {
                "id": string(),
                "import_status": {"type": "string", "enum": ["inserted", "error"]},
                "import_error": string(),
            },
            "required": ["id", "import_status"],
        },
        "ImportResults": answer(json!({"result": array_of(reference("ImportResult"))})),
        "ImportResultPage": page_of("ImportResult"),
        "CustomerImportResults": answer(json!({"result": reference("ImportResultPage")})),
        }),
    );
    extend(
        &mut schemas,
        json!({
        "PlanInput": input(
            "A plan to store; `interval` and `interval_count` are aliases of `billing_freq` and `billing_freq_count`, `external_id` of `id`, `data_source_id` of `data_source`",
            json!({
                "id": record_id(),
                "name": string(),
                "billing_freq": {"type": "string", "enum": ["day", "week", "month", "year"], "description": "Also daily, weekly, monthly, yearly, annual"},
                "billing_freq_count": {"type": "integer", "minimum": 1, "default": 1},
                "currency": string(),
                "product_name": nullable_string(),
                "data_source": nullable_string(),
                "pricing_model": {"type": "string", "enum": ["licensed", "metered"], "default": "licensed"},
            }),
            &["id", "name", "currency"],
        ),
        "PlanPatch": closed_input(
            "Fields of a plan to change, by their names or aliases (`interval`, `interval_count`, `external_id`, `data_source_id`); any other field is refused",
            with_aliases(&plan_fields, &[("interval", "billing_freq"), ("interval_count", "billing_freq_count"), ("external_id", "id"), ("data_source_id", "data_source")]),
            &[],
        ),
        "Plan": answer(plan_fields),
        "PlanPage": page_of("Plan"),
        "PlanList": list_answer("PlanPage"),
        "PlanUpdated": answer(json!({"result": {"type": "string", "enum": ["ok"]}, "updated": string()})),
        "PlanDeleted": answer(json!({"result": {"type": "string", "enum": ["ok"]}, "deleted": string()})),
        }),
    );
    extend(
        &mut schemas,
        json!({
        "CustomerInput": input(
            "A customer to store; `created` is an alias of `created_date`, `metadata` of `custom_variables`, `external_id` of `id`",
            json!({
                "id": record_id(),
                "name": string(),
                "email": nullable_string(),
                "created_date": nullable_string(),
                "country": {"type": "string", "nullable": true, "pattern": "^\\s*([A-Za-z]{2})?\\s*$",
                            "description": "A two-letter country code (ISO 3166-1 alpha-2) in any case, stored upper-cased; a country name is rejected"},
                "currency": nullable_string(),
                "status": nullable_string(),
                "trial_started": nullable_string(),
                "paid_started": nullable_string(),
                "trial_end_date": nullable_string(),
                "cancel_date": nullable_string(),
                "overdue_date": nullable_string(),
                "cancel_reason": nullable_string(),
                "custom_variables": {"type": "object", "additionalProperties": true},
                "data_source": nullable_string(),
            }),
            &["id"],
        ),
        "CustomerPatch": closed_input(
            "Fields of a customer to change, by their names or aliases (`created`, `metadata`, `external_id`, `data_source_id`); custom_variables merge, and any other field is refused",
            with_aliases(&customer_fields, &[("created", "created_date"), ("metadata", "custom_variables"), ("external_id", "id"), ("data_source_id", "data_source")]),
            &[],
        ),
        "Customer": answer(customer_fields),
        "CustomerDetail": answer(customer_detail_fields),
        "CustomerPage": page_of("Customer"),
        "CustomerList": list_answer("CustomerPage"),
        "CustomerUpdated": answer(json!({"success": {"type": "boolean"}, "result": reference("CustomerDetail")})),
        }),
    );
    // What an invoice holds, as the service stores and lists it.
    let invoice_fields = json!({
        "id": string(),
        "customer_id": string(),
        "type": {"type": "string", "enum": ["subscription", "one-time", "refund", "cancellation"]},
        "invoice_date": string(),
        "amount": integer(),
        "currency": string(),
        "plan_id": nullable_string(),
        "period_start": nullable_string(),
        "period_end": nullable_string(),
        "subscription_id": nullable_string(),
        "quantity": integer(),
        "status": {"type": "string", "enum": ["paid", "open", "failed", "void"]},
        "due_date": nullable_string(),
        "payment_date": nullable_string(),
        "payment_method": nullable_string(),
        "description": nullable_string(),
        "invoice_number": nullable_string(),
        "tax_amount": integer(),
        "discount_amount": integer(),
        "lines": array_of(json!({"type": "object", "additionalProperties": true})),
        "transactions": array_of(json!({"type": "object", "additionalProperties": true})),
        "refunded_invoice_id": nullable_string(),
        "data_source": nullable_string(),
    });
    let mut invoice_input = invoice_fields.clone();
    invoice_input["id"] = record_id();
    invoice_input["customer_id"] = record_id();
    extend(
        &mut schemas,
        json!({
        "InvoiceInput": input(
            "An invoice to store (SEMANTICS: amounts in cents); aliases: `external_id` for `id`, `customer_external_id` or `customer` for `customer_id`, `date` for `invoice_date`, `amount_in_cents` for `amount`, `service_period_start`/`service_period_end`, `subscription_external_id`, `number`, `paid_date`, `tax`, `discount`, `line_items`, `data_source_id`",
            invoice_input,
            &["id", "customer_id", "type", "invoice_date", "amount", "currency"],
        ),
        "Invoice": answer(invoice_fields),
        "InvoicePage": page_of("Invoice"),
        "InvoiceList": list_answer("InvoicePage"),
        }),
    );
    extend(
        &mut schemas,
        json!({
        "PlanGroupInput": input(
            "A plan group: its name and the ids of its plans, which must exist (`[]` for none; the service assigns the id)",
            json!({"name": string(), "plans": array_of(string())}),
            &["name", "plans"],
        ),
        "PlanGroupPlan": answer(json!({
            "id": string(), "name": string(),
            "billing_freq": {"type": "string", "enum": ["day", "week", "month", "year"]},
            "billing_freq_count": integer(), "product_name": nullable_string(), "currency": string(),
        })),
        "PlanGroup": answer(json!({"id": string(), "name": string(), "plans": array_of(reference("PlanGroupPlan"))})),
        "PlanGroupPage": page_of("PlanGroup"),
        "PlanGroupList": list_answer("PlanGroupPage"),
        }),
    );
    extend(
        &mut schemas,
        json!({
        "DataSourceInput": input(
            "A data source; `kind` is an alias of `type`",
            json!({"id": record_id(), "name": string(), "type": string()}),
            &["id"],
        ),
        "DataSourcePatch": closed_input("A data source's new name and/or type", json!({"name": string(), "type": string()}), &[]),
        "DataSource": data_source,
        "DataSourcePage": page_of("DataSource"),
        "DataSourceList": list_answer("DataSourcePage"),
        }),
    );
    extend(
        &mut schemas,
        json!({
        "FxRate": answer(json!({
            "date": string(),
            "currency": string(),
            "rate": {"type": "number", "description": "Units of `currency` per unit of the account's FX pivot"},
        })),
        "FxRateInput": {
            "oneOf": [reference("FxRate"), array_of(reference("FxRate"))],
        },
        "FxRatePage": page_of("FxRate"),
        "FxRateList": list_answer("FxRatePage"),
        "FxRatesLoaded": answer(json!({"success": {"type": "boolean"}, "loaded": integer()})),
        }),
    );
    extend(
        &mut schemas,
        json!({
        "AnalyticsCustomer": answer(analytics_item),
        "AnalyticsCustomerPage": page_of("AnalyticsCustomer"),
        "AnalyticsCustomerList": list_answer("AnalyticsCustomerPage"),
        "CurrentSubscription": answer(json!({
            "subscription_id": nullable_string(), "plan_id": string(), "name": string(),
            "billing_freq": string(), "billing_freq_count": integer(), "currency": string(),
            "mrr": integer(), "quantity": integer(),
        })),
        "AnalyticsCustomerDetail": answer(analytics_detail),
        "Message": answer(json!({"message": string()})),
        }),
    );
    extend(
        &mut schemas,
        json!({
        "Movement": answer(json!({
            "date": string(), "customer_id": string(), "type": movement_kind,
            "subtype": string(), "mrr_change": integer(), "mrr_change_base_currency": integer(),
            "customer_count_change": integer(), "quantity_change": integer(), "currency": string(),
            "plans_before": array_of(string()), "plans_after": array_of(string()),
        })),
        "MovementList": answer(json!({"result": array_of(reference("Movement"))})),
        }),
    );
    extend(
        &mut schemas,
        json!({
        "Account": answer(json!({
            "id": string(), "name": string(), "created": string(),
            "base_currency": string(), "timezone": string(),
            "first_day_of_week": {"type": "integer", "minimum": 0, "maximum": 6},
            "churn_grace_days": integer(),
            "refund_handling": string(),
            "data_sources": array_of(reference("DataSource")),
        })),
        "AccountPatch": closed_input(
            "The account name and ledger settings to change; a settings change recomputes every customer",
            json!({
                "name": string(), "base_currency": string(), "timezone": string(),
                "first_day_of_week": {"type": "integer", "minimum": 0, "maximum": 6},
                "churn_grace_days": {"type": "integer", "minimum": 0},
                "refund_handling": string(),
            }),
            &[],
        ),
        "ProfileAccount": answer(json!({"id": string(), "name": string(), "role": {"type": "string", "enum": ["owner", "admin", "readonly"]}})),
        "Profile": {
            "type": "object",
            "properties": {
                "first_name": string(), "last_name": string(), "email": string(), "locale": string(),
                "picture": nullable_string(),
                "provider": {"type": "string", "enum": ["google", "microsoft", "credentials"]},
                "verified": {"type": "boolean"},
                "accounts": {"type": "array", "items": reference("ProfileAccount"), "description": "In `GET /profile` only"},
            },
            "required": ["first_name", "last_name", "email", "locale", "picture", "provider", "verified"],
        },
        "ProfilePatch": closed_input(
            "The writable fields of the profile",
            json!({"first_name": string(), "last_name": string(), "locale": string()}),
            &[],
        ),
        "Billing": answer(json!({
            "plan": {"type": "string", "enum": ["free", "starter", "growth", "scale"]},
            "status": {"type": "string", "enum": ["active", "past_due", "cancelled"]},
            "billing_cycle": {"type": "string", "enum": ["monthly", "yearly"]},
            "current_period_start": string(), "current_period_end": string(),
            "mrr_limit": integer(), "current_mrr": integer(),
            "customer_limit": integer(), "current_customers": integer(),
        })),
        "TeamMember": {
            "type": "object",
            "description": "A user of the account, or a pending invitation (which also has `expires`)",
            "properties": {
                "id": string(), "name": string(), "email": string(),
                "role": {"type": "string", "enum": ["owner", "admin", "readonly"]},
                "status": {"type": "string", "enum": ["active", "pending", "disabled"]},
                "last_login": nullable_string(),
                "created": string(),
                "expires": string(),
            },
            "required": ["id", "name", "email", "role", "status", "last_login", "created"],
        },
        "TeamMemberPage": page_of("TeamMember"),
        "TeamMemberList": list_answer("TeamMemberPage"),
        "ApiKey": answer(json!({
            "id": string(), "name": string(),
            "role": {"type": "string", "enum": ["owner", "admin", "readonly"]},
            "created": string(), "revoked": {"type": "boolean"},
        })),
        "ApiKeyPage": page_of("ApiKey"),
        "ApiKeyList": list_answer("ApiKeyPage"),
        "ApiKeyInput": {
            "type": "object",
            "properties": {
                "name": {"type": "string", "default": "api key"},
                "role": {"type": "string", "enum": ["owner", "admin", "readonly"], "default": "readonly"},
            },
            "additionalProperties": false,
        },
        "NewApiKey": answer(json!({
            "id": string(), "name": string(),
            "role": {"type": "string", "enum": ["owner", "admin", "readonly"]},
            "created": string(),
            "key": {"type": "string", "description": "The key itself, shown only in this answer"},
        })),
        }),
    );
    extend(
        &mut schemas,
        json!({
        "NotificationSettings": answer(json!({
            "email": answer(json!({"enabled": {"type": "boolean"}, "recipients": array_of(string()), "frequency": string()})),
            "slack": answer(json!({"enabled": {"type": "boolean"}, "channel": string(), "events": array_of(string())})),
            "alerts": answer(json!({"churn_threshold": nullable_number(), "mrr_drop_threshold": nullable_number()})),
        })),
        "NotificationSettingsPatch": {
            "type": "object",
            "description": "Parts of the notification settings to change; sections merge field by field",
            "properties": {
                "email": {"type": "object", "properties": {"enabled": {"type": "boolean"}, "recipients": array_of(string()), "frequency": string()}},
                "slack": {"type": "object", "properties": {"enabled": {"type": "boolean"}, "channel": string(), "events": array_of(string())}},
                "alerts": {"type": "object", "properties": {"churn_threshold": nullable_number(), "mrr_drop_threshold": nullable_number()}},
            },
        },
        "PaymentPlatformSettings": {
            "type": "object",
            "description": "The payment-platform connection; a connected account also has the sync's error, whether Stripe's webhook is set up, how uncollectible invoices count and the last import's rejections",
            "properties": {
                "connected": {"type": "boolean"},
                "platform": nullable_enum(&["stripe"]),
                "account_id": nullable_string(), "account_name": nullable_string(),
                "livemode": {"type": "boolean"}, "connected_at": nullable_string(), "last_sync": nullable_string(),
                "sync_status": nullable_enum(&["syncing", "complete", "error"]),
                "sync_error": nullable_string(),
                "webhook_configured": {"type": "boolean"},
                "uncollectible": {"type": "string", "enum": ["failed", "void"]},
                "customers_imported": integer(), "invoices_imported": integer(),
                "rejected": array_of(reference("StripeRejection")),
            },
            "required": ["connected", "platform", "account_id", "account_name", "livemode", "connected_at",
                         "last_sync", "sync_status", "customers_imported", "invoices_imported"],
        },
        "StripeRejection": answer(json!({
            "object": string(), "id": string(), "field": string(), "reason": string(),
        })),
        "PaymentPlatformInput": closed_input(
            "A Stripe secret or restricted key, Stripe's webhook signing secret, and how uncollectible invoices count",
            json!({
                "secret_key": string(),
                "webhook_secret": string(),
                "uncollectible": {"type": "string", "enum": ["failed", "void"], "default": "failed"},
            }),
            &["secret_key"],
        ),
        "PaymentPlatformDisconnected": answer(json!({
            "connected": {"type": "boolean"},
            "was_connected": {"type": "boolean"},
            "removed": answer(json!({"customers": integer(), "plans": integer()})),
        })),
        "StripeWebhookReceived": answer(json!({
            "received": {"type": "boolean"},
            "id": nullable_string(),
            "rejected": array_of(reference("StripeRejection")),
        })),
        "CrmSettings": answer(json!({
            "connected": {"type": "boolean"}, "portal_id": nullable_string(), "portal_name": nullable_string(),
            "connected_at": nullable_string(), "sync_enabled": {"type": "boolean"},
            "sync_direction": nullable_string(), "last_sync": nullable_string(),
            "properties_mapped": array_of(string()),
        })),
        }),
    );
    extend(
        &mut schemas,
        json!({
        "Report": {
            "type": "object",
            "description": "A report's answer; its shape depends on the report (docs/reports.md). The main ones are described as SummaryReport, MrrReport, TableReport and MovementTableReport",
            "additionalProperties": true,
        },
        "SummaryReport": answer(json!({
            "summary": answer(json!({
                "mrr_current": integer(), "arr_current": integer(),
                "subscribers_current": integer(), "arpa_current": integer(),
            })),
            "currency": string(),
        })),
        "MrrPeriod": mrr_period,
        "MrrReport": answer(json!({
            "currency": string(),
            "breakdown": nullable_string(),
            "result": array_of(reference("MrrPeriod")),
        })),
        "TableRow": answer(json!({
            "metric": string(), "label": string(),
            "values": array_of(nullable_number()),
        })),
        "TableReport": {
            "type": "object",
            "description": "A `*-table` report: one row per metric, one value per period column",
            "properties": {
                "currency": string(),
                "columns": array_of(string()),
                "rows": array_of(reference("TableRow")),
            },
            "required": ["columns", "rows"],
        },
        "MovementRow": movement_row,
        "MovementRowPage": page_of("MovementRow"),
        "MovementTableReport": answer(json!({"result": reference("MovementRowPage")})),
        }),
    );
    extend(&mut schemas, discovery::discovery_schemas());
    extend(&mut schemas, sessions::session_schemas());
    extend(&mut schemas, webhooks::webhook_schemas());
    schemas
}

/// Adds the fields of the JSON object `more` to `map`.
fn extend(map: &mut Map<String, Value>, more: Value) {
    if let Value::Object(more) = more {
        map.extend(more);
    }
}
