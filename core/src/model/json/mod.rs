//! The JSON a record is read from, seen through one small interface
//! ([`Node`]), so the same field rules ([`super::Fields`]) read either a
//! `serde_json::Value` or a [`Json`] tree parsed straight from text. A
//! [`Json`] tree borrows its strings from the text where they have no
//! escapes and keeps an object's fields in one vector: reading a record from
//! text costs a few allocations instead of a map and a string per field.

mod plain;
pub(crate) use plain::{Scalar, visit_fields};

use rayon::prelude::*;
use serde::de::{self, Deserialize, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Number, Value};
use std::borrow::Cow;
use std::fmt;

/// [`Json::parse_many`] parses more documents than this on every core.
const PARALLEL_TEXTS: usize = 256;

/// A JSON value read from text, borrowing from it where it can. Objects keep
/// their fields in input order; an object that gives a key twice is an
/// error, as the CSV header and Arrow batch that name a field twice are:
/// which of its values was meant is unknown (`serde_json::Value` would keep
/// the last one without a word).
#[derive(Debug, Clone, PartialEq)]
///
/// The bindings build these trees from their languages' objects, so records
/// reach the core without a `serde_json::Value` in between.
pub enum Json<'a> {
    /// `null`.
    Null,
    /// `true` or `false`.
    Bool(bool),
    /// A number as JSON writes it (an integer stays an integer).
    Number(Number),
    /// A string, borrowed where the source allows.
    String(Cow<'a, str>),
    /// An array, in order.
    Array(Vec<Json<'a>>),
    /// An object's fields in input order.
    Object(Vec<(Cow<'a, str>, Json<'a>)>),
}

impl<'a> Json<'a> {
    /// Parses one JSON document (with the same syntax rules and nesting limit
    /// as `serde_json::from_str`). Objects and arrays of plain values
    /// (strings without escapes, integers), the common record, are read by
    /// a faster reader of their own.
    pub fn parse(text: &'a str) -> serde_json::Result<Json<'a>> {
        match plain::parse(text) {
            Some(json) => Ok(json),
            None => serde_json::from_str(text),
        }
    }

    /// Parses many JSON documents (the lines of a JSONL file), on every
    /// core when there are many. A malformed document is an error with its
    /// index; when several are, the first one's.
    pub fn parse_many(
        texts: &[&'a str],
    ) -> std::result::Result<Vec<Json<'a>>, (usize, serde_json::Error)> {
        let parse = |(i, text): (usize, &&'a str)| Json::parse(text).map_err(|e| (i, e));
        if texts.len() > PARALLEL_TEXTS {
            let parsed: Vec<_> = texts.par_iter().enumerate().map(parse).collect();
            parsed.into_iter().collect()
        } else {
            texts.iter().enumerate().map(parse).collect()
        }
    }

    /// The same value as a `serde_json::Value` (for messages that quote it).
    pub fn to_value(&self) -> Value {
        match self {
            Json::Null => Value::Null,
            Json::Bool(b) => Value::Bool(*b),
            Json::Number(n) => Value::Number(n.clone()),
            Json::String(s) => Value::String(s.to_string()),
            Json::Array(items) => Value::Array(items.iter().map(Json::to_value).collect()),
            Json::Object(fields) => Value::Object(
                fields
                    .iter()
                    .map(|(key, value)| (key.to_string(), value.to_value()))
                    .collect::<Map<String, Value>>(),
            ),
        }
    }
}

/// What a JSON node is, with its scalar content.
pub enum View<'a, N: Node<'a>> {
    Null,
    Bool(bool),
    /// A number (copied out: it is a few bytes).
    Number(Number),
    /// An infinite float, which JSON never has: a cell of an Arrow float
    /// column. Every field refuses it (a NaN cell reads as null instead,
    /// since pandas writes NaN for a missing value).
    Infinite(f64),
    String(&'a str),
    /// A typed date or instant, which JSON never has: the cells of Arrow
    /// date and timestamp columns.
    Timestamp(crate::model::Timestamp),
    Array(N::Items),
    Object(N::Entries),
}

/// How an infinite float is spelled in messages and in text: `Infinity`
/// or `-Infinity`.
pub(crate) fn infinity_text(f: f64) -> &'static str {
    if f < 0.0 { "-Infinity" } else { "Infinity" }
}

/// A borrowed JSON node that records can be read from.
pub trait Node<'a>: Copy {
    /// The items of an array.
    type Items: Iterator<Item = Self>;
    /// The fields of an object, each key once, in input order.
    type Entries: Iterator<Item = (&'a str, Self)>;

    fn view(self) -> View<'a, Self>;

    /// Whether the node is an object.
    fn is_object(self) -> bool;

    /// The field `name` of an object (`None` when absent or not an object).
    fn get(self, name: &str) -> Option<Self>;

    /// The node as a `serde_json::Value`, for messages that quote it.
    fn to_value(self) -> Value;

    /// The names of an object's fields, summarized for quick absence tests
    /// ([`NameSet::ALL`] for anything else).
    fn names(self) -> NameSet {
        NameSet::of(self.view())
    }
}

/// A summary of a set of field names in 64 bits, one bit per name picked
/// by its length and its first and last bytes: a name whose bit is clear
/// is surely not in the set, one whose bit is set may be. Reading a record
/// looks up a few dozen names (with their aliases), most of them absent;
/// this answers most absences without comparing strings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NameSet(u64);

impl NameSet {
    /// The empty set.
    pub const NONE: NameSet = NameSet(0);
    /// A set that may hold every name.
    pub const ALL: NameSet = NameSet(u64::MAX);

    #[inline]
    fn bit(name: &str) -> u64 {
        let bytes = name.as_bytes();
        let (first, last) = match bytes {
            [] => (0, 0),
            [first, .., last] => (*first, *last),
            [only] => (*only, *only),
        };
        let mixed = (bytes.len() as u64)
            .wrapping_mul(0x9e37_79b9_7f4a_7c15)
            .wrapping_add(u64::from(first) << 8 | u64::from(last))
            .wrapping_mul(0xbf58_476d_1ce4_e5b9);
        1 << (mixed >> 58)
    }

    /// The names of an object's fields ([`NameSet::ALL`] for anything else).
    pub fn of<'a, N: Node<'a>>(view: View<'a, N>) -> NameSet {
        match view {
            View::Object(entries) => entries.fold(NameSet::NONE, |set, (name, _)| set.with(name)),
            _ => NameSet::ALL,
        }
    }

    /// The set with `name` added.
    #[must_use]
    pub fn with(self, name: &str) -> NameSet {
        NameSet(self.0 | NameSet::bit(name))
    }

    /// Whether `name` may be in the set (`false`: surely not).
    #[inline]
    pub fn may_hold(self, name: &str) -> bool {
        self.0 & NameSet::bit(name) != 0
    }
}

impl<'a> Node<'a> for &'a Value {
    type Items = std::slice::Iter<'a, Value>;
    type Entries = EntryRefs<'a>;

    fn view(self) -> View<'a, Self> {
        match self {
            Value::Null => View::Null,
            Value::Bool(b) => View::Bool(*b),
            Value::Number(n) => View::Number(n.clone()),
            Value::String(s) => View::String(s),
            Value::Array(items) => View::Array(items.iter()),
            Value::Object(map) => View::Object(EntryRefs(map.iter())),
        }
    }

    fn is_object(self) -> bool {
        self.is_object()
    }

    fn get(self, name: &str) -> Option<Self> {
        self.as_object()?.get(name)
    }

    fn to_value(self) -> Value {
        self.clone()
    }
}

/// The fields of a `serde_json` object as [`Node`] entries.
pub struct EntryRefs<'a>(serde_json::map::Iter<'a>);

impl<'a> Iterator for EntryRefs<'a> {
    type Item = (&'a str, &'a Value);

    fn next(&mut self) -> Option<Self::Item> {
        self.0.next().map(|(key, value)| (key.as_str(), value))
    }
}

impl<'a> Node<'a> for &'a Json<'a> {
    type Items = std::slice::Iter<'a, Json<'a>>;
    type Entries = JsonEntries<'a>;

    fn view(self) -> View<'a, Self> {
        match self {
            Json::Null => View::Null,
            Json::Bool(b) => View::Bool(*b),
            Json::Number(n) => View::Number(n.clone()),
            Json::String(s) => View::String(s),
            Json::Array(items) => View::Array(items.iter()),
            Json::Object(fields) => View::Object(JsonEntries(fields.iter())),
        }
    }

    fn is_object(self) -> bool {
        matches!(self, Json::Object(_))
    }

    fn get(self, name: &str) -> Option<Self> {
        match self {
            Json::Object(fields) => fields
                .iter()
                .find(|(key, _)| key == name)
                .map(|(_, value)| value),
            _ => None,
        }
    }

    fn to_value(self) -> Value {
        Json::to_value(self)
    }
}

/// The fields of a [`Json`] object as [`Node`] entries.
pub struct JsonEntries<'a>(std::slice::Iter<'a, (Cow<'a, str>, Json<'a>)>);

impl<'a> Iterator for JsonEntries<'a> {
    type Item = (&'a str, &'a Json<'a>);

    fn next(&mut self) -> Option<Self::Item> {
        self.0.next().map(|(key, value)| (key.as_ref(), value))
    }
}

impl<'de> Deserialize<'de> for Json<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(JsonVisitor)
    }
}

struct JsonVisitor;

impl<'de> Visitor<'de> for JsonVisitor {
    type Value = Json<'de>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any valid JSON value")
    }

    fn visit_bool<E>(self, b: bool) -> Result<Self::Value, E> {
        Ok(Json::Bool(b))
    }

    fn visit_i64<E>(self, n: i64) -> Result<Self::Value, E> {
        Ok(Json::Number(n.into()))
    }

    fn visit_u64<E>(self, n: u64) -> Result<Self::Value, E> {
        Ok(Json::Number(n.into()))
    }

    fn visit_f64<E>(self, f: f64) -> Result<Self::Value, E> {
        Ok(Number::from_f64(f).map_or(Json::Null, Json::Number))
    }

    fn visit_borrowed_str<E>(self, s: &'de str) -> Result<Self::Value, E> {
        Ok(Json::String(Cow::Borrowed(s)))
    }

    fn visit_str<E>(self, s: &str) -> Result<Self::Value, E> {
        Ok(Json::String(Cow::Owned(s.to_string())))
    }

    fn visit_string<E>(self, s: String) -> Result<Self::Value, E> {
        Ok(Json::String(Cow::Owned(s)))
    }

    fn visit_none<E>(self) -> Result<Self::Value, E> {
        Ok(Json::Null)
    }

    fn visit_unit<E>(self) -> Result<Self::Value, E> {
        Ok(Json::Null)
    }

    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        Deserialize::deserialize(d)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(64));
        while let Some(item) = seq.next_element()? {
            items.push(item);
        }
        Ok(Json::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        // Records have a dozen fields or so: one allocation holds them.
        let mut fields: Vec<(Cow<'de, str>, Json<'de>)> = Vec::with_capacity(16);
        while let Some(Key(key)) = map.next_key_seed(KeySeed)? {
            if fields.iter().any(|(k, _)| *k == key) {
                return Err(de::Error::custom(format!(
                    "the key `{key}` is given twice in one object; give it once"
                )));
            }
            let value: Json<'de> = map.next_value()?;
            fields.push((key, value));
        }
        Ok(Json::Object(fields))
    }
}

/// An object key, borrowed from the text when it has no escapes.
struct Key<'de>(Cow<'de, str>);

struct KeySeed;

impl<'de> DeserializeSeed<'de> for KeySeed {
    type Value = Key<'de>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_str(KeyVisitor)
    }
}

struct KeyVisitor;

impl<'de> Visitor<'de> for KeyVisitor {
    type Value = Key<'de>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a string key")
    }

    fn visit_borrowed_str<E: de::Error>(self, s: &'de str) -> Result<Self::Value, E> {
        Ok(Key(Cow::Borrowed(s)))
    }

    fn visit_str<E: de::Error>(self, s: &str) -> Result<Self::Value, E> {
        Ok(Key(Cow::Owned(s.to_string())))
    }

    fn visit_string<E: de::Error>(self, s: String) -> Result<Self::Value, E> {
        Ok(Key(Cow::Owned(s)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_serde_json_values() {
        for text in [
            r#"{"id":"a\"b","n":-3,"u":18446744073709551615,"f":1.5,"e":1e3,"t":true,"z":null,"l":[1,{"x":"y"}],"o":{}}"#,
            r#"{"k":1,"j":2}"#,
            r#"[1, "two", [3]]"#,
            r#""caf\u00e9""#,
            "12",
        ] {
            let json = Json::parse(text).unwrap();
            let value: Value = serde_json::from_str(text).unwrap();
            assert_eq!(json.to_value(), value, "{text}");
            assert_eq!(json.to_value().to_string(), value.to_string());
        }
    }

    #[test]
    fn strings_without_escapes_are_borrowed() {
        let json = Json::parse(r#"{"plain":"abc","escaped":"a\nb"}"#).unwrap();
        let Json::Object(fields) = &json else {
            panic!("an object")
        };
        assert!(matches!(fields[0].0, Cow::Borrowed("plain")));
        assert!(matches!(fields[0].1, Json::String(Cow::Borrowed("abc"))));
        assert!(matches!(&fields[1].1, Json::String(Cow::Owned(s)) if s == "a\nb"));
    }

    #[test]
    fn a_key_given_twice_in_one_object_is_an_error_at_any_depth() {
        for text in [
            r#"{"a":1,"b":2,"a":null}"#,
            r#"{"a":{"x":"1","x":"2"}}"#,
            r#"[{"a":1},{"b":"\n","b":1}]"#,
        ] {
            let error = Json::parse(text).unwrap_err().to_string();
            assert!(
                error.contains("is given twice in one object; give it once at line 1 column"),
                "{text}: {error}"
            );
        }
        assert_eq!(
            Json::parse(r#"{"a":1,"b":2,"a":null}"#)
                .unwrap_err()
                .to_string(),
            "the key `a` is given twice in one object; give it once at line 1 column 16"
        );
        // The same key in two objects is no repeat.
        assert!(Json::parse(r#"[{"a":1},{"a":2}]"#).is_ok());
    }

    #[test]
    fn many_documents_parse_in_order_and_the_first_malformed_one_is_named() {
        let mut owned: Vec<String> = (0..1000).map(|i| format!(r#"{{"id":"c{i}"}}"#)).collect();
        let texts: Vec<&str> = owned.iter().map(String::as_str).collect();
        let parsed = Json::parse_many(&texts).unwrap();
        assert_eq!(parsed.len(), 1000);
        assert_eq!(parsed[999].to_value(), serde_json::json!({"id": "c999"}));
        drop(parsed);
        owned[700] = "{".to_string();
        owned[300] = r#"{"id":}"#.to_string();
        let texts: Vec<&str> = owned.iter().map(String::as_str).collect();
        let (index, error) = Json::parse_many(&texts).unwrap_err();
        assert_eq!(
            (index, error.to_string()),
            (300, "expected value at line 1 column 7".to_string())
        );
    }

    #[test]
    fn a_name_set_may_hold_its_names_and_tells_most_others_apart() {
        let record = Json::parse(r#"{"id":"i1","customer_id":"c1","amount":5}"#).unwrap();
        let names = (&record).names();
        assert!(
            ["id", "customer_id", "amount"]
                .iter()
                .all(|n| names.may_hold(n))
        );
        let absent = ["external_id", "customer", "date", "status", "tax", "lines"];
        let maybe: Vec<&str> = absent.into_iter().filter(|n| names.may_hold(n)).collect();
        // One of the six shares a bit with a name of the record.
        assert_eq!(maybe.len(), 1, "{maybe:?}");
        assert_eq!((&Json::Null).names(), NameSet::ALL);
    }

    proptest::proptest! {
        /// A set may hold every name added to it (no false absence).
        #[test]
        fn a_name_set_never_misses_a_name_it_holds(
            names in proptest::collection::vec("[a-z_\\u{e9}]{0,12}", 0..20),
        ) {
            let set = names.iter().fold(NameSet::NONE, |set, name| set.with(name));
            proptest::prop_assert!(names.iter().all(|name| set.may_hold(name)));
        }
    }

    #[test]
    fn syntax_errors_are_serde_json_errors() {
        let ours = Json::parse(r#"{"a":}"#).unwrap_err().to_string();
        let theirs = serde_json::from_str::<Value>(r#"{"a":}"#)
            .unwrap_err()
            .to_string();
        assert_eq!(ours, theirs);
        assert!(Json::parse(r#"{"a":1} x"#).is_err());
    }
}
