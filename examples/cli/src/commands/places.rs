//! Where the records of a chunk are in their file, so that a rejected
//! record is named by its file and its place there, counted from 1 as
//! editors and spreadsheets count: the line it starts on in a JSONL or CSV
//! file (a CSV file's header is line 1), its row in a Parquet file, its
//! place among the records of a JSON file (`record 3`).

use super::csv_text::{LineBreaks, RowStart};
use super::jsonl::Block;
use super::record_files::RecordFile;
use super::text_source::TextSource;
use std::io::BufRead;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

/// The places of a run of records of one file, in order.
#[derive(Clone)]
pub struct Places {
    path: Arc<PathBuf>,
    at: At,
    /// The place of the run's first record among `at`'s.
    start: usize,
}

#[derive(Clone)]
enum At {
    /// Record `i` starts on line `lines[i]`.
    Lines(Arc<[usize]>),
    /// The records of a block of JSONL lines, whose lines are counted only
    /// when a record is rejected.
    Block(Arc<(Block, OnceLock<Vec<usize>>)>),
    /// CSV rows read as a stream: where each starts, and the file read
    /// again for their lines (only for a record that is rejected).
    CsvRows(Arc<[RowStart]>, Arc<Mutex<LineCursor>>),
    /// Record `i` is the Parquet row `first + i`.
    Rows { first: usize },
    /// Record `i` is the JSON file's record `first + i`.
    Records { first: usize },
}

impl Places {
    /// Records on the given lines.
    pub fn lines(path: &Path, lines: Vec<usize>) -> Places {
        Places::new(path, At::Lines(lines.into()))
    }

    /// The records of a block of JSONL lines.
    pub fn block(path: &Path, block: Block) -> Places {
        Places::new(path, At::Block(Arc::new((block, OnceLock::new()))))
    }

    /// CSV rows starting at `starts` in `cursor`'s file.
    pub fn csv_rows(path: &Path, starts: Vec<RowStart>, cursor: Arc<Mutex<LineCursor>>) -> Places {
        Places::new(path, At::CsvRows(starts.into(), cursor))
    }

    /// Parquet rows from row `first` on.
    pub fn rows(path: &Path, first: usize) -> Places {
        Places::new(path, At::Rows { first })
    }

    /// A JSON file's records from its record `first` on.
    pub fn records(path: &Path, first: usize) -> Places {
        Places::new(path, At::Records { first })
    }

    fn new(path: &Path, at: At) -> Places {
        Places {
            path: Arc::new(path.to_path_buf()),
            at,
            start: 0,
        }
    }

    /// The places of the records from this run's record `offset` on.
    pub fn from(&self, offset: usize) -> Places {
        Places {
            start: self.start + offset,
            ..self.clone()
        }
    }

    /// The file and place of the run's record `index`, as
    /// `invoices.csv line 8`.
    pub fn of(&self, index: usize) -> String {
        let i = self.start + index;
        let place = match &self.at {
            At::Lines(lines) => lines.get(i).map(|line| format!("line {line}")),
            At::Block(block) => {
                let (block, lines) = &**block;
                let lines = lines.get_or_init(|| block.record_lines());
                lines.get(i).map(|line| format!("line {line}"))
            }
            At::CsvRows(starts, cursor) => starts.get(i).map(|start| {
                let line = cursor
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .line_of(*start);
                format!("line {line}")
            }),
            At::Rows { first } => Some(format!("row {}", first + i)),
            At::Records { first } => Some(format!("record {}", first + i)),
        };
        match place {
            Some(place) => format!("{} {place}", self.path.display()),
            None => self.path.display().to_string(),
        }
    }
}

/// Finds the lines CSV rows start on by reading their file again, forward
/// from the row found last: the rows of a stream come in file order, so
/// every row of a file costs one more read of it at most, and a file none
/// of whose rows is asked for is not read again.
pub struct LineCursor {
    file: RecordFile,
    text: Option<std::io::BufReader<TextSource>>,
    /// The byte the text is read up to, and the line it is on.
    byte: u64,
    line: usize,
    breaks: LineBreaks,
}

impl LineCursor {
    /// A cursor at the start of `file`.
    pub fn new(file: &RecordFile) -> LineCursor {
        LineCursor {
            file: file.clone(),
            text: None,
            byte: 0,
            line: 1,
            breaks: LineBreaks::default(),
        }
    }

    /// The line the row at `start` starts on; the line the CSV reader
    /// counted when the file cannot be read again, 0 when it gave none.
    pub fn line_of(&mut self, start: RowStart) -> usize {
        if !start.is_known() {
            return 0;
        }
        if self.text.is_none() || start.byte() < self.byte {
            let Ok(source) = TextSource::open(&self.file.path, self.file.compression) else {
                return start.line_counted();
            };
            self.text = Some(std::io::BufReader::new(source));
            (self.byte, self.line, self.breaks) = (0, 1, LineBreaks::default());
        }
        let Some(text) = self.text.as_mut() else {
            return start.line_counted();
        };
        while self.byte < start.byte() {
            let Ok(buffer) = text.fill_buf() else {
                return start.line_counted();
            };
            if buffer.is_empty() {
                break;
            }
            let take = buffer
                .len()
                .min(usize::try_from(start.byte() - self.byte).unwrap_or(usize::MAX));
            self.line += self.breaks.count(&buffer[..take]);
            text.consume(take);
            self.byte += take as u64;
        }
        // The row's start may fall before the line breaks ending the row
        // before it (see `RowStart`); the row starts after them.
        let breaks = text.fill_buf().map_or(0, |rest| self.breaks.leading(rest));
        self.line + breaks
    }
}
