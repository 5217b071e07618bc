//! The outbound tables, in the service's SQLite database on a connection of
//! their own: webhook subscriptions, the facts events were derived from,
//! the events, the outbox of deliveries and the digests sent.
//!
//! An event and its deliveries are written in one transaction (with the
//! fact that fired them), `synchronous=FULL`: an event accepted is on disk
//! with every delivery it owes, and a crash loses none of them.

mod deliveries;
mod events;
mod webhooks;

use crate::error::ApiError;
use crate::store::Store;
use rusqlite::{Connection, OptionalExtension, params};
use serde_json::{Value, json};
use std::path::Path;
use std::sync::{Arc, Mutex};

const SCHEMA: &str = "
    CREATE TABLE IF NOT EXISTS webhooks (
        id TEXT PRIMARY KEY,
        account_id INTEGER NOT NULL REFERENCES accounts(id),
        url TEXT NOT NULL,
        events TEXT NOT NULL,
        enabled INTEGER NOT NULL,
        description TEXT NOT NULL,
        secret TEXT NOT NULL,
        failing_since TEXT,
        created TEXT NOT NULL,
        updated TEXT NOT NULL
    );
    CREATE INDEX IF NOT EXISTS webhooks_by_account ON webhooks(account_id, created);
    CREATE TABLE IF NOT EXISTS event_facts (
        account_id INTEGER NOT NULL,
        fact TEXT NOT NULL,
        customer_id TEXT NOT NULL,
        type TEXT NOT NULL,
        fingerprint TEXT NOT NULL,
        revision INTEGER NOT NULL,
        live INTEGER NOT NULL,
        event_id TEXT NOT NULL,
        PRIMARY KEY (account_id, fact)
    ) WITHOUT ROWID;
    CREATE INDEX IF NOT EXISTS event_facts_by_customer ON event_facts(account_id, customer_id);
    CREATE TABLE IF NOT EXISTS events (
        seq INTEGER PRIMARY KEY,
        account_id INTEGER NOT NULL,
        id TEXT NOT NULL,
        type TEXT NOT NULL,
        customer_id TEXT,
        created TEXT NOT NULL,
        payload TEXT NOT NULL,
        UNIQUE (account_id, id)
    );
    CREATE TABLE IF NOT EXISTS outbox (
        seq INTEGER PRIMARY KEY,
        account_id INTEGER NOT NULL,
        channel TEXT NOT NULL,
        target TEXT NOT NULL,
        event_id TEXT NOT NULL,
        event_type TEXT NOT NULL,
        body TEXT NOT NULL,
        status TEXT NOT NULL,
        attempts INTEGER NOT NULL DEFAULT 0,
        next_attempt INTEGER NOT NULL,
        created TEXT NOT NULL,
        last_attempt TEXT,
        last_status INTEGER,
        last_error TEXT,
        delivered TEXT
    );
    CREATE INDEX IF NOT EXISTS outbox_pending ON outbox(status, channel, target, seq);
    CREATE INDEX IF NOT EXISTS outbox_by_target ON outbox(channel, target, seq);
    CREATE TABLE IF NOT EXISTS digests (
        account_id INTEGER NOT NULL,
        frequency TEXT NOT NULL,
        period_end TEXT NOT NULL,
        created TEXT NOT NULL,
        PRIMARY KEY (account_id, frequency, period_end)
    );
";

/// Where an outbox entry goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Channel {
    /// A webhook subscription; the target is its id.
    Webhook,
    /// A chat incoming webhook; the target is its URL.
    Chat,
    /// An email; the target is the recipients, comma-separated.
    Email,
}

impl Channel {
    pub fn as_str(self) -> &'static str {
        match self {
            Channel::Webhook => "webhook",
            Channel::Chat => "chat",
            Channel::Email => "email",
        }
    }

    fn parse(text: &str) -> Channel {
        match text {
            "chat" => Channel::Chat,
            "email" => Channel::Email,
            _ => Channel::Webhook,
        }
    }
}

/// The state of an outbox entry.
pub const PENDING: &str = "pending";
pub const DELIVERED: &str = "delivered";
/// Every attempt of the schedule failed; a redelivery starts over.
pub const FAILED: &str = "failed";
/// Its webhook was deleted before it was delivered.
pub const CANCELLED: &str = "cancelled";

/// One stored webhook subscription.
#[derive(Debug, Clone)]
pub struct Webhook {
    pub id: String,
    pub account_id: i64,
    pub url: String,
    /// Event types sent; empty sends every type.
    pub events: Vec<String>,
    pub enabled: bool,
    pub description: String,
    pub secret: String,
    /// When the last delivery gave up after its whole retry schedule
    /// (cleared by the next success).
    pub failing_since: Option<String>,
    pub created: String,
    pub updated: String,
}

impl Webhook {
    /// Whether the subscription takes events of `event_type`.
    pub fn wants(&self, event_type: &str) -> bool {
        self.enabled && (self.events.is_empty() || self.events.iter().any(|e| e == event_type))
    }

    /// The JSON answer for a subscription (never its secret).
    pub fn to_json(&self) -> Value {
        let status = if !self.enabled {
            "disabled"
        } else if self.failing_since.is_some() {
            "failing"
        } else {
            "active"
        };
        json!({
            "id": self.id,
            "url": self.url,
            "events": self.events,
            "enabled": self.enabled,
            "description": self.description,
            "status": status,
            "failing_since": self.failing_since,
            "created_at": self.created,
            "updated_at": self.updated,
        })
    }
}

/// One outbox entry: one event (or digest) for one target.
#[derive(Debug, Clone)]
pub struct Delivery {
    pub seq: i64,
    pub channel: Channel,
    pub target: String,
    pub event_id: String,
    pub event_type: String,
    pub body: String,
    pub status: String,
    pub attempts: i64,
    /// Unix milliseconds of the next attempt while pending.
    pub next_attempt: i64,
    pub created: String,
    pub last_attempt: Option<String>,
    pub last_status: Option<i64>,
    pub last_error: Option<String>,
    pub delivered: Option<String>,
}

impl Delivery {
    /// The JSON form in a delivery log (the body only as its event id).
    /// A pending delivery never scheduled (queued due at once, stored as
    /// 0) is next attempted from the time it was queued.
    pub fn to_json(&self) -> Value {
        let next = (self.status == PENDING)
            .then(|| match self.next_attempt {
                0 => chrono::DateTime::parse_from_rfc3339(&self.created)
                    .ok()
                    .map(|at| at.to_utc()),
                at => chrono::DateTime::from_timestamp_millis(at),
            })
            .flatten()
            .map(|at| at.to_rfc3339_opts(chrono::SecondsFormat::Millis, true));
        json!({
            "id": self.seq.to_string(),
            "event_id": self.event_id,
            "event_type": self.event_type,
            "status": self.status,
            "attempts": self.attempts,
            "next_attempt_at": next,
            "last_attempt_at": self.last_attempt,
            "last_status_code": self.last_status,
            "last_error": self.last_error,
            "created_at": self.created,
            "delivered_at": self.delivered,
        })
    }
}

/// What an attempt at a delivery came to.
#[derive(Debug, Clone)]
pub struct Attempt {
    pub at: String,
    /// The HTTP status answered, if any.
    pub status: Option<i64>,
    /// Why the attempt failed; `None` when it succeeded.
    pub error: Option<String>,
}

/// A stored fact: what an event was last fired for (see
/// [`crate::outbound::facts`]).
#[derive(Debug, Clone)]
pub struct StoredFact {
    pub customer: String,
    pub event_type: String,
    pub fingerprint: String,
    pub revision: i64,
    pub live: bool,
    pub event_id: String,
}

/// An event to record, with the deliveries it owes.
pub struct NewEvent {
    pub id: String,
    pub event_type: String,
    pub customer: Option<String>,
    pub created: String,
    pub payload: String,
    /// Where to deliver it: (channel, target, body).
    pub deliveries: Vec<(Channel, String, String)>,
}

/// A change to the fact table, written with the events.
pub struct FactChange {
    pub fact: String,
    pub stored: StoredFact,
}

pub struct OutboundDb {
    connection: Connection,
    /// Held while [`OutboundDb::record`] writes, once checkpoints are
    /// shared with the store.
    writes: Option<Arc<Mutex<()>>>,
}

const WEBHOOK_COLUMNS: &str =
    "id, account_id, url, events, enabled, description, secret, failing_since, created, updated";
const DELIVERY_COLUMNS: &str = "seq, channel, target, event_id, event_type, body, status, attempts, next_attempt, created, last_attempt, last_status, last_error, delivered";

impl OutboundDb {
    /// Opens the database file at `path` (created by the store) and creates
    /// the outbound tables that are missing.
    pub fn open(path: &Path) -> Result<OutboundDb, ApiError> {
        let connection = Connection::open(path).map_err(ApiError::storage)?;
        connection
            .execute_batch(
                "PRAGMA journal_mode = WAL;
                 PRAGMA synchronous = FULL;
                 PRAGMA busy_timeout = 5000;",
            )
            .map_err(ApiError::storage)?;
        connection
            .pragma_update(None, "cache_size", -crate::store::WRITER_CACHE_KIB)
            .map_err(ApiError::storage)?;
        connection
            .execute_batch(SCHEMA)
            .map_err(ApiError::storage)?;
        Ok(OutboundDb {
            connection,
            writes: None,
        })
    }

    /// Leaves the checkpoints of this connection's commits to the store's
    /// checkpoint thread (see [`Store::share_checkpoints`]); [`record`]
    /// then commits holding the store's record writes' lock.
    ///
    /// [`record`]: OutboundDb::record
    pub fn share_checkpoints_of(&mut self, store: &Store) -> Result<(), ApiError> {
        self.writes = Some(store.share_checkpoints(&mut self.connection)?);
        Ok(())
    }

    /// A read-only connection to the tables [`OutboundDb::open`] made.
    pub fn open_reader(path: &Path) -> Result<OutboundDb, ApiError> {
        let connection = Connection::open_with_flags(
            path,
            rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY | rusqlite::OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )
        .map_err(ApiError::storage)?;
        connection
            .busy_timeout(std::time::Duration::from_secs(5))
            .map_err(ApiError::storage)?;
        Ok(OutboundDb {
            connection,
            writes: None,
        })
    }

    /// How long a write waits for another connection's write lock.
    pub fn set_busy_timeout(&self, timeout: std::time::Duration) -> Result<(), ApiError> {
        self.connection
            .busy_timeout(timeout)
            .map_err(ApiError::storage)
    }

    // ---- webhooks -------------------------------------------------------
}

#[cfg(test)]
mod tests {
    use super::events::SELECT_CUSTOMER_FACTS;
    use super::*;

    #[test]
    fn one_customers_facts_are_read_through_the_customer_index() {
        let dir = std::env::temp_dir().join(format!("outbound-plan-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let db = OutboundDb::open(&dir.join("outbound.db")).unwrap();
        let plan: Vec<String> = db
            .connection
            .prepare(&format!("EXPLAIN QUERY PLAN {SELECT_CUSTOMER_FACTS}"))
            .unwrap()
            .query_map(params![1, "c1"], |row| row.get::<_, String>(3))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        drop(db);
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(
            plan,
            [
                "SEARCH event_facts USING INDEX event_facts_by_customer (account_id=? AND customer_id=?)"
            ]
        );
    }

    /// The event tables' commits, sharing the store's checkpoints, let the
    /// log start over as the store's own do: each wakes the checkpoint
    /// thread rather than copying the log inside the commit.
    #[test]
    fn event_commits_share_the_stores_checkpoints() {
        const COMMITS: usize = 2000;
        let dir = std::env::temp_dir().join(format!(
            "submetrics-outbound-checkpoints-{}-{:?}",
            std::process::id(),
            std::time::SystemTime::now()
        ));
        let store = Store::open(&dir).unwrap();
        let mut db = OutboundDb::open(&dir.join(crate::store::DATABASE_FILE)).unwrap();
        db.share_checkpoints_of(&store).unwrap();
        for n in 0..COMMITS {
            let id = format!("evt_{n:032x}");
            let fact = FactChange {
                fact: format!("{n:032x}"),
                stored: StoredFact {
                    customer: format!("c{}", n % 97),
                    event_type: "customer.new".into(),
                    fingerprint: "new:100".into(),
                    revision: 0,
                    live: true,
                    event_id: id.clone(),
                },
            };
            let event = NewEvent {
                id,
                event_type: "customer.new".into(),
                customer: Some(format!("c{}", n % 97)),
                created: "2024-03-01T00:00:00.000Z".into(),
                payload: "{}".into(),
                deliveries: Vec::new(),
            };
            db.record(1, &[fact], &[event]).unwrap();
        }
        let log = std::fs::metadata(dir.join(format!("{}-wal", crate::store::DATABASE_FILE)))
            .unwrap()
            .len();
        let facts = db.facts(1, None).unwrap().len();
        drop(db);
        drop(store);
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(facts, COMMITS);
        // Each commit writes a few frames; a log that never started over
        // would hold them all (see the store's test of the same bound).
        let bound = 8 * 1000 * (4096 + 24);
        assert!(log < bound, "log of {log} bytes, over {bound}");
    }
}
