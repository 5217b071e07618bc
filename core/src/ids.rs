//! Record identifiers as newtypes, so a plan id can never be passed where a
//! customer id is expected. Ids are the caller's external ids: opaque,
//! non-empty strings, unique per record type. An id is a shared string:
//! cloning it (into indexes, or from a customer into its invoices) costs
//! no allocation.

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;
use std::sync::Arc;

macro_rules! id_type {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub struct $name(Arc<str>);

        impl $name {
            pub fn new(id: impl Into<String>) -> Self {
                Self(Arc::from(id.into()))
            }
            pub fn as_str(&self) -> &str {
                &self.0
            }
            /// Whether both are clones of one shared id: a test by pointer
            /// that implies equality (equal ids need not share).
            pub fn shares(&self, other: &Self) -> bool {
                Arc::ptr_eq(&self.0, &other.0)
            }
            /// The first 16 bytes of the id, zero-padded: where two prefixes
            /// differ they order like the ids (at the first differing byte
            /// the smaller id has the smaller byte, or has ended), so a sort
            /// compares the strings themselves only on equal prefixes.
            #[allow(dead_code)]
            pub(crate) fn sort_prefix(&self) -> [u8; 16] {
                let mut prefix = [0u8; 16];
                let bytes = self.0.as_bytes();
                let len = bytes.len().min(16);
                prefix[..len].copy_from_slice(&bytes[..len]);
                prefix
            }

            /// Starts loading the shared string and its reference counts,
            /// which sit just before it (see `prefetch`).
            #[allow(dead_code)]
            pub(crate) fn prefetch(&self) {
                let counts = 2 * std::mem::size_of::<usize>();
                let text = Arc::as_ptr(&self.0).cast::<u8>() as usize;
                crate::prefetch::prefetch_range(text.wrapping_sub(counts), counts + self.0.len());
            }
        }

        impl Serialize for $name {
            fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serializer.serialize_str(&self.0)
            }
        }

        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                String::deserialize(deserializer).map(Self::new)
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.0)
            }
        }

        impl From<&str> for $name {
            fn from(s: &str) -> Self {
                Self(Arc::from(s))
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sort_prefix_is_the_first_sixteen_bytes_zero_padded() {
        assert_eq!(CustomerId::from("ab").sort_prefix()[..3], *b"ab\0");
        let long = CustomerId::from("cus_0000000000001234");
        assert_eq!(long.sort_prefix(), *b"cus_000000000000");
    }

    proptest::proptest! {
        #[test]
        fn differing_sort_prefixes_order_like_the_ids(
            a in "[a-c\\x00_0-9]{0,20}",
            b in "[a-c\\x00_0-9]{0,20}",
        ) {
            let (a, b) = (CustomerId::from(a.as_str()), CustomerId::from(b.as_str()));
            let (prefix_a, prefix_b) = (a.sort_prefix(), b.sort_prefix());
            if prefix_a != prefix_b {
                proptest::prop_assert_eq!(prefix_a.cmp(&prefix_b), a.cmp(&b));
            }
        }
    }
}
