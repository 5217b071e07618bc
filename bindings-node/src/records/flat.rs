//! The flat layout of an array of records (see `records.js`) read with a
//! few N-API calls for the whole array, into the same trees and errors as
//! the records one by one ([`super::Records`]).

use super::*;

/// The flat layout `records.js` makes of an array of records: the keys,
/// where each record's fields end and whether it was flattened (a plain
/// object) or is the next of the `others`, and each field's key, kind and
/// number (a string's UTF-16 length). The strings come joined in one text.
#[napi(object)]
pub struct FlatLayout {
    pub keys: Vec<String>,
    pub ends: Uint32Array,
    pub plain: Uint8Array,
    pub field_keys: Uint32Array,
    pub kinds: Uint8Array,
    pub numbers: Float64Array,
}

// Kinds of a field, as records.js writes them.
const UNDEFINED: u8 = 0;
const NULL: u8 = 1;
const FALSE: u8 = 2;
const TRUE: u8 = 3;
const NUMBER: u8 = 4;
const STRING: u8 = 5;
const OTHER: u8 = 6;
const REPEAT: u8 = 7;

fn inconsistent() -> Error {
    Error::new(
        Status::InvalidArg,
        "the flat records do not match their layout".to_string(),
    )
}

/// The joined strings of a flat layout, cut one by one.
enum Text<'b> {
    /// Every string is ASCII: a UTF-16 length is a byte length.
    Ascii { text: &'b str, at: usize },
    /// Some string is not: each is cut from the UTF-16 units and converted
    /// alone (a lone surrogate is an error naming the field, as in a single
    /// string).
    Wide { units: Vec<u16>, at: usize },
}

impl<'b> Text<'b> {
    fn next(&mut self, length: usize, arena: &'b Bump) -> Result<&'b str, Failure<'b>> {
        match self {
            Text::Ascii { text, at } => {
                let piece = at
                    .checked_add(length)
                    .and_then(|end| text.get(*at..end))
                    .ok_or_else(inconsistent)?;
                *at += length;
                Ok(piece)
            }
            Text::Wide { units, at } => {
                let piece = at
                    .checked_add(length)
                    .and_then(|end| units.get(*at..end))
                    .ok_or_else(inconsistent)?;
                *at += length;
                match lone_surrogate(piece) {
                    Some(unit) => Err(lone_surrogate_failure(unit)),
                    None => Ok(arena.alloc_str(&String::from_utf16_lossy(piece))),
                }
            }
        }
    }
}

/// The records of a flat layout, read a chunk at a time: the same record
/// trees and errors as [`Records`] reads from the array itself.
pub struct FlatRecords<'a, 'b> {
    reader: Reader<'b>,
    layout: &'a FlatLayout,
    /// The keys, copied into the arena.
    keys: Vec<&'b str>,
    /// Per key, the last string given to it.
    last: Vec<Option<&'b str>>,
    text: Text<'b>,
    others: sys::napi_value,
    next_other: u32,
    /// The next record to read.
    next: usize,
    /// The next field to read.
    field: usize,
}

impl<'a, 'b> FlatRecords<'a, 'b> {
    /// The records of `layout`, its strings joined in `text` and its other
    /// values in the array `others`. A layout whose parts disagree is an
    /// `InvalidArg` error.
    pub fn new(
        env: &Env,
        layout: &'a FlatLayout,
        text: Unknown<'_>,
        others: Unknown<'_>,
        arena: &'b Bump,
    ) -> napi::Result<FlatRecords<'a, 'b>> {
        let fields = layout.kinds.len();
        let consistent = layout.field_keys.len() == fields
            && layout.numbers.len() == fields
            && layout.plain.len() == layout.ends.len()
            && layout.ends.windows(2).all(|w| w[0] <= w[1])
            && layout.ends.last().is_none_or(|&end| end as usize == fields)
            && layout
                .field_keys
                .iter()
                .all(|&k| (k as usize) < layout.keys.len())
            && u32::try_from(layout.ends.len()).is_ok();
        if !consistent {
            return Err(inconsistent());
        }
        let mut reader = Reader {
            env: env.raw(),
            arena,
            scratch: Vec::new(),
            budget: MAX_VALUES,
        };
        if reader.type_of(text.raw())? != sys::ValueType::napi_string
            || !reader.is_array(others.raw())?
        {
            return Err(inconsistent());
        }
        let units: usize = layout
            .kinds
            .iter()
            .zip(layout.numbers.iter())
            .filter(|(kind, _)| **kind == STRING)
            .map(|(_, length)| *length as usize)
            .sum();
        let utf8 = reader.long_string(text.raw())?;
        let text = if utf8.len() == units {
            Text::Ascii { text: utf8, at: 0 }
        } else {
            // SAFETY: `env` is this call's live environment and `text` a live string handle of it (typed just above).
            let units = unsafe { Utf16String::from_napi_value(env.raw(), text.raw()) }?;
            Text::Wide {
                units: units.to_vec(),
                at: 0,
            }
        };
        reader.scratch = vec![0; 256];
        Ok(FlatRecords {
            reader,
            layout,
            keys: layout.keys.iter().map(|k| &*arena.alloc_str(k)).collect(),
            last: vec![None; layout.keys.len()],
            text,
            others: others.raw(),
            next_other: 0,
            next: 0,
            field: 0,
        })
    }

    /// The next `size` records at most; `None` once every one is read.
    pub fn next_chunk(&mut self, size: usize) -> napi::Result<Option<Vec<Json<'b>>>> {
        let count = self.layout.ends.len();
        if self.next >= count {
            return Ok(None);
        }
        let end = count.min(self.next.saturating_add(size));
        let mut chunk = Vec::with_capacity(end - self.next);
        // The handles of a chunk's other values are released after it.
        let env = self.reader.env;
        let mut scope = ptr::null_mut();
        // SAFETY: `env` is the live environment of this call (on its thread) and `scope` a local out-pointer; the scope is closed below before the next opens.
        check(unsafe { sys::napi_open_handle_scope(env, &mut scope) })?;
        let mut read = Ok(());
        for index in self.next..end {
            match self.record(index) {
                Ok(record) => chunk.push(record),
                Err(error) => {
                    read = Err(error);
                    break;
                }
            }
        }
        // SAFETY: `scope` is the scope opened just above in the same `env`, and no handle made inside it is used after this point.
        check(unsafe { sys::napi_close_handle_scope(env, scope) })?;
        read?;
        self.next = end;
        Ok(Some(chunk))
    }

    fn other(&mut self) -> napi::Result<sys::napi_value> {
        let value = self.reader.element(self.others, self.next_other)?;
        self.next_other += 1;
        Ok(value)
    }

    /// Record `index`, whose fields start at `self.field`.
    fn record(&mut self, index: usize) -> napi::Result<Json<'b>> {
        // Checked in `new`: the count fits in 32 bits.
        let position = index as u32;
        if self.layout.plain[index] == 0 {
            let item = self.other()?;
            return self.reader.item(item, position);
        }
        let end = self.layout.ends[index] as usize;
        // The record itself counts as one value.
        self.reader.budget = MAX_VALUES - 1;
        let mut fields = Vec::with_capacity(end.saturating_sub(self.field));
        while self.field < end {
            let field = self.field;
            self.field += 1;
            let k = self.layout.field_keys[field] as usize;
            let key = self.keys[k];
            match self.value(field, k) {
                Ok(Some(value)) => fields.push((Cow::Borrowed(key), value)),
                Ok(None) => {}
                Err(failure) => {
                    return Err(failure
                        .at(Step::Key(key))
                        .into_error(&record_name(position), RECORD));
                }
            }
        }
        Ok(Json::Object(fields))
    }

    /// The value of field `field` of a plain record, of key `k`; `None` for
    /// `undefined`.
    fn value(&mut self, field: usize, k: usize) -> Result<Option<Json<'b>>, Failure<'b>> {
        let kind = self.layout.kinds[field];
        if kind == OTHER {
            let value = self.other()?;
            // A field of a record: two levels below the call's argument.
            return self.reader.value(value, MAX_DEPTH - 2);
        }
        self.reader.count_value()?;
        Ok(Some(match kind {
            UNDEFINED => return Ok(None),
            NULL => Json::Null,
            FALSE => Json::Bool(false),
            TRUE => Json::Bool(true),
            NUMBER => json_number(self.layout.numbers[field])?,
            STRING => {
                let length = self.layout.numbers[field] as usize;
                let text = self.text.next(length, self.reader.arena)?;
                self.last[k] = Some(text);
                Json::String(Cow::Borrowed(text))
            }
            REPEAT => Json::String(Cow::Borrowed(self.last[k].ok_or_else(inconsistent)?)),
            _ => return Err(inconsistent().into()),
        }))
    }
}
