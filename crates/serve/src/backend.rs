//! [`StoreBackend`]: an NBD backend over any [`BlockStore`] (a persistent array, a
//! memory store), with optional pacing by the drive model and response-time
//! percentiles.
//!
//! Commands run one at a time under a lock on the store (the stores take `&mut
//! self`); a flush therefore covers the writes of every connection, which is what
//! `CAN_MULTI_CONN` promises. A `FUA` write or trim is followed by a flush of the
//! whole store before its reply: stronger than asked, never weaker. With a pacer and
//! [`StoreBackend::with_member_failures`], every command ends by telling the pacer of
//! members the store failed since (the model cannot bring one back: a member rebuilt
//! while served stays failed in the model until the server restarts).

use crate::latency::{LatencyHistogram, LatencySummary};
use crate::pacer::{Paced, Pacer};
use spinstack_nbd::{Backend, Command, CommandError, Reply};
use spinstack_sim::request::Operation;
use spinstack_sim::units::{Lbn, Nanoseconds, Sectors, SECTOR_BYTES};
use spinstack_store::{BlockStore, ByteStore, StoreError, ZeroMode};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// The members of a store that are out of service (ascending), for the pacing model:
/// a persistent array's failed roles.
pub type FailedMembers<S> = fn(&S) -> Vec<u32>;

/// An NBD backend over a store.
pub struct StoreBackend<S: BlockStore + Send + 'static> {
    /// `None` once the server shut down: later commands are answered `ESHUTDOWN`.
    store: Mutex<Option<ByteStore<S>>>,
    size_bytes: u64,
    pacer: Option<Pacer>,
    /// How to see which members failed, and those the pacer has been told of: a
    /// member the data path fails (a write error, say) must be timed as failed too.
    failed_members: Option<FailedMembers<S>>,
    told_pacer: Mutex<Vec<u32>>,
    latency: Arc<Mutex<LatencyHistogram>>,
    store_errors: AtomicU64,
}

impl<S: BlockStore + Send + 'static> StoreBackend<S> {
    /// Serves `store`, unpaced (`--timing none`) or paced by `pacer`.
    pub fn new(store: S, pacer: Option<Pacer>) -> StoreBackend<S> {
        let size_bytes = store.capacity().bytes();
        StoreBackend {
            store: Mutex::new(Some(ByteStore::new(store))),
            size_bytes,
            pacer,
            failed_members: None,
            told_pacer: Mutex::new(Vec::new()),
            latency: Arc::new(Mutex::new(LatencyHistogram::default())),
            store_errors: AtomicU64::new(0),
        }
    }

    /// Lets the pacer follow the store's member failures (`failed_members` is asked
    /// after every command), starting with those the store already has.
    pub fn with_member_failures(mut self, failed_members: FailedMembers<S>) -> StoreBackend<S> {
        self.failed_members = Some(failed_members);
        self.sync_pacer();
        self
    }

    /// Tells the pacer of every member failed since it was last told, and of every
    /// member it was told of that is no longer failed (rebuilt: a new drive in its
    /// place). Control commands call it after failing a member, the online rebuild
    /// when it ends.
    pub fn sync_pacer(&self) {
        let guard = self.lock();
        if let Some(store) = guard.as_ref() {
            self.tell_pacer(store.inner());
        }
    }

    fn tell_pacer(&self, store: &S) {
        let (Some(pacer), Some(failed_members)) = (&self.pacer, self.failed_members) else {
            return;
        };
        let mut told = self
            .told_pacer
            .lock()
            .unwrap_or_else(|poison| poison.into_inner());
        let failed_now = failed_members(store);
        for &member in &failed_now {
            if !told.contains(&member) {
                pacer.fail_member(spinstack_sim::device::MemberIndex(member));
                told.push(member);
            }
        }
        told.retain(|member| {
            let still_failed = failed_now.contains(member);
            if !still_failed {
                pacer.replace_member(spinstack_sim::device::MemberIndex(*member));
            }
            still_failed
        });
    }

    /// Runs `action` on the store with every command held off meanwhile (control
    /// commands: fail a member, a rebuild step, a scrub); `Err` after shutdown.
    pub fn with_store<R>(&self, action: impl FnOnce(&mut S) -> R) -> Result<R, ShutDown> {
        let mut store = self.lock();
        match store.as_mut() {
            Some(store) => Ok(action(store.inner_mut())),
            None => Err(ShutDown),
        }
    }

    /// Takes the store out (to close it cleanly); every later command is answered
    /// `ESHUTDOWN`. `None` if it was already taken.
    pub fn shut_down(&self) -> Option<S> {
        self.lock().take().map(ByteStore::into_inner)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Option<ByteStore<S>>> {
        self.store
            .lock()
            .unwrap_or_else(|poison| poison.into_inner())
    }

    pub fn pacer(&self) -> Option<&Pacer> {
        self.pacer.as_ref()
    }

    /// Has the pacer, if any, time the reads of one online rebuild step and waits
    /// for them ([`Pacer::pace_rebuild_reads`]); unpaced, returns at once. Call it
    /// without holding the store, so client requests go on meanwhile.
    pub fn pace_rebuild(&self, read_ranges: &[(Lbn, Sectors)]) {
        if let Some(pacer) = &self.pacer {
            pacer.pace_rebuild_reads(read_ranges);
        }
    }

    /// Response times from request read to reply handed to the connection (written
    /// at once, or queued for its writer thread when the pacer releases it).
    pub fn latency(&self) -> LatencySummary {
        self.latency
            .lock()
            .unwrap_or_else(|poison| poison.into_inner())
            .summary()
    }

    /// Commands the store failed (answered `EIO` or `ENOTSUP`).
    pub fn store_errors(&self) -> u64 {
        self.store_errors.load(Ordering::Relaxed)
    }

    /// Carries out `command`; a read's data lands in `read_buffer` (resized to the
    /// length read).
    fn execute(&self, command: &Command, read_buffer: &mut Vec<u8>) -> Result<(), Failure> {
        let mut guard = self.lock();
        let store = guard.as_mut().ok_or(Failure::ShutDown)?;
        let outcome = run_command(store, command, read_buffer);
        self.tell_pacer(store.inner());
        Ok(outcome?)
    }
}

/// Why a command failed: the store said no, or the server is shutting down.
#[derive(Debug)]
enum Failure {
    Store(StoreError),
    ShutDown,
}

impl From<StoreError> for Failure {
    fn from(error: StoreError) -> Failure {
        Failure::Store(error)
    }
}

impl std::fmt::Display for Failure {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Failure::Store(error) => write!(formatter, "{error}"),
            Failure::ShutDown => write!(formatter, "the server is shutting down"),
        }
    }
}

/// The store was taken out at shutdown.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("the server is shutting down")]
pub struct ShutDown;

fn run_command<S: BlockStore>(
    store: &mut ByteStore<S>,
    command: &Command,
    read_buffer: &mut Vec<u8>,
) -> Result<(), StoreError> {
    match *command {
        Command::Read {
            offset_bytes,
            length_bytes,
        } => {
            // Reused from request to request: no allocation or zeroing per read.
            read_buffer.resize(length_bytes as usize, 0);
            store.read(offset_bytes, read_buffer)
        }
        Command::Write {
            offset_bytes,
            ref data,
            force_unit_access,
        } => {
            store.write(offset_bytes, data)?;
            flush_if(store, force_unit_access)
        }
        Command::Flush => store.flush(),
        Command::Trim {
            offset_bytes,
            length_bytes,
            force_unit_access,
        } => {
            store.trim(offset_bytes, length_bytes as u64)?;
            flush_if(store, force_unit_access)
        }
        Command::WriteZeroes {
            offset_bytes,
            length_bytes,
            force_unit_access,
            may_trim,
        } => {
            let mode = if may_trim {
                ZeroMode::MayTrim
            } else {
                ZeroMode::Allocate
            };
            store.write_zeroes(offset_bytes, length_bytes as u64, mode)?;
            flush_if(store, force_unit_access)
        }
    }
}

fn flush_if<S: BlockStore>(
    store: &mut ByteStore<S>,
    force_unit_access: bool,
) -> Result<(), StoreError> {
    if force_unit_access {
        store.flush()?;
    }
    Ok(())
}

/// The protocol's answer to a failure.
fn command_error(failure: &Failure) -> CommandError {
    match failure {
        Failure::ShutDown => CommandError::Shutdown,
        Failure::Store(StoreError::Unsupported { .. }) => CommandError::NotSupported,
        Failure::Store(StoreError::OutOfRange { .. } | StoreError::ByteRangeOutOfRange { .. }) => {
            CommandError::Invalid
        }
        Failure::Store(_) => CommandError::Io,
    }
}

/// The sectors a byte range touches, for the model.
fn sectors_touched(offset_bytes: u64, length_bytes: u64) -> (Lbn, Sectors) {
    let first = offset_bytes / SECTOR_BYTES;
    let end = (offset_bytes + length_bytes).div_ceil(SECTOR_BYTES);
    (Lbn(first), Sectors(end - first))
}

/// What the model is told of a command.
fn paced_shape(command: &Command) -> (Operation, Lbn, Sectors, bool) {
    match *command {
        Command::Read {
            offset_bytes,
            length_bytes,
        } => {
            let (lbn, sectors) = sectors_touched(offset_bytes, length_bytes as u64);
            (Operation::Read, lbn, sectors, false)
        }
        Command::Write {
            offset_bytes,
            ref data,
            force_unit_access,
        } => {
            let (lbn, sectors) = sectors_touched(offset_bytes, data.len() as u64);
            (Operation::Write, lbn, sectors, force_unit_access)
        }
        Command::Flush => (Operation::Flush, Lbn(0), Sectors(0), false),
        Command::Trim {
            offset_bytes,
            length_bytes,
            force_unit_access,
        } => {
            let (lbn, sectors) = sectors_touched(offset_bytes, length_bytes as u64);
            (Operation::Trim, lbn, sectors, force_unit_access)
        }
        // Zeros cost the drive what any write of that length costs.
        Command::WriteZeroes {
            offset_bytes,
            length_bytes,
            force_unit_access,
            ..
        } => {
            let (lbn, sectors) = sectors_touched(offset_bytes, length_bytes as u64);
            (Operation::Write, lbn, sectors, force_unit_access)
        }
    }
}

impl<S: BlockStore + Send + 'static> Backend for StoreBackend<S> {
    fn size_bytes(&self) -> u64 {
        self.size_bytes
    }

    fn rotational(&self) -> bool {
        true
    }

    fn submit(&self, command: Command, reply: Reply) {
        let received = Instant::now();
        READ_BUFFER.with(|buffer| {
            let mut buffer = buffer.borrow_mut();
            let outcome = self.execute(&command, &mut buffer);
            if let Err(error) = &outcome {
                self.store_errors.fetch_add(1, Ordering::Relaxed);
                if let Some(line) = failure_log_line(&command, error) {
                    eprintln!("{line}");
                }
            }
            let is_read = matches!(command, Command::Read { .. });
            match &self.pacer {
                Some(pacer) if outcome.is_ok() => {
                    // The reply waits for the model: it keeps its own copy of the data.
                    let data = if is_read {
                        std::mem::take(&mut *buffer)
                    } else {
                        Vec::new()
                    };
                    let latency = Arc::clone(&self.latency);
                    let (operation, lbn, sectors, force_unit_access) = paced_shape(&command);
                    pacer.submit(Paced {
                        operation,
                        lbn,
                        sectors,
                        force_unit_access,
                        release: Box::new(move || {
                            // The buffer goes with the reply: it may wait in the
                            // connection's queue, and a move spares a copy there.
                            if is_read {
                                reply.data_vec(data);
                            } else {
                                reply.ok();
                            }
                            record(&latency, received);
                        }),
                    });
                }
                _ => {
                    let outcome = outcome.as_ref().map(|()| is_read.then_some(&buffer[..]));
                    answer(reply, outcome);
                    record(&self.latency, received);
                }
            }
        });
    }
}

thread_local! {
    /// Each connection thread's read buffer, reused from request to request.
    static READ_BUFFER: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
    /// Whether this connection thread already said it refuses requests at shutdown.
    static SHUTDOWN_LOGGED: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// The log line for a failed command, or `None` when it would repeat one: a client
/// streaming requests during shutdown gets hundreds of `ESHUTDOWN` replies a second,
/// and one line per connection says all there is. `submit` runs on the connection's
/// own reader thread (one thread per connection, never reused), so a thread-local
/// flag is a per-connection one.
fn failure_log_line(command: &Command, failure: &Failure) -> Option<String> {
    if let Failure::ShutDown = failure {
        if SHUTDOWN_LOGGED.with(|logged| logged.replace(true)) {
            return None;
        }
        return Some(format!(
            "serve: {} failed: {failure}; refusing this connection's further requests \
             without logging each",
            name(command)
        ));
    }
    Some(format!("serve: {} failed: {failure}", name(command)))
}

fn answer(reply: Reply, outcome: Result<Option<&[u8]>, &Failure>) {
    match outcome {
        Ok(Some(data)) => reply.data(data),
        Ok(None) => reply.ok(),
        Err(failure) => reply.error(command_error(failure)),
    }
}

fn record(latency: &Mutex<LatencyHistogram>, received: Instant) {
    let elapsed = Nanoseconds(received.elapsed().as_nanos() as u64);
    latency
        .lock()
        .unwrap_or_else(|poison| poison.into_inner())
        .record(elapsed);
}

fn name(command: &Command) -> &'static str {
    match command {
        Command::Read { .. } => "read",
        Command::Write { .. } => "write",
        Command::Flush => "flush",
        Command::Trim { .. } => "trim",
        Command::WriteZeroes { .. } => "write-zeroes",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use spinstack_array::{ArraySpec, Level};
    use spinstack_store::MemoryStore;
    use std::time::Duration;

    const MEMBER_SECTORS: u64 = 4096;

    /// A store whose failed members the test sets, as an array's data path would.
    struct FailingMembers {
        store: MemoryStore,
        failed: Vec<u32>,
    }

    impl BlockStore for FailingMembers {
        fn capacity(&self) -> Sectors {
            self.store.capacity()
        }
        fn read(&mut self, lbn: Lbn, buf: &mut [u8]) -> Result<(), StoreError> {
            self.store.read(lbn, buf)
        }
        fn write(&mut self, lbn: Lbn, buf: &[u8]) -> Result<(), StoreError> {
            self.store.write(lbn, buf)
        }
        fn flush(&mut self) -> Result<(), StoreError> {
            self.store.flush()
        }
        fn trim(&mut self, lbn: Lbn, sectors: Sectors) -> Result<(), StoreError> {
            self.store.trim(lbn, sectors)
        }
    }

    fn failed_of(store: &FailingMembers) -> Vec<u32> {
        store.failed.clone()
    }

    /// A backend over a four-member RAID-5's worth of bytes, paced by that RAID-5's
    /// model, whose store starts with `failed` out.
    fn paced(failed: Vec<u32>) -> StoreBackend<FailingMembers> {
        let spec = ArraySpec {
            level: Level::Raid5,
            members: 4,
            member_size: Sectors(MEMBER_SECTORS),
            chunk: Some(Sectors(16)),
            disks: Vec::new(),
            buffer: None,
            track_units: None,
        };
        let volume = crate::model::model_volume(&spec, 3 * MEMBER_SECTORS).expect("model");
        let pacer = Pacer::start(volume).expect("pacer thread");
        let store = FailingMembers {
            store: MemoryStore::new(Sectors(3 * MEMBER_SECTORS)).expect("store"),
            failed,
        };
        StoreBackend::new(store, Some(pacer)).with_member_failures(failed_of)
    }

    /// Waits (bounded) until the pacer thread has applied what it was sent.
    fn model_failed(backend: &StoreBackend<FailingMembers>, expected: &[u32]) -> Vec<u32> {
        let pacer = backend.pacer().expect("paced");
        for _ in 0..3_000 {
            let failed = pacer.snapshot().failed_members;
            if failed == expected {
                return failed;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        pacer.snapshot().failed_members
    }

    // Guards finding NBD-F7 (2026-11-28): at shutdown the server logged one line
    // per refused request (504 lines in a second for one streaming client). Proves
    // one connection thread logs the refusal once, another connection logs its own
    // once, and store errors are still logged every time.
    #[test]
    fn shutdown_refusals_are_logged_once_per_connection() {
        let write = Command::Flush;
        let lines: Vec<_> = (0..3)
            .map(|_| failure_log_line(&write, &Failure::ShutDown))
            .collect();
        assert!(lines[0].is_some() && lines[1].is_none() && lines[2].is_none());
        let other_connection =
            std::thread::spawn(move || failure_log_line(&Command::Flush, &Failure::ShutDown));
        assert!(other_connection.join().unwrap().is_some());
        let store_error = || Failure::Store(StoreError::Failed { operation: "write" });
        assert!(failure_log_line(&write, &store_error()).is_some());
        assert!(failure_log_line(&write, &store_error()).is_some());
    }

    // Proves the pacing model follows member failures that do not come through the
    // control command: one the store had before serving is timed as failed from the
    // start, and one the data path causes is after the next command. (Before, only
    // `volume fail` reached the model, so a member failed by a write error, or failed
    // before the server started, was timed as healthy: noticed 2026-11-28.)
    #[test]
    fn the_pacer_follows_member_failures_outside_the_control_command() {
        let before_serving = paced(vec![1]);
        assert_eq!(model_failed(&before_serving, &[1]), [1]);

        let on_the_data_path = paced(Vec::new());
        on_the_data_path
            .with_store(|store| store.failed.push(2))
            .expect("serving");
        on_the_data_path
            .execute(&Command::Flush, &mut Vec::new())
            .expect("flushed");
        assert_eq!(model_failed(&on_the_data_path, &[2]), [2]);
    }

    // Proves the pacing model follows a rebuild: once the store no longer counts a
    // member failed (its rebuild ended), the next sync has the model time a new drive
    // there, and a later failure of the same member is timed again. (Before, a member
    // once failed stayed failed in the model until the server restarted, so a
    // rebuilt array was paced as degraded: noticed 2026-11-28.)
    #[test]
    fn the_pacer_follows_a_rebuilt_member_back() {
        let backend = paced(vec![1]);
        assert_eq!(model_failed(&backend, &[1]), [1]);
        backend
            .with_store(|store| store.failed.clear())
            .expect("serving");
        backend.sync_pacer();
        assert_eq!(model_failed(&backend, &[]), Vec::<u32>::new());
        backend
            .with_store(|store| store.failed.push(1))
            .expect("serving");
        backend
            .execute(&Command::Flush, &mut Vec::new())
            .expect("flushed");
        assert_eq!(model_failed(&backend, &[1]), [1]);
    }
}
