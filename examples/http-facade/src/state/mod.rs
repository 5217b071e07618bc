//! The service state: the store, and per account its settings documents and
//! its in-memory core ledger, rebuilt from the store at start.
//!
//! A write first takes the database's write lock (a SQLite transaction
//! begun `IMMEDIATE`, which waits out another process's lock up to the
//! busy timeout) holding no lock of the account, so the account's readers
//! never wait for another process; then it takes the account's ledger
//! write lock, applies the batch to the core, stores what the core
//! accepted in that transaction and commits it, and only then lets go of
//! the ledger and answers. If the commit fails the ledger is rebuilt from
//! the store, so memory never holds what the disk does not.
//!
//! Lock order: the store, then an account's ledger, then its row; nothing
//! holding a ledger or a row takes the store.
//!
//! Record writes are group-committed: concurrent writers queue their work,
//! and one runner per account (started by the first writer that finds none
//! running) takes the write locks, runs every queued write and commits all
//! their changes in one transaction (one fsync), still before any of them
//! answers and before any reader sees them. It repeats while writes keep
//! arriving, so concurrent writers wait on their answer, not on a thread
//! each.

mod replay;

use crate::auth::{hash_key, new_key, new_key_id};
use crate::error::{ApiError, StorageFault};
use crate::rate::RateLimiter;
use crate::store::{AccountReads, AccountRow, Change, Health, KeyRow, Reader, Store};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, RwLock, RwLockWriteGuard};
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
    writes: Vec<Box<dyn QueuedWrite>>,
    running: bool,
}

/// A queued record write: applies itself to the ledger (persisting only
/// through [`AppState::persist`]) and returns how to answer its caller once
/// the group's commit is known; or, when the group cannot write at all,
/// answers its caller with the failure without running.
pub trait QueuedWrite: Send {
    fn run(self: Box<Self>, state: &AppState, account: &Account, ledger: &mut Ledger) -> Reply;
    fn refuse(self: Box<Self>, error: &ApiError);
}

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
    pub fn queue(&self, write: Box<dyn QueuedWrite>) -> bool {
        let mut queue = self.queued.lock().unwrap_or_else(|p| p.into_inner());
        queue.writes.push(write);
        !std::mem::replace(&mut queue.running, true)
    }
}

/// Most read connections kept for reuse; more are opened while reads
/// overlap, and closed after.
const IDLE_READERS: usize = 8;

pub struct AppState {
    store: Mutex<Store>,
    /// The database file, for read connections.
    database: PathBuf,
    /// Read connections beside the store's, idle; see [`AppState::read`].
    readers: Mutex<Vec<Reader>>,
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
        outbound.db().share_checkpoints_of(&store)?;
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
            database: dir.join(crate::store::DATABASE_FILE),
            readers: Mutex::new(Vec::new()),
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

    /// Runs `work` on a read connection of its own beside the store's, so
    /// a read never waits for a write (another process's lock included).
    pub fn read<T>(
        &self,
        work: impl FnOnce(&Reader) -> Result<T, ApiError>,
    ) -> Result<T, ApiError> {
        let idle = self.readers.lock().unwrap_or_else(|p| p.into_inner()).pop();
        let reader = match idle {
            Some(reader) => reader,
            None => Reader::open(&self.database)?,
        };
        let outcome = work(&reader);
        let mut idle = self.readers.lock().unwrap_or_else(|p| p.into_inner());
        if idle.len() < IDLE_READERS {
            idle.push(reader);
        }
        outcome
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

    /// Sets how long a write waits for the database while another process
    /// holds its write lock (`--busy-timeout`, 5 s unless set), the
    /// outbound tables' writes included; reads never wait for it.
    pub fn set_busy_timeout(&mut self, timeout: Duration) -> Result<(), ApiError> {
        self.store().set_busy_timeout(timeout)?;
        self.outbound.db().set_busy_timeout(timeout)
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

    /// Closes the database: the read connections and the event tables'
    /// first, then the store's (see [`Store::close`]), which removes the
    /// write-ahead log only as the last connection to the file.
    pub fn close(self) -> Result<(), ApiError> {
        let AppState {
            store,
            readers,
            outbound,
            ..
        } = self;
        drop(readers);
        drop(outbound);
        store
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
            let ledger = replay::rebuild(&Reader::open(&state.database)?, &row)?;
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
            return Err(ApiError::bad_field(
                "role",
                format!(
                    "field `role`: `{role}` is not one of {}",
                    crate::auth::ROLES.join(", ")
                ),
            ));
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
    /// notifications) in a write transaction of its own (see
    /// [`AppState::update_row`]); the row changes in memory once committed.
    /// Returns the stored row.
    pub fn update_account(
        &self,
        account: &Account,
        change: impl FnOnce(&mut AccountRow) -> Result<(), ApiError>,
    ) -> Result<AccountRow, ApiError> {
        let mut store = self.store();
        store.begin()?;
        let row = match Self::update_row(&mut store, account, change) {
            Ok(row) => row,
            Err(error) => {
                store.rollback();
                return Err(error);
            }
        };
        store.commit(row.id, &[])?;
        *account.row.lock().unwrap_or_else(|p| p.into_inner()) = row.clone();
        Ok(row)
    }

    /// Stores a change of the account row inside the store's open write
    /// transaction and returns the changed row, leaving the row in memory
    /// as it is: the store's lock, held by every writer of a row, makes the
    /// read-modify-write whole, and the row's own lock is only held for a
    /// copy, so its readers never wait for the database.
    pub fn update_row(
        store: &mut Store,
        account: &Account,
        change: impl FnOnce(&mut AccountRow) -> Result<(), ApiError>,
    ) -> Result<AccountRow, ApiError> {
        let mut row = account
            .row
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone();
        change(&mut row)?;
        store.save_account(&row)?;
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
        let row = self.read(|reader| reader.key_by_hash(hash))?;
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

    /// Persists `changes` of a write of the account: they join the
    /// transaction of the write under way ([`AppState::write_account`] or
    /// a group commit), committed before the ledger's lock is let go.
    pub fn persist(
        &self,
        account: &Account,
        _ledger: &mut Ledger,
        changes: Vec<Change>,
    ) -> Result<(), ApiError> {
        match account
            .group
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .as_mut()
        {
            Some(group) => {
                group.extend(changes);
                Ok(())
            }
            None => Err(ApiError::internal(
                "a record write was stored outside a write of its account",
            )),
        }
    }

    /// Starts a write of the account: takes the store and begins its write
    /// transaction (waiting out another process's lock up to the busy
    /// timeout while holding no lock of the account, so its readers go on),
    /// then the account's ledger write lock; [`AppState::persist`] collects
    /// the write's record changes until [`AppState::finish`].
    fn start<'a>(&'a self, account: &'a Account) -> Result<Writing<'a>, ApiError> {
        let mut store = self.store();
        store.begin()?;
        let ledger = account.ledger.write().unwrap_or_else(|p| p.into_inner());
        *account.group.lock().unwrap_or_else(|p| p.into_inner()) = Some(Vec::new());
        Ok(Writing { store, ledger })
    }

    /// Ends a write begun by [`AppState::start`]: commits what it stored
    /// and its record changes when `keep`, else rolls it all back. Whenever
    /// nothing is committed after the ledger may have changed (changes were
    /// collected, `keep` came with a storage failure, or the write
    /// panicked), the account's row and ledger are read back from the
    /// store, so memory never holds what the disk does not. The ledger's
    /// lock is held until then, so no reader sees an uncommitted record.
    fn finish(
        &self,
        account: &Account,
        mut writing: Writing<'_>,
        keep: Result<(), &ApiError>,
    ) -> Result<(), ApiError> {
        let changes = account
            .group
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take()
            .unwrap_or_default();
        let id = account.row.lock().unwrap_or_else(|p| p.into_inner()).id;
        let outcome = match keep {
            Ok(()) => writing.store.commit(id, &changes),
            Err(error) => {
                writing.store.rollback();
                Err(error.again())
            }
        };
        let Err(error) = outcome else {
            drop(writing);
            self.outbound.touched(id, &changes);
            return Ok(());
        };
        let changed = !changes.is_empty()
            || matches!(keep, Ok(()))
            || keep
                .is_err_and(|e| e.storage_fault().is_some() || matches!(e, ApiError::Internal(_)));
        if changed {
            let Writing { store, mut ledger } = writing;
            let row = store
                .accounts()?
                .into_iter()
                .find(|row| row.id == id)
                .ok_or_else(|| ApiError::NotFound(format!("account {id} does not exist")))?;
            *ledger = replay::rebuild(&store.reader()?, &row)?;
            *account.row.lock().unwrap_or_else(|p| p.into_inner()) = row;
        }
        Err(error)
    }

    /// Runs a write of the account (see [`AppState::start`]): `work`
    /// changes the ledger, persists record changes through
    /// [`AppState::persist`] and may write to the store in its transaction;
    /// all of it is committed when `work` succeeds, before the ledger's
    /// lock is let go, and rolled back (the ledger with it) when it fails.
    pub fn write_account<T>(
        &self,
        account: &Account,
        work: impl FnOnce(&mut Store, &mut Ledger) -> Result<T, ApiError>,
    ) -> Result<T, ApiError> {
        let mut writing = self.start(account)?;
        let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let Writing { store, ledger } = &mut writing;
            work(store, ledger)
        }))
        .unwrap_or_else(|_| Err(ApiError::internal("the request could not be completed")));
        match result {
            Ok(value) => self.finish(account, writing, Ok(())).map(|()| value),
            Err(error) => {
                // The failure the caller gets is the work's own.
                let _ = self.finish(account, writing, Err(&error));
                Err(error)
            }
        }
    }

    /// The runner of an account's queue (see [`Account::queue`]): group
    /// commits until the queue is empty. Each group takes the write locks
    /// as [`AppState::start`] does, runs every queued record write of the
    /// account, then commits all their changes in one transaction and
    /// answers each caller. A failed commit reloads the ledger from the
    /// store and fails every write of the group; a database that cannot be
    /// written (locked past the busy timeout, read-only) fails every queued
    /// write without running it. The locks are let go between groups, so
    /// readers get in.
    pub fn run_queued(&self, account: &Account) {
        loop {
            {
                let mut queue = account.queued.lock().unwrap_or_else(|p| p.into_inner());
                if queue.writes.is_empty() {
                    queue.running = false;
                    return;
                }
            }
            // Only this runner takes from the queue: it is not empty now.
            let writing = self.start(account);
            let writes = std::mem::take(
                &mut account
                    .queued
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .writes,
            );
            match writing {
                Ok(writing) => self.run_group(account, writing, writes),
                Err(error) => {
                    for write in writes {
                        write.refuse(&error);
                    }
                }
            }
        }
    }

    /// One group commit of `writes` (see [`AppState::run_queued`]).
    fn run_group(
        &self,
        account: &Account,
        mut writing: Writing<'_>,
        writes: Vec<Box<dyn QueuedWrite>>,
    ) {
        let ledger = &mut *writing.ledger;
        let replies: Vec<Reply> = writes
            .into_iter()
            .map(|write| {
                // A write that panics fails its caller (its answer is
                // dropped) but must not stop the group.
                std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    write.run(self, account, ledger)
                }))
                .unwrap_or_else(|_| -> Reply { Box::new(|_| {}) })
            })
            .collect();
        let outcome = self.finish(account, writing, Ok(()));
        for reply in replies {
            reply(outcome.as_ref().map(|_| ()));
        }
    }
}

/// A write of an account under way: the store in a write transaction and
/// the account's ledger locked for writing (see [`AppState::start`]).
struct Writing<'a> {
    store: MutexGuard<'a, Store>,
    ledger: RwLockWriteGuard<'a, Ledger>,
}
