//! The service state: the store, and per account its settings documents and
//! its in-memory core ledger, rebuilt from the store at start.
//!
//! Writes take the account's ledger write lock, apply the batch to the core,
//! persist what the core accepted in one SQLite transaction, and only then
//! answer; if persisting fails the ledger is rebuilt from the store, so
//! memory never holds what the disk does not.
//!
//! Record writes are group-committed: concurrent writers queue their work,
//! and one runner per account (started by the first writer that finds none
//! running) takes the write lock, runs every queued write and commits all
//! their changes in one transaction (one fsync), still before any of them
//! answers and before any reader sees them. It repeats while writes keep
//! arriving, so concurrent writers wait on their answer, not on a thread
//! each.

mod replay;

use crate::auth::{hash_key, new_key, new_key_id};
use crate::error::{ApiError, StorageFault};
use crate::rate::RateLimiter;
use crate::store::{AccountRow, Change, Health, KeyRow, Store};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};
use submetrics::{Ledger, Settings};

/// How long a running service trusts a key it has read from the store.
pub const KEY_CACHE_TTL: Duration = Duration::from_secs(2);

/// How long a request's body may take to arrive unless set otherwise
/// (`--body-timeout`).
pub const DEFAULT_BODY_TIMEOUT: Duration = Duration::from_secs(30);

pub struct Account {
    pub row: Mutex<AccountRow>,
    pub ledger: RwLock<Ledger>,
    /// Record writes waiting for the next group commit.
    queued: Mutex<Queue>,
    /// While a group runs: the changes its writes persisted, committed
    /// together when the group ends.
    group: Mutex<Option<Vec<Change>>>,
}

/// Record writes waiting for the next group commit, and whether a runner
/// ([`AppState::run_queued`]) is on them.
#[derive(Default)]
struct Queue {
    writes: Vec<QueuedWrite>,
    running: bool,
}

/// A queued record write: applies itself to the ledger (persisting only
/// through [`AppState::persist`]) and returns how to answer its caller once
/// the group's commit is known.
pub type QueuedWrite = Box<dyn FnOnce(&AppState, &Account, &mut Ledger) -> Reply + Send>;

/// Answers one caller of a group with the outcome of the group's commit.
pub type Reply = Box<dyn FnOnce(Result<(), &ApiError>) + Send>;

impl Account {
    fn new(row: AccountRow, ledger: Ledger) -> Account {
        Account {
            row: Mutex::new(row),
            ledger: RwLock::new(ledger),
            queued: Mutex::new(Queue::default()),
            group: Mutex::new(None),
        }
    }

    /// Queues a record write for the next group commit. Returns `true`
    /// when no runner is on the queue: the caller then runs
    /// [`AppState::run_queued`] (off the event loop), which also runs every
    /// write queued meanwhile.
    #[must_use]
    pub fn queue(&self, write: QueuedWrite) -> bool {
        let mut queue = self.queued.lock().unwrap_or_else(|p| p.into_inner());
        queue.writes.push(write);
        !std::mem::replace(&mut queue.running, true)
    }
}

pub struct AppState {
    store: Mutex<Store>,
    /// The database's state, read by `/health` without the store's lock.
    health: Health,
    /// Per-key request rates, when limited.
    rate: Option<RateLimiter>,
    /// How long a request's body may take to arrive once a route starts
    /// reading it; see [`AppState::set_body_timeout`].
    body_timeout: Duration,
    accounts: RwLock<HashMap<i64, Arc<Account>>>,
    /// Valid keys by hash with when they were read from the store; a miss
    /// or an entry older than [`KEY_CACHE_TTL`] reads the store again, so a
    /// key revoked offline stops working within that time.
    keys: RwLock<HashMap<String, (KeyRow, Instant)>>,
    /// Events derived from committed writes and their deliveries.
    pub outbound: Arc<crate::outbound::Outbound>,
    /// The payment-platform (Stripe) connections and their sync jobs.
    pub stripe: crate::stripe::Hub,
}

/// Default notification settings of a new account.
pub fn default_notifications() -> Value {
    json!({
        "email": {"enabled": false, "recipients": [], "frequency": "weekly"},
        "slack": {"enabled": false, "channel": "", "events": []},
        "alerts": {"churn_threshold": null, "mrr_drop_threshold": null}
    })
}

/// Runs storage work on the runtime's blocking pool, never on the threads
/// that serve connections.
pub async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> Result<T, ApiError> + Send + 'static,
) -> Result<T, ApiError> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|_| ApiError::internal("the request could not be completed"))?
}

/// Shortest key accepted when the key is given (e.g. `SUBMETRICS_OWNER_KEY`).
pub const MIN_GIVEN_KEY: usize = 16;

/// The given key when long enough, else a new random key.
pub fn usable_key(given: Option<String>) -> Result<String, ApiError> {
    match given {
        Some(key) if key.chars().count() >= MIN_GIVEN_KEY => Ok(key),
        Some(_) => Err(ApiError::bad_request(format!(
            "a given API key needs at least {MIN_GIVEN_KEY} characters"
        ))),
        None => new_key(),
    }
}

pub fn now_text() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
}

impl AppState {
    /// Opens the store in `dir` and rebuilds every account's ledger.
    pub fn open(dir: &Path) -> Result<AppState, ApiError> {
        let mut store = Store::open(dir)?;
        let outbound = crate::outbound::Outbound::open(&dir.join(crate::store::DATABASE_FILE))?;
        let mut accounts = HashMap::new();
        let reader = store.reader()?;
        for row in store.accounts()? {
            let ledger = replay::rebuild(&reader, &row)?;
            accounts.insert(row.id, Arc::new(Account::new(row, ledger)));
        }
        // A rewrite that fails leaves the log as it was, which still loads.
        if let Err(error) = replay::rewrite_log_if_long(&mut store, &accounts) {
            eprintln!("warning: the record log was not rewritten: {error}");
        }
        Ok(AppState {
            rate: None,
            body_timeout: DEFAULT_BODY_TIMEOUT,
            health: store.health(),
            store: Mutex::new(store),
            accounts: RwLock::new(accounts),
            keys: RwLock::new(HashMap::new()),
            outbound: Arc::new(outbound),
            stripe: crate::stripe::Hub::default(),
        })
    }

    /// The ids of every account, in order.
    pub fn account_ids(&self) -> Vec<i64> {
        let mut ids: Vec<i64> = self
            .accounts
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .keys()
            .copied()
            .collect();
        ids.sort_unstable();
        ids
    }

    pub fn store(&self) -> std::sync::MutexGuard<'_, Store> {
        self.store
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Limits each key's request rate from now on.
    pub fn limit_rate(&mut self, limiter: RateLimiter) {
        self.rate = Some(limiter);
    }

    /// Sets how long a request's whole body may take to arrive, counted
    /// from when its route starts reading it (after the key is checked);
    /// a body still incomplete then is answered `408` and the connection
    /// closed, so a client trickling a body cannot hold a connection.
    pub fn set_body_timeout(&mut self, timeout: Duration) {
        self.body_timeout = timeout;
    }

    /// See [`AppState::set_body_timeout`].
    pub fn body_timeout(&self) -> Duration {
        self.body_timeout
    }

    /// Admits one request of the key, or refuses it for its rate.
    pub fn admit(&self, key_id: &str) -> Result<(), ApiError> {
        match &self.rate {
            Some(limiter) => limiter.admit(key_id),
            None => Ok(()),
        }
    }

    /// Why the database cannot take writes now, if it cannot.
    pub fn storage_problem(&self) -> Option<StorageFault> {
        self.health.fault()
    }

    /// Closes the database (see [`Store::close`]).
    pub fn close(self) -> Result<(), ApiError> {
        self.store
            .into_inner()
            .unwrap_or_else(|p| p.into_inner())
            .close()
    }

    pub fn account(&self, id: i64) -> Result<Arc<Account>, ApiError> {
        self.accounts
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .get(&id)
            .cloned()
            .ok_or_else(|| ApiError::NotFound(format!("account {id} does not exist")))
    }

    /// Makes sure the account is in memory: one created while the service
    /// runs (`accounts create`) is read from the store and its ledger
    /// rebuilt, on a blocking thread, the first time a key of it calls.
    pub async fn load_account(self: &Arc<Self>, id: i64) -> Result<(), ApiError> {
        if self.account(id).is_ok() {
            return Ok(());
        }
        let state = Arc::clone(self);
        blocking(move || {
            let row = state
                .store()
                .accounts()?
                .into_iter()
                .find(|row| row.id == id)
                .ok_or_else(|| ApiError::NotFound(format!("account {id} does not exist")))?;
            let reader = state.store().reader()?;
            let ledger = replay::rebuild(&reader, &row)?;
            state
                .accounts
                .write()
                .unwrap_or_else(|p| p.into_inner())
                .entry(id)
                .or_insert_with(|| Arc::new(Account::new(row, ledger)));
            Ok(())
        })
        .await
    }

    pub fn account_count(&self) -> usize {
        self.accounts
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .len()
    }

    /// Creates an account with an owner key (random unless `owner_key`) in
    /// one transaction; returns (account id, key). A given key that is too
    /// short is refused before anything is written.
    pub fn create_account(
        &self,
        name: &str,
        owner_key: Option<String>,
    ) -> Result<(i64, String), ApiError> {
        let key = usable_key(owner_key)?;
        let settings = serde_json::to_value(Settings::default())
            .map_err(|e| ApiError::internal(e.to_string()))?;
        let mut row = AccountRow {
            id: 0,
            name: name.to_string(),
            settings,
            profile: json!({"first_name": "", "last_name": "", "email": "", "locale": "en", "picture": null, "provider": "credentials", "verified": false}),
            notifications: default_notifications(),
            created: now_text(),
        };
        let owner = KeyRow {
            id: new_key_id()?,
            account_id: 0,
            name: "owner".to_string(),
            role: "owner".to_string(),
            created: now_text(),
            revoked: false,
        };
        let id = self.store().create_account(&row, &owner, &hash_key(&key))?;
        row.id = id;
        let ledger = Ledger::new(Settings::default());
        self.accounts
            .write()
            .unwrap_or_else(|p| p.into_inner())
            .insert(id, Arc::new(Account::new(row, ledger)));
        Ok((id, key))
    }

    /// Creates a key (random unless `given`) and returns it; only its hash is kept.
    pub fn create_key(
        &self,
        account: i64,
        role: &str,
        name: &str,
        given: Option<String>,
    ) -> Result<String, ApiError> {
        if !crate::auth::ROLES.contains(&role) {
            return Err(ApiError::bad_request(format!(
                "field `role`: `{role}` is not one of {}",
                crate::auth::ROLES.join(", ")
            )));
        }
        let key = usable_key(given)?;
        let row = KeyRow {
            id: new_key_id()?,
            account_id: account,
            name: name.to_string(),
            role: role.to_string(),
            created: now_text(),
            revoked: false,
        };
        self.store().insert_key(&row, &hash_key(&key))?;
        Ok(key)
    }

    /// Read-modify-write of the account row (name, settings, profile,
    /// notifications) under the row's lock, so concurrent updates of
    /// different documents never undo each other; the row changes in memory
    /// only once stored. Returns the stored row.
    pub fn update_account(
        &self,
        account: &Account,
        change: impl FnOnce(&mut AccountRow) -> Result<(), ApiError>,
    ) -> Result<AccountRow, ApiError> {
        let mut guard = account.row.lock().unwrap_or_else(|p| p.into_inner());
        let mut row = guard.clone();
        change(&mut row)?;
        self.store().save_account(&row)?;
        *guard = row.clone();
        Ok(row)
    }

    /// The key with this hash, from the cache while it is fresh, else from
    /// the store on a blocking thread.
    pub async fn key(self: &Arc<Self>, hash: String) -> Result<Option<KeyRow>, ApiError> {
        if let Some(row) = self.cached_key(&hash) {
            return Ok(Some(row));
        }
        let state = Arc::clone(self);
        blocking(move || state.key_blocking(&hash)).await
    }

    fn cached_key(&self, hash: &str) -> Option<KeyRow> {
        let cache = self.keys.read().unwrap_or_else(|p| p.into_inner());
        let (row, read) = cache.get(hash)?;
        (read.elapsed() < KEY_CACHE_TTL).then(|| row.clone())
    }

    /// [`AppState::key`] on the calling thread.
    pub fn key_blocking(&self, hash: &str) -> Result<Option<KeyRow>, ApiError> {
        if let Some(row) = self.cached_key(hash) {
            return Ok(Some(row));
        }
        let row = self.store().key_by_hash(hash)?;
        let mut cache = self.keys.write().unwrap_or_else(|p| p.into_inner());
        match &row {
            Some(row) => {
                cache.insert(hash.to_string(), (row.clone(), Instant::now()));
            }
            None => {
                cache.remove(hash);
            }
        }
        Ok(row)
    }

    pub fn revoke_key(&self, id: &str, account: Option<i64>) -> Result<bool, ApiError> {
        let revoked = self.store().revoke_key(id, account)?;
        self.keys
            .write()
            .unwrap_or_else(|p| p.into_inner())
            .retain(|_, (row, _)| row.id != id);
        Ok(revoked)
    }

    /// Persists `changes`; on failure rebuilds the account's ledger from the
    /// store so memory matches disk, and reports the failure. Inside a group
    /// commit the changes join the group's transaction instead.
    pub fn persist(
        &self,
        account: &Account,
        ledger: &mut Ledger,
        changes: Vec<Change>,
    ) -> Result<(), ApiError> {
        if let Some(group) = account
            .group
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .as_mut()
        {
            group.extend(changes);
            return Ok(());
        }
        let id = account.row.lock().unwrap_or_else(|p| p.into_inner()).id;
        let outcome = self.store().apply(id, &changes);
        if let Err(error) = outcome {
            *ledger = self.reload(account)?;
            return Err(error);
        }
        self.outbound.touched(id, &changes);
        Ok(())
    }

    /// The runner of an account's queue (see [`Account::queue`]): group
    /// commits until the queue is empty. Each group, under one write lock,
    /// runs every queued record write of the account, then commits all
    /// their changes in one transaction and answers each caller. A failed
    /// commit reloads the ledger from the store and fails every write of
    /// the group. The lock is let go between groups, so readers get in.
    pub fn run_queued(&self, account: &Account) {
        loop {
            let mut ledger = account.ledger.write().unwrap_or_else(|p| p.into_inner());
            let writes = {
                let mut queue = account.queued.lock().unwrap_or_else(|p| p.into_inner());
                if queue.writes.is_empty() {
                    queue.running = false;
                    return;
                }
                std::mem::take(&mut queue.writes)
            };
            // A group that panics outside its writes (which are caught one
            // by one) fails its callers (their answers are dropped) but must
            // neither leave the group open nor stop the runner.
            let group = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                self.run_group(account, &mut ledger, writes)
            }));
            if group.is_err() {
                *account.group.lock().unwrap_or_else(|p| p.into_inner()) = None;
            }
        }
    }

    /// One group commit of `writes` (see [`AppState::run_queued`]).
    fn run_group(&self, account: &Account, ledger: &mut Ledger, writes: Vec<QueuedWrite>) {
        *account.group.lock().unwrap_or_else(|p| p.into_inner()) = Some(Vec::new());
        let replies: Vec<Reply> = writes
            .into_iter()
            .map(|write| {
                // A write that panics must not leave the group open.
                std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    write(self, account, ledger)
                }))
                .unwrap_or_else(|_| -> Reply { Box::new(|_| {}) })
            })
            .collect();
        let changes = account
            .group
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take()
            .unwrap_or_default();
        let outcome = self.persist(account, ledger, changes);
        for reply in replies {
            reply(outcome.as_ref().map(|_| ()));
        }
    }

    /// The account's ledger as the store holds it.
    pub fn reload(&self, account: &Account) -> Result<Ledger, ApiError> {
        let row = account
            .row
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone();
        // Read beside the store: other accounts keep writing meanwhile.
        let reader = self.store().reader()?;
        replay::rebuild(&reader, &row)
    }
}
