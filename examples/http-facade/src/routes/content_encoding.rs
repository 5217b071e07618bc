//! Request bodies sent compressed: `Content-Encoding: gzip` (or `x-gzip`)
//! and `zstd` are decompressed before a route reads the body, so a bulk
//! import travels at a fraction of its size; `identity`, or no header, is the
//! body as it is. Any other coding, or more than one, is a `415` naming it.
//! The body limit holds for the compressed body as sent and again for the
//! decompressed one, so a small body that inflates past it is a `413`.

use crate::error::ApiError;
use axum::body::Bytes;
use axum::http::HeaderMap;
use std::io::Read;

/// A content coding the service decompresses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Coding {
    Gzip,
    Zstd,
}

impl Coding {
    fn name(self) -> &'static str {
        match self {
            Coding::Gzip => "gzip",
            Coding::Zstd => "zstd",
        }
    }
}

/// The coding `headers` declare for the body: `None` for none or
/// `identity` (codings are case-insensitive; `identity` entries in a list
/// count for nothing). Read before the body, so an unsupported coding is
/// refused without reading it.
pub fn coding(headers: &HeaderMap) -> Result<Option<Coding>, ApiError> {
    let unsupported = |named: &str| ApiError::UnsupportedMediaType {
        header: "Content-Encoding",
        message: format!(
            "Content-Encoding `{named}` is not supported; send the body as it is, or as gzip or zstd"
        ),
    };
    let mut codings = Vec::new();
    for value in headers.get_all(axum::http::header::CONTENT_ENCODING) {
        let value = value
            .to_str()
            .map_err(|_| unsupported(&String::from_utf8_lossy(value.as_bytes())))?;
        for named in value.split(',').map(str::trim).filter(|n| !n.is_empty()) {
            match named.to_ascii_lowercase().as_str() {
                "identity" => {}
                "gzip" | "x-gzip" => codings.push(Coding::Gzip),
                "zstd" => codings.push(Coding::Zstd),
                _ => return Err(unsupported(named)),
            }
        }
    }
    match codings.as_slice() {
        [] => Ok(None),
        [one] => Ok(Some(*one)),
        _ => Err(unsupported(value_list(headers).as_str())),
    }
}

fn value_list(headers: &HeaderMap) -> String {
    let values: Vec<String> = headers
        .get_all(axum::http::header::CONTENT_ENCODING)
        .iter()
        .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned())
        .collect();
    values.join(", ")
}

/// The body as the route reads it: decompressed as `coding` says, at most
/// `limit` bytes once decompressed. Decompressing is CPU work, so it runs
/// off the async workers.
pub async fn decoded(coding: Option<Coding>, body: Bytes, limit: usize) -> Result<Bytes, ApiError> {
    let Some(coding) = coding else {
        return Ok(body);
    };
    tokio::task::spawn_blocking(move || decompress(coding, &body, limit))
        .await
        .map_err(|e| ApiError::internal(format!("decompressing the body: {e}")))?
}

fn decompress(coding: Coding, body: &[u8], limit: usize) -> Result<Bytes, ApiError> {
    let reader: Box<dyn Read> = match coding {
        Coding::Gzip => Box::new(flate2::read::MultiGzDecoder::new(body)),
        Coding::Zstd => {
            Box::new(zstd::stream::read::Decoder::new(body).map_err(|e| not_coded(coding, &e))?)
        }
    };
    let mut decoded = Vec::new();
    // One byte past the limit tells a body at the limit from one over it.
    reader
        .take(limit as u64 + 1)
        .read_to_end(&mut decoded)
        .map_err(|e| not_coded(coding, &e))?;
    if decoded.len() > limit {
        return Err(ApiError::TooLarge(format!(
            "the body is over the limit of {limit} bytes once decompressed ({})",
            coding.name()
        )));
    }
    Ok(Bytes::from(decoded))
}

fn not_coded(coding: Coding, error: &std::io::Error) -> ApiError {
    ApiError::bad_request(format!(
        "the body is not valid {} (Content-Encoding): {error}",
        coding.name()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;
    use std::io::Write;

    fn headers(values: &[&str]) -> HeaderMap {
        let mut headers = HeaderMap::new();
        for value in values {
            headers.append(
                axum::http::header::CONTENT_ENCODING,
                HeaderValue::from_str(value).unwrap(),
            );
        }
        headers
    }

    fn gzip(bytes: &[u8]) -> Vec<u8> {
        let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        encoder.write_all(bytes).unwrap();
        encoder.finish().unwrap()
    }

    #[test]
    fn codings_are_read_case_insensitively_and_identity_counts_for_nothing() {
        assert_eq!(coding(&headers(&[])).unwrap(), None);
        assert_eq!(coding(&headers(&["identity"])).unwrap(), None);
        assert_eq!(coding(&headers(&["GZip"])).unwrap(), Some(Coding::Gzip));
        assert_eq!(coding(&headers(&["x-gzip"])).unwrap(), Some(Coding::Gzip));
        assert_eq!(
            coding(&headers(&["identity, zstd"])).unwrap(),
            Some(Coding::Zstd)
        );
        let refused = |values: &[&str]| {
            let error = coding(&headers(values)).unwrap_err();
            (error.status().as_u16(), error.to_string())
        };
        assert_eq!(
            refused(&["br"]),
            (
                415,
                "Content-Encoding `br` is not supported; send the body as it is, or as gzip or zstd"
                    .to_string()
            )
        );
        assert_eq!(
            refused(&["gzip", "zstd"]).1,
            "Content-Encoding `gzip, zstd` is not supported; send the body as it is, or as gzip or zstd"
        );
    }

    #[test]
    fn bodies_decompress_up_to_the_limit() {
        let text = b"{\"id\": \"a\"}\n".repeat(100);
        assert_eq!(
            decompress(Coding::Gzip, &gzip(&text), text.len()).unwrap(),
            &text[..]
        );
        let zstd = zstd::encode_all(&text[..], 0).unwrap();
        assert_eq!(
            decompress(Coding::Zstd, &zstd, text.len()).unwrap(),
            &text[..]
        );
        let over = decompress(Coding::Zstd, &zstd, text.len() - 1).unwrap_err();
        assert_eq!(over.status().as_u16(), 413);
        assert_eq!(
            over.to_string(),
            "the body is over the limit of 1199 bytes once decompressed (zstd)"
        );
        let broken = decompress(Coding::Gzip, b"plain text", 100).unwrap_err();
        assert_eq!(
            (broken.status().as_u16(), broken.to_string()),
            (
                400,
                "the body is not valid gzip (Content-Encoding): invalid gzip header".to_string()
            )
        );
    }
}
