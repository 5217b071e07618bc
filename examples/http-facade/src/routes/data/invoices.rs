//! Invoices: list, upsert, read, replace and delete.

use super::*;

pub(super) async fn list_invoices(
    State(state): State<Arc<AppState>>,
    caller: Caller,
    Query(params): Query<Params>,
) -> Result<Json<Value>, ApiError> {
    let (limit, offset) = page_of(&params)?;
    let customer = params.get("customer").cloned().filter(|c| !c.is_empty());
    read_ledger(account_of(&state, &caller)?, move |ledger| {
        let page = match customer {
            Some(id) => ledger
                .list_customer_invoices(&id, limit, offset)
                .map_err(|_| not_found("customer", &id))?,
            None => ledger.list_invoices(limit, offset),
        };
        Ok(Json(list_json(&page.list, page.count)))
    })
    .await
}

pub(super) async fn post_invoices(
    State(state): State<Arc<AppState>>,
    caller: Caller,
    headers: HeaderMap,
    Query(params): Query<Params>,
    BodyBytes(body): BodyBytes,
) -> Result<Response, ApiError> {
    let answer = WriteAnswer::of(&headers, params)?;
    let format = ImportFormat::of(&headers)?;
    let records = BodyRecords::read(RecordKind::Invoices, format, body, None).await?;
    let account = account_of(&state, &caller)?;
    let report = write_records(state, account, move |state, account, ledger| {
        records.upsert(state, account, ledger)
    })
    .await?;
    answer.respond(StatusCode::OK, &report, |report| {
        results_response(&report.results)
    })
}

pub(super) async fn get_invoice(
    State(state): State<Arc<AppState>>,
    caller: Caller,
    Path(id): Path<String>,
) -> Result<Json<Value>, ApiError> {
    read_ledger(account_of(&state, &caller)?, move |ledger| {
        Ok(Json(json!(
            ledger
                .invoice(&id)
                .ok_or_else(|| not_found("invoice", &id))?
        )))
    })
    .await
}

pub(super) async fn put_invoice(
    State(state): State<Arc<AppState>>,
    caller: Caller,
    Path(id): Path<String>,
    JsonBody(body): JsonBody,
) -> Result<Json<Value>, ApiError> {
    let account = account_of(&state, &caller)?;
    write_records(state, account, move |state, account, ledger| {
        ledger.replace_invoice(&id, &body)?;
        save(state, account, ledger, RecordKind::Invoices, &id)?;
        Ok(Json(json!({"success": true, "id": id})))
    })
    .await
}

pub(super) async fn delete_invoice(
    State(state): State<Arc<AppState>>,
    caller: Caller,
    Path(id): Path<String>,
) -> Result<Json<Value>, ApiError> {
    let account = account_of(&state, &caller)?;
    write_records(state, account, move |state, account, ledger| {
        delete(state, account, ledger, RecordKind::Invoices, &id)?;
        Ok(Json(json!({"success": true, "id": id})))
    })
    .await
}
