//! `NativeLedger`: the core ledger shared behind `Arc<RwLock>`, so async
//! tasks read it off the main thread while the JavaScript object lives on.

use crate::convert::{as_of as as_of_instant, params as params_of};
use crate::convert::{as_of, params, records, resolve};
use crate::errors::{details, invalid_argument, to_napi};
use crate::exact::{BigIntegers, exact_in_javascript};
use crate::records::{FlatLayout, FlatRecords, OPTION, RECORD, Records, SETTING};
use crate::tasks::{MovementsTask, ReportTask};
use bumpalo::Bump;
use napi::bindgen_prelude::{AsyncTask, Buffer, Uint32Array};
use napi::{Env, Unknown};
use napi_derive::napi;
use serde_json::{Value, json};
use std::sync::{Arc, RwLock, RwLockReadGuard, RwLockWriteGuard};
use submetrics::reports::ParamView;
use submetrics::{Ledger, MovementFilter, RecordKind, Settings, WriteReport, columnar};

pub type Shared = Arc<RwLock<Ledger>>;

/// Invoices read from JavaScript per chunk handed to the core.
const CHUNK: usize = 16_384;

pub fn read(ledger: &Shared) -> RwLockReadGuard<'_, Ledger> {
    ledger.read().unwrap_or_else(|p| p.into_inner())
}

fn write(ledger: &Shared) -> RwLockWriteGuard<'_, Ledger> {
    ledger.write().unwrap_or_else(|p| p.into_inner())
}

fn kind(name: &str) -> napi::Result<RecordKind> {
    RecordKind::parse(name).ok_or_else(|| {
        invalid_argument(format!(
            "`{name}` is not one of customers, plans, plan_groups, invoices, data_sources"
        ))
    })
}

/// An answer as JSON text, which `index.js` parses. Answers cross as text,
/// not as values napi builds property by property: napi's conversion of a
/// JSON value stops at a million values (every movement of a large ledger
/// has more), and V8 parses text faster than it takes objects built one
/// property at a time. An integer a JavaScript number cannot hold is an
/// error naming `exact_elsewhere`, the call answering it exactly, if any
/// ([`exact_in_javascript`]).
pub fn json_text(
    answer: &impl serde::Serialize,
    exact_elsewhere: Option<&str>,
    big: BigIntegers,
) -> napi::Result<String> {
    let text =
        serde_json::to_string(answer).map_err(|error| invalid_argument(error.to_string()))?;
    exact_in_javascript(text, exact_elsewhere, big)
}

/// Movements at `as_of` with a filter object `{customer, from, to, kinds}`
/// read by the core (`from`/`to` dates or ISO instants), as JSON text.
pub fn movements(
    ledger: &Ledger,
    at: Option<&str>,
    filter: Option<Value>,
    big: BigIntegers,
) -> napi::Result<String> {
    let at = as_of(at, ledger.settings())?;
    let filter =
        MovementFilter::from_params(&params(filter, ParamView::Movements)?, ledger.settings())
            .map_err(to_napi)?;
    json_text(
        &ledger.movements(at, &filter).map_err(to_napi)?,
        Some("movementsArrow"),
        big,
    )
}

/// A report by name as JSON text, written by the core from the report's
/// typed rows; `instants` names the parameters given as Dates.
pub fn report(
    ledger: &Ledger,
    name: &str,
    query: Option<Value>,
    at: Option<&str>,
    instants: &[String],
    big: BigIntegers,
) -> napi::Result<String> {
    let query = resolve(ledger, params(query, ParamView::Report(name))?, instants)?;
    let at = as_of(at, ledger.settings())?;
    let text = ledger.report_json(name, &query, at).map_err(to_napi)?;
    // JSON text is always UTF-8: the fallback is never taken.
    let text = String::from_utf8(text)
        .unwrap_or_else(|not_utf8| String::from_utf8_lossy(not_utf8.as_bytes()).into_owned());
    exact_in_javascript(text, Some("reportArrow"), big)
}

/// The per-record results of a write, in input order, as index.js turns
/// them into `{id, import_status, import_error}` objects: every record's
/// id (joined in `ids`, cut by their UTF-16 lengths, so that a million ids
/// cross as one string), and the positions and messages of the rejected
/// ones.
#[napi(object)]
pub struct WriteResults {
    pub ids: String,
    pub id_lengths: Uint32Array,
    pub failed: Vec<u32>,
    pub errors: Vec<String>,
}

impl From<WriteReport> for WriteResults {
    fn from(report: WriteReport) -> WriteResults {
        let mut ids = String::new();
        let mut lengths = Vec::with_capacity(report.results.len());
        let mut failed = Vec::new();
        let mut errors = Vec::new();
        for (index, result) in report.results.into_iter().enumerate() {
            if let Some(error) = result.import_error {
                failed.push(index as u32);
                errors.push(error);
            }
            let units = if result.id.is_ascii() {
                result.id.len()
            } else {
                result.id.chars().map(char::len_utf16).sum()
            };
            lengths.push(units as u32);
            ids.push_str(&result.id);
        }
        WriteResults {
            ids,
            id_lengths: Uint32Array::new(lengths),
            failed,
            errors,
        }
    }
}

#[napi]
pub struct NativeLedger {
    inner: Shared,
    big: BigIntegers,
}

#[napi]
impl NativeLedger {
    /// A new ledger; `settings` uses the snake_case keys of the account.
    /// With `bigints`, JSON answers pass integers beyond 2^53 - 1 for
    /// `index.js` to read as BigInts; without, such an answer is refused.
    #[napi(constructor)]
    pub fn new(env: Env, settings: Unknown, bigints: Option<bool>) -> napi::Result<NativeLedger> {
        submetrics_allocator::keep_freed_memory_longer();
        let settings = crate::records::value(&env, settings, "the settings", SETTING)?;
        let settings = Settings::from_json(&settings).map_err(to_napi)?;
        Ok(NativeLedger {
            inner: Arc::new(RwLock::new(Ledger::new(settings))),
            big: if bigints == Some(true) {
                BigIntegers::Pass
            } else {
                BigIntegers::Refuse
            },
        })
    }

    #[napi]
    pub fn settings(&self) -> Value {
        json!(read(&self.inner).settings())
    }

    #[napi]
    pub fn update_settings(&self, env: Env, patch: Unknown) -> napi::Result<Value> {
        let patch = crate::records::value(&env, patch, "the settings", SETTING)?;
        write(&self.inner)
            .update_settings(&patch)
            .map(|s| json!(s))
            .map_err(to_napi)
    }

    #[napi]
    pub fn load_fx_rates(&self, env: Env, rows: Unknown) -> napi::Result<u32> {
        let arena = Bump::new();
        let rows = crate::records::records(&env, rows, &arena)?;
        write(&self.inner)
            .load_fx_rates_trees(&rows)
            .map(|n| n as u32)
            .map_err(to_napi)
    }

    /// Imports Stripe API objects given as JSON text (see docs/stripe.md):
    /// the counts stored, what was skipped and what was rejected (object, id,
    /// field, reason), as JSON text. Both cross as text, which has no limit
    /// on its size: napi's conversion of a JSON value stops at a million
    /// values, fewer than a large export holds.
    #[napi]
    pub fn import_stripe(
        &self,
        env: Env,
        objects: String,
        options: Unknown,
    ) -> napi::Result<String> {
        let objects: Value = serde_json::from_str(&objects).map_err(|error| {
            details(
                "invalid_record",
                format!("the Stripe objects are not JSON: {error}"),
                None,
                Some("(record)"),
            )
        })?;
        let objects = records(objects)?;
        let options = crate::records::value(&env, options, "the Stripe options", OPTION)?;
        let options = submetrics::StripeOptions::from_json(&options).map_err(to_napi)?;
        json_text(
            &write(&self.inner).import_stripe(&objects, &options),
            None,
            self.big,
        )
    }

    /// Upserts records of a collection, read field by field from the
    /// JavaScript objects; one result per record.
    #[napi]
    pub fn upsert(
        &self,
        env: Env,
        collection: String,
        records: Unknown,
    ) -> napi::Result<WriteResults> {
        let kind = kind(&collection)?;
        let arena = Bump::new();
        let report = if kind == RecordKind::Invoices {
            // Read on the other cores while the next chunk is read from
            // JavaScript (on this thread, the only one that may).
            let mut records = Records::new(&env, records, &arena)?;
            let read = Ledger::read_invoice_chunks(|| records.next_chunk(CHUNK))?;
            write(&self.inner).upsert_read_invoices(read)
        } else {
            let records = crate::records::records(&env, records, &arena)?;
            write(&self.inner).upsert_trees(kind, &records)
        };
        Ok(WriteResults::from(report))
    }

    /// [`NativeLedger::upsert`] of an array of records in the flat layout
    /// of `records.js` (its strings joined in `text`, its nested values in
    /// `others`): the same results and errors, read with a few N-API calls
    /// for the whole array.
    #[napi]
    pub fn upsert_flat(
        &self,
        env: Env,
        collection: String,
        layout: FlatLayout,
        text: Unknown,
        others: Unknown,
    ) -> napi::Result<WriteResults> {
        let kind = kind(&collection)?;
        let arena = Bump::new();
        let mut records = FlatRecords::new(&env, &layout, text, others, &arena)?;
        let report = if kind == RecordKind::Invoices {
            let read = Ledger::read_invoice_chunks(|| records.next_chunk(CHUNK))?;
            let mut ledger = write(&self.inner);
            ledger.reserve_invoices(read.len());
            ledger.upsert_read_invoices(read)
        } else {
            let mut all = Vec::new();
            while let Some(chunk) = records.next_chunk(usize::MAX)? {
                all.extend(chunk);
            }
            write(&self.inner).upsert_trees(kind, &all)
        };
        Ok(WriteResults::from(report))
    }

    /// A record by id; a `not_found` error naming the record kind.
    #[napi]
    pub fn get(&self, collection: String, id: String) -> napi::Result<Value> {
        let kind = kind(&collection)?;
        read(&self.inner).get(kind, &id).map_err(to_napi)
    }

    /// `{count, list}` of a collection as JSON text; `limit` defaults to
    /// the core's page size.
    #[napi]
    pub fn list(
        &self,
        collection: String,
        limit: Option<u32>,
        offset: Option<u32>,
    ) -> napi::Result<String> {
        let kind = kind(&collection)?;
        let (limit, offset) = page_bounds(limit, offset);
        json_text(&read(&self.inner).list(kind, limit, offset), None, self.big)
    }

    /// `{count, list}` of one customer's invoices as JSON text; a
    /// `not_found` error when there is no such customer.
    #[napi]
    pub fn list_customer_invoices(
        &self,
        customer: String,
        limit: Option<u32>,
        offset: Option<u32>,
    ) -> napi::Result<String> {
        let (limit, offset) = page_bounds(limit, offset);
        let ledger = read(&self.inner);
        json_text(
            &ledger
                .list_customer_invoices(&customer, limit, offset)
                .map_err(to_napi)?,
            None,
            self.big,
        )
    }

    /// `{count, list}` of the plans of one data source as JSON text.
    #[napi]
    pub fn list_source_plans(
        &self,
        source: String,
        limit: Option<u32>,
        offset: Option<u32>,
    ) -> napi::Result<String> {
        let (limit, offset) = page_bounds(limit, offset);
        let ledger = read(&self.inner);
        json_text(
            &ledger
                .list_source_plans(&source, limit, offset)
                .map_err(to_napi)?,
            None,
            self.big,
        )
    }

    #[napi]
    pub fn delete(&self, collection: String, id: String) -> napi::Result<()> {
        write(&self.inner)
            .delete(kind(&collection)?, &id)
            .map_err(to_napi)
    }

    #[napi]
    pub fn update_customer(&self, env: Env, id: String, patch: Unknown) -> napi::Result<Value> {
        let patch =
            crate::records::value(&env, patch, &format!("the patch of customer {id}"), RECORD)?;
        write(&self.inner)
            .update_customer(&id, &patch)
            .map(|c| json!(c))
            .map_err(to_napi)
    }

    #[napi]
    pub fn update_plan(&self, env: Env, id: String, patch: Unknown) -> napi::Result<Value> {
        let patch = crate::records::value(&env, patch, &format!("the patch of plan {id}"), RECORD)?;
        write(&self.inner)
            .update_plan(&id, &patch)
            .map(|p| json!(p))
            .map_err(to_napi)
    }

    #[napi]
    pub fn update_data_source(&self, env: Env, id: String, patch: Unknown) -> napi::Result<Value> {
        let what = format!("the patch of data source {id}");
        let patch = crate::records::value(&env, patch, &what, RECORD)?;
        write(&self.inner)
            .update_data_source(&id, &patch)
            .map(|s| json!(s))
            .map_err(to_napi)
    }

    /// Replaces a plan group's name and plans (`{name, plans}`).
    #[napi]
    pub fn update_plan_group(&self, env: Env, id: String, group: Unknown) -> napi::Result<Value> {
        let group = crate::records::value(&env, group, &format!("plan group {id}"), RECORD)?;
        write(&self.inner)
            .replace_plan_group(&id, &group)
            .map(|g| json!(g))
            .map_err(to_napi)
    }

    #[napi]
    pub fn replace_invoice(&self, env: Env, id: String, record: Unknown) -> napi::Result<()> {
        let record = crate::records::value(&env, record, &format!("invoice {id}"), RECORD)?;
        write(&self.inner)
            .replace_invoice(&id, &record)
            .map_err(to_napi)
    }

    /// Movements as JSON text.
    #[napi]
    pub fn movements(&self, as_of: Option<String>, filter: Option<Value>) -> napi::Result<String> {
        movements(&read(&self.inner), as_of.as_deref(), filter, self.big)
    }

    /// Upserts the rows of an Arrow IPC stream as records of `collection`
    /// (one record per row); answers the per-record results as an IPC
    /// stream (`id`, `import_status`, `import_error`), a batch per input
    /// batch, `import_status` dictionary-encoded.
    #[napi]
    pub fn upsert_arrow(&self, collection: String, stream: Buffer) -> napi::Result<Buffer> {
        let kind = kind(&collection)?;
        let batches = columnar::batches_from_ipc(&stream, columnar::IPC_DECOMPRESSED_LIMIT)
            .map_err(to_napi)?;
        let results = write(&self.inner)
            .upsert_arrow_table(kind, &batches)
            .map_err(to_napi)?;
        let ipc = columnar::ipc_of_batches(&columnar::result_schema(), &results);
        Ok(ipc.map_err(to_napi)?.into())
    }

    /// `movements` as an Arrow IPC stream, one row per movement.
    #[napi]
    pub fn movements_arrow(
        &self,
        as_of: Option<String>,
        filter: Option<Value>,
    ) -> napi::Result<Buffer> {
        let ledger = read(&self.inner);
        let at = as_of_instant(as_of.as_deref(), ledger.settings())?;
        let filter =
            MovementFilter::from_params(&params(filter, ParamView::Movements)?, ledger.settings())
                .map_err(to_napi)?;
        let batches = ledger.movements_batches(at, &filter).map_err(to_napi)?;
        let schema = columnar::movement_schema();
        Ok(columnar::ipc_of_batches(&schema, &batches)
            .map_err(to_napi)?
            .into())
    }

    /// `report` as an Arrow IPC stream (rows as the core cuts the result).
    #[napi]
    pub fn report_arrow(
        &self,
        name: String,
        params: Option<Value>,
        as_of: Option<String>,
        instants: Option<Vec<String>>,
    ) -> napi::Result<Buffer> {
        let ledger = read(&self.inner);
        let query = resolve(
            &ledger,
            params_of(params, ParamView::Report(&name))?,
            &instants.unwrap_or_default(),
        )?;
        let at = as_of_instant(as_of.as_deref(), ledger.settings())?;
        let batch = ledger.report_batch(&name, &query, at).map_err(to_napi)?;
        Ok(columnar::ipc_of(&batch).map_err(to_napi)?.into())
    }

    /// A report as JSON text.
    #[napi]
    pub fn report(
        &self,
        name: String,
        params: Option<Value>,
        as_of: Option<String>,
        instants: Option<Vec<String>>,
    ) -> napi::Result<String> {
        report(
            &read(&self.inner),
            &name,
            params,
            as_of.as_deref(),
            &instants.unwrap_or_default(),
            self.big,
        )
    }

    /// The customers view as JSON text.
    #[napi]
    pub fn customers(
        &self,
        query: Option<Value>,
        as_of: Option<String>,
        instants: Option<Vec<String>>,
    ) -> napi::Result<String> {
        let ledger = read(&self.inner);
        let query = resolve(
            &ledger,
            params(query, ParamView::Customers)?,
            &instants.unwrap_or_default(),
        )?;
        let at = crate::convert::as_of(as_of.as_deref(), ledger.settings())?;
        json_text(
            &ledger.analytics_customers(&query, at).map_err(to_napi)?,
            None,
            self.big,
        )
    }

    /// One customer's view as JSON text.
    #[napi]
    pub fn customer(
        &self,
        id: String,
        as_of: Option<String>,
        query: Option<Value>,
        instants: Option<Vec<String>>,
    ) -> napi::Result<String> {
        let ledger = read(&self.inner);
        let query = resolve(
            &ledger,
            params(query, ParamView::Customer)?,
            &instants.unwrap_or_default(),
        )?;
        let at = crate::convert::as_of(as_of.as_deref(), ledger.settings())?;
        json_text(
            &ledger
                .analytics_customer(&id, &query, at)
                .map_err(to_napi)?,
            None,
            self.big,
        )
    }

    /// `report` off the main thread.
    #[napi(ts_return_type = "Promise<string>")]
    pub fn report_async(
        &self,
        name: String,
        params: Option<Value>,
        as_of: Option<String>,
        instants: Option<Vec<String>>,
    ) -> AsyncTask<ReportTask> {
        AsyncTask::new(ReportTask {
            ledger: Arc::clone(&self.inner),
            big: self.big,
            name,
            params,
            as_of,
            instants: instants.unwrap_or_default(),
        })
    }

    /// `movements` off the main thread.
    #[napi(ts_return_type = "Promise<string>")]
    pub fn movements_async(
        &self,
        as_of: Option<String>,
        filter: Option<Value>,
    ) -> AsyncTask<MovementsTask> {
        AsyncTask::new(MovementsTask {
            ledger: Arc::clone(&self.inner),
            big: self.big,
            as_of,
            filter,
        })
    }
}

/// The names of every report.
#[napi]
pub fn report_names() -> Vec<String> {
    submetrics::reports::report_names()
        .into_iter()
        .map(str::to_string)
        .collect()
}

/// A listing's `limit` (default the core's page size) and `offset`
/// (default 0); `index.js` has checked them.
fn page_bounds(limit: Option<u32>, offset: Option<u32>) -> (usize, usize) {
    let limit = limit.map_or(Ledger::DEFAULT_LIST_LIMIT, |l| l as usize);
    (limit, offset.unwrap_or(0) as usize)
}
