//! A collection's files as one stream of chunks into the ledger.

use crate::commands::files::{Chunk, Records};
use crate::commands::jsonl::Block;
use crate::commands::places::Places;
use crate::error::{CliError, Result};
use arrow_array::RecordBatch;
use serde_json::Value;
use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};
use submetrics::model::Json;
use submetrics::{Ledger, RecordKind, WriteReport};

/// Records sent to the ledger per batch (the progress bar moves per batch).
const BATCH: usize = 20_000;

/// One chunk of a collection's records, from whichever of its files it
/// came: a block of JSONL lines, a record batch, or JSON values, with
/// where its records are.
enum Piece {
    Lines(Block, PathBuf),
    Batch(RecordBatch, Places),
    Values(Vec<Value>, Places),
}

/// The chunks of a collection's files, one file after another, so that one
/// load reads the next chunk while the one before is stored across the
/// files' ends (a dataset of many small part files is read as one stream).
pub(super) struct Pieces<'a> {
    files: std::slice::IterMut<'a, (PathBuf, Records)>,
    current: Option<&'a mut Records>,
    /// The chunks of a file read whole, not yet handed out.
    pending: VecDeque<Piece>,
}

impl<'a> Pieces<'a> {
    pub(super) fn new(files: &'a mut [(PathBuf, Records)]) -> Pieces<'a> {
        Pieces {
            files: files.iter_mut(),
            current: None,
            pending: VecDeque::new(),
        }
    }

    /// The next chunk; `None` after the last file's last chunk. An error
    /// names the file (and the line).
    fn next(&mut self) -> Result<Option<Piece>> {
        loop {
            if let Some(piece) = self.pending.pop_front() {
                return Ok(Some(piece));
            }
            let Some(records) = &mut self.current else {
                match self.files.next() {
                    Some((_, records)) => self.current = Some(records),
                    None => return Ok(None),
                }
                continue;
            };
            let piece = match records {
                // Records read whole: every chunk at once, each moved once.
                Records::Values(values, places) => {
                    let mut values = std::mem::take(values).into_iter();
                    let mut first = 0;
                    while values.len() > 0 {
                        let chunk: Vec<Value> = values.by_ref().take(BATCH).collect();
                        let count = chunk.len();
                        self.pending
                            .push_back(Piece::Values(chunk, places.from(first)));
                        first += count;
                    }
                    None
                }
                Records::Batches(batches, places) => {
                    let mut first = 0;
                    for batch in std::mem::take(batches) {
                        let count = batch.num_rows();
                        self.pending
                            .push_back(Piece::Batch(batch, places.from(first)));
                        first += count;
                    }
                    None
                }
                Records::LineStream(stream) => {
                    let path = stream.path().to_path_buf();
                    let block = stream
                        .next_block()
                        .map_err(|e| CliError::usage(format!("{}: {e}", path.display())))?;
                    block.map(|block| Piece::Lines(block, path))
                }
                Records::Stream(stream) => stream.next_chunk()?.map(|chunk| match chunk {
                    Chunk::Batch(batch, places) => Piece::Batch(batch, places),
                    Chunk::Values(values, places) => Piece::Values(values, places),
                }),
            };
            match piece {
                Some(piece) => return Ok(Some(piece)),
                None => self.current = None,
            }
        }
    }

    /// How many records the file being read holds, as far as can be told
    /// from what was read of it.
    fn estimate(&self) -> Option<usize> {
        match self.current.as_deref()? {
            Records::LineStream(stream) => stream.estimate(),
            Records::Stream(stream) => stream.estimate(),
            records => records.len(),
        }
    }
}

impl Piece {
    fn len_hint(&self) -> usize {
        match self {
            Piece::Lines(block, _) => block.records().len(),
            Piece::Batch(batch, _) => batch.num_rows(),
            Piece::Values(values, _) => values.len(),
        }
    }

    /// The block's records parsed; a malformed line is an error naming the
    /// file and the line.
    fn parse_lines<'b>(block: &'b Block, path: &Path) -> Result<Vec<Json<'b>>> {
        block
            .parse()
            .map_err(|(line, e)| crate::commands::files::at_line(path, line, &e.to_string()))
    }

    /// The chunk's invoices read, and their places; a malformed line is
    /// an error naming the file and the line, as for every other kind.
    fn read_invoices(self) -> Result<(submetrics::ReadInvoices, Places)> {
        Ok(match self {
            Piece::Lines(block, path) => {
                let texts = block.records();
                let read = Ledger::read_invoice_texts(&texts);
                // Only a record the engine refused may be malformed.
                for (index, (_, invoice)) in read.iter().enumerate() {
                    if invoice.is_ok() {
                        continue;
                    }
                    if let Err(e) = serde_json::from_str::<serde::de::IgnoredAny>(texts[index]) {
                        let line = block.line_of(index);
                        return Err(crate::commands::files::at_line(&path, line, &e.to_string()));
                    }
                }
                (read, Places::block(&path, block))
            }
            Piece::Batch(batch, places) => (Ledger::read_invoice_batch(&batch)?, places),
            Piece::Values(values, places) => (Ledger::read_invoice_values(&values), places),
        })
    }

    /// The chunk's customers read, and their places.
    fn read_customers(self) -> Result<(submetrics::ReadCustomers, Places)> {
        Ok(match self {
            Piece::Lines(block, path) => {
                let read = Ledger::read_customer_trees(&Piece::parse_lines(&block, &path)?);
                (read, Places::block(&path, block))
            }
            Piece::Batch(batch, places) => (Ledger::read_customer_batch(&batch)?, places),
            Piece::Values(values, places) => (Ledger::read_customer_values(&values), places),
        })
    }

    /// Upserts the chunk's records; answers their results and places.
    fn upsert(self, ledger: &mut Ledger, kind: RecordKind) -> Result<(WriteReport, Places)> {
        Ok(match self {
            Piece::Lines(block, path) => {
                let report = ledger.upsert_trees(kind, &Piece::parse_lines(&block, &path)?);
                (report, Places::block(&path, block))
            }
            Piece::Batch(batch, places) => (ledger.upsert_arrow(kind, &batch)?, places),
            Piece::Values(values, places) => (ledger.upsert(kind, &values), places),
        })
    }
}

/// Loads a collection's chunks of `kind`, passing each chunk's report and
/// the places of its records to `write`. Invoice and customer chunks are
/// read on every core while the chunk before is stored, across the ends of
/// files. A malformed line is an error naming the file and the line.
pub(super) fn load_pieces(
    ledger: &mut Ledger,
    kind: RecordKind,
    mut pieces: Pieces<'_>,
    total: Option<usize>,
    mut write: impl FnMut(WriteReport, &Places) + Send,
) -> Result<()> {
    let Some(first) = pieces.next()? else {
        return Ok(());
    };
    // Room for the records before the first chunk is stored: the count
    // the files state (Parquet), else what the first file's first lines
    // suggest.
    let room = total.or(pieces.estimate()).unwrap_or(first.len_hint());
    match kind {
        RecordKind::Customers => ledger.reserve_customers(room),
        RecordKind::Invoices => ledger.reserve_invoices(room),
        _ => {}
    }
    let mut first = Some(first);
    let mut next = || match first.take() {
        Some(piece) => Ok(Some(piece)),
        None => pieces.next(),
    };
    // The places of the chunks read and not yet stored, in order: a chunk
    // is read while the one before it is stored, and stored chunks report
    // in the order they were read.
    let unstored: Mutex<VecDeque<Places>> = Mutex::new(VecDeque::new());
    let stored = |report: WriteReport| {
        let places = unstored
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .pop_front();
        if let Some(places) = places {
            write(report, &places);
        }
    };
    match kind {
        RecordKind::Invoices => ledger.upsert_invoice_stream(
            || {
                let read = next()?.map(Piece::read_invoices).transpose()?;
                Ok(keep_places(&unstored, read))
            },
            stored,
        ),
        RecordKind::Customers => ledger.upsert_customer_stream(
            || {
                let read = next()?.map(Piece::read_customers).transpose()?;
                Ok(keep_places(&unstored, read))
            },
            stored,
        ),
        _ => {
            while let Some(piece) = next()? {
                let (report, places) = piece.upsert(ledger, kind)?;
                write(report, &places);
            }
            Ok(())
        }
    }
}
/// The records of a chunk just read, its places kept in `unstored` for
/// its report.
fn keep_places<R>(unstored: &Mutex<VecDeque<Places>>, read: Option<(R, Places)>) -> Option<R> {
    read.map(|(records, places)| {
        let mut unstored = unstored.lock().unwrap_or_else(PoisonError::into_inner);
        unstored.push_back(places);
        records
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::{ArrayRef, Int64Array};
    use std::sync::Arc;

    fn batch(rows: i64) -> RecordBatch {
        let column: ArrayRef = Arc::new(Int64Array::from_iter_values(0..rows));
        RecordBatch::try_from_iter([("amount", column)]).unwrap()
    }

    #[test]
    fn pieces_hand_out_every_files_chunks_in_order() {
        let values: Vec<Value> = (0..45_000).map(Value::from).collect();
        let mut files = vec![
            (
                PathBuf::from("a.json"),
                Records::Values(values, Places::records(Path::new("a.json"), 1)),
            ),
            (
                PathBuf::from("b.json"),
                Records::Values(Vec::new(), Places::records(Path::new("b.json"), 1)),
            ),
            (
                PathBuf::from("c.csv"),
                Records::Batches(
                    vec![batch(3), batch(2)],
                    Places::lines(Path::new("c.csv"), vec![2, 3, 5, 6, 9]),
                ),
            ),
        ];
        let mut pieces = Pieces::new(&mut files);
        let mut seen = Vec::new();
        while let Some(piece) = pieces.next().unwrap() {
            let (first, place) = match &piece {
                Piece::Values(values, places) => (values[0].as_i64().unwrap(), places.of(0)),
                Piece::Batch(batch, places) => (-(batch.num_rows() as i64), places.of(1)),
                Piece::Lines(..) => unreachable!("no JSONL file"),
            };
            seen.push((piece.len_hint(), first, place));
        }
        let seen: Vec<(usize, i64, &str)> = seen
            .iter()
            .map(|(len, first, place)| (*len, *first, place.as_str()))
            .collect();
        assert_eq!(
            seen,
            [
                (20_000, 0, "a.json record 1"),
                (20_000, 20_000, "a.json record 20001"),
                (5_000, 40_000, "a.json record 40001"),
                (3, -3, "c.csv line 3"),
                (2, -2, "c.csv line 9")
            ]
        );
    }
}
