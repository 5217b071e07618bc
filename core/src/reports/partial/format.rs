//! The binary form of a partial, to move it between workers.
//!
//! Layout: the 4 magic bytes `SMRP`, the format version as a little-endian
//! `u16` (now [`VERSION`]), then the partial's header and body in the
//! [postcard](https://docs.rs/postcard) encoding (varint integers, strings
//! as length and UTF-8 bytes). Nothing may follow the body. A reader refuses
//! any other magic or version, and truncated or trailing bytes, with
//! [`Error::MalformedPartial`]; it never panics on bad input.

use super::ReportPartial;
use crate::error::{Error, Result};

/// The first bytes of every encoded partial.
pub const MAGIC: &[u8; 4] = b"SMRP";
/// The version of the layout and of the encoded structures.
pub const VERSION: u16 = 1;

impl ReportPartial {
    /// The partial as bytes (see the module doc for the layout).
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(256);
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(&VERSION.to_le_bytes());
        // Encoding into a growing vector fails only on a serializer error,
        // which the derived encodings of the partial's types never raise.
        postcard::to_extend(self, out).unwrap_or_else(|_| MAGIC.to_vec())
    }

    /// Reads bytes written by [`ReportPartial::to_bytes`].
    pub fn from_bytes(bytes: &[u8]) -> Result<ReportPartial> {
        let malformed = |reason: String| Error::MalformedPartial { reason };
        let Some((magic, rest)) = bytes.split_first_chunk::<4>() else {
            return Err(malformed(format!(
                "{} bytes are too few for the {} byte header",
                bytes.len(),
                MAGIC.len() + 2
            )));
        };
        if magic != MAGIC {
            return Err(malformed(
                "the bytes do not start with the magic `SMRP`".to_string(),
            ));
        }
        let Some((version, body)) = rest.split_first_chunk::<2>() else {
            return Err(malformed("the format version is missing".to_string()));
        };
        let version = u16::from_le_bytes(*version);
        if version != VERSION {
            return Err(malformed(format!(
                "format version {version}; this build reads version {VERSION}"
            )));
        }
        let (partial, trailing) = postcard::take_from_bytes::<ReportPartial>(body)
            .map_err(|e| malformed(format!("the body does not decode: {e}")))?;
        if !trailing.is_empty() {
            return Err(malformed(format!(
                "{} bytes follow the body",
                trailing.len()
            )));
        }
        Ok(partial)
    }
}
