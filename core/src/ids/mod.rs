//! Record identifiers as newtypes, so a plan id can never be passed where a
//! customer id is expected. Ids are the caller's external ids: opaque,
//! non-empty strings, unique per record type. An id that records point at
//! (a customer's, a plan's) is a shared string: cloning it, into indexes or
//! from a customer into its invoices, costs no allocation; it is one pointer
//! wide (its length lives beside the text), so an optional one is 8 bytes.
//! An invoice id is held by its invoice alone (the store keeps the text in
//! a buffer of its own), so it is an inline string, without a reference
//! count.

mod packed;
mod recent;

pub(crate) use packed::PackedIds;
pub(crate) use recent::RecentIds;

use arcstr::ArcStr;
use compact_str::CompactString;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;

macro_rules! id_type {
    ($(#[$doc:meta])* $name:ident($text:ty)) => {
        $(#[$doc])*
        #[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub struct $name($text);

        impl $name {
            /// Wraps the text as given: no trimming and no check (records check that ids are
            /// non-empty when they read them).
            pub fn new(id: impl Into<String>) -> Self {
                Self(<$text>::from(id.into()))
            }
            /// The id's text.
            pub fn as_str(&self) -> &str {
                &self.0
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
                Self(<$text>::from(s))
            }
        }

        impl std::borrow::Borrow<str> for $name {
            fn borrow(&self) -> &str {
                &self.0
            }
        }
    };
}

/// What only a shared id can do.
macro_rules! shared_id_methods {
    ($($name:ident),*) => {$(
        impl $name {
            /// Whether both are clones of one shared id: a test by pointer
            /// that implies equality (equal ids need not share).
            pub fn shares(&self, other: &Self) -> bool {
                ArcStr::ptr_eq(&self.0, &other.0)
            }
        }
    )*};
}

id_type!(
    /// External id of a customer.
    CustomerId(ArcStr)
);
id_type!(
    /// External id of a plan.
    PlanId(ArcStr)
);
id_type!(
    /// External id of a plan group (assigned by the ledger when not given).
    PlanGroupId(ArcStr)
);
id_type!(
    /// External id of an invoice. Ids of up to 24 bytes (most) are held
    /// inline, so reading an invoice allocates nothing for its id.
    InvoiceId(CompactString)
);
id_type!(
    /// Groups a customer's invoices into one subscription.
    SubscriptionId(ArcStr)
);
id_type!(
    /// Id of a data source (a billing system connection or an API push source).
    DataSourceId(ArcStr)
);

shared_id_methods!(
    CustomerId,
    PlanId,
    PlanGroupId,
    SubscriptionId,
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

    #[test]
    fn a_shared_id_is_one_pointer_and_ids_hash_and_order_like_their_text() {
        use std::hash::BuildHasher;
        assert_eq!(std::mem::size_of::<Option<CustomerId>>(), 8);
        assert_eq!(std::mem::size_of::<Option<InvoiceId>>(), 24);
        let hasher = foldhash::fast::FixedState::default();
        let id = PlanId::from("plan_b");
        assert_eq!(hasher.hash_one(&id), hasher.hash_one("plan_b"));
        assert!(PlanId::from("plan_ab") < id && id < PlanId::from("plan_c"));
        assert!(id.shares(&id.clone()) && !id.shares(&PlanId::from("plan_b")));
        let invoice = InvoiceId::from("in_1");
        assert_eq!(hasher.hash_one(&invoice), hasher.hash_one("in_1"));
        assert_eq!(invoice.clone(), invoice);
        assert!(InvoiceId::from("in_09") < invoice && invoice < InvoiceId::from("in_2"));
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
