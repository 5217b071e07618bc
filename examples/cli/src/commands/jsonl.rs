//! A JSONL file read a block of whole lines at a time, so the file is never
//! in memory whole beside the ledger it builds. Each block is cut after its
//! last newline; the part of a line past it starts the next block (a line
//! longer than a block grows the block until it ends).

use super::text_source::TextSource;
use std::io::Read;
use std::path::{Path, PathBuf};
use submetrics::model::Json;

/// Bytes read per block: some fifty thousand invoices, read on every core
/// while the block before is stored.
const BLOCK_BYTES: usize = 8 << 20;

/// A JSONL file being read block by block.
pub struct JsonlStream {
    path: PathBuf,
    source: TextSource,
    block_bytes: usize,
    /// The start of a line cut at the end of the last block.
    rest: Vec<u8>,
    /// The number of the next block's first line (one past the lines
    /// read so far).
    next_line: usize,
    /// The bytes of text read so far.
    bytes_read: u64,
}

impl JsonlStream {
    /// Reads the file at `path` from `source`.
    pub fn open(path: &Path, source: TextSource) -> JsonlStream {
        JsonlStream::with_block(path, source, BLOCK_BYTES)
    }

    fn with_block(path: &Path, source: TextSource, block_bytes: usize) -> JsonlStream {
        JsonlStream {
            path: path.to_path_buf(),
            source,
            block_bytes,
            rest: Vec::new(),
            next_line: 1,
            bytes_read: 0,
        }
    }

    /// The file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The next block of whole lines; `None` at the end of the file. A
    /// file that cannot be read, or is not UTF-8, is an error.
    pub fn next_block(&mut self) -> Result<Option<Block>, String> {
        let mut block = std::mem::take(&mut self.rest);
        let cut = loop {
            let start = block.len();
            // Read into the block's spare room, which is not zeroed first.
            block.reserve(self.block_bytes);
            let read = (&mut self.source)
                .take(self.block_bytes as u64)
                .read_to_end(&mut block)
                .map_err(|e| e.to_string())?;
            self.bytes_read += read as u64;
            // Short of a whole block only at the end of the file.
            if read < self.block_bytes {
                break None;
            }
            if let Some(last) = block[start..].iter().rposition(|&b| b == b'\n') {
                break Some(start + last + 1);
            }
        };
        if let Some(cut) = cut {
            self.rest = block.split_off(cut);
        }
        if block.is_empty() {
            return Ok(None);
        }
        let text = String::from_utf8(block).map_err(|_| "is not UTF-8 text".to_string())?;
        let first_line = self.next_line;
        self.next_line += memchr::memchr_iter(b'\n', text.as_bytes()).count();
        Ok(Some(Block { text, first_line }))
    }

    /// How many records the file holds, estimated from the lines and
    /// bytes read so far.
    pub fn estimate(&self) -> Option<usize> {
        let lines_read = self.next_line - 1;
        self.source.progress().estimate(lines_read, self.bytes_read)
    }
}

/// Whole lines of a JSONL file.
pub struct Block {
    pub text: String,
    /// The 1-based number of the block's first line in its file.
    pub first_line: usize,
}

impl Block {
    /// The records of the block: its non-blank lines.
    pub fn records(&self) -> Vec<&str> {
        lines(&self.text).collect()
    }

    /// The number in the file of the line of the block's record `index`
    /// (its `index`th non-blank line).
    pub fn line_of(&self, index: usize) -> usize {
        let lines = self.record_lines();
        lines.get(index).copied().unwrap_or(self.first_line)
    }

    /// The number in the file of each record's line.
    pub fn record_lines(&self) -> Vec<usize> {
        all_lines(&self.text)
            .enumerate()
            .filter(|(_, line)| !line.trim().is_empty())
            .map(|(i, _)| self.first_line + i)
            .collect()
    }

    /// The records of the block parsed, on every core; a malformed line is
    /// an error with its number in the file.
    pub fn parse(&self) -> Result<Vec<Json<'_>>, (usize, serde_json::Error)> {
        let (numbers, records): (Vec<usize>, Vec<&str>) = all_lines(&self.text)
            .enumerate()
            .filter(|(_, line)| !line.trim().is_empty())
            .map(|(i, line)| (self.first_line + i, line))
            .unzip();
        Json::parse_many(&records).map_err(|(i, e)| (numbers[i], e))
    }
}

/// The non-blank lines of a JSONL text.
pub fn lines(text: &str) -> impl Iterator<Item = &str> {
    all_lines(text).filter(|line| !line.trim().is_empty())
}

/// The lines of a text as [`str::lines`] gives them (without their `\n`
/// or `\r\n`; the last one's ending optional), found with a vectorized
/// search for newlines rather than a byte-by-byte one.
fn all_lines(text: &str) -> impl Iterator<Item = &str> {
    let mut newlines = memchr::memchr_iter(b'\n', text.as_bytes());
    let mut start = 0;
    std::iter::from_fn(move || match newlines.next() {
        Some(end) => {
            let line = &text[start..end];
            start = end + 1;
            Some(line.strip_suffix('\r').unwrap_or(line))
        }
        None if start < text.len() => {
            let line = &text[start..];
            start = text.len();
            Some(line)
        }
        None => None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn blocks_of(text: &str, block_bytes: usize) -> Vec<Block> {
        let path = std::env::temp_dir().join(format!(
            "jsonl-stream-{}-{block_bytes}.jsonl",
            std::process::id()
        ));
        std::fs::write(&path, text).unwrap();
        let source = TextSource::open(&path, None).unwrap();
        let mut stream = JsonlStream::with_block(&path, source, block_bytes);
        let mut blocks = Vec::new();
        while let Some(block) = stream.next_block().unwrap() {
            blocks.push(block);
        }
        std::fs::remove_file(&path).unwrap();
        blocks
    }

    #[test]
    fn blocks_end_after_whole_lines_and_a_long_line_grows_its_block() {
        let text =
            "{\"id\":\"a\"}\n{\"id\":\"b\"}\n\n{\"id\":\"a-much-longer-id\"}\n{\"id\":\"c\"}";
        let blocks: Vec<(String, usize)> = blocks_of(text, 12)
            .into_iter()
            .map(|b| (b.text, b.first_line))
            .collect();
        assert_eq!(
            blocks,
            [
                ("{\"id\":\"a\"}\n".to_string(), 1),
                ("{\"id\":\"b\"}\n\n".to_string(), 2),
                (
                    "{\"id\":\"a-much-longer-id\"}\n{\"id\":\"c\"}".to_string(),
                    4
                )
            ]
        );
        let whole = blocks_of(text, 1 << 20);
        assert_eq!(whole.len(), 1);
        assert_eq!((whole[0].text.as_str(), whole[0].first_line), (text, 1));
    }

    #[test]
    fn a_block_parses_its_non_blank_lines_and_names_a_malformed_ones_number() {
        let block = Block {
            text: "{\"id\":\"a\"}\r\n\n  \n{\"id\":\"b\"}\n{\"id\":}\n".to_string(),
            first_line: 10,
        };
        assert_eq!(
            block.records(),
            ["{\"id\":\"a\"}", "{\"id\":\"b\"}", "{\"id\":}"]
        );
        let (line, error) = block.parse().unwrap_err();
        assert_eq!(
            (line, error.to_string()),
            (14, "expected value at line 1 column 7".to_string())
        );
        let good = Block {
            text: "\n{\"id\":\"a\"}\n".to_string(),
            first_line: 1,
        };
        let ids: Vec<serde_json::Value> =
            good.parse().unwrap().iter().map(Json::to_value).collect();
        assert_eq!(ids, [serde_json::json!({"id": "a"})]);
    }

    proptest::proptest! {
        /// Lines split as `str::lines` splits them, whatever the mix of
        /// line endings, blank lines and a missing last newline.
        #[test]
        fn lines_split_like_the_standard_library(
            text in "[a\r\n\u{e9} ]{0,40}"
        ) {
            let ours: Vec<&str> = all_lines(&text).collect();
            let standard: Vec<&str> = text.lines().collect();
            proptest::prop_assert_eq!(ours, standard);
        }
    }

    #[test]
    fn the_estimate_scales_the_lines_read_to_the_file() {
        let line = "{\"id\":\"0123456789\"}\n";
        let path =
            std::env::temp_dir().join(format!("jsonl-estimate-{}.jsonl", std::process::id()));
        std::fs::write(&path, line.repeat(100)).unwrap();
        let source = TextSource::open(&path, None).unwrap();
        let mut stream = JsonlStream::with_block(&path, source, line.len() * 10);
        assert_eq!(stream.estimate(), None);
        assert_eq!(
            stream.next_block().unwrap().map(|b| b.records().len()),
            Some(10)
        );
        assert_eq!(stream.estimate(), Some(100));
        std::fs::remove_file(&path).unwrap();
    }
}
