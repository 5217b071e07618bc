//! The ledger: one account's records and everything derived from them,
//! behind one type.
//!
//! [`Ledger`] is the facade over the layers below it: the store (records
//! and indexes), the replay cache (the derive layer's), and the reports.
//! Its methods are the crate's API: writes go to the store, which notes the
//! customers they touched, and the ledger passes that on to the cache
//! (`write`); reads of derived figures go through the derive layer's view
//! of the store and the cache (`derived`). Only the replays are kept: a
//! write marks the customers it touches for the next read to replay, a
//! settings or FX change drops them all.

mod queries;
mod reads;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_cache;
#[cfg(test)]
mod tests_updates;
mod updates;
mod writes;

#[cfg(feature = "arrow")]
pub(crate) use queries::warm_block_at;

use crate::derive::{CacheCell, Derived, ReplayCache};
use crate::error::Result;
use crate::fx::FxTable;
use crate::model::Settings;
use crate::query::ReportParams;
use crate::reports::{Report, ReportPartial, ReportTable};
use crate::store::{Stale, Store};
use chrono::{DateTime, Utc};
use serde_json::Value;

/// One account's records, settings, FX table and cached replays.
#[derive(Debug)]
pub struct Ledger {
    store: Store,
    replay_cache: CacheCell,
}

impl Default for Ledger {
    fn default() -> Self {
        Ledger::new(Settings::default())
    }
}

impl Clone for Ledger {
    /// A copy of the records; the copy replays on its first read.
    fn clone(&self) -> Self {
        Ledger {
            store: self.store.clone(),
            replay_cache: CacheCell::default(),
        }
    }
}

impl Ledger {
    /// An empty ledger with the given settings.
    pub fn new(settings: Settings) -> Ledger {
        Ledger {
            store: Store::new(settings),
            replay_cache: CacheCell::default(),
        }
    }

    /// The records and the replay cache, as the reports and derived reads
    /// see them.
    pub(crate) fn derived(&self) -> Derived<'_> {
        Derived::new(&self.store, &self.replay_cache)
    }

    /// Runs a write on the store, then hands what it touched to the replay
    /// cache.
    fn write<T>(&mut self, write: impl FnOnce(&mut Store) -> T) -> T {
        let out = write(&mut self.store);
        let stale = self.store.take_stale();
        ReplayCache::invalidate(&mut self.replay_cache, stale);
        out
    }

    /// Drops every cached replay, so the next read replays every customer
    /// from its invoices (what a settings or FX change does). The replays are
    /// freed beside that full replay.
    pub fn forget_replays(&mut self) {
        let all = Stale {
            all: true,
            ..Stale::default()
        };
        ReplayCache::invalidate(&mut self.replay_cache, all);
    }

    /// The settings in force (with `fx_pivot` always set to the ledger's pivot).
    pub fn settings(&self) -> &Settings {
        self.store.settings()
    }

    /// Replaces the settings and recomputes every customer. The FX pivot
    /// stays the one the ledger was created with: the loaded rates are quoted
    /// against it.
    pub fn set_settings(&mut self, settings: Settings) {
        self.write(|store| store.set_settings(settings))
    }

    /// Merges the keys of a JSON object into the settings (see
    /// [`Settings::merged`]) and recomputes every customer. Naming another
    /// `fx_pivot` is an error: it is fixed when the ledger is created.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidSetting`](crate::Error::InvalidSetting) naming the first setting that cannot be used, or `fx_pivot`
    /// when it names another pivot, or `base_currency` as [`Ledger::check_settings`] refuses it;
    /// the settings are unchanged then.
    pub fn update_settings(&mut self, patch: &Value) -> Result<&Settings> {
        self.write(|store| store.update_settings(patch).map(|_| ()))?;
        Ok(self.store.settings())
    }

    /// Whether `settings` may replace this ledger's: what
    /// [`Ledger::update_settings`] checks, for callers that merge settings
    /// themselves before storing them.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidSetting`](crate::Error::InvalidSetting) naming `base_currency` when it
    /// is a new base currency without an exchange rate (and not the FX pivot) while an invoice
    /// is in another currency.
    pub fn check_settings(&self, settings: &Settings) -> Result<()> {
        self.store.check_settings(settings)
    }

    /// The exchange rates loaded so far.
    pub fn fx(&self) -> &FxTable {
        self.store.fx()
    }

    /// Adds exchange rates (`{date, currency, rate}`, units of `currency` per
    /// one unit of the base currency at the time of the first load). Either
    /// every row is valid and loaded, or none is.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidRecord`](crate::Error::InvalidRecord) naming the first row and field that cannot be read (a date, a
    /// three-letter currency, a positive rate); no row is loaded then.
    pub fn load_fx_rates(&mut self, rows: &[Value]) -> Result<usize> {
        self.write(|store| store.load_fx_rates(rows))
    }

    /// Runs the report `name` (see [`report_names`](crate::reports::report_names)) with HTTP query
    /// parameters at `as_of`; the answer is JSON in the interface's response
    /// shape for that report.
    ///
    /// # Errors
    ///
    /// [`Error::UnknownReport`](crate::Error::UnknownReport) for a name the registry does not know;
    /// [`Error::UnknownParameter`](crate::Error::UnknownParameter) for a parameter the report does not read
    /// (naming a near miss when there is one); [`Error::InvalidQuery`](crate::Error::InvalidQuery) for a
    /// value it cannot use; [`Error::MissingFxRate`](crate::Error::MissingFxRate) when a conversion to the
    /// base currency lacks a rate.
    ///
    /// # Examples
    ///
    /// ```
    /// # use serde_json::json;
    /// # use submetrics::{Ledger, Settings};
    /// # let mut ledger = Ledger::new(Settings::default());
    /// # ledger.upsert_plans(&[json!({"id": "m", "name": "Monthly", "billing_freq": "month", "currency": "USD"})]);
    /// # ledger.upsert_customers(&[json!({"id": "acme", "name": "Acme"})]);
    /// # ledger.upsert_invoices(&[json!({"id": "inv-1", "customer_id": "acme", "type": "subscription",
    /// #     "plan_id": "m", "invoice_date": "2024-01-15", "amount": 5000, "currency": "USD"})]);
    /// use submetrics::ReportParams;
    ///
    /// let as_of = submetrics::parse_as_of("2024-02-01", ledger.settings())?;
    /// let params = ReportParams::from([
    ///     ("date".to_string(), "20240101-20240131".to_string()),
    ///     ("interval".to_string(), "month".to_string()),
    /// ]);
    /// let mrr = ledger.report("mrr", &params, as_of)?;
    /// assert_eq!(mrr["result"][0]["total_mrr"], 5000);
    /// assert_eq!(ledger.report("mrr", &ReportParams::from([("intervall".into(), "month".into())]), as_of)
    ///     .unwrap_err().code(), "invalid_query");
    /// assert_eq!(ledger.report("nope", &params, as_of).unwrap_err().code(), "unknown_report");
    /// # Ok::<(), submetrics::Error>(())
    /// ```
    pub fn report(&self, name: &str, params: &ReportParams, as_of: DateTime<Utc>) -> Result<Value> {
        Ok(Report::find(name)?
            .run(&self.derived(), params, as_of)?
            .into_json())
    }

    /// The text of [`Ledger::report`]'s answer, the bytes
    /// `serde_json::to_vec` writes of it, written straight from the
    /// report's typed rows (a long list on every core) without building the
    /// answer as JSON values first: for answering over the wire.
    ///
    /// # Errors
    ///
    /// As [`Ledger::report`].
    pub fn report_json(
        &self,
        name: &str,
        params: &ReportParams,
        as_of: DateTime<Utc>,
    ) -> Result<Vec<u8>> {
        Ok(Report::find(name)?
            .run(&self.derived(), params, as_of)?
            .into_json_text())
    }

    /// The report `name` as CSV text: what [`ReportTable::to_csv`] writes
    /// of [`Ledger::report_table`]'s table (a header of its columns, a
    /// line per row, nested values as their JSON text), written from the
    /// typed rows' cells by column, a piece of rows per core, without a
    /// JSON object per row.
    ///
    /// # Errors
    ///
    /// As [`Ledger::report`].
    pub fn report_csv(
        &self,
        name: &str,
        params: &ReportParams,
        as_of: DateTime<Utc>,
    ) -> Result<Vec<u8>> {
        let report = Report::find(name)?;
        let (columns, cells) = report
            .run(&self.derived(), params, as_of)?
            .into_cells(report);
        let text = crate::reports::table_csv::of_cells(&columns, &cells);
        cells.drop_on_every_core();
        Ok(text)
    }

    /// Runs the report `name` as [`Ledger::report`] does and answers it as
    /// a [`ReportTable`]: the same rows, with each column's kind and
    /// currency.
    ///
    /// # Errors
    ///
    /// As [`Ledger::report`].
    ///
    /// # Examples
    ///
    /// ```
    /// # use serde_json::json;
    /// # use submetrics::{Ledger, Settings};
    /// # let mut ledger = Ledger::new(Settings::default());
    /// # ledger.upsert_plans(&[json!({"id": "m", "name": "Monthly", "billing_freq": "month", "currency": "USD"})]);
    /// # ledger.upsert_customers(&[json!({"id": "acme", "name": "Acme"})]);
    /// # ledger.upsert_invoices(&[json!({"id": "inv-1", "customer_id": "acme", "type": "subscription",
    /// #     "plan_id": "m", "invoice_date": "2024-01-15", "amount": 5000, "currency": "USD"})]);
    /// use submetrics::ReportParams;
    /// use submetrics::reports::{Kind, MoneyIn};
    ///
    /// let as_of = submetrics::parse_as_of("2024-02-01", ledger.settings())?;
    /// let params = ReportParams::from([("date".to_string(), "20240101-20240131".to_string())]);
    /// let table = ledger.report_table("mrr", &params, as_of)?;
    /// let mrr = table.column("total_mrr").unwrap();
    /// assert_eq!((mrr.kind, mrr.currency.as_deref()), (Kind::Money(MoneyIn::Report), Some("USD")));
    /// assert_eq!(table.column("nrr").unwrap().kind, Kind::Percent);
    /// assert_eq!(table.rows[0]["total_mrr"], 5000);
    /// # Ok::<(), submetrics::Error>(())
    /// ```
    pub fn report_table(
        &self,
        name: &str,
        params: &ReportParams,
        as_of: DateTime<Utc>,
    ) -> Result<ReportTable> {
        let report = Report::find(name)?;
        Ok(report
            .run(&self.derived(), params, as_of)?
            .into_table(report))
    }

    /// The report `name` over this ledger's customers as a partial, to
    /// merge with partials of the same request over other customers. The
    /// name and parameters are checked exactly as [`Ledger::report`] checks
    /// them; a report without a partial form is
    /// [`Error::PartialUnsupported`](crate::Error::PartialUnsupported).
    pub fn report_partial(
        &self,
        name: &str,
        params: &ReportParams,
        as_of: DateTime<Utc>,
    ) -> Result<ReportPartial> {
        crate::reports::partial::report_partial(&self.derived(), name, params, as_of)
    }
}
