//! An account's ledger from the store: its settings, FX rates and record
//! log replayed in order; and the rewrite that drops from the log what
//! later writes replaced or deleted.

use super::Account;
use crate::error::ApiError;
use crate::store::{AccountRow, Change, KINDS_IN_REPLAY_ORDER, LogEntry, Reader, Store, kind_name};
use serde_json::Value;
use std::collections::HashMap;
use std::sync::Arc;
use submetrics::{Ledger, RecordKind, Settings};

/// Consecutive puts of one kind load as one batch of at most this many.
const REPLAY_BATCH: usize = 50_000;

/// Rebuilds an account's ledger from its stored settings, FX rates and
/// record log. Every stored entry must load: one that the running version
/// no longer reads (a database written by a version with other rules)
/// stops the rebuild with an error naming the account, the record and why,
/// rather than leaving the record out of every report unseen. A plan group
/// naming a plan that no longer exists loads without that plan; deleting
/// what is already gone (an invoice that went with its customer) is no
/// error.
pub fn rebuild(store: &Reader, row: &AccountRow) -> Result<Ledger, ApiError> {
    let settings = Settings::from_json(&row.settings)
        .map_err(|error| unreadable(row.id, "settings", &error))?;
    let mut replay = Replay {
        account: row.id,
        ledger: Ledger::new(settings),
        kind: RecordKind::Customers,
        batch: Vec::new(),
    };
    // Row by row, in the order they were stored: a database written before
    // rows were keyed by day and currency may hold one day's rate twice,
    // the later standing, which one batch would refuse.
    for rate in store.fx_rates(row.id)? {
        replay
            .ledger
            .load_fx_rates(std::slice::from_ref(&rate))
            .map_err(|error| unreadable(row.id, "FX rates", &error))?;
    }
    store.replay_log(row.id, |entry| {
        match entry {
            LogEntry::Put { kind, record } => {
                if kind != replay.kind || replay.batch.len() >= REPLAY_BATCH {
                    replay.load_batch()?;
                    replay.kind = kind;
                }
                replay.batch.push(record);
            }
            LogEntry::Delete { kind, id } => {
                replay.load_batch()?;
                replay.delete(kind, &id)?;
            }
        }
        Ok(())
    })?;
    replay.load_batch()?;
    Ok(replay.ledger)
}

/// The error that stops a start on a stored entry the running version
/// cannot read.
fn unreadable(account: i64, what: &str, reason: &dyn std::fmt::Display) -> ApiError {
    ApiError::internal(format!(
        "account {account}: stored {what} can no longer be read: {reason}. \
         The database holds data this version refuses; nothing was skipped. \
         Correct or delete that record with the version that wrote it, then start again."
    ))
}

/// A replay in progress: the ledger so far and the puts not yet loaded.
struct Replay {
    account: i64,
    ledger: Ledger,
    kind: RecordKind,
    batch: Vec<Value>,
}

impl Replay {
    fn load_batch(&mut self) -> Result<(), ApiError> {
        if self.batch.is_empty() {
            return Ok(());
        }
        let mut records = std::mem::take(&mut self.batch);
        if self.kind == RecordKind::PlanGroups {
            for record in &mut records {
                drop_missing_plans(&self.ledger, self.account, record);
            }
        }
        let report = self.ledger.upsert(self.kind, &records);
        if let Some(rejected) = report.rejected().next() {
            return Err(unreadable(
                self.account,
                &format!("{} `{}`", kind_name(self.kind), rejected.id),
                &rejected.import_error.as_deref().unwrap_or("invalid"),
            ));
        }
        records.clear();
        self.batch = records;
        Ok(())
    }

    fn delete(&mut self, kind: RecordKind, id: &str) -> Result<(), ApiError> {
        match self.ledger.delete(kind, id) {
            Ok(()) | Err(submetrics::Error::NotFound { .. }) => Ok(()),
            Err(error) => Err(unreadable(
                self.account,
                &format!("deletion of {} `{id}`", kind_name(kind)),
                &error,
            )),
        }
    }
}

/// Removes from a stored plan group the plans the ledger does not hold.
fn drop_missing_plans(ledger: &Ledger, account: i64, record: &mut Value) {
    let Some(plans) = record.get_mut("plans").and_then(Value::as_array_mut) else {
        return;
    };
    plans.retain(|plan| {
        let id = plan
            .as_str()
            .or_else(|| plan.get("id").and_then(Value::as_str));
        let keep = id.is_none_or(|id| ledger.plan(id).is_some());
        if !keep {
            eprintln!(
                "warning: account {account}: a stored plan group names missing plan {plan}; dropped"
            );
        }
        keep
    });
}

/// Entries beyond the living records, past which the log is rewritten at
/// start: a quarter of the living records, and at least this many.
pub const REWRITE_SLACK: u64 = 1000;

/// Rewrites the record log with only the living records of `accounts`
/// when replaced and deleted ones take more than a quarter of it (and
/// [`REWRITE_SLACK`]) beside them. Each account's records go in by kind
/// in replay order and in ledger order within a kind, so the next replay
/// gives the same ledgers in the same order.
pub fn rewrite_log_if_long(
    store: &mut Store,
    accounts: &HashMap<i64, Arc<Account>>,
) -> Result<(), ApiError> {
    let mut ids: Vec<i64> = accounts.keys().copied().collect();
    ids.sort_unstable();
    let ledgers: Vec<(i64, std::sync::RwLockReadGuard<'_, Ledger>)> = ids
        .iter()
        .map(|id| {
            let ledger = accounts[id]
                .ledger
                .read()
                .unwrap_or_else(|p| p.into_inner());
            (*id, ledger)
        })
        .collect();
    let living: u64 = ledgers
        .iter()
        .map(|(_, ledger)| living_records(ledger) as u64)
        .sum();
    if store.log_len()? <= living + (living / 4).max(REWRITE_SLACK) {
        return Ok(());
    }
    store.rewrite_log(|put| {
        for (account, ledger) in &ledgers {
            for kind in KINDS_IN_REPLAY_ORDER {
                for id in record_ids(ledger, kind) {
                    if let Some(change) = Change::put(ledger, kind, id) {
                        put(*account, change)?;
                    }
                }
            }
        }
        Ok(())
    })
}

fn living_records(ledger: &Ledger) -> usize {
    ledger.data_sources().len()
        + ledger.customers().len()
        + ledger.plans().len()
        + ledger.plan_groups().len()
        + ledger.invoices().len()
}

/// The ids of a ledger's records of one kind, in ledger order.
fn record_ids(ledger: &Ledger, kind: RecordKind) -> Box<dyn Iterator<Item = &str> + '_> {
    match kind {
        RecordKind::DataSources => Box::new(ledger.data_sources().map(|r| r.id.as_str())),
        RecordKind::Customers => Box::new(ledger.customers().map(|r| r.id.as_str())),
        RecordKind::Plans => Box::new(ledger.plans().map(|r| r.id.as_str())),
        RecordKind::PlanGroups => Box::new(ledger.plan_groups().map(|r| r.id.as_str())),
        RecordKind::Invoices => Box::new(ledger.invoices().map(|r| r.id())),
    }
}
