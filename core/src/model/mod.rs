//! The records a ledger holds: customers, plans, plan groups, invoices and
//! data sources, plus the ledger settings. Each record type reads itself from
//! JSON (either interface shape) and checks every rule that needs no other
//! record; cross-record rules live in the ledger.

#[cfg(feature = "arrow")]
mod arrow_rows;
mod custom_variables;
pub(crate) mod customer;
mod data_source;
mod fields;
mod invoice;
mod json;
mod plan;
mod plan_group;
mod settings;
mod timestamp;

#[cfg(feature = "arrow")]
pub(crate) use arrow_rows::ArrowRecords;
pub use custom_variables::CustomVariables;
pub use customer::Customer;
pub use data_source::DataSource;
pub use fields::DATA_SOURCE_NAMES;
pub(crate) use fields::{Fields, ID_NAMES, first_repeated, integer_text};
#[cfg(feature = "arrow")]
pub(crate) use invoice::InvoiceColumns;
pub use invoice::{
    Invoice, InvoiceDetails, InvoiceLine, InvoiceRecord, InvoiceStatus, InvoiceType, StoredInvoice,
    Transaction, TransactionResult, TransactionType,
};
pub use json::Json;
pub(crate) use json::{Node, View};
pub use plan::{Interval, Plan, PricingModel};
pub use plan_group::{PlanGroup, PlanGroupView, PlanSummary};
pub use settings::{RefundHandling, Settings};
pub(crate) use timestamp::plain_date;
pub use timestamp::{Moment, Timestamp, UnixMillis, start_of_day};
