//! The facts events were derived from, and the events.

use super::*;

/// Every stored fact of an account.
const SELECT_FACTS: &str = "SELECT fact, customer_id, type, fingerprint, revision, live, event_id
     FROM event_facts WHERE account_id = ?1";

/// One customer's stored facts (see [`OutboundDb::facts`]).
pub(super) const SELECT_CUSTOMER_FACTS: &str = "SELECT fact, customer_id, type, fingerprint, revision, live, event_id
     FROM event_facts INDEXED BY event_facts_by_customer WHERE account_id = ?1 AND customer_id = ?2";

impl OutboundDb {
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
}
