//! Record identifiers as newtypes, so a plan id can never be passed where a
//! customer id is expected. Ids are the caller's external ids: opaque,
//! non-empty strings, unique per record type.

use serde::{Deserialize, Serialize};
use std::fmt;

macro_rules! id_type {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
        #[serde(transparent)]
        pub struct $name(pub String);

        impl $name {
            pub fn new(id: impl Into<String>) -> Self {
                Self(id.into())
            }
            pub fn as_str(&self) -> &str {
                &self.0
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.0)
            }
        }

        impl From<&str> for $name {
            fn from(s: &str) -> Self {
                Self(s.to_string())
            }
        }

        impl std::borrow::Borrow<str> for $name {
            fn borrow(&self) -> &str {
                &self.0
            }
        }
    };
}

id_type!(
    /// External id of a customer.
    CustomerId
);
id_type!(
    /// External id of a plan.
    PlanId
);
id_type!(
    /// External id of a plan group (assigned by the ledger when not given).
    PlanGroupId
);
id_type!(
    /// External id of an invoice.
    InvoiceId
);
id_type!(
    /// Groups a customer's invoices into one subscription.
    SubscriptionId
);
id_type!(
    /// Id of a data source (a billing system connection or an API push source).
    DataSourceId
);
