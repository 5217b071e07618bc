//! The record log: every accepted record write, appended in the order the
//! account's ledger applied it.
//!
//! A put stores the record's JSON text: an invoice read from its own text
//! (a JSON batch or an NDJSON import) as it was sent, which reads back to
//! the same invoice, any other record as the ledger holds it. A deletion
//! stores the kind and id with no text. Nothing is updated in place and the log has no index by
//! record id, so a commit writes the log's last pages and nothing else: an
//! index by id put a page at a random place of the database into every
//! commit for every new record, and copying those pages back from the
//! write-ahead log held up the commits beside it.
//!
//! Replaying the log in order into an empty ledger (after the account's
//! settings and FX rates) gives the ledger that wrote it: each write is
//! replayed against the state it was first applied to. Replaced and deleted
//! records stay in the log until a rewrite ([`Store::rewrite_log`]) keeps
//! only the living ones, each account's records by kind in ledger order.
//!
//! Databases from before the log kept one row per record in a table
//! `records`; on open its rows move into the log, by account, then kind in
//! replay order (data sources, customers, plans, plan groups, invoices),
//! then the order they were first stored, which is the order they were
//! loaded in. That takes one transaction (about 15 seconds for a million
//! invoices); the pages the old table held stay in the database file, free
//! for the log's next rows.

use super::{Change, Store, kind_name, parse};
use crate::error::ApiError;
use rusqlite::{Connection, OptionalExtension, params};
use serde_json::Value;
use submetrics::RecordKind;

/// The log's table, under `name`. An entry's `owner` is an invoice's
/// customer, kept for whoever inspects the database.
fn create_table(name: &str) -> String {
    format!(
        "CREATE TABLE IF NOT EXISTS {name} (
             seq INTEGER PRIMARY KEY,
             account_id INTEGER NOT NULL REFERENCES accounts(id),
             kind TEXT NOT NULL,
             id TEXT NOT NULL,
             owner TEXT,
             body TEXT
         );"
    )
}

/// Each account's entries in order: new entries go to the end of their
/// account's range, so the index adds no page at a random place either.
const CREATE_INDEX: &str =
    "CREATE INDEX IF NOT EXISTS record_log_by_account ON record_log(account_id, seq);";

/// Where a rewrite writes the new log before it replaces the old one.
const REWRITE_TABLE: &str = "record_log_rewrite";
/// A rewrite commits after this many records, so the write-ahead log
/// stays small; the old log stays in force until the last commit.
const REWRITE_COMMIT_EVERY: usize = 50_000;

/// Creates the log, drops what an interrupted rewrite left, and moves the
/// rows of an older database's `records` table into the log.
pub(super) fn open(connection: &mut Connection) -> Result<(), ApiError> {
    connection
        .execute_batch(&format!(
            "{}
             {CREATE_INDEX}
             DROP TABLE IF EXISTS {REWRITE_TABLE};",
            create_table("record_log")
        ))
        .map_err(ApiError::storage)?;
    let older: Option<String> = connection
        .query_row(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'records'",
            [],
            |row| row.get(0),
        )
        .optional()
        .map_err(ApiError::storage)?;
    if older.is_some() {
        let tx = connection.transaction().map_err(ApiError::storage)?;
        let rank_of_kind: String = KINDS_IN_REPLAY_ORDER
            .iter()
            .enumerate()
            .map(|(rank, kind)| format!(" WHEN '{}' THEN {rank}", kind_name(*kind)))
            .collect();
        tx.execute_batch(&format!(
            "INSERT INTO record_log (account_id, kind, id, owner, body)
                 SELECT account_id, kind, id, owner, body FROM records
                 ORDER BY account_id, CASE kind{rank_of_kind} END, seq;
             DROP TABLE records;"
        ))
        .map_err(ApiError::storage)?;
        tx.commit().map_err(ApiError::storage)?;
        shrink_write_ahead_log(connection);
    }
    Ok(())
}

/// Copies the whole write-ahead log into the database and empties its file,
/// after a migration or rewrite wrote it far beyond its usual size. Best
/// effort: should a checkpoint be running beside it, the log shrinks later.
fn shrink_write_ahead_log(connection: &Connection) {
    let _ = connection.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()));
}

/// Appends `changes` to the log, inside the caller's transaction.
pub(super) fn append(
    connection: &Connection,
    account: i64,
    changes: &[Change],
) -> Result<(), ApiError> {
    let mut insert = connection
        .prepare_cached(
            "INSERT INTO record_log (account_id, kind, id, owner, body) VALUES (?1, ?2, ?3, ?4, ?5)",
        )
        .map_err(ApiError::storage)?;
    for change in changes {
        let (kind, id, owner, body) = columns(change);
        insert
            .execute(params![account, kind, id, owner, body])
            .map_err(ApiError::storage)?;
    }
    Ok(())
}

/// A change as the log's columns: kind, id, owner and body (none for a
/// deletion).
fn columns(change: &Change) -> (&'static str, &str, Option<&str>, Option<&str>) {
    match change {
        Change::Put {
            kind,
            id,
            owner,
            body,
        } => (kind_name(*kind), id, owner.as_deref(), Some(body)),
        Change::Delete { kind, id } => (kind_name(*kind), id, None, None),
    }
}

/// One entry of the record log.
#[derive(Debug, Clone, PartialEq)]
pub enum LogEntry {
    /// The record as it was stored.
    Put { kind: RecordKind, record: Value },
    /// The record was deleted.
    Delete { kind: RecordKind, id: String },
}

/// Every record kind, each after the kinds it refers to: the order in
/// which an older database's rows, and a rewritten log, list an account's
/// records.
pub const KINDS_IN_REPLAY_ORDER: [RecordKind; 5] = [
    RecordKind::DataSources,
    RecordKind::Customers,
    RecordKind::Plans,
    RecordKind::PlanGroups,
    RecordKind::Invoices,
];

/// The record kind a log row names.
fn kind_of(name: &str) -> Option<RecordKind> {
    KINDS_IN_REPLAY_ORDER
        .into_iter()
        .find(|kind| kind_name(*kind) == name)
}

/// Hands every entry of an account's record log to `each`, oldest first;
/// stops at the first error `each` answers.
pub(super) fn replay_log(
    connection: &Connection,
    account: i64,
    mut each: impl FnMut(LogEntry) -> Result<(), ApiError>,
) -> Result<(), ApiError> {
    let mut statement = connection
        .prepare("SELECT kind, id, body FROM record_log WHERE account_id = ?1 ORDER BY seq")
        .map_err(ApiError::storage)?;
    let mut rows = statement.query([account]).map_err(ApiError::storage)?;
    while let Some(row) = rows.next().map_err(ApiError::storage)? {
        let name: String = row.get(0).map_err(ApiError::storage)?;
        let kind = kind_of(&name).ok_or_else(|| {
            ApiError::internal(format!("the record log names an unknown kind `{name}`"))
        })?;
        let body: Option<String> = row.get(2).map_err(ApiError::storage)?;
        each(match body {
            Some(body) => LogEntry::Put {
                kind,
                record: parse(&body)?,
            },
            None => LogEntry::Delete {
                kind,
                id: row.get(1).map_err(ApiError::storage)?,
            },
        })?;
    }
    Ok(())
}

impl Store {
    /// How many entries the record log holds, over every account.
    pub fn log_len(&self) -> Result<u64, ApiError> {
        self.connection
            .query_row("SELECT COUNT(*) FROM record_log", [], |row| {
                row.get::<_, i64>(0)
            })
            .map(|entries| entries.max(0) as u64)
            .map_err(ApiError::storage)
    }

    /// Replaces the whole record log (every account's) with the puts
    /// `write` hands to its argument, as `(account, change)`, in that order.
    ///
    /// The new log is written beside the old one in commits of
    /// [`REWRITE_COMMIT_EVERY`] records and takes its place in one last
    /// transaction: until then the old log is the one in force, and a crash
    /// leaves it whole (the next open drops the partial new one).
    pub fn rewrite_log(
        &mut self,
        write: impl FnOnce(&mut dyn FnMut(i64, Change) -> Result<(), ApiError>) -> Result<(), ApiError>,
    ) -> Result<(), ApiError> {
        let _writes = self.writes.lock().unwrap_or_else(|p| p.into_inner());
        let connection = &self.connection;
        connection
            .execute_batch(&format!(
                "DROP TABLE IF EXISTS {REWRITE_TABLE};
                 {}
                 BEGIN;",
                create_table(REWRITE_TABLE)
            ))
            .map_err(ApiError::storage)?;
        let insert_sql = format!(
            "INSERT INTO {REWRITE_TABLE} (account_id, kind, id, owner, body)
             VALUES (?1, ?2, ?3, ?4, ?5)"
        );
        let mut written: usize = 0;
        let outcome = write(&mut |account, change| {
            let mut insert = connection
                .prepare_cached(&insert_sql)
                .map_err(ApiError::storage)?;
            let (kind, id, owner, body) = columns(&change);
            insert
                .execute(params![account, kind, id, owner, body])
                .map_err(ApiError::storage)?;
            written += 1;
            if written.is_multiple_of(REWRITE_COMMIT_EVERY) {
                connection
                    .execute_batch("COMMIT; BEGIN;")
                    .map_err(ApiError::storage)?;
            }
            Ok(())
        })
        .and_then(|()| {
            connection
                .execute_batch(&format!(
                    "DROP TABLE record_log;
                     ALTER TABLE {REWRITE_TABLE} RENAME TO record_log;
                     {CREATE_INDEX}
                     COMMIT;"
                ))
                .map_err(ApiError::storage)
        });
        if outcome.is_err() {
            if !connection.is_autocommit() {
                let _ = connection.execute_batch("ROLLBACK");
            }
            let _ = connection.execute_batch(&format!("DROP TABLE IF EXISTS {REWRITE_TABLE}"));
        }
        shrink_write_ahead_log(connection);
        outcome
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::tests::store_with_account;
    use serde_json::json;

    /// A put of a record that is only its label.
    fn put(kind: RecordKind, id: &str, label: &str) -> Change {
        Change::Put {
            kind,
            id: id.into(),
            owner: None,
            body: json!({ "label": label }).to_string(),
        }
    }

    fn entries(store: &Store, account: i64) -> Vec<LogEntry> {
        let mut entries = Vec::new();
        store
            .reader()
            .expect("reader")
            .replay_log(account, |entry| {
                entries.push(entry);
                Ok(())
            })
            .expect("replay");
        entries
    }

    fn put_entry(kind: RecordKind, label: &str) -> LogEntry {
        LogEntry::Put {
            kind,
            record: json!({ "label": label }),
        }
    }

    fn tables(store: &Store) -> Vec<String> {
        store
            .connection
            .prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
            .and_then(|mut statement| {
                statement
                    .query_map([], |row| row.get(0))?
                    .collect::<Result<_, _>>()
            })
            .expect("tables")
    }

    #[test]
    fn entries_replay_in_the_order_they_were_written() {
        let (dir, mut store, account) = store_with_account("log-order");
        let customer = put(RecordKind::Customers, "c1", "customer");
        let first = put(RecordKind::Invoices, "i1", "first");
        store.apply(account, &[customer, first]).expect("commit");
        let deleted = Change::Delete {
            kind: RecordKind::Invoices,
            id: "i1".into(),
        };
        store.apply(account, &[deleted]).expect("commit");
        let again = put(RecordKind::Invoices, "i1", "again");
        store.apply(account, &[again]).expect("commit");
        drop(store);
        let store = Store::open(&dir).expect("reopen");
        assert_eq!(
            entries(&store, account),
            [
                put_entry(RecordKind::Customers, "customer"),
                put_entry(RecordKind::Invoices, "first"),
                LogEntry::Delete {
                    kind: RecordKind::Invoices,
                    id: "i1".into()
                },
                put_entry(RecordKind::Invoices, "again"),
            ]
        );
        assert_eq!(entries(&store, account + 1), []);
        drop(store);
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// An older database's one row per record moves into the log by kind
    /// in replay order, each kind in the order its records were first
    /// stored, and its table goes.
    #[test]
    fn an_older_database_moves_its_records_into_the_log() {
        let (dir, store, account) = store_with_account("log-older");
        store
            .connection
            .execute_batch(&format!(
                r#"CREATE TABLE records (
                     account_id INTEGER NOT NULL REFERENCES accounts(id),
                     kind TEXT NOT NULL,
                     id TEXT NOT NULL,
                     owner TEXT,
                     seq INTEGER NOT NULL,
                     body TEXT NOT NULL,
                     PRIMARY KEY (account_id, kind, id)
                 );
                 INSERT INTO records VALUES
                     ({account}, 'invoices', 'i1', 'c1', 1, '{{"label":"invoice 1"}}'),
                     ({account}, 'customers', 'c1', NULL, 2, '{{"label":"customer 1"}}'),
                     ({account}, 'plans', 'p1', NULL, 3, '{{"label":"plan 1"}}'),
                     ({account}, 'invoices', 'i0', 'c0', 4, '{{"label":"invoice 0"}}'),
                     ({account}, 'customers', 'c0', NULL, 5, '{{"label":"customer 0"}}');"#
            ))
            .expect("the older table");
        drop(store);
        let store = Store::open(&dir).expect("reopen");
        assert_eq!(
            entries(&store, account),
            [
                put_entry(RecordKind::Customers, "customer 1"),
                put_entry(RecordKind::Customers, "customer 0"),
                put_entry(RecordKind::Plans, "plan 1"),
                put_entry(RecordKind::Invoices, "invoice 1"),
                put_entry(RecordKind::Invoices, "invoice 0"),
            ]
        );
        assert!(!tables(&store).contains(&"records".to_string()));
        drop(store);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_rewrite_replaces_the_log_and_a_failed_one_leaves_it_whole() {
        let (dir, mut store, account) = store_with_account("log-rewrite");
        let old = [
            put(RecordKind::Customers, "c1", "old customer"),
            put(RecordKind::Customers, "c1", "customer"),
        ];
        store.apply(account, &old).expect("commit");
        let before = entries(&store, account);
        let failed = store.rewrite_log(|write| {
            write(account, put(RecordKind::Customers, "c1", "partial"))?;
            Err(ApiError::internal("stopped"))
        });
        assert!(failed.is_err());
        assert_eq!(entries(&store, account), before);
        assert!(!tables(&store).contains(&REWRITE_TABLE.to_string()));
        store
            .rewrite_log(|write| {
                write(account, put(RecordKind::Customers, "c1", "customer"))?;
                write(account, put(RecordKind::Invoices, "i1", "invoice"))
            })
            .expect("rewrite");
        assert_eq!(store.log_len().expect("length"), 2);
        let rewritten = [
            put_entry(RecordKind::Customers, "customer"),
            put_entry(RecordKind::Invoices, "invoice"),
        ];
        assert_eq!(entries(&store, account), rewritten);
        // New writes follow the rewritten log.
        let next = put(RecordKind::Invoices, "i2", "next");
        store.apply(account, &[next]).expect("commit");
        assert_eq!(entries(&store, account).len(), 3);
        drop(store);
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// What a rewrite that stopped half way (a crash) left beside the log
    /// goes at the next open.
    #[test]
    fn an_interrupted_rewrite_is_dropped_on_open() {
        let (dir, store, account) = store_with_account("log-interrupted");
        store
            .connection
            .execute_batch(&create_table(REWRITE_TABLE))
            .expect("a partial rewrite");
        drop(store);
        let store = Store::open(&dir).expect("reopen");
        assert!(!tables(&store).contains(&REWRITE_TABLE.to_string()));
        assert_eq!(entries(&store, account), []);
        drop(store);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
