//! The outbox of deliveries, their attempts and the digests sent.

use super::*;

impl OutboundDb {
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

    /// The deliveries of an account to one target, newest first, and how
    /// many there are.
    pub fn deliveries(
        &self,
        account: i64,
        channel: Channel,
        target: &str,
        limit: usize,
        offset: usize,
    ) -> Result<(Vec<Delivery>, usize), ApiError> {
        let mut statement = self
            .connection
            .prepare_cached(&format!(
                "SELECT {DELIVERY_COLUMNS} FROM outbox WHERE channel = ?1 AND target = ?2 AND account_id = ?5
                 ORDER BY seq DESC LIMIT ?3 OFFSET ?4"
            ))
            .map_err(ApiError::storage)?;
        let rows = statement
            .query_map(
                params![
                    channel.as_str(),
                    target,
                    limit as i64,
                    offset as i64,
                    account
                ],
                delivery_row,
            )
            .map_err(ApiError::storage)?
            .collect::<Result<Vec<_>, _>>()
            .map_err(ApiError::storage)?;
        let count: i64 = self
            .connection
            .query_row(
                "SELECT COUNT(*) FROM outbox WHERE channel = ?1 AND target = ?2 AND account_id = ?3",
                params![channel.as_str(), target, account],
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
