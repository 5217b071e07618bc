//! Customers: list, upsert, read (with current MRR), replace and delete.

use super::*;

pub(super) async fn list_customers(
    State(state): State<Arc<AppState>>,
    caller: Caller,
    Query(params): Query<Params>,
) -> Result<Json<Value>, ApiError> {
    let (limit, offset) = page_of(&params)?;
    read_ledger(account_of(&state, &caller)?, move |ledger| {
        let page = ledger.list_customers(limit, offset);
        Ok(Json(list_json(&page.list, page.count)))
    })
    .await
}

/// A customer with `current_mrr` (per currency, now).
fn customer_with_mrr(ledger: &Ledger, id: &str) -> Result<Value, ApiError> {
    let customer = ledger
        .customer(id)
        .ok_or_else(|| not_found("customer", id))?;
    let mut value = json!(customer);
    let mrr = ledger.customer_mrr_at(id, chrono::Utc::now(), chrono::Utc::now())?;
    let current: serde_json::Map<String, Value> = mrr
        .iter()
        .map(|(currency, cents)| (currency.as_str().to_string(), json!(cents)))
        .collect();
    value["current_mrr"] = Value::Object(current);
    Ok(value)
}

pub(super) async fn post_customers(
    State(state): State<Arc<AppState>>,
    caller: Caller,
    headers: HeaderMap,
    Query(params): Query<Params>,
    BodyBytes(body): BodyBytes,
) -> Result<Response, ApiError> {
    let answer = WriteAnswer::of(&headers, params)?;
    // One JSON customer on its own answers its error as the request's.
    let (records, single) = match ImportFormat::of(&headers)? {
        ImportFormat::Json => {
            let body = parse_body(&body)?;
            let single = body.is_object() && body.get("customers").is_none();
            let records = records_of(body, "customers")?;
            (BodyRecords::Values(RecordKind::Customers, records), single)
        }
        format => {
            let records = BodyRecords::read(RecordKind::Customers, format, body, None).await?;
            (records, false)
        }
    };
    let account = account_of(&state, &caller)?;
    write_records(state, account, move |state, account, ledger| {
        let report = records.upsert(state, account, ledger)?;
        single_error(&report, single)?;
        answer.respond(StatusCode::CREATED, &report, |report| {
            let list = json!({"result": {"count": report.accepted(), "list": report.results}});
            Ok((StatusCode::CREATED, Json(list)).into_response())
        })
    })
    .await
}

pub(super) async fn get_customer(
    State(state): State<Arc<AppState>>,
    caller: Caller,
    Path(id): Path<String>,
) -> Result<Json<Value>, ApiError> {
    read_ledger(account_of(&state, &caller)?, move |ledger| {
        Ok(Json(customer_with_mrr(ledger, &id)?))
    })
    .await
}

pub(super) async fn put_customer(
    State(state): State<Arc<AppState>>,
    caller: Caller,
    Path(id): Path<String>,
    JsonBody(body): JsonBody,
) -> Result<Json<Value>, ApiError> {
    let account = account_of(&state, &caller)?;
    write_records(state, account, move |state, account, ledger| {
        ledger.update_customer(&id, &body)?;
        save(state, account, ledger, RecordKind::Customers, &id)?;
        Ok(Json(
            json!({"success": true, "result": customer_with_mrr(ledger, &id)?}),
        ))
    })
    .await
}

pub(super) async fn delete_customer(
    State(state): State<Arc<AppState>>,
    caller: Caller,
    Path(id): Path<String>,
) -> Result<Json<Value>, ApiError> {
    let account = account_of(&state, &caller)?;
    write_records(state, account, move |state, account, ledger| {
        delete(state, account, ledger, RecordKind::Customers, &id)?;
        Ok(Json(json!({"success": true, "id": id})))
    })
    .await
}
