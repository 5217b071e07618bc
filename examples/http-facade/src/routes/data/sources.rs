//! Data sources and FX rates.

use super::*;

pub(super) async fn list_data_sources(
    State(state): State<Arc<AppState>>,
    caller: Caller,
    Query(params): Query<Params>,
) -> Result<Json<Value>, ApiError> {
    let (limit, offset) = page_of(&params)?;
    read_ledger(account_of(&state, &caller)?, move |ledger| {
        let page = ledger.list_data_sources(limit, offset);
        Ok(Json(list_json(&page.list, page.count)))
    })
    .await
}

pub(super) async fn post_data_sources(
    State(state): State<Arc<AppState>>,
    caller: Caller,
    JsonBody(body): JsonBody,
) -> Result<Json<Value>, ApiError> {
    let records = records_of(body, "data_sources")?;
    let account = account_of(&state, &caller)?;
    write_records(state, account, move |state, account, ledger| {
        let report = upsert(state, account, ledger, RecordKind::DataSources, &records)?;
        Ok(Json(json!({ "result": report.results })))
    })
    .await
}

pub(super) async fn get_data_source(
    State(state): State<Arc<AppState>>,
    caller: Caller,
    Path(id): Path<String>,
) -> Result<Json<Value>, ApiError> {
    read_ledger(account_of(&state, &caller)?, move |ledger| {
        Ok(Json(json!(
            ledger
                .data_source(&id)
                .ok_or_else(|| not_found("data source", &id))?
        )))
    })
    .await
}

/// Changes a data source's `name` and/or `type`
/// (`Ledger::update_data_source`); answers with the data source as `GET`
/// shows it.
pub(super) async fn put_data_source(
    State(state): State<Arc<AppState>>,
    caller: Caller,
    Path(id): Path<String>,
    JsonBody(body): JsonBody,
) -> Result<Json<Value>, ApiError> {
    let account = account_of(&state, &caller)?;
    write_records(state, account, move |state, account, ledger| {
        ledger.update_data_source(&id, &body)?;
        save(state, account, ledger, RecordKind::DataSources, &id)?;
        Ok(Json(json!(ledger.data_source(&id))))
    })
    .await
}

pub(super) async fn delete_data_source(
    State(state): State<Arc<AppState>>,
    caller: Caller,
    Path(id): Path<String>,
) -> Result<Json<Value>, ApiError> {
    let account = account_of(&state, &caller)?;
    write_records(state, account, move |state, account, ledger| {
        delete(state, account, ledger, RecordKind::DataSources, &id)?;
        Ok(Json(json!({"success": true, "id": id})))
    })
    .await
}

pub(super) async fn list_fx_rates(
    State(state): State<Arc<AppState>>,
    caller: Caller,
    Query(params): Query<Params>,
) -> Result<Json<Value>, ApiError> {
    let (limit, offset) = page_of(&params)?;
    let (page, count) = blocking(move || {
        state.read(|reader| reader.fx_rates_page(caller.account_id, limit, offset))
    })
    .await?;
    Ok(Json(list_json(&page, count)))
}

pub(super) async fn post_fx_rates(
    State(state): State<Arc<AppState>>,
    caller: Caller,
    JsonBody(body): JsonBody,
) -> Result<Json<Value>, ApiError> {
    let rows = records_of(body, "fx_rates")?;
    let account = account_of(&state, &caller)?;
    write_ledger(state, account, move |_, _, store, ledger| {
        let loaded = ledger.load_fx_rates(&rows)?;
        // A failure rolls the ledger back with the transaction.
        store.add_fx_rates(caller.account_id, &rows)?;
        Ok(Json(json!({"success": true, "loaded": loaded})))
    })
    .await
}
