//! Plans and plan groups: list, upsert, read, replace and delete, a group with its plans expanded.

use super::*;

pub(super) async fn list_plans(
    State(state): State<Arc<AppState>>,
    caller: Caller,
    Query(params): Query<Params>,
) -> Result<Json<Value>, ApiError> {
    let (limit, offset) = page_of(&params)?;
    let source = params.get("source").cloned().filter(|s| !s.is_empty());
    read_ledger(account_of(&state, &caller)?, move |ledger| {
        let page = match &source {
            Some(source) => ledger.list_source_plans(source, limit, offset)?,
            None => ledger.list_plans(limit, offset),
        };
        Ok(Json(list_json(&page.list, page.count)))
    })
    .await
}

pub(super) async fn post_plans(
    State(state): State<Arc<AppState>>,
    caller: Caller,
    headers: HeaderMap,
    Query(params): Query<Params>,
    BodyBytes(body): BodyBytes,
) -> Result<Response, ApiError> {
    let answer = WriteAnswer::of(&headers, params)?;
    let format = ImportFormat::of(&headers)?;
    let records = BodyRecords::read(RecordKind::Plans, format, body, None).await?;
    let account = account_of(&state, &caller)?;
    write_records(state, account, move |state, account, ledger| {
        let report = records.upsert(state, account, ledger)?;
        answer.respond(StatusCode::OK, &report, |report| {
            results_response(&report.results)
        })
    })
    .await
}

pub(super) async fn get_plan(
    State(state): State<Arc<AppState>>,
    caller: Caller,
    Path(id): Path<String>,
) -> Result<Json<Value>, ApiError> {
    read_ledger(account_of(&state, &caller)?, move |ledger| {
        let plan = ledger.plan(&id).ok_or_else(|| not_found("plan", &id))?;
        Ok(Json(json!(plan)))
    })
    .await
}

pub(super) async fn put_plan(
    State(state): State<Arc<AppState>>,
    caller: Caller,
    Path(id): Path<String>,
    JsonBody(body): JsonBody,
) -> Result<Json<Value>, ApiError> {
    let account = account_of(&state, &caller)?;
    write_records(state, account, move |state, account, ledger| {
        ledger.update_plan(&id, &body)?;
        save(state, account, ledger, RecordKind::Plans, &id)?;
        Ok(Json(json!({"result": "ok", "updated": id})))
    })
    .await
}

pub(super) async fn delete_plan(
    State(state): State<Arc<AppState>>,
    caller: Caller,
    Path(id): Path<String>,
) -> Result<Json<Value>, ApiError> {
    let account = account_of(&state, &caller)?;
    write_records(state, account, move |state, account, ledger| {
        delete(state, account, ledger, RecordKind::Plans, &id)?;
        Ok(Json(json!({"result": "ok", "deleted": id})))
    })
    .await
}

pub(super) async fn list_plan_groups(
    State(state): State<Arc<AppState>>,
    caller: Caller,
    Query(params): Query<Params>,
) -> Result<Json<Value>, ApiError> {
    let (limit, offset) = page_of(&params)?;
    read_ledger(account_of(&state, &caller)?, move |ledger| {
        let page = ledger.list(RecordKind::PlanGroups, limit, offset);
        Ok(Json(json!({ "result": page })))
    })
    .await
}

pub(super) async fn post_plan_group(
    State(state): State<Arc<AppState>>,
    caller: Caller,
    JsonBody(body): JsonBody,
) -> Result<Json<Value>, ApiError> {
    if !body.is_object() {
        return Err(ApiError::bad_request(
            "the body must be a plan group object {name, plans}",
        ));
    }
    let mut record = body;
    // The service assigns plan group ids: the core reads either field.
    if let Some(map) = record.as_object_mut() {
        map.remove("id");
        map.remove("external_id");
    }
    let account = account_of(&state, &caller)?;
    write_records(state, account, move |state, account, ledger| {
        let report = upsert(
            state,
            account,
            ledger,
            RecordKind::PlanGroups,
            std::slice::from_ref(&record),
        )?;
        single_error(&report, true)?;
        let id = report
            .results
            .first()
            .map(|r| r.id.clone())
            .unwrap_or_default();
        Ok(Json(json!({"success": true, "id": id})))
    })
    .await
}

pub(super) async fn get_plan_group(
    State(state): State<Arc<AppState>>,
    caller: Caller,
    Path(id): Path<String>,
) -> Result<Json<Value>, ApiError> {
    read_ledger(account_of(&state, &caller)?, move |ledger| {
        let group = ledger
            .plan_group_view(&id)
            .ok_or_else(|| not_found("plan group", &id))?;
        Ok(Json(json!(group)))
    })
    .await
}

pub(super) async fn put_plan_group(
    State(state): State<Arc<AppState>>,
    caller: Caller,
    Path(id): Path<String>,
    JsonBody(body): JsonBody,
) -> Result<Json<Value>, ApiError> {
    let account = account_of(&state, &caller)?;
    write_records(state, account, move |state, account, ledger| {
        ledger.replace_plan_group(&id, &body)?;
        save(state, account, ledger, RecordKind::PlanGroups, &id)?;
        Ok(Json(json!({"success": true, "id": id})))
    })
    .await
}

pub(super) async fn delete_plan_group(
    State(state): State<Arc<AppState>>,
    caller: Caller,
    Path(id): Path<String>,
) -> Result<Json<Value>, ApiError> {
    let account = account_of(&state, &caller)?;
    write_records(state, account, move |state, account, ledger| {
        delete(state, account, ledger, RecordKind::PlanGroups, &id)?;
        Ok(Json(json!({"success": true, "id": id})))
    })
    .await
}
