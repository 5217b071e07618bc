//! SQLite persistence: accounts, API keys (hashes only) and every accepted
//! record as the JSON the core stores.
//!
//! The database runs in WAL mode with `synchronous=FULL`, so a committed
//! transaction is on disk before the service answers. A batch is written in
//! one transaction: a crash leaves all of it or none.
//!
//! Checkpoints run on a thread of their own (see [`checkpoint`]), also
//! `synchronous=FULL`.
//!
//! Records are kept as a log of writes (see [`record_log`]), replayed into
//! each account's ledger at start.

mod checkpoint;
mod record_log;

use crate::error::ApiError;
use checkpoint::Checkpointer;
pub use record_log::{KINDS_IN_REPLAY_ORDER, LogEntry};
use rusqlite::{Connection, OptionalExtension, params};
use serde_json::Value;
use std::path::Path;
use std::sync::{Arc, Mutex};
use submetrics::{Ledger, RecordKind};

/// File name of the database inside the data directory.
pub const DATABASE_FILE: &str = "submetrics.db";

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

/// A change to persist for one record.
#[derive(Clone)]
pub enum Change {
    /// Store the record's JSON text: a new record, or one that replaces
    /// the record of the same kind and id.
    Put {
        kind: RecordKind,
        id: String,
        owner: Option<String>,
        body: String,
    },
    Delete {
        kind: RecordKind,
        id: String,
    },
}

impl Change {
    /// The put that stores the ledger's record of `kind` and `id` as the
    /// ledger holds it (an invoice with its customer as owner), if it holds
    /// one.
    pub fn put(ledger: &Ledger, kind: RecordKind, id: &str) -> Option<Change> {
        let (text, owner) = match kind {
            RecordKind::Customers => (serde_json::to_string(ledger.customer(id)?), None),
            RecordKind::Plans => (serde_json::to_string(ledger.plan(id)?), None),
            RecordKind::PlanGroups => (serde_json::to_string(ledger.plan_group(id)?), None),
            RecordKind::Invoices => {
                let invoice = ledger.invoice(id)?;
                (
                    serde_json::to_string(invoice),
                    Some(invoice.customer_id.to_string()),
                )
            }
            RecordKind::DataSources => (serde_json::to_string(ledger.data_source(id)?), None),
        };
        Some(Change::Put {
            kind,
            id: id.to_string(),
            owner,
            body: text.ok()?,
        })
    }
}

pub struct Store {
    connection: Connection,
    /// Held by each record write's transaction, and by the checkpoint
    /// thread while it copies the last frames of the log.
    writes: Arc<Mutex<()>>,
    /// Stops its thread when the store is dropped.
    _checkpointer: Checkpointer,
}

/// The table name of each record kind.
pub fn kind_name(kind: RecordKind) -> &'static str {
    match kind {
        RecordKind::Customers => "customers",
        RecordKind::Plans => "plans",
        RecordKind::PlanGroups => "plan_groups",
        RecordKind::Invoices => "invoices",
        RecordKind::DataSources => "data_sources",
    }
}

impl Store {
    /// Opens (or creates) the database in `dir`.
    pub fn open(dir: &Path) -> Result<Store, ApiError> {
        std::fs::create_dir_all(dir).map_err(|e| {
            ApiError::internal(format!(
                "cannot create data directory {}: {e}",
                dir.display()
            ))
        })?;
        let path = dir.join(DATABASE_FILE);
        let mut connection = Connection::open(&path).map_err(ApiError::storage)?;
        connection
            .execute_batch(
                "PRAGMA journal_mode = WAL;
                 PRAGMA synchronous = FULL;
                 PRAGMA foreign_keys = ON;
                 PRAGMA busy_timeout = 5000;
                 CREATE TABLE IF NOT EXISTS accounts (
                     id INTEGER PRIMARY KEY,
                     name TEXT NOT NULL,
                     settings TEXT NOT NULL,
                     profile TEXT NOT NULL,
                     notifications TEXT NOT NULL,
                     created TEXT NOT NULL
                 );
                 CREATE TABLE IF NOT EXISTS api_keys (
                     id TEXT PRIMARY KEY,
                     account_id INTEGER NOT NULL REFERENCES accounts(id),
                     hash TEXT NOT NULL UNIQUE,
                     name TEXT NOT NULL,
                     role TEXT NOT NULL,
                     created TEXT NOT NULL,
                     revoked INTEGER NOT NULL DEFAULT 0
                 );
                 CREATE TABLE IF NOT EXISTS payment_platform_connections (
                     account_id INTEGER PRIMARY KEY REFERENCES accounts(id),
                     body TEXT NOT NULL
                 );
                 CREATE TABLE IF NOT EXISTS fx_rates (
                     account_id INTEGER NOT NULL REFERENCES accounts(id),
                     seq INTEGER PRIMARY KEY AUTOINCREMENT,
                     body TEXT NOT NULL
                 );",
            )
            .map_err(ApiError::storage)?;
        record_log::open(&mut connection)?;
        let writes = Arc::new(Mutex::new(()));
        let checkpointer = Checkpointer::start(&path, &mut connection, &writes)?;
        Ok(Store {
            connection,
            writes,
            _checkpointer: checkpointer,
        })
    }

    pub fn accounts(&self) -> Result<Vec<AccountRow>, ApiError> {
        let mut statement = self
            .connection
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
        self.connection
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
            .map_err(ApiError::storage)?;
        Ok(())
    }

    /// Every account's payment-platform connection document.
    pub fn connections(&self) -> Result<Vec<(i64, Value)>, ApiError> {
        let mut statement = self
            .connection
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

    /// The key with this hash, when it exists and is not revoked.
    pub fn key_by_hash(&self, hash: &str) -> Result<Option<KeyRow>, ApiError> {
        self.connection
            .query_row(
                "SELECT id, account_id, name, role, created, revoked FROM api_keys WHERE hash = ?1 AND revoked = 0",
                [hash],
                key_row,
            )
            .optional()
            .map_err(ApiError::storage)
    }

    /// Every key, or those of one account.
    pub fn keys(&self, account: Option<i64>) -> Result<Vec<KeyRow>, ApiError> {
        let mut statement = self
            .connection
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

    /// Every stored FX rate row of an account, oldest first.
    pub fn fx_rates(&self, account: i64) -> Result<Vec<Value>, ApiError> {
        let mut statement = self
            .connection
            .prepare("SELECT body FROM fx_rates WHERE account_id = ?1 ORDER BY seq")
            .map_err(ApiError::storage)?;
        let bodies = statement
            .query_map([account], |row| row.get::<_, String>(0))
            .map_err(ApiError::storage)?;
        let mut rows = Vec::new();
        for body in bodies {
            rows.push(parse(&body.map_err(ApiError::storage)?)?);
        }
        Ok(rows)
    }

    /// Stores FX rate rows in one transaction.
    pub fn add_fx_rates(&mut self, account: i64, rows: &[Value]) -> Result<(), ApiError> {
        let tx = self.connection.transaction().map_err(ApiError::storage)?;
        for row in rows {
            tx.execute(
                "INSERT INTO fx_rates (account_id, body) VALUES (?1, ?2)",
                params![account, row.to_string()],
            )
            .map_err(ApiError::storage)?;
        }
        tx.commit().map_err(ApiError::storage)
    }

    /// Applies record changes in one transaction.
    ///
    /// Every statement of a record write, `BEGIN` and `COMMIT` included, is
    /// prepared once per connection and kept: a single post commits alone
    /// when the service is not busy, and preparing those statements each
    /// time cost more than running them.
    pub fn apply(&mut self, account: i64, changes: &[Change]) -> Result<(), ApiError> {
        if changes.is_empty() {
            return Ok(());
        }
        let _writes = self.writes.lock().unwrap_or_else(|p| p.into_inner());
        let connection = &self.connection;
        run_cached(connection, "BEGIN")?;
        let outcome = record_log::append(connection, account, changes)
            .and_then(|()| run_cached(connection, "COMMIT"));
        // As a dropped transaction does: roll back what is still open (a
        // failed commit may already have rolled back by itself).
        if outcome.is_err() && !connection.is_autocommit() {
            let _ = connection.execute_batch("ROLLBACK");
        }
        outcome
    }
}

/// Runs a statement without parameters or rows through the statement cache.
fn run_cached(connection: &Connection, sql: &str) -> Result<(), ApiError> {
    connection
        .prepare_cached(sql)
        .and_then(|mut statement| statement.execute([]))
        .map(|_| ())
        .map_err(ApiError::storage)
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

fn parse(text: &str) -> Result<Value, ApiError> {
    serde_json::from_str(text)
        .map_err(|e| ApiError::internal(format!("stored JSON is unreadable: {e}")))
}

#[cfg(test)]
mod tests {
    use super::checkpoint::CHECKPOINT_FRAMES;
    use super::*;

    /// A store in a fresh directory of its own, with one account.
    pub(crate) fn store_with_account(name: &str) -> (std::path::PathBuf, Store, i64) {
        let dir = std::env::temp_dir().join(format!(
            "submetrics-store-{name}-{}-{:?}",
            std::process::id(),
            std::time::SystemTime::now()
        ));
        let mut store = Store::open(&dir).expect("open");
        let row = AccountRow {
            id: 0,
            name: "test".into(),
            settings: Value::Null,
            profile: Value::Null,
            notifications: Value::Null,
            created: String::new(),
        };
        let owner = KeyRow {
            id: "key_test".into(),
            account_id: 0,
            name: "owner".into(),
            role: "owner".into(),
            created: String::new(),
            revoked: false,
        };
        let id = store.create_account(&row, &owner, "hash").expect("account");
        (dir, store, id)
    }

    /// Commits one after another, as single posts make them, never let a
    /// checkpoint that runs beside them copy the whole log: the log used to
    /// grow with every commit. Each checkpoint now ends with the whole log
    /// copied, so the log starts over and stays near the checkpoint size.
    #[test]
    fn the_log_starts_over_under_a_stream_of_commits() {
        const COMMITS: usize = 3000;
        let (dir, mut store, account) = store_with_account("log");
        for n in 0..COMMITS {
            let put = Change::Put {
                kind: RecordKind::Invoices,
                id: format!("i{n}"),
                owner: Some(format!("c{}", n % 97)),
                body: format!(r#"{{"id":"i{n}"}}"#),
            };
            store.apply(account, &[put]).expect("commit");
        }
        let log = std::fs::metadata(dir.join(format!("{DATABASE_FILE}-wal")))
            .expect("log")
            .len();
        // Four times the checkpoint size; the commits above write two to
        // three times as many frames as that (three or four each).
        let bound = 4 * CHECKPOINT_FRAMES as u64 * (4096 + 24);
        assert!(log < bound, "log of {log} bytes, over {bound}");
        drop(store);
        let store = Store::open(&dir).expect("reopen");
        let mut invoices = 0;
        store
            .replay_log(account, |entry| {
                if let LogEntry::Put {
                    kind: RecordKind::Invoices,
                    ..
                } = entry
                {
                    invoices += 1;
                }
                Ok(())
            })
            .expect("replay");
        assert_eq!(invoices, COMMITS);
        drop(store);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
