//! Async tasks: reports and movements computed on the libuv thread pool.
//! A panic inside the core is caught and rejected as an error; results
//! cross back as JSON text.

use crate::errors::invalid_argument;
use crate::exact::BigIntegers;
use crate::ledger::{Shared, movements, read, report};
use napi::bindgen_prelude::{Env, Task};
use serde_json::Value;
use std::panic::{AssertUnwindSafe, catch_unwind};

fn guarded<T>(work: impl FnOnce() -> napi::Result<T>) -> napi::Result<T> {
    catch_unwind(AssertUnwindSafe(work))
        .unwrap_or_else(|_| Err(invalid_argument("the computation failed unexpectedly")))
}

pub struct ReportTask {
    pub ledger: Shared,
    pub big: BigIntegers,
    pub name: String,
    pub params: Option<Value>,
    pub as_of: Option<String>,
    pub instants: Vec<String>,
}

impl Task for ReportTask {
    /// JSON text, written on the worker thread; `index.js` parses it.
    type Output = String;
    type JsValue = String;

    fn compute(&mut self) -> napi::Result<String> {
        guarded(|| {
            report(
                &read(&self.ledger),
                &self.name,
                self.params.take(),
                self.as_of.as_deref(),
                &self.instants,
                self.big,
            )
        })
    }

    fn resolve(&mut self, _env: Env, output: String) -> napi::Result<String> {
        Ok(output)
    }
}

pub struct MovementsTask {
    pub ledger: Shared,
    pub big: BigIntegers,
    pub as_of: Option<String>,
    pub filter: Option<Value>,
}

impl Task for MovementsTask {
    /// JSON text; `index.js` parses it.
    type Output = String;
    type JsValue = String;

    fn compute(&mut self) -> napi::Result<String> {
        guarded(|| {
            movements(
                &read(&self.ledger),
                self.as_of.as_deref(),
                self.filter.take(),
                self.big,
            )
        })
    }

    fn resolve(&mut self, _env: Env, output: String) -> napi::Result<String> {
        Ok(output)
    }
}
