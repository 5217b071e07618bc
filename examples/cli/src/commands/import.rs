//! `import`: records from files sent to the service, into a data source
//! (`POST /data-sources/{source}/{collection}`) or, without `--source`,
//! to the upserts of `/data/{collection}` (customers, plans and invoices;
//! a plan group gets its id from the service, so groups go into a data
//! source only), a batch of at most `--batch` records per request, in
//! file order. Each file is read as
//! `local` reads it ([`super::files`]) and sent in the form it was read:
//! JSONL lines as NDJSON (a line that is not JSON is an error naming its
//! file and line, before its batch is sent), Parquet and plain CSV as
//! Arrow IPC streams of the columns `local` builds, other records as JSON
//! arrays. So the service stores what `local` would load from the same
//! files.
//!
//! Each request is one write: an error (an unknown data source, a
//! connection lost) stops the import with what was sent before stored;
//! importing again is safe, as records are upserted by id. Rejected
//! records are printed on stderr as they come back, as `local` prints
//! them; the answer counts what was sent, stored and rejected.

use super::files::{self, Chunk, Records};
use super::places::Places;
use super::record_files::{files_matching, read_once};
use crate::args::{ImportArgs, ImportCollection, not_blank};
use crate::error::{CliError, Result};
use crate::http::{Client, encode};
use arrow_array::RecordBatch;
use serde_json::{Value, json};
use std::path::Path;

const NDJSON: &str = "application/x-ndjson";
const ARROW_STREAM: &str = "application/vnd.apache.arrow.stream";

/// Sends every file's records; answers the counts.
pub fn run(client: &Client, args: ImportArgs) -> Result<Value> {
    let collection = args.collection.name();
    if let Some(source) = &args.source {
        not_blank("--source", source).map_err(CliError::usage)?;
    }
    let mut found = Vec::new();
    for pattern in &args.files {
        found.extend(files_matching("import", pattern)?);
    }
    // A file two patterns name, or names two ways, is sent once, where it
    // is first named.
    let found = read_once(found);
    let file_count = found.len();
    let path = match (&args.source, args.collection) {
        (Some(source), _) => format!("/data-sources/{}/{collection}", encode(source)),
        (None, ImportCollection::PlanGroups) => {
            return Err(CliError::usage(
                "plan groups are imported into a data source: give --source",
            ));
        }
        (None, _) => format!("/data/{collection}"),
    };
    let mut import = Import {
        client,
        path,
        batch: args.batch as usize,
        sent: 0,
        inserted: 0,
        rejected: 0,
    };
    let read = files::read(found, collection).and_then(|files| {
        files
            .into_iter()
            .try_for_each(|(path, records)| import.file(&path, records))
    });
    if let Err(CliError::Usage(text)) = read {
        return Err(CliError::Usage(format!(
            "{text} ({} record(s) sent before)",
            import.sent
        )));
    }
    read?;
    if import.sent == 0 {
        return Err(CliError::usage(format!(
            "{}: no records",
            args.files.join(", ")
        )));
    }
    if import.rejected > 0 && args.strict {
        return Err(CliError::usage(format!(
            "{} record(s) rejected (--strict)",
            import.rejected
        )));
    }
    Ok(json!({
        "source": args.source,
        "collection": collection,
        "files": file_count,
        "records": import.sent,
        "inserted": import.inserted,
        "rejected": import.rejected,
    }))
}

/// An import under way: where it sends and what came back so far.
struct Import<'c> {
    client: &'c Client,
    path: String,
    batch: usize,
    sent: usize,
    inserted: usize,
    rejected: usize,
}

impl Import<'_> {
    /// Sends the records of one file, batch by batch.
    fn file(&mut self, path: &Path, records: Records) -> Result<()> {
        match records {
            Records::Values(values, places) => self.values(path, &values, &places),
            Records::Batches(batches, places) => {
                let mut first = 0;
                for batch in &batches {
                    self.columns(path, batch, &places.from(first))?;
                    first += batch.num_rows();
                }
                Ok(())
            }
            Records::Stream(mut stream) => {
                while let Some(chunk) = stream.next_chunk()? {
                    match chunk {
                        Chunk::Batch(batch, places) => self.columns(path, &batch, &places)?,
                        Chunk::Values(values, places) => self.values(path, &values, &places)?,
                    }
                }
                Ok(())
            }
            Records::LineStream(mut stream) => {
                let mut lines = Lines::default();
                while let Some(block) = stream
                    .next_block()
                    .map_err(|e| CliError::Io(format!("cannot read {}: {e}", path.display())))?
                {
                    for (i, line) in block.text.lines().enumerate() {
                        if line.trim().is_empty() {
                            continue;
                        }
                        if let Err(e) = serde_json::from_str::<serde::de::IgnoredAny>(line) {
                            return Err(files::at_line(path, block.first_line + i, &e.to_string()));
                        }
                        lines.push(line, block.first_line + i);
                        if lines.numbers.len() == self.batch {
                            let (text, places) = lines.take(path);
                            self.send(path, &places, NDJSON, text, self.batch)?;
                        }
                    }
                }
                if !lines.numbers.is_empty() {
                    let count = lines.numbers.len();
                    let (text, places) = lines.take(path);
                    self.send(path, &places, NDJSON, text, count)?;
                }
                Ok(())
            }
        }
    }

    fn values(&mut self, path: &Path, values: &[Value], places: &Places) -> Result<()> {
        for (i, chunk) in values.chunks(self.batch).enumerate() {
            let body = serde_json::to_vec(chunk)
                .map_err(|e| CliError::Io(format!("{}: {e}", path.display())))?;
            let places = places.from(i * self.batch);
            self.send(path, &places, "application/json", body, chunk.len())?;
        }
        Ok(())
    }

    fn columns(&mut self, path: &Path, batch: &RecordBatch, places: &Places) -> Result<()> {
        let rows = batch.num_rows();
        for start in (0..rows).step_by(self.batch) {
            let length = self.batch.min(rows - start);
            let body = submetrics::columnar::ipc_of(&batch.slice(start, length))
                .map_err(|e| CliError::Io(format!("{}: {e}", path.display())))?;
            self.send(path, &places.from(start), ARROW_STREAM, body, length)?;
        }
        Ok(())
    }

    /// Sends one batch of `count` records (at `places` in the file at
    /// `path`) and takes in its results; an error names the file and how
    /// many records were sent before.
    fn send(
        &mut self,
        path: &Path,
        places: &Places,
        content_type: &str,
        body: Vec<u8>,
        count: usize,
    ) -> Result<()> {
        let answer = self
            .client
            .send_bytes("POST", &self.path, content_type, body)
            .map_err(|error| {
                let sent = self.sent;
                let context = |message: String| {
                    format!(
                        "{}: {message} ({sent} record(s) sent before)",
                        path.display()
                    )
                };
                match error {
                    CliError::Server { status, message } => CliError::Server {
                        status,
                        message: context(message),
                    },
                    other => CliError::Io(context(other.to_string())),
                }
            })?;
        // Customers answer `{result: {count, list}}`, the others `{result: [...]}`.
        let results = answer["result"]["list"].as_array();
        let results = results.or(answer["result"].as_array()).ok_or_else(|| {
            CliError::Io(format!(
                "{}: the service answered no results: {answer}",
                path.display()
            ))
        })?;
        for (index, result) in results.iter().enumerate() {
            if result["import_status"] == "inserted" {
                self.inserted += 1;
            } else {
                self.rejected += 1;
                let reason = result["import_error"].as_str().unwrap_or("rejected");
                eprintln!("rejected: {}: {reason}", places.of(index));
            }
        }
        self.sent += count;
        Ok(())
    }
}

/// JSONL lines gathered for one NDJSON body, with their numbers in the
/// file.
#[derive(Default)]
struct Lines {
    text: Vec<u8>,
    numbers: Vec<usize>,
}

impl Lines {
    fn push(&mut self, line: &str, number: usize) {
        self.text.extend_from_slice(line.as_bytes());
        self.text.push(b'\n');
        self.numbers.push(number);
    }

    /// The body, and the places of its records in the file at `path`.
    fn take(&mut self, path: &Path) -> (Vec<u8>, Places) {
        let places = Places::lines(path, std::mem::take(&mut self.numbers));
        (std::mem::take(&mut self.text), places)
    }
}
