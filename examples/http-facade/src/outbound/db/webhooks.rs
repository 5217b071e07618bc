//! Webhook subscriptions: writes and reads.

use super::*;

impl OutboundDb {
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

    /// Saves a subscription's url, events, enabled flag and description
    /// (within its account).
    pub fn update_webhook(&self, hook: &Webhook) -> Result<(), ApiError> {
        self.connection
            .execute(
                "UPDATE webhooks SET url = ?2, events = ?3, enabled = ?4, description = ?5, updated = ?6
                 WHERE id = ?1 AND account_id = ?7",
                params![
                    hook.id,
                    hook.url,
                    json!(hook.events).to_string(),
                    hook.enabled,
                    hook.description,
                    hook.updated,
                    hook.account_id
                ],
            )
            .map_err(ApiError::storage)?;
        Ok(())
    }

    /// Deletes a subscription and cancels what it still had pending, in
    /// one transaction; `false` (and nothing changed) when the account has
    /// no such subscription.
    pub fn delete_webhook(&mut self, account: i64, id: &str) -> Result<bool, ApiError> {
        let tx = self.connection.transaction().map_err(ApiError::storage)?;
        let deleted = tx
            .execute(
                "DELETE FROM webhooks WHERE id = ?1 AND account_id = ?2",
                params![id, account],
            )
            .map_err(ApiError::storage)?;
        if deleted == 0 {
            return Ok(false);
        }
        tx.execute(
            "UPDATE outbox SET status = ?3
             WHERE channel = 'webhook' AND target = ?1 AND account_id = ?2 AND status = ?4",
            params![id, account, CANCELLED, PENDING],
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
