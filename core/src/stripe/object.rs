//! Reading Stripe API objects: the objects of a batch by kind and id, and
//! field access that names the Stripe object and field in every error.

use crate::error::Error;
use serde_json::Value;
use std::collections::HashMap;

/// The Stripe object kinds the mapping reads (`object` field values).
pub const KINDS: &[&str] = &[
    "customer",
    "product",
    "price",
    "plan",
    "subscription",
    "invoice",
    "credit_note",
    "refund",
    "charge",
];

/// The objects of one batch by kind, each kind in first-seen order, a later
/// object with a known id replacing the earlier one (so events given oldest
/// first leave the latest state).
#[derive(Debug, Default)]
pub(crate) struct Objects<'a> {
    by_kind: HashMap<&'static str, Vec<&'a Value>>,
    positions: HashMap<(&'static str, &'a str), usize>,
    /// Objects that are not used, with the reason.
    pub skipped: Vec<(String, String, String)>,
}

impl<'a> Objects<'a> {
    /// Collects `values`: Stripe objects, list responses
    /// (`{"object": "list", "data": [...]}`), arrays of either, and events
    /// (`{"object": "event", "data": {"object": ...}}`, read as the object
    /// they carry; `*.deleted` events are skipped: history stays).
    pub fn collect(values: &'a [Value]) -> Objects<'a> {
        let mut objects = Objects::default();
        for value in values {
            objects.add(value);
        }
        objects
    }

    fn add(&mut self, value: &'a Value) {
        match value {
            Value::Array(items) => items.iter().for_each(|item| self.add(item)),
            Value::Object(map) => {
                let kind = map.get("object").and_then(Value::as_str).unwrap_or("");
                let id = map.get("id").and_then(Value::as_str).unwrap_or("");
                match kind {
                    "list" | "search_result" => {
                        if let Some(data) = map.get("data") {
                            self.add(data);
                        }
                    }
                    "event" => {
                        let event_type = map.get("type").and_then(Value::as_str).unwrap_or("");
                        match value.pointer("/data/object") {
                            _ if event_type.ends_with(".deleted") => self.skip(
                                "event",
                                id,
                                format!("`{event_type}` events change no history"),
                            ),
                            Some(object) => self.add(object),
                            None => self.skip("event", id, "has no `data.object`".to_string()),
                        }
                    }
                    _ => match KINDS.iter().find(|known| **known == kind) {
                        Some(known) if !id.is_empty() => {
                            if map.get("deleted") == Some(&Value::Bool(true)) {
                                self.skip(kind, id, "is deleted".to_string());
                                return;
                            }
                            let list = self.by_kind.entry(known).or_default();
                            match self.positions.get(&(*known, id)) {
                                Some(&at) => list[at] = value,
                                None => {
                                    self.positions.insert((known, id), list.len());
                                    list.push(value);
                                }
                            }
                        }
                        Some(_) => self.skip(kind, "?", "has no `id`".to_string()),
                        None if kind.is_empty() => {
                            self.skip("?", id, "has no `object` field".to_string())
                        }
                        None => self.skip(kind, id, "is not a kind the import reads".to_string()),
                    },
                }
            }
            _ => self.skip("?", "?", "is not a JSON object".to_string()),
        }
    }

    fn skip(&mut self, kind: &str, id: &str, reason: String) {
        self.skipped
            .push((kind.to_string(), id.to_string(), reason));
    }

    /// The objects of one kind in input order.
    pub fn of(&self, kind: &str) -> &[&'a Value] {
        self.by_kind.get(kind).map_or(&[], Vec::as_slice)
    }
}

/// One Stripe object being read: every error names its kind, id and the
/// field's path.
#[derive(Clone, Copy)]
pub(crate) struct Obj<'a> {
    pub kind: &'static str,
    pub id: &'a str,
    pub value: &'a Value,
}

impl<'a> Obj<'a> {
    pub fn new(kind: &'static str, value: &'a Value) -> Obj<'a> {
        Obj {
            kind,
            id: value.get("id").and_then(Value::as_str).unwrap_or("?"),
            value,
        }
    }

    /// An error about `field` of this object.
    pub fn error(&self, field: &str, reason: impl Into<String>) -> Error {
        Error::invalid(self.kind, self.id, field, reason)
    }

    /// The value at a dotted path, `None` when absent or null.
    pub fn at(&self, path: &str) -> Option<&'a Value> {
        path.split('.')
            .try_fold(self.value, |value, key| value.get(key))
            .filter(|value| !value.is_null())
    }

    /// Text at `path`; a present non-text value is an error.
    pub fn text(&self, path: &str) -> Result<Option<&'a str>, Error> {
        match self.at(path) {
            None => Ok(None),
            Some(Value::String(text)) => Ok(Some(text)),
            Some(other) => Err(self.error(path, format!("must be text, got {other}"))),
        }
    }

    /// An id at `path`: a string, or an expanded object's `id`.
    pub fn id_at(&self, path: &str) -> Result<Option<&'a str>, Error> {
        match self.at(path) {
            None => Ok(None),
            Some(Value::String(id)) => Ok(Some(id)),
            Some(Value::Object(map)) => match map.get("id") {
                Some(Value::String(id)) => Ok(Some(id)),
                _ => Err(self.error(path, "is an object without an `id`")),
            },
            Some(other) => Err(self.error(path, format!("must be an id, got {other}"))),
        }
    }

    /// A required id at `path`.
    pub fn required_id(&self, path: &str) -> Result<&'a str, Error> {
        self.id_at(path)?
            .ok_or_else(|| self.error(path, "is required"))
    }

    /// An integer at `path` (Stripe amounts are integers in the currency's
    /// smallest unit).
    pub fn integer(&self, path: &str) -> Result<Option<i64>, Error> {
        match self.at(path) {
            None => Ok(None),
            Some(value) => value
                .as_i64()
                .map(Some)
                .ok_or_else(|| self.error(path, format!("must be an integer, got {value}"))),
        }
    }

    pub fn required_integer(&self, path: &str) -> Result<i64, Error> {
        self.integer(path)?
            .ok_or_else(|| self.error(path, "is required"))
    }

    /// A required amount at `path` of `currency` (upper case), in cents
    /// (see [`super::units`]).
    pub fn amount(&self, path: &str, currency: &str) -> Result<i64, Error> {
        let amount = self.required_integer(path)?;
        super::units::cents(amount, currency).ok_or_else(|| {
            self.error(
                path,
                format!("{amount} {currency} is beyond 64-bit cents once scaled to hundredths"),
            )
        })
    }

    pub fn boolean(&self, path: &str) -> Result<bool, Error> {
        match self.at(path) {
            None => Ok(false),
            Some(Value::Bool(flag)) => Ok(*flag),
            Some(other) => Err(self.error(path, format!("must be true or false, got {other}"))),
        }
    }

    /// A Unix-seconds time at `path` as an RFC 3339 UTC timestamp.
    pub fn time(&self, path: &str) -> Result<Option<String>, Error> {
        match self.integer(path)? {
            None => Ok(None),
            Some(seconds) => unix_to_rfc3339(seconds)
                .map(Some)
                .ok_or_else(|| self.error(path, format!("{seconds} is not a valid Unix time"))),
        }
    }

    pub fn required_time(&self, path: &str) -> Result<String, Error> {
        self.time(path)?
            .ok_or_else(|| self.error(path, "is required"))
    }

    /// The currency at `path`, upper case (Stripe writes lower case).
    pub fn currency(&self, path: &str) -> Result<Option<String>, Error> {
        Ok(self.text(path)?.map(str::to_ascii_uppercase))
    }

    pub fn required_currency(&self, path: &str) -> Result<String, Error> {
        self.currency(path)?
            .ok_or_else(|| self.error(path, "is required"))
    }

    /// The items of a list at `path`: a list object's `data` or an array.
    pub fn list(&self, path: &str) -> Result<&'a [Value], Error> {
        match self.at(path) {
            None => Ok(&[]),
            Some(Value::Array(items)) => Ok(items),
            Some(Value::Object(map)) => match map.get("data") {
                Some(Value::Array(items)) => Ok(items),
                None | Some(Value::Null) => Ok(&[]),
                Some(other) => Err(self.error(
                    &format!("{path}.data"),
                    format!("must be an array, got {other}"),
                )),
            },
            Some(other) => Err(self.error(path, format!("must be a list, got {other}"))),
        }
    }

    /// A nested object read with paths prefixed by `path` (`lines.data[2]`).
    pub fn nested(&self, path: String, value: &'a Value) -> Nested<'a> {
        Nested {
            parent: *self,
            path,
            value,
        }
    }
}

/// A value inside a Stripe object (a line, a tax amount): errors name the
/// parent object and the full path.
#[derive(Clone)]
pub(crate) struct Nested<'a> {
    pub parent: Obj<'a>,
    pub path: String,
    pub value: &'a Value,
}

impl<'a> Nested<'a> {
    fn as_obj(&self) -> Obj<'a> {
        Obj {
            value: self.value,
            ..self.parent
        }
    }

    fn full(&self, field: &str) -> String {
        format!("{}.{field}", self.path)
    }

    fn fix(&self, field: &str, error: Error) -> Error {
        match error {
            Error::InvalidRecord { reason, .. } => self.parent.error(&self.full(field), reason),
            other => other,
        }
    }

    pub fn error(&self, field: &str, reason: impl Into<String>) -> Error {
        self.parent.error(&self.full(field), reason)
    }

    pub fn text(&self, path: &str) -> Result<Option<&'a str>, Error> {
        self.as_obj().text(path).map_err(|e| self.fix(path, e))
    }

    pub fn id_at(&self, path: &str) -> Result<Option<&'a str>, Error> {
        self.as_obj().id_at(path).map_err(|e| self.fix(path, e))
    }

    pub fn integer(&self, path: &str) -> Result<Option<i64>, Error> {
        self.as_obj().integer(path).map_err(|e| self.fix(path, e))
    }

    pub fn amount(&self, path: &str, currency: &str) -> Result<i64, Error> {
        self.as_obj()
            .amount(path, currency)
            .map_err(|e| self.fix(path, e))
    }

    pub fn boolean(&self, path: &str) -> Result<bool, Error> {
        self.as_obj().boolean(path).map_err(|e| self.fix(path, e))
    }

    pub fn time(&self, path: &str) -> Result<Option<String>, Error> {
        self.as_obj().time(path).map_err(|e| self.fix(path, e))
    }

    pub fn list(&self, path: &str) -> Result<&'a [Value], Error> {
        self.as_obj().list(path).map_err(|e| self.fix(path, e))
    }
}

/// Unix seconds as `YYYY-MM-DDTHH:MM:SSZ`.
pub(crate) fn unix_to_rfc3339(seconds: i64) -> Option<String> {
    chrono::DateTime::from_timestamp(seconds, 0).map(|t| t.format("%Y-%m-%dT%H:%M:%SZ").to_string())
}
