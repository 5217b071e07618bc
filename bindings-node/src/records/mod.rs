//! JavaScript records read field by field into the core's record trees
//! ([`Json`]), with no `serde_json::Value` and no JSON text in between.
//!
//! An object reads as `for...in` sees it: its enumerable string-keyed
//! properties, own and inherited, in order; a property holding `undefined`
//! is absent. A number reads as napi-rs reads one into JSON (a whole number
//! within 32 bits as an integer, any other as a float), a BigInt within 64
//! bits as its integer (as database drivers hand out 64-bit columns), an
//! array as an array, a `Date` as its instant's ISO 8601 text (as
//! `toISOString` writes it), any other object as its properties. Every
//! string is copied once, into an arena that lives for the call.
//!
//! What JSON cannot hold is an error naming the record's position and the
//! field, and nothing is written: `undefined` as an array item, functions,
//! symbols, BigInts beyond 64 bits, NaN and the infinities, an invalid
//! `Date`, a string or key holding a lone UTF-16 surrogate, nesting deeper
//! than 128 levels (which an object holding itself reaches), more than a
//! million values in one record.
//!
//! An array of records usually arrives flattened by `records.js` (one
//! JavaScript pass: keys, kinds and numbers in typed arrays, every string
//! joined in one text, nested values apart) and is read by [`FlatRecords`]
//! with a few N-API calls for the whole array: the same trees and errors,
//! the nested values and any record that is not a plain object read as
//! above. One object as one record is read by [`Records`].
//!
//! This is the binding's one module that calls N-API itself (napi-rs's safe
//! wrappers cost a call and an allocation per property), so it alone allows
//! `unsafe`; each block states why it holds.
#![allow(unsafe_code)]

use crate::errors::details;
use bumpalo::Bump;
use napi::bindgen_prelude::{Float64Array, FromNapiValue, Uint8Array, Uint32Array, Utf16String};
use napi::{Env, Error, JsValue, Status, Unknown, sys};
use napi_derive::napi;
use serde_json::Number;
use std::borrow::Cow;
use std::ptr;
use submetrics::model::Json;

mod flat;

pub use flat::{FlatLayout, FlatRecords};

/// Nesting levels a call may hold, the argument itself counted.
const MAX_DEPTH: u32 = 128;

/// The error codes of what an argument is: a record (or a patch of one),
/// the ledger's settings, a call's options.
pub const RECORD: &str = "invalid_record";
pub const SETTING: &str = "invalid_setting";
pub const OPTION: &str = "invalid_query";
/// Values one record may hold, itself counted.
const MAX_VALUES: usize = 1_000_000;

/// The records of `value`: the items of an array, or one object as one
/// record. Anything else is an `invalid_record` error.
pub fn records<'b>(env: &Env, value: Unknown<'_>, arena: &'b Bump) -> napi::Result<Vec<Json<'b>>> {
    let mut records = Records::new(env, value, arena)?;
    let mut all = Vec::new();
    while let Some(chunk) = records.next_chunk(usize::MAX)? {
        all.extend(chunk);
    }
    Ok(all)
}

/// The records of an argument, read a chunk at a time.
pub struct Records<'b> {
    reader: Reader<'b>,
    value: sys::napi_value,
    /// How many items the array has; `None` for one object as one record.
    count: Option<u32>,
    /// The next item to read (or 1 once the one record is read).
    next: u32,
}

impl<'b> Records<'b> {
    /// The records of `value` (see [`records`]).
    pub fn new(env: &Env, value: Unknown<'_>, arena: &'b Bump) -> napi::Result<Records<'b>> {
        let value = value.raw();
        let reader = Reader {
            env: env.raw(),
            arena,
            scratch: vec![0; 256],
            budget: MAX_VALUES,
        };
        if reader.type_of(value)? != sys::ValueType::napi_object {
            return Err(not_records());
        }
        let count = if reader.is_array(value)? {
            Some(reader.array_length(value)?)
        } else {
            None
        };
        Ok(Records {
            reader,
            value,
            count,
            next: 0,
        })
    }

    /// The next `size` records at most; `None` once every one is read.
    pub fn next_chunk(&mut self, size: usize) -> napi::Result<Option<Vec<Json<'b>>>> {
        let Some(count) = self.count else {
            if self.next > 0 {
                return Ok(None);
            }
            self.next = 1;
            return match self.reader.value(self.value, MAX_DEPTH) {
                Ok(Some(record)) => Ok(Some(vec![record])),
                Ok(None) => Err(not_records()),
                Err(failure) => Err(failure.into_error("the record", RECORD)),
            };
        };
        if self.next >= count {
            return Ok(None);
        }
        let end = count.min(
            self.next
                .saturating_add(u32::try_from(size).unwrap_or(u32::MAX)),
        );
        let mut chunk = Vec::with_capacity((end - self.next) as usize);
        for index in self.next..end {
            // The handles of one record's values are released after it: a
            // scavenge visits every live handle.
            let env = self.reader.env;
            let mut scope = ptr::null_mut();
            // SAFETY: `env` is the live environment of this call (on its thread) and `scope` a local out-pointer; the scope is closed below before the next opens.
            check(unsafe { sys::napi_open_handle_scope(env, &mut scope) })?;
            let read = self.reader.record(self.value, index);
            // SAFETY: `scope` is the scope opened just above in the same `env`, and no handle made inside it is used after this point.
            check(unsafe { sys::napi_close_handle_scope(env, scope) })?;
            chunk.push(read?);
        }
        self.next = end;
        Ok(Some(chunk))
    }
}

/// One argument that is no list of records (an update's patch, a
/// replacement record, settings, options) as JSON, read as a record is: a
/// `Date` as its ISO text, and what JSON cannot hold an error of `code`
/// naming `what` and the field. `undefined` is `null`.
pub fn value(
    env: &Env,
    value: Unknown<'_>,
    what: &str,
    code: &str,
) -> napi::Result<serde_json::Value> {
    let arena = Bump::new();
    let mut reader = Reader {
        env: env.raw(),
        arena: &arena,
        scratch: vec![0; 256],
        budget: MAX_VALUES,
    };
    match reader.value(value.raw(), MAX_DEPTH) {
        Ok(Some(tree)) => Ok(tree.to_value()),
        Ok(None) => Ok(serde_json::Value::Null),
        Err(failure) => Err(failure.into_error(what, code)),
    }
}

fn not_records() -> Error {
    details(
        "invalid_record",
        "expected a record object or an array of records",
        None,
        Some("(record)"),
    )
}

/// The first lone surrogate of UTF-16 text, if any: a JavaScript string
/// may hold one, Unicode text (and so a record) cannot. Reading it as
/// U+FFFD would make two different ids one.
fn lone_surrogate(units: &[u16]) -> Option<u16> {
    char::decode_utf16(units.iter().copied())
        .find_map(Result::err)
        .map(|error| error.unpaired_surrogate())
}

/// The failure of a string holding the lone surrogate `unit`.
fn lone_surrogate_failure<'b>(unit: u16) -> Failure<'b> {
    Failure::unreadable(format!(
        "holds a lone UTF-16 surrogate (\\u{unit:04X}), which is not Unicode text"
    ))
}

/// UTF-16 text with every lone surrogate written as a `\uXXXX` escape.
fn escaped(units: &[u16]) -> String {
    char::decode_utf16(units.iter().copied())
        .map(|c| match c {
            Ok(c) => c.to_string(),
            Err(error) => format!("\\u{:04X}", error.unpaired_surrogate()),
        })
        .collect()
}

fn record_name(index: u32) -> String {
    format!("records[{index}]")
}

struct Reader<'b> {
    env: sys::napi_env,
    arena: &'b Bump,
    /// Where strings are copied first; grown for a longer one.
    scratch: Vec<u8>,
    /// Values the current record may still hold.
    budget: usize,
}

/// One step of the path to a field.
enum Step<'b> {
    Key(&'b str),
    Index(u32),
}

/// Why a call's records cannot be read.
enum Failure<'b> {
    /// A napi call failed (a getter threw, say).
    Napi(Error),
    /// A value JSON cannot hold, and the steps to it, innermost first.
    Unreadable { reason: String, path: Vec<Step<'b>> },
}

impl<'b> Failure<'b> {
    fn unreadable(reason: impl Into<String>) -> Failure<'b> {
        Failure::Unreadable {
            reason: reason.into(),
            path: Vec::new(),
        }
    }

    /// The failure inside the value reached by `step`.
    fn at(mut self, step: Step<'b>) -> Failure<'b> {
        if let Failure::Unreadable { path, .. } = &mut self {
            path.push(step);
        }
        self
    }

    /// The error of the call, naming the record and the field
    /// (`lines[0].amount`, or `(record)` for the record itself).
    fn into_error(self, record: &str, code: &str) -> Error {
        match self {
            Failure::Napi(error) => error,
            Failure::Unreadable { reason, path } => {
                let mut field = String::new();
                for step in path.iter().rev() {
                    match step {
                        Step::Key(key) if field.is_empty() => field.push_str(key),
                        Step::Key(key) => {
                            field.push('.');
                            field.push_str(key);
                        }
                        Step::Index(i) => field.push_str(&format!("[{i}]")),
                    }
                }
                if field.is_empty() {
                    field.push_str("(record)");
                }
                details(
                    code,
                    format!("{record}: field `{field}`: {reason}"),
                    None,
                    Some(&field),
                )
            }
        }
    }
}

impl From<Error> for Failure<'_> {
    fn from(error: Error) -> Self {
        Failure::Napi(error)
    }
}

/// A napi status as a result.
fn check(status: sys::napi_status) -> napi::Result<()> {
    if status == sys::Status::napi_ok {
        Ok(())
    } else {
        Err(Error::from_status(Status::from(status)))
    }
}

/// A JavaScript number as napi-rs reads it into JSON: a whole number
/// within 32 bits as an integer, any other finite number as a float.
/// A `Date`'s instant as the ISO 8601 text records carry
/// (`2024-01-01T00:00:00.000Z`, what `toISOString` writes), in the arena;
/// an invalid `Date` is an error.
fn instant_text<'b>(millis: f64, arena: &'b Bump) -> Result<&'b str, Failure<'b>> {
    // A valid `Date` holds whole milliseconds within 8.64e15 of the epoch,
    // all of which chrono represents.
    let instant = Some(millis)
        .filter(|m| m.is_finite())
        .and_then(|m| chrono::DateTime::from_timestamp_millis(m as i64))
        .ok_or_else(|| Failure::unreadable("is an invalid Date"))?;
    let text = instant.to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
    Ok(arena.alloc_str(&text))
}

fn number(n: f64) -> Option<Number> {
    if n.trunc() == n {
        if (0.0..=f64::from(u32::MAX)).contains(&n) {
            return Some(Number::from(n as u32));
        }
        if n < 0.0 && n >= f64::from(i32::MIN) {
            return Some(Number::from(n as i32));
        }
    }
    Number::from_f64(n)
}

/// A JavaScript number as a JSON number ([`number`]); NaN and the
/// infinities are errors.
fn json_number<'b>(n: f64) -> Result<Json<'b>, Failure<'b>> {
    number(n).map(Json::Number).ok_or_else(|| {
        let name = if n.is_nan() {
            "NaN"
        } else if n > 0.0 {
            "Infinity"
        } else {
            "-Infinity"
        };
        Failure::unreadable(format!("is {name}, which is not a JSON number"))
    })
}

impl<'b> Reader<'b> {
    /// Counts one more value of the current record (see [`MAX_VALUES`]).
    fn count_value(&mut self) -> Result<(), Failure<'b>> {
        if self.budget == 0 {
            return Err(Failure::unreadable(format!(
                "holds more than {MAX_VALUES} values"
            )));
        }
        self.budget -= 1;
        Ok(())
    }

    /// Item `index` of the array `records` as a record.
    fn record(&mut self, records: sys::napi_value, index: u32) -> napi::Result<Json<'b>> {
        let item = self.element(records, index)?;
        self.item(item, index)
    }

    /// `item`, item `index` of the call's array, as a record.
    fn item(&mut self, item: sys::napi_value, index: u32) -> napi::Result<Json<'b>> {
        self.budget = MAX_VALUES;
        match self.value(item, MAX_DEPTH - 1) {
            Ok(Some(record)) => Ok(record),
            Ok(None) => {
                Err(Failure::unreadable("is undefined").into_error(&record_name(index), RECORD))
            }
            Err(failure) => Err(failure.into_error(&record_name(index), RECORD)),
        }
    }

    /// The value as a record tree; `None` for `undefined`. `depth` is how
    /// many levels of arrays and objects it may still open.
    fn value(
        &mut self,
        value: sys::napi_value,
        depth: u32,
    ) -> Result<Option<Json<'b>>, Failure<'b>> {
        self.count_value()?;
        Ok(Some(match self.type_of(value)? {
            sys::ValueType::napi_undefined => return Ok(None),
            sys::ValueType::napi_null => Json::Null,
            sys::ValueType::napi_boolean => {
                let mut b = false;
                // SAFETY: `self.env` is this call's live environment, `value` a handle of it just typed as a boolean, `b` a local out-pointer.
                check(unsafe { sys::napi_get_value_bool(self.env, value, &mut b) })?;
                Json::Bool(b)
            }
            sys::ValueType::napi_number => {
                let mut n = 0.0;
                // SAFETY: `self.env` is this call's live environment, `value` a handle of it just typed as a number, `n` a local out-pointer.
                check(unsafe { sys::napi_get_value_double(self.env, value, &mut n) })?;
                json_number(n)?
            }
            sys::ValueType::napi_string => Json::String(Cow::Borrowed(self.string(value)?)),
            sys::ValueType::napi_object => {
                if depth == 0 {
                    return Err(Failure::unreadable(format!(
                        "nests deeper than {MAX_DEPTH} levels (or holds itself)"
                    )));
                }
                if self.is_array(value)? {
                    self.array(value, depth - 1)?
                } else if let Some(millis) = self.date_value(value)? {
                    Json::String(Cow::Borrowed(instant_text(millis, self.arena)?))
                } else {
                    self.object(value, depth - 1)?
                }
            }
            sys::ValueType::napi_function => {
                return Err(Failure::unreadable("is a function, not a JSON value"));
            }
            sys::ValueType::napi_symbol => {
                return Err(Failure::unreadable("is a symbol, not a JSON value"));
            }
            sys::ValueType::napi_bigint => Json::Number(self.bigint(value)?),
            _ => return Err(Failure::unreadable("is not a JSON value")),
        }))
    }

    /// A BigInt as the integer it is (as a Python int reads), when it fits
    /// in 64 bits, signed or not.
    fn bigint(&mut self, value: sys::napi_value) -> Result<Number, Failure<'b>> {
        let (mut signed, mut exact) = (0_i64, false);
        // SAFETY: `self.env` is this call's live environment, `value` a handle of it just typed as a BigInt, `signed` and `exact` local out-pointers.
        check(unsafe {
            sys::napi_get_value_bigint_int64(self.env, value, &mut signed, &mut exact)
        })?;
        if exact {
            return Ok(Number::from(signed));
        }
        let mut unsigned = 0_u64;
        // SAFETY: as above, `unsigned` a local out-pointer.
        check(unsafe {
            sys::napi_get_value_bigint_uint64(self.env, value, &mut unsigned, &mut exact)
        })?;
        if exact {
            return Ok(Number::from(unsigned));
        }
        Err(Failure::unreadable("is a BigInt beyond 64 bits"))
    }

    fn array(&mut self, value: sys::napi_value, depth: u32) -> Result<Json<'b>, Failure<'b>> {
        let count = self.array_length(value)?;
        let mut items = Vec::with_capacity(count as usize);
        for index in 0..count {
            let item = self.element(value, index)?;
            match self.value(item, depth) {
                Ok(Some(item)) => items.push(item),
                Ok(None) => {
                    return Err(Failure::unreadable("is undefined").at(Step::Index(index)));
                }
                Err(failure) => return Err(failure.at(Step::Index(index))),
            }
        }
        Ok(Json::Array(items))
    }

    fn object(&mut self, value: sys::napi_value, depth: u32) -> Result<Json<'b>, Failure<'b>> {
        let mut names = ptr::null_mut();
        // SAFETY: `self.env` is this call's live environment, `value` a handle of it typed as an object, `names` a local out-pointer.
        check(unsafe { sys::napi_get_property_names(self.env, value, &mut names) })?;
        let count = self.array_length(names)?;
        if count == 0 {
            // A Map or Set keeps its entries out of its properties: read as
            // an object it would be `{}`, its entries lost without a word.
            for (class, hint) in [(c"Map", "Object.fromEntries(map)"), (c"Set", "[...set]")] {
                if self.instance_of(value, class)? {
                    let class = class.to_str().unwrap_or("?");
                    return Err(Failure::unreadable(format!(
                        "is a {class}, which JSON cannot hold; give {hint}"
                    )));
                }
            }
        }
        let mut fields = Vec::with_capacity(count as usize);
        for index in 0..count {
            let name = self.element(names, index)?;
            let key = match self.string(name) {
                Ok(key) => key,
                Err(Failure::Unreadable { reason, .. }) => {
                    // The key itself cannot be read: named with its lone
                    // surrogate written as an escape.
                    let key = self.arena.alloc_str(&escaped(&self.utf16(name)?));
                    return Err(
                        Failure::unreadable(format!("is a key that {reason}")).at(Step::Key(key))
                    );
                }
                Err(failure) => return Err(failure),
            };
            let mut field = ptr::null_mut();
            // SAFETY: `name` and `value` are live handles of `self.env` (a key just listed and its object), `field` a local out-pointer.
            check(unsafe { sys::napi_get_property(self.env, value, name, &mut field) })?;
            match self.value(field, depth) {
                Ok(Some(field)) => fields.push((Cow::Borrowed(key), field)),
                Ok(None) => {}
                Err(failure) => return Err(failure.at(Step::Key(key))),
            }
        }
        Ok(Json::Object(fields))
    }

    /// A string's UTF-8 text, copied into the arena. A lone UTF-16
    /// surrogate, which N-API's UTF-8 would make U+FFFD, is an error
    /// ([`lone_surrogate`]).
    fn string(&mut self, value: sys::napi_value) -> Result<&'b str, Failure<'b>> {
        let mut len = 0;
        let read = |buf: &mut Vec<u8>, len: &mut usize| {
            // SAFETY: `value` is a live string handle of `self.env`; the pointer and length describe `buf`, of which N-API writes at most `buf.len()` bytes, and `len` is a local out-pointer.
            check(unsafe {
                sys::napi_get_value_string_utf8(
                    self.env,
                    value,
                    buf.as_mut_ptr().cast(),
                    buf.len(),
                    len,
                )
            })
        };
        read(&mut self.scratch, &mut len)?;
        // Cut short, perhaps: V8 writes whole characters (up to 4 bytes)
        // and a terminating NUL.
        if len + 4 >= self.scratch.len() {
            // SAFETY: as above, with a null buffer: N-API only writes the length to `len`.
            check(unsafe {
                sys::napi_get_value_string_utf8(self.env, value, ptr::null_mut(), 0, &mut len)
            })?;
            self.scratch.resize(len + 1, 0);
            read(&mut self.scratch, &mut len)?;
        }
        let text = std::str::from_utf8(&self.scratch[..len])
            .map_err(|e| Error::new(Status::StringExpected, e.to_string()))?;
        // Only a text holding U+FFFD may have had a lone surrogate.
        if text.contains(char::REPLACEMENT_CHARACTER)
            && let Some(unit) = lone_surrogate(&self.utf16(value)?)
        {
            return Err(lone_surrogate_failure(unit));
        }
        Ok(self.arena.alloc_str(text))
    }

    /// A string's UTF-16 code units, as JavaScript holds them.
    fn utf16(&self, value: sys::napi_value) -> napi::Result<Vec<u16>> {
        // SAFETY: `self.env` is this call's live environment and `value` a live string handle of it.
        let units = unsafe { Utf16String::from_napi_value(self.env, value) }?;
        Ok(units.to_vec())
    }

    /// A string's UTF-8 text of any length, read straight into the arena.
    fn long_string(&self, value: sys::napi_value) -> napi::Result<&'b str> {
        let mut len = 0;
        // SAFETY: `value` is a live string handle of `self.env`; with a null buffer N-API only writes the length to `len`.
        check(unsafe {
            sys::napi_get_value_string_utf8(self.env, value, ptr::null_mut(), 0, &mut len)
        })?;
        let buf = self.arena.alloc_slice_fill_copy(len + 1, 0u8);
        let mut written = 0;
        // SAFETY: as above; the pointer and length describe `buf`, of which N-API writes at most `buf.len()` bytes, and `written` is a local out-pointer.
        check(unsafe {
            sys::napi_get_value_string_utf8(
                self.env,
                value,
                buf.as_mut_ptr().cast(),
                buf.len(),
                &mut written,
            )
        })?;
        let buf: &'b [u8] = buf;
        std::str::from_utf8(&buf[..written])
            .map_err(|e| Error::new(Status::StringExpected, e.to_string()))
    }

    fn type_of(&self, value: sys::napi_value) -> napi::Result<sys::napi_valuetype> {
        let mut kind = 0;
        // SAFETY: `self.env` is this call's live environment, `value` a handle of it, `kind` a local out-pointer.
        check(unsafe { sys::napi_typeof(self.env, value, &mut kind) })?;
        Ok(kind)
    }

    /// The milliseconds since the epoch a `Date` holds (NaN for an
    /// invalid one); `None` for any other value.
    fn date_value(&self, value: sys::napi_value) -> napi::Result<Option<f64>> {
        let mut is = false;
        // SAFETY: `self.env` is this call's live environment, `value` a handle of it, `is` a local out-pointer.
        check(unsafe { sys::napi_is_date(self.env, value, &mut is) })?;
        if !is {
            return Ok(None);
        }
        let mut millis = 0.0;
        // SAFETY: `self.env` is this call's live environment, `value` a handle of it just found to be a `Date`, `millis` a local out-pointer.
        check(unsafe { sys::napi_get_date_value(self.env, value, &mut millis) })?;
        Ok(Some(millis))
    }

    /// Whether `value` is an instance of the global class `class`.
    fn instance_of(&self, value: sys::napi_value, class: &std::ffi::CStr) -> napi::Result<bool> {
        let (mut global, mut constructor, mut is) = (ptr::null_mut(), ptr::null_mut(), false);
        // SAFETY: `self.env` is this call's live environment, `global` a local out-pointer.
        check(unsafe { sys::napi_get_global(self.env, &mut global) })?;
        // SAFETY: `global` is a live handle of `self.env`, `class` a NUL-terminated name, `constructor` a local out-pointer.
        check(unsafe {
            sys::napi_get_named_property(self.env, global, class.as_ptr(), &mut constructor)
        })?;
        // SAFETY: `value` and `constructor` are live handles of `self.env`, `is` a local out-pointer.
        check(unsafe { sys::napi_instanceof(self.env, value, constructor, &mut is) })?;
        Ok(is)
    }

    fn is_array(&self, value: sys::napi_value) -> napi::Result<bool> {
        let mut is = false;
        // SAFETY: `self.env` is this call's live environment, `value` a handle of it, `is` a local out-pointer.
        check(unsafe { sys::napi_is_array(self.env, value, &mut is) })?;
        Ok(is)
    }

    fn array_length(&self, value: sys::napi_value) -> napi::Result<u32> {
        let mut count = 0;
        // SAFETY: `self.env` is this call's live environment, `value` a handle of it known to be an array, `count` a local out-pointer.
        check(unsafe { sys::napi_get_array_length(self.env, value, &mut count) })?;
        Ok(count)
    }

    fn element(&self, array: sys::napi_value, index: u32) -> napi::Result<sys::napi_value> {
        let mut item = ptr::null_mut();
        // SAFETY: `self.env` is this call's live environment, `array` a handle of it known to be an array, `item` a local out-pointer.
        check(unsafe { sys::napi_get_element(self.env, array, index, &mut item) })?;
        Ok(item)
    }
}
