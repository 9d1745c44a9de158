//! Listening: a Unix or TCP socket, one thread per connection (bounded), negotiation
//! then transmission against one shared [`Backend`].
//!
//! Every connection talks to the same backend, whose flush makes every write
//! acknowledged on any connection durable; so the export advertises
//! `CAN_MULTI_CONN` and clients may spread one job over several connections.

use crate::backend::Backend;
use crate::negotiate::{negotiate, ExportInfo, Outcome};
use crate::stream::{Deadlined, PollingReader, Stream};
use crate::transmission::{transmit, Ending, Limits};
use crate::wire::*;
use std::io;
use std::net::{TcpListener, TcpStream};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// What a server offers and how much it allows.
#[derive(Clone, Debug)]
pub struct ServerConfig {
    pub export_name: String,
    pub description: String,
    pub read_only: bool,
    /// Connections served at once, idle ones included; more are closed at accept
    /// (logged once each time the limit starts refusing).
    pub max_connections: usize,
    /// A client must finish negotiation within this time, counted from accept (one
    /// deadline for the whole handshake, not a timeout per read).
    pub negotiation_timeout: Duration,
    pub limits: Limits,
    /// After answering, keep polling the socket this long before sleeping in the
    /// kernel: a client at queue depth 1 sends its next request within tens of
    /// microseconds, and catching it awake saves a wake-up (zero: never poll).
    pub poll_before_sleep: Duration,
}

impl Default for ServerConfig {
    fn default() -> ServerConfig {
        ServerConfig {
            export_name: "spinstack".into(),
            description: "spinstack volume".into(),
            read_only: false,
            max_connections: 64,
            negotiation_timeout: Duration::from_secs(30),
            limits: Limits::default(),
            poll_before_sleep: Duration::from_micros(50),
        }
    }
}

/// Where the server listens.
#[derive(Clone, Debug)]
pub enum Address {
    Unix(PathBuf),
    Tcp(std::net::SocketAddr),
}

impl std::fmt::Display for Address {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Address::Unix(path) => write!(formatter, "unix:{}", path.display()),
            Address::Tcp(address) => write!(formatter, "tcp:{address}"),
        }
    }
}

enum Listener {
    Unix(UnixListener),
    Tcp(TcpListener),
}

/// A running server: its address, and a way to stop it.
pub struct ServerHandle {
    address: Address,
    stop: Arc<AtomicBool>,
    accept_thread: Option<std::thread::JoinHandle<()>>,
    /// The Unix socket file this server created and its identity, removed at stop.
    socket_file: Option<(PathBuf, (u64, u64))>,
}

impl ServerHandle {
    /// Where clients connect (a TCP port 0 request shows the port chosen).
    pub fn address(&self) -> &Address {
        &self.address
    }
    /// Stops accepting and removes the Unix socket file; connections already open
    /// run to their end.
    pub fn stop(mut self) {
        self.stop_accepting();
    }
    /// Blocks until the accept loop ends (it ends only on `stop` or an accept error).
    pub fn wait(mut self) {
        if let Some(thread) = self.accept_thread.take() {
            let _ = thread.join();
        }
    }
    fn stop_accepting(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        // Wake the blocking accept with a connection of our own.
        let _ = match &self.address {
            Address::Unix(path) => UnixStream::connect(path).map(drop),
            Address::Tcp(address) => TcpStream::connect(address).map(drop),
        };
        if let Some(thread) = self.accept_thread.take() {
            let _ = thread.join();
        }
        self.remove_socket_file();
    }
    fn remove_socket_file(&mut self) {
        // Only the file this server bound: another server may have replaced it since.
        if let Some((path, identity)) = self.socket_file.take() {
            if file_identity(&path) == Some(identity) {
                let _ = std::fs::remove_file(&path);
            }
        }
    }
}

impl Drop for ServerHandle {
    fn drop(&mut self) {
        if self.accept_thread.is_some() {
            self.stop_accepting();
        }
        self.remove_socket_file();
    }
}

/// Binds a Unix socket at `path`. Only a socket file that nobody listens on (left
/// by a killed process) is replaced; a socket with a listener is an `AddrInUse`
/// error, and anything else at `path` (a regular file, a directory, a symbolic link)
/// is an `AlreadyExists` error and is left untouched: the path may be a file the
/// user cares about, even a member file of the array being served.
pub fn bind_unix(path: &std::path::Path) -> io::Result<UnixListener> {
    use std::os::unix::fs::FileTypeExt;
    // `symlink_metadata`: a link to a socket is still not ours to delete.
    match std::fs::symlink_metadata(path) {
        Err(error) if error.kind() == io::ErrorKind::NotFound => {}
        Err(error) => return Err(error),
        Ok(metadata) if !metadata.file_type().is_socket() => {
            return Err(io::Error::new(
                io::ErrorKind::AlreadyExists,
                format!(
                    "{} exists and is not a socket; refusing to replace it",
                    path.display()
                ),
            ))
        }
        Ok(_) => match UnixStream::connect(path) {
            Ok(_) => {
                return Err(io::Error::new(
                    io::ErrorKind::AddrInUse,
                    format!("{}: a server already listens there", path.display()),
                ))
            }
            // Refused: a socket file with no listener behind it, safe to replace.
            Err(error) if error.kind() == io::ErrorKind::ConnectionRefused => {
                std::fs::remove_file(path)?
            }
            Err(error) => {
                return Err(io::Error::new(
                    error.kind(),
                    format!(
                        "{}: cannot tell whether it is in use: {error}",
                        path.display()
                    ),
                ))
            }
        },
    }
    UnixListener::bind(path)
}

/// The identity (device, inode) of the socket file a server bound, so that at stop
/// it removes that file and not one someone else put there since.
fn file_identity(path: &std::path::Path) -> Option<(u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    std::fs::symlink_metadata(path)
        .ok()
        .map(|metadata| (metadata.dev(), metadata.ino()))
}

/// Binds `address` and serves `backend` from a thread of its own. A Unix socket path
/// that exists is replaced only if it is a socket nothing listens on (see
/// [`bind_unix`]); the socket file is removed again when the server stops.
pub fn start(
    address: &Address,
    backend: Arc<dyn Backend>,
    config: ServerConfig,
) -> io::Result<ServerHandle> {
    let mut socket_file = None;
    let (listener, bound) = match address {
        Address::Unix(path) => {
            let listener = bind_unix(path)?;
            socket_file = file_identity(path).map(|identity| (path.clone(), identity));
            (Listener::Unix(listener), address.clone())
        }
        Address::Tcp(socket_address) => {
            let listener = TcpListener::bind(socket_address)?;
            let local = listener.local_addr()?;
            (Listener::Tcp(listener), Address::Tcp(local))
        }
    };
    let stop = Arc::new(AtomicBool::new(false));
    let accept_stop = Arc::clone(&stop);
    let accept_thread = std::thread::Builder::new()
        .name("nbd-accept".into())
        .spawn(move || accept_loop(listener, backend, config, &accept_stop))?;
    Ok(ServerHandle {
        address: bound,
        stop,
        accept_thread: Some(accept_thread),
        socket_file,
    })
}

fn accept_loop(
    listener: Listener,
    backend: Arc<dyn Backend>,
    config: ServerConfig,
    stop: &AtomicBool,
) {
    let open = Arc::new(AtomicUsize::new(0));
    // Whether the last client was refused for the connection limit (and logged).
    let mut refusing = false;
    loop {
        let accepted = match &listener {
            Listener::Unix(listener) => listener.accept().map(|(stream, _)| Stream::Unix(stream)),
            Listener::Tcp(listener) => listener.accept().map(|(stream, _)| {
                // Small replies must not wait for Nagle's timer.
                let _ = stream.set_nodelay(true);
                Stream::Tcp(stream)
            }),
        };
        if stop.load(Ordering::SeqCst) {
            return;
        }
        let stream = match accepted {
            Ok(stream) => stream,
            Err(error) => {
                eprintln!("nbd: accept failed: {error}");
                std::thread::sleep(Duration::from_millis(50));
                continue;
            }
        };
        if open.fetch_add(1, Ordering::SeqCst) >= config.max_connections {
            open.fetch_sub(1, Ordering::SeqCst);
            // The protocol has no "server full" message: the client sees the
            // connection close before the greeting. Say why here, once per spell of
            // refusals (not once per client, which a client retrying in a loop would
            // turn into a flood).
            if !refusing {
                eprintln!(
                    "nbd: connection limit reached ({} connections open): refusing new \
                     clients until one closes",
                    config.max_connections
                );
                refusing = true;
            }
            stream.shutdown();
            continue;
        }
        refusing = false;
        let backend = Arc::clone(&backend);
        let config = config.clone();
        let open = Arc::clone(&open);
        let spawned = std::thread::Builder::new()
            .name("nbd-connection".into())
            .spawn(move || {
                if let Err(error) = serve_connection(stream, backend, &config) {
                    eprintln!("nbd: connection ended with an error: {error}");
                }
                open.fetch_sub(1, Ordering::SeqCst);
            });
        if let Err(error) = spawned {
            eprintln!("nbd: could not start a connection thread: {error}");
        }
    }
}

/// The transmission flags this server sends for `config` over `backend`.
pub fn transmission_flags(config: &ServerConfig, backend: &dyn Backend) -> u16 {
    let mut flags = FLAG_HAS_FLAGS | FLAG_SEND_FLUSH | FLAG_CAN_MULTI_CONN;
    if config.read_only {
        flags |= FLAG_READ_ONLY;
    } else {
        flags |= FLAG_SEND_FUA | FLAG_SEND_TRIM | FLAG_SEND_WRITE_ZEROES;
    }
    if backend.rotational() {
        flags |= FLAG_ROTATIONAL;
    }
    flags
}

fn serve_connection(
    mut stream: Stream,
    backend: Arc<dyn Backend>,
    config: &ServerConfig,
) -> io::Result<()> {
    let export = ExportInfo {
        name: config.export_name.clone(),
        description: config.description.clone(),
        size_bytes: backend.size_bytes(),
        transmission_flags: transmission_flags(config, backend.as_ref()),
        preferred_block_bytes: 4096,
        max_block_bytes: config.limits.max_payload_bytes,
    };
    let mut deadlined = Deadlined {
        stream: &mut stream,
        deadline: Instant::now() + config.negotiation_timeout,
    };
    let outcome = match negotiate(&mut deadlined, &export) {
        Ok(outcome) => outcome,
        Err(error) => Outcome::Closed(format!("negotiation: {error}")),
    };
    let negotiated = match outcome {
        Outcome::Transmission(negotiated) => negotiated,
        Outcome::Closed(_) => {
            stream.shutdown();
            return Ok(());
        }
    };
    stream.set_read_timeout(None)?;
    stream.set_write_timeout(None)?;
    let backend: Arc<dyn Backend> = if config.read_only {
        Arc::new(crate::ReadOnly(backend))
    } else {
        backend
    };
    let writer = stream.try_clone()?;
    let mut reader = PollingReader {
        stream,
        poll: config.poll_before_sleep,
    };
    let ending = transmit(&mut reader, writer, &backend, config.limits, negotiated);
    reader.stream.shutdown();
    match ending {
        Ok(Ending::Violation(why)) => {
            eprintln!("nbd: closed a connection: {why}");
            Ok(())
        }
        Ok(_) => Ok(()),
        Err(error) => Err(error),
    }
}
