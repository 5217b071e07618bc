//! # submetrics
//!
//! Subscription analytics from invoice history: MRR and ARR, movements (new,
//! expansion, contraction, churn, reactivation), churn and retention, and the
//! reports built on them. The crate is pure: no I/O, no clock (`as_of` is an
//! input), no global state; only the `testing` feature's test helpers read
//! files.
//!
//! Data flows one way:
//!
//! 1. **Records** (customers, plans, plan groups, invoices) arrive as JSON in
//!    either interface shape and are validated ([`model`]) into the
//!    [`Ledger`]'s store.
//! 2. Each customer's invoices become a **timeline** of subscription events:
//!    amounts normalized to monthly ([`normalize`]), renewals, lapses,
//!    cancellations and refunds.
//! 3. Replaying a timeline at an `as_of` yields daily **movements**
//!    ([`Movement`]).
//! 4. **Reports** ([`reports`]) aggregate movements into periods, converted
//!    to the base currency ([`FxTable`]), all behind one entry point,
//!    [`Ledger::report`].
//!
//! ## Layers
//!
//! The source tree is layered; a module uses only its own layer and the
//! ones below it (`tests/layers.rs` checks every `crate::` path):
//!
//! 1. **model**: `error`, `blank`, `ids`, `money`, `period`, `model/`,
//!    `normalize`, `fx`, `csv`: records and their rules, amounts, dates and
//!    rates.
//! 2. **store** (`store/`): the records, settings and FX table with their
//!    indexes, nothing derived. Writes note which customers they touched.
//! 3. **derive** (`derive/`): timelines, replays, movements, the replay
//!    cache and the per-day totals beside it, read through one view of the
//!    store and the cache.
//! 4. **query** (`query/`): typed report requests, the shared customer
//!    filters, the movement filter.
//! 5. **reports** (`reports/`): one module per report family and the
//!    registry that names them.
//! 6. **ledger** (`ledger/`, with `stripe/`, `scenario`, `columnar`,
//!    `testing`): the [`Ledger`] facade, which owns the store and the cache
//!    and passes each write's stale customers on to the cache.
//!
//! ```
//! use submetrics::{Ledger, MovementFilter, Settings};
//! use serde_json::json;
//!
//! let mut ledger = Ledger::new(Settings::default());
//! ledger.upsert_plans(&[json!({"id": "y", "name": "Annual", "interval": "year", "interval_count": 1, "currency": "USD"})]);
//! ledger.upsert_customers(&[json!({"id": "acme", "name": "Acme"})]);
//! let report = ledger.upsert_invoices(&[json!({
//!     "id": "inv-1", "customer_id": "acme", "type": "subscription", "plan_id": "y",
//!     "invoice_date": "2024-01-15", "amount": 120000, "currency": "USD"
//! })]);
//! assert_eq!(report.accepted(), 1);
//!
//! let as_of = "2024-02-01T00:00:00Z".parse().unwrap();
//! let movements = ledger.movements(as_of, &MovementFilter::default()).unwrap();
//! assert_eq!(movements[0].kind.as_str(), "new");
//! assert_eq!(movements[0].mrr_change, 10_000); // 120000 a year is 10000 a month
//! ```
//!
//! The crate has no `unsafe` code: records and indexes are plain vectors,
//! boxed strings and shared strings.

#![forbid(unsafe_code)]
#![deny(missing_docs)]

pub(crate) mod blank;
#[cfg(feature = "arrow")]
pub mod columnar;
pub mod csv;
pub(crate) mod derive;
pub(crate) mod error;
pub(crate) mod fx;
pub(crate) mod ids;
pub(crate) mod ledger;
pub mod model;
pub(crate) mod money;
pub mod normalize;
pub(crate) mod period;
pub(crate) mod query;
pub mod reports;
#[cfg(feature = "scenario")]
pub mod scenario;
pub(crate) mod store;
pub mod stripe;
#[cfg(feature = "testing")]
pub mod testing;

pub use derive::{
    CurrentSubscription, CustomerMovements, CustomerProfile, CustomerStatus, Movement,
    MovementKind, MovementSubtype, PlanList, Replay, ReplayWindow, SubscriptionState,
};
pub use error::{Error, Result};
pub use fx::{FxRate, FxTable};
pub use ids::{CustomerId, DataSourceId, InvoiceId, PlanGroupId, PlanId, SubscriptionId};
pub use ledger::Ledger;
pub use model::{
    Customer, DataSource, Interval, Invoice, InvoiceRecord, Plan, PlanGroup, PlanGroupView,
    PlanSummary, RefundHandling, Settings, StoredInvoice, Timestamp,
};
pub use money::{Cents, Currency, Total, round_ratio};
pub use query::{MovementFilter, ReportParams};
pub use reports::{ReportPartial, ReportTable};
pub use store::{
    ImportStatus, Page, ReadCustomers, ReadInvoices, ReadRecords, RecordKind, WriteReport,
    WriteResult,
};
pub use stripe::{StripeImport, StripeOptions, StripeRejection, StripeSkip};

/// Parses an `as_of` given as text: an ISO 8601 timestamp, or a bare date
/// meaning the end of that day in the time zone (the last instant of it).
pub fn parse_as_of(text: &str, settings: &Settings) -> Result<chrono::DateTime<chrono::Utc>> {
    match Timestamp::parse(text).map(|t| t.moment()) {
        Some(model::Moment::Instant(instant)) => Ok(instant),
        Some(model::Moment::Date(date)) => {
            let next = date.succ_opt().unwrap_or(date);
            Ok(model::start_of_day(next, settings.timezone) - chrono::Duration::seconds(1))
        }
        None => Err(Error::query(
            "as_of",
            format!(
                "`{text}` is not an ISO 8601 date or timestamp in the years {} to {}",
                Timestamp::YEARS.start(),
                Timestamp::YEARS.end()
            ),
        )),
    }
}

/// The README's code blocks run as doc tests, so its Rust example stays true.
#[cfg(doctest)]
#[doc = include_str!("../../README.md")]
pub struct ReadmeDoctests;
