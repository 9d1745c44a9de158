//! The control socket of a served volume (`DIR/control.sock`): `spinstack volume
//! status|fail|rebuild|scrub` reach a volume that is being served through it, since
//! the serving process holds the array's lock.
//!
//! The wire format is the array crate's (`spinstack_array::control`): one JSON
//! request per line, one JSON response per line. A line longer than
//! [`MAX_REQUEST_BYTES`] is answered with an error and the connection closed.
//!
//! A rebuild runs online: `Rebuild` starts it and returns; a thread then rebuilds
//! [`REBUILD_STRIPES_PER_STEP`] stripes at a time under the store lock (each step
//! also saves the cursor), so client requests interleave with it. A rebuild the
//! array was assembled in the middle of (the server was killed during one) goes on
//! at once when the control server starts, from its saved cursor; `Rebuild` of the
//! member being rebuilt, with no rebuild running (it stopped on an error), goes on
//! from the cursor too.

use crate::backend::StoreBackend;
use serde_json::Value;
use spinstack_array::control::{parse_request, response_line, ControlRequest, ControlResponse};
use spinstack_array::superblock::MemberRole;
use spinstack_array::Array;
use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// Longest request line read.
pub const MAX_REQUEST_BYTES: u64 = 64 * 1024;
/// Stripes rebuilt per turn of the online rebuild (each turn holds the store lock).
pub const REBUILD_STRIPES_PER_STEP: u64 = 16;

/// Adds the serving side's figures (address, latency, model) to a status answer.
pub type ExtraStatus = Arc<dyn Fn() -> Value + Send + Sync>;

/// The members `array` records as failed or still being rebuilt, ascending: what the
/// pacer must time as failed ([`StoreBackend::with_member_failures`]). A member being
/// rebuilt stays failed in the model until its rebuild ends, when the pacer is told
/// to time a new drive in its place: the model has no rebuild cursor, and a member
/// half rebuilt serves only part of the array's reads. Read from the role table, which
/// the array brings up to date before any request returns; allocates only when one
/// failed.
pub fn failed_members(array: &Array) -> Vec<u32> {
    let roles = array.roles().iter().enumerate();
    roles
        .filter(|(_, role)| matches!(**role, MemberRole::Failed | MemberRole::Rebuilding))
        .map(|(member, _)| member as u32)
        .collect()
}

/// The control server's thread; the socket file is removed when it is dropped.
pub struct ControlServer {
    path: PathBuf,
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

/// What the connection threads share.
struct Shared {
    backend: Arc<StoreBackend<Array>>,
    extra_status: ExtraStatus,
    rebuilding: AtomicBool,
}

impl ControlServer {
    /// Listens on `path` for commands to the array behind `backend`. A socket file
    /// nobody listens on (left by a killed server) is replaced.
    pub fn start(
        path: &Path,
        backend: Arc<StoreBackend<Array>>,
        extra_status: ExtraStatus,
    ) -> std::io::Result<ControlServer> {
        let listener = spinstack_nbd::server::bind_unix(path)?;
        let stop = Arc::new(AtomicBool::new(false));
        let thread_stop = Arc::clone(&stop);
        let shared = Arc::new(Shared {
            backend,
            extra_status,
            rebuilding: AtomicBool::new(false),
        });
        // Assembly resumed a rebuild at its saved cursor: nothing else would drive it,
        // and the array would stay without redundancy while served.
        let resumed = on_array(&shared, |array| Ok::<_, String>(array.status().rebuilding));
        if let Ok(Some(member)) = resumed {
            eprintln!("serve: going on with the rebuild of member {member}");
            shared.rebuilding.store(true, Ordering::SeqCst);
            spawn_rebuild(&shared).map_err(std::io::Error::other)?;
        }
        let thread = std::thread::Builder::new()
            .name("control".into())
            .spawn(move || {
                for stream in listener.incoming() {
                    if thread_stop.load(Ordering::SeqCst) {
                        return;
                    }
                    let Ok(stream) = stream else { continue };
                    let shared = Arc::clone(&shared);
                    let _ = std::thread::Builder::new()
                        .name("control-connection".into())
                        .spawn(move || answer_connection(stream, &shared));
                }
            })?;
        Ok(ControlServer {
            path: path.to_path_buf(),
            stop,
            thread: Some(thread),
        })
    }
}

impl Drop for ControlServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        let _ = UnixStream::connect(&self.path);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
        let _ = std::fs::remove_file(&self.path);
    }
}

fn answer_connection(stream: UnixStream, shared: &Arc<Shared>) {
    let Ok(mut writer) = stream.try_clone() else {
        return;
    };
    let mut reader = BufReader::new(stream.take(MAX_REQUEST_BYTES));
    let mut line = String::new();
    loop {
        line.clear();
        match reader.read_line(&mut line) {
            Ok(0) | Err(_) => return,
            Ok(_) => {}
        }
        if !line.ends_with('\n') {
            let refusal = ControlResponse::Error("request line too long or unterminated".into());
            let _ = writer.write_all(response_line(&refusal).as_bytes());
            return;
        }
        let response = match parse_request(&line) {
            Ok(request) => match carry_out(request, shared) {
                Ok(value) => ControlResponse::Ok(value),
                Err(error) => ControlResponse::Error(error),
            },
            Err(error) => ControlResponse::Error(error),
        };
        if writer
            .write_all(response_line(&response).as_bytes())
            .is_err()
        {
            return;
        }
        reader.get_mut().set_limit(MAX_REQUEST_BYTES);
    }
}

/// Runs `action` on the array; errors (and a shut-down server) become text.
fn on_array<R, E: std::fmt::Display>(
    shared: &Shared,
    action: impl FnOnce(&mut Array) -> Result<R, E>,
) -> Result<R, String> {
    match shared.backend.with_store(action) {
        Ok(Ok(value)) => Ok(value),
        Ok(Err(error)) => Err(error.to_string()),
        Err(shut_down) => Err(shut_down.to_string()),
    }
}

fn to_json<T: serde::Serialize>(value: &T) -> Result<Value, String> {
    serde_json::to_value(value).map_err(|error| format!("cannot encode the answer: {error}"))
}

fn status(shared: &Shared) -> Result<Value, String> {
    let status = on_array(shared, |array| Ok::<_, String>(array.status()))?;
    let mut value = to_json(&status)?;
    if let Value::Object(map) = &mut value {
        map.insert("serving".into(), (shared.extra_status)());
    }
    Ok(value)
}

fn carry_out(request: ControlRequest, shared: &Arc<Shared>) -> Result<Value, String> {
    match request {
        ControlRequest::Status => status(shared),
        ControlRequest::Fail { member } => {
            on_array(shared, |array| array.fail_member(member))?;
            shared.backend.sync_pacer();
            status(shared)
        }
        ControlRequest::Rebuild { member } => {
            if shared.rebuilding.swap(true, Ordering::SeqCst) {
                return Err("a rebuild is already running".into());
            }
            // The member already being rebuilt (a rebuild that stopped on an error)
            // goes on from its cursor; a failed one gets a fresh member file.
            let started = on_array(shared, |array| match array.status().rebuilding {
                Some(rebuilding) if rebuilding == member => Ok(()),
                _ => array.start_rebuild(member),
            });
            if let Err(error) = started {
                shared.rebuilding.store(false, Ordering::SeqCst);
                return Err(error);
            }
            // The reply is the status as the rebuild starts (state "rebuilding"),
            // taken before the thread runs: a small volume can be rebuilt before a
            // status taken afterwards, and the caller is told what it started.
            let started = status(shared);
            spawn_rebuild(shared)?;
            started
        }
        ControlRequest::Scrub { repair } => {
            let report = on_array(shared, |array| array.scrub(repair))?;
            to_json(&report)
        }
    }
}

/// Starts the thread of [`rebuild_online`]; the caller has set `rebuilding`.
fn spawn_rebuild(shared: &Arc<Shared>) -> Result<(), String> {
    let worker = Arc::clone(shared);
    let spawned = std::thread::Builder::new()
        .name("rebuild".into())
        .spawn(move || rebuild_online(&worker));
    if let Err(error) = spawned {
        shared.rebuilding.store(false, Ordering::SeqCst);
        return Err(format!("could not start the rebuild thread: {error}"));
    }
    Ok(())
}

/// Rebuilds a few stripes per turn until done, letting client requests in between.
fn rebuild_online(shared: &Shared) {
    loop {
        let step = on_array(shared, |array| array.rebuild_step(REBUILD_STRIPES_PER_STEP));
        if let Ok(step) = &step {
            // Under `--timing model` the step's reads take the model's time, with
            // the store free for clients meanwhile.
            shared.backend.pace_rebuild(&step.read_ranges);
        }
        match step {
            Ok(step) if step.done => {
                // The member is active again: the model times a new drive there.
                shared.backend.sync_pacer();
                break;
            }
            Ok(_) => std::thread::yield_now(),
            Err(error) => {
                eprintln!("serve: rebuild stopped: {error}");
                break;
            }
        }
    }
    shared.rebuilding.store(false, Ordering::SeqCst);
}
