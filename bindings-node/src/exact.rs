//! A JavaScript number holds integers exactly up to 2^53 - 1; `JSON.parse`
//! rounds a larger one without a word. Answers cross to JavaScript as JSON
//! text, so each is checked here first: an answer with such an integer (a
//! sum beyond about 90 trillion dollars in cents, or far less in a currency
//! of small units) is an `out_of_range` error naming the value's place,
//! never a rounded number.

use crate::errors::details;

/// `Number.MAX_SAFE_INTEGER`: the largest integer that, with every integer
/// below it, a JavaScript number holds exactly.
const MAX_SAFE_INTEGER: u64 = (1 << 53) - 1;

/// What a ledger's JSON answers do with an integer beyond 2^53 - 1.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BigIntegers {
    /// Refuse the answer ([`exact_in_javascript`]).
    Refuse,
    /// Send it as written: `index.js` reads such integers as BigInts (the
    /// ledger's `bigints` option).
    Pass,
}

/// `text` itself when every integer in it is one a JavaScript number holds
/// exactly, or when `big` passes them; otherwise an `out_of_range` error
/// naming the first other one by its place in the answer (`result[3].mrr`),
/// and `exact_elsewhere`, the call that answers it exactly, if there is
/// one. Numbers with a fraction or an exponent are floats on both sides and
/// pass.
pub fn exact_in_javascript(
    text: String,
    exact_elsewhere: Option<&str>,
    big: BigIntegers,
) -> napi::Result<String> {
    if big == BigIntegers::Pass || !has_long_digit_run(text.as_bytes()) {
        return Ok(text);
    }
    let Some((place, digits)) = first_unsafe_integer(text.as_bytes()) else {
        return Ok(text);
    };
    let mut message = format!(
        "the answer's `{place}` is {digits}, beyond {MAX_SAFE_INTEGER} (2^53 - 1), the largest \
         integer a JavaScript number holds exactly"
    );
    match exact_elsewhere {
        Some(call) => message.push_str(&format!(
            "; `{call}` answers it exactly, as a BigInt, and so does this call with the option \
             `bigints: true`"
        )),
        None => {
            message.push_str("; with the option `bigints: true` this call answers it as a BigInt")
        }
    }
    Err(details("out_of_range", message, None, Some(&place)))
}

/// Whether `text` has sixteen digits in a row: without them it holds no
/// integer beyond 2^53. A run of sixteen covers two positions eight apart
/// that are multiples of eight, so only every eighth byte is read until two
/// such are digits (about a fifth of the time of [`first_unsafe_integer`]).
fn has_long_digit_run(text: &[u8]) -> bool {
    let mut at = 0;
    while at + 8 < text.len() {
        if text[at].is_ascii_digit() && text[at + 8].is_ascii_digit() {
            let start = text[..at]
                .iter()
                .rposition(|byte| !byte.is_ascii_digit())
                .map_or(0, |before| before + 1);
            let end = text[at..]
                .iter()
                .position(|byte| !byte.is_ascii_digit())
                .map_or(text.len(), |after| at + after);
            if end - start >= 16 {
                return true;
            }
        }
        at += 8;
    }
    false
}

/// Where the scan is inside an array (the index of the current item) or an
/// object (the byte range of the current key, quotes and escapes as
/// written).
enum Frame {
    Array(usize),
    Object(std::ops::Range<usize>),
}

/// The place and digits of the first integer of the JSON `text` beyond
/// [`MAX_SAFE_INTEGER`] either way, in one pass that skips strings whole
/// and notes keys by position (a place is only spelled out when found).
fn first_unsafe_integer(text: &[u8]) -> Option<(String, &str)> {
    let mut frames: Vec<Frame> = Vec::new();
    let mut key_next = false;
    let mut at = 0;
    while at < text.len() {
        match text[at] {
            b'"' => {
                let end = string_end(text, at + 1);
                if key_next && let Some(Frame::Object(key)) = frames.last_mut() {
                    *key = at..end;
                    key_next = false;
                }
                at = end;
            }
            b'-' | b'0'..=b'9' => {
                let start = at;
                while at < text.len()
                    && matches!(text[at], b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9')
                {
                    at += 1;
                }
                let token = &text[start..at];
                if is_unsafe_integer(token) {
                    let digits = std::str::from_utf8(token).unwrap_or_default();
                    return Some((place(text, &frames), digits));
                }
            }
            open @ (b'{' | b'[') => {
                frames.push(if open == b'{' {
                    Frame::Object(0..0)
                } else {
                    Frame::Array(0)
                });
                key_next = open == b'{';
                at += 1;
            }
            b'}' | b']' => {
                frames.pop();
                at += 1;
            }
            b',' => {
                match frames.last_mut() {
                    Some(Frame::Array(index)) => *index += 1,
                    Some(Frame::Object(_)) => key_next = true,
                    None => {}
                }
                at += 1;
            }
            _ => at += 1,
        }
    }
    None
}

/// The position just past the closing quote of the string whose text
/// starts at `at`.
fn string_end(text: &[u8], mut at: usize) -> usize {
    while let Some(found) = memchr::memchr2(b'"', b'\\', &text[at..]) {
        if text[at + found] == b'"' {
            return at + found + 1;
        }
        at += found + 2;
        if at >= text.len() {
            break;
        }
    }
    text.len()
}

/// Whether a JSON number token is an integer beyond [`MAX_SAFE_INTEGER`]
/// either way (JSON writes no leading zeros, so 17 digits always are).
fn is_unsafe_integer(token: &[u8]) -> bool {
    let digits = token.strip_prefix(b"-").unwrap_or(token);
    if digits.len() < 16 || !digits.iter().all(u8::is_ascii_digit) {
        return false;
    }
    digits.len() > 16
        || std::str::from_utf8(digits)
            .ok()
            .and_then(|d| d.parse::<u64>().ok())
            .is_some_and(|value| value > MAX_SAFE_INTEGER)
}

/// The place the frames describe, as JavaScript would reach it: `.key` for
/// a key that is a plain name, `["key"]` for any other, `[index]` in arrays.
fn place(text: &[u8], frames: &[Frame]) -> String {
    let mut place = String::new();
    for frame in frames {
        match frame {
            Frame::Array(index) => place.push_str(&format!("[{index}]")),
            Frame::Object(key) => {
                let name: String = serde_json::from_slice(&text[key.clone()]).unwrap_or_default();
                if is_plain_name(&name) {
                    if !place.is_empty() {
                        place.push('.');
                    }
                    place.push_str(&name);
                } else {
                    place.push_str(&serde_json::json!([name]).to_string());
                }
            }
        }
    }
    place
}

/// A key JavaScript can follow a dot with: letters, digits, `_` and `$`,
/// not starting with a digit.
fn is_plain_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|first| first.is_ascii_alphabetic() || first == '_' || first == '$')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$')
}
