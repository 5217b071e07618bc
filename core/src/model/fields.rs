//! Reading one input record (a JSON object) field by field, so that every
//! validation error names the record kind, its id and the field. Both input
//! shapes of the interface are read through here: a field may have aliases
//! (`billing_freq` or `interval`), and a record gives it under one of them
//! (two with different values are an error naming both). A record is
//! read the same way from a `serde_json::Value` or from a [`Json`] tree
//! parsed straight from text (see [`Node`]).
//!
//! [`Json`]: super::Json

use crate::blank::{is_blank, trimmed};
use crate::error::{Error, Result};
use crate::model::json::{NameSet, Node, View, infinity_text};
use crate::model::{CustomVariables, Timestamp};
use crate::money::{Cents, Currency, MAX_AMOUNT};
use serde_json::Value;
use std::borrow::Cow;

/// Largest magnitude of a JSON integer read as text (an id, say):
/// 2^53 - 1, the largest integer every JSON reader holds exactly.
pub const MAX_TEXT_INTEGER: u64 = (1 << 53) - 1;

/// The names a record's id is read under.
pub const ID_NAMES: &[&str] = &["id", "external_id"];
/// The names a record's data source is read by.
pub const DATA_SOURCE_NAMES: &[&str] = &["data_source", "data_source_id"];

/// The decimal text of `n` when its value is a whole number of at most
/// [`MAX_TEXT_INTEGER`] either way, however it is written (`42`, `42.0`
/// and `4.2e1` are all `"42"`: JSON, and JavaScript, do not tell them
/// apart); `None` for any other number.
pub fn integer_text(n: &serde_json::Number) -> Option<String> {
    if let Some(i) = n.as_i64() {
        (i.unsigned_abs() <= MAX_TEXT_INTEGER).then(|| i.to_string())
    } else if let Some(u) = n.as_u64() {
        (u <= MAX_TEXT_INTEGER).then(|| u.to_string())
    } else {
        // Every whole float within the bound converts exactly.
        n.as_f64()
            .filter(|f| f.fract() == 0.0 && f.abs() <= MAX_TEXT_INTEGER as f64)
            .map(|f| (f as i64).to_string())
    }
}

/// One input record being read.
pub struct Fields<'a, N: Node<'a> = &'a Value> {
    kind: &'static str,
    /// Borrowed from the record when it is there as it is.
    id: Cow<'a, str>,
    /// Path of a nested record inside its parent (`lines[2].`), else empty.
    prefix: String,
    map: N,
    /// The record's field names, to skip lookups of absent ones.
    names: NameSet,
    _text: std::marker::PhantomData<&'a ()>,
}

impl<'a, N: Node<'a>> Fields<'a, N> {
    /// Starts reading `value`, which must be an object with a non-empty string
    /// (or integer) `id`, unless `id_required` is false.
    pub fn open(kind: &'static str, value: N, id_required: bool) -> Result<Fields<'a, N>> {
        if !value.is_object() {
            return Err(Error::invalid(
                kind,
                "?",
                "(record)",
                "must be a JSON object",
            ));
        }
        let mut fields = Fields {
            kind,
            id: Cow::Borrowed(""),
            prefix: String::new(),
            map: value,
            names: value.names(),
            _text: std::marker::PhantomData,
        };
        let id = fields.text_ref(ID_NAMES)?;
        match id {
            Some(id) if !is_blank(&id) => fields.id = id,
            _ if !id_required => {}
            _ => return Err(Error::invalid(kind, "?", "id", "is required")),
        }
        Ok(fields)
    }

    /// The record's id (empty when not required and absent).
    pub fn id(&self) -> &str {
        &self.id
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

    /// The field under `name` when present and not null: its node, what the
    /// node holds, and the name.
    fn present<'n>(&self, name: &'n str) -> Option<(N, View<'a, N>, &'n str)> {
        if !self.names.may_hold(name) {
            return None;
        }
        let value = self.map.get(name)?;
        match value.view() {
            View::Null => None,
            view => Some((value, view, name)),
        }
    }

    /// The field of `names` (a name and its aliases) the record gives,
    /// present and not null. Aliases give a field once: a second one with
    /// another value is an error naming both, not passed over (the same
    /// text or number under both is the one value).
    fn lookup<'n>(&self, names: &[&'n str]) -> Result<Option<(N, View<'a, N>, &'n str)>> {
        let mut given = names.iter().filter_map(|name| self.present(name));
        let Some(first) = given.next() else {
            return Ok(None);
        };
        for (_, view, name) in given {
            let same = match (&first.1, &view) {
                (View::String(a), View::String(b)) => a == b,
                (View::Number(a), View::Number(b)) => a == b,
                _ => false,
            };
            if !same {
                return Err(self.error(
                    name,
                    format!(
                        "`{}` gives this field too, with another value; give one of them",
                        first.2
                    ),
                ));
            }
        }
        Ok(Some(first))
    }

    /// The name the record gives the field under: the first of `names`
    /// present and not null (an import-shape alias such as `interval` for
    /// `billing_freq`), else the first of `names`. An error about a value
    /// names the field as the record wrote it.
    pub fn name_of<'n>(&self, names: &[&'n str]) -> &'n str {
        names
            .iter()
            .find_map(|name| self.present(name))
            .map_or(names[0], |(_, _, name)| name)
    }

    /// An optional string. A JSON number is accepted only when its value is
    /// a whole number of at most [`MAX_TEXT_INTEGER`] either way, kept as
    /// its decimal text (`42` and `1e2` read as `"42"` and `"100"`); any
    /// other number is an error, since a fraction or a larger integer does
    /// not keep its digits (`18446744073709551616` and
    /// `18446744073709551617` are one float).
    pub fn text(&self, names: &[&str]) -> Result<Option<String>> {
        Ok(self.text_ref(names)?.map(Cow::into_owned))
    }

    /// [`Fields::text`] without copying a string that is there as it is.
    pub fn text_ref(&self, names: &[&str]) -> Result<Option<Cow<'a, str>>> {
        match self.lookup(names)? {
            None => Ok(None),
            Some((_, view, name)) => match view {
                View::String(s) => Ok(Some(Cow::Borrowed(s))),
                View::Number(n) => integer_text(&n).map(|text| Some(Cow::Owned(text))).ok_or_else(|| {
                    self.error(
                        name,
                        format!("must be a string or a whole number of at most {MAX_TEXT_INTEGER} either way, got {n}"),
                    )
                }),
                View::Timestamp(t) => Ok(Some(Cow::Owned(t.to_string()))),
                _ => Err(self.error(name, "must be a string")),
            },
        }
    }

    /// A required, non-empty string.
    pub fn required_text(&self, names: &[&str]) -> Result<String> {
        Ok(self.required_text_ref(names)?.into_owned())
    }

    /// [`Fields::required_text`] without copying a string that is there as it is.
    pub fn required_text_ref(&self, names: &[&str]) -> Result<Cow<'a, str>> {
        match self.text_ref(names)? {
            Some(s) if !is_blank(&s) => Ok(s),
            _ => Err(self.error(names[0], "is required")),
        }
    }

    /// An optional integer (cents, counts); integral floats and numeric strings
    /// are accepted, a string's fraction too when it is all zeros (`"3000.00"`
    /// reads as `3000.0` does, as a CSV cell or a decimal column gives it).
    pub fn integer(&self, names: &[&str]) -> Result<Option<i64>> {
        Ok(self.integer_named(names)?.map(|(n, _)| n))
    }

    /// An integer and the name it was found under.
    fn integer_named<'n>(&self, names: &[&'n str]) -> Result<Option<(i64, &'n str)>> {
        let Some((value, view, name)) = self.lookup(names)? else {
            return Ok(None);
        };
        let parsed = match &view {
            View::Number(n) => n.as_i64().or_else(|| {
                n.as_f64()
                    .filter(|f| f.fract() == 0.0 && (-TWO_TO_63..TWO_TO_63).contains(f))
                    .map(|f| f as i64)
            }),
            View::String(s) => integer_in_text(s),
            _ => None,
        };
        parsed.map(|n| Some((n, name))).ok_or_else(|| {
            let reason = if let View::Infinite(f) = view {
                format!("must be an integer, got {}", infinity_text(f))
            } else if is_whole_beyond_range(&view) {
                format!("{} is out of range", value.to_value())
            } else {
                format!("must be an integer, got {}", value.to_value())
            };
            self.error(name, reason)
        })
    }

    /// An optional amount in cents, at most [`MAX_AMOUNT`] either way.
    pub fn cents(&self, names: &[&str]) -> Result<Option<Cents>> {
        match self.integer_named(names)? {
            Some((cents, name)) if cents.unsigned_abs() > MAX_AMOUNT.unsigned_abs() => Err(self
                .error(
                    name,
                    format!("{cents} is out of range: at most {MAX_AMOUNT} cents either way"),
                )),
            amount => Ok(amount.map(|(cents, _)| cents)),
        }
    }

    /// A required amount in cents, at most [`MAX_AMOUNT`] either way.
    pub fn required_cents(&self, names: &[&str]) -> Result<Cents> {
        self.cents(names)?
            .ok_or_else(|| self.error(names[0], "is required"))
    }

    /// An optional ISO 8601 date or timestamp, given as a string within
    /// [`Timestamp::YEARS`] (see [`Timestamp::parse`]). A number is an
    /// error: whether it meant Unix seconds, milliseconds or a year cannot
    /// be told.
    pub fn timestamp(&self, names: &[&str]) -> Result<Option<Timestamp>> {
        let Some((value, view, name)) = self.lookup(names)? else {
            return Ok(None);
        };
        let parsed = match view {
            View::String(s) if is_blank(s) => return Ok(None),
            View::String(s) => Timestamp::parse(s),
            // A timestamp column of a columnar batch; a number never is one.
            View::Timestamp(t) => Some(t).filter(|t| t.within_years()),
            _ => None,
        };
        parsed.map(Some).ok_or_else(|| {
            self.error(
                name,
                format!(
                    "must be an ISO 8601 date or timestamp string in the years {} to {}, got {}",
                    Timestamp::YEARS.start(),
                    Timestamp::YEARS.end(),
                    value.to_value()
                ),
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
        match self.text_ref(names)? {
            None => Ok(None),
            Some(code) => Currency::parse(&code).map(Some).ok_or_else(|| {
                self.error(
                    self.name_of(names),
                    format!("`{code}` is not a three-letter currency code"),
                )
            }),
        }
    }

    /// A country code: two letters (ISO 3166-1 alpha-2), upper-cased (` de `
    /// is DE); a blank one is none. A country name (`Germany`) is refused,
    /// since maps and region filters read codes.
    pub fn country(&self, names: &[&str]) -> Result<Option<Box<str>>> {
        let Some(text) = self.text_ref(names)? else {
            return Ok(None);
        };
        let code = text.trim();
        if code.is_empty() {
            return Ok(None);
        }
        if code.len() == 2 && code.bytes().all(|byte| byte.is_ascii_alphabetic()) {
            return Ok(Some(code.to_ascii_uppercase().into_boxed_str()));
        }
        Err(self.error(
            self.name_of(names),
            format!("`{code}` is not a two-letter country code (ISO 3166-1, such as DE)"),
        ))
    }

    /// A required currency code.
    pub fn required_currency(&self, names: &[&str]) -> Result<Currency> {
        self.currency(names)?
            .ok_or_else(|| self.error(names[0], "is required"))
    }

    /// An optional object of string values in order; other scalar values are
    /// stringified and nulls left out. The object may also come flattened,
    /// a field per key (`custom_variables.industry`, as a CSV header or
    /// `pandas.DataFrame.to_dict` writes it), but not both ways.
    pub fn string_map(&self, names: &[&str]) -> Result<Option<CustomVariables>> {
        let flattened = self.flattened(names);
        let Some((_, view, name)) = self.lookup(names)? else {
            let Some(&(object, _, _)) = flattened.first() else {
                return Ok(None);
            };
            let entries = flattened.into_iter().map(|(_, key, value)| (key, value));
            return self.string_pairs(object, entries);
        };
        if let Some((object, key, _)) = flattened.first() {
            return Err(self.error(
                name,
                format!("`{object}.{key}` gives a variable too; give the variables one way"),
            ));
        }
        let View::Object(entries) = view else {
            return Err(self.error(name, "must be an object"));
        };
        self.string_pairs(name, entries)
    }

    /// The fields of the record that hold one key of the object `names`
    /// flattened (`custom_variables.industry`), null ones left out (a
    /// table's empty cell): the object's name as written, the key and its
    /// value.
    fn flattened(&self, names: &[&str]) -> Vec<(&'a str, &'a str, N)> {
        let View::Object(entries) = self.map.view() else {
            return Vec::new();
        };
        entries
            .filter_map(|(field, value)| {
                let (object, key) = field.split_once('.')?;
                let given = names.contains(&object) && !matches!(value.view(), View::Null);
                given.then_some((object, key, value))
            })
            .collect()
    }

    /// The pairs of the object `name` as [`Fields::string_map`] reads them.
    fn string_pairs(
        &self,
        name: &str,
        entries: impl Iterator<Item = (&'a str, N)>,
    ) -> Result<Option<CustomVariables>> {
        let mut pairs = Vec::new();
        for (key, value) in entries {
            // Packed into one string next, so a string value is not copied first.
            let text: Cow<str> = match value.view() {
                View::Null => continue,
                // A variable without a name could not be filtered or shown by it.
                _ if is_blank(key) => {
                    return Err(self.error(name, "holds a variable without a name; name each one"));
                }
                View::String(s) => Cow::Borrowed(s),
                View::Array(_) | View::Object(_) => {
                    return Err(self.error(
                        &format!("{name}.{key}"),
                        "must be a string, number or boolean",
                    ));
                }
                View::Infinite(f) => {
                    return Err(self.error(
                        &format!("{name}.{key}"),
                        format!("must be a finite number, got {}", infinity_text(f)),
                    ));
                }
                View::Bool(b) => Cow::Owned(b.to_string()),
                View::Number(n) => Cow::Owned(n.to_string()),
                View::Timestamp(t) => Cow::Owned(t.to_string()),
            };
            pairs.push((key, text));
        }
        CustomVariables::from_pairs(pairs)
            .map(Some)
            .ok_or_else(|| self.error(name, "must hold at most 4 GiB of text"))
    }

    /// An optional array of records.
    pub fn array(&self, names: &[&str]) -> Result<Option<N::Items>> {
        match self.lookup(names)? {
            None => Ok(None),
            Some((_, view, name)) => match view {
                View::Array(items) => Ok(Some(items)),
                _ => Err(self.error(name, "must be an array")),
            },
        }
    }

    /// An optional string restricted to `allowed` values (matched case-insensitively).
    pub fn choice(&self, names: &[&str], allowed: &[&'static str]) -> Result<Option<&'static str>> {
        match self.text_ref(names)? {
            None => Ok(None),
            Some(value) => allowed
                .iter()
                .find(|a| a.eq_ignore_ascii_case(trimmed(&value)))
                .copied()
                .map(Some)
                .ok_or_else(|| {
                    self.error(
                        self.name_of(names),
                        format!("`{value}` is not one of {}", allowed.join(", ")),
                    )
                }),
        }
    }

    /// Reads a nested record (an item of `lines` or `transactions`) with the
    /// same error naming, its fields prefixed by `path` (`lines[0]`).
    pub fn nested(&self, path: String, value: N) -> Result<Fields<'a, N>> {
        if !value.is_object() {
            return Err(self.error(&path, "must be a JSON object"));
        }
        Ok(Fields {
            kind: self.kind,
            id: self.id.clone(),
            prefix: format!("{}{path}.", self.prefix),
            map: value,
            names: value.names(),
            _text: std::marker::PhantomData,
        })
    }
}

/// The integer a text spells, its fraction allowed when it is all zeros
/// (`"3000"`, `" 3000.00 "`, `"-5."`); surrounding space is ignored.
/// 2^63 as a float: whole floats below it in size are integers exactly.
const TWO_TO_63: f64 = 9_223_372_036_854_775_808.0;

/// Whether a value no integer reading took is a whole number all the same,
/// one too large to hold exactly (`1e23`, twenty digits).
fn is_whole_beyond_range<'a, N: Node<'a>>(view: &View<'a, N>) -> bool {
    match view {
        View::Number(n) => n.as_f64().is_some_and(|f| f.fract() == 0.0),
        View::String(s) => whole_part(s).is_some_and(|whole| {
            let digits = whole.strip_prefix('-').unwrap_or(whole);
            !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())
        }),
        _ => false,
    }
}

fn integer_in_text(text: &str) -> Option<i64> {
    whole_part(text)?.parse().ok()
}

/// The text of a number before its fraction, trimmed, when the fraction
/// (if any) is all zeros.
fn whole_part(text: &str) -> Option<&str> {
    let text = trimmed(text);
    match text.split_once('.') {
        Some((whole, fraction)) if fraction.bytes().all(|b| b == b'0') => Some(whole),
        Some(_) => None,
        None => Some(text),
    }
}

/// The positions of the first name in `names` given again, and of its
/// repeat: a header or a batch with two columns of one name, whose two
/// cells in a row would leave the field's value to the reader's order.
pub(crate) fn first_repeated<S: AsRef<str>>(names: &[S]) -> Option<(usize, usize)> {
    names.iter().enumerate().find_map(|(later, name)| {
        names[..later]
            .iter()
            .position(|earlier| earlier.as_ref() == name.as_ref())
            .map(|earlier| (earlier, later))
    })
}

#[cfg(test)]
mod tests {
    use crate::model::{Customer, Invoice};
    use serde_json::{Value, json};

    fn customer(id: Value) -> Result<String, String> {
        Customer::from_json(&json!({"id": id, "name": "Acme"}))
            .map(|c| c.id.as_str().to_string())
            .map_err(|e| e.to_string())
    }

    #[test]
    fn an_integer_id_within_2_pow_53_reads_as_its_digits() {
        assert_eq!(customer(json!(42)), Ok("42".to_string()));
        assert_eq!(
            customer(json!(9_007_199_254_740_991_u64)),
            Ok("9007199254740991".to_string())
        );
        assert_eq!(
            customer(json!(-9_007_199_254_740_991_i64)),
            Ok("-9007199254740991".to_string())
        );
        // However the number is written, as a JavaScript client sends it.
        for (written, id) in [
            ("1e2", "100"),
            ("42.0", "42"),
            ("9007199254740991.0", "9007199254740991"),
        ] {
            let value: Value = serde_json::from_str(written).expect("json");
            assert_eq!(customer(value), Ok(id.to_string()), "{written}");
        }
    }

    #[test]
    fn any_other_number_as_an_id_is_an_error_naming_the_field() {
        let past = |id: &str| {
            let value: Value = serde_json::from_str(id).expect("json");
            customer(value).expect_err(id)
        };
        assert_eq!(
            past("9007199254740992"),
            "customer ?: field `id`: must be a string or a whole number of at most 9007199254740991 either way, got 9007199254740992"
        );
        // Both read as the same float: neither may become an id.
        for id in [
            "18446744073709551616",
            "18446744073709551617",
            "9007199254740992.0",
        ] {
            assert!(
                past(id).contains("field `id`: must be a string or a whole number"),
                "{id}"
            );
        }
        assert!(past("1.5").ends_with("got 1.5"));
        assert!(past("1e300").ends_with("got 1e+300"));
        let err = Invoice::from_json(&json!({"id": "i1", "customer_id": 0.5, "type": "one-time",
            "invoice_date": "2024-01-01", "amount": 1, "currency": "USD"}))
        .expect_err("a float customer id");
        assert!(err.to_string().contains("field `customer_id`"), "{err}");
    }

    fn invoice_date(date: Value) -> Result<(), String> {
        Invoice::from_json(&json!({"id": "i1", "customer_id": "c", "type": "one-time",
            "invoice_date": date, "amount": 1, "currency": "USD"}))
        .map(|_| ())
        .map_err(|e| e.to_string())
    }

    #[test]
    fn a_date_is_a_string_in_the_years_1900_to_2200() {
        for date in ["1900-01-01", "2200-12-31", "2200-12-31T23:59:59Z"] {
            assert_eq!(invoice_date(json!(date)), Ok(()), "{date}");
        }
        for date in [
            json!(1),
            json!(1_704_067_200),
            json!("0000-01-01"),
            json!("-0001-01-01"),
            json!("1899-12-31T23:59:59Z"),
            json!("2201-01-01"),
        ] {
            assert_eq!(
                invoice_date(date.clone()),
                Err(format!(
                    "invoice i1: field `invoice_date`: must be an ISO 8601 date or timestamp string in the years 1900 to 2200, got {date}"
                ))
            );
        }
    }
}
