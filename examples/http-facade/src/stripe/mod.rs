//! The Stripe connection of an account: a secret (or restricted) key checked
//! against the Stripe API, a background job that backfills every object and
//! then follows Stripe's events, a signed webhook endpoint, and per-customer
//! resync. Objects become records through the core's mapping
//! (`submetrics::stripe`, docs/stripe.md), written and persisted like any
//! other write. The key is kept in the database and never returned.

pub mod signature;

use crate::error::ApiError;
use crate::routes::data::{delete, upsert};
use crate::state::{AppState, now_text};
use crate::store::Store;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, RwLock, Weak};
use std::time::Duration;
use submetrics::stripe::{StripeOptions, map_stripe_objects};
use submetrics::{Ledger, RecordKind};
use submetrics_stripe_client::{LISTS, PAGE, StripeClient, StripeError, complete_lines, read_list};

impl From<StripeError> for ApiError {
    /// A refused key is the caller's to fix (400); anything else is
    /// Stripe's (502).
    fn from(error: StripeError) -> ApiError {
        match error {
            StripeError::Refused { .. } => ApiError::bad_request(error.to_string()),
            _ => ApiError::Upstream(error.to_string()),
        }
    }
}

/// The data source every record of a Stripe connection names.
pub const DATA_SOURCE: &str = "stripe";

/// Where the Stripe API is and how the jobs pace themselves.
#[derive(Debug, Clone)]
pub struct Config {
    pub api_base: String,
    /// Between two polls of `/v1/events`.
    pub poll: Duration,
    /// The first wait after a rate limit without `Retry-After`.
    pub backoff: Duration,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            api_base: "https://api.stripe.com".to_string(),
            poll: Duration::from_secs(60),
            backoff: Duration::from_secs(1),
        }
    }
}

/// One account's connection as stored (the key included; see
/// [`Connection::public`] for what is shown).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Connection {
    secret_key: String,
    webhook_secret: Option<String>,
    account_id: String,
    account_name: Option<String>,
    livemode: bool,
    connected_at: String,
    last_sync: Option<String>,
    /// `syncing`, `complete` or `error`; `complete` only once a backfill
    /// completed.
    sync_status: String,
    /// Whether a backfill completed: until one does, the job backfills
    /// (again) instead of polling events. A connection stored before this
    /// was kept backfills once more (importing is idempotent).
    #[serde(default)]
    backfilled: bool,
    sync_error: Option<String>,
    /// The newest event seen; polling asks for the events after it.
    event_cursor: Option<String>,
    /// Unix time the backfill started: events from then on are polled when
    /// there is no cursor yet.
    backfill_started: i64,
    /// The rejections of the last import, for the status.
    last_rejections: Vec<Value>,
    /// How uncollectible invoices count (`failed` or `void`; the mapping's
    /// default when absent).
    #[serde(default)]
    uncollectible: Option<String>,
}

impl Connection {
    /// What `GET /settings/payment-platform` shows: never a key.
    fn public(&self, ledger: &Ledger) -> Value {
        let ours = |source: Option<&str>| source == Some(DATA_SOURCE);
        json!({
            "connected": true,
            "platform": "stripe",
            "account_id": self.account_id,
            "account_name": self.account_name,
            "livemode": self.livemode,
            "connected_at": self.connected_at,
            "last_sync": self.last_sync,
            "sync_status": self.sync_status,
            "sync_error": self.sync_error,
            "webhook_configured": self.webhook_secret.is_some(),
            "uncollectible": self.uncollectible.as_deref().unwrap_or("failed"),
            "customers_imported": ledger.customers().filter(|c| ours(c.data_source.as_ref().map(|d| d.as_str()))).count(),
            "invoices_imported": ledger.invoices().filter(|i| ours(i.details().data_source.as_ref().map(|d| d.as_str()))).count(),
            "rejected": self.last_rejections,
        })
    }
}

/// The connections of every account and their jobs.
#[derive(Default)]
pub struct Hub {
    config: RwLock<Config>,
    connections: Mutex<HashMap<i64, Connection>>,
    /// Each account's job generation: a job stops once its generation is
    /// no longer the account's (disconnected or reconnected).
    jobs: Mutex<HashMap<i64, u64>>,
}

impl Hub {
    pub fn configure(&self, config: Config) {
        *self.config.write().unwrap_or_else(|p| p.into_inner()) = config;
    }

    fn config(&self) -> Config {
        self.config
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    fn connection(&self, account: i64) -> Option<Connection> {
        self.connections
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(&account)
            .cloned()
    }

    fn insert(&self, account: i64, connection: Connection) {
        self.connections
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(account, connection);
    }

    fn client(&self, connection: &Connection) -> StripeClient {
        let config = self.config();
        StripeClient::new(&config.api_base, &connection.secret_key, config.backoff)
    }

    /// Changes a stored connection (if the account still has one).
    fn update(
        &self,
        state: &AppState,
        account: i64,
        change: impl FnOnce(&mut Connection),
    ) -> Result<(), ApiError> {
        // The store first, held by every update: they are stored in the
        // order they are made, and the connections' lock is not held
        // while the store waits for the database.
        let mut store = state.store();
        let body = {
            let mut connections = self.connections.lock().unwrap_or_else(|p| p.into_inner());
            let Some(connection) = connections.get_mut(&account) else {
                return Ok(());
            };
            change(connection);
            serde_json::to_value(&*connection).map_err(|e| ApiError::internal(e.to_string()))?
        };
        store.save_connection(account, Some(&body))
    }

    /// A new generation for the account's job: any running job stops.
    fn next_generation(&self, account: i64) -> u64 {
        let mut jobs = self.jobs.lock().unwrap_or_else(|p| p.into_inner());
        let generation = jobs.get(&account).map_or(1, |g| g + 1);
        jobs.insert(account, generation);
        generation
    }

    fn current(&self, account: i64, generation: u64) -> bool {
        self.jobs
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(&account)
            == Some(&generation)
    }
}

/// Loads the stored connections and starts their jobs (a backfill that did
/// not complete starts again; after a complete one the job polls events).
pub fn resume(state: &Arc<AppState>) -> Result<(), ApiError> {
    let stored = state.store().connections()?;
    for (account, body) in stored {
        let connection: Connection = serde_json::from_value(body)
            .map_err(|e| ApiError::internal(format!("a stored connection is unreadable: {e}")))?;
        state.stripe.insert(account, connection);
        start_job(state, account);
    }
    Ok(())
}

/// The connection status of an account.
pub fn status(state: &AppState, account: i64, ledger: &Ledger) -> Value {
    match state.stripe.connection(account) {
        Some(connection) => connection.public(ledger),
        None => json!({
            "connected": false, "platform": null, "account_id": null, "account_name": null,
            "livemode": false, "connected_at": null, "last_sync": null, "sync_status": null,
            "customers_imported": 0, "invoices_imported": 0
        }),
    }
}

/// The webhook signing secret and the uncollectible choice of an account's
/// connection (both `None` when it has none).
pub fn choices(state: &AppState, account: i64) -> (Option<String>, Option<String>) {
    state
        .stripe
        .connection(account)
        .map_or((None, None), |c| (c.webhook_secret, c.uncollectible))
}

/// Connects an account with a Stripe secret or restricted key: checks it
/// with `GET /v1/account`, stores the connection and starts the backfill.
/// Blocking (calls Stripe).
pub fn connect(
    state: &Arc<AppState>,
    account: i64,
    secret_key: &str,
    webhook_secret: Option<String>,
    uncollectible: Option<String>,
) -> Result<(), ApiError> {
    let config = state.stripe.config();
    let client = StripeClient::new(&config.api_base, secret_key, config.backoff);
    let stripe_account = client.get("/v1/account", &[])?;
    let name = ["settings.dashboard.display_name", "business_profile.name"]
        .iter()
        .find_map(|path| {
            path.split('.')
                .try_fold(&stripe_account, |v, key| v.get(key))
                .and_then(Value::as_str)
                .map(str::to_string)
        });
    let connection = Connection {
        secret_key: secret_key.to_string(),
        webhook_secret,
        account_id: stripe_account
            .get("id")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string(),
        account_name: name,
        livemode: secret_key.contains("_live_"),
        connected_at: now_text(),
        last_sync: None,
        sync_status: "syncing".to_string(),
        sync_error: None,
        backfilled: false,
        event_cursor: None,
        backfill_started: chrono::Utc::now().timestamp(),
        last_rejections: Vec::new(),
        uncollectible,
    };
    let body = serde_json::to_value(&connection).map_err(|e| ApiError::internal(e.to_string()))?;
    state.store().save_connection(account, Some(&body))?;
    state.stripe.insert(account, connection);
    start_job(state, account);
    Ok(())
}

/// Disconnects: stops the job and forgets the key; with `remove_data`,
/// deletes the customers (with their invoices) and plans the connection
/// imported. Returns how many records were removed.
pub fn disconnect(
    state: &AppState,
    account_id: i64,
    store: &mut Store,
    ledger: &mut Ledger,
    remove_data: bool,
) -> Result<Value, ApiError> {
    state.stripe.next_generation(account_id);
    let was = state
        .stripe
        .connections
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .remove(&account_id);
    store.save_connection(account_id, None)?;
    let (mut customers, mut plans) = (0, 0);
    if remove_data {
        let account = state.account(account_id)?;
        let ours = |source: Option<&str>| source == Some(DATA_SOURCE);
        let customer_ids: Vec<String> = ledger
            .customers()
            .filter(|c| ours(c.data_source.as_ref().map(|d| d.as_str())))
            .map(|c| c.id.to_string())
            .collect();
        for id in customer_ids {
            delete(state, &account, ledger, RecordKind::Customers, &id)?;
            customers += 1;
        }
        let plan_ids: Vec<String> = ledger
            .plans()
            .filter(|p| ours(p.data_source.as_ref().map(|d| d.as_str())))
            .map(|p| p.id.to_string())
            .collect();
        for id in plan_ids {
            // A plan another source's invoices still use stays.
            if delete(state, &account, ledger, RecordKind::Plans, &id).is_ok() {
                plans += 1;
            }
        }
    }
    Ok(json!({
        "connected": false,
        "was_connected": was.is_some(),
        "removed": {"customers": customers, "plans": plans},
    }))
}

fn start_job(state: &Arc<AppState>, account: i64) {
    let generation = state.stripe.next_generation(account);
    let state = Arc::downgrade(state);
    std::thread::spawn(move || run_job(&state, account, generation));
}

/// A connection's job: every interval, the backfill until one completes,
/// then a poll of the events, until the generation changes or the service
/// shuts down. The state is held only while the job works, so a shutdown
/// can close the database while it sleeps.
fn run_job(state: &Weak<AppState>, account: i64, generation: u64) {
    loop {
        let poll = {
            let Some(state) = state.upgrade() else {
                return;
            };
            if !state.stripe.current(account, generation) {
                return;
            }
            let Some(connection) = state.stripe.connection(account) else {
                return;
            };
            let outcome = if connection.backfilled {
                poll_events(&state, account, &connection)
            } else {
                backfill(&state, account, &connection, generation)
            };
            record_outcome(&state, account, generation, outcome);
            state.stripe.config().poll
        };
        std::thread::sleep(poll);
    }
}

/// Notes a sync's end in the connection: with the time, complete once a
/// backfill completed; or the error.
fn record_outcome(
    state: &AppState,
    account: i64,
    generation: u64,
    outcome: Result<Vec<Value>, ApiError>,
) {
    if !state.stripe.current(account, generation) {
        return;
    }
    let result = state.stripe.update(state, account, |c| match outcome {
        Ok(rejections) => {
            c.sync_status = if c.backfilled { "complete" } else { "syncing" }.to_string();
            c.sync_error = None;
            c.last_sync = Some(now_text());
            c.last_rejections = rejections;
        }
        Err(error) => {
            c.sync_status = "error".to_string();
            c.sync_error = Some(error.to_string());
        }
    });
    if let Err(error) = result {
        eprintln!("warning: the Stripe connection of account {account} was not saved: {error}");
    }
}

/// Reads every object the mapping uses, page by page, and imports them in
/// one batch. The newest event before the backfill becomes the cursor, so
/// polling picks up what changed during it.
fn backfill(
    state: &AppState,
    account: i64,
    connection: &Connection,
    generation: u64,
) -> Result<Vec<Value>, ApiError> {
    let client = state.stripe.client(connection);
    let newest = client.get("/v1/events", &[("limit", "1".to_string())])?;
    let cursor = newest
        .pointer("/data/0/id")
        .and_then(Value::as_str)
        .map(str::to_string);
    let mut objects = Vec::new();
    for list in LISTS {
        if !state.stripe.current(account, generation) {
            return Ok(Vec::new());
        }
        objects.extend(read_list(&client, list)?);
    }
    let rejections = import(state, account, &objects)?;
    if !state.stripe.current(account, generation) {
        return Ok(Vec::new());
    }
    state.stripe.update(state, account, |c| {
        if c.event_cursor.is_none() {
            c.event_cursor = cursor;
        }
        c.backfilled = true;
    })?;
    Ok(rejections)
}

/// Imports the events after the cursor, oldest first, and moves the cursor
/// to the newest. Without a cursor (no event existed at the backfill), the
/// events created since the backfill started.
fn poll_events(
    state: &AppState,
    account: i64,
    connection: &Connection,
) -> Result<Vec<Value>, ApiError> {
    let client = state.stripe.client(connection);
    let mut rejections = Vec::new();
    let mut cursor = connection.event_cursor.clone();
    loop {
        let mut params = vec![("limit", PAGE.to_string())];
        let page_events: Vec<Value>;
        let more;
        match &cursor {
            Some(after) => {
                params.push(("ending_before", after.clone()));
                let page = client.get("/v1/events", &params)?;
                page_events = page
                    .get("data")
                    .and_then(Value::as_array)
                    .cloned()
                    .unwrap_or_default();
                more = page.get("has_more").and_then(Value::as_bool) == Some(true);
            }
            None => {
                params.push(("created[gte]", connection.backfill_started.to_string()));
                params.retain(|(k, _)| *k != "limit");
                page_events = client.list_all("/v1/events", &params)?;
                more = false;
            }
        }
        let Some(newest) = page_events
            .first()
            .and_then(|e| e.get("id"))
            .and_then(Value::as_str)
        else {
            return Ok(rejections);
        };
        cursor = Some(newest.to_string());
        let mut events: Vec<Value> = page_events.iter().rev().cloned().collect();
        let related = related(&client, &events)?;
        events.extend(related.objects);
        rejections.extend(related.gone);
        rejections.extend(import(state, account, &events)?);
        let saved = cursor.clone();
        state
            .stripe
            .update(state, account, |c| c.event_cursor = saved)?;
        if !more {
            return Ok(rejections);
        }
    }
}

/// What event objects need beside them: a charge's invoice (so the payment
/// attempt lands on it) and a refund's charge (so the refund finds its
/// invoice). One Stripe no longer has (it answers 404: deleted) is skipped,
/// as deleted objects are: the event is still imported, and the object that
/// went without it is reported beside the rejections. Any other failure
/// stops the batch.
fn related(client: &StripeClient, events: &[Value]) -> Result<Related, ApiError> {
    let mut related = Related::default();
    for event in events {
        let Some(object) = event.pointer("/data/object") else {
            continue;
        };
        let kind = object.get("object").and_then(Value::as_str);
        let wanted = match kind {
            Some("charge") => Some(("invoice", "/v1/invoices")),
            Some("refund") => Some(("charge", "/v1/charges")),
            _ => None,
        };
        let Some((field, list)) = wanted else {
            continue;
        };
        let Some(id) = object.get(field).and_then(Value::as_str) else {
            continue;
        };
        let mut found = match client.get(&format!("{list}/{id}"), &[]) {
            Err(StripeError::Failed { status: 404, .. }) => {
                let of = kind.unwrap_or_default();
                related.gone.push(json!({
                    "id": object.get("id"),
                    "field": field,
                    "error": format!("Stripe no longer has {field} `{id}` (404: deleted); the {of} was imported without it"),
                }));
                continue;
            }
            answer => answer?,
        };
        if field == "invoice" {
            complete_lines(client, std::slice::from_mut(&mut found))?;
        }
        related.objects.push(found);
    }
    Ok(related)
}

/// What [`related`] found.
#[derive(Default)]
struct Related {
    objects: Vec<Value>,
    /// One rejection per object whose related object Stripe no longer has.
    gone: Vec<Value>,
}

/// Re-imports one customer from Stripe: the customer, its subscriptions,
/// invoices, credit notes and charges (with their refunds). Blocking.
pub fn resync_customer(
    state: &AppState,
    account: i64,
    customer: &str,
) -> Result<Option<Value>, ApiError> {
    let Some(connection) = state.stripe.connection(account) else {
        return Ok(None);
    };
    let client = state.stripe.client(&connection);
    let mut objects = vec![client.get(&format!("/v1/customers/{customer}"), &[])?];
    let by_customer = ("customer", customer.to_string());
    objects.extend(client.list_all(
        "/v1/subscriptions",
        &[by_customer.clone(), ("status", "all".to_string())],
    )?);
    let mut invoices = client.list_all("/v1/invoices", std::slice::from_ref(&by_customer))?;
    complete_lines(&client, &mut invoices)?;
    objects.extend(invoices);
    objects.extend(client.list_all("/v1/credit_notes", std::slice::from_ref(&by_customer))?);
    objects.extend(client.list_all("/v1/charges", std::slice::from_ref(&by_customer))?);
    let rejections = import(state, account, &objects)?;
    Ok(Some(json!({
        "message": format!("customer {customer} re-imported from Stripe: {} object(s)", objects.len()),
        "objects": objects.len(),
        "rejected": rejections,
    })))
}

/// Handles a webhook delivery: checks the signature with the connection's
/// signing secret, then imports the event (with what it needs beside it).
pub fn receive_webhook(
    state: &AppState,
    account: i64,
    signature: Option<&str>,
    body: &[u8],
) -> Result<Value, ApiError> {
    let connection = state
        .stripe
        .connection(account)
        .ok_or_else(|| ApiError::NotFound(format!("account {account} has no Stripe connection")))?;
    let secret = connection.webhook_secret.as_deref().ok_or_else(|| {
        ApiError::bad_field("webhook_secret", "this connection has no webhook signing secret; set `webhook_secret` with PUT /settings/payment-platform")
    })?;
    let signature = signature.ok_or_else(|| {
        ApiError::bad_field(signature::HEADER, "the Stripe-Signature header is missing")
    })?;
    signature::verify(signature, body, secret, chrono::Utc::now().timestamp())
        .map_err(|why| ApiError::bad_field(signature::HEADER, why))?;
    let event: Value = serde_json::from_slice(body)
        .map_err(|e| ApiError::bad_request(format!("the body is not a JSON event: {e}")))?;
    if event.get("object").and_then(Value::as_str) != Some("event") {
        return Err(ApiError::bad_request(
            "the body is not a Stripe event (`object` is not `event`)",
        ));
    }
    let client = state.stripe.client(&connection);
    let mut objects = vec![event.clone()];
    let related = related(&client, &objects)?;
    objects.extend(related.objects);
    let mut rejections = related.gone;
    rejections.extend(import(state, account, &objects)?);
    state
        .stripe
        .update(state, account, |c| c.last_sync = Some(now_text()))?;
    Ok(json!({"received": true, "id": event.get("id"), "rejected": rejections}))
}

/// The mapping's options of a connection: its data source and how
/// uncollectible invoices count (`failed` unless `void`).
pub fn options(uncollectible: Option<&str>) -> Result<StripeOptions, ApiError> {
    let mut choices = json!({"data_source": DATA_SOURCE});
    if let Some(uncollectible) = uncollectible {
        choices["uncollectible"] = json!(uncollectible);
    }
    // The choices are fields of the connection's body, not query parameters.
    StripeOptions::from_json(&choices).map_err(|error| match error {
        submetrics::Error::InvalidQuery { param, reason } => {
            ApiError::bad_field(param.clone(), format!("field `{param}`: {reason}"))
        }
        other => other.into(),
    })
}

/// Maps Stripe objects with the core and writes the records like any write
/// (each kind persisted in one transaction), removing what they undo.
/// Returns the rejections (object, id, field, reason).
fn import(state: &AppState, account_id: i64, objects: &[Value]) -> Result<Vec<Value>, ApiError> {
    let account = state.account(account_id)?;
    state.write_account(&account, |_, ledger| {
        import_into(state, &account, ledger, objects)
    })
}

/// [`import`] inside the write of the account.
fn import_into(
    state: &AppState,
    account: &crate::state::Account,
    ledger: &mut Ledger,
    objects: &[Value],
) -> Result<Vec<Value>, ApiError> {
    let account_id = account.row.lock().unwrap_or_else(|p| p.into_inner()).id;
    let uncollectible = state
        .stripe
        .connection(account_id)
        .and_then(|c| c.uncollectible);
    let options = options(uncollectible.as_deref())?;
    let records = map_stripe_objects(objects, &options, ledger);
    let mut rejections: Vec<Value> = records
        .rejected
        .iter()
        .map(|e| json!({"id": e.record_id(), "field": e.field(), "error": e.to_string()}))
        .collect();
    if ledger.data_source(DATA_SOURCE).is_none() {
        upsert(
            state,
            account,
            ledger,
            RecordKind::DataSources,
            &[json!({"id": DATA_SOURCE, "name": "Stripe", "type": "stripe"})],
        )?;
    }
    for (kind, list) in [
        (RecordKind::Customers, &records.customers),
        (RecordKind::Plans, &records.plans),
        (RecordKind::Invoices, &records.invoices),
    ] {
        for chunk in list.chunks(crate::routes::MAX_BATCH) {
            let report = upsert(state, account, ledger, kind, chunk)?;
            rejections.extend(report.rejected().map(|r| {
                json!({"id": r.id, "field": r.error.as_ref().and_then(|e| e.field().map(str::to_string)), "error": r.import_error})
            }));
        }
    }
    for id in &records.removed_invoices {
        if ledger.invoice(id).is_some() {
            delete(state, account, ledger, RecordKind::Invoices, id)?;
        }
    }
    rejections.truncate(100);
    Ok(rejections)
}
