//! A fast reader for the common shape of a record's text: plain values
//! (strings without escapes, integers, booleans and nulls) in objects and
//! arrays, as every line of a typical JSONL export holds. It reads in one
//! pass over the bytes what `serde_json` reads through its general
//! machinery, and gives up (`None`) on anything else, which the general
//! parser then reads with its own rules and error messages. Where it
//! answers, its tree equals the general parser's.

use super::Json;
use serde_json::Number;
use smallvec::SmallVec;
use std::borrow::Cow;

/// Objects and arrays nested deeper than this are left to the general
/// parser, which has a nesting limit of its own.
const MAX_DEPTH: usize = 32;

/// The tree of `text` when it holds only plain values, at any depth up to
/// [`MAX_DEPTH`], else `None` (also for malformed text: the general parser
/// names the error, also of an object that gives a key twice). Each object
/// and array is allocated at its exact size.
pub(super) fn parse(text: &str) -> Option<Json<'_>> {
    let mut reader = Reader::new(text);
    reader.skip_whitespace();
    let tree = reader.tree(0)?;
    reader.skip_whitespace();
    (reader.at == reader.bytes.len()).then_some(tree)
}

/// A plain value.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Scalar<'a> {
    Null,
    Bool(bool),
    /// An integer within `i64`.
    Integer(i64),
    /// A positive integer past `i64::MAX`.
    Unsigned(u64),
    /// A string without escapes.
    String(&'a str),
}

impl<'a> Scalar<'a> {
    fn to_json(self) -> Json<'a> {
        match self {
            Scalar::Null => Json::Null,
            Scalar::Bool(b) => Json::Bool(b),
            Scalar::Integer(n) => Json::Number(Number::from(n)),
            Scalar::Unsigned(n) => Json::Number(Number::from(n)),
            Scalar::String(s) => Json::String(Cow::Borrowed(s)),
        }
    }
}

/// Calls `visit` with each key and value of `text`, in order, when `text`
/// is one flat object of plain values; `None` as soon as it is not one
/// (also for malformed text), or when `visit` gives up.
pub(crate) fn visit_fields<'a>(
    text: &'a str,
    mut visit: impl FnMut(&'a str, Scalar<'a>) -> Option<()>,
) -> Option<()> {
    let mut reader = Reader::new(text);
    reader.skip_whitespace();
    reader.expect(b'{')?;
    reader.members(b'}', |reader| {
        let key = reader.key()?;
        visit(key, reader.value()?)
    })?;
    reader.skip_whitespace();
    (reader.at == reader.bytes.len()).then_some(())
}

/// The members gathered on the stack, moved to the heap at their exact
/// count (a spilled vector is kept as it is).
fn exact<T, const N: usize>(members: SmallVec<[T; N]>) -> Vec<T> {
    if members.spilled() {
        return members.into_vec();
    }
    let mut vec = Vec::with_capacity(members.len());
    vec.extend(members);
    vec
}

struct Reader<'a> {
    text: &'a str,
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn new(text: &'a str) -> Reader<'a> {
        Reader {
            text,
            bytes: text.as_bytes(),
            at: 0,
        }
    }

    /// A plain value, or an object or array of them nested `depth` deep.
    fn tree(&mut self, depth: usize) -> Option<Json<'a>> {
        let open = self.peek()?;
        if open != b'{' && open != b'[' {
            return Some(self.value()?.to_json());
        }
        if depth == MAX_DEPTH {
            return None;
        }
        self.at += 1;
        if open == b'[' {
            let mut items: SmallVec<[Json<'a>; 8]> = SmallVec::new();
            self.members(b']', |reader| {
                items.push(reader.tree(depth + 1)?);
                Some(())
            })?;
            return Some(Json::Array(exact(items)));
        }
        let mut fields: SmallVec<[(Cow<'a, str>, Json<'a>); 12]> = SmallVec::new();
        self.members(b'}', |reader| {
            let key = reader.key()?;
            if fields.iter().any(|(k, _)| *k == key) {
                return None;
            }
            let value = reader.tree(depth + 1)?;
            fields.push((Cow::Borrowed(key), value));
            Some(())
        })?;
        Some(Json::Object(exact(fields)))
    }

    /// The members of an object or array whose opening bracket was read,
    /// each read by `member`, up to the `close` bracket.
    fn members(
        &mut self,
        close: u8,
        mut member: impl FnMut(&mut Self) -> Option<()>,
    ) -> Option<()> {
        self.skip_whitespace();
        if self.peek() == Some(close) {
            self.at += 1;
            return Some(());
        }
        loop {
            member(self)?;
            self.skip_whitespace();
            match self.next()? {
                b',' => self.skip_whitespace(),
                byte if byte == close => return Some(()),
                _ => return None,
            }
        }
    }

    /// An object member's key and the colon after it.
    fn key(&mut self) -> Option<&'a str> {
        self.expect(b'"')?;
        let key = self.string()?;
        self.skip_whitespace();
        self.expect(b':')?;
        self.skip_whitespace();
        Some(key)
    }

    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.at).copied()
    }

    fn next(&mut self) -> Option<u8> {
        let byte = self.peek()?;
        self.at += 1;
        Some(byte)
    }

    fn expect(&mut self, wanted: u8) -> Option<()> {
        (self.next()? == wanted).then_some(())
    }

    /// Skips JSON's whitespace: spaces, tabs, line feeds and carriage returns.
    fn skip_whitespace(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.peek() {
            self.at += 1;
        }
    }

    /// The rest of a string whose opening quote was read; `None` for one
    /// with an escape or a control character (or no end).
    fn string(&mut self) -> Option<&'a str> {
        let rest = &self.bytes[self.at..];
        let end = plain_string_end(rest)?;
        if rest[end] != b'"' {
            return None;
        }
        // Quotes are ASCII, so both ends are character boundaries.
        let string = self.text.get(self.at..self.at + end)?;
        self.at += end + 1;
        Some(string)
    }

    // Inlined into its callers, which then keep the scalar in registers
    // rather than copying it through memory piece by piece.
    #[inline(always)]
    fn value(&mut self) -> Option<Scalar<'a>> {
        match self.peek()? {
            b'"' => {
                self.at += 1;
                Some(Scalar::String(self.string()?))
            }
            b't' => self.literal("true", Scalar::Bool(true)),
            b'f' => self.literal("false", Scalar::Bool(false)),
            b'n' => self.literal("null", Scalar::Null),
            b'-' => {
                self.at += 1;
                let magnitude = self.digits()?;
                // `-0` and magnitudes past `i64` are floats to the general
                // parser.
                let negative = i64::try_from(magnitude).ok().filter(|m| *m > 0)?;
                Some(Scalar::Integer(-negative))
            }
            b'0'..=b'9' => {
                let n = self.digits()?;
                Some(i64::try_from(n).map_or(Scalar::Unsigned(n), Scalar::Integer))
            }
            _ => None,
        }
    }

    fn literal(&mut self, word: &str, value: Scalar<'a>) -> Option<Scalar<'a>> {
        let end = self.at + word.len();
        (self.bytes.get(self.at..end)? == word.as_bytes()).then(|| {
            self.at = end;
            value
        })
    }

    /// An integer's digits as a `u64`; `None` for a leading zero before
    /// another digit, a fraction or exponent (a float to the general
    /// parser), or a value past `u64`.
    fn digits(&mut self) -> Option<u64> {
        let start = self.at;
        let mut value: u64 = 0;
        while let Some(digit @ b'0'..=b'9') = self.peek() {
            value = value
                .checked_mul(10)?
                .checked_add(u64::from(digit - b'0'))?;
            self.at += 1;
        }
        let digits = self.at - start;
        if digits == 0 || (digits > 1 && self.bytes[start] == b'0') {
            return None;
        }
        match self.peek() {
            Some(b'.' | b'e' | b'E') => None,
            _ => Some(value),
        }
    }
}

/// The index of the first byte that ends the plain part of a string: a
/// quote, a backslash or a control character. Records' strings are short,
/// so rather than a vector search (and a second pass for control
/// characters) eight bytes are tested at a time in a `u64`.
fn plain_string_end(bytes: &[u8]) -> Option<usize> {
    let mut words = bytes.chunks_exact(8);
    for (i, word) in words.by_ref().enumerate() {
        let word = u64::from_le_bytes([
            word[0], word[1], word[2], word[3], word[4], word[5], word[6], word[7],
        ]);
        let ends = bytes_below(word ^ spread(b'"'), 1)
            | bytes_below(word ^ spread(b'\\'), 1)
            | bytes_below(word, 0x20);
        if ends != 0 {
            return Some(i * 8 + (ends.trailing_zeros() / 8) as usize);
        }
    }
    let tail = bytes.len() - words.remainder().len();
    let ends = |&b: &u8| b == b'"' || b == b'\\' || b < 0x20;
    words.remainder().iter().position(ends).map(|i| tail + i)
}

/// The byte `b` in each of a word's eight bytes.
const fn spread(b: u8) -> u64 {
    0x0101_0101_0101_0101 * b as u64
}

/// The top bit of each byte of `word` below `limit` (at most 0x80) set, and
/// no other bit; a borrow may also flag bytes above the first one flagged,
/// so only the lowest flag is exact.
const fn bytes_below(word: u64, limit: u8) -> u64 {
    word.wrapping_sub(spread(limit)) & !word & spread(0x80)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Eight bytes at a time find the same end as one byte at a time,
        /// wherever it falls in a word, whatever bytes come after it.
        #[test]
        fn a_string_ends_where_a_byte_loop_ends_it(
            bytes in proptest::collection::vec(
                prop_oneof![1 => Just(b'"'), 1 => Just(b'\\'), 1 => 0u8..0x21, 8 => 0x21u8..=0xff, 8 => Just(b'a')],
                0..40,
            )
        ) {
            let byte_by_byte = bytes.iter().position(|&b| b == b'"' || b == b'\\' || b < 0x20);
            prop_assert_eq!(plain_string_end(&bytes), byte_by_byte);
        }
    }

    fn general(text: &str) -> Option<Json<'_>> {
        serde_json::from_str(text).ok()
    }

    #[test]
    fn a_record_of_plain_values_is_read_here_with_the_general_parsers_tree() {
        for text in [
            r#"{"id":"i1","customer_id":"c1","amount":2610,"refund":-5,"paid":true,"x":false,"n":null}"#,
            " {\t\"a\" : \"\" ,\r\n\"b\":0 } \n",
            "{}",
            r#"{"big":18446744073709551615,"low":-9223372036854775807,"café":"crème"}"#,
            r#"{"a":[1],"m":{"b":1,"c":[],"e":{"d":[null,"e"]}},"z":[ ]}"#,
            r#"[1, "two", [3], {}]"#,
            r#""text""#,
            "-12",
        ] {
            let flat = parse(text);
            assert!(flat.is_some(), "{text}");
            assert_eq!(flat, general(text), "{text}");
        }
    }

    #[test]
    fn anything_else_is_left_to_the_general_parser() {
        for text in [
            r#"{"a":"x\"y"}"#,
            r#"{"a":1.5}"#,
            r#"{"a":1e3}"#,
            r#"{"a":-0}"#,
            r#"{"a":-9223372036854775808}"#,
            r#"{"a":18446744073709551616}"#,
            r#"{"a":[1.5]}"#,
            r#"{"a":{"b":"x\ny"}}"#,
            r#"[1,]"#,
            r#"{"a":[1}"#,
            r#"{"a":{"b":1]}"#,
            "{\"a\":\"tab\there\"}",
            r#"{"a":01}"#,
            r#"{"a":1,}"#,
            r#"{"a":1} x"#,
            r#"{"k":1,"j":2,"k":3}"#,
            r#"{"m":{"b":1,"b":{"d":[null]}}}"#,
            r#"{"a":tru}"#,
            r#"{"a" 1}"#,
            r#"{"a":1"#,
            "",
        ] {
            assert_eq!(parse(text), None, "{text}");
        }
    }

    #[test]
    fn nesting_past_the_depth_limit_is_left_to_the_general_parser() {
        let nested = |depth: usize| format!("{}{}", "[".repeat(depth), "]".repeat(depth));
        assert_eq!(parse(&nested(MAX_DEPTH)), general(&nested(MAX_DEPTH)));
        assert!(parse(&nested(MAX_DEPTH)).is_some());
        assert_eq!(parse(&nested(MAX_DEPTH + 1)), None);
    }

    #[test]
    fn objects_and_arrays_are_allocated_at_their_exact_size() {
        let Some(Json::Object(fields)) = parse(r#"{"a":1,"m":{"x":"y","z":[1,2,3]}}"#) else {
            panic!("an object")
        };
        assert_eq!((fields.len(), fields.capacity()), (2, 2));
        let Json::Object(inner) = &fields[1].1 else {
            panic!("an object")
        };
        assert_eq!((inner.len(), inner.capacity()), (2, 2));
        let Json::Array(items) = &inner[1].1 else {
            panic!("an array")
        };
        assert_eq!((items.len(), items.capacity()), (3, 3));
    }

    /// Texts near the plain shape: keys and values from small pools that
    /// include escapes, control characters, floats, nested objects and
    /// arrays and odd whitespace, sometimes cut short or with a byte
    /// changed.
    fn texts() -> impl Strategy<Value = String> {
        let scalar = prop_oneof![
            "[a-z\u{e9}\"\\\\\t ]{0,6}".prop_map(|s| format!("{s:?}")),
            "[a-z]{0,4}\\\\[nu\"]".prop_map(|s| format!("\"{s}\"")),
            any::<i64>().prop_map(|n| n.to_string()),
            any::<u64>().prop_map(|n| n.to_string()),
            prop_oneof![
                Just("-0"),
                Just("0"),
                Just("00"),
                Just("1.0"),
                Just("2e3"),
                Just("-"),
                Just("true"),
                Just("false"),
                Just("null"),
                Just("nul"),
                Just("[]"),
                Just("{}"),
                Just("18446744073709551616"),
                Just("-9223372036854775808"),
            ]
            .prop_map(str::to_string),
        ];
        let space = prop_oneof![
            Just(""),
            Just(" "),
            Just("\t"),
            Just("\r\n"),
            Just("\u{a0}")
        ];
        let value = scalar.prop_recursive(3, 24, 4, |inner| {
            let members = proptest::collection::vec(("[a-c]{1,2}", inner), 0..4);
            prop_oneof![
                members.clone().prop_map(|items| {
                    let items: Vec<String> = items.into_iter().map(|(_, v)| v).collect();
                    format!("[{}]", items.join(","))
                }),
                members.prop_map(|fields| {
                    let fields: Vec<String> = fields
                        .iter()
                        .map(|(k, v)| format!("\"{k}\" : {v}"))
                        .collect();
                    format!("{{{}}}", fields.join(", "))
                }),
            ]
        });
        let field = ("[a-c]{1,2}", space.clone(), value, space);
        (
            proptest::collection::vec(field, 0..6),
            0..4usize,
            any::<prop::sample::Index>(),
            any::<u8>(),
        )
            .prop_map(|(fields, damage, at, byte)| {
                let body: Vec<String> = fields
                    .iter()
                    .map(|(key, before, value, after)| format!("{before}\"{key}\":{value}{after}"))
                    .collect();
                let mut text = format!("{{{}}}", body.join(","));
                let cut = at.index(text.len() + 1);
                match damage {
                    0 if text.is_char_boundary(cut) => text.truncate(cut),
                    1 if text.is_char_boundary(cut) => text.insert(cut, char::from(byte % 128)),
                    _ => {}
                }
                text
            })
    }

    proptest! {
        /// Where this reader answers, the general parser reads the same
        /// tree; where the general parser fails, this reader gives up.
        #[test]
        fn answers_only_with_the_general_parsers_tree(text in texts()) {
            if let Some(plain) = parse(&text) {
                prop_assert_eq!(Some(plain), general(&text));
            }
        }
    }
}
