//! Accounts with their documents (settings, profile, notification
//! settings), their API keys (hashes only) and their payment-platform
//! connections.

use super::{Reads, Store, parse};
use crate::error::ApiError;
use rusqlite::{OptionalExtension, params};
use serde_json::Value;

/// One stored API key (never the key itself).
#[derive(Debug, Clone)]
pub struct KeyRow {
    pub id: String,
    pub account_id: i64,
    pub name: String,
    pub role: String,
    pub created: String,
    pub revoked: bool,
}

/// One account with its stored documents.
#[derive(Debug, Clone)]
pub struct AccountRow {
    pub id: i64,
    pub name: String,
    pub settings: Value,
    pub profile: Value,
    pub notifications: Value,
    pub created: String,
}

/// The reads of accounts' keys, on any connection the store reads with.
pub trait AccountReads: Reads {
    /// The key with this hash, when it exists and is not revoked.
    fn key_by_hash(&self, hash: &str) -> Result<Option<KeyRow>, ApiError> {
        self.connection()
            .query_row(
                "SELECT id, account_id, name, role, created, revoked FROM api_keys WHERE hash = ?1 AND revoked = 0",
                [hash],
                key_row,
            )
            .optional()
            .map_err(ApiError::storage)
    }

    /// Every key, or those of one account.
    fn keys(&self, account: Option<i64>) -> Result<Vec<KeyRow>, ApiError> {
        let mut statement = self
            .connection()
            .prepare(
                "SELECT id, account_id, name, role, created, revoked FROM api_keys
                 WHERE ?1 IS NULL OR account_id = ?1 ORDER BY created, id",
            )
            .map_err(ApiError::storage)?;
        let rows = statement
            .query_map([account], key_row)
            .map_err(ApiError::storage)?;
        rows.collect::<Result<Vec<_>, _>>()
            .map_err(ApiError::storage)
    }
}

impl<T: Reads> AccountReads for T {}

impl Store {
    pub fn accounts(&self) -> Result<Vec<AccountRow>, ApiError> {
        let mut statement = self
            .connection()
            .prepare("SELECT id, name, settings, profile, notifications, created FROM accounts ORDER BY id")
            .map_err(ApiError::storage)?;
        let rows = statement
            .query_map([], |row| {
                Ok((
                    row.get::<_, i64>(0)?,
                    row.get::<_, String>(1)?,
                    row.get::<_, String>(2)?,
                    row.get::<_, String>(3)?,
                    row.get::<_, String>(4)?,
                    row.get::<_, String>(5)?,
                ))
            })
            .map_err(ApiError::storage)?;
        let mut accounts = Vec::new();
        for row in rows {
            let (id, name, settings, profile, notifications, created) =
                row.map_err(ApiError::storage)?;
            accounts.push(AccountRow {
                id,
                name,
                settings: parse(&settings)?,
                profile: parse(&profile)?,
                notifications: parse(&notifications)?,
                created,
            });
        }
        Ok(accounts)
    }

    /// Creates an account and its owner key in one transaction; returns the
    /// account id (`owner.account_id` is set to it).
    pub fn create_account(
        &mut self,
        row: &AccountRow,
        owner: &KeyRow,
        hash: &str,
    ) -> Result<i64, ApiError> {
        let tx = self.connection.transaction().map_err(ApiError::storage)?;
        tx.execute(
            "INSERT INTO accounts (name, settings, profile, notifications, created) VALUES (?1, ?2, ?3, ?4, ?5)",
            params![
                row.name,
                row.settings.to_string(),
                row.profile.to_string(),
                row.notifications.to_string(),
                row.created
            ],
        )
        .map_err(ApiError::storage)?;
        let id = tx.last_insert_rowid();
        tx.execute(
            "INSERT INTO api_keys (id, account_id, hash, name, role, created) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            params![owner.id, id, hash, owner.name, owner.role, owner.created],
        )
        .map_err(ApiError::storage)?;
        tx.commit().map_err(ApiError::storage)?;
        Ok(id)
    }

    /// Replaces an account's name and documents.
    pub fn save_account(&mut self, row: &AccountRow) -> Result<(), ApiError> {
        let outcome = self
            .connection()
            .execute(
                "UPDATE accounts SET name = ?2, settings = ?3, profile = ?4, notifications = ?5 WHERE id = ?1",
                params![
                    row.id,
                    row.name,
                    row.settings.to_string(),
                    row.profile.to_string(),
                    row.notifications.to_string()
                ],
            )
            .map(|_| ())
            .map_err(ApiError::storage);
        self.health.note(outcome)
    }

    /// Every account's payment-platform connection document.
    pub fn connections(&self) -> Result<Vec<(i64, Value)>, ApiError> {
        let mut statement = self
            .connection()
            .prepare(
                "SELECT account_id, body FROM payment_platform_connections ORDER BY account_id",
            )
            .map_err(ApiError::storage)?;
        let rows = statement
            .query_map([], |row| {
                Ok((row.get::<_, i64>(0)?, row.get::<_, String>(1)?))
            })
            .map_err(ApiError::storage)?;
        let mut connections = Vec::new();
        for row in rows {
            let (account, body) = row.map_err(ApiError::storage)?;
            connections.push((account, parse(&body)?));
        }
        Ok(connections)
    }

    /// Stores an account's payment-platform connection (`None` removes it).
    pub fn save_connection(&mut self, account: i64, body: Option<&Value>) -> Result<(), ApiError> {
        match body {
            Some(body) => self.connection.execute(
                "INSERT INTO payment_platform_connections (account_id, body) VALUES (?1, ?2)
                 ON CONFLICT(account_id) DO UPDATE SET body = excluded.body",
                params![account, body.to_string()],
            ),
            None => self.connection.execute(
                "DELETE FROM payment_platform_connections WHERE account_id = ?1",
                params![account],
            ),
        }
        .map_err(ApiError::storage)?;
        Ok(())
    }

    pub fn insert_key(&mut self, key: &KeyRow, hash: &str) -> Result<(), ApiError> {
        self.connection
            .execute(
                "INSERT INTO api_keys (id, account_id, hash, name, role, created) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                params![key.id, key.account_id, hash, key.name, key.role, key.created],
            )
            .map_err(ApiError::storage)?;
        Ok(())
    }

    /// Revokes a key; `false` when no such key (of that account) exists.
    pub fn revoke_key(&mut self, id: &str, account: Option<i64>) -> Result<bool, ApiError> {
        let changed = self
            .connection
            .execute(
                "UPDATE api_keys SET revoked = 1 WHERE id = ?1 AND (?2 IS NULL OR account_id = ?2)",
                params![id, account],
            )
            .map_err(ApiError::storage)?;
        Ok(changed > 0)
    }
}

fn key_row(row: &rusqlite::Row) -> rusqlite::Result<KeyRow> {
    Ok(KeyRow {
        id: row.get(0)?,
        account_id: row.get(1)?,
        name: row.get(2)?,
        role: row.get(3)?,
        created: row.get(4)?,
        revoked: row.get::<_, i64>(5)? != 0,
    })
}
