//! Delivery of the outbox: webhooks signed the Standard Webhooks way, chat
//! messages, and emails over SMTP.
//!
//! One dispatcher thread picks, for every target, its oldest pending
//! delivery once that one is due, and runs each attempt on a thread of its
//! own (at most [`MAX_IN_FLIGHT`] at once, one per target), so deliveries
//! to one target arrive in the order they were queued and a slow target
//! holds up no other. A failed attempt is retried after the next wait of
//! the retry schedule, give or take a fifth (jitter, so that retries of
//! many deliveries spread out); after the last, the delivery is failed and
//! a webhook is marked failing until a delivery to it succeeds again; the
//! next delivery to the target then takes its turn.

use super::Outbound;
use super::db::{Attempt, Channel, Delivery};
use crate::error::ApiError;
use base64::Engine;
use base64::engine::general_purpose::STANDARD as BASE64;
use hmac::{Hmac, Mac};
use sha2::Sha256;
use std::sync::Arc;
use std::time::Duration;

/// Attempts under way at once.
pub const MAX_IN_FLIGHT: usize = 8;
/// Longest wait of the dispatcher between looks at the outbox.
const IDLE_WAIT: Duration = Duration::from_secs(1);
/// Most characters of a failure reason kept in the delivery log.
const MAX_ERROR_TEXT: usize = 300;

/// Prefix of a webhook signing secret.
pub const SECRET_PREFIX: &str = "whsec_";

/// A new signing secret: `whsec_` and the base64 of 24 random bytes.
pub fn new_secret() -> Result<String, ApiError> {
    Ok(format!(
        "{SECRET_PREFIX}{}",
        BASE64.encode(random_bytes::<24>()?)
    ))
}

pub fn random_bytes<const N: usize>() -> Result<[u8; N], ApiError> {
    let mut bytes = [0u8; N];
    getrandom::fill(&mut bytes).map_err(|e| ApiError::internal(format!("no randomness: {e}")))?;
    Ok(bytes)
}

/// The `webhook-signature` header of Standard Webhooks: `v1,` and the
/// base64 HMAC-SHA256 of `{id}.{timestamp}.{body}`, keyed with the bytes
/// the secret's base64 (after `whsec_`) stands for.
pub fn signature(secret: &str, id: &str, timestamp: i64, body: &str) -> Result<String, ApiError> {
    let encoded = secret.strip_prefix(SECRET_PREFIX).unwrap_or(secret);
    let key = BASE64
        .decode(encoded)
        .map_err(|e| ApiError::internal(format!("a stored webhook secret is not base64: {e}")))?;
    let mut mac = Hmac::<Sha256>::new_from_slice(&key)
        .map_err(|e| ApiError::internal(format!("a webhook secret is unusable: {e}")))?;
    mac.update(format!("{id}.{timestamp}.").as_bytes());
    mac.update(body.as_bytes());
    Ok(format!("v1,{}", BASE64.encode(mac.finalize().into_bytes())))
}

/// The dispatcher loop (see the module documentation); runs for the life
/// of the service.
pub fn dispatch(outbound: Arc<Outbound>) {
    while !outbound.stopping() {
        let now = now_millis();
        let mut wait = IDLE_WAIT;
        match outbound.db().heads() {
            Ok(heads) => {
                for head in heads {
                    if head.next_attempt > now {
                        let until = Duration::from_millis((head.next_attempt - now) as u64);
                        wait = wait.min(until);
                        continue;
                    }
                    let key = (head.channel, head.target.clone());
                    {
                        let mut in_flight = outbound.in_flight();
                        if in_flight.len() >= MAX_IN_FLIGHT || !in_flight.insert(key) {
                            continue;
                        }
                    }
                    let outbound = Arc::clone(&outbound);
                    std::thread::spawn(move || attempt_queued(&outbound, head));
                }
            }
            Err(error) => eprintln!("warning: the outbox could not be read: {error}"),
        }
        outbound.wait_for_work(wait);
    }
}

/// Makes one attempt at a queued delivery and records it.
fn attempt_queued(outbound: &Outbound, delivery: Delivery) {
    let attempt = attempt(outbound, &delivery);
    let config = outbound.config();
    let retry_at = match (
        &attempt.error,
        config.retry_schedule.get(delivery.attempts as usize),
    ) {
        (Some(_), Some(wait)) => Some(now_millis() + jittered(*wait).as_millis() as i64),
        _ => None,
    };
    if let Err(error) = outbound.db().record_attempt(&delivery, &attempt, retry_at) {
        eprintln!("warning: a delivery attempt could not be recorded: {error}");
    }
    outbound
        .in_flight()
        .remove(&(delivery.channel, delivery.target.clone()));
    outbound.wake();
}

/// One attempt at a delivery, whatever its channel.
pub fn attempt(outbound: &Outbound, delivery: &Delivery) -> Attempt {
    let at = crate::state::now_text();
    let outcome = match delivery.channel {
        Channel::Webhook => match outbound.db().webhook_by_id(&delivery.target) {
            Ok(Some(hook)) => post(
                outbound,
                &hook.url,
                Some((&hook.secret, &delivery.event_id)),
                &delivery.body,
            ),
            Ok(None) => Err((None, "the webhook was deleted".to_string())),
            Err(error) => Err((None, error.to_string())),
        },
        Channel::Chat => post(outbound, &delivery.target, None, &delivery.body),
        Channel::Email => send_email(outbound, &delivery.target, &delivery.body)
            .map(|()| None)
            .map_err(|e| (None, e)),
    };
    match outcome {
        Ok(status) => Attempt {
            at,
            status: status.map(i64::from),
            error: None,
        },
        Err((status, error)) => Attempt {
            at,
            status: status.map(i64::from),
            error: Some(error.chars().take(MAX_ERROR_TEXT).collect()),
        },
    }
}

/// POSTs a JSON body, signed when `signing` (secret, message id) is
/// given; a 2xx answer is a success. Returns the status, or the status
/// (if any) and why it failed.
fn post(
    outbound: &Outbound,
    url: &str,
    signing: Option<(&str, &str)>,
    body: &str,
) -> Result<Option<u16>, (Option<u16>, String)> {
    let config = outbound.config();
    super::target::check(url, config.allow_private, "url").map_err(|e| (None, e.to_string()))?;
    let mut request = ureq::http::Request::builder()
        .method("POST")
        .uri(url)
        .header("content-type", "application/json")
        .header(
            "user-agent",
            concat!("submetrics/", env!("CARGO_PKG_VERSION")),
        );
    if let Some((secret, id)) = signing {
        let timestamp = chrono::Utc::now().timestamp();
        let signed = signature(secret, id, timestamp, body).map_err(|e| (None, e.to_string()))?;
        request = request
            .header("webhook-id", id)
            .header("webhook-timestamp", timestamp.to_string())
            .header("webhook-signature", signed);
    }
    let request = request
        .body(body.as_bytes().to_vec())
        .map_err(|e| (None, format!("the request could not be built: {e}")))?;
    match outbound.agent().run(request) {
        Ok(response) => {
            let status = response.status().as_u16();
            if (200..300).contains(&status) {
                Ok(Some(status))
            } else {
                Err((Some(status), format!("the target answered {status}")))
            }
        }
        Err(error) => Err((None, error.to_string())),
    }
}

/// Sends an email outbox entry: `{"to": [...], "subject", "text"}`.
fn send_email(outbound: &Outbound, recipients: &str, body: &str) -> Result<(), String> {
    use lettre::message::header::ContentType;
    use lettre::transport::smtp::authentication::Credentials;
    use lettre::{Message, SmtpTransport, Transport};
    let config = outbound.config();
    let Some(smtp) = &config.smtp else {
        return Err("no SMTP server is configured (--smtp-host)".to_string());
    };
    let email: serde_json::Value =
        serde_json::from_str(body).map_err(|e| format!("the stored email is unreadable: {e}"))?;
    let text = |name: &str| email[name].as_str().unwrap_or_default().to_string();
    let from = smtp
        .from
        .parse()
        .map_err(|e| format!("the sender `{}` is not an address: {e}", smtp.from))?;
    let mut message = Message::builder().from(from).subject(text("subject"));
    for to in recipients.split(',').filter(|r| !r.trim().is_empty()) {
        let to = to
            .trim()
            .parse()
            .map_err(|e| format!("recipient `{to}` is not an address: {e}"))?;
        message = message.to(to);
    }
    let message = message
        .header(ContentType::TEXT_PLAIN)
        .body(text("text"))
        .map_err(|e| format!("the email could not be built: {e}"))?;
    let mut transport = SmtpTransport::builder_dangerous(&smtp.host)
        .port(smtp.port)
        .timeout(Some(config.attempt_timeout));
    if let (Some(user), Some(password)) = (&smtp.username, &smtp.password) {
        transport = transport.credentials(Credentials::new(user.clone(), password.clone()));
    }
    transport
        .build()
        .send(&message)
        .map(|_| ())
        .map_err(|e| format!("SMTP: {e}"))
}

/// `wait` times a random factor between 0.8 and 1.2.
fn jittered(wait: Duration) -> Duration {
    let random = random_bytes::<4>().map(u32::from_le_bytes).unwrap_or(0);
    let factor = 0.8 + 0.4 * (f64::from(random) / f64::from(u32::MAX));
    wait.mul_f64(factor)
}

pub fn now_millis() -> i64 {
    chrono::Utc::now().timestamp_millis()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The example of the Standard Webhooks specification.
    #[test]
    fn signatures_match_the_standard_webhooks_example() {
        let secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
        let body = r#"{"test": 2432232314}"#;
        assert_eq!(
            signature(secret, "msg_p5jXN8AQM9LWM0D4loKWxJek", 1614265330, body).unwrap(),
            "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
        );
    }

    #[test]
    fn jitter_stays_within_a_fifth() {
        for _ in 0..100 {
            let wait = jittered(Duration::from_secs(100));
            assert!(wait >= Duration::from_secs(80) && wait <= Duration::from_secs(120));
        }
    }
}
