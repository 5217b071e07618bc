//! `submetrics.Ledger`: the core ledger behind a read-write lock. Reads may
//! run from several threads at once. The lock is only ever taken with the
//! GIL released (inside `py.detach`) and dropped before the GIL is taken
//! back, so a thread waiting for the lock never holds the GIL that the lock's
//! holder needs to finish: arguments are converted before, results after.

use crate::convert::{
    CustomerArg, IdArg, LimitArg, NameArg, OffsetArg, Params, SourceArg, as_of, instant_text,
    page_bounds, results, to_json, to_py, with_gc_paused,
};
use crate::errors::to_py_err;
use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;
use bumpalo::Bump;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};
use serde_json::{Value, json};
use std::sync::{Arc, RwLock};
use submetrics::model::Json;
use submetrics::reports::ParamView;
use submetrics::{MovementFilter, RecordKind, ReportParams, Settings};

/// A ledger of customers, plans, plan groups, invoices and data sources,
/// with the movements, reports and customer views derived from them.
///
/// Amounts are integer cents. Records go in as dicts (or any mapping), one
/// or a sequence at a time; reads take an ``as_of`` (datetime, date, ISO
/// text; default now). A ledger may be shared by threads: reads run at the
/// same time, writes one at a time, and both release the GIL.
#[pyclass(module = "submetrics._native", name = "Ledger", frozen, subclass)]
pub struct Ledger {
    inner: RwLock<submetrics::Ledger>,
}

type CoreResult<T> = submetrics::Result<T>;

/// Invoices read from Python per chunk handed to the core.
const CHUNK: usize = 16_384;

impl Ledger {
    /// Runs `f` on the ledger under the read lock, with the GIL released
    /// while waiting for the lock and while `f` runs.
    fn reading<T: Send>(
        &self,
        py: Python<'_>,
        f: impl FnOnce(&submetrics::Ledger) -> T + Send,
    ) -> T {
        py.detach(|| f(&self.inner.read().unwrap_or_else(|p| p.into_inner())))
    }

    /// Runs `f` on the ledger under the write lock, with the GIL released.
    fn writing<T: Send>(
        &self,
        py: Python<'_>,
        f: impl FnOnce(&mut submetrics::Ledger) -> T + Send,
    ) -> T {
        py.detach(|| f(&mut self.inner.write().unwrap_or_else(|p| p.into_inner())))
    }

    /// A JSON result as Python objects, or the core error as its exception.
    fn output<'py>(py: Python<'py>, result: CoreResult<Value>) -> PyResult<Bound<'py, PyAny>> {
        to_py(py, &result.map_err(|e| to_py_err(py, e))?)
    }

    fn upsert<'py>(
        &self,
        py: Python<'py>,
        kind: RecordKind,
        obj: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        // Arrow data is read, written and answered with the collector paused
        // throughout: resumed between the steps, it would collect at the
        // first allocation after the many objects the reading made.
        let arrow = with_gc_paused(py, || {
            let Some(batches) = crate::arrow::batches(obj, kind.record_name())? else {
                return Ok(None);
            };
            let results = self
                .writing(py, |l| l.upsert_arrow_table(kind, &batches))
                .map_err(|e| to_py_err(py, e))?;
            let schema = submetrics::columnar::result_schema();
            crate::arrow::to_pyarrow_table(py, schema, results).map(Some)
        })?;
        if let Some(table) = arrow {
            return Ok(table);
        }
        let arena = Bump::new();
        let report = if kind == RecordKind::Invoices {
            // Read on the other cores while the next chunk is read from
            // Python (on this thread, which holds the GIL).
            let mut chunks = crate::records::Chunks::new(obj, &arena);
            let read = submetrics::Ledger::read_invoice_chunks(|| chunks.next_chunk(CHUNK))?;
            self.writing(py, |l| l.upsert_read_invoices(read))
        } else {
            let trees = crate::records::records(obj, &arena)?;
            self.writing(py, |l| l.upsert_trees(kind, &trees))
        };
        results(py, report)
    }

    fn get<'py>(&self, py: Python<'py>, kind: RecordKind, id: &str) -> PyResult<Bound<'py, PyAny>> {
        let result = self.reading(py, |l| l.get(kind, id));
        Self::output(py, result)
    }

    fn list<'py>(
        &self,
        py: Python<'py>,
        kind: RecordKind,
        limit: Option<LimitArg>,
        offset: Option<OffsetArg>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let (limit, offset) = page_bounds(limit, offset);
        let page = self.reading(py, |l| l.list(kind, limit, offset));
        to_py(py, &page)
    }

    fn delete(&self, py: Python<'_>, kind: RecordKind, id: &str) -> PyResult<()> {
        self.writing(py, |l| l.delete(kind, id))
            .map_err(|e| to_py_err(py, e))
    }

    /// A read at an instant with report parameters: `f` gets the ledger, the
    /// parameters (datetimes made ledger-time-zone days) and the instant.
    fn at<'py>(
        &self,
        py: Python<'py>,
        as_of_value: Option<&Bound<'py, PyAny>>,
        params: Params,
        f: impl FnOnce(
            &submetrics::Ledger,
            &ReportParams,
            chrono::DateTime<chrono::Utc>,
        ) -> CoreResult<Value>
        + Send,
    ) -> PyResult<Bound<'py, PyAny>> {
        let result = self.resolved(py, as_of_value, params, f)?;
        Self::output(py, result)
    }

    /// Runs `f` with the ledger, the resolved parameters and the instant,
    /// with the GIL released.
    fn resolved<'py, T: Send>(
        &self,
        py: Python<'py>,
        as_of_value: Option<&Bound<'py, PyAny>>,
        params: Params,
        f: impl FnOnce(
            &submetrics::Ledger,
            &ReportParams,
            chrono::DateTime<chrono::Utc>,
        ) -> CoreResult<T>
        + Send,
    ) -> PyResult<CoreResult<T>> {
        let text = instant_text(as_of_value)?;
        Ok(self.reading(py, |l| {
            let at = as_of(text.as_deref(), l.settings())?;
            let params = params.resolve(l)?;
            f(l, &params, at)
        }))
    }

    /// [`Ledger::at`] for a result that is a record batch, answered as a
    /// `pyarrow.Table`. Callers pause the collector around the whole call,
    /// their arguments' conversion included.
    fn at_batch<'py>(
        &self,
        py: Python<'py>,
        as_of_value: Option<&Bound<'py, PyAny>>,
        params: Params,
        f: impl FnOnce(
            &submetrics::Ledger,
            &ReportParams,
            chrono::DateTime<chrono::Utc>,
        ) -> CoreResult<(SchemaRef, Vec<RecordBatch>)>
        + Send,
    ) -> PyResult<Bound<'py, PyAny>> {
        let text = instant_text(as_of_value)?;
        let result = self.reading(py, |l| {
            let at = as_of(text.as_deref(), l.settings())?;
            let params = params.resolve(l)?;
            f(l, &params, at)
        });
        let (schema, batches) = result.map_err(|e| to_py_err(py, e))?;
        crate::arrow::to_pyarrow_table(py, schema, batches)
    }

    /// The movement filters of the keyword arguments.
    fn movement_filters(
        py: Python<'_>,
        customer: Option<&Bound<'_, PyAny>>,
        start: Option<&Bound<'_, PyAny>>,
        end: Option<&Bound<'_, PyAny>>,
        kinds: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Params> {
        let filters = PyDict::new(py);
        filters.set_item("customer", customer)?;
        filters.set_item("start", start)?;
        filters.set_item("end", end)?;
        filters.set_item("kinds", kinds)?;
        crate::convert::params(py, None, Some(&filters), ParamView::Movements)
    }
}

#[pymethods]
impl Ledger {
    /// A new, empty ledger with its settings (defaults: USD, UTC, weeks from
    /// Monday, 7 days of churn grace, refunds reduce MRR).
    /// A new, empty ledger with the settings given as keywords, read as
    /// `update_settings` reads them (any setting, each checked alike).
    #[new]
    #[pyo3(signature = (**settings))]
    fn new(py: Python<'_>, settings: Option<&Bound<'_, PyDict>>) -> PyResult<Ledger> {
        let config = match settings {
            Some(dict) => to_json(dict.as_any(), "the settings")?,
            None => json!({}),
        };
        let settings = Settings::from_json(&config).map_err(|e| to_py_err(py, e))?;
        Ok(Ledger {
            inner: RwLock::new(submetrics::Ledger::new(settings)),
        })
    }

    /// The ledger settings as a dict.
    #[getter]
    fn settings<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let settings = self.reading(py, |l| json!(l.settings()));
        to_py(py, &settings)
    }

    /// Changes settings (any of the constructor's keywords); every customer
    /// is recomputed.
    #[pyo3(signature = (**changes))]
    fn update_settings<'py>(
        &self,
        py: Python<'py>,
        changes: Option<&Bound<'py, PyDict>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let patch = match changes {
            Some(dict) => to_json(dict.as_any(), "the settings")?,
            None => json!({}),
        };
        let result = self.writing(py, |l| l.update_settings(&patch).map(|s| json!(s)));
        Self::output(py, result)
    }

    /// Loads FX rate rows `{date, currency, rate}` (dicts or Arrow data);
    /// returns how many. Either every row is loaded or none is.
    fn load_fx_rates(&self, py: Python<'_>, rows: &Bound<'_, PyAny>) -> PyResult<usize> {
        if let Some(batches) = crate::arrow::batches(rows, "fx_rate")? {
            return self
                .writing(py, |l| l.load_fx_rates_arrow(&batches))
                .map_err(|e| to_py_err(py, e));
        }
        let arena = Bump::new();
        let rows = crate::records::records(rows, &arena)?;
        self.writing(py, |l| l.load_fx_rates_trees(&rows))
            .map_err(|e| to_py_err(py, e))
    }

    /// Imports Stripe API objects (any mix of kinds, list responses and
    /// events; see docs/stripe.md) and returns what was stored, skipped and
    /// rejected. Options: ``uncollectible`` ("failed" or "void"),
    /// ``data_source``.
    #[pyo3(signature = (objects, **options))]
    fn import_stripe<'py>(
        &self,
        py: Python<'py>,
        objects: &Bound<'py, PyAny>,
        options: Option<&Bound<'py, PyDict>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let arena = Bump::new();
        let objects: Vec<Value> = crate::records::records(objects, &arena)?
            .iter()
            .map(Json::to_value)
            .collect();
        let options = match options {
            Some(dict) => to_json(dict.as_any(), "the Stripe options")?,
            None => Value::Null,
        };
        let options =
            submetrics::StripeOptions::from_json(&options).map_err(|e| to_py_err(py, e))?;
        let report = self.writing(py, |l| json!(l.import_stripe(&objects, &options)));
        to_py(py, &report)
    }

    /// Upserts one customer or a list; returns one result dict per record.
    /// Arrow data (a pyarrow Table or RecordBatch, a pandas or polars
    /// DataFrame; one record per row) answers a pyarrow Table of the results.
    fn upsert_customers<'py>(
        &self,
        py: Python<'py>,
        records: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        self.upsert(py, RecordKind::Customers, records)
    }

    /// Upserts one plan or a list; returns one result dict per record.
    /// Arrow data (a pyarrow Table or RecordBatch, a pandas or polars
    /// DataFrame; one record per row) answers a pyarrow Table of the results.
    fn upsert_plans<'py>(
        &self,
        py: Python<'py>,
        records: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        self.upsert(py, RecordKind::Plans, records)
    }

    /// Upserts one plan group or a list (an id is assigned when absent);
    /// Arrow data answers a pyarrow Table of the results.
    fn upsert_plan_groups<'py>(
        &self,
        py: Python<'py>,
        records: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        self.upsert(py, RecordKind::PlanGroups, records)
    }

    /// Upserts one invoice or a list; returns one result dict per record.
    /// Arrow data (a pyarrow Table or RecordBatch, a pandas or polars
    /// DataFrame; one record per row) answers a pyarrow Table of the results.
    fn upsert_invoices<'py>(
        &self,
        py: Python<'py>,
        records: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        self.upsert(py, RecordKind::Invoices, records)
    }

    /// Upserts one data source or a list; Arrow data answers a pyarrow
    /// Table of the results.
    fn upsert_data_sources<'py>(
        &self,
        py: Python<'py>,
        records: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        self.upsert(py, RecordKind::DataSources, records)
    }

    /// A customer record; raises NotFoundError.
    fn get_customer<'py>(&self, py: Python<'py>, id: IdArg) -> PyResult<Bound<'py, PyAny>> {
        self.get(py, RecordKind::Customers, &id)
    }

    /// A plan record; raises NotFoundError.
    fn get_plan<'py>(&self, py: Python<'py>, id: IdArg) -> PyResult<Bound<'py, PyAny>> {
        self.get(py, RecordKind::Plans, &id)
    }

    /// A plan group record; raises NotFoundError.
    fn get_plan_group<'py>(&self, py: Python<'py>, id: IdArg) -> PyResult<Bound<'py, PyAny>> {
        self.get(py, RecordKind::PlanGroups, &id)
    }

    /// An invoice record; raises NotFoundError.
    fn get_invoice<'py>(&self, py: Python<'py>, id: IdArg) -> PyResult<Bound<'py, PyAny>> {
        self.get(py, RecordKind::Invoices, &id)
    }

    /// A data source record; raises NotFoundError.
    fn get_data_source<'py>(&self, py: Python<'py>, id: IdArg) -> PyResult<Bound<'py, PyAny>> {
        self.get(py, RecordKind::DataSources, &id)
    }

    /// `{count, list}` of customers in insertion order; `limit` defaults to
    /// the core's page size (100).
    #[pyo3(signature = (limit=None, offset=None))]
    fn list_customers<'py>(
        &self,
        py: Python<'py>,
        limit: Option<LimitArg>,
        offset: Option<OffsetArg>,
    ) -> PyResult<Bound<'py, PyAny>> {
        self.list(py, RecordKind::Customers, limit, offset)
    }

    /// `{count, list}` of plans, of one data source when `source` is given.
    #[pyo3(signature = (limit=None, offset=None, source=None))]
    fn list_plans<'py>(
        &self,
        py: Python<'py>,
        limit: Option<LimitArg>,
        offset: Option<OffsetArg>,
        source: Option<SourceArg>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let Some(source) = source else {
            return self.list(py, RecordKind::Plans, limit, offset);
        };
        let (limit, offset) = page_bounds(limit, offset);
        let page = self.reading(py, |l| {
            l.list_source_plans(&source, limit, offset)
                .map(|page| serde_json::json!(page))
        });
        Self::output(py, page)
    }

    /// `{count, list}` of plan groups.
    #[pyo3(signature = (limit=None, offset=None))]
    fn list_plan_groups<'py>(
        &self,
        py: Python<'py>,
        limit: Option<LimitArg>,
        offset: Option<OffsetArg>,
    ) -> PyResult<Bound<'py, PyAny>> {
        self.list(py, RecordKind::PlanGroups, limit, offset)
    }

    /// `{count, list}` of invoices, of one customer when `customer` is given.
    #[pyo3(signature = (limit=None, offset=None, customer=None))]
    fn list_invoices<'py>(
        &self,
        py: Python<'py>,
        limit: Option<LimitArg>,
        offset: Option<OffsetArg>,
        customer: Option<CustomerArg>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let Some(customer) = customer else {
            return self.list(py, RecordKind::Invoices, limit, offset);
        };
        let (limit, offset) = page_bounds(limit, offset);
        let page = self.reading(py, |l| {
            l.list_customer_invoices(&customer, limit, offset)
                .map(|page| serde_json::json!(page))
        });
        Self::output(py, page)
    }

    /// `{count, list}` of data sources.
    #[pyo3(signature = (limit=None, offset=None))]
    fn list_data_sources<'py>(
        &self,
        py: Python<'py>,
        limit: Option<LimitArg>,
        offset: Option<OffsetArg>,
    ) -> PyResult<Bound<'py, PyAny>> {
        self.list(py, RecordKind::DataSources, limit, offset)
    }

    /// Deletes a customer and its invoices.
    fn delete_customer(&self, py: Python<'_>, id: IdArg) -> PyResult<()> {
        self.delete(py, RecordKind::Customers, &id)
    }

    /// Deletes a plan; raises ConflictError while invoices use it.
    fn delete_plan(&self, py: Python<'_>, id: IdArg) -> PyResult<()> {
        self.delete(py, RecordKind::Plans, &id)
    }

    /// Deletes a plan group (its plans stay).
    fn delete_plan_group(&self, py: Python<'_>, id: IdArg) -> PyResult<()> {
        self.delete(py, RecordKind::PlanGroups, &id)
    }

    /// Deletes an invoice.
    fn delete_invoice(&self, py: Python<'_>, id: IdArg) -> PyResult<()> {
        self.delete(py, RecordKind::Invoices, &id)
    }

    /// Deletes a data source.
    fn delete_data_source(&self, py: Python<'_>, id: IdArg) -> PyResult<()> {
        self.delete(py, RecordKind::DataSources, &id)
    }

    /// Changes the given fields of a customer (custom_variables merge).
    fn update_customer<'py>(
        &self,
        py: Python<'py>,
        id: IdArg,
        patch: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let patch = to_json(patch, &format!("the patch of customer {id}"))?;
        let result = self.writing(py, |l| l.update_customer(&id, &patch).map(|c| json!(c)));
        Self::output(py, result)
    }

    /// Changes the given fields of a plan; its customers are recomputed.
    fn update_plan<'py>(
        &self,
        py: Python<'py>,
        id: IdArg,
        patch: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let patch = to_json(patch, &format!("the patch of plan {id}"))?;
        let result = self.writing(py, |l| l.update_plan(&id, &patch).map(|p| json!(p)));
        Self::output(py, result)
    }

    /// Changes the name and/or type of a data source (each a non-empty string).
    fn update_data_source<'py>(
        &self,
        py: Python<'py>,
        id: IdArg,
        patch: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let patch = to_json(patch, &format!("the patch of data source {id}"))?;
        let result = self.writing(py, |l| l.update_data_source(&id, &patch).map(|s| json!(s)));
        Self::output(py, result)
    }

    /// Replaces a plan group's name and plans; answers the group.
    fn update_plan_group<'py>(
        &self,
        py: Python<'py>,
        id: IdArg,
        name: &Bound<'py, PyAny>,
        plans: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let group = json!({
            "name": to_json(name, &format!("the name of plan group {id}"))?,
            "plans": to_json(plans, &format!("the plans of plan group {id}"))?,
        });
        let result = self.writing(py, |l| l.replace_plan_group(&id, &group).map(|g| json!(g)));
        Self::output(py, result)
    }

    /// Replaces (or creates) the invoice `id` with `record`.
    fn replace_invoice(
        &self,
        py: Python<'_>,
        id: IdArg,
        record: &Bound<'_, PyAny>,
    ) -> PyResult<()> {
        let record = to_json(record, &format!("invoice {id}"))?;
        self.writing(py, |l| l.replace_invoice(&id, &record))
            .map_err(|e| to_py_err(py, e))
    }

    /// Movements at `as_of` (default now), oldest first; filters: customer,
    /// start and end day (inclusive; a datetime means its day in the ledger's
    /// time zone), kinds (new, expansion, contraction, churn, reactivation).
    #[pyo3(signature = (as_of=None, customer=None, start=None, end=None, kinds=None))]
    fn movements<'py>(
        &self,
        py: Python<'py>,
        as_of: Option<&Bound<'py, PyAny>>,
        customer: Option<&Bound<'py, PyAny>>,
        start: Option<&Bound<'py, PyAny>>,
        end: Option<&Bound<'py, PyAny>>,
        kinds: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let params = Self::movement_filters(py, customer, start, end, kinds)?;
        let rows = self.resolved(py, as_of, params, |l, params, at| {
            let filter = MovementFilter::from_params(params, l.settings())?;
            l.movements(at, &filter)
        })?;
        let rows = rows.map_err(|e| to_py_err(py, e))?;
        with_gc_paused(py, || {
            Ok(crate::movement_dicts::movement_dicts(py, &rows)?.into_any())
        })
    }

    /// :meth:`movements` as a ``pyarrow.Table``, one row per movement in
    /// chunks of up to 65,536 rows; amounts and counts are ``int64`` columns.
    #[pyo3(signature = (as_of=None, customer=None, start=None, end=None, kinds=None))]
    fn movements_arrow<'py>(
        &self,
        py: Python<'py>,
        as_of: Option<&Bound<'py, PyAny>>,
        customer: Option<&Bound<'py, PyAny>>,
        start: Option<&Bound<'py, PyAny>>,
        end: Option<&Bound<'py, PyAny>>,
        kinds: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        with_gc_paused(py, || {
            let params = Self::movement_filters(py, customer, start, end, kinds)?;
            self.at_batch(py, as_of, params, |l, params, at| {
                let filter = MovementFilter::from_params(params, l.settings())?;
                let batches = l.movements_batches(at, &filter)?;
                Ok((Arc::new(submetrics::columnar::movement_schema()), batches))
            })
        })
    }

    /// :meth:`report` as a ``pyarrow.Table``: a table report one row per
    /// metric (``metric``, then a column per period), a series or list
    /// report one row per entry, any other one row. Integers stay ``int64``.
    #[pyo3(signature = (name, as_of=None, params=None, **kwargs))]
    fn report_arrow<'py>(
        &self,
        py: Python<'py>,
        name: NameArg,
        as_of: Option<&Bound<'py, PyAny>>,
        params: Option<&Bound<'py, PyAny>>,
        kwargs: Option<&Bound<'py, PyDict>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        with_gc_paused(py, || {
            let params = crate::convert::params(py, params, kwargs, ParamView::Report(&name))?;
            self.at_batch(py, as_of, params, |l, params, at| {
                let batch = l.report_batch(&name, params, at)?;
                Ok((batch.schema(), vec![batch]))
            })
        })
    }

    /// Runs a report by its interface name with its HTTP query parameters
    /// (a dict and/or keywords; `selected_date` means `selected-date`).
    #[pyo3(signature = (name, as_of=None, params=None, **kwargs))]
    fn report<'py>(
        &self,
        py: Python<'py>,
        name: NameArg,
        as_of: Option<&Bound<'py, PyAny>>,
        params: Option<&Bound<'py, PyAny>>,
        kwargs: Option<&Bound<'py, PyDict>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let params = crate::convert::params(py, params, kwargs, ParamView::Report(&name))?;
        self.at(py, as_of, params, |l, params, at| {
            l.report(&name, params, at)
        })
    }

    /// :meth:`report` over this ledger's customers as a partial (bytes),
    /// to merge with partials of the same request over other customers.
    #[pyo3(signature = (name, as_of=None, params=None, **kwargs))]
    fn report_partial<'py>(
        &self,
        py: Python<'py>,
        name: NameArg,
        as_of: Option<&Bound<'py, PyAny>>,
        params: Option<&Bound<'py, PyAny>>,
        kwargs: Option<&Bound<'py, PyDict>>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let params = crate::convert::params(py, params, kwargs, ParamView::Report(&name))?;
        let bytes = self
            .resolved(py, as_of, params, |l, params, at| {
                l.report_partial(&name, params, at).map(|p| p.to_bytes())
            })?
            .map_err(|e| to_py_err(py, e))?;
        Ok(PyBytes::new(py, &bytes))
    }

    /// The analytics customer list (the parameters of GET /customers).
    #[pyo3(signature = (as_of=None, params=None, **kwargs))]
    fn customers<'py>(
        &self,
        py: Python<'py>,
        as_of: Option<&Bound<'py, PyAny>>,
        params: Option<&Bound<'py, PyAny>>,
        kwargs: Option<&Bound<'py, PyDict>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let params = crate::convert::params(py, params, kwargs, ParamView::Customers)?;
        self.at(py, as_of, params, |l, params, at| {
            l.analytics_customers(params, at)
        })
    }

    /// The analytics detail of one customer; raises NotFoundError.
    #[pyo3(signature = (id, as_of=None, params=None, **kwargs))]
    fn customer<'py>(
        &self,
        py: Python<'py>,
        id: IdArg,
        as_of: Option<&Bound<'py, PyAny>>,
        params: Option<&Bound<'py, PyAny>>,
        kwargs: Option<&Bound<'py, PyDict>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let params = crate::convert::params(py, params, kwargs, ParamView::Customer)?;
        self.at(py, as_of, params, |l, params, at| {
            l.analytics_customer(&id, params, at)
        })
    }
}

/// A report's answer (a dict, as ``Ledger.report`` and the service's
/// ``GET /reports/{name}`` give it) as a ``pyarrow.Table``: what a service
/// client builds frames from. With the report's `name`, columns are typed
/// by its schema exactly as ``Ledger.report_arrow`` types them; without,
/// by their values.
#[pyfunction]
#[pyo3(signature = (result, name = None))]
pub fn report_table<'py>(
    py: Python<'py>,
    result: &Bound<'py, PyAny>,
    name: Option<&str>,
) -> PyResult<Bound<'py, PyAny>> {
    let result = crate::convert::to_json(result, "the report answer")?;
    let batch = match name {
        Some(name) => submetrics::ReportTable::from_result(name, result)
            .and_then(|table| submetrics::columnar::batch_of_table(&table)),
        None => submetrics::columnar::report_result_batch(result),
    }
    .map_err(|e| crate::errors::to_py_err(py, e))?;
    crate::arrow::to_pyarrow(py, batch)
}

/// The names of every report.
#[pyfunction]
pub fn report_names() -> Vec<&'static str> {
    submetrics::reports::report_names()
}
