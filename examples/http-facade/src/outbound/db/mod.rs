//! The outbound tables, in the service's SQLite database on a connection of
//! their own: webhook subscriptions, the facts events were derived from,
//! the events, the outbox of deliveries and the digests sent.
//!
//! An event and its deliveries are written in one transaction (with the
//! fact that fired them), `synchronous=FULL`: an event accepted is on disk
//! with every delivery it owes, and a crash loses none of them.

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
    pub fn to_json(&self) -> Value {
        let next = (self.status == PENDING)
            .then(|| chrono::DateTime::from_timestamp_millis(self.next_attempt))
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

    pub fn insert_webhook(&self, hook: &Webhook) -> Result<(), ApiError> {
        self.connection
            .execute(
                &format!("INSERT INTO webhooks ({WEBHOOK_COLUMNS}) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)"),
                params![
                    hook.id,
                    hook.account_id,
                    hook.url,
                    json!(hook.events).to_string(),
                    hook.enabled,
                    hook.description,
                    hook.secret,
                    hook.failing_since,
                    hook.created,
                    hook.updated
                ],
            )
            .map_err(ApiError::storage)?;
        Ok(())
    }

    /// Saves a subscription's url, events, enabled flag and description.
    pub fn update_webhook(&self, hook: &Webhook) -> Result<(), ApiError> {
        self.connection
            .execute(
                "UPDATE webhooks SET url = ?2, events = ?3, enabled = ?4, description = ?5, updated = ?6 WHERE id = ?1",
                params![
                    hook.id,
                    hook.url,
                    json!(hook.events).to_string(),
                    hook.enabled,
                    hook.description,
                    hook.updated
                ],
            )
            .map_err(ApiError::storage)?;
        Ok(())
    }

    /// Deletes a subscription and cancels what it still had pending, in
    /// one transaction; `false` when the account has no such subscription.
    pub fn delete_webhook(&mut self, account: i64, id: &str) -> Result<bool, ApiError> {
        let tx = self.connection.transaction().map_err(ApiError::storage)?;
        let deleted = tx
            .execute(
                "DELETE FROM webhooks WHERE id = ?1 AND account_id = ?2",
                params![id, account],
            )
            .map_err(ApiError::storage)?;
        tx.execute(
            "UPDATE outbox SET status = ?2 WHERE channel = 'webhook' AND target = ?1 AND status = ?3",
            params![id, CANCELLED, PENDING],
        )
        .map_err(ApiError::storage)?;
        tx.commit().map_err(ApiError::storage)?;
        Ok(deleted > 0)
    }

    pub fn webhook(&self, account: i64, id: &str) -> Result<Option<Webhook>, ApiError> {
        self.connection
            .query_row(
                &format!(
                    "SELECT {WEBHOOK_COLUMNS} FROM webhooks WHERE id = ?1 AND account_id = ?2"
                ),
                params![id, account],
                webhook_row,
            )
            .optional()
            .map_err(ApiError::storage)
    }

    /// A subscription by id, whatever its account (for delivery).
    pub fn webhook_by_id(&self, id: &str) -> Result<Option<Webhook>, ApiError> {
        self.connection
            .query_row(
                &format!("SELECT {WEBHOOK_COLUMNS} FROM webhooks WHERE id = ?1"),
                [id],
                webhook_row,
            )
            .optional()
            .map_err(ApiError::storage)
    }

    /// An account's subscriptions, oldest first.
    pub fn webhooks(&self, account: i64) -> Result<Vec<Webhook>, ApiError> {
        let mut statement = self
            .connection
            .prepare_cached(&format!(
                "SELECT {WEBHOOK_COLUMNS} FROM webhooks WHERE account_id = ?1 ORDER BY created, id"
            ))
            .map_err(ApiError::storage)?;
        let rows = statement
            .query_map([account], webhook_row)
            .map_err(ApiError::storage)?;
        rows.collect::<Result<Vec<_>, _>>()
            .map_err(ApiError::storage)
    }

    // ---- facts and events -----------------------------------------------

    /// The stored facts of an account, of one customer or all. One
    /// customer's are read through the customer index, named in the query:
    /// a scan after a batch reads them customer by customer, and SQLite,
    /// left to choose, walks every fact of the account for each (the
    /// primary key's `account_id` prefix), which made a large import's
    /// scans quadratic.
    pub fn facts(
        &self,
        account: i64,
        customer: Option<&str>,
    ) -> Result<Vec<(String, StoredFact)>, ApiError> {
        let mut statement = self
            .connection
            .prepare_cached(if customer.is_some() {
                SELECT_CUSTOMER_FACTS
            } else {
                SELECT_FACTS
            })
            .map_err(ApiError::storage)?;
        let read = |row: &rusqlite::Row<'_>| {
            Ok((
                row.get::<_, String>(0)?,
                StoredFact {
                    customer: row.get(1)?,
                    event_type: row.get(2)?,
                    fingerprint: row.get(3)?,
                    revision: row.get(4)?,
                    live: row.get::<_, i64>(5)? != 0,
                    event_id: row.get(6)?,
                },
            ))
        };
        let rows = match customer {
            Some(customer) => statement.query_map(params![account, customer], read),
            None => statement.query_map(params![account], read),
        }
        .map_err(ApiError::storage)?;
        rows.collect::<Result<Vec<_>, _>>()
            .map_err(ApiError::storage)
    }

    /// The stored payload of an event.
    pub fn event_payload(&self, account: i64, id: &str) -> Result<Option<Value>, ApiError> {
        let text: Option<String> = self
            .connection
            .query_row(
                "SELECT payload FROM events WHERE account_id = ?1 AND id = ?2",
                params![account, id],
                |row| row.get(0),
            )
            .optional()
            .map_err(ApiError::storage)?;
        Ok(text.and_then(|t| serde_json::from_str(&t).ok()))
    }

    /// Writes fact changes, new events and their deliveries in one
    /// transaction. An event whose id is already stored is skipped with its
    /// deliveries (at most one record per event id). Returns how many
    /// deliveries were queued.
    pub fn record(
        &mut self,
        account: i64,
        facts: &[FactChange],
        events: &[NewEvent],
    ) -> Result<usize, ApiError> {
        if facts.is_empty() && events.is_empty() {
            return Ok(0);
        }
        let _writes = self
            .writes
            .as_ref()
            .map(|writes| writes.lock().unwrap_or_else(|p| p.into_inner()));
        let tx = self.connection.transaction().map_err(ApiError::storage)?;
        let mut queued = 0;
        {
            let mut put_fact = tx
                .prepare_cached(
                    "INSERT OR REPLACE INTO event_facts (account_id, fact, customer_id, type, fingerprint, revision, live, event_id)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
                )
                .map_err(ApiError::storage)?;
            for change in facts {
                let fact = &change.stored;
                put_fact
                    .execute(params![
                        account,
                        change.fact,
                        fact.customer,
                        fact.event_type,
                        fact.fingerprint,
                        fact.revision,
                        fact.live,
                        fact.event_id
                    ])
                    .map_err(ApiError::storage)?;
            }
            let mut put_event = tx
                .prepare_cached(
                    "INSERT OR IGNORE INTO events (account_id, id, type, customer_id, created, payload)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                )
                .map_err(ApiError::storage)?;
            let mut put_delivery = tx
                .prepare_cached(
                    "INSERT INTO outbox (account_id, channel, target, event_id, event_type, body, status, next_attempt, created)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, 0, ?8)",
                )
                .map_err(ApiError::storage)?;
            for event in events {
                let added = put_event
                    .execute(params![
                        account,
                        event.id,
                        event.event_type,
                        event.customer,
                        event.created,
                        event.payload
                    ])
                    .map_err(ApiError::storage)?;
                if added == 0 {
                    continue;
                }
                for (channel, target, body) in &event.deliveries {
                    put_delivery
                        .execute(params![
                            account,
                            channel.as_str(),
                            target,
                            event.id,
                            event.event_type,
                            body,
                            PENDING,
                            event.created
                        ])
                        .map_err(ApiError::storage)?;
                    queued += 1;
                }
            }
        }
        tx.commit().map_err(ApiError::storage)?;
        Ok(queued)
    }

    // ---- outbox -----------------------------------------------------------

    /// Queues one delivery outside of an event (a digest, a redelivery);
    /// returns its id.
    pub fn enqueue(
        &self,
        account: i64,
        channel: Channel,
        target: &str,
        event_id: &str,
        event_type: &str,
        body: &str,
    ) -> Result<i64, ApiError> {
        self.connection
            .execute(
                "INSERT INTO outbox (account_id, channel, target, event_id, event_type, body, status, next_attempt, created)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, 0, ?8)",
                params![
                    account,
                    channel.as_str(),
                    target,
                    event_id,
                    event_type,
                    body,
                    PENDING,
                    crate::state::now_text()
                ],
            )
            .map_err(ApiError::storage)?;
        Ok(self.connection.last_insert_rowid())
    }

    /// Stores a delivery that was attempted once, at once (a test send).
    pub fn insert_attempted(
        &self,
        account: i64,
        webhook: &str,
        event_id: &str,
        event_type: &str,
        body: &str,
        attempt: &Attempt,
    ) -> Result<Delivery, ApiError> {
        let status = if attempt.error.is_none() {
            DELIVERED
        } else {
            FAILED
        };
        self.connection
            .execute(
                "INSERT INTO outbox (account_id, channel, target, event_id, event_type, body, status, attempts, next_attempt, created, last_attempt, last_status, last_error, delivered)
                 VALUES (?1, 'webhook', ?2, ?3, ?4, ?5, ?6, 1, 0, ?7, ?7, ?8, ?9, ?10)",
                params![
                    account,
                    webhook,
                    event_id,
                    event_type,
                    body,
                    status,
                    attempt.at,
                    attempt.status,
                    attempt.error,
                    attempt.error.is_none().then_some(&attempt.at)
                ],
            )
            .map_err(ApiError::storage)?;
        let seq = self.connection.last_insert_rowid();
        self.delivery(seq)?
            .ok_or_else(|| ApiError::internal("a stored delivery is missing"))
    }

    pub fn delivery(&self, seq: i64) -> Result<Option<Delivery>, ApiError> {
        self.connection
            .query_row(
                &format!("SELECT {DELIVERY_COLUMNS} FROM outbox WHERE seq = ?1"),
                [seq],
                delivery_row,
            )
            .optional()
            .map_err(ApiError::storage)
    }

    /// The deliveries to one target, newest first, and how many there are.
    pub fn deliveries(
        &self,
        channel: Channel,
        target: &str,
        limit: usize,
        offset: usize,
    ) -> Result<(Vec<Delivery>, usize), ApiError> {
        let mut statement = self
            .connection
            .prepare_cached(&format!(
                "SELECT {DELIVERY_COLUMNS} FROM outbox WHERE channel = ?1 AND target = ?2
                 ORDER BY seq DESC LIMIT ?3 OFFSET ?4"
            ))
            .map_err(ApiError::storage)?;
        let rows = statement
            .query_map(
                params![channel.as_str(), target, limit as i64, offset as i64],
                delivery_row,
            )
            .map_err(ApiError::storage)?
            .collect::<Result<Vec<_>, _>>()
            .map_err(ApiError::storage)?;
        let count: i64 = self
            .connection
            .query_row(
                "SELECT COUNT(*) FROM outbox WHERE channel = ?1 AND target = ?2",
                params![channel.as_str(), target],
                |row| row.get(0),
            )
            .map_err(ApiError::storage)?;
        Ok((rows, count as usize))
    }

    /// The first pending delivery of every target whose turn it may be:
    /// deliveries to one target go strictly in order, so only the oldest
    /// pending one of each is a candidate. Targets of disabled webhooks
    /// wait.
    pub fn heads(&self) -> Result<Vec<Delivery>, ApiError> {
        let mut statement = self
            .connection
            .prepare_cached(&format!(
                "SELECT {DELIVERY_COLUMNS} FROM outbox o
                 WHERE status = 'pending'
                   AND seq = (SELECT MIN(seq) FROM outbox p
                              WHERE p.status = 'pending' AND p.channel = o.channel AND p.target = o.target)
                   AND (channel != 'webhook'
                        OR EXISTS (SELECT 1 FROM webhooks w WHERE w.id = o.target AND w.enabled = 1))
                 ORDER BY next_attempt, seq"
            ))
            .map_err(ApiError::storage)?;
        let rows = statement
            .query_map([], delivery_row)
            .map_err(ApiError::storage)?;
        rows.collect::<Result<Vec<_>, _>>()
            .map_err(ApiError::storage)
    }

    /// Records an attempt: delivered, or failed with the next attempt at
    /// `retry_at` (unix milliseconds), or failed for good when `None`. A
    /// webhook is marked failing when a delivery gives up, and not failing
    /// once one succeeds.
    pub fn record_attempt(
        &mut self,
        delivery: &Delivery,
        attempt: &Attempt,
        retry_at: Option<i64>,
    ) -> Result<(), ApiError> {
        let tx = self.connection.transaction().map_err(ApiError::storage)?;
        let (status, delivered) = match (&attempt.error, retry_at) {
            (None, _) => (DELIVERED, Some(&attempt.at)),
            (Some(_), Some(_)) => (PENDING, None),
            (Some(_), None) => (FAILED, None),
        };
        tx.execute(
            "UPDATE outbox SET status = ?2, attempts = attempts + 1, next_attempt = ?3, last_attempt = ?4,
                 last_status = ?5, last_error = ?6, delivered = ?7
             WHERE seq = ?1 AND status = 'pending'",
            params![
                delivery.seq,
                status,
                retry_at.unwrap_or(0),
                attempt.at,
                attempt.status,
                attempt.error,
                delivered
            ],
        )
        .map_err(ApiError::storage)?;
        if delivery.channel == Channel::Webhook {
            match status {
                DELIVERED => {
                    tx.execute(
                        "UPDATE webhooks SET failing_since = NULL WHERE id = ?1",
                        [&delivery.target],
                    )
                    .map_err(ApiError::storage)?;
                }
                FAILED => {
                    tx.execute(
                        "UPDATE webhooks SET failing_since = COALESCE(failing_since, ?2) WHERE id = ?1",
                        params![delivery.target, attempt.at],
                    )
                    .map_err(ApiError::storage)?;
                }
                _ => {}
            }
        }
        tx.commit().map_err(ApiError::storage)
    }

    // ---- digests ----------------------------------------------------------

    /// Whether the digest of a period was queued already.
    pub fn digest_queued(
        &self,
        account: i64,
        frequency: &str,
        period_end: &str,
    ) -> Result<bool, ApiError> {
        self.connection
            .query_row(
                "SELECT 1 FROM digests WHERE account_id = ?1 AND frequency = ?2 AND period_end = ?3",
                params![account, frequency, period_end],
                |_| Ok(()),
            )
            .optional()
            .map(|found| found.is_some())
            .map_err(ApiError::storage)
    }

    /// Marks a digest period as sent and queues its emails, in one
    /// transaction; `false` (and nothing queued) when it was already sent.
    pub fn record_digest(
        &mut self,
        account: i64,
        frequency: &str,
        period_end: &str,
        recipients: &str,
        event_id: &str,
        body: &str,
    ) -> Result<bool, ApiError> {
        let tx = self.connection.transaction().map_err(ApiError::storage)?;
        let now = crate::state::now_text();
        let added = tx
            .execute(
                "INSERT OR IGNORE INTO digests (account_id, frequency, period_end, created) VALUES (?1, ?2, ?3, ?4)",
                params![account, frequency, period_end, now],
            )
            .map_err(ApiError::storage)?;
        if added > 0 {
            tx.execute(
                "INSERT INTO outbox (account_id, channel, target, event_id, event_type, body, status, next_attempt, created)
                 VALUES (?1, 'email', ?2, ?3, 'digest', ?4, ?5, 0, ?6)",
                params![account, recipients, event_id, body, PENDING, now],
            )
            .map_err(ApiError::storage)?;
        }
        tx.commit().map_err(ApiError::storage)?;
        Ok(added > 0)
    }
}

fn webhook_row(row: &rusqlite::Row) -> rusqlite::Result<Webhook> {
    let events: String = row.get(3)?;
    Ok(Webhook {
        id: row.get(0)?,
        account_id: row.get(1)?,
        url: row.get(2)?,
        events: serde_json::from_str(&events).unwrap_or_default(),
        enabled: row.get::<_, i64>(4)? != 0,
        description: row.get(5)?,
        secret: row.get(6)?,
        failing_since: row.get(7)?,
        created: row.get(8)?,
        updated: row.get(9)?,
    })
}

fn delivery_row(row: &rusqlite::Row) -> rusqlite::Result<Delivery> {
    Ok(Delivery {
        seq: row.get(0)?,
        channel: Channel::parse(&row.get::<_, String>(1)?),
        target: row.get(2)?,
        event_id: row.get(3)?,
        event_type: row.get(4)?,
        body: row.get(5)?,
        status: row.get(6)?,
        attempts: row.get(7)?,
        next_attempt: row.get(8)?,
        created: row.get(9)?,
        last_attempt: row.get(10)?,
        last_status: row.get(11)?,
        last_error: row.get(12)?,
        delivered: row.get(13)?,
    })
}

/// Every stored fact of an account.
const SELECT_FACTS: &str = "SELECT fact, customer_id, type, fingerprint, revision, live, event_id
     FROM event_facts WHERE account_id = ?1";

/// One customer's stored facts (see [`OutboundDb::facts`]).
const SELECT_CUSTOMER_FACTS: &str = "SELECT fact, customer_id, type, fingerprint, revision, live, event_id
     FROM event_facts INDEXED BY event_facts_by_customer WHERE account_id = ?1 AND customer_id = ?2";

#[cfg(test)]
mod tests {
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
