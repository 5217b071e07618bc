//! SQLite persistence: accounts, API keys (hashes only) and every accepted
//! record as the JSON the core stores.
//!
//! The database runs in WAL mode with `synchronous=FULL`, so a committed
//! transaction is on disk before the service answers. A batch is written in
//! one transaction: a crash leaves all of it or none.
//!
//! Checkpoints run on a thread of their own (see [`checkpoint`]), also
//! `synchronous=FULL`, for the store's commits and those of the event
//! tables' connection. Each writing connection keeps a page cache of
//! [`WRITER_CACHE_KIB`].
//!
//! Records are kept as a log of writes (see [`record_log`]), replayed into
//! each account's ledger at start.

mod accounts;
mod checkpoint;
mod fx_rates;
mod record_log;
mod users;

use crate::error::{ApiError, StorageFault};
pub use accounts::{AccountReads, AccountRow, KeyRow};
use checkpoint::Checkpointer;
use fx_rates::{add_fx_rates, fx_rates, key_fx_rates};
pub use record_log::{KINDS_IN_REPLAY_ORDER, LogEntry};
use rusqlite::{Connection, params};
use serde_json::Value;
use std::path::Path;
use std::sync::{Arc, Mutex};
use submetrics::{Ledger, RecordKind};
pub use users::{InvitationRow, SessionRow, UserReads, UserRow};

/// File name of the database inside the data directory.
pub const DATABASE_FILE: &str = "submetrics.db";

/// The page cache of each connection that writes (in KiB, as SQLite's
/// negative `cache_size` counts): large batches insert into indexes keyed
/// by random ids (events, facts), and SQLite's default of 2 MiB made them
/// read back and spill pages within each transaction.
pub const WRITER_CACHE_KIB: i64 = 64 * 1024;

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
                    serde_json::to_string(&invoice),
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

/// The database's state as `/health` reports it: a fault that keeps it
/// from taking writes (read-only, full, failing I/O), noted at open and by
/// every record, FX rate and account write, and cleared by the next write
/// that succeeds. Shared, so it is read without waiting for the store.
#[derive(Clone, Default)]
pub struct Health(Arc<Mutex<Option<StorageFault>>>);

impl Health {
    /// The fault the last write met, if the database has one.
    pub fn fault(&self) -> Option<StorageFault> {
        *self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Notes the outcome of a write and hands it back.
    fn note<T>(&self, outcome: Result<T, ApiError>) -> Result<T, ApiError> {
        let mut fault = self.0.lock().unwrap_or_else(|p| p.into_inner());
        match &outcome {
            Ok(_) => *fault = None,
            Err(error) => {
                // Another process's lock passes by itself.
                if let Some(found) = error.storage_fault().filter(|f| *f != StorageFault::Busy) {
                    *fault = Some(found);
                }
            }
        }
        outcome
    }
}

/// A read-only connection to the database beside the store's (see
/// [`Store::reader`]).
pub struct Reader {
    connection: Connection,
}

impl Reader {
    /// A read-only connection to the database file at `path`.
    pub fn open(path: &Path) -> Result<Reader, ApiError> {
        let connection = Connection::open_with_flags(
            path,
            rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY | rusqlite::OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )
        .map_err(ApiError::storage)?;
        connection
            .busy_timeout(std::time::Duration::from_secs(5))
            .map_err(ApiError::storage)?;
        Ok(Reader { connection })
    }

    /// Every stored FX rate row of an account, oldest first.
    pub fn fx_rates(&self, account: i64) -> Result<Vec<Value>, ApiError> {
        fx_rates(&self.connection, account)
    }

    /// Hands every entry of an account's record log to `each`, oldest
    /// first; stops at the first error `each` answers.
    pub fn replay_log(
        &self,
        account: i64,
        each: impl FnMut(LogEntry) -> Result<(), ApiError>,
    ) -> Result<(), ApiError> {
        record_log::replay_log(&self.connection, account, each)
    }
}

/// The store's reads, on the store's own connection or on a [`Reader`]'s:
/// a read on a reader never waits for a write of the store.
pub trait Reads {
    fn connection(&self) -> &Connection;

    /// A page of an account's stored FX rate rows, in date order (then by
    /// currency), and how many there are in all.
    fn fx_rates_page(
        &self,
        account: i64,
        limit: usize,
        offset: usize,
    ) -> Result<(Vec<Value>, usize), ApiError> {
        let count: i64 = self
            .connection()
            .query_row(
                "SELECT COUNT(*) FROM fx_rates WHERE account_id = ?1",
                [account],
                |row| row.get(0),
            )
            .map_err(ApiError::storage)?;
        let mut statement = self
            .connection()
            .prepare_cached(
                "SELECT body FROM fx_rates WHERE account_id = ?1 ORDER BY date, currency, seq LIMIT ?2 OFFSET ?3",
            )
            .map_err(ApiError::storage)?;
        let bounded = |n: usize| i64::try_from(n).unwrap_or(i64::MAX);
        let bodies = statement
            .query_map(params![account, bounded(limit), bounded(offset)], |row| {
                row.get::<_, String>(0)
            })
            .map_err(ApiError::storage)?;
        let mut rows = Vec::new();
        for body in bodies {
            rows.push(parse(&body.map_err(ApiError::storage)?)?);
        }
        Ok((rows, usize::try_from(count).unwrap_or(0)))
    }
}

impl Reads for Store {
    fn connection(&self) -> &Connection {
        &self.connection
    }
}

impl Reads for Reader {
    fn connection(&self) -> &Connection {
        &self.connection
    }
}

pub struct Store {
    connection: Connection,
    /// The database file, for [`Store::reader`].
    path: std::path::PathBuf,
    health: Health,
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
        create_private(&path)?;
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
                     body TEXT NOT NULL,
                     date TEXT,
                     currency TEXT
                 );",
            )
            .map_err(ApiError::storage)?;
        connection
            .pragma_update(None, "cache_size", -WRITER_CACHE_KIB)
            .map_err(ApiError::storage)?;
        key_fx_rates(&mut connection)?;
        record_log::open(&mut connection)?;
        users::open(&connection)?;
        let writes = Arc::new(Mutex::new(()));
        let checkpointer = Checkpointer::start(&path, &mut connection, &writes)?;
        let health = Health::default();
        if connection
            .is_readonly(rusqlite::MAIN_DB)
            .map_err(ApiError::storage)?
        {
            *health.0.lock().unwrap_or_else(|p| p.into_inner()) = Some(StorageFault::ReadOnly);
        }
        Ok(Store {
            connection,
            path,
            health,
            writes,
            _checkpointer: checkpointer,
        })
    }

    /// Makes the commits of `connection`, another writer of this database,
    /// leave checkpoints to the store's checkpoint thread, as the store's
    /// own commits do. Returns the lock a record write holds while it
    /// commits, which the other writer must hold while it commits a stream
    /// of writes too: the thread's second pass holds it so as to copy the
    /// whole log, and then the log starts over.
    pub fn share_checkpoints(
        &self,
        connection: &mut Connection,
    ) -> Result<Arc<Mutex<()>>, ApiError> {
        self._checkpointer.serve(connection)?;
        Ok(Arc::clone(&self.writes))
    }

    /// A connection of its own for reading what is committed, so a long
    /// read (a ledger's rebuild) does not hold the store.
    pub fn reader(&self) -> Result<Reader, ApiError> {
        Reader::open(&self.path)
    }

    /// Stores FX rate rows, inside the transaction of [`Store::begin`],
    /// each in place of the account's stored row of the same date and
    /// currency (which goes last in the list). `rows` must be rows the core
    /// has read.
    pub fn add_fx_rates(&mut self, account: i64, rows: &[Value]) -> Result<(), ApiError> {
        let outcome = add_fx_rates(&self.connection, account, rows);
        self.health.note(outcome)
    }

    /// Applies record changes in one transaction.
    #[cfg(test)]
    pub fn apply(&mut self, account: i64, changes: &[Change]) -> Result<(), ApiError> {
        if changes.is_empty() {
            return Ok(());
        }
        self.begin()?;
        self.commit(account, changes)
    }

    /// How long a write waits for another connection's write lock.
    pub fn set_busy_timeout(&self, timeout: std::time::Duration) -> Result<(), ApiError> {
        self.connection
            .busy_timeout(timeout)
            .map_err(ApiError::storage)
    }

    /// Starts a write transaction holding the database's write lock
    /// (`BEGIN IMMEDIATE`): while another connection holds it, this waits
    /// up to the busy timeout and fails with `storage_unavailable`. Once it
    /// succeeds, the transaction's statements and its commit wait for no
    /// other connection. A caller takes this before any lock its readers
    /// need, so they never wait out another process's lock.
    ///
    /// Every statement of a record write, `BEGIN` and `COMMIT` included, is
    /// prepared once per connection and kept: a single post commits alone
    /// when the service is not busy, and preparing those statements each
    /// time cost more than running them.
    pub fn begin(&mut self) -> Result<(), ApiError> {
        match run_cached(&self.connection, "BEGIN IMMEDIATE") {
            Ok(()) => Ok(()),
            Err(error) => self.health.note(Err(error)),
        }
    }

    /// Appends record `changes` of an account to the log and commits the
    /// transaction of [`Store::begin`] (with what else it holds); a
    /// failure leaves nothing of the transaction.
    pub fn commit(&mut self, account: i64, changes: &[Change]) -> Result<(), ApiError> {
        let _writes = self.writes.lock().unwrap_or_else(|p| p.into_inner());
        let outcome = record_log::append(&self.connection, account, changes)
            .and_then(|()| run_cached(&self.connection, "COMMIT"));
        if outcome.is_err() {
            self.rollback();
        }
        self.health.note(outcome)
    }

    /// Rolls back the open transaction, if one is open (a failed commit may
    /// already have rolled back by itself).
    pub fn rollback(&self) {
        if !self.connection.is_autocommit() {
            let _ = self.connection.execute_batch("ROLLBACK");
        }
    }

    /// What the service reports of the database's state, readable without
    /// the store.
    pub fn health(&self) -> Health {
        self.health.clone()
    }

    /// Closes the database: the checkpoint thread stops, and the last
    /// connection copies the write-ahead log into the database file and
    /// removes it.
    pub fn close(self) -> Result<(), ApiError> {
        let Store {
            connection,
            _checkpointer,
            ..
        } = self;
        drop(_checkpointer);
        connection
            .close()
            .map_err(|(_, error)| ApiError::storage(error))
    }
}

/// Creates the database file, if it does not exist yet, readable and
/// writable by its owner only; SQLite gives its log files the same mode.
fn create_private(path: &Path) -> Result<(), ApiError> {
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    match options.open(path) {
        Ok(_) => Ok(()),
        Err(error) if error.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
        Err(error) => Err(ApiError::internal(format!(
            "cannot create the database {}: {error}",
            path.display()
        ))),
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
        // The commits above write 9,000 to 12,000 frames (three or four
        // each): a log that never started over would hold them all. Eight
        // times the checkpoint size leaves room for a checkpoint thread that
        // falls behind on a loaded machine (seen: five and a half times).
        let bound = 8 * CHECKPOINT_FRAMES as u64 * (4096 + 24);
        assert!(log < bound, "log of {log} bytes, over {bound}");
        drop(store);
        let store = Store::open(&dir).expect("reopen");
        let mut invoices = 0;
        store
            .reader()
            .expect("reader")
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
