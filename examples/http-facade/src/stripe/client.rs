//! A blocking client of the Stripe API: authenticated GETs, list pagination
//! (`limit=100`, `starting_after`), and retries with backoff on rate limits
//! (429, honouring `Retry-After`) and on Stripe's own failures (5xx).

use crate::error::ApiError;
use serde_json::Value;
use std::time::Duration;

/// Objects per page of a list call (Stripe's largest).
pub const PAGE: usize = 100;
/// Attempts of one call before a rate limit or server error is final.
const ATTEMPTS: u32 = 6;

#[derive(Clone)]
pub struct StripeClient {
    base: String,
    key: String,
    agent: ureq::Agent,
    /// The first wait after a 429 or 5xx without `Retry-After`; doubled
    /// per attempt.
    backoff: Duration,
}

impl StripeClient {
    pub fn new(base: &str, key: &str, backoff: Duration) -> StripeClient {
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .timeout_global(Some(Duration::from_secs(60)))
            .build()
            .into();
        StripeClient {
            base: base.trim_end_matches('/').to_string(),
            key: key.to_string(),
            agent,
            backoff,
        }
    }

    /// GETs `path` (from `/v1/`) with query `params`. A refused key (401,
    /// 403) is a bad request, any other failure an upstream error, both
    /// carrying Stripe's message; rate limits and 5xx are retried with
    /// backoff first.
    pub fn get(&self, path: &str, params: &[(&str, String)]) -> Result<Value, ApiError> {
        let url = format!("{}{path}", self.base);
        let mut attempt = 0;
        loop {
            attempt += 1;
            let mut request = self
                .agent
                .get(&url)
                .header("Authorization", &format!("Bearer {}", self.key));
            for (name, value) in params {
                request = request.query(name, value);
            }
            let mut response = request.call().map_err(|e| {
                ApiError::Upstream(format!("cannot reach the Stripe API at {}: {e}", self.base))
            })?;
            let status = response.status().as_u16();
            let retry_after = response
                .headers()
                .get("Retry-After")
                .and_then(|v| v.to_str().ok()?.trim().parse::<u64>().ok())
                .map(Duration::from_secs);
            let text = response.body_mut().read_to_string().unwrap_or_default();
            if status == 200 {
                return serde_json::from_str(&text).map_err(|e| {
                    ApiError::Upstream(format!("Stripe answered {path} with unreadable JSON: {e}"))
                });
            }
            if (status == 429 || status >= 500) && attempt < ATTEMPTS {
                let wait = retry_after.unwrap_or(self.backoff * 2u32.pow(attempt - 1));
                std::thread::sleep(wait.min(Duration::from_secs(60)));
                continue;
            }
            let message = serde_json::from_str::<Value>(&text)
                .ok()
                .and_then(|body| body.pointer("/error/message")?.as_str().map(str::to_string))
                .unwrap_or(text);
            // A refused key is the caller's to fix; anything else is Stripe's.
            let text = format!("Stripe answered {status} to GET {path}: {message}");
            return Err(match status {
                401 | 403 => ApiError::BadRequest(format!("the key was refused: {text}")),
                _ => ApiError::Upstream(text),
            });
        }
    }

    /// Every object of a list endpoint, page after page (`limit=100`,
    /// `starting_after` the last id of the page before) while `has_more`.
    pub fn list_all(&self, path: &str, params: &[(&str, String)]) -> Result<Vec<Value>, ApiError> {
        let mut objects = Vec::new();
        let mut after: Option<String> = None;
        loop {
            let mut query: Vec<(&str, String)> = params.to_vec();
            query.push(("limit", PAGE.to_string()));
            if let Some(after) = &after {
                query.push(("starting_after", after.clone()));
            }
            let page = self.get(path, &query)?;
            let data = page
                .get("data")
                .and_then(Value::as_array)
                .ok_or_else(|| ApiError::Upstream(format!("Stripe's {path} is not a list")))?;
            after = data
                .last()
                .and_then(|o| o.get("id"))
                .and_then(Value::as_str)
                .map(str::to_string);
            objects.extend(data.iter().cloned());
            let more = page.get("has_more").and_then(Value::as_bool) == Some(true);
            if !more || after.is_none() {
                return Ok(objects);
            }
        }
    }
}
