//! Checkpoints (copying the write-ahead log back into the database file)
//! on a thread of their own with its own connection, rather than inside
//! whichever commit crosses the log size: a commit only appends to the log
//! and syncs it. Each checkpoint ends with the whole log copied, so that the
//! next commit starts the log over instead of growing it. Should the log
//! still grow far beyond that size, the committing connection checkpoints
//! as well. The event tables' connection (`outbound`), which writes the
//! same database, leaves its checkpoints to the same thread.

use crate::error::ApiError;
use rusqlite::Connection;
use rusqlite::wal::CheckpointMode;
use std::path::Path;
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

/// Log frames (pages) after which a commit asks for a checkpoint:
/// SQLite's own automatic checkpoint size.
pub const CHECKPOINT_FRAMES: i32 = 1000;
/// A commit asks for a checkpoint sooner, once the log has grown by this
/// many frames, when the last ask is [`CHECKPOINT_INTERVAL`] ago. A
/// checkpoint's writes to the database file and its sync hold up the syncs
/// of the commits beside it, the longer the more it copies: a checkpoint of
/// 1000 frames took 3-4 ms, during which commits took 2-3 ms instead of
/// 0.2. At moderate rates checkpoints now copy a few hundred frames at a
/// time; under saturation the log grows by 1000 frames in about that time
/// anyway.
const CHECKPOINT_FRAMES_SOONER: i32 = 100;
const CHECKPOINT_INTERVAL: Duration = Duration::from_millis(25);
/// Log frames after which the committing connection checkpoints itself,
/// so the log stays bounded even when the checkpoint thread falls behind.
const CHECKPOINT_FRAMES_LIMIT: i32 = 32 * CHECKPOINT_FRAMES;

/// The checkpoint thread and how to wake or stop it.
pub struct Checkpointer {
    signal: Arc<(Mutex<CheckpointRequest>, Condvar)>,
    thread: Option<std::thread::JoinHandle<()>>,
}

#[derive(Default)]
struct CheckpointRequest {
    wanted: bool,
    stop: bool,
}

impl Checkpointer {
    /// Starts the thread on its own connection to `path`, and makes
    /// `connection`'s commits wake it instead of checkpointing themselves.
    /// `writes` is held by the record writes of `connection`.
    pub fn start(
        path: &Path,
        connection: &mut Connection,
        writes: &Arc<Mutex<()>>,
    ) -> Result<Checkpointer, ApiError> {
        let own = Connection::open(path).map_err(ApiError::storage)?;
        own.execute_batch("PRAGMA synchronous = FULL;")
            .map_err(ApiError::storage)?;
        let signal = Arc::new((Mutex::new(CheckpointRequest::default()), Condvar::new()));
        let thread = {
            let signal = Arc::clone(&signal);
            let writes = Arc::clone(writes);
            std::thread::Builder::new()
                .name("checkpoint".into())
                .spawn(move || checkpoints(&own, &signal, &writes))
                .map_err(|e| {
                    ApiError::internal(format!("cannot start the checkpoint thread: {e}"))
                })?
        };
        ask_for_checkpoints(connection, &signal)?;
        Ok(Checkpointer {
            signal,
            thread: Some(thread),
        })
    }

    /// Makes the commits of another connection to the same database wake
    /// this thread, as the store's do, instead of checkpointing themselves
    /// (SQLite's automatic checkpoint, which copies the whole log inside
    /// the commit, with the writer waiting).
    pub fn serve(&self, connection: &mut Connection) -> Result<(), ApiError> {
        ask_for_checkpoints(connection, &self.signal)
    }
}

/// The checkpoint thread: each time a commit asks for one, a passive
/// checkpoint (never waiting for, nor blocking, the writer) copies the log
/// into the database file; then a second one, with record writes held off,
/// copies what they committed during the first. The log is then wholly in
/// the database file, and the next commit writes the log from its start
/// again. Without that second step a steady stream of commits never lets a
/// checkpoint catch up: the log grows with every commit (to the limit where
/// the committing connection checkpoints it all at once), and each commit
/// also allocates new disk space and syncs the log's size with it.
fn checkpoints(
    connection: &Connection,
    signal: &(Mutex<CheckpointRequest>, Condvar),
    writes: &Mutex<()>,
) {
    let (request, wakeup) = signal;
    loop {
        {
            let mut state = request.lock().unwrap_or_else(|p| p.into_inner());
            while !state.wanted && !state.stop {
                state = wakeup.wait(state).unwrap_or_else(|p| p.into_inner());
            }
            if state.stop {
                return;
            }
            state.wanted = false;
        }
        if connection
            .wal_checkpoint_v2(Some("main"), CheckpointMode::PASSIVE)
            .is_ok()
        {
            // The first pass copied the log as it was when it began; now
            // what was committed since (a short copy), with writes held.
            let _writes = writes.lock().unwrap_or_else(|p| p.into_inner());
            let _ = connection.wal_checkpoint_v2(Some("main"), CheckpointMode::PASSIVE);
        }
    }
}

/// Installs the log hook that asks the checkpoint thread for checkpoints
/// on `connection`, in place of SQLite's automatic checkpoint.
fn ask_for_checkpoints(
    connection: &mut Connection,
    signal: &Arc<(Mutex<CheckpointRequest>, Condvar)>,
) -> Result<(), ApiError> {
    let wake = Arc::clone(signal);
    // The log's size when a checkpoint was last asked for, and when: one
    // is asked for each CHECKPOINT_FRAMES frames the log grows by, or
    // each CHECKPOINT_FRAMES_SOONER once CHECKPOINT_INTERVAL has passed
    // (a log that starts over counts from zero again).
    let mut asked_at = 0;
    let mut asked_when = Instant::now();
    // Replaces SQLite's automatic checkpoint (itself a log hook). The
    // hook runs after the commit is durable; its outcome must not turn
    // that commit into an error, so checkpoint failures are ignored (a
    // later checkpoint copies the same frames).
    connection
        .wal_hook(Some(move |wal: &mut rusqlite::hooks::Wal, frames: i32| {
            if frames < asked_at {
                asked_at = 0;
            }
            if frames >= CHECKPOINT_FRAMES_LIMIT {
                let _ = wal.checkpoint_v2(CheckpointMode::PASSIVE);
            } else if frames - asked_at >= CHECKPOINT_FRAMES
                || (frames - asked_at >= CHECKPOINT_FRAMES_SOONER
                    && asked_when.elapsed() >= CHECKPOINT_INTERVAL)
            {
                asked_at = frames;
                asked_when = Instant::now();
                let (request, wakeup) = &*wake;
                request.lock().unwrap_or_else(|p| p.into_inner()).wanted = true;
                wakeup.notify_one();
            }
            Ok(())
        }))
        .map_err(ApiError::storage)
}

impl Drop for Checkpointer {
    fn drop(&mut self) {
        let (request, wakeup) = &*self.signal;
        request.lock().unwrap_or_else(|p| p.into_inner()).stop = true;
        wakeup.notify_one();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}
