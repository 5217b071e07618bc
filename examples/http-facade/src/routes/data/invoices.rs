//! Invoices: list, upsert, read, replace and delete.

use super::*;

pub(super) async fn list_invoices(
    State(state): State<Arc<AppState>>,
    caller: Caller,
    Query(params): Query<Params>,
) -> Result<Json<Value>, ApiError> {
    let (limit, offset) = page_of(&params)?;
    let customer = params.get("customer").cloned().filter(|c| !c.is_empty());
    read_ledger(account_of(&state, &caller)?, move |ledger| match customer {
        Some(id) => {
            if ledger.customer(&id).is_none() {
                return Err(not_found("customer", &id));
            }
            let invoices = ledger.customer_invoices(&id);
            let page: Vec<_> = invoices.iter().skip(offset).take(limit).collect();
            Ok(Json(list_json(&page, invoices.len())))
        }
        None => {
            let page = ledger.list_invoices(limit, offset);
            Ok(Json(list_json(&page.list, page.count)))
        }
    })
    .await
}

pub(super) async fn post_invoices(
    State(state): State<Arc<AppState>>,
    caller: Caller,
    JsonBytes(body): JsonBytes,
) -> Result<Response, ApiError> {
    let records = InvoiceRecords::read_body(body, None).await?;
    let account = account_of(&state, &caller)?;
    let results = write_records(state, account, move |state, account, ledger| {
        Ok(records.upsert(state, account, ledger)?.results)
    })
    .await?;
    results_response(&results)
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
    let mut record = body;
    record
        .as_object_mut()
        .ok_or_else(|| ApiError::bad_request("the body must be an invoice object"))?
        .insert("id".to_string(), json!(id));
    let account = account_of(&state, &caller)?;
    write_records(state, account, move |state, account, ledger| {
        let report = upsert(
            state,
            account,
            ledger,
            RecordKind::Invoices,
            std::slice::from_ref(&record),
        )?;
        single_error(&report, true)?;
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
