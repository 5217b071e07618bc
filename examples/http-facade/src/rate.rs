//! Per-key request rates: each API key may send `rate` requests a second
//! on average, in bursts of up to `rate` at once (a token bucket per key).
//! A request over it is answered `429` with `Retry-After`, before any of
//! its work is done.

use crate::error::ApiError;
use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The buckets of every key that has called, by key id.
pub struct RateLimiter {
    per_second: f64,
    buckets: Mutex<HashMap<String, Bucket>>,
}

/// Requests a key may still send now, as of `at`.
struct Bucket {
    tokens: f64,
    at: Instant,
}

impl RateLimiter {
    /// `per_second` requests a second for each key (at least 1).
    pub fn new(per_second: u32) -> RateLimiter {
        RateLimiter {
            per_second: f64::from(per_second.max(1)),
            buckets: Mutex::new(HashMap::new()),
        }
    }

    /// Takes one request from the key's bucket, or answers how long until
    /// the key may send the next one.
    pub fn admit(&self, key_id: &str) -> Result<(), ApiError> {
        let now = Instant::now();
        let mut buckets = self.buckets.lock().unwrap_or_else(|p| p.into_inner());
        let bucket = buckets.entry(key_id.to_string()).or_insert(Bucket {
            tokens: self.per_second,
            at: now,
        });
        let refilled = now.duration_since(bucket.at).as_secs_f64() * self.per_second;
        bucket.tokens = (bucket.tokens + refilled).min(self.per_second);
        bucket.at = now;
        if bucket.tokens >= 1.0 {
            bucket.tokens -= 1.0;
            return Ok(());
        }
        let wait = Duration::from_secs_f64((1.0 - bucket.tokens) / self.per_second);
        let retry_after = wait.as_secs() + u64::from(wait.subsec_nanos() > 0);
        Err(ApiError::TooManyRequests {
            text: format!(
                "key `{key_id}` is over its rate of {} requests a second; retry in {retry_after} s",
                self.per_second
            ),
            retry_after,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::RateLimiter;

    #[test]
    fn a_key_gets_its_burst_then_waits_and_other_keys_do_not() {
        let limiter = RateLimiter::new(3);
        for _ in 0..3 {
            assert!(limiter.admit("a").is_ok());
        }
        let refused = limiter.admit("a").expect_err("over the rate");
        assert!(matches!(
            refused,
            crate::error::ApiError::TooManyRequests { retry_after: 1, .. }
        ));
        assert!(limiter.admit("b").is_ok());
    }
}
