//! Reading one input record (a JSON object) field by field, so that every
//! validation error names the record kind, its id and the field. Both input
//! shapes of the interface are read through here: a field may have aliases
//! (`billing_freq` or `interval`), the first one present wins.

use crate::error::{Error, Result};
use crate::model::Timestamp;
use crate::money::{Cents, Currency, MAX_AMOUNT};
use indexmap::IndexMap;
use serde_json::{Map, Value};

/// One input record being read.
pub struct Fields<'a> {
    kind: &'static str,
    id: String,
    /// Path of a nested record inside its parent (`lines[2].`), else empty.
    prefix: String,
    map: &'a Map<String, Value>,
}

impl<'a> Fields<'a> {
    /// Starts reading `value`, which must be an object with a non-empty string
    /// (or integer) `id`, unless `id_required` is false.
    pub fn open(kind: &'static str, value: &'a Value, id_required: bool) -> Result<Fields<'a>> {
        let map = value
            .as_object()
            .ok_or_else(|| Error::invalid(kind, "?", "(record)", "must be a JSON object"))?;
        let mut fields = Fields {
            kind,
            id: String::new(),
            prefix: String::new(),
            map,
        };
        let id = fields.text(&["id", "external_id"])?;
        match id {
            Some(id) if !id.trim().is_empty() => fields.id = id,
            _ if !id_required => {}
            _ => return Err(Error::invalid(kind, "?", "id", "is required")),
        }
        Ok(fields)
    }

    /// The record's id (empty when not required and absent).
    pub fn id(&self) -> &str {
        &self.id
    }

    pub fn kind(&self) -> &'static str {
        self.kind
    }

    /// An error about `field` of this record.
    pub fn error(&self, field: &str, reason: impl Into<String>) -> Error {
        let path = format!("{}{field}", self.prefix);
        Error::invalid(
            self.kind,
            if self.id.is_empty() { "?" } else { &self.id },
            &path,
            reason,
        )
    }

    fn lookup(&self, names: &[&str]) -> Option<(&'a Value, String)> {
        names.iter().find_map(|name| match self.map.get(*name) {
            None | Some(Value::Null) => None,
            Some(value) => Some((value, name.to_string())),
        })
    }

    /// Whether any of the names is present and not null.
    pub fn has(&self, names: &[&str]) -> bool {
        self.lookup(names).is_some()
    }

    /// An optional string; numbers are accepted and written as text.
    pub fn text(&self, names: &[&str]) -> Result<Option<String>> {
        match self.lookup(names) {
            None => Ok(None),
            Some((Value::String(s), _)) => Ok(Some(s.clone())),
            Some((Value::Number(n), _)) => Ok(Some(n.to_string())),
            Some((_, name)) => Err(self.error(&name, "must be a string")),
        }
    }

    /// A required, non-empty string.
    pub fn required_text(&self, names: &[&str]) -> Result<String> {
        match self.text(names)? {
            Some(s) if !s.trim().is_empty() => Ok(s),
            _ => Err(self.error(names[0], "is required")),
        }
    }

    /// An optional integer (cents, counts); integral floats and numeric strings
    /// are accepted.
    pub fn integer(&self, names: &[&str]) -> Result<Option<i64>> {
        let Some((value, name)) = self.lookup(names) else {
            return Ok(None);
        };
        let parsed = match value {
            Value::Number(n) => n.as_i64().or_else(|| {
                n.as_f64()
                    .filter(|f| f.fract() == 0.0 && f.abs() < 9.0e15)
                    .map(|f| f as i64)
            }),
            Value::String(s) => s.trim().parse::<i64>().ok(),
            _ => None,
        };
        parsed
            .map(Some)
            .ok_or_else(|| self.error(&name, format!("must be an integer, got {value}")))
    }

    /// An optional amount in cents, at most [`MAX_AMOUNT`] either way.
    pub fn cents(&self, names: &[&str]) -> Result<Option<Cents>> {
        let amount = self.integer(names)?;
        match amount {
            Some(cents) if cents.unsigned_abs() > MAX_AMOUNT.unsigned_abs() => {
                let name = self.lookup(names).map_or(names[0].to_string(), |(_, n)| n);
                Err(self.error(
                    &name,
                    format!("{cents} is out of range: at most {MAX_AMOUNT} cents either way"),
                ))
            }
            _ => Ok(amount),
        }
    }

    /// A required amount in cents, at most [`MAX_AMOUNT`] either way.
    pub fn required_cents(&self, names: &[&str]) -> Result<Cents> {
        self.cents(names)?
            .ok_or_else(|| self.error(names[0], "is required"))
    }

    /// An optional boolean.
    pub fn boolean(&self, names: &[&str]) -> Result<Option<bool>> {
        match self.lookup(names) {
            None => Ok(None),
            Some((Value::Bool(b), _)) => Ok(Some(*b)),
            Some((Value::String(s), name)) => match s.as_str() {
                "true" => Ok(Some(true)),
                "false" => Ok(Some(false)),
                _ => Err(self.error(&name, "must be true or false")),
            },
            Some((_, name)) => Err(self.error(&name, "must be true or false")),
        }
    }

    /// An optional ISO 8601 timestamp (or Unix seconds as a number).
    pub fn timestamp(&self, names: &[&str]) -> Result<Option<Timestamp>> {
        let Some((value, name)) = self.lookup(names) else {
            return Ok(None);
        };
        let parsed = match value {
            Value::String(s) if s.trim().is_empty() => return Ok(None),
            Value::String(s) => Timestamp::parse(s),
            Value::Number(n) => n.as_i64().and_then(Timestamp::from_unix_seconds),
            _ => None,
        };
        parsed.map(Some).ok_or_else(|| {
            self.error(
                &name,
                format!("must be an ISO 8601 date or timestamp, got {value}"),
            )
        })
    }

    /// A required ISO 8601 timestamp.
    pub fn required_timestamp(&self, names: &[&str]) -> Result<Timestamp> {
        self.timestamp(names)?
            .ok_or_else(|| self.error(names[0], "is required"))
    }

    /// An optional currency code (three letters, stored upper case).
    pub fn currency(&self, names: &[&str]) -> Result<Option<Currency>> {
        match self.text(names)? {
            None => Ok(None),
            Some(code) => Currency::parse(&code).map(Some).ok_or_else(|| {
                self.error(
                    names[0],
                    format!("`{code}` is not a three-letter currency code"),
                )
            }),
        }
    }

    /// A required currency code.
    pub fn required_currency(&self, names: &[&str]) -> Result<Currency> {
        self.currency(names)?
            .ok_or_else(|| self.error(names[0], "is required"))
    }

    /// An optional object of string values; other scalar values are stringified.
    pub fn string_map(&self, names: &[&str]) -> Result<Option<IndexMap<String, String>>> {
        match self.lookup(names) {
            None => Ok(None),
            Some((Value::Object(map), name)) => {
                let mut out = IndexMap::new();
                for (key, value) in map {
                    let text = match value {
                        Value::String(s) => s.clone(),
                        Value::Null => continue,
                        Value::Array(_) | Value::Object(_) => {
                            return Err(self.error(
                                &format!("{name}.{key}"),
                                "must be a string, number or boolean",
                            ));
                        }
                        other => other.to_string(),
                    };
                    out.insert(key.clone(), text);
                }
                Ok(Some(out))
            }
            Some((_, name)) => Err(self.error(&name, "must be an object")),
        }
    }

    /// An optional array of records.
    pub fn array(&self, names: &[&str]) -> Result<Option<&'a Vec<Value>>> {
        match self.lookup(names) {
            None => Ok(None),
            Some((Value::Array(items), _)) => Ok(Some(items)),
            Some((_, name)) => Err(self.error(&name, "must be an array")),
        }
    }

    /// An optional string restricted to `allowed` values (matched case-insensitively).
    pub fn choice(&self, names: &[&str], allowed: &[&'static str]) -> Result<Option<&'static str>> {
        match self.text(names)? {
            None => Ok(None),
            Some(value) => allowed
                .iter()
                .find(|a| a.eq_ignore_ascii_case(value.trim()))
                .copied()
                .map(Some)
                .ok_or_else(|| {
                    self.error(
                        names[0],
                        format!("`{value}` is not one of {}", allowed.join(", ")),
                    )
                }),
        }
    }

    /// Reads a nested record (an item of `lines` or `transactions`) with the
    /// same error naming, its fields prefixed by `path` (`lines[0]`).
    pub fn nested(&self, path: String, value: &'a Value) -> Result<Fields<'a>> {
        let map = value
            .as_object()
            .ok_or_else(|| self.error(&path, "must be a JSON object"))?;
        Ok(Fields {
            kind: self.kind,
            id: self.id.clone(),
            prefix: format!("{}{path}.", self.prefix),
            map,
        })
    }
}
