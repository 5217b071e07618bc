//! Events out: events derived from what the engine computes, delivered to
//! webhook subscriptions, chat incoming webhooks and email digests through
//! one durable outbox (see `docs/events.md`).
//!
//! After each committed record write the customers it touched are marked;
//! a scanner thread compares their facts ([`facts`]) with the facts stored
//! when events were last fired and fires events for what appeared or
//! changed, writing the events, the facts and the deliveries they owe in
//! one transaction. Every account is scanned whole at start (which also
//! catches what a crash kept from being scanned) and at every scan
//! interval (which catches lapses, which appear as time passes, and
//! changes of settings and FX rates). A dispatcher thread ([`deliver`])
//! delivers the outbox. Neither holds up writes or reports for longer than
//! a read of the ledger.

mod catalog;
mod db;
mod deliver;
mod digest;
mod facts;
mod notify;
mod scan;
mod target;

pub use catalog::{EVENT_TYPES, WEBHOOK_TEST, is_event_type, sample};
pub use db::{Channel, Delivery, OutboundDb, Webhook};
pub use deliver::{new_secret, random_bytes};
pub use digest::{Frequency, compute as compute_digest, email as digest_email};
pub use notify::{merge as merge_notifications, validate as validate_notifications};
pub use target::check_given as check_target;

use crate::error::ApiError;
use crate::state::AppState;
use crate::store::Change;
use facts::Scope;
use std::collections::{BTreeSet, HashMap, HashSet};
use std::path::Path;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, OnceLock};
use std::time::{Duration, Instant};
use submetrics::RecordKind;

/// The service options of events and their delivery.
#[derive(clap::Args, Debug, Clone)]
pub struct Options {
    /// Let webhook and chat targets be loopback or private-network
    /// addresses (refused otherwise).
    #[arg(long, env = "SUBMETRICS_WEBHOOKS_ALLOW_PRIVATE")]
    pub webhooks_allow_private: bool,
    /// Waits before each retry of a failed delivery, comma-separated, each a
    /// number with ms, s, m or h; after the last retry fails the delivery is
    /// failed.
    #[arg(
        long,
        env = "SUBMETRICS_WEBHOOK_RETRY_SCHEDULE",
        default_value = "5s,5m,30m,2h,5h,10h,10h",
        value_parser = parse_schedule
    )]
    pub webhook_retry_schedule: Schedule,
    /// Longest time one delivery attempt may take.
    #[arg(long, env = "SUBMETRICS_WEBHOOK_TIMEOUT", default_value = "15s", value_parser = parse_duration)]
    pub webhook_timeout: Duration,
    /// Time between whole scans of every account for events that appear as
    /// time passes (lapses, invoices dated ahead) and for digests due.
    #[arg(long, env = "SUBMETRICS_EVENTS_SCAN_INTERVAL", default_value = "5m", value_parser = parse_duration)]
    pub events_scan_interval: Duration,
    /// SMTP server of email digests (none: emails fail and are retried).
    #[arg(long, env = "SUBMETRICS_SMTP_HOST")]
    pub smtp_host: Option<String>,
    #[arg(long, env = "SUBMETRICS_SMTP_PORT", default_value_t = 25)]
    pub smtp_port: u16,
    /// Sender address of email digests.
    #[arg(
        long,
        env = "SUBMETRICS_SMTP_FROM",
        default_value = "submetrics@localhost"
    )]
    pub smtp_from: String,
    #[arg(long, env = "SUBMETRICS_SMTP_USERNAME")]
    pub smtp_username: Option<String>,
    /// Best given through the environment.
    #[arg(long, env = "SUBMETRICS_SMTP_PASSWORD", hide_env_values = true)]
    pub smtp_password: Option<String>,
}

/// Waits between delivery attempts.
#[derive(Debug, Clone, PartialEq)]
pub struct Schedule(pub Vec<Duration>);

/// Reads `100ms`, `5s`, `30m` or `2h`.
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let text = text.trim();
    let split = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let number: u64 = number
        .parse()
        .map_err(|_| format!("`{text}` is not a duration such as 500ms, 5s, 5m or 2h"))?;
    let unit_millis = match unit {
        "ms" => 1,
        "s" => 1000,
        "m" => 60_000,
        "h" => 3_600_000,
        _ => {
            return Err(format!(
                "`{text}` is not a duration such as 500ms, 5s, 5m or 2h"
            ));
        }
    };
    Ok(Duration::from_millis(number.saturating_mul(unit_millis)))
}

pub fn parse_schedule(text: &str) -> Result<Schedule, String> {
    text.split(',')
        .filter(|part| !part.trim().is_empty())
        .map(parse_duration)
        .collect::<Result<Vec<_>, _>>()
        .map(Schedule)
}

/// An SMTP server to send emails through.
#[derive(Debug, Clone)]
pub struct Smtp {
    pub host: String,
    pub port: u16,
    pub from: String,
    pub username: Option<String>,
    pub password: Option<String>,
}

/// How events are delivered (from [`Options`]).
#[derive(Debug, Clone)]
pub struct Config {
    pub allow_private: bool,
    pub retry_schedule: Vec<Duration>,
    pub attempt_timeout: Duration,
    pub scan_interval: Duration,
    pub smtp: Option<Smtp>,
}

impl Default for Config {
    fn default() -> Config {
        Config {
            allow_private: false,
            retry_schedule: Vec::new(),
            attempt_timeout: Duration::from_secs(15),
            scan_interval: Duration::from_secs(300),
            smtp: None,
        }
    }
}

impl Options {
    pub fn config(&self) -> Result<Config, String> {
        if self.smtp_from.parse::<lettre::message::Mailbox>().is_err() {
            return Err(format!(
                "--smtp-from `{}` is not an email address",
                self.smtp_from
            ));
        }
        Ok(Config {
            allow_private: self.webhooks_allow_private,
            retry_schedule: self.webhook_retry_schedule.0.clone(),
            attempt_timeout: self.webhook_timeout,
            scan_interval: self.events_scan_interval.max(Duration::from_millis(100)),
            smtp: self.smtp_host.clone().map(|host| Smtp {
                host,
                port: self.smtp_port,
                from: self.smtp_from.clone(),
                username: self.smtp_username.clone(),
                password: self.smtp_password.clone(),
            }),
        })
    }
}

/// Accounts whose facts may have changed, with which customers, and when
/// the marks since the scanner last took them came.
#[derive(Default)]
struct Dirty {
    accounts: HashMap<i64, Scope>,
    /// The first and the latest mark since the last take.
    first_mark: Option<Instant>,
    last_mark: Option<Instant>,
}

/// How long writes must pause before their customers are scanned.
const SETTLE: Duration = Duration::from_millis(200);

/// The longest a mark waits for writes to pause.
const MAX_DELAY: Duration = Duration::from_secs(10);

impl Dirty {
    /// When the marks so far are due for a scan: once writes have paused
    /// for [`SETTLE`], at the latest [`MAX_DELAY`] after the first mark
    /// (`None`: nothing is marked). A bulk import, a stream of writes with
    /// no pause, thus runs without a scan beside it for up to
    /// [`MAX_DELAY`]; its events follow it.
    fn due(&self) -> Option<Instant> {
        let (first, last) = (self.first_mark?, self.last_mark?);
        Some((last + SETTLE).min(first + MAX_DELAY))
    }

    fn note_mark(&mut self, now: Instant) {
        self.first_mark.get_or_insert(now);
        self.last_mark = Some(now);
    }
}

/// The events and delivery machinery of the service.
pub struct Outbound {
    db: Mutex<OutboundDb>,
    /// A read-only connection beside `db`, so reads never wait for a write
    /// (another process's lock included); see [`Outbound::reads`].
    reader: Mutex<OutboundDb>,
    config: OnceLock<Config>,
    dirty: Mutex<Dirty>,
    dirty_signal: Condvar,
    /// Set when there may be a delivery to make.
    work: Mutex<bool>,
    work_signal: Condvar,
    in_flight: Mutex<HashSet<(Channel, String)>>,
    agent: OnceLock<ureq::Agent>,
    /// Set when the service shuts down: the scanner and the dispatcher
    /// return, letting go of the service state and of this.
    stopping: std::sync::atomic::AtomicBool,
}

impl Outbound {
    /// Opens the outbound tables of the database at `path`.
    pub fn open(path: &Path) -> Result<Outbound, ApiError> {
        Ok(Outbound {
            db: Mutex::new(OutboundDb::open(path)?),
            reader: Mutex::new(OutboundDb::open_reader(path)?),
            config: OnceLock::new(),
            dirty: Mutex::new(Dirty::default()),
            dirty_signal: Condvar::new(),
            work: Mutex::new(false),
            work_signal: Condvar::new(),
            in_flight: Mutex::new(HashSet::new()),
            agent: OnceLock::new(),
            stopping: std::sync::atomic::AtomicBool::new(false),
        })
    }

    pub fn db(&self) -> MutexGuard<'_, OutboundDb> {
        self.db.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The outbound tables for reading, beside the writes of [`Outbound::db`].
    pub fn reads(&self) -> MutexGuard<'_, OutboundDb> {
        self.reader.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub fn config(&self) -> &Config {
        self.config.get_or_init(Config::default)
    }

    fn in_flight(&self) -> MutexGuard<'_, HashSet<(Channel, String)>> {
        self.in_flight.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The HTTP client of deliveries: no redirects, the attempt timeout,
    /// every status an answer.
    fn agent(&self) -> &ureq::Agent {
        self.agent.get_or_init(|| {
            ureq::Agent::config_builder()
                .http_status_as_error(false)
                .max_redirects(0)
                .timeout_global(Some(self.config().attempt_timeout))
                .build()
                .into()
        })
    }

    /// Starts the scanner and the dispatcher with `config`.
    pub fn start(state: &Arc<AppState>, config: Config) {
        let outbound = Arc::clone(&state.outbound);
        let _ = outbound.config.set(config);
        let scanner_state = Arc::downgrade(state);
        let scanner_outbound = Arc::clone(&outbound);
        std::thread::spawn(move || scan::run(scanner_state, scanner_outbound));
        std::thread::spawn(move || deliver::dispatch(outbound));
    }

    /// Stops the scanner and the dispatcher (each returns at its next wait);
    /// events already recorded stay in the outbox for the next start.
    pub fn stop(&self) {
        self.stopping
            .store(true, std::sync::atomic::Ordering::SeqCst);
        self.dirty_signal.notify_all();
        self.wake();
    }

    /// Whether [`Outbound::stop`] was called.
    fn stopping(&self) -> bool {
        self.stopping.load(std::sync::atomic::Ordering::SeqCst)
    }

    /// Notes a committed record write of `account`: the customers its
    /// changes touched are scanned next (every customer after a change of
    /// plans or a deleted invoice, whose customer is gone from the change).
    pub fn touched(&self, account: i64, changes: &[Change]) {
        let mut customers: BTreeSet<&str> = BTreeSet::new();
        for change in changes {
            match change {
                Change::Put {
                    kind: RecordKind::Customers,
                    id,
                    ..
                }
                | Change::Delete {
                    kind: RecordKind::Customers,
                    id,
                } => {
                    customers.insert(id);
                }
                Change::Put {
                    kind: RecordKind::Invoices,
                    owner: Some(owner),
                    ..
                } => {
                    customers.insert(owner);
                }
                Change::Put {
                    kind: RecordKind::DataSources,
                    ..
                }
                | Change::Delete {
                    kind: RecordKind::DataSources,
                    ..
                } => {}
                _ => return self.mark(account, Scope::All),
            }
        }
        if !customers.is_empty() {
            let ids = customers.into_iter().map(str::to_string).collect();
            self.mark(account, Scope::Customers(ids));
        }
    }

    fn mark(&self, account: i64, scope: Scope) {
        let mut dirty = self.dirty.lock().unwrap_or_else(|p| p.into_inner());
        dirty.note_mark(Instant::now());
        match dirty.accounts.get_mut(&account) {
            Some(existing) => existing.extend(scope),
            None => {
                dirty.accounts.insert(account, scope);
            }
        }
        self.dirty_signal.notify_all();
    }

    /// Waits until what is marked is due ([`Dirty::due`]) or `deadline`
    /// passes; takes what is marked.
    fn take_dirty(&self, deadline: Instant) -> HashMap<i64, Scope> {
        let mut dirty = self.dirty.lock().unwrap_or_else(|p| p.into_inner());
        while !self.stopping() {
            let now = Instant::now();
            let until = dirty.due().map_or(deadline, |due| due.min(deadline));
            if now >= until {
                break;
            }
            dirty = self
                .dirty_signal
                .wait_timeout(dirty, until - now)
                .unwrap_or_else(|p| p.into_inner())
                .0;
        }
        dirty.first_mark = None;
        dirty.last_mark = None;
        std::mem::take(&mut dirty.accounts)
    }

    /// Lets `pause` pass before the next scan (or until the service
    /// stops), marks gathering meanwhile. The scanner rests as long as its
    /// last scan took: under a stream of writes it then scans at most half
    /// the time, and one scan of many writes' customers costs less than one
    /// per write, since their facts and events land on the same pages of
    /// the database's indexes (keyed by hashes, so each scan's inserts
    /// touch pages all over them) and on one sync.
    fn rest(&self, pause: Duration) {
        let until = Instant::now() + pause;
        let mut dirty = self.dirty.lock().unwrap_or_else(|p| p.into_inner());
        while !self.stopping() {
            let now = Instant::now();
            if now >= until {
                break;
            }
            dirty = self
                .dirty_signal
                .wait_timeout(dirty, until - now)
                .unwrap_or_else(|p| p.into_inner())
                .0;
        }
    }

    /// Tells the dispatcher there may be a delivery to make.
    pub fn wake(&self) {
        *self.work.lock().unwrap_or_else(|p| p.into_inner()) = true;
        self.work_signal.notify_all();
    }

    fn wait_for_work(&self, wait: Duration) {
        let mut work = self.work.lock().unwrap_or_else(|p| p.into_inner());
        if !*work {
            work = self
                .work_signal
                .wait_timeout(work, wait)
                .unwrap_or_else(|p| p.into_inner())
                .0;
        }
        *work = false;
    }

    /// Makes one attempt at a webhook delivery now and records it (a test
    /// send); no retries.
    pub fn send_now(
        &self,
        hook: &Webhook,
        event_id: &str,
        event_type: &str,
        body: &str,
    ) -> Result<Delivery, ApiError> {
        let probe = Delivery {
            seq: 0,
            channel: Channel::Webhook,
            target: hook.id.clone(),
            event_id: event_id.to_string(),
            event_type: event_type.to_string(),
            body: body.to_string(),
            status: db::PENDING.to_string(),
            attempts: 0,
            next_attempt: 0,
            created: crate::state::now_text(),
            last_attempt: None,
            last_status: None,
            last_error: None,
            delivered: None,
        };
        let attempt = deliver::attempt(self, &probe);
        self.db().insert_attempted(
            hook.account_id,
            &hook.id,
            event_id,
            event_type,
            body,
            &attempt,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn marks_are_due_once_writes_pause_and_at_the_latest_after_the_longest_delay() {
        let start = Instant::now();
        let mut dirty = Dirty::default();
        assert_eq!(dirty.due(), None);
        dirty.note_mark(start);
        assert_eq!(dirty.due(), Some(start + SETTLE));
        // Each write pushes the scan back while they keep coming...
        let later = start + Duration::from_millis(150);
        dirty.note_mark(later);
        assert_eq!(dirty.due(), Some(later + SETTLE));
        // ...up to the longest delay after the first.
        dirty.note_mark(start + MAX_DELAY);
        assert_eq!(dirty.due(), Some(start + MAX_DELAY));
    }
}
