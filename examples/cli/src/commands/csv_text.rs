//! What the `csv` crate does not tell about the text it reads: whether
//! the text ends inside a quoted field, and the line a row starts on.
//!
//! The crate ends a quoted field that never closes at the end of the file
//! without an error, so one stray quote would silently turn every line
//! after it into one cell of one row. [`QuoteScan`] follows the quoting as
//! the text goes by (the crate's rules: a quote opens a field only at the
//! field's start, and inside one `""` is a quote), jumping from quote to
//! quote, so text without quotes costs one `memchr` pass.

use std::io::Read;

/// What a row whose quoted field never closes is told.
pub const UNCLOSED_QUOTE: &str = "a quoted field in this row never ends: it runs to the end of the file, taking every line after it";

/// The UTF-8 byte order mark, which the `csv` crate passes over.
const BOM: &[u8] = b"\xEF\xBB\xBF";

/// The quoting state of the text fed so far.
#[derive(Debug, Default)]
pub struct QuoteScan {
    /// Inside a quoted field.
    inside: bool,
    /// Inside, the last byte fed was a quote: the next byte tells whether
    /// it closes the field or is the first of `""`.
    quote_last: bool,
    /// The last byte fed; `None` at the start of the text.
    previous: Option<u8>,
    /// How many bytes were fed, and the first three of them.
    fed: usize,
    head: Vec<u8>,
}

impl QuoteScan {
    /// Follows `bytes`, the text's next bytes.
    pub fn feed(&mut self, bytes: &[u8]) {
        let Some(&last) = bytes.last() else {
            return;
        };
        let wanted = 3usize.saturating_sub(self.head.len()).min(bytes.len());
        self.head.extend_from_slice(&bytes[..wanted]);
        let mut at = 0;
        if self.quote_last {
            self.quote_last = false;
            if bytes[0] == b'"' {
                at = 1;
            } else {
                self.inside = false;
            }
        }
        while let Some(found) = memchr::memchr(b'"', &bytes[at..]) {
            let quote = at + found;
            if self.inside {
                match bytes.get(quote + 1) {
                    Some(b'"') => at = quote + 2,
                    Some(_) => {
                        self.inside = false;
                        at = quote + 1;
                    }
                    None => {
                        self.quote_last = true;
                        break;
                    }
                }
            } else {
                let before = match quote {
                    0 => self.previous,
                    _ => Some(bytes[quote - 1]),
                };
                let after_bom = self.fed + quote == BOM.len() && self.head == BOM;
                self.inside = after_bom || matches!(before, None | Some(b',' | b'\n' | b'\r'));
                at = quote + 1;
            }
        }
        self.previous = Some(last);
        self.fed += bytes.len();
    }

    /// Whether the text fed so far, taken as the whole text, ends inside a
    /// quoted field (a quote as its last byte closes the field).
    pub fn ends_inside(&self) -> bool {
        self.inside && !self.quote_last
    }
}

/// A reader that follows the quoting of what is read through it.
pub struct QuoteWatched<R> {
    inner: R,
    scan: QuoteScan,
    ended: bool,
}

impl<R: Read> QuoteWatched<R> {
    pub fn new(inner: R) -> QuoteWatched<R> {
        QuoteWatched {
            inner,
            scan: QuoteScan::default(),
            ended: false,
        }
    }

    /// Whether the text was read to its end and ends inside a quoted field.
    pub fn ends_inside_quotes(&self) -> bool {
        self.ended && self.scan.ends_inside()
    }
}

impl<R: Read> Read for QuoteWatched<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let read = self.inner.read(buf)?;
        if read == 0 && !buf.is_empty() {
            self.ended = true;
        }
        self.scan.feed(&buf[..read]);
        Ok(read)
    }
}

/// Counts line breaks as an editor does: `\r\n`, `\n` and a lone `\r`
/// (the line end of classic Mac text, as Excel's "CSV (Macintosh)" still
/// writes it, which the CSV reader also ends rows at) each one, across
/// pieces of a text read in turn.
#[derive(Debug, Clone, Copy, Default)]
pub struct LineBreaks {
    /// The last byte counted was a `\r`: a `\n` right after it ends the
    /// same line.
    after_cr: bool,
}

impl LineBreaks {
    /// The line breaks in `bytes`, the next piece of the text.
    pub fn count(&mut self, bytes: &[u8]) -> usize {
        let mut breaks = 0;
        for &byte in bytes {
            match byte {
                b'\r' => breaks += 1,
                b'\n' if !self.after_cr => breaks += 1,
                _ => {}
            }
            self.after_cr = byte == b'\r';
        }
        breaks
    }

    /// The line breaks at the start of `bytes`, the next piece of the text
    /// (a row's start falls before those ending the row before it).
    pub fn leading(mut self, bytes: &[u8]) -> usize {
        let run = bytes
            .iter()
            .take_while(|byte| matches!(byte, b'\r' | b'\n'))
            .count();
        self.count(&bytes[..run])
    }
}

/// Where the crate says a row starts: the line it has counted and the byte
/// it started reading the row at. Both fall before the line breaks that
/// end the row before it when those are `\r\n` or blank lines, which the
/// crate counts only as it reads on, and the crate counts only `\n`; the
/// line is counted again from the text ([`RowStart::line_in`], or the
/// file read again).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RowStart {
    line: usize,
    byte: u64,
}

impl RowStart {
    /// The start of the row (or error) at `position`; line 0 when the
    /// crate gives none.
    pub fn of(position: Option<&csv::Position>) -> RowStart {
        position.map_or(RowStart { line: 0, byte: 0 }, |p| RowStart {
            line: p.line() as usize,
            byte: p.byte(),
        })
    }

    /// The first row of the text.
    pub const FIRST: RowStart = RowStart { line: 1, byte: 0 };

    /// Whether the crate gave a position.
    pub fn is_known(self) -> bool {
        self.line != 0
    }

    /// The byte the crate started reading the row at.
    pub fn byte(self) -> u64 {
        self.byte
    }

    /// The line the crate counted for the row (0 when it gave no
    /// position): right for text whose lines end in `\n`, for when the
    /// text cannot be read again to count them ([`RowStart::line_in`]).
    pub fn line_counted(self) -> usize {
        self.line
    }

    /// The line the row starts on in `text`, the whole text, its line
    /// breaks counted as [`LineBreaks`] counts them (0 when the crate gave
    /// no position).
    pub fn line_in(self, text: &str) -> usize {
        if self.line == 0 {
            return 0;
        }
        let bytes = text.as_bytes();
        let from = usize::try_from(self.byte)
            .unwrap_or(usize::MAX)
            .min(bytes.len());
        let mut breaks = LineBreaks::default();
        1 + breaks.count(&bytes[..from]) + breaks.leading(&bytes[from..])
    }
}

/// Whether `text`, whole, ends inside a quoted field.
pub fn ends_inside_quotes(text: &str) -> bool {
    let mut scan = QuoteScan::default();
    scan.feed(text.as_bytes());
    scan.ends_inside()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The text fed in pieces of every size ends as it does fed whole.
    fn ends_inside_in_pieces(text: &str) -> bool {
        let whole = ends_inside_quotes(text);
        for size in 1..=text.len().max(1) {
            let mut scan = QuoteScan::default();
            text.as_bytes()
                .chunks(size)
                .for_each(|piece| scan.feed(piece));
            assert_eq!(scan.ends_inside(), whole, "{text:?} in pieces of {size}");
        }
        whole
    }

    #[test]
    fn a_quote_that_never_closes_is_seen_wherever_the_pieces_split() {
        let closed = [
            "",
            "a,b\n1,2\n",
            "a,b\n1,\"two, three\"\n",
            "a,b\n1,\"say \"\"hi\"\"\"\n",
            "a,b\n1,\"multi\nline\"\n2,3\n",
            "a,b\n1,\"x\"",
            "a,b\n1,ab\"c\n",
            "a,b\r\n1,\"x\"\r\n",
            "\u{feff}\"a\",b\n1,2\n",
            "a\n\"\"\n",
        ];
        for text in closed {
            assert!(!ends_inside_in_pieces(text), "{text:?}");
        }
        let open = [
            "a,b\n1,\"two\n3,4\n",
            "a,b\n1,\"say \"\"hi\"\"\n",
            "a,b\n\"1,2\n",
            "\"a,b\n",
            "\u{feff}\"a,b\n",
            "a,b\n1,\"x\"\"",
            "a,b\n1,\"x\",\"y\n",
        ];
        for text in open {
            assert!(ends_inside_in_pieces(text), "{text:?}");
        }
    }

    /// The line of each row as the crate reads `text`, corrected.
    fn row_lines(text: &str) -> Vec<usize> {
        let mut reader = csv::ReaderBuilder::new()
            .has_headers(false)
            .flexible(true)
            .from_reader(text.as_bytes());
        reader
            .records()
            .map(|row| RowStart::of(row.unwrap().position()).line_in(text))
            .collect()
    }

    #[test]
    fn rows_after_crlf_and_blank_lines_start_on_their_own_line() {
        assert_eq!(row_lines("h\nA\nB\n"), [1, 2, 3]);
        assert_eq!(row_lines("h\r\nA\r\nB\r\n"), [1, 2, 3]);
        assert_eq!(row_lines("h\n\n\nA\nB"), [1, 4, 5]);
        assert_eq!(row_lines("\r\n\r\nh\r\nA\r\n\r\nB\r\n"), [3, 4, 6]);
        assert_eq!(row_lines("h\r\n\"two\r\nlines\"\r\nB\r\n"), [1, 2, 4]);
        // Classic Mac line ends, a lone \r, as Excel's "CSV (Macintosh)".
        assert_eq!(row_lines("h\rA\r\rB\r"), [1, 2, 4]);
        assert_eq!(row_lines("h\r\"two\rlines\"\rB"), [1, 2, 4]);
        assert_eq!(RowStart::of(None).line_in("h\n"), 0);
    }

    #[test]
    fn a_watched_reader_tells_only_once_it_has_read_to_the_end() {
        let text = "a,b\n1,\"two\n3,4\n";
        let mut watched = QuoteWatched::new(text.as_bytes());
        let mut first = [0u8; 6];
        watched.read_exact(&mut first).unwrap();
        assert!(!watched.ends_inside_quotes());
        let mut rest = Vec::new();
        watched.read_to_end(&mut rest).unwrap();
        assert!(watched.ends_inside_quotes());
    }
}
