//! Arrow IPC streams (the streaming format): reading the bytes of an HTTP
//! body or a Node buffer into record batches, and writing batches.
//!
//! Nothing a stream states about its own lengths is trusted past its bytes.
//! The arrow crate's reader allocates what a message claims before reading
//! it, and its buffer decompression what a buffer claims (LZ4 even more
//! when the data decompresses to more), and an allocation that fails aborts
//! the process: a few hundred bytes could take a server down. So messages
//! are decoded from the bytes as they are, each a slice of them, and every
//! compressed buffer is checked first, decoded once into nothing: it
//! decompresses to exactly the length it states, and all of a stream's to
//! at most a limit. Plain buffers, what pyarrow, Polars and apache-arrow
//! write unless asked, cost the check a walk over the messages. Every
//! buffer must lie inside its message, and what the reader still panics on
//! (a type it does not know, a bitmap shorter than its column) is caught:
//! a malformed stream is an error, never a panic that ends a Node process
//! or a `500`.

use crate::error::{Error, Result};
use arrow_array::RecordBatch;
use arrow_ipc::{CompressionType, MessageHeader};
use arrow_schema::Schema;
use std::io::Read;

/// The most the compressed buffers of one stream may decompress to,
/// together, where the caller has no lower limit of its own (the Node
/// binding): far above a batch of records, and an allocation a machine can
/// make.
pub const IPC_DECOMPRESSED_LIMIT: u64 = 4 << 30;

/// The record batches of an Arrow IPC stream (as `apache-arrow`'s
/// `tableToIPC` and pyarrow's `ipc.new_stream` write it), its buffers plain
/// or compressed (LZ4 frames or Zstandard, as pyarrow and Polars write them
/// on request) to at most `max_decompressed` bytes together. Bytes that are
/// not such a stream are an error naming the problem; so is a stream that
/// ends inside a message, whose message or buffer claims more than it
/// holds, or that the arrow reader cannot make sense of.
pub fn batches_from_ipc(bytes: &[u8], max_decompressed: u64) -> Result<Vec<RecordBatch>> {
    let bad =
        |reason: String| Error::query("body", format!("is not an Arrow IPC stream: {reason}"));
    if bytes.starts_with(IPC_FILE_MAGIC) {
        return Err(bad(FILE_NOT_STREAM.to_string()));
    }
    check_buffers(bytes, max_decompressed).map_err(bad)?;
    // The arrow reader panics on some malformed streams (a type it does not
    // know, a validity bitmap shorter than its column): those are the
    // stream's fault, so a panic while decoding is the same error. The
    // decoder and the batches are local, so nothing is left half-changed.
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| decode(bytes)))
        .unwrap_or_else(|panic| Err(format!("it is malformed ({})", panic_message(&*panic))))
        .map_err(bad)
}

/// How an Arrow IPC file (Feather 2) starts: the stream format with a
/// footer, which a stream reader cannot read.
const IPC_FILE_MAGIC: &[u8] = b"ARROW1";

const FILE_NOT_STREAM: &str = "it is an Arrow IPC file (Feather); send the stream format \
     (apache-arrow's tableToIPC(table, 'stream'), pyarrow's ipc.new_stream)";

/// The batches of a stream whose buffers [`check_buffers`] passed.
fn decode(bytes: &[u8]) -> std::result::Result<Vec<RecordBatch>, String> {
    let mut stream = arrow_buffer::Buffer::from(bytes);
    let mut decoder = arrow_ipc::reader::StreamDecoder::new();
    let mut batches = Vec::new();
    while let Some(batch) = decoder.decode(&mut stream).map_err(|e| e.to_string())? {
        batches.push(batch);
    }
    decoder
        .finish()
        .map_err(|_| "it ends inside a message".to_string())?;
    if decoder.schema().is_none() {
        return Err("it holds no schema".into());
    }
    Ok(batches)
}

/// The text a panic was raised with, when it has one.
fn panic_message(panic: &(dyn std::any::Any + Send)) -> &str {
    panic
        .downcast_ref::<String>()
        .map(String::as_str)
        .or_else(|| panic.downcast_ref::<&str>().copied())
        .unwrap_or("the arrow reader failed")
}

/// A record batch as an Arrow IPC stream.
pub fn ipc_of(batch: &RecordBatch) -> Result<Vec<u8>> {
    ipc_of_batches(&batch.schema(), std::slice::from_ref(batch))
}

/// Record batches of one schema as an Arrow IPC stream (no batch: a
/// stream of the schema alone).
pub fn ipc_of_batches(schema: &Schema, batches: &[RecordBatch]) -> Result<Vec<u8>> {
    let bad = |error: arrow_schema::ArrowError| Error::query("body", error.to_string());
    let mut bytes = Vec::new();
    let mut writer = arrow_ipc::writer::StreamWriter::try_new(&mut bytes, schema).map_err(bad)?;
    for batch in batches {
        writer.write(batch).map_err(bad)?;
    }
    writer.finish().map_err(bad)?;
    drop(writer);
    Ok(bytes)
}

/// The whole messages of a stream in order, each with its body: a marker
/// (optional in the older format), the metadata's length, the metadata and
/// the body it states. The walk ends at the end-of-stream marker, or before
/// a message that is cut short or unreadable, which the decoder refuses.
fn messages(bytes: &[u8]) -> impl Iterator<Item = (arrow_ipc::Message<'_>, &[u8])> {
    let mut at = 0;
    std::iter::from_fn(move || {
        let word = |at: usize| Some(u32::from_le_bytes(bytes.get(at..at + 4)?.try_into().ok()?));
        let mut length = word(at)?;
        at += 4;
        if length == u32::MAX {
            length = word(at)?;
            at += 4;
        }
        if length == 0 {
            return None;
        }
        let metadata = bytes.get(at..at.checked_add(length as usize)?)?;
        let message = arrow_ipc::root_as_message(metadata).ok()?;
        let body_at = at + metadata.len();
        let body_length = usize::try_from(message.bodyLength()).ok()?;
        let body = bytes.get(body_at..body_at.checked_add(body_length)?)?;
        at = body_at + body.len();
        Some((message, body))
    })
}

/// Checks every buffer of the stream's batches and dictionaries: it lies
/// inside its message's body. A compressed one also starts with the 8-byte
/// length its data decompresses to (-1: stored as it is), its data
/// decompresses to exactly that, and all of them together to at most
/// `limit` bytes.
fn check_buffers(bytes: &[u8], limit: u64) -> std::result::Result<(), String> {
    let mut total: u64 = 0;
    for (message, body) in messages(bytes) {
        let batch = match message.header_type() {
            MessageHeader::RecordBatch => message.header_as_record_batch(),
            MessageHeader::DictionaryBatch => message
                .header_as_dictionary_batch()
                .and_then(|dictionary| dictionary.data()),
            _ => None,
        };
        let Some(batch) = batch else {
            continue;
        };
        let compression = batch.compression();
        for buffer in batch.buffers().into_iter().flatten() {
            let data = usize::try_from(buffer.offset())
                .ok()
                .zip(usize::try_from(buffer.length()).ok())
                .and_then(|(offset, length)| body.get(offset..offset.checked_add(length)?))
                .ok_or("a buffer lies outside its message")?;
            let Some(compression) = compression.filter(|_| !data.is_empty()) else {
                continue;
            };
            let (stated, compressed) = data
                .split_first_chunk::<8>()
                .ok_or("a compressed buffer is shorter than its stated length")?;
            let stated = i64::from_le_bytes(*stated);
            if stated == -1 {
                continue;
            }
            let stated = u64::try_from(stated)
                .map_err(|_| format!("a buffer states a negative length, {stated}"))?;
            total = total.saturating_add(stated);
            if total > limit {
                return Err(format!("its buffers decompress to more than {limit} bytes"));
            }
            let actual = decompressed_length(compression.codec(), compressed, stated)?;
            if actual != stated {
                return Err(format!(
                    "a buffer decompresses to {} bytes, not the {stated} it states",
                    if actual > stated {
                        "more".to_string()
                    } else {
                        actual.to_string()
                    }
                ));
            }
        }
    }
    Ok(())
}

/// How many bytes `data` decompresses to with `codec`, counted without
/// keeping them and never past `stated + 1`. A stated length of 0 is an
/// empty buffer whatever follows, as the arrow reader takes it.
fn decompressed_length(
    codec: CompressionType,
    data: &[u8],
    stated: u64,
) -> std::result::Result<u64, String> {
    if stated == 0 {
        return Ok(0);
    }
    let bound = stated + 1;
    let counted = match codec {
        CompressionType::LZ4_FRAME => std::io::copy(
            &mut lz4_flex::frame::FrameDecoder::new(data).take(bound),
            &mut std::io::sink(),
        ),
        CompressionType::ZSTD => zstd::stream::read::Decoder::with_buffer(data)
            .and_then(|decoder| std::io::copy(&mut decoder.take(bound), &mut std::io::sink())),
        other => {
            return Err(format!(
                "a buffer is compressed with {other:?}, which is unknown"
            ));
        }
    };
    counted.map_err(|e| format!("a buffer does not decompress: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::RecordKind;
    use crate::columnar::batch_of_rows;
    use arrow_ipc::writer::{IpcWriteOptions, StreamWriter};
    use serde_json::json;

    fn batch() -> RecordBatch {
        batch_of_rows(&[json!({"id": "a", "n": 1}), json!({"id": "b", "n": 2})]).unwrap()
    }

    fn read(bytes: &[u8]) -> Result<Vec<RecordBatch>> {
        batches_from_ipc(bytes, IPC_DECOMPRESSED_LIMIT)
    }

    #[track_caller]
    fn error(bytes: &[u8], limit: u64) -> String {
        batches_from_ipc(bytes, limit).unwrap_err().to_string()
    }

    fn compressed(batch: &RecordBatch, compression: CompressionType) -> Vec<u8> {
        let options = IpcWriteOptions::default()
            .try_with_compression(Some(compression))
            .unwrap();
        let mut bytes = Vec::new();
        let mut writer =
            StreamWriter::try_new_with_options(&mut bytes, &batch.schema(), options).unwrap();
        writer.write(batch).unwrap();
        writer.finish().unwrap();
        drop(writer);
        bytes
    }

    /// Where the stated lengths of the batch's compressed buffers are in
    /// `bytes`, in buffer order.
    fn stated_lengths_at(bytes: &[u8]) -> Vec<usize> {
        let mut at = Vec::new();
        for (message, body) in messages(bytes) {
            let Some(batch) = message.header_as_record_batch() else {
                continue;
            };
            let body_at = body.as_ptr() as usize - bytes.as_ptr() as usize;
            for buffer in batch.buffers().into_iter().flatten() {
                if buffer.length() > 0 {
                    at.push(body_at + buffer.offset() as usize);
                }
            }
        }
        at
    }

    #[test]
    fn ipc_streams_round_trip() {
        let batch = batch();
        let bytes = ipc_of(&batch).unwrap();
        assert_eq!(read(&bytes).unwrap(), [batch]);
        let cut = "parameter `body`: is not an Arrow IPC stream: it ends inside a message";
        assert_eq!(error(b"nope", IPC_DECOMPRESSED_LIMIT), cut);
        assert_eq!(
            error(b"", IPC_DECOMPRESSED_LIMIT),
            "parameter `body`: is not an Arrow IPC stream: it holds no schema"
        );
    }

    /// An IPC file (what Feather and `tableToIPC(table, 'file')` write) is
    /// named as such, not as a stream cut short.
    #[test]
    fn an_ipc_file_is_named_as_one() {
        let batch = batch();
        let mut file = Vec::new();
        let mut writer =
            arrow_ipc::writer::FileWriter::try_new(&mut file, batch.schema_ref()).unwrap();
        writer.write(&batch).unwrap();
        writer.finish().unwrap();
        drop(writer);
        assert_eq!(
            error(&file, IPC_DECOMPRESSED_LIMIT),
            format!("parameter `body`: is not an Arrow IPC stream: {FILE_NOT_STREAM}")
        );
    }

    /// A stream's own lengths are never trusted past its bytes: a message
    /// that claims more than the stream holds is an error, not an
    /// allocation of what it claims (2 GB of metadata here, a petabyte of
    /// body below, which used to abort the process).
    #[test]
    fn message_lengths_beyond_the_stream_are_an_error() {
        let cut = "parameter `body`: is not an Arrow IPC stream: it ends inside a message";
        let huge_metadata = [0xFF, 0xFF, 0xFF, 0xFF, 0xF0, 0xFF, 0xFF, 0x7F, 1, 2, 3];
        assert_eq!(error(&huge_metadata, IPC_DECOMPRESSED_LIMIT), cut);
        let huge_body = crate::testing::ipc_stream_claiming_body(1 << 50);
        assert_eq!(error(&huge_body, IPC_DECOMPRESSED_LIMIT), cut);
    }

    /// A buffer must lie inside its message's body, and a stream the arrow
    /// reader panics on (here a validity bitmap shorter than its column) is
    /// the same error as any other malformed stream, not a panic.
    #[test]
    fn malformed_buffers_are_an_error() {
        let prefix = "parameter `body`: is not an Arrow IPC stream: ";
        let stream = crate::testing::ipc_stream_with_buffer_at;
        assert_eq!(
            error(&stream(4, 1 << 40, 16), IPC_DECOMPRESSED_LIMIT),
            format!("{prefix}a buffer lies outside its message")
        );
        assert_eq!(
            error(&stream(4, 0, 1 << 20), IPC_DECOMPRESSED_LIMIT),
            format!("{prefix}a buffer lies outside its message")
        );
        assert_eq!(
            error(&stream(3, 0, 0), IPC_DECOMPRESSED_LIMIT),
            format!(
                "{prefix}it is malformed (buffer not large enough (bit_offset: 0, bit_len: 2, buffer_len: 0))"
            )
        );
    }

    #[test]
    fn compressed_ipc_streams_are_read() {
        let batch = batch();
        for compression in [CompressionType::LZ4_FRAME, CompressionType::ZSTD] {
            let bytes = compressed(&batch, compression);
            assert_ne!(bytes, ipc_of(&batch).unwrap(), "{compression:?}");
            assert_eq!(read(&bytes).unwrap(), std::slice::from_ref(&batch));
        }
    }

    /// A compressed buffer decompresses to exactly the length it states,
    /// and a stream's buffers together to at most the limit: a buffer
    /// claiming a petabyte (which used to abort the process) or a few bytes
    /// (LZ4 used to decompress past it, as far as the data goes) is an
    /// error, and so is a stream over the limit.
    #[test]
    fn compressed_buffers_are_held_to_their_stated_lengths_and_the_limit() {
        let ids: Vec<String> = (0..1000).map(|i| format!("{i:0>40}")).collect();
        let rows: Vec<serde_json::Value> = ids.iter().map(|id| json!({"id": id})).collect();
        let batch = batch_of_rows(&rows).unwrap();
        let prefix = "parameter `body`: is not an Arrow IPC stream: ";
        for compression in [CompressionType::LZ4_FRAME, CompressionType::ZSTD] {
            let bytes = compressed(&batch, compression);
            // The id column's offsets, then its text (40,000 bytes).
            let at = stated_lengths_at(&bytes);
            assert_eq!(at.len(), 2, "{compression:?}");
            let text_at = at[1];
            let stated =
                |bytes: &[u8]| i64::from_le_bytes(bytes[text_at..text_at + 8].try_into().unwrap());
            assert_eq!(stated(&bytes), 40_000);
            let with_stated = |length: i64| {
                let mut patched = bytes.clone();
                patched[text_at..text_at + 8].copy_from_slice(&length.to_le_bytes());
                patched
            };
            assert_eq!(
                error(&with_stated(1 << 50), IPC_DECOMPRESSED_LIMIT),
                format!("{prefix}its buffers decompress to more than 4294967296 bytes")
            );
            assert_eq!(
                error(&with_stated(100), IPC_DECOMPRESSED_LIMIT),
                format!("{prefix}a buffer decompresses to more bytes, not the 100 it states")
            );
            assert_eq!(
                error(&with_stated(50_000), IPC_DECOMPRESSED_LIMIT),
                format!("{prefix}a buffer decompresses to 40000 bytes, not the 50000 it states")
            );
            assert_eq!(
                error(&with_stated(-2), IPC_DECOMPRESSED_LIMIT),
                format!("{prefix}a buffer states a negative length, -2")
            );
            let total: u64 = at
                .iter()
                .map(|&i| i64::from_le_bytes(bytes[i..i + 8].try_into().unwrap()))
                .map(|length| if length == -1 { 0 } else { length as u64 })
                .sum();
            // LZ4 leaves the offsets (4,004 bytes) as they are, Zstandard
            // compresses them too.
            let expected = if compression == CompressionType::LZ4_FRAME {
                40_000
            } else {
                44_004
            };
            assert_eq!(total, expected, "{compression:?}");
            assert_eq!(
                error(&bytes, total - 1),
                format!(
                    "{prefix}its buffers decompress to more than {} bytes",
                    total - 1
                )
            );
            assert_eq!(
                batches_from_ipc(&bytes, total).unwrap(),
                std::slice::from_ref(&batch)
            );
        }
    }

    /// Streams of invoices with a null, a date and a dictionary column,
    /// plain and compressed each way, as mutation starts.
    fn invoice_streams() -> Vec<Vec<u8>> {
        let rows = [
            json!({"id": "i1", "customer_id": "c1", "type": "subscription",
                   "invoice_date": "2024-01-05", "amount": 100, "currency": "USD",
                   "plan_id": "p1"}),
            json!({"id": "i2", "customer_id": "c1", "type": "refund",
                   "invoice_date": "2024-02-05", "currency": "EUR"}),
        ];
        let batch = batch_of_rows(&rows).unwrap();
        vec![
            ipc_of(&batch).unwrap(),
            compressed(&batch, CompressionType::LZ4_FRAME),
            compressed(&batch, CompressionType::ZSTD),
        ]
    }

    proptest::proptest! {
        /// Whatever bytes of a stream are changed or cut, reading it is a
        /// value or an error, never a panic, and so is storing what it
        /// gives as records of every kind.
        #[test]
        fn a_changed_stream_is_read_or_refused(
            start in 0usize..3,
            changes in proptest::collection::vec((0.0f64..1.0, 0u8..=255, 0u8..4), 1..5),
        ) {
            let mut bytes = invoice_streams().swap_remove(start);
            for (at, value, how) in changes {
                let k = ((bytes.len() as f64) * at) as usize;
                match how {
                    0 => bytes[k] ^= 1 << (value % 8),
                    1 => bytes[k] = value,
                    2 => bytes[k] = [0, 0xff, 0x7f, 0x80][usize::from(value % 4)],
                    _ => bytes.truncate(k.max(1)),
                }
            }
            if let Ok(batches) = read(&bytes) {
                let mut ledger = crate::Ledger::new(crate::Settings::default());
                for kind in [RecordKind::Plans, RecordKind::Customers, RecordKind::Invoices] {
                    let _ = ledger.upsert_arrow_batches(kind, &batches);
                }
            }
        }
    }
}
