//! FX rate rows: one per account, date and currency, the last written.

use super::parse;
use crate::error::ApiError;
use rusqlite::{Connection, params};
use serde_json::Value;

/// Every stored FX rate row of an account, oldest first.
pub(super) fn fx_rates(connection: &Connection, account: i64) -> Result<Vec<Value>, ApiError> {
    let mut statement = connection
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

/// Stores FX rate rows inside the open transaction (see
/// [`super::Store::add_fx_rates`]).
pub(super) fn add_fx_rates(
    connection: &Connection,
    account: i64,
    rows: &[Value],
) -> Result<(), ApiError> {
    for row in rows {
        let (date, currency) = fx_key(row)?;
        connection
            .execute(
                "DELETE FROM fx_rates WHERE account_id = ?1 AND date = ?2 AND currency = ?3",
                params![account, date, currency],
            )
            .map_err(ApiError::storage)?;
        connection
            .execute(
                "INSERT INTO fx_rates (account_id, body, date, currency) VALUES (?1, ?2, ?3, ?4)",
                params![account, row.to_string(), date, currency],
            )
            .map_err(ApiError::storage)?;
    }
    Ok(())
}

/// The date (`YYYY-MM-DD`) and currency an FX rate row is stored under.
fn fx_key(row: &Value) -> Result<(String, String), ApiError> {
    let rate = submetrics::FxRate::from_json(row)?;
    Ok((rate.date.to_string(), rate.currency.to_string()))
}

/// Gives every stored FX rate row its date and currency and keeps one row
/// per account, date and currency, the last written: a database from
/// before rows were keyed holds every row ever posted. A row that no
/// longer reads keeps no key, and stays for the replay to report.
pub(super) fn key_fx_rates(connection: &mut Connection) -> Result<(), ApiError> {
    let columns: Vec<String> = connection
        .prepare("SELECT name FROM pragma_table_info('fx_rates')")
        .and_then(|mut statement| {
            statement
                .query_map([], |row| row.get(0))?
                .collect::<Result<_, _>>()
        })
        .map_err(ApiError::storage)?;
    let keyed = columns.iter().any(|c| c == "date");
    let indexed = keyed
        && connection
            .query_row::<bool, _, _>(
                "SELECT EXISTS (SELECT 1 FROM sqlite_master WHERE name = 'fx_rates_key')
                 AND NOT EXISTS (SELECT 1 FROM fx_rates WHERE date IS NULL)",
                [],
                |row| row.get(0),
            )
            .map_err(ApiError::storage)?;
    if keyed && indexed {
        // Nothing to do, and a read-only database still opens.
        return Ok(());
    }
    let tx = connection.transaction().map_err(ApiError::storage)?;
    if !keyed {
        tx.execute_batch(
            "ALTER TABLE fx_rates ADD COLUMN date TEXT;
             ALTER TABLE fx_rates ADD COLUMN currency TEXT;",
        )
        .map_err(ApiError::storage)?;
    }
    let unkeyed: Vec<(i64, String)> = tx
        .prepare("SELECT seq, body FROM fx_rates WHERE date IS NULL")
        .and_then(|mut statement| {
            statement
                .query_map([], |row| Ok((row.get(0)?, row.get(1)?)))?
                .collect::<Result<_, _>>()
        })
        .map_err(ApiError::storage)?;
    for (seq, body) in unkeyed {
        if let Ok((date, currency)) = parse(&body).and_then(|row| fx_key(&row)) {
            tx.execute(
                "UPDATE fx_rates SET date = ?2, currency = ?3 WHERE seq = ?1",
                params![seq, date, currency],
            )
            .map_err(ApiError::storage)?;
        }
    }
    tx.execute_batch(
        "DELETE FROM fx_rates WHERE date IS NOT NULL AND seq NOT IN
             (SELECT MAX(seq) FROM fx_rates WHERE date IS NOT NULL
              GROUP BY account_id, date, currency);
         CREATE UNIQUE INDEX IF NOT EXISTS fx_rates_key ON fx_rates (account_id, date, currency);",
    )
    .map_err(ApiError::storage)?;
    tx.commit().map_err(ApiError::storage)
}
