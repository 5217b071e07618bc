//! `submetrics.Ledger`: the core ledger behind a read-write lock. Reads may
//! run from several threads at once; computations release the GIL.

use crate::convert::{records, to_json, to_py};
use crate::errors::to_py_err;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use serde_json::{Value, json};
use std::sync::{RwLock, RwLockReadGuard, RwLockWriteGuard};
use submetrics::{MovementFilter, MovementKind, RecordKind, Settings, WriteReport};

#[pyclass(module = "submetrics._native", name = "Ledger", frozen)]
pub struct Ledger {
    inner: RwLock<submetrics::Ledger>,
}

impl Ledger {
    fn read(&self) -> RwLockReadGuard<'_, submetrics::Ledger> {
        self.inner.read().unwrap_or_else(|p| p.into_inner())
    }

    fn write(&self) -> RwLockWriteGuard<'_, submetrics::Ledger> {
        self.inner.write().unwrap_or_else(|p| p.into_inner())
    }

    fn upsert<'py>(
        &self,
        py: Python<'py>,
        kind: RecordKind,
        obj: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let values = records(obj)?;
        let report: WriteReport = py.detach(|| self.write().upsert(kind, &values));
        to_py(py, &json!(report.results))
    }

    fn get<'py>(&self, py: Python<'py>, kind: RecordKind, id: &str) -> PyResult<Bound<'py, PyAny>> {
        let ledger = self.read();
        let value = match kind {
            RecordKind::Customers => ledger.customer(id).map(|r| json!(r)),
            RecordKind::Plans => ledger.plan(id).map(|r| json!(r)),
            RecordKind::PlanGroups => ledger.plan_group(id).map(|r| json!(r)),
            RecordKind::Invoices => ledger.invoice(id).map(|r| json!(r)),
            RecordKind::DataSources => ledger.data_source(id).map(|r| json!(r)),
        };
        match value {
            Some(value) => to_py(py, &value),
            None => Err(to_py_err(
                py,
                submetrics::Error::NotFound {
                    kind: kind_name(kind),
                    id: id.to_string(),
                },
            )),
        }
    }

    fn list<'py>(
        &self,
        py: Python<'py>,
        kind: RecordKind,
        limit: usize,
        offset: usize,
    ) -> PyResult<Bound<'py, PyAny>> {
        let ledger = self.read();
        let value = match kind {
            RecordKind::Customers => json!(ledger.list_customers(limit, offset)),
            RecordKind::Plans => json!(ledger.list_plans(limit, offset)),
            RecordKind::PlanGroups => json!(ledger.list_plan_groups(limit, offset)),
            RecordKind::Invoices => json!(ledger.list_invoices(limit, offset)),
            RecordKind::DataSources => json!(ledger.list_data_sources(limit, offset)),
        };
        to_py(py, &value)
    }

    fn delete(&self, py: Python<'_>, kind: RecordKind, id: &str) -> PyResult<()> {
        py.detach(|| self.write().delete(kind, id))
            .map_err(|e| to_py_err(py, e))
    }
}

fn kind_name(kind: RecordKind) -> &'static str {
    match kind {
        RecordKind::Customers => "customer",
        RecordKind::Plans => "plan",
        RecordKind::PlanGroups => "plan_group",
        RecordKind::Invoices => "invoice",
        RecordKind::DataSources => "data_source",
    }
}

#[pymethods]
impl Ledger {
    /// A new, empty ledger with its settings (defaults: USD, UTC, weeks from
    /// Monday, 7 days of churn grace, refunds reduce MRR).
    #[new]
    #[pyo3(signature = (base_currency=None, timezone=None, first_day_of_week=None, churn_grace_days=None, refund_handling=None))]
    fn new(
        py: Python<'_>,
        base_currency: Option<String>,
        timezone: Option<String>,
        first_day_of_week: Option<i64>,
        churn_grace_days: Option<i64>,
        refund_handling: Option<String>,
    ) -> PyResult<Ledger> {
        let mut config = serde_json::Map::new();
        let mut put = |key: &str, value: Option<Value>| {
            if let Some(value) = value {
                config.insert(key.to_string(), value);
            }
        };
        put("base_currency", base_currency.map(Value::from));
        put("timezone", timezone.map(Value::from));
        put("first_day_of_week", first_day_of_week.map(Value::from));
        put("churn_grace_days", churn_grace_days.map(Value::from));
        put("refund_handling", refund_handling.map(Value::from));
        let settings = Settings::from_json(&Value::Object(config)).map_err(|e| to_py_err(py, e))?;
        Ok(Ledger {
            inner: RwLock::new(submetrics::Ledger::new(settings)),
        })
    }

    /// The ledger settings as a dict.
    #[getter]
    fn settings<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        to_py(py, &json!(self.read().settings()))
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
            Some(dict) => to_json(dict.as_any())?,
            None => json!({}),
        };
        let settings = py
            .detach(|| self.write().update_settings(&patch).map(|s| json!(s)))
            .map_err(|e| to_py_err(py, e))?;
        to_py(py, &settings)
    }

    /// Loads FX rate rows `{date, currency, rate}`; returns how many.
    fn load_fx_rates(&self, py: Python<'_>, rows: &Bound<'_, PyAny>) -> PyResult<usize> {
        let rows = records(rows)?;
        py.detach(|| self.write().load_fx_rates(&rows))
            .map_err(|e| to_py_err(py, e))
    }

    /// Upserts one customer or a list; returns one result dict per record.
    fn upsert_customers<'py>(
        &self,
        py: Python<'py>,
        records: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        self.upsert(py, RecordKind::Customers, records)
    }

    /// Upserts one plan or a list; returns one result dict per record.
    fn upsert_plans<'py>(
        &self,
        py: Python<'py>,
        records: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        self.upsert(py, RecordKind::Plans, records)
    }

    /// Upserts one plan group or a list (an id is assigned when absent).
    fn upsert_plan_groups<'py>(
        &self,
        py: Python<'py>,
        records: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        self.upsert(py, RecordKind::PlanGroups, records)
    }

    /// Upserts one invoice or a list; returns one result dict per record.
    fn upsert_invoices<'py>(
        &self,
        py: Python<'py>,
        records: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        self.upsert(py, RecordKind::Invoices, records)
    }

    /// Upserts one data source or a list.
    fn upsert_data_sources<'py>(
        &self,
        py: Python<'py>,
        records: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        self.upsert(py, RecordKind::DataSources, records)
    }

    /// A customer record; raises NotFoundError.
    fn get_customer<'py>(&self, py: Python<'py>, id: &str) -> PyResult<Bound<'py, PyAny>> {
        self.get(py, RecordKind::Customers, id)
    }

    /// A plan record; raises NotFoundError.
    fn get_plan<'py>(&self, py: Python<'py>, id: &str) -> PyResult<Bound<'py, PyAny>> {
        self.get(py, RecordKind::Plans, id)
    }

    /// A plan group record; raises NotFoundError.
    fn get_plan_group<'py>(&self, py: Python<'py>, id: &str) -> PyResult<Bound<'py, PyAny>> {
        self.get(py, RecordKind::PlanGroups, id)
    }

    /// An invoice record; raises NotFoundError.
    fn get_invoice<'py>(&self, py: Python<'py>, id: &str) -> PyResult<Bound<'py, PyAny>> {
        self.get(py, RecordKind::Invoices, id)
    }

    /// A data source record; raises NotFoundError.
    fn get_data_source<'py>(&self, py: Python<'py>, id: &str) -> PyResult<Bound<'py, PyAny>> {
        self.get(py, RecordKind::DataSources, id)
    }

    /// `{count, list}` of customers in insertion order.
    #[pyo3(signature = (limit=100, offset=0))]
    fn list_customers<'py>(
        &self,
        py: Python<'py>,
        limit: usize,
        offset: usize,
    ) -> PyResult<Bound<'py, PyAny>> {
        self.list(py, RecordKind::Customers, limit, offset)
    }

    /// `{count, list}` of plans.
    #[pyo3(signature = (limit=100, offset=0))]
    fn list_plans<'py>(
        &self,
        py: Python<'py>,
        limit: usize,
        offset: usize,
    ) -> PyResult<Bound<'py, PyAny>> {
        self.list(py, RecordKind::Plans, limit, offset)
    }

    /// `{count, list}` of plan groups.
    #[pyo3(signature = (limit=100, offset=0))]
    fn list_plan_groups<'py>(
        &self,
        py: Python<'py>,
        limit: usize,
        offset: usize,
    ) -> PyResult<Bound<'py, PyAny>> {
        self.list(py, RecordKind::PlanGroups, limit, offset)
    }

    /// `{count, list}` of invoices.
    #[pyo3(signature = (limit=100, offset=0))]
    fn list_invoices<'py>(
        &self,
        py: Python<'py>,
        limit: usize,
        offset: usize,
    ) -> PyResult<Bound<'py, PyAny>> {
        self.list(py, RecordKind::Invoices, limit, offset)
    }

    /// `{count, list}` of data sources.
    #[pyo3(signature = (limit=100, offset=0))]
    fn list_data_sources<'py>(
        &self,
        py: Python<'py>,
        limit: usize,
        offset: usize,
    ) -> PyResult<Bound<'py, PyAny>> {
        self.list(py, RecordKind::DataSources, limit, offset)
    }

    /// Deletes a customer and its invoices.
    fn delete_customer(&self, py: Python<'_>, id: &str) -> PyResult<()> {
        self.delete(py, RecordKind::Customers, id)
    }

    /// Deletes a plan; raises ConflictError while invoices use it.
    fn delete_plan(&self, py: Python<'_>, id: &str) -> PyResult<()> {
        self.delete(py, RecordKind::Plans, id)
    }

    /// Deletes a plan group (its plans stay).
    fn delete_plan_group(&self, py: Python<'_>, id: &str) -> PyResult<()> {
        self.delete(py, RecordKind::PlanGroups, id)
    }

    /// Deletes an invoice.
    fn delete_invoice(&self, py: Python<'_>, id: &str) -> PyResult<()> {
        self.delete(py, RecordKind::Invoices, id)
    }

    /// Deletes a data source.
    fn delete_data_source(&self, py: Python<'_>, id: &str) -> PyResult<()> {
        self.delete(py, RecordKind::DataSources, id)
    }

    /// Changes the given fields of a customer (custom_variables merge).
    fn update_customer<'py>(
        &self,
        py: Python<'py>,
        id: &str,
        patch: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let patch = to_json(patch)?;
        let updated = py
            .detach(|| self.write().update_customer(id, &patch).map(|c| json!(c)))
            .map_err(|e| to_py_err(py, e))?;
        to_py(py, &updated)
    }

    /// Changes the given fields of a plan; its customers are recomputed.
    fn update_plan<'py>(
        &self,
        py: Python<'py>,
        id: &str,
        patch: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let patch = to_json(patch)?;
        let updated = py
            .detach(|| self.write().update_plan(id, &patch).map(|p| json!(p)))
            .map_err(|e| to_py_err(py, e))?;
        to_py(py, &updated)
    }

    /// Movements at `as_of` (default now), oldest first; filters: customer,
    /// start and end day (inclusive), kinds (new, expansion, ...).
    #[pyo3(signature = (as_of=None, customer=None, start=None, end=None, kinds=None))]
    fn movements<'py>(
        &self,
        py: Python<'py>,
        as_of: Option<&Bound<'py, PyAny>>,
        customer: Option<String>,
        start: Option<&Bound<'py, PyAny>>,
        end: Option<&Bound<'py, PyAny>>,
        kinds: Option<Vec<String>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let ledger = self.read();
        let at = crate::convert::as_of(as_of, ledger.settings())?;
        let day = |value: Option<&Bound<'py, PyAny>>,
                   name: &str|
         -> PyResult<Option<chrono::NaiveDate>> {
            value
                .filter(|v| !v.is_none())
                .map(|v| {
                    let text = match to_json(v)? {
                        Value::String(s) => s,
                        other => other.to_string(),
                    };
                    submetrics::query::parse_day(text.get(..10).unwrap_or(&text)).ok_or_else(|| {
                        to_py_err(
                            py,
                            submetrics::Error::InvalidQuery {
                                param: name.to_string(),
                                reason: format!("`{text}` is not a date"),
                            },
                        )
                    })
                })
                .transpose()
        };
        let mut filter = MovementFilter {
            customer: customer.map(submetrics::CustomerId::new),
            from: day(start, "start")?,
            to: day(end, "end")?,
            kinds: Vec::new(),
        };
        for kind in kinds.unwrap_or_default() {
            filter.kinds.push(MovementKind::parse(&kind).ok_or_else(|| {
                to_py_err(py, submetrics::Error::InvalidQuery {
                    param: "kinds".to_string(),
                    reason: format!("`{kind}` is not one of new, expansion, contraction, churn, reactivation"),
                })
            })?);
        }
        let rows = py
            .detach(|| ledger.movements(at, &filter))
            .map_err(|e| to_py_err(py, e))?;
        to_py(py, &json!(rows))
    }

    /// Runs a report by its interface name with its HTTP query parameters
    /// (a dict and/or keywords; `selected_date` means `selected-date`).
    #[pyo3(signature = (name, as_of=None, params=None, **kwargs))]
    fn report<'py>(
        &self,
        py: Python<'py>,
        name: &str,
        as_of: Option<&Bound<'py, PyAny>>,
        params: Option<&Bound<'py, PyDict>>,
        kwargs: Option<&Bound<'py, PyDict>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let params = crate::convert::params(params, kwargs)?;
        let ledger = self.read();
        let at = crate::convert::as_of(as_of, ledger.settings())?;
        let result = py
            .detach(|| ledger.report(name, &params, at))
            .map_err(|e| to_py_err(py, e))?;
        to_py(py, &result)
    }

    /// The analytics customer list (the parameters of GET /customers).
    #[pyo3(signature = (as_of=None, params=None, **kwargs))]
    fn customers<'py>(
        &self,
        py: Python<'py>,
        as_of: Option<&Bound<'py, PyAny>>,
        params: Option<&Bound<'py, PyDict>>,
        kwargs: Option<&Bound<'py, PyDict>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let params = crate::convert::params(params, kwargs)?;
        let ledger = self.read();
        let at = crate::convert::as_of(as_of, ledger.settings())?;
        let result = py
            .detach(|| ledger.analytics_customers(&params, at))
            .map_err(|e| to_py_err(py, e))?;
        to_py(py, &result)
    }

    /// The analytics detail of one customer; raises NotFoundError.
    #[pyo3(signature = (id, as_of=None, params=None, **kwargs))]
    fn customer<'py>(
        &self,
        py: Python<'py>,
        id: &str,
        as_of: Option<&Bound<'py, PyAny>>,
        params: Option<&Bound<'py, PyDict>>,
        kwargs: Option<&Bound<'py, PyDict>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let params = crate::convert::params(params, kwargs)?;
        let ledger = self.read();
        let at = crate::convert::as_of(as_of, ledger.settings())?;
        let result = py
            .detach(|| ledger.analytics_customer(id, &params, at))
            .map_err(|e| to_py_err(py, e))?;
        to_py(py, &result)
    }
}

/// The names of every report.
#[pyfunction]
pub fn report_names() -> Vec<&'static str> {
    submetrics::reports::report_names()
}
