//! The data API: plans, customers, plan groups, invoices, data sources and
//! FX rates, in the interface's response shapes.

use super::Routes;
use super::formats::{self, AnswerFormat, ImportFormat};
use super::{
    BodyBytes, JsonBody, Listed, Params, json_response, page_of, parse_body, read_ledger,
    record_texts, records_of, write_ledger, write_records,
};
use crate::auth::Caller;
use crate::error::ApiError;
use crate::extract::{Path, Query};
use crate::openapi::{Doc, PAGE};
use crate::state::{Account, AppState, blocking};
use crate::store::{Change, Reads};
use axum::Json;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use rayon::prelude::*;
use serde_json::{Value, json};
use std::borrow::Cow;
use std::sync::Arc;
use submetrics::{ImportStatus, Ledger, RecordKind, WriteReport, WriteResult};

mod bodies;
mod customers;
mod invoices;
mod plans;
mod sources;

use customers::*;
use invoices::*;
use plans::*;
use sources::*;

pub use bodies::BodyRecords;

/// Writes of more records than this serialize them on every core.
const PARALLEL_FROM: usize = 256;
/// Invoice bodies up to this size are read on the event loop.
const READ_IN_PLACE_BYTES: usize = 64 * 1024;

pub fn routes() -> Routes {
    const LIST_PLANS: &[&str] = &["source", "limit", "offset"];
    const LIST_INVOICES: &[&str] = &["customer", "limit", "offset"];
    Routes::new()
        .get(
            "/data/plans",
            list_plans,
            Doc::key("List plans").query(LIST_PLANS),
        )
        .post(
            "/data/plans",
            post_plans,
            Doc::key("Upsert one plan or an array of plans").query(WRITE_QUERY),
        )
        .put(
            "/data/plans",
            missing_id,
            Doc::key("Without an id: Missing external_id").missing_id(),
        )
        .delete(
            "/data/plans",
            missing_id,
            Doc::key("Without an id: Missing external_id").missing_id(),
        )
        .get(
            "/data/plans/",
            missing_id,
            Doc::key("Without an id: Missing external_id").missing_id(),
        )
        .put(
            "/data/plans/",
            missing_id,
            Doc::key("Without an id: Missing external_id").missing_id(),
        )
        .delete(
            "/data/plans/",
            missing_id,
            Doc::key("Without an id: Missing external_id").missing_id(),
        )
        .get("/data/plans/{id}", get_plan, Doc::key("Get a plan"))
        .put(
            "/data/plans/{id}",
            put_plan,
            Doc::key("Update fields of a plan"),
        )
        .delete(
            "/data/plans/{id}",
            delete_plan,
            Doc::key("Delete a plan no invoice uses (409 otherwise); its groups drop it"),
        )
        .get(
            "/data/customers",
            list_customers,
            Doc::key("List customers").query(PAGE),
        )
        .post(
            "/data/customers",
            post_customers,
            Doc::key("Create or replace one customer or an array").created().query(WRITE_QUERY),
        )
        .get(
            "/data/customers/{id}",
            get_customer,
            Doc::key("Get a customer with current_mrr"),
        )
        .put(
            "/data/customers/{id}",
            put_customer,
            Doc::key("Update fields of a customer (custom_variables merge)"),
        )
        .delete(
            "/data/customers/{id}",
            delete_customer,
            Doc::key("Delete a customer and its invoices"),
        )
        .get(
            "/data/plan-groups",
            list_plan_groups,
            Doc::key("List plan groups").query(PAGE),
        )
        .post(
            "/data/plan-groups",
            post_plan_group,
            Doc::key(
                "Create a plan group (the service assigns the id; id and external_id are ignored)",
            ),
        )
        .get(
            "/data/plan-groups/{id}",
            get_plan_group,
            Doc::key("Get a plan group"),
        )
        .put(
            "/data/plan-groups/{id}",
            put_plan_group,
            Doc::key("Replace a plan group's name and plans"),
        )
        .delete(
            "/data/plan-groups/{id}",
            delete_plan_group,
            Doc::key("Delete a plan group (its plans stay)"),
        )
        .get(
            "/data/invoices",
            list_invoices,
            Doc::key("List invoices").query(LIST_INVOICES),
        )
        .post(
            "/data/invoices",
            post_invoices,
            Doc::key("Upsert one invoice or an array").query(WRITE_QUERY),
        )
        .get(
            "/data/invoices/{id}",
            get_invoice,
            Doc::key("Get an invoice"),
        )
        .put(
            "/data/invoices/{id}",
            put_invoice,
            Doc::key("Replace an invoice"),
        )
        .delete(
            "/data/invoices/{id}",
            delete_invoice,
            Doc::key("Delete an invoice"),
        )
        .get(
            "/data/data-sources",
            list_data_sources,
            Doc::key("List data sources").query(PAGE),
        )
        .post(
            "/data/data-sources",
            post_data_sources,
            Doc::key("Upsert one data source or an array"),
        )
        .get(
            "/data/data-sources/{id}",
            get_data_source,
            Doc::key("Get a data source"),
        )
        .put(
            "/data/data-sources/{id}",
            put_data_source,
            Doc::key("Change a data source's name and/or type"),
        )
        .delete(
            "/data/data-sources/{id}",
            delete_data_source,
            Doc::key("Delete a data source"),
        )
        .get(
            "/data/fx-rates",
            list_fx_rates,
            Doc::key("List the FX rate rows, by date, then currency (one per date and currency, the last written)").query(PAGE),
        )
        .post(
            "/data/fx-rates",
            post_fx_rates,
            Doc::key("Add FX rate rows {date, currency, rate}"),
        )
}

/// The answer of a batch write, `{"result": [...]}` with one result per
/// record in input order, written straight from the results (the same text
/// as their JSON value).
pub fn results_response(results: &[WriteResult]) -> Result<Response, ApiError> {
    json_response(&Listed { result: results })
}

/// The query a record write reads: `format` of its answer.
pub const WRITE_QUERY: &[&str] = &["format/results"];

/// How a record write answers, chosen before it writes (so a format it
/// cannot answer in is refused with nothing written): in its JSON shape, or
/// (`format=arrow`, or an `Accept` that prefers
/// `application/vnd.apache.arrow.stream`) its per-record results as an
/// Arrow IPC stream of one batch, `id`, `import_status` and `import_error`,
/// the table the ledgers' Arrow upserts answer.
#[derive(Debug, Clone, Copy)]
pub struct WriteAnswer(AnswerFormat);

impl WriteAnswer {
    pub fn of(headers: &HeaderMap, mut params: Params) -> Result<WriteAnswer, ApiError> {
        let offered = [AnswerFormat::Json, AnswerFormat::Arrow];
        Ok(WriteAnswer(formats::answer_format(
            headers,
            &mut params,
            &offered,
        )?))
    }

    /// The answer of `report`: `json` writes the JSON one; the Arrow one
    /// has `status`.
    pub fn respond(
        self,
        status: StatusCode,
        report: &WriteReport,
        json: impl FnOnce(&WriteReport) -> Result<Response, ApiError>,
    ) -> Result<Response, ApiError> {
        if self.0 != AnswerFormat::Arrow {
            return json(report);
        }
        let stream = submetrics::columnar::ipc_of(&report.to_batch())?;
        let mut response = formats::arrow_response(stream);
        *response.status_mut() = status;
        Ok(response)
    }
}

/// Upserts records into the ledger and persists the accepted ones in one
/// transaction.
pub fn upsert(
    state: &AppState,
    account: &Account,
    ledger: &mut Ledger,
    kind: RecordKind,
    records: &[Value],
) -> Result<WriteReport, ApiError> {
    let report = ledger.upsert(kind, records);
    persist_accepted(state, account, ledger, kind, report)
}

/// Upserts the rows of record batches as records of `kind` (see
/// `Ledger::upsert_arrow_batches`) and persists the accepted ones, as
/// [`upsert`] does for JSON records.
pub fn upsert_batches(
    state: &AppState,
    account: &Account,
    ledger: &mut Ledger,
    kind: RecordKind,
    batches: &[arrow_array::RecordBatch],
) -> Result<WriteReport, ApiError> {
    let report = ledger.upsert_arrow_batches(kind, batches)?;
    persist_accepted(state, account, ledger, kind, report)
}

/// Persists the records a write accepted, in one transaction, each as the
/// ledger now holds it.
fn persist_accepted(
    state: &AppState,
    account: &Account,
    ledger: &mut Ledger,
    kind: RecordKind,
    report: WriteReport,
) -> Result<WriteReport, ApiError> {
    persist_changes(state, account, ledger, report, |records, _, result| {
        Change::put(records, kind, &result.id)
    })
}

/// Persists the changes `change` gives for the records a write accepted
/// (`change` has the ledger, the record's index in the write and its
/// result), in one transaction.
fn persist_changes(
    state: &AppState,
    account: &Account,
    ledger: &mut Ledger,
    report: WriteReport,
    change: impl Fn(&Ledger, usize, &WriteResult) -> Option<Change> + Sync,
) -> Result<WriteReport, ApiError> {
    let records: &Ledger = ledger;
    let put = |(i, r): (usize, &WriteResult)| {
        (r.import_status == ImportStatus::Inserted)
            .then(|| change(records, i, r))
            .flatten()
    };
    // Writing each record's text is independent: large batches use every core.
    let changes: Vec<Change> = if report.results.len() > PARALLEL_FROM {
        report
            .results
            .par_iter()
            .enumerate()
            .filter_map(put)
            .collect()
    } else {
        report.results.iter().enumerate().filter_map(put).collect()
    };
    state.persist(account, ledger, changes)?;
    Ok(report)
}

/// The invoices of a write, read from the request body before the ledger
/// is locked.
pub enum InvoiceRecords {
    /// Each record's id and invoice (or error), read from its own text, and
    /// the texts.
    Read {
        read: submetrics::ReadInvoices,
        texts: Vec<String>,
    },
    /// Records parsed as values, for bodies the text reading leaves alone.
    Values(Vec<Value>),
}

impl InvoiceRecords {
    /// Reads a body of invoices, of any shape [`records_of`] takes, each
    /// record tagged with `data_source` when one is given. An array or a
    /// batch object `{"invoices": [...]}` is split into its records' texts,
    /// which the core reads without a `serde_json::Value` each, with the
    /// same per-record results. That answers as values would only while the
    /// body as a whole is JSON that parses: a record the core read was
    /// parsed by serde_json as a value would be, and one it could not read
    /// is checked on its own. Any other body, or one that does not parse, is
    /// parsed whole as before, with the same errors.
    pub fn read(body: &[u8], data_source: Option<&str>) -> Result<InvoiceRecords, ApiError> {
        // A record's own data source (under either name) is replaced by the
        // one imported into: in its parsed value, since appending the field
        // to its text would give the field twice.
        let taggable_in_text = |texts: &[&str]| {
            data_source.is_none() || !texts.iter().any(|text| text.contains("\"data_source"))
        };
        if let Some(texts) = record_texts(body, "invoices").filter(|texts| taggable_in_text(texts))
        {
            let texts: Vec<Cow<str>> = match data_source {
                Some(source) => {
                    let source = Value::from(source).to_string();
                    texts
                        .into_iter()
                        .map(|text| text_with_data_source(text, &source))
                        .collect()
                }
                None => texts.into_iter().map(Cow::Borrowed).collect(),
            };
            let read = Ledger::read_invoice_texts(&texts);
            let parses = read.iter().zip(&texts).all(|((_, invoice), text)| {
                invoice.is_ok() || serde_json::from_str::<Value>(text).is_ok()
            });
            if parses {
                let texts = texts.into_iter().map(Cow::into_owned).collect();
                return Ok(InvoiceRecords::Read { read, texts });
            }
        }
        let mut records = records_of(parse_body(body)?, "invoices")?;
        if let Some(source) = data_source {
            with_data_source(&mut records, source);
        }
        Ok(InvoiceRecords::Values(records))
    }

    /// [`InvoiceRecords::read`] of a request body: a batch is read on every
    /// core, off the event loop; a small body is read in place, which costs
    /// less than the hop.
    pub async fn read_body(
        body: Bytes,
        data_source: Option<String>,
    ) -> Result<InvoiceRecords, ApiError> {
        if body.len() > READ_IN_PLACE_BYTES {
            tokio::task::spawn_blocking(move || InvoiceRecords::read(&body, data_source.as_deref()))
                .await
                .map_err(|_| ApiError::internal("the request could not be completed"))?
        } else {
            InvoiceRecords::read(&body, data_source.as_deref())
        }
    }

    /// Upserts the invoices into the ledger and persists the accepted ones
    /// in one transaction. Invoices read from their own texts are persisted
    /// as those texts, which read back to the same invoices, rather than
    /// written out again from the ledger.
    pub fn upsert(
        self,
        state: &AppState,
        account: &Account,
        ledger: &mut Ledger,
    ) -> Result<WriteReport, ApiError> {
        match self {
            InvoiceRecords::Read { read, texts } => {
                let report = ledger.upsert_read_invoices(read);
                persist_changes(state, account, ledger, report, |records, i, result| {
                    Some(Change::Put {
                        kind: RecordKind::Invoices,
                        id: result.id.to_string(),
                        owner: Some(records.invoice(&result.id)?.customer_id.to_string()),
                        body: texts[i].clone(),
                    })
                })
            }
            InvoiceRecords::Values(records) => {
                upsert(state, account, ledger, RecordKind::Invoices, &records)
            }
        }
    }
}

/// Tags every record object with `data_source` (replacing the record's
/// own); other records stay as they are.
pub fn with_data_source(records: &mut [Value], source: &str) {
    for record in records {
        if let Some(map) = record.as_object_mut() {
            for name in submetrics::model::DATA_SOURCE_NAMES {
                map.remove(*name);
            }
            map.insert("data_source".to_string(), json!(source));
        }
    }
}

/// [`with_data_source`] on the text of a record that gives no data source:
/// an object gets `"data_source": source` (`source` as JSON text) as its
/// last field, and reads as the tagged value would. Any other record's text
/// stays as it is.
fn text_with_data_source<'a>(text: &'a str, source: &str) -> Cow<'a, str> {
    match text.strip_prefix('{').and_then(|t| t.strip_suffix('}')) {
        Some(fields) => {
            let comma = if fields.trim_ascii().is_empty() {
                ""
            } else {
                ","
            };
            Cow::Owned(format!("{{{fields}{comma}\"data_source\":{source}}}"))
        }
        None => Cow::Borrowed(text),
    }
}

/// Persists the current form of one record after an update.
fn save(
    state: &AppState,
    account: &Account,
    ledger: &mut Ledger,
    kind: RecordKind,
    id: &str,
) -> Result<(), ApiError> {
    let changes: Vec<Change> = Change::put(ledger, kind, id).into_iter().collect();
    state.persist(account, ledger, changes)
}

/// Deletes a record in the core and the store in one transaction: a
/// customer takes its invoices, and a plan leaves every group that named it
/// (the groups are stored again without it).
pub fn delete(
    state: &AppState,
    account: &Account,
    ledger: &mut Ledger,
    kind: RecordKind,
    id: &str,
) -> Result<(), ApiError> {
    let groups: Vec<String> = if kind == RecordKind::Plans {
        ledger
            .plan_groups()
            .filter(|g| g.plans.iter().any(|p| p.as_str() == id))
            .map(|g| g.id.to_string())
            .collect()
    } else {
        Vec::new()
    };
    let invoices: Vec<String> = if kind == RecordKind::Customers {
        ledger
            .customer_invoices(id)
            .iter()
            .map(|invoice| invoice.id().to_string())
            .collect()
    } else {
        Vec::new()
    };
    ledger.delete(kind, id)?;
    let mut changes = vec![Change::Delete {
        kind,
        id: id.to_string(),
    }];
    changes.extend(invoices.into_iter().map(|id| Change::Delete {
        kind: RecordKind::Invoices,
        id,
    }));
    changes.extend(
        groups
            .iter()
            .filter_map(|group| Change::put(ledger, RecordKind::PlanGroups, group)),
    );
    state.persist(account, ledger, changes)
}

/// The single-record error of a one-record write, if it failed.
fn single_error(report: &WriteReport, was_single: bool) -> Result<(), ApiError> {
    match report.results.first() {
        Some(result) if was_single && result.import_status == ImportStatus::Error => Err(result
            .error
            .clone()
            .map(|e| ApiError::Core(*e))
            .unwrap_or_else(|| {
                ApiError::bad_request(result.import_error.clone().unwrap_or_default())
            })),
        _ => Ok(()),
    }
}

fn list_json<T: serde::Serialize>(items: &[T], count: usize) -> Value {
    json!({ "result": { "count": count, "list": items } })
}

fn not_found(kind: &str, id: &str) -> ApiError {
    ApiError::NotFound(format!("{kind} `{id}` does not exist"))
}

async fn missing_id() -> (StatusCode, Json<Value>) {
    (
        StatusCode::BAD_REQUEST,
        Json(json!({"error": "Missing external_id", "code": "bad_request"})),
    )
}

fn account_of(state: &AppState, caller: &Caller) -> Result<Arc<Account>, ApiError> {
    state.account(caller.account_id)
}
