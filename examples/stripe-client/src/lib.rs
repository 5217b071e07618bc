//! A blocking client of the Stripe API, shared by the service's connection
//! and `submetrics stripe export`: authenticated GETs, list pagination
//! (`limit=100`, `starting_after`), retries with backoff on rate limits (429,
//! honouring `Retry-After`), on Stripe's own failures (5xx) and on answers
//! cut short, and the lists an export or backfill reads.

use serde_json::{Value, json};
use std::time::Duration;

/// What can go wrong talking to Stripe.
#[derive(Debug, thiserror::Error)]
pub enum StripeError {
    /// Stripe refused the key (401, 403).
    #[error("the key was refused: Stripe answered {status} to GET {path}: {message}")]
    Refused {
        status: u16,
        path: String,
        message: String,
    },
    /// Any other answer than success, after the retries.
    #[error("Stripe answered {status} to GET {path}: {message}")]
    Failed {
        status: u16,
        path: String,
        message: String,
    },
    /// No answer, or one that is not what the API answers.
    #[error("{0}")]
    Unusable(String),
}

/// One list endpoint a full read of an account takes.
#[derive(Debug, Clone, Copy)]
pub struct List {
    /// The file kind `submetrics local --stripe` reads it from.
    pub kind: &'static str,
    pub path: &'static str,
    pub params: &'static [(&'static str, &'static str)],
}

/// The lists a full read of an account takes, in the order the mapping
/// wants them.
pub const LISTS: &[List] = &[
    List {
        kind: "customers",
        path: "/v1/customers",
        params: &[],
    },
    List {
        kind: "products",
        path: "/v1/products",
        params: &[],
    },
    List {
        kind: "prices",
        path: "/v1/prices",
        params: &[],
    },
    List {
        kind: "subscriptions",
        path: "/v1/subscriptions",
        params: &[("status", "all")],
    },
    List {
        kind: "invoices",
        path: "/v1/invoices",
        params: &[],
    },
    List {
        kind: "credit_notes",
        path: "/v1/credit_notes",
        params: &[],
    },
    List {
        kind: "refunds",
        path: "/v1/refunds",
        params: &[],
    },
    List {
        kind: "charges",
        path: "/v1/charges",
        params: &[],
    },
];

/// Objects per page of a list call (Stripe's largest).
pub const PAGE: usize = 100;
/// Attempts of one call before a rate limit, a server error or an answer
/// cut short is final.
const ATTEMPTS: u32 = 6;

/// The largest answer read: far above a page of Stripe's largest objects,
/// so a page is read whole, never cut (the HTTP client's default stops at
/// 10 MB).
const MAX_ANSWER_BYTES: u64 = 1 << 30;

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

    /// GETs `path` (from `/v1/`) with query `params`. Errors carry Stripe's
    /// message; rate limits and 5xx are retried with backoff first.
    pub fn get(&self, path: &str, params: &[(&str, String)]) -> Result<Value, StripeError> {
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
                StripeError::Unusable(format!("cannot reach the Stripe API at {}: {e}", self.base))
            })?;
            let status = response.status().as_u16();
            let retry_after = response
                .headers()
                .get("Retry-After")
                .and_then(|v| v.to_str().ok()?.trim().parse::<u64>().ok())
                .map(Duration::from_secs);
            let text = match response
                .body_mut()
                .with_config()
                .limit(MAX_ANSWER_BYTES)
                .read_to_string()
            {
                Ok(text) => text,
                // Cut short on the way: asked again. Too large stays too large.
                Err(error)
                    if attempt < ATTEMPTS && !matches!(error, ureq::Error::BodyExceedsLimit(_)) =>
                {
                    self.wait_before_retry(attempt, None);
                    continue;
                }
                Err(e) => {
                    return Err(StripeError::Unusable(format!(
                        "cannot read Stripe's answer to {path}: {e}"
                    )));
                }
            };
            if status == 200 {
                return serde_json::from_str(&text).map_err(|e| {
                    StripeError::Unusable(format!(
                        "Stripe answered {path} with unreadable JSON: {e}"
                    ))
                });
            }
            if (status == 429 || status >= 500) && attempt < ATTEMPTS {
                self.wait_before_retry(attempt, retry_after);
                continue;
            }
            let message = serde_json::from_str::<Value>(&text)
                .ok()
                .and_then(|body| body.pointer("/error/message")?.as_str().map(str::to_string))
                .unwrap_or(text);
            let path = path.to_string();
            return Err(match status {
                401 | 403 => StripeError::Refused {
                    status,
                    path,
                    message,
                },
                _ => StripeError::Failed {
                    status,
                    path,
                    message,
                },
            });
        }
    }

    /// Waits before asking again after failed attempt `attempt`: what
    /// `Retry-After` said, else the backoff doubled per attempt, at most a
    /// minute.
    fn wait_before_retry(&self, attempt: u32, retry_after: Option<Duration>) {
        let wait = retry_after.unwrap_or(self.backoff * 2u32.pow(attempt - 1));
        std::thread::sleep(wait.min(Duration::from_secs(60)));
    }

    /// Every object of a list endpoint, page after page (`limit=100`,
    /// `starting_after` the last id of the page before) while `has_more`.
    pub fn list_all(
        &self,
        path: &str,
        params: &[(&str, String)],
    ) -> Result<Vec<Value>, StripeError> {
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
                .ok_or_else(|| StripeError::Unusable(format!("Stripe's {path} is not a list")))?;
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

/// Fetches the remaining lines of invoices with more than one page of them
/// (`lines.has_more`), so every invoice carries all its lines.
pub fn complete_lines(client: &StripeClient, invoices: &mut [Value]) -> Result<(), StripeError> {
    for invoice in invoices.iter_mut() {
        if invoice.pointer("/lines/has_more") != Some(&Value::Bool(true)) {
            continue;
        }
        let Some(id) = invoice.get("id").and_then(Value::as_str) else {
            continue;
        };
        let lines = client.list_all(&format!("/v1/invoices/{id}/lines"), &[])?;
        invoice["lines"] = json!({"object": "list", "data": lines, "has_more": false});
    }
    Ok(())
}

/// Reads one list of [`LISTS`] whole (invoices with all their lines).
pub fn read_list(client: &StripeClient, list: &List) -> Result<Vec<Value>, StripeError> {
    let params: Vec<(&str, String)> = list
        .params
        .iter()
        .map(|(k, v)| (*k, v.to_string()))
        .collect();
    let mut objects = client.list_all(list.path, &params)?;
    if list.path == "/v1/invoices" {
        complete_lines(client, &mut objects)?;
    }
    Ok(objects)
}
