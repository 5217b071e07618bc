//! Team logins: users, their invitations and their sessions.
//!
//! - A **user** belongs to one account with one role (owner, admin,
//!   readonly, as keys) and logs in by email (unique over the database, any
//!   case) and password; only the password's argon2 hash is stored. A
//!   disabled user cannot log in and its sessions stop working.
//! - An **invitation** is pending until accepted: it carries a role, an
//!   email (none for the first owner's set-up, where the person accepting
//!   names it) and an expiry; only the SHA-256 of its token is stored.
//!   Accepting creates the user.
//! - A **session** is a random token (stored as its SHA-256) with a CSRF
//!   token and an expiry.
//!
//! The tables are created by [`open`], as the other tables are, on every
//! start (`CREATE TABLE IF NOT EXISTS`).

use super::{Reads, Store};
use crate::error::ApiError;
use rusqlite::{Connection, OptionalExtension, params};

/// Creates the tables of users, invitations and sessions when missing.
pub(super) fn open(connection: &Connection) -> Result<(), ApiError> {
    connection
        .execute_batch(
            "CREATE TABLE IF NOT EXISTS users (
                 id TEXT PRIMARY KEY,
                 account_id INTEGER NOT NULL REFERENCES accounts(id),
                 email TEXT NOT NULL UNIQUE COLLATE NOCASE,
                 name TEXT NOT NULL,
                 role TEXT NOT NULL,
                 password_hash TEXT NOT NULL,
                 status TEXT NOT NULL,
                 created TEXT NOT NULL,
                 last_login TEXT
             );
             CREATE TABLE IF NOT EXISTS invitations (
                 id TEXT PRIMARY KEY,
                 account_id INTEGER NOT NULL REFERENCES accounts(id),
                 token_hash TEXT NOT NULL UNIQUE,
                 email TEXT,
                 name TEXT NOT NULL,
                 role TEXT NOT NULL,
                 created TEXT NOT NULL,
                 expires TEXT NOT NULL,
                 status TEXT NOT NULL
             );
             CREATE TABLE IF NOT EXISTS sessions (
                 token_hash TEXT PRIMARY KEY,
                 user_id TEXT NOT NULL REFERENCES users(id),
                 csrf_token TEXT NOT NULL,
                 created TEXT NOT NULL,
                 expires TEXT NOT NULL
             );",
        )
        .map_err(ApiError::storage)
}

/// One user (never the password).
#[derive(Debug, Clone)]
pub struct UserRow {
    pub id: String,
    pub account_id: i64,
    pub email: String,
    pub name: String,
    pub role: String,
    /// `active` or `disabled`.
    pub status: String,
    pub created: String,
    pub last_login: Option<String>,
}

/// One invitation (never its token).
#[derive(Debug, Clone)]
pub struct InvitationRow {
    pub id: String,
    pub account_id: i64,
    /// `None` for an owner set-up, where the person accepting names it.
    pub email: Option<String>,
    pub name: String,
    pub role: String,
    pub created: String,
    /// RFC 3339 instant after which it cannot be accepted.
    pub expires: String,
    /// `pending`, `accepted` or `revoked`.
    pub status: String,
}

/// One live session.
#[derive(Debug, Clone)]
pub struct SessionRow {
    pub user: UserRow,
    pub csrf_token: String,
    pub expires: String,
}

const USER_COLUMNS: &str = "id, account_id, email, name, role, status, created, last_login";
const INVITATION_COLUMNS: &str = "id, account_id, email, name, role, created, expires, status";

fn user_row(row: &rusqlite::Row) -> rusqlite::Result<UserRow> {
    Ok(UserRow {
        id: row.get(0)?,
        account_id: row.get(1)?,
        email: row.get(2)?,
        name: row.get(3)?,
        role: row.get(4)?,
        status: row.get(5)?,
        created: row.get(6)?,
        last_login: row.get(7)?,
    })
}

fn invitation_row(row: &rusqlite::Row) -> rusqlite::Result<InvitationRow> {
    Ok(InvitationRow {
        id: row.get(0)?,
        account_id: row.get(1)?,
        email: row.get(2)?,
        name: row.get(3)?,
        role: row.get(4)?,
        created: row.get(5)?,
        expires: row.get(6)?,
        status: row.get(7)?,
    })
}

/// The reads of users, invitations and sessions (see [`Reads`]).
pub trait UserReads: Reads {
    /// The users of an account, oldest first.
    fn users(&self, account: i64) -> Result<Vec<UserRow>, ApiError> {
        let mut statement = self
            .connection()
            .prepare(&format!(
                "SELECT {USER_COLUMNS} FROM users WHERE account_id = ?1 ORDER BY created, id"
            ))
            .map_err(ApiError::storage)?;
        let rows = statement
            .query_map([account], user_row)
            .map_err(ApiError::storage)?;
        rows.collect::<Result<_, _>>().map_err(ApiError::storage)
    }

    /// The user with this email (any case) and its password hash.
    fn user_by_email(&self, email: &str) -> Result<Option<(UserRow, String)>, ApiError> {
        self.connection()
            .query_row(
                &format!("SELECT {USER_COLUMNS}, password_hash FROM users WHERE email = ?1"),
                [email],
                |row| Ok((user_row(row)?, row.get::<_, String>(8)?)),
            )
            .optional()
            .map_err(ApiError::storage)
    }

    /// The invitation with this token hash, whatever its status.
    fn invitation_by_token(&self, token_hash: &str) -> Result<Option<InvitationRow>, ApiError> {
        self.connection()
            .query_row(
                &format!("SELECT {INVITATION_COLUMNS} FROM invitations WHERE token_hash = ?1"),
                [token_hash],
                invitation_row,
            )
            .optional()
            .map_err(ApiError::storage)
    }

    /// The pending invitations of an account, oldest first.
    fn pending_invitations(&self, account: i64) -> Result<Vec<InvitationRow>, ApiError> {
        let mut statement = self
            .connection()
            .prepare(&format!(
                "SELECT {INVITATION_COLUMNS} FROM invitations
                 WHERE account_id = ?1 AND status = 'pending' ORDER BY created, id"
            ))
            .map_err(ApiError::storage)?;
        let rows = statement
            .query_map([account], invitation_row)
            .map_err(ApiError::storage)?;
        rows.collect::<Result<_, _>>().map_err(ApiError::storage)
    }

    /// The session with this token hash when it has not expired at `now`
    /// and its user is active.
    fn session(&self, token_hash: &str, now: &str) -> Result<Option<SessionRow>, ApiError> {
        let columns = USER_COLUMNS
            .split(", ")
            .map(|c| format!("u.{c}"))
            .collect::<Vec<_>>()
            .join(", ");
        self.connection()
            .query_row(
                &format!(
                    "SELECT {columns}, s.csrf_token, s.expires FROM sessions s
                     JOIN users u ON u.id = s.user_id
                     WHERE s.token_hash = ?1 AND s.expires > ?2 AND u.status = 'active'"
                ),
                params![token_hash, now],
                |row| {
                    Ok(SessionRow {
                        user: user_row(row)?,
                        csrf_token: row.get(8)?,
                        expires: row.get(9)?,
                    })
                },
            )
            .optional()
            .map_err(ApiError::storage)
    }
}

impl<T: Reads> UserReads for T {}

impl Store {
    /// Whether any user holds this email (any case).
    pub fn email_taken(&self, email: &str) -> Result<bool, ApiError> {
        Ok(self.user_by_email(email)?.is_some())
    }

    /// Creates a user from an accepted invitation, in one transaction:
    /// `false` (nothing written) when the invitation is no longer pending.
    pub fn accept_invitation(
        &mut self,
        invitation_id: &str,
        user: &UserRow,
        password_hash: &str,
    ) -> Result<bool, ApiError> {
        let tx = self.connection.transaction().map_err(ApiError::storage)?;
        let changed = tx
            .execute(
                "UPDATE invitations SET status = 'accepted' WHERE id = ?1 AND status = 'pending'",
                [invitation_id],
            )
            .map_err(ApiError::storage)?;
        if changed == 0 {
            return Ok(false);
        }
        tx.execute(
            "INSERT INTO users (id, account_id, email, name, role, password_hash, status, created, last_login)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
            params![
                user.id,
                user.account_id,
                user.email,
                user.name,
                user.role,
                password_hash,
                user.status,
                user.created,
                user.last_login
            ],
        )
        .map_err(ApiError::storage)?;
        tx.commit().map_err(ApiError::storage)?;
        Ok(true)
    }

    /// Sets a user's status (`active` or `disabled`); a disabled user's
    /// sessions end. `false` when the account has no such user.
    pub fn set_user_status(
        &mut self,
        account: i64,
        user_id: &str,
        status: &str,
    ) -> Result<bool, ApiError> {
        let tx = self.connection.transaction().map_err(ApiError::storage)?;
        let changed = tx
            .execute(
                "UPDATE users SET status = ?3 WHERE id = ?1 AND account_id = ?2",
                params![user_id, account, status],
            )
            .map_err(ApiError::storage)?;
        if status != "active" {
            tx.execute("DELETE FROM sessions WHERE user_id = ?1", [user_id])
                .map_err(ApiError::storage)?;
        }
        tx.commit().map_err(ApiError::storage)?;
        Ok(changed > 0)
    }

    pub fn insert_invitation(
        &mut self,
        invitation: &InvitationRow,
        token_hash: &str,
    ) -> Result<(), ApiError> {
        self.connection
            .execute(
                "INSERT INTO invitations (id, account_id, token_hash, email, name, role, created, expires, status)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
                params![
                    invitation.id,
                    invitation.account_id,
                    token_hash,
                    invitation.email,
                    invitation.name,
                    invitation.role,
                    invitation.created,
                    invitation.expires,
                    invitation.status
                ],
            )
            .map_err(ApiError::storage)?;
        Ok(())
    }

    /// Revokes a pending invitation; `false` when the account has no such
    /// pending invitation.
    pub fn revoke_invitation(&mut self, account: i64, id: &str) -> Result<bool, ApiError> {
        let changed = self
            .connection
            .execute(
                "UPDATE invitations SET status = 'revoked'
                 WHERE id = ?1 AND account_id = ?2 AND status = 'pending'",
                params![id, account],
            )
            .map_err(ApiError::storage)?;
        Ok(changed > 0)
    }

    /// Revokes every pending set-up invitation (one without email) of an
    /// account.
    pub fn revoke_setup_invitations(&mut self, account: i64) -> Result<(), ApiError> {
        self.connection
            .execute(
                "UPDATE invitations SET status = 'revoked'
                 WHERE account_id = ?1 AND email IS NULL AND status = 'pending'",
                [account],
            )
            .map_err(ApiError::storage)?;
        Ok(())
    }

    /// Stores a new session and records the login on its user.
    pub fn insert_session(
        &mut self,
        token_hash: &str,
        user_id: &str,
        csrf_token: &str,
        created: &str,
        expires: &str,
    ) -> Result<(), ApiError> {
        let tx = self.connection.transaction().map_err(ApiError::storage)?;
        tx.execute(
            "INSERT INTO sessions (token_hash, user_id, csrf_token, created, expires) VALUES (?1, ?2, ?3, ?4, ?5)",
            params![token_hash, user_id, csrf_token, created, expires],
        )
        .map_err(ApiError::storage)?;
        tx.execute(
            "UPDATE users SET last_login = ?2 WHERE id = ?1",
            params![user_id, created],
        )
        .map_err(ApiError::storage)?;
        // Sessions past their expiry are of no use to anyone.
        tx.execute("DELETE FROM sessions WHERE expires < ?1", [created])
            .map_err(ApiError::storage)?;
        tx.commit().map_err(ApiError::storage)
    }

    /// Ends a session (nothing when it does not exist).
    pub fn delete_session(&mut self, token_hash: &str) -> Result<(), ApiError> {
        self.connection
            .execute("DELETE FROM sessions WHERE token_hash = ?1", [token_hash])
            .map_err(ApiError::storage)?;
        Ok(())
    }
}
