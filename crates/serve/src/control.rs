//! The control socket of a served volume (`DIR/control.sock`): `spinstack volume
//! status|fail|rebuild|scrub` reach a volume that is being served through it, since
//! the serving process holds the array's lock.
//!
//! Wire format: the client sends one JSON request per line (the array crate's
//! `ControlRequest`); the server answers each with one JSON line, `{"ok": VALUE}` or
//! `{"error": "TEXT"}`. A line longer than [`MAX_REQUEST_BYTES`] or that is not a known
//! request is answered with an error and the connection closed.
//!
//! A rebuild runs online: `Rebuild` starts it and returns; a thread then rebuilds a
//! few stripes at a time under the store lock, so client requests interleave with it.

use crate::backend::StoreBackend;
use serde_json::{json, Value};
use spinstack_store::BlockStore;
use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// Longest request line read.
pub const MAX_REQUEST_BYTES: u64 = 64 * 1024;
/// Stripes rebuilt per turn of the online rebuild (each turn holds the store lock).
pub const REBUILD_STRIPES_PER_STEP: u64 = 16;

/// What a served store must answer to control commands.
pub trait Controlled: BlockStore + Send + 'static {
    /// The volume's status as JSON (state, failed members, rebuild progress, ...).
    fn status_json(&self) -> Value;
    fn fail_member(&mut self, member: u32) -> Result<(), String>;
    fn start_rebuild(&mut self, member: u32) -> Result<(), String>;
    /// Rebuilds up to `stripes` more stripes; true when the rebuild is complete.
    fn rebuild_step(&mut self, stripes: u64) -> Result<bool, String>;
    fn scrub(&mut self, repair: bool) -> Result<Value, String>;
    /// Parses one request line into a command (the array crate owns the format).
    fn parse_request(line: &str) -> Result<Request, String>;
}

/// A control command.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Request {
    Status,
    Fail { member: u32 },
    Rebuild { member: u32 },
    Scrub { repair: bool },
}

/// The control server's thread; the socket file is removed when it is dropped.
pub struct ControlServer {
    path: PathBuf,
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl ControlServer {
    /// Listens on `path` for commands to `backend`; `extra_status` adds the serving
    /// side's figures (address, latency, model) to every status answer.
    pub fn start<S: Controlled>(
        path: &Path,
        backend: Arc<StoreBackend<S>>,
        extra_status: Arc<dyn Fn() -> Value + Send + Sync>,
    ) -> std::io::Result<ControlServer> {
        if path.exists() {
            if UnixStream::connect(path).is_ok() {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::AddrInUse,
                    format!("{}: another server controls this volume", path.display()),
                ));
            }
            std::fs::remove_file(path)?;
        }
        let listener = UnixListener::bind(path)?;
        let stop = Arc::new(AtomicBool::new(false));
        let thread_stop = Arc::clone(&stop);
        let rebuilding = Arc::new(AtomicBool::new(false));
        let thread = std::thread::Builder::new()
            .name("control".into())
            .spawn(move || {
                for stream in listener.incoming() {
                    if thread_stop.load(Ordering::SeqCst) {
                        return;
                    }
                    let Ok(stream) = stream else { continue };
                    let backend = Arc::clone(&backend);
                    let extra = Arc::clone(&extra_status);
                    let rebuilding = Arc::clone(&rebuilding);
                    let _ = std::thread::Builder::new()
                        .name("control-connection".into())
                        .spawn(move || answer_connection(stream, &backend, &*extra, &rebuilding));
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

fn answer_connection<S: Controlled>(
    stream: UnixStream,
    backend: &Arc<StoreBackend<S>>,
    extra_status: &(dyn Fn() -> Value + Send + Sync),
    rebuilding: &Arc<AtomicBool>,
) {
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
            let _ = writeln!(writer, "{}", json!({"error": "request line too long or unterminated"}));
            return;
        }
        let answer = match S::parse_request(line.trim_end()) {
            Ok(request) => match carry_out(request, backend, extra_status, rebuilding) {
                Ok(value) => json!({ "ok": value }),
                Err(error) => json!({ "error": error }),
            },
            Err(error) => json!({ "error": format!("bad request: {error}") }),
        };
        if writeln!(writer, "{answer}").is_err() {
            return;
        }
        // The byte budget is per connection: a new one starts with a fresh budget.
        reader.get_mut().set_limit(MAX_REQUEST_BYTES);
    }
}

fn carry_out<S: Controlled>(
    request: Request,
    backend: &Arc<StoreBackend<S>>,
    extra_status: &(dyn Fn() -> Value + Send + Sync),
    rebuilding: &Arc<AtomicBool>,
) -> Result<Value, String> {
    match request {
        Request::Status => {
            let mut status = backend.with_store(|store| store.status_json());
            if let Value::Object(map) = &mut status {
                map.insert("serving".into(), extra_status());
            }
            Ok(status)
        }
        Request::Fail { member } => {
            backend.with_store(|store| store.fail_member(member))?;
            if let Some(pacer) = backend.pacer() {
                pacer.fail_member(spinstack_sim::device::MemberIndex(member));
            }
            Ok(backend.with_store(|store| store.status_json()))
        }
        Request::Rebuild { member } => {
            if rebuilding.swap(true, Ordering::SeqCst) {
                return Err("a rebuild is already running".into());
            }
            if let Err(error) = backend.with_store(|store| store.start_rebuild(member)) {
                rebuilding.store(false, Ordering::SeqCst);
                return Err(error);
            }
            let worker = Arc::clone(backend);
            let flag = Arc::clone(rebuilding);
            std::thread::Builder::new()
                .name("rebuild".into())
                .spawn(move || {
                    loop {
                        match worker.with_store(|store| store.rebuild_step(REBUILD_STRIPES_PER_STEP)) {
                            Ok(false) => std::thread::yield_now(),
                            Ok(true) => break,
                            Err(error) => {
                                eprintln!("serve: rebuild stopped: {error}");
                                break;
                            }
                        }
                    }
                    flag.store(false, Ordering::SeqCst);
                })
                .map_err(|error| format!("could not start the rebuild thread: {error}"))?;
            Ok(backend.with_store(|store| store.status_json()))
        }
        Request::Scrub { repair } => backend.with_store(|store| store.scrub(repair)),
    }
}
