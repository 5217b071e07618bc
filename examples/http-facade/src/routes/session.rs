//! Team logins over HTTP: log in and out, the current session,
//! invitations (create, look up, accept) and disabling members. The rules
//! (passwords, cookies, CSRF, rate limit) are in [`crate::session`].
//!
//! | request | who | answer |
//! |---|---|---|
//! | `POST /session {email, password}` | anyone | `200 {user, csrf_token, expires, account}` + session cookie |
//! | `GET /session` | anyone | the same; `user`/`csrf_token` `null` for a key, everything `null` without credentials |
//! | `DELETE /session` | session | `200 {success: true}`, cookie cleared |
//! | `GET /invitations/{token}` | anyone with the token | the invitation |
//! | `POST /invitations/{token} {email?, name?, password}` | anyone with the token | `201` as a login |
//! | `POST /account/team {email, role?, name?}` | admin | `201` the pending member with `token` and `path` |
//! | `DELETE /account/team/{id}` | admin | disables a user or revokes an invitation |

use super::{JsonBody, Routes, body_fields};
use crate::auth::{Caller, hash_key};
use crate::error::ApiError;
use crate::extract::Path;
use crate::openapi::Doc;
use crate::session::{self, check_origin};
use crate::state::{AppState, blocking, now_text};
use crate::store::{InvitationRow, UserReads, UserRow};
use axum::Json;
use axum::extract::{FromRequestParts, State};
use axum::http::request::Parts;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};
use std::sync::Arc;

pub fn routes() -> Routes {
    Routes::new()
        .post(
            "/session",
            login,
            Doc::public("Log in {email, password}: sets the session cookie, answers the CSRF token")
                .login(),
        )
        .get(
            "/session",
            current,
            Doc::public("The caller: user, CSRF token and account (user null for a key, all null without credentials)"),
        )
        .delete("/session", logout, Doc::key("Log out: ends the session of the cookie"))
        .get(
            "/invitations/{token}",
            invitation,
            Doc::public("An invitation by its token").login(),
        )
        .post(
            "/invitations/{token}",
            accept,
            Doc::public("Accept an invitation {email?, name?, password}: creates the user and logs in")
                .created()
                .login(),
        )
        .post(
            "/account/team",
            invite,
            Doc::admin("Invite a team member {email, role, name}; answers the invitation token once")
                .created(),
        )
        .delete(
            "/account/team/{id}",
            remove_member,
            Doc::admin("Disable a user or revoke a pending invitation"),
        )
}

/// A user as a team member of the interface.
pub fn member_of_user(user: &UserRow) -> Value {
    json!({"id": user.id, "email": user.email, "name": user.name, "role": user.role,
           "status": user.status, "last_login": user.last_login, "created": user.created})
}

/// A pending invitation as a team member (`email` is `""` for an owner
/// set-up, whose email the person accepting names).
pub fn member_of_invitation(invitation: &InvitationRow) -> Value {
    json!({"id": invitation.id, "email": invitation.email.as_deref().unwrap_or(""),
           "name": invitation.name, "role": invitation.role, "status": "pending",
           "last_login": null, "created": invitation.created, "expires": invitation.expires})
}

/// The team of an account: its users, then its pending invitations.
pub fn team_members(store: &impl UserReads, account: i64) -> Result<Vec<Value>, ApiError> {
    let mut list: Vec<Value> = store.users(account)?.iter().map(member_of_user).collect();
    list.extend(
        store
            .pending_invitations(account)?
            .iter()
            .map(member_of_invitation),
    );
    Ok(list)
}

/// A string field of a JSON object body; `None` when absent or null.
fn text_field(body: &Value, field: &str) -> Result<Option<String>, ApiError> {
    match body.get(field) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(text)) => Ok(Some(text.clone())),
        Some(_) => Err(ApiError::bad_field(
            field,
            format!("field `{field}` must be a string"),
        )),
    }
}

fn required(body: &Value, field: &str) -> Result<String, ApiError> {
    text_field(body, field)?
        .filter(|text| !text.is_empty())
        .ok_or_else(|| ApiError::bad_field(field, format!("field `{field}` is required")))
}

fn account_of(state: &AppState, id: i64, role: &str) -> Result<Value, ApiError> {
    let account = state.account(id)?;
    let name = account
        .row
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .name
        .clone();
    Ok(json!({"id": id.to_string(), "name": name, "role": role}))
}

/// Starts a session for `user`: the answer of a login, with the cookie.
fn start_session(
    state: &AppState,
    user: UserRow,
    status: StatusCode,
) -> Result<Response, ApiError> {
    let token = session::new_token("ses_")?;
    let csrf_token = session::new_token("")?;
    let now = now_text();
    let expires = session::from_now(session::SESSION_TTL_SECONDS);
    state
        .store()
        .insert_session(&hash_key(&token), &user.id, &csrf_token, &now, &expires)?;
    let user = UserRow {
        last_login: Some(now),
        ..user
    };
    let body = json!({
        "user": member_of_user(&user),
        "csrf_token": csrf_token,
        "expires": expires,
        "account": account_of(state, user.account_id, &user.role)?,
    });
    Ok((
        status,
        [(header::SET_COOKIE, session::session_cookie(&token))],
        Json(body),
    )
        .into_response())
}

async fn login(
    State(state): State<Arc<AppState>>,
    headers: HeaderMap,
    JsonBody(body): JsonBody,
) -> Result<Response, ApiError> {
    check_origin(&headers)?;
    body_fields(&body, "a login", &["email", "password"])?;
    let email = required(&body, "email")?.trim().to_string();
    let password = required(&body, "password")?;
    session::check_login_allowed(&email)?;
    // Hashing takes tens of milliseconds of CPU: off the event loop.
    tokio::task::spawn_blocking(move || {
        let found = state.store().user_by_email(&email)?;
        let user = match found {
            Some((user, hash)) if session::verify_password(&password, &hash) => user,
            Some(_) => wrong_login(&email)?,
            None => {
                session::verify_password(&password, &session::DECOY_HASH);
                wrong_login(&email)?
            }
        };
        if user.status != "active" {
            return Err(ApiError::Forbidden(format!(
                "user `{}` is {}; an admin can enable it again",
                user.email, user.status
            )));
        }
        session::record_success(&email);
        start_session(&state, user, StatusCode::OK)
    })
    .await
    .map_err(|_| ApiError::internal("the request could not be completed"))?
}

/// Records a failed login and answers it (never saying which part was
/// wrong).
fn wrong_login(email: &str) -> Result<UserRow, ApiError> {
    session::record_failure(email);
    Err(ApiError::Unauthorized("email or password is wrong".into()))
}

/// Who is calling: with no usable credentials `{user: null, account:
/// null}` (200, so a page can ask before anyone logged in).
async fn current(
    State(state): State<Arc<AppState>>,
    mut parts: Parts,
) -> Result<Response, ApiError> {
    let caller = match Caller::from_request_parts(&mut parts, &state).await {
        Ok(caller) => caller,
        Err(ApiError::Unauthorized(_)) => {
            let mut response =
                Json(json!({"user": null, "csrf_token": null, "expires": null, "account": null}))
                    .into_response();
            if session::cookie(&parts.headers, session::SESSION_COOKIE).is_some() {
                // A cookie of an ended session is of no further use.
                response.headers_mut().insert(
                    header::SET_COOKIE,
                    session::cleared_cookie()
                        .parse()
                        .map_err(|_| ApiError::internal("cookie header"))?,
                );
            }
            return Ok(response);
        }
        Err(error) => return Err(error),
    };
    let account = account_of(&state, caller.account_id, &caller.key.role)?;
    let Some(user) = &caller.user else {
        return Ok(Json(
            json!({"user": null, "csrf_token": null, "expires": null, "account": account}),
        )
        .into_response());
    };
    let session = session::session_of(&parts.headers, &state)?
        .ok_or_else(|| ApiError::Unauthorized("the session has ended; log in again".into()))?;
    Ok(Json(json!({
        "user": member_of_user(user),
        "csrf_token": session.csrf_token,
        "expires": session.expires,
        "account": account,
    }))
    .into_response())
}

async fn logout(
    State(state): State<Arc<AppState>>,
    caller: Caller,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    if caller.user.is_none() {
        return Err(ApiError::bad_request(
            "this request authenticated by API key; only a session can log out",
        ));
    }
    if let Some(token) = session::cookie(&headers, session::SESSION_COOKIE) {
        let hash = hash_key(token);
        blocking(move || state.store().delete_session(&hash)).await?;
    }
    Ok((
        [(header::SET_COOKIE, session::cleared_cookie())],
        Json(json!({"success": true})),
    )
        .into_response())
}

/// The invitation of a token, with `expired` as its status once past its
/// expiry while still pending; read off the event loop.
async fn invitation_of(state: &Arc<AppState>, token: &str) -> Result<InvitationRow, ApiError> {
    let (state, hash) = (Arc::clone(state), hash_key(token));
    let mut invitation = blocking(move || state.read(|reader| reader.invitation_by_token(&hash)))
        .await?
        .ok_or_else(|| ApiError::NotFound("no invitation has this token".into()))?;
    if invitation.status == "pending" && invitation.expires <= now_text() {
        invitation.status = "expired".into();
    }
    Ok(invitation)
}

async fn invitation(
    State(state): State<Arc<AppState>>,
    Path(token): Path<String>,
) -> Result<Json<Value>, ApiError> {
    let invitation = invitation_of(&state, &token).await?;
    let account = account_of(&state, invitation.account_id, &invitation.role)?;
    Ok(Json(json!({
        "id": invitation.id, "email": invitation.email, "name": invitation.name,
        "role": invitation.role, "status": invitation.status, "expires": invitation.expires,
        "account": account,
    })))
}

async fn accept(
    State(state): State<Arc<AppState>>,
    headers: HeaderMap,
    Path(token): Path<String>,
    JsonBody(body): JsonBody,
) -> Result<Response, ApiError> {
    check_origin(&headers)?;
    body_fields(&body, "an acceptance", &["email", "name", "password"])?;
    let invitation = invitation_of(&state, &token).await?;
    if invitation.status != "pending" {
        return Err(ApiError::Conflict(format!(
            "the invitation is {}; ask an admin for a new one",
            invitation.status
        )));
    }
    let email = match &invitation.email {
        Some(email) => email.clone(),
        None => session::check_email(&required(&body, "email")?)?,
    };
    let password = required(&body, "password")?;
    session::check_password(&password)?;
    let name = text_field(&body, "name")?
        .map(|name| name.trim().to_string())
        .filter(|name| !name.is_empty())
        .unwrap_or_else(|| invitation.name.clone());
    tokio::task::spawn_blocking(move || {
        let hash = session::hash_password(&password)?;
        let user = UserRow {
            id: session::new_id("usr_")?,
            account_id: invitation.account_id,
            email,
            name,
            role: invitation.role.clone(),
            status: "active".into(),
            created: now_text(),
            last_login: None,
        };
        {
            let mut store = state.store();
            if store.email_taken(&user.email)? {
                return Err(ApiError::Conflict(format!(
                    "a user with email `{}` already exists",
                    user.email
                )));
            }
            if !store.accept_invitation(&invitation.id, &user, &hash)? {
                return Err(ApiError::Conflict(
                    "the invitation was accepted or revoked meanwhile".into(),
                ));
            }
        }
        start_session(&state, user, StatusCode::CREATED)
    })
    .await
    .map_err(|_| ApiError::internal("the request could not be completed"))?
}

async fn invite(
    State(state): State<Arc<AppState>>,
    caller: Caller,
    JsonBody(body): JsonBody,
) -> Result<(StatusCode, Json<Value>), ApiError> {
    caller.require_admin()?;
    body_fields(&body, "an invitation", &["email", "role", "name"])?;
    let email = required(&body, "email")?;
    let role = text_field(&body, "role")?.unwrap_or_else(|| "readonly".into());
    let name = text_field(&body, "name")?.unwrap_or_default();
    if role == "owner" && caller.key.role != "owner" {
        return Err(ApiError::Forbidden(
            "only an owner can invite owners".into(),
        ));
    }
    let account = caller.account_id;
    let (invitation, token) =
        blocking(move || session::create_invitation(&state, account, Some(&email), &name, &role))
            .await?;
    let mut member = member_of_invitation(&invitation);
    member["token"] = json!(token);
    member["path"] = json!(session::invitation_path(&token));
    Ok((StatusCode::CREATED, Json(member)))
}

async fn remove_member(
    State(state): State<Arc<AppState>>,
    caller: Caller,
    Path(id): Path<String>,
) -> Result<Json<Value>, ApiError> {
    caller.require_admin()?;
    blocking(move || {
        let mut store = state.store();
        if store.revoke_invitation(caller.account_id, &id)? {
            return Ok(Json(json!({"success": true, "id": id})));
        }
        let target = store
            .users(caller.account_id)?
            .into_iter()
            .find(|user| user.id == id)
            .ok_or_else(|| {
                ApiError::NotFound(format!(
                    "team member `{id}` does not exist or is not pending"
                ))
            })?;
        if caller.user.as_ref().is_some_and(|user| user.id == id) {
            return Err(ApiError::Conflict("a user cannot disable itself".into()));
        }
        if target.role == "owner" && caller.key.role != "owner" {
            return Err(ApiError::Forbidden(format!(
                "user `{}` is an owner; only an owner can disable it",
                target.email
            )));
        }
        store.set_user_status(caller.account_id, &id, "disabled")?;
        Ok(Json(json!({"success": true, "id": id})))
    })
    .await
}
