//! `spinstack serve DIR --socket PATH | --listen ADDR [--timing none|model]
//! [--max-connections N]`: a persistent volume (made by `spinstack volume create`)
//! served over NBD until SIGINT or SIGTERM, with its control socket at
//! `DIR/control.sock` for `spinstack volume status|fail|rebuild|scrub`.

use anyhow::{bail, Context};
use serde_json::json;
use spinstack_array::Array;
use spinstack_nbd::{Address, ServerConfig};
use spinstack_serve::control::ControlServer;
use spinstack_serve::{Pacer, StoreBackend};
use std::path::PathBuf;
use std::sync::Arc;

/// How replies are timed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Timing {
    /// As fast as the member files allow.
    None,
    /// Each reply leaves when the drive model of the volume (in simulated time,
    /// advanced with the wall clock) completes the request.
    Model,
}

/// Arguments of `spinstack serve`.
#[derive(clap::Args)]
pub struct Args {
    /// The volume's directory (see `spinstack volume create`).
    dir: PathBuf,
    /// Listen on this Unix socket path.
    #[arg(long, required_unless_present = "listen", conflicts_with = "listen")]
    socket: Option<PathBuf>,
    /// Listen on this TCP address (e.g. 127.0.0.1:10809).
    #[arg(long)]
    listen: Option<std::net::SocketAddr>,
    #[arg(long, value_enum, default_value_t = Timing::None)]
    timing: Timing,
    /// The export's name (clients may also ask for the default, empty name).
    #[arg(long, default_value = "spinstack")]
    export_name: String,
    /// Refuse writes, trims and zeroing.
    #[arg(long)]
    read_only: bool,
    /// Microseconds a connection keeps polling for the next request before it sleeps
    /// (saves a wake-up per request at queue depth 1; 0 never polls).
    #[arg(long, default_value_t = 50)]
    poll_us: u64,
    /// Clients served at once, idle ones included; more are refused at connect (the
    /// server logs when it starts refusing).
    #[arg(long, default_value_t = 64)]
    max_connections: usize,
}

pub fn run(args: Args) -> anyhow::Result<()> {
    // Polling busy-waits a core: longer than a second is a mistake, not a tuning.
    anyhow::ensure!(
        args.poll_us <= 1_000_000,
        "--poll-us must be at most 1000000 (one second of busy polling), got {}",
        args.poll_us
    );
    anyhow::ensure!(
        args.max_connections >= 1,
        "--max-connections must be at least 1"
    );
    let address = match (&args.socket, args.listen) {
        (Some(path), _) => Address::Unix(path.clone()),
        (None, Some(listen)) => Address::Tcp(listen),
        (None, None) => bail!("give --socket PATH or --listen ADDRESS"),
    };
    // Signals are taken by `sigwait` in this thread only: block them before any
    // thread starts, so every thread inherits the mask.
    let signals = block_termination_signals()?;
    let (array, report) =
        Array::open(&args.dir).with_context(|| format!("opening {}", args.dir.display()))?;
    crate::cmd_volume::print_assembly_notes(&report);
    let pacer = match args.timing {
        Timing::None => None,
        Timing::Model => match start_pacer(&array) {
            Ok(pacer) => Some(pacer),
            Err(error) => return Err(close_after(array, error)),
        },
    };
    let volume = VolumeFacts {
        capacity_bytes: array.capacity().bytes(),
        member_drives: spinstack_array::member_disks(array.spec()),
    };
    let backend = Arc::new(
        StoreBackend::new(array, pacer)
            .with_member_failures(spinstack_serve::control::failed_members),
    );
    let served = serve_until_signal(&args, &address, &backend, &volume, &signals);
    // Whether serving ended on a signal or never started (the socket refused, say),
    // the array is closed cleanly: an open left dirty would resync at the next one.
    let array = backend
        .shut_down()
        .context("the volume was already taken out")?;
    match served {
        Ok(()) => array.close().context("closing the volume cleanly"),
        Err(error) => Err(close_after(array, error)),
    }
}

/// The drive-model pacer of the array's volume.
fn start_pacer(array: &Array) -> anyhow::Result<Pacer> {
    let volume = spinstack_serve::model::model_volume(array.spec(), array.capacity().0)?;
    Ok(Pacer::start(volume)?)
}

/// Closes `array` after `error` ended the serve before it served, and returns the
/// error (with the close's own failure added if it failed too).
fn close_after(array: Array, error: anyhow::Error) -> anyhow::Error {
    match array.close() {
        Ok(()) => error,
        Err(close) => error.context(format!("and closing the volume failed: {close}")),
    }
}

/// What the start-up line says of the volume.
struct VolumeFacts {
    capacity_bytes: u64,
    /// The drives that pace the replies: the volume's, or the default when it names none.
    member_drives: Vec<String>,
}

/// Starts the NBD server and the control socket over `backend`, prints where, and
/// serves until SIGINT or SIGTERM; then stops both (the caller closes the array).
fn serve_until_signal(
    args: &Args,
    address: &Address,
    backend: &Arc<StoreBackend<Array>>,
    volume: &VolumeFacts,
    signals: &libc::sigset_t,
) -> anyhow::Result<()> {
    let config = ServerConfig {
        export_name: args.export_name.clone(),
        read_only: args.read_only,
        poll_before_sleep: std::time::Duration::from_micros(args.poll_us),
        max_connections: args.max_connections,
        ..ServerConfig::default()
    };
    let server = spinstack_nbd::start(address, backend.clone(), config)
        .with_context(|| format!("listening on {address}"))?;
    let bound = server.address().to_string();
    let status_backend = Arc::clone(backend);
    let status_address = bound.clone();
    let timing = args.timing;
    let extra = Arc::new(move || {
        json!({
            "address": status_address,
            "timing": format!("{timing:?}").to_lowercase(),
            "latency": status_backend.latency(),
            "store_errors": status_backend.store_errors(),
            "model": status_backend.pacer().map(|pacer| pacer.snapshot()),
        })
    });
    let control_path = spinstack_array::control::socket_path(&args.dir);
    let control = ControlServer::start(&control_path, backend.clone(), extra)
        .with_context(|| format!("control socket {}", control_path.display()))?;
    let timing_text = match args.timing {
        Timing::None => "none".to_string(),
        Timing::Model => format!("model of {}", volume.member_drives.join(", ")),
    };
    println!(
        "serving {} ({} bytes) on {bound}, export {:?}, timing {timing_text}; control {}",
        args.dir.display(),
        volume.capacity_bytes,
        args.export_name,
        control_path.display()
    );
    let signal = wait_for(signals)?;
    eprintln!("serve: signal {signal}: flushing and stopping");
    server.stop();
    drop(control);
    Ok(())
}

fn block_termination_signals() -> anyhow::Result<libc::sigset_t> {
    // SAFETY: sigset_t is plain data; the libc calls only write into it and set
    // this thread's mask.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, libc::SIGINT);
        libc::sigaddset(&mut set, libc::SIGTERM);
        let result = libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
        if result != 0 {
            bail!("could not block SIGINT/SIGTERM: error {result}");
        }
        Ok(set)
    }
}

fn wait_for(set: &libc::sigset_t) -> anyhow::Result<i32> {
    let mut signal: libc::c_int = 0;
    // SAFETY: `set` was initialised by sigemptyset/sigaddset; sigwait writes `signal`.
    let result = unsafe { libc::sigwait(set, &mut signal) };
    if result != 0 {
        bail!("sigwait failed: error {result}");
    }
    Ok(signal)
}
