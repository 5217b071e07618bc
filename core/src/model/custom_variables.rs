//! A customer's custom variables: text keys with text values, in the order
//! first given. They are held as one string of keys and values one after
//! another, each behind its length, so a customer's few variables take one
//! small allocation instead of a map with a string for every key and value.

use serde::Serialize;
use serde::ser::SerializeMap;

/// Custom variables in the order their keys first appeared. Keys are
/// distinct (a later value for a key replaces the earlier one in its place);
/// the text of all keys and values together is at most 4 GiB.
///
/// They are one boxed string, each key and each value written as its length
/// in bytes, in decimal, a colon and the text (`8:industry5:media`): one
/// pointer in a customer record and one block, whatever their count.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CustomVariables {
    /// `None` when there are none.
    encoded: Option<Box<str>>,
}

impl CustomVariables {
    /// Variables from key-value pairs in order; `None` when their text
    /// together exceeds 4 GiB.
    pub fn from_pairs<K, V>(pairs: impl IntoIterator<Item = (K, V)>) -> Option<CustomVariables>
    where
        K: AsRef<str>,
        V: AsRef<str>,
    {
        let mut distinct: Vec<(K, V)> = Vec::new();
        for (key, value) in pairs {
            match distinct
                .iter()
                .position(|(k, _)| k.as_ref() == key.as_ref())
            {
                Some(i) => distinct[i].1 = value,
                None => distinct.push((key, value)),
            }
        }
        let length: usize = distinct
            .iter()
            .map(|(k, v)| k.as_ref().len() + v.as_ref().len())
            .sum();
        u32::try_from(length).ok()?;
        if distinct.is_empty() {
            return Some(CustomVariables::default());
        }
        let mut encoded = String::with_capacity(length + 4 * distinct.len());
        let mut digits = itoa::Buffer::new();
        for (key, value) in &distinct {
            for part in [key.as_ref(), value.as_ref()] {
                encoded.push_str(digits.format(part.len()));
                encoded.push(':');
                encoded.push_str(part);
            }
        }
        Some(CustomVariables {
            encoded: Some(encoded.into_boxed_str()),
        })
    }

    /// How many pairs there are.
    pub fn len(&self) -> usize {
        self.iter().count()
    }

    /// Whether there is no pair.
    pub fn is_empty(&self) -> bool {
        self.encoded.is_none()
    }

    /// The pairs in order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        let mut rest = self.encoded.as_deref().unwrap_or_default();
        let mut parts = std::iter::from_fn(move || {
            let (length, after) = rest.split_once(':')?;
            let (part, next) = after.split_at_checked(length.parse().ok()?)?;
            rest = next;
            Some(part)
        });
        std::iter::from_fn(move || Some((parts.next()?, parts.next()?)))
    }

    /// The keys in order.
    pub fn keys(&self) -> impl Iterator<Item = &str> {
        self.iter().map(|(key, _)| key)
    }

    /// The value of exactly this key.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.iter().find(|(k, _)| *k == key).map(|(_, value)| value)
    }
}

/// Serialized as a JSON object in order.
impl Serialize for CustomVariables {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.len()))?;
        for (key, value) in self.iter() {
            map.serialize_entry(key, value)?;
        }
        map.end()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pairs_keep_their_order_and_a_repeated_key_its_first_place() {
        let vars =
            CustomVariables::from_pairs([("b", "1"), ("a", ""), ("b", "22"), ("", "x")]).unwrap();
        let pairs: Vec<(&str, &str)> = vars.iter().collect();
        assert_eq!(pairs, [("b", "22"), ("a", ""), ("", "x")]);
        assert_eq!(
            (vars.len(), vars.get("a"), vars.get("c")),
            (3, Some(""), None)
        );
        assert_eq!(
            serde_json::to_string(&vars).unwrap(),
            r#"{"b":"22","a":"","":"x"}"#
        );
    }

    #[test]
    fn pairs_are_one_string_of_lengths_and_texts() {
        let vars = CustomVariables::from_pairs([("size", "large"), ("région", "")]).unwrap();
        assert_eq!(vars.encoded.as_deref(), Some("4:size5:large7:région0:"));
        assert_eq!(std::mem::size_of::<CustomVariables>(), 16);
    }

    #[test]
    fn no_pairs_is_empty_and_allocates_nothing() {
        let vars = CustomVariables::from_pairs(Vec::<(String, String)>::new()).unwrap();
        assert!(vars.is_empty() && vars.iter().next().is_none());
        assert_eq!(vars, CustomVariables::default());
        assert_eq!(serde_json::to_string(&vars).unwrap(), "{}");
    }

    proptest::proptest! {
        #[test]
        fn pairs_read_back_as_a_map_with_first_places_would(
            pairs in proptest::collection::vec(("[a-c:1]{0,3}", "[x-zé:9]{0,12}"), 0..8)
        ) {
            let vars = CustomVariables::from_pairs(pairs.iter().cloned()).unwrap();
            let mut model: indexmap::IndexMap<String, String> = indexmap::IndexMap::new();
            for (key, value) in pairs {
                model.insert(key, value);
            }
            let read: Vec<(String, String)> =
                vars.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
            let expected: Vec<(String, String)> = model.into_iter().collect();
            proptest::prop_assert_eq!(read, expected);
        }
    }
}
