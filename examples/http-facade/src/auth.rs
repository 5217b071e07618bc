//! API keys: `Authorization: Bearer <key>` on every request but `/health`
//! and `/openapi.json`; a request without that header may instead carry a
//! team member's session cookie (see [`crate::session`]), acting with the
//! user's role. A key is 32 random bytes shown once at creation and
//! stored only as its SHA-256; it belongs to one account with one role.
//! `readonly` reads reports and data; `admin` also writes and reaches
//! `/account*`, `/settings/*` and resync; `owner` (the key an account is
//! created with) has the same powers as admin.

use crate::error::ApiError;
use crate::openapi::Access;
use crate::state::AppState;
use crate::store::{KeyRow, UserRow};
use axum::extract::{FromRequestParts, Request};
use axum::http::Method;
use axum::http::request::Parts;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use sha2::{Digest, Sha256};
use std::sync::Arc;

pub const ROLES: &[&str] = &["owner", "admin", "readonly"];

/// The caller of a request.
#[derive(Debug, Clone)]
pub struct Caller {
    pub account_id: i64,
    /// The key, or for a session a key of the user's role whose id is the
    /// user's id and whose name is the user's email.
    pub key: KeyRow,
    /// The team member, when the request authenticated by session.
    pub user: Option<UserRow>,
}

impl Caller {
    pub fn is_admin(&self) -> bool {
        self.key.role == "owner" || self.key.role == "admin"
    }

    /// Refuses callers below admin.
    pub fn require_admin(&self) -> Result<(), ApiError> {
        if self.is_admin() {
            Ok(())
        } else {
            Err(ApiError::Forbidden(format!(
                "this endpoint needs an admin key; key `{}` is {}",
                self.key.id, self.key.role
            )))
        }
    }
}

/// A new random key: `sm_` and 64 hex digits.
pub fn new_key() -> Result<String, ApiError> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).map_err(|e| ApiError::internal(format!("no randomness: {e}")))?;
    Ok(format!("sm_{}", hex(&bytes)))
}

/// A short random id for a key record.
pub fn new_key_id() -> Result<String, ApiError> {
    let mut bytes = [0u8; 8];
    getrandom::fill(&mut bytes).map_err(|e| ApiError::internal(format!("no randomness: {e}")))?;
    Ok(format!("key_{}", hex(&bytes)))
}

pub fn hash_key(key: &str) -> String {
    hex(&Sha256::digest(key.as_bytes()))
}

/// Lower-case hex digits of `bytes`. Every request hashes its key, so this
/// writes the digits straight into one string instead of formatting each
/// byte into a string of its own.
pub(crate) fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(2 * bytes.len());
    for byte in bytes {
        out.push(char::from(DIGITS[usize::from(byte >> 4)]));
        out.push(char::from(DIGITS[usize::from(byte & 0x0f)]));
    }
    out
}

/// Checks who calls before anything else of the request is read: every
/// endpoint but the public ones runs this first (see
/// [`crate::routes::Routes`]), so a request without a valid key is a 401
/// and one whose key lacks the role a 403, whatever its path, query or body
/// hold. A key over its request rate is answered `429` here. The caller is
/// left in the request for [`Caller`]'s extractor. The caller's account is
/// loaded here when it was created after the start.
pub async fn authorize(access: Access, mut request: Request, next: Next) -> Response {
    if access == Access::Public {
        return next.run(request).await;
    }
    let Some(state) = request.extensions().get::<Arc<AppState>>().cloned() else {
        return ApiError::internal("the service state is missing").into_response();
    };
    let (parts, body) = request.into_parts();
    let caller = match authenticate(&parts, &state).await {
        Ok(caller) => caller,
        Err(error) => return error.into_response(),
    };
    if let Err(error) = state.admit(&caller.key.id) {
        return error.into_response();
    }
    if access == Access::Admin
        && let Err(error) = caller.require_admin()
    {
        return error.into_response();
    }
    if let Err(error) = state.load_account(caller.account_id).await {
        return error.into_response();
    }
    request = Request::from_parts(parts, body);
    request.extensions_mut().insert(caller);
    next.run(request).await
}

/// The caller of a request from its `Authorization` header, else from its
/// session cookie; a readonly key or user may only read.
async fn authenticate(parts: &Parts, state: &Arc<AppState>) -> Result<Caller, ApiError> {
    // Two credentials leave the caller to the order they came in.
    let given = parts
        .headers
        .get_all(axum::http::header::AUTHORIZATION)
        .iter()
        .count();
    if given > 1 {
        return Err(ApiError::Unauthorized(format!(
            "{given} Authorization headers; send one, `Bearer <API key>`"
        )));
    }
    let Some(header) = parts.headers.get(axum::http::header::AUTHORIZATION) else {
        return crate::session::caller(parts, state)?.ok_or_else(|| {
            ApiError::Unauthorized(
                "missing `Authorization: Bearer <API key>` header (or a session cookie)".into(),
            )
        });
    };
    let key = header
        .to_str()
        .ok()
        .and_then(|h| {
            h.strip_prefix("Bearer ")
                .or_else(|| h.strip_prefix("bearer "))
        })
        .map(str::trim)
        .filter(|k| !k.is_empty())
        .ok_or_else(|| {
            ApiError::Unauthorized("the Authorization header must be `Bearer <API key>`".into())
        })?;
    let row = state
        .key(hash_key(key))
        .await?
        .ok_or_else(|| ApiError::Unauthorized("unknown or revoked API key".into()))?;
    let caller = Caller {
        account_id: row.account_id,
        key: row,
        user: None,
    };
    if caller.key.role == "readonly" && parts.method != Method::GET && parts.method != Method::HEAD
    {
        return Err(ApiError::Forbidden(format!(
            "key `{}` is readonly: it cannot {} {}",
            caller.key.id,
            parts.method,
            crate::extract::requested_path(parts)
        )));
    }
    Ok(caller)
}

/// The caller [`authorize`] found; a request that did not pass through it
/// is authenticated here.
impl FromRequestParts<Arc<AppState>> for Caller {
    type Rejection = ApiError;

    async fn from_request_parts(
        parts: &mut Parts,
        state: &Arc<AppState>,
    ) -> Result<Caller, ApiError> {
        match parts.extensions.get::<Caller>() {
            Some(caller) => Ok(caller.clone()),
            None => authenticate(parts, state).await,
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn hex_digits() {
        assert_eq!(super::hex(&[0x00, 0x0f, 0xa5, 0xff]), "000fa5ff");
        assert_eq!(
            super::hash_key("abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }
}
