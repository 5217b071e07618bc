//! The bytes of a text file of records (`.json`, `.jsonl`, `.ndjson`,
//! `.csv`), decompressed while they are read when the name ends in `.gz`
//! (gzip: also several members one after another, as `cat a.gz b.gz` and
//! parallel compressors write them) or `.zst` (Zstandard: also several
//! frames). Parquet compresses inside the file and is never wrapped.
//!
//! A source counts the bytes it read from the file and the text it gave,
//! so a stream estimates its record count from the records read so far,
//! compressed or not ([`Progress`]).

use std::io::Read;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

/// How a text file of records is compressed, by its last extension.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Compression {
    Gzip,
    Zstd,
}

impl Compression {
    /// The extensions of compressed text files, as error messages list them.
    pub const EXTENSIONS: &[&str] = &["gz", "zst"];

    /// The compression an extension names (`gz`, `zst`).
    pub fn of_extension(extension: &str) -> Option<Compression> {
        match extension {
            "gz" => Some(Compression::Gzip),
            "zst" => Some(Compression::Zstd),
            _ => None,
        }
    }
}

/// A text file being read, decompressed as it is read when it is
/// compressed.
pub struct TextSource {
    reader: Box<dyn Read + Send>,
    progress: Progress,
}

impl TextSource {
    /// Opens `path` for reading (a compressed file's header is read at the
    /// first read, so a file that is not what its name says fails there).
    pub fn open(path: &Path, compression: Option<Compression>) -> std::io::Result<TextSource> {
        let file = std::fs::File::open(path)?;
        let progress = Progress {
            size: file.metadata().map_or(0, |m| m.len()),
            counts: Arc::default(),
        };
        let counted = Counted {
            file,
            counts: Arc::clone(&progress.counts),
        };
        let reader: Box<dyn Read + Send> = match compression {
            None => Box::new(counted),
            Some(Compression::Gzip) => Box::new(flate2::read::MultiGzDecoder::new(
                std::io::BufReader::with_capacity(1 << 16, counted),
            )),
            Some(Compression::Zstd) => Box::new(zstd::stream::read::Decoder::new(counted)?),
        };
        let reader = Box::new(WithoutBom {
            text: reader,
            start: None,
        });
        Ok(TextSource { reader, progress })
    }

    /// How much of the file has been read, which stays valid while the
    /// source is read elsewhere (inside a CSV reader, say).
    pub fn progress(&self) -> Progress {
        self.progress.clone()
    }

    /// The whole text; a file that is not UTF-8 is an error.
    pub fn read_text(mut self) -> std::io::Result<String> {
        let mut text = String::new();
        self.reader.read_to_string(&mut text)?;
        Ok(text)
    }
}

impl Read for TextSource {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let read = self.reader.read(buf)?;
        self.progress
            .counts
            .text
            .fetch_add(read as u64, Ordering::Relaxed);
        Ok(read)
    }
}

/// The size of a file, the bytes read from it so far and the text they
/// gave (the same for a file that is not compressed).
#[derive(Clone)]
pub struct Progress {
    size: u64,
    counts: Arc<Counts>,
}

#[derive(Default)]
struct Counts {
    file: AtomicU64,
    text: AtomicU64,
}

impl Progress {
    /// How many records the whole file holds, estimated from the `records`
    /// read so far, the `text` bytes they took, and how much text the file
    /// has given per byte read from it so far (a decompressor reads ahead,
    /// so the share of the file the records took is a little less than
    /// what was read); `None` before anything is read.
    pub fn estimate(&self, records: usize, text: u64) -> Option<usize> {
        let file_read = self.counts.file.load(Ordering::Relaxed) as f64;
        let text_given = self.counts.text.load(Ordering::Relaxed) as f64;
        (file_read > 0.0 && text > 0 && records > 0).then(|| {
            let file_per_record = text as f64 * (file_read / text_given) / records as f64;
            (self.size as f64 / file_per_record).round() as usize
        })
    }
}

/// The UTF-8 byte order mark some tools (Windows ones, spreadsheets)
/// write at the start of a text.
const BOM: [u8; 3] = [0xEF, 0xBB, 0xBF];

/// A text read without the byte order mark it may start with: JSON has no
/// place for one, so `{...}` after it would be unreadable.
struct WithoutBom<R> {
    text: R,
    /// The first bytes read, while they are given back; `None` until the
    /// start is checked.
    start: Option<std::collections::VecDeque<u8>>,
}

impl<R: Read> Read for WithoutBom<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.start.is_none() {
            let mut first = [0; 3];
            let mut read = 0;
            while read < first.len() {
                match self.text.read(&mut first[read..]) {
                    Ok(0) => break,
                    Ok(n) => read += n,
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                    Err(e) => return Err(e),
                }
            }
            let utf16 = [[0xFF, 0xFE], [0xFE, 0xFF]];
            if read >= 2 && utf16.contains(&[first[0], first[1]]) {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::InvalidData,
                    "it is UTF-16 text (it starts with a UTF-16 byte order mark); save it as UTF-8",
                ));
            }
            let kept = if first[..read] == BOM {
                &[][..]
            } else {
                &first[..read]
            };
            self.start = Some(kept.iter().copied().collect());
        }
        match self.start.as_mut() {
            Some(start) if !start.is_empty() => start.read(buf),
            _ => self.text.read(buf),
        }
    }
}

/// A file that counts the bytes read from it.
struct Counted {
    file: std::fs::File,
    counts: Arc<Counts>,
}

impl Read for Counted {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let read = self.file.read(buf)?;
        self.counts.file.fetch_add(read as u64, Ordering::Relaxed);
        Ok(read)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    /// A file of `bytes` whose name ends in `name`, removed when dropped.
    struct Scratch(std::path::PathBuf);

    impl Drop for Scratch {
        fn drop(&mut self) {
            let _ = std::fs::remove_file(&self.0);
        }
    }

    fn scratch(name: &str, bytes: &[u8]) -> Scratch {
        let path = std::env::temp_dir().join(format!("text-source-{}-{name}", std::process::id()));
        std::fs::write(&path, bytes).unwrap();
        Scratch(path)
    }

    fn gzip(text: &str) -> Vec<u8> {
        let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        encoder.write_all(text.as_bytes()).unwrap();
        encoder.finish().unwrap()
    }

    /// The text of a file of `bytes` named `name`, compressed as `compression` says.
    fn read(name: &str, bytes: &[u8], compression: Compression) -> std::io::Result<String> {
        TextSource::open(&scratch(name, bytes).0, Some(compression))?.read_text()
    }

    #[test]
    fn every_gzip_member_and_zstd_frame_is_read() {
        let members = [gzip("{\"id\":\"a\"}\n"), gzip("{\"id\":\"b\"}\n")].concat();
        let text = read("two-members.jsonl.gz", &members, Compression::Gzip).unwrap();
        assert_eq!(text, "{\"id\":\"a\"}\n{\"id\":\"b\"}\n");

        let frames = [
            zstd::encode_all("id\na\n".as_bytes(), 0).unwrap(),
            zstd::encode_all("b\n".as_bytes(), 0).unwrap(),
        ]
        .concat();
        let text = read("two-frames.csv.zst", &frames, Compression::Zstd).unwrap();
        assert_eq!(text, "id\na\nb\n");
    }

    /// A byte order mark at the start is dropped, compressed or not; any
    /// other start, shorter texts and a mark later on are kept.
    #[test]
    fn a_byte_order_mark_at_the_start_is_dropped() {
        let plain = |name: &str, bytes: &[u8]| {
            TextSource::open(&scratch(name, bytes).0, None)
                .unwrap()
                .read_text()
                .unwrap()
        };
        assert_eq!(
            plain("bom.jsonl", b"\xEF\xBB\xBF{\"id\":\"a\"}\n"),
            "{\"id\":\"a\"}\n"
        );
        assert_eq!(plain("only-bom.json", b"\xEF\xBB\xBF"), "");
        assert_eq!(plain("short.json", b"[]"), "[]");
        assert_eq!(plain("empty.json", b""), "");
        assert_eq!(
            plain("inner.csv", b"id\n\xEF\xBB\xBFa\n"),
            "id\n\u{feff}a\n"
        );
        let text = read("bom.csv.gz", &gzip("\u{feff}id\na\n"), Compression::Gzip).unwrap();
        assert_eq!(text, "id\na\n");
        // UTF-16, as some spreadsheet exports are: named, not misread.
        for start in [[0xFF, 0xFE], [0xFE, 0xFF]] {
            let bytes = [&start[..], b"i\0d\0"].concat();
            let error = TextSource::open(&scratch("utf16.csv", &bytes).0, None)
                .unwrap()
                .read_text()
                .unwrap_err();
            assert_eq!(
                error.to_string(),
                "it is UTF-16 text (it starts with a UTF-16 byte order mark); save it as UTF-8"
            );
        }
    }

    #[test]
    fn a_file_that_is_not_what_its_name_says_is_an_error() {
        let error = read("plain.jsonl.gz", b"{\"id\":\"a\"}\n", Compression::Gzip).unwrap_err();
        assert_eq!(error.to_string(), "invalid gzip header");
    }

    #[test]
    fn the_estimate_scales_the_records_read_to_the_whole_file() {
        let lines = "x\n".repeat(1000);
        let file = scratch("lines.csv", lines.as_bytes());
        let mut source = TextSource::open(&file.0, None).unwrap();
        let progress = source.progress();
        assert_eq!(progress.estimate(0, 0), None);
        let mut first = [0u8; 600];
        source.read_exact(&mut first).unwrap();
        // 250 lines took 500 of the 2000 bytes (more was read ahead).
        assert_eq!(progress.estimate(250, 500), Some(1000));

        // Compressed: the file's bytes per byte of text so far scale it.
        let file = scratch("lines.csv.gz", &gzip(&lines));
        let mut source = TextSource::open(&file.0, Some(Compression::Gzip)).unwrap();
        let progress = source.progress();
        source.read_to_end(&mut Vec::new()).unwrap();
        assert_eq!(progress.estimate(250, 500), Some(1000));
    }
}
