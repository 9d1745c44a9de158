//! Negotiation's limits over a real socket: one deadline for the whole handshake,
//! over-long options answered or dropped, and the connection limit.

mod common;
use common::*;
use spinstack_nbd::wire::*;
use spinstack_nbd::{Backend, Command, Reply, ServerConfig};
use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A zero-filled export; reads return zeros.
struct Zeros;
impl Backend for Zeros {
    fn size_bytes(&self) -> u64 {
        1 << 20
    }
    fn rotational(&self) -> bool {
        false
    }
    fn submit(&self, command: Command, reply: Reply) {
        match command {
            Command::Read { length_bytes, .. } => reply.data(&vec![0; length_bytes as usize]),
            _ => reply.ok(),
        }
    }
}

fn serve(name: &str, config: ServerConfig) -> (spinstack_nbd::ServerHandle, std::path::PathBuf) {
    serve_unix(name, Arc::new(Zeros), config)
}

fn option_header(option: u32, length_bytes: u32) -> Vec<u8> {
    let mut bytes = OPTION_MAGIC.to_be_bytes().to_vec();
    bytes.extend_from_slice(&option.to_be_bytes());
    bytes.extend_from_slice(&length_bytes.to_be_bytes());
    bytes
}

/// Connects, reads the greeting and sends the client flags.
fn greeted(path: &std::path::Path) -> UnixStream {
    let mut stream = UnixStream::connect(path).unwrap();
    read_n(&mut stream, 18);
    stream
        .write_all(&(CLIENT_FIXED_NEWSTYLE | CLIENT_NO_ZEROES).to_be_bytes())
        .unwrap();
    stream
}

// Guards finding NBD-F4 (2026-11-28): the negotiation timeout applied to each read,
// so a client sending one byte every 20 s stayed in negotiation for ever, holding a
// connection slot. Proves a client that trickles a byte every 200 ms is closed soon
// after a 1 s negotiation timeout, though no single read waits that long.
#[test]
fn negotiation_has_one_deadline_for_the_whole_handshake() {
    let config = ServerConfig {
        negotiation_timeout: Duration::from_secs(1),
        ..ServerConfig::default()
    };
    let (_server, path) = serve("deadline", config);
    let mut stream = greeted(&path);
    stream.write_all(&option_header(OPT_INFO, 1000)).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_millis(200)))
        .unwrap();
    let started = Instant::now();
    let closed_after = loop {
        assert!(
            started.elapsed() < Duration::from_secs(6),
            "still negotiating after {:?}",
            started.elapsed()
        );
        let wrote = stream.write(&[0]);
        let mut byte = [0u8; 1];
        match (wrote, stream.read(&mut byte)) {
            (Err(_), _) | (_, Ok(0)) => break started.elapsed(),
            (_, Err(error)) if error.kind() != std::io::ErrorKind::WouldBlock => {
                break started.elapsed()
            }
            _ => {}
        }
    };
    assert!(closed_after < Duration::from_secs(3), "{closed_after:?}");
}

// Guards finding NBD-F5 (2026-11-28): an option with more than 16 KiB of data closed
// the connection (with a reset: the data was never read), so the client got no NBD
// reason. Proves 20,000 bytes of option data are skipped and answered
// `REP_ERR_TOO_BIG`, after which `GO` works; beyond 1 MiB, and for `EXPORT_NAME`
// (which has no error reply), the connection is closed.
#[test]
fn an_over_long_option_is_answered_too_big() {
    let (_server, path) = serve("toobig", ServerConfig::default());
    let mut stream = greeted(&path);
    for option in [999, OPT_INFO] {
        let mut bytes = option_header(option, 20_000);
        bytes.extend(std::iter::repeat_n(0xAB, 20_000));
        stream.write_all(&bytes).unwrap();
        assert_eq!(option_reply(&mut stream).0, REP_ERR_TOO_BIG);
    }
    send_option(&mut stream, OPT_GO, &[0, 0, 0, 0, 0, 0]);
    while option_reply(&mut stream).0 != REP_ACK {}
    stream.write_all(&request(CMD_READ, 0, 1, 0, 512)).unwrap();
    assert_eq!(simple_reply(&mut stream), (0, 1));

    let mut huge = greeted(&path);
    huge.write_all(&option_header(OPT_INFO, (1 << 20) + 1))
        .unwrap();
    assert!(closed(&mut huge));
    let mut name = greeted(&path);
    name.write_all(&option_header(OPT_EXPORT_NAME, 20_000))
        .unwrap();
    assert!(closed(&mut name));
}

/// Clients past the connection limit are closed before the greeting; once a
/// connection closes, a new client is served again.
#[test]
fn the_connection_limit_refuses_and_recovers() {
    let config = ServerConfig {
        max_connections: 2,
        ..ServerConfig::default()
    };
    let (_server, path) = serve("limit", config);
    let first = connect_go(&path);
    let _second = connect_go(&path);
    let mut refused = UnixStream::connect(&path).unwrap();
    assert!(closed(&mut refused), "a third client must be refused");
    drop(first);
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let mut stream = UnixStream::connect(&path).unwrap();
        let mut greeting = [0u8; 18];
        if stream.read_exact(&mut greeting).is_ok() {
            break;
        }
        assert!(Instant::now() < deadline, "no slot freed after a close");
        std::thread::sleep(Duration::from_millis(20));
    }
}
