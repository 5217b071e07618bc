//! Whitespace around record text, as `str::trim` sees it (Unicode white
//! space), without decoding the characters of the usual text, which has
//! none: an id, a currency code, the name of a type or a status.

/// `text` without the white space around it. Text that starts and ends
/// with a visible ASCII character comes back as is, from two byte tests.
#[inline]
pub(crate) fn trimmed(text: &str) -> &str {
    match text.as_bytes() {
        [first, .., last] if first.is_ascii_graphic() && last.is_ascii_graphic() => text,
        [only] if only.is_ascii_graphic() => text,
        _ => text.trim(),
    }
}

/// Whether `text` is empty or white space only. Text that starts with a
/// visible ASCII character is not, from one byte test.
#[inline]
pub(crate) fn is_blank(text: &str) -> bool {
    match text.as_bytes().first() {
        Some(first) if first.is_ascii_graphic() => false,
        _ => text.trim().is_empty(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_text_is_kept_and_padded_text_trimmed() {
        assert_eq!(trimmed("USD"), "USD");
        assert_eq!(trimmed("x"), "x");
        assert_eq!(trimmed(" usd\t"), "usd");
        assert_eq!(trimmed("\u{a0}eur\u{2003}"), "eur");
        assert_eq!(trimmed("a b"), "a b");
        assert_eq!(trimmed(""), "");
        assert!(is_blank(""));
        assert!(is_blank(" \n\u{3000}"));
        assert!(!is_blank("c1"));
        assert!(!is_blank("\u{a0}c1"));
    }

    proptest::proptest! {
        #[test]
        fn the_same_as_str_trim(
            text in "[ \t\n\u{a0}\u{2003}\u{3000}a-zA-Z0-9_\u{e9}.-]{0,8}",
        ) {
            proptest::prop_assert_eq!(trimmed(&text), text.trim());
            proptest::prop_assert_eq!(is_blank(&text), text.trim().is_empty());
        }
    }
}
