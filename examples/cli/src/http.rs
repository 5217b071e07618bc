//! The HTTP client: JSON in and out, the key in the Authorization header,
//! `--verbose` traffic on stderr with the key masked.

use crate::error::{CliError, Result};
use serde_json::Value;

pub struct Client {
    base: String,
    key: Option<String>,
    verbose: bool,
    agent: ureq::Agent,
}

/// Percent-encodes a query value or path segment.
pub fn encode(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// The largest answer read (decompressed, when the service sends it
/// gzip-compressed, which the client asks for): far above any the service
/// gives, so a large export is read whole, never cut.
const MAX_ANSWER_BYTES: u64 = 4 << 30;

/// A key as `--verbose` shows it: its first 3 and last 2 characters (not
/// bytes: a key may hold any text), or `***` when that would show most of it.
fn mask(key: &str) -> String {
    let chars: Vec<char> = key.chars().collect();
    if chars.len() > 6 {
        let head: String = chars[..3].iter().collect();
        let tail: String = chars[chars.len() - 2..].iter().collect();
        format!("{head}...{tail}")
    } else {
        "***".to_string()
    }
}

impl Client {
    pub fn new(base: String, key: Option<String>, verbose: bool) -> Client {
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .build()
            .into();
        Client {
            base: base.trim_end_matches('/').to_string(),
            key,
            verbose,
            agent,
        }
    }

    fn masked_key(&self) -> String {
        match &self.key {
            Some(key) => mask(key),
            None => "(none)".to_string(),
        }
    }

    /// Sends a request with a JSON body; a non-2xx answer is an error with
    /// the server's text.
    pub fn send(
        &self,
        method: &str,
        path: &str,
        query: &[(String, String)],
        body: Option<&Value>,
    ) -> Result<Value> {
        let payload = body.map(|b| b.to_string()).unwrap_or_default();
        let shown = body.map(Value::to_string);
        self.send_payload(
            method,
            path,
            query,
            "application/json",
            payload.into_bytes(),
            shown,
        )
    }

    /// Sends `payload` under `content_type` (`--verbose` shows its size,
    /// not its bytes); answers as [`Client::send`].
    pub fn send_bytes(
        &self,
        method: &str,
        path: &str,
        content_type: &str,
        payload: Vec<u8>,
    ) -> Result<Value> {
        let shown = format!("({} bytes of {content_type})", payload.len());
        self.send_payload(method, path, &[], content_type, payload, Some(shown))
    }

    fn send_payload(
        &self,
        method: &str,
        path: &str,
        query: &[(String, String)],
        content_type: &str,
        payload: Vec<u8>,
        shown: Option<String>,
    ) -> Result<Value> {
        let mut url = format!("{}{}", self.base, path);
        if !query.is_empty() {
            let pairs: Vec<String> = query
                .iter()
                .map(|(k, v)| format!("{}={}", encode(k), encode(v)))
                .collect();
            url = format!("{url}?{}", pairs.join("&"));
        }
        if self.verbose {
            eprintln!("> {method} {url}");
            eprintln!("> Authorization: Bearer {}", self.masked_key());
            if let Some(shown) = shown {
                eprintln!("> {shown}");
            }
        }
        let mut request = ureq::http::Request::builder().method(method).uri(&url);
        if let Some(key) = &self.key {
            request = request.header("Authorization", format!("Bearer {key}"));
        }
        let request = request
            .header("Content-Type", content_type)
            .body(payload)
            .map_err(|e| CliError::usage(format!("bad request {method} {url}: {e}")))?;
        let mut response = self.agent.run(request).map_err(|e| CliError::Connection {
            url: self.base.clone(),
            reason: e.to_string(),
        })?;
        let status = response.status().as_u16();
        let text = response
            .body_mut()
            .with_config()
            .limit(MAX_ANSWER_BYTES)
            .read_to_string()
            .map_err(|e| CliError::Io(format!("reading the answer to {method} {url}: {e}")))?;
        if self.verbose {
            eprintln!("< {status}");
            eprintln!("< {text}");
        }
        let value: Value = serde_json::from_str(&text).unwrap_or(Value::String(text.clone()));
        if !(200..300).contains(&status) {
            let message = value
                .get("error")
                .and_then(Value::as_str)
                .map(str::to_string)
                .unwrap_or(text);
            let message = if status == 401 && self.key.is_none() {
                format!(
                    "{message} (no API key was given: pass --api-key KEY or set SUBMETRICS_API_KEY)"
                )
            } else {
                message
            };
            return Err(CliError::Server { status, message });
        }
        Ok(value)
    }
}

#[cfg(test)]
mod tests {
    use super::mask;

    #[test]
    fn masks_by_characters_not_bytes() {
        assert_eq!(mask("cli-test-owner-key-0123456789"), "cli...89");
        assert_eq!(mask("ключ-секрет-ёж"), "клю...ёж");
        assert_eq!(mask("🔑🔑🔑-key-€€"), "🔑🔑🔑...€€");
        assert_eq!(mask("äöüßéè"), "***");
        assert_eq!(mask(""), "***");
    }
}
