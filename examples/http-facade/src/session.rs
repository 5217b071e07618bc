//! Team logins in the browser: passwords, session cookies, CSRF and the
//! login rate limit. The HTTP endpoints are in `routes::session`.
//!
//! Rules:
//! - A password has [`MIN_PASSWORD`] to [`MAX_PASSWORD`] characters and is
//!   stored as its argon2id hash (PHC string with a random salt).
//! - A login gives a session: a random token in the cookie
//!   [`SESSION_COOKIE`] (`HttpOnly`, `SameSite=Strict`, `Path=/`, expiring
//!   after [`SESSION_TTL_SECONDS`]); the database keeps only its SHA-256.
//! - A request authenticates by API key (`Authorization: Bearer`) or, when
//!   it has no such header, by its session cookie; the session acts with
//!   its user's role, exactly as a key of that role.
//! - A write (any method but GET and HEAD) by session must send the
//!   session's CSRF token in [`CSRF_HEADER`], and an `Origin` header, when
//!   present, must name the host the request was sent to. Together with
//!   `SameSite=Strict` a page of another site can neither send nor forge a
//!   write.
//! - Logins are rate-limited: [`FAILURES_PER_EMAIL`] failed attempts for
//!   one email within [`FAILURE_WINDOW`] lock that email until the oldest
//!   ages out, and [`FAILURES_OVERALL`] failed attempts within a minute
//!   lock every login for the rest of that minute; both answer 429 with
//!   `Retry-After`.

use crate::auth::{Caller, hash_key};
use crate::error::ApiError;
use crate::state::{AppState, now_text};
use crate::store::{InvitationRow, KeyRow, SessionRow, UserReads};
use argon2::password_hash::{PasswordHash, PasswordHasher, PasswordVerifier, SaltString};
use axum::http::request::Parts;
use axum::http::{HeaderMap, Method, header};
use std::collections::{HashMap, VecDeque};
use std::sync::{LazyLock, Mutex};
use std::time::{Duration, Instant};

/// Name of the session cookie.
pub const SESSION_COOKIE: &str = "submetrics_session";
/// The header a write by session carries its CSRF token in.
pub const CSRF_HEADER: &str = "x-csrf-token";
/// How long a session lasts after login: 7 days.
pub const SESSION_TTL_SECONDS: i64 = 7 * 24 * 3600;
/// How long an invitation can be accepted: 7 days.
pub const INVITATION_TTL_SECONDS: i64 = 7 * 24 * 3600;
pub const MIN_PASSWORD: usize = 10;
pub const MAX_PASSWORD: usize = 1024;
/// Failed logins of one email within [`FAILURE_WINDOW`] before it locks.
pub const FAILURES_PER_EMAIL: usize = 5;
pub const FAILURE_WINDOW: Duration = Duration::from_secs(15 * 60);
/// Failed logins of all emails within a minute before every login locks.
pub const FAILURES_OVERALL: usize = 100;

/// A random token: `prefix` and 64 hex digits (256 bits).
pub fn new_token(prefix: &str) -> Result<String, ApiError> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).map_err(|e| ApiError::internal(format!("no randomness: {e}")))?;
    Ok(format!("{prefix}{}", crate::auth::hex(&bytes)))
}

/// A short random id with `prefix` (`usr_`, `inv_`).
pub fn new_id(prefix: &str) -> Result<String, ApiError> {
    let mut bytes = [0u8; 8];
    getrandom::fill(&mut bytes).map_err(|e| ApiError::internal(format!("no randomness: {e}")))?;
    Ok(format!("{prefix}{}", crate::auth::hex(&bytes)))
}

/// Checks the password rules; the error names what is wrong.
pub fn check_password(password: &str) -> Result<(), ApiError> {
    let length = password.chars().count();
    if length < MIN_PASSWORD {
        return Err(ApiError::bad_field(
            "password",
            format!("field `password`: needs at least {MIN_PASSWORD} characters, has {length}"),
        ));
    }
    if length > MAX_PASSWORD {
        return Err(ApiError::bad_field(
            "password",
            format!("field `password`: at most {MAX_PASSWORD} characters"),
        ));
    }
    Ok(())
}

/// The argon2id hash of a password, with a random salt.
pub fn hash_password(password: &str) -> Result<String, ApiError> {
    let mut salt = [0u8; 16];
    getrandom::fill(&mut salt).map_err(|e| ApiError::internal(format!("no randomness: {e}")))?;
    let salt =
        SaltString::encode_b64(&salt).map_err(|e| ApiError::internal(format!("salt: {e}")))?;
    argon2::Argon2::default()
        .hash_password(password.as_bytes(), &salt)
        .map(|hash| hash.to_string())
        .map_err(|e| ApiError::internal(format!("password hashing failed: {e}")))
}

/// Whether `password` matches the stored hash.
pub fn verify_password(password: &str, stored: &str) -> bool {
    PasswordHash::new(stored).is_ok_and(|hash| {
        argon2::Argon2::default()
            .verify_password(password.as_bytes(), &hash)
            .is_ok()
    })
}

/// A hash nobody's password matches, verified against when the email is
/// unknown so an unknown email takes as long as a wrong password.
pub static DECOY_HASH: LazyLock<String> =
    LazyLock::new(|| hash_password("no account has this password").unwrap_or_default());

/// The value of the cookie `name` in a request's `Cookie` headers.
pub fn cookie<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(key, _)| *key == name)
        .map(|(_, value)| value.trim())
        .filter(|value| !value.is_empty())
}

/// The `Set-Cookie` value that starts a session with `token`.
pub fn session_cookie(token: &str) -> String {
    format!(
        "{SESSION_COOKIE}={token}; Path=/; HttpOnly; SameSite=Strict; Max-Age={SESSION_TTL_SECONDS}"
    )
}

/// The `Set-Cookie` value that removes the session cookie.
pub fn cleared_cookie() -> String {
    format!("{SESSION_COOKIE}=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0")
}

/// An RFC 3339 instant `seconds` from now.
pub fn from_now(seconds: i64) -> String {
    (chrono::Utc::now() + chrono::Duration::seconds(seconds))
        .to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
}

/// The live session of a request's cookie, if any.
pub fn session_of(headers: &HeaderMap, state: &AppState) -> Result<Option<SessionRow>, ApiError> {
    match cookie(headers, SESSION_COOKIE) {
        None => Ok(None),
        Some(token) => state.read(|reader| reader.session(&hash_key(token), &now_text())),
    }
}

/// The caller of a request without `Authorization` header, by its session
/// cookie: `None` without cookie. Applies the CSRF and role rules of a
/// write (see the module doc).
pub fn caller(parts: &Parts, state: &AppState) -> Result<Option<Caller>, ApiError> {
    if cookie(&parts.headers, SESSION_COOKIE).is_none() {
        return Ok(None);
    }
    let session = session_of(&parts.headers, state)?.ok_or_else(|| {
        ApiError::Unauthorized("the session has ended or expired; log in again".into())
    })?;
    let writes = parts.method != Method::GET && parts.method != Method::HEAD;
    if writes {
        check_origin(&parts.headers)?;
        let sent = parts
            .headers
            .get(CSRF_HEADER)
            .and_then(|value| value.to_str().ok())
            .unwrap_or("");
        if !constant_time_eq(sent.as_bytes(), session.csrf_token.as_bytes()) {
            return Err(ApiError::Forbidden(format!(
                "a write by session needs the session's CSRF token in the `{CSRF_HEADER}` header"
            )));
        }
    }
    let user = session.user;
    if writes && user.role == "readonly" && !logs_out(parts) {
        return Err(ApiError::Forbidden(format!(
            "user `{}` is readonly: it cannot {} {}",
            user.email,
            parts.method,
            crate::extract::requested_path(parts)
        )));
    }
    Ok(Some(Caller {
        account_id: user.account_id,
        // The session acts as a key of its user's role.
        key: KeyRow {
            id: user.id.clone(),
            account_id: user.account_id,
            name: user.email.clone(),
            role: user.role.clone(),
            created: user.created.clone(),
            revoked: false,
        },
        user: Some(user),
    }))
}

/// Whether the request ends the caller's own session: the one write a
/// readonly user makes.
fn logs_out(parts: &Parts) -> bool {
    parts.method == Method::DELETE && matches!(parts.uri.path(), "/session" | "/v1/session")
}

/// Refuses a request whose `Origin` header names another host than its
/// `Host` header (a request without `Origin` passes: browsers send it on
/// every cross-site write).
pub fn check_origin(headers: &HeaderMap) -> Result<(), ApiError> {
    let Some(origin) = headers.get(header::ORIGIN) else {
        return Ok(());
    };
    let origin = origin.to_str().unwrap_or("");
    let host = headers
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .unwrap_or("");
    let origin_host = origin.split_once("://").map(|(_, rest)| rest).unwrap_or("");
    if host.is_empty() || origin_host != host {
        return Err(ApiError::Forbidden(format!(
            "origin `{origin}` may not write to this service"
        )));
    }
    Ok(())
}

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// Where the dashboard accepts an invitation: the token travels in the
/// URL fragment, which browsers never send to a server.
pub fn invitation_path(token: &str) -> String {
    format!("/app/#/invite/{token}")
}

/// Creates a pending invitation for `email` (`None`: the first owner's
/// set-up, where the person accepting names the email) with `role`;
/// returns it and its token (shown once; only its hash is kept).
pub fn create_invitation(
    state: &AppState,
    account: i64,
    email: Option<&str>,
    name: &str,
    role: &str,
) -> Result<(InvitationRow, String), ApiError> {
    if !crate::auth::ROLES.contains(&role) {
        return Err(ApiError::bad_field(
            "role",
            format!(
                "field `role`: `{role}` is not one of {}",
                crate::auth::ROLES.join(", ")
            ),
        ));
    }
    let email = email.map(check_email).transpose()?;
    let mut store = state.store();
    if let Some(email) = &email
        && store.email_taken(email)?
    {
        return Err(ApiError::Conflict(format!(
            "a user with email `{email}` already exists"
        )));
    }
    let token = new_token("inv_")?;
    let invitation = InvitationRow {
        id: new_id("inv_")?,
        account_id: account,
        email,
        name: name.trim().to_string(),
        role: role.to_string(),
        created: now_text(),
        expires: from_now(INVITATION_TTL_SECONDS),
        status: "pending".into(),
    };
    store.insert_invitation(&invitation, &hash_key(&token))?;
    Ok((invitation, token))
}

/// A usable email: trimmed, one `@` with text on both sides, no spaces.
pub fn check_email(email: &str) -> Result<String, ApiError> {
    let email = email.trim();
    let valid = email.len() <= 254
        && !email.contains(char::is_whitespace)
        && email.split_once('@').is_some_and(|(local, domain)| {
            !local.is_empty() && !domain.is_empty() && !domain.contains('@')
        });
    if valid {
        Ok(email.to_string())
    } else {
        Err(ApiError::bad_field(
            "email",
            format!("field `email`: `{email}` is not an email address"),
        ))
    }
}

/// Failed logins remembered for the rate limit.
#[derive(Default)]
struct Failures {
    by_email: HashMap<String, VecDeque<Instant>>,
    overall: VecDeque<Instant>,
}

static FAILURES: LazyLock<Mutex<Failures>> = LazyLock::new(Default::default);

/// Refuses a login attempt for `email` while it or all logins are locked.
pub fn check_login_allowed(email: &str) -> Result<(), ApiError> {
    let now = Instant::now();
    let mut failures = FAILURES.lock().unwrap_or_else(|p| p.into_inner());
    let minute = Duration::from_secs(60);
    while failures
        .overall
        .front()
        .is_some_and(|t| now.duration_since(*t) >= minute)
    {
        failures.overall.pop_front();
    }
    if failures.overall.len() >= FAILURES_OVERALL {
        let wait = failures
            .overall
            .front()
            .map(|t| minute.saturating_sub(now.duration_since(*t)))
            .unwrap_or(minute);
        return Err(too_many(wait));
    }
    if let Some(times) = failures.by_email.get_mut(&email.to_lowercase()) {
        while times
            .front()
            .is_some_and(|t| now.duration_since(*t) >= FAILURE_WINDOW)
        {
            times.pop_front();
        }
        if times.len() >= FAILURES_PER_EMAIL {
            let wait = times
                .front()
                .map(|t| FAILURE_WINDOW.saturating_sub(now.duration_since(*t)))
                .unwrap_or(FAILURE_WINDOW);
            return Err(too_many(wait));
        }
    }
    Ok(())
}

fn too_many(wait: Duration) -> ApiError {
    ApiError::TooManyRequests {
        text: "too many failed logins; try again later".into(),
        retry_after: wait.as_secs().max(1),
    }
}

/// Records a failed login for `email`.
pub fn record_failure(email: &str) {
    let now = Instant::now();
    let mut failures = FAILURES.lock().unwrap_or_else(|p| p.into_inner());
    failures.overall.push_back(now);
    failures
        .by_email
        .entry(email.to_lowercase())
        .or_default()
        .push_back(now);
}

/// Forgets the failures of `email` after a successful login.
pub fn record_success(email: &str) {
    FAILURES
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .by_email
        .remove(&email.to_lowercase());
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    #[test]
    fn a_password_verifies_against_its_hash_only() {
        let hash = hash_password("correct horse battery").expect("hash");
        assert!(hash.starts_with("$argon2id$"));
        assert!(verify_password("correct horse battery", &hash));
        assert!(!verify_password("correct horse batterx", &hash));
        assert!(!verify_password("anything", "not a hash"));
    }

    #[test]
    fn passwords_shorter_than_the_minimum_are_refused() {
        assert!(check_password("123456789").is_err());
        assert!(check_password("1234567890").is_ok());
    }

    #[test]
    fn the_cookie_is_found_among_others() {
        let mut headers = HeaderMap::new();
        headers.insert(
            header::COOKIE,
            HeaderValue::from_static("a=1; submetrics_session=tok; b=2"),
        );
        assert_eq!(cookie(&headers, SESSION_COOKIE), Some("tok"));
        assert_eq!(cookie(&headers, "c"), None);
    }

    #[test]
    fn an_origin_must_name_the_host() {
        let mut headers = HeaderMap::new();
        headers.insert(header::HOST, HeaderValue::from_static("127.0.0.1:8080"));
        assert!(check_origin(&headers).is_ok());
        headers.insert(
            header::ORIGIN,
            HeaderValue::from_static("http://127.0.0.1:8080"),
        );
        assert!(check_origin(&headers).is_ok());
        headers.insert(header::ORIGIN, HeaderValue::from_static("http://evil.test"));
        assert!(check_origin(&headers).is_err());
    }

    #[test]
    fn five_failures_lock_an_email() {
        let email = "locked@example.test";
        for _ in 0..FAILURES_PER_EMAIL {
            assert!(check_login_allowed(email).is_ok());
            record_failure(email);
        }
        assert!(matches!(
            check_login_allowed("LOCKED@example.test"),
            Err(ApiError::TooManyRequests { .. })
        ));
        assert!(check_login_allowed("other@example.test").is_ok());
        record_success(email);
        assert!(check_login_allowed(email).is_ok());
    }
}
