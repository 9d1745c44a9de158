//! Hostile and broken clients against the server: scripted attacks over real
//! sockets, and fuzzed byte streams through negotiation and transmission checked
//! against a reference decoder. Proves: the server never crashes, keeps serving
//! others, answers each malformed request as the protocol says, and writes nothing
//! that was not asked for by a complete, valid write request.

mod common;
use common::*;
use proptest::prelude::*;
use spinstack_nbd::negotiate::{negotiate, ExportInfo};
use spinstack_nbd::transmission::{transmit, Limits};
use spinstack_nbd::wire::*;
use spinstack_nbd::{Backend, Command, Negotiated, ServerConfig};
use std::io::{Cursor, Write};
use std::os::unix::net::UnixStream;
use std::sync::{Arc, Mutex};

const SIZE_BYTES: u64 = 1 << 20;

/// A memory export that logs every command reaching it.
#[derive(Default)]
struct LoggingMemory {
    data: Mutex<Vec<u8>>,
    writes: Mutex<Vec<(u64, Vec<u8>)>>,
}

impl Backend for LoggingMemory {
    fn size_bytes(&self) -> u64 {
        SIZE_BYTES
    }
    fn rotational(&self) -> bool {
        false
    }
    fn submit(&self, command: Command, reply: spinstack_nbd::Reply) {
        let mut data = self.data.lock().unwrap();
        if data.is_empty() {
            data.resize(SIZE_BYTES as usize, 0);
        }
        if let Command::Write {
            offset_bytes,
            data: bytes,
            ..
        } = &command
        {
            self.writes
                .lock()
                .unwrap()
                .push((*offset_bytes, bytes.clone()));
        }
        if let Some((_, reply)) = read_or_write(&mut data, command, reply) {
            reply.ok();
        }
    }
}

fn export() -> ExportInfo {
    ExportInfo {
        name: "spinstack".into(),
        description: String::new(),
        size_bytes: SIZE_BYTES,
        transmission_flags: FLAG_HAS_FLAGS | FLAG_SEND_FLUSH,
        preferred_block_bytes: 4096,
        max_block_bytes: 64 * 1024,
    }
}

fn limits() -> Limits {
    Limits {
        max_payload_bytes: 64 * 1024,
        max_in_flight: 4,
        max_held_bytes: 256 * 1024,
    }
}

/// A `Write` the writer thread can own while the test keeps a view of it.
#[derive(Clone, Default)]
struct SharedSink(Arc<Mutex<Vec<u8>>>);
impl Write for SharedSink {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// The writes a correct server must apply for `stream`: walks requests in order and
/// stops where the server must stop (bad magic, `DISC`, an oversized write, a
/// truncated payload or header). `FUA` is a valid write flag only when `send_fua`
/// (the export advertises `SEND_FUA`).
fn reference_writes(stream: &[u8], limits: Limits, send_fua: bool) -> Vec<(u64, Vec<u8>)> {
    let valid_flags = if send_fua { CMD_FLAG_FUA } else { 0 };
    let mut writes = Vec::new();
    let mut at = 0;
    while let Some(bytes) = stream.get(at..at + REQUEST_HEADER_BYTES) {
        let Ok(header) = decode_request_header(bytes.try_into().unwrap()) else {
            break;
        };
        at += REQUEST_HEADER_BYTES;
        if header.command == CMD_DISC {
            break;
        }
        if header.command != CMD_WRITE {
            continue;
        }
        if header.length_bytes > limits.max_payload_bytes {
            break;
        }
        let Some(payload) = stream.get(at..at + header.length_bytes as usize) else {
            break;
        };
        at += header.length_bytes as usize;
        let inside = header
            .offset_bytes
            .checked_add(header.length_bytes as u64)
            .is_some_and(|end| end <= SIZE_BYTES);
        if header.flags & !valid_flags == 0 && header.length_bytes > 0 && inside {
            writes.push((header.offset_bytes, payload.to_vec()));
        }
    }
    writes
}

/// A stream of plausible requests: writes (some past the end, some with bad flags),
/// reads, flushes.
fn plausible_stream() -> impl Strategy<Value = Vec<u8>> {
    let one = (
        0u16..8,
        0u16..4,
        0u64..(SIZE_BYTES + 4096),
        0u32..9000,
        any::<u8>(),
    )
        .prop_map(|(command, flags, offset, length, fill)| {
            let mut bytes = request(command, flags, 7, offset, length);
            if command == CMD_WRITE {
                bytes.extend(std::iter::repeat_n(fill, length as usize));
            }
            bytes
        });
    proptest::collection::vec(one, 0..12).prop_map(|parts| parts.concat())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    /// Mutated request streams: exactly the writes the reference decoder finds reach
    /// the backend, in order; nothing else is written.
    #[test]
    fn only_complete_valid_writes_reach_the_backend(
        mut stream in plausible_stream(),
        flips in proptest::collection::vec((any::<usize>(), any::<u8>()), 0..4),
        cut in any::<usize>(),
        send_fua in any::<bool>(),
    ) {
        for (at, value) in flips {
            if !stream.is_empty() {
                let index = at % stream.len();
                stream[index] = value;
            }
        }
        if !stream.is_empty() && cut % 3 == 0 {
            stream.truncate(cut % stream.len());
        }
        let backend = Arc::new(LoggingMemory::default());
        let dyn_backend: Arc<dyn Backend> = backend.clone();
        let sink = SharedSink::default();
        let flags = if send_fua { FLAG_HAS_FLAGS | FLAG_SEND_FUA } else { FLAG_HAS_FLAGS };
        let negotiated = Negotiated::simple(flags);
        transmit(Cursor::new(stream.clone()), sink, &dyn_backend, limits(), negotiated).unwrap();
        let got = backend.writes.lock().unwrap().clone();
        prop_assert_eq!(got, reference_writes(&stream, limits(), send_fua));
    }

    /// Arbitrary bytes through negotiation never panic or hang.
    #[test]
    fn negotiation_takes_any_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..600)) {
        let mut stream = Duplex { input: Cursor::new(bytes), output: Vec::new() };
        let _ = negotiate(&mut stream, &export());
    }
}

// ---- scripted attacks over a real socket ----

fn server(
    name: &str,
) -> (
    spinstack_nbd::ServerHandle,
    std::path::PathBuf,
    Arc<LoggingMemory>,
) {
    server_with(name, false)
}

/// A server over a fresh memory export; `read_only` exports do not advertise
/// `SEND_FUA`, writable ones do.
fn server_with(
    name: &str,
    read_only: bool,
) -> (
    spinstack_nbd::ServerHandle,
    std::path::PathBuf,
    Arc<LoggingMemory>,
) {
    let backend = Arc::new(LoggingMemory::default());
    let config = ServerConfig {
        limits: limits(),
        read_only,
        ..ServerConfig::default()
    };
    let (handle, path) = serve_unix(name, backend.clone(), config);
    (handle, path, backend)
}

/// Options the server does not know or cannot honour are refused with the right
/// error, and negotiation goes on to a working export; a refused
/// `STRUCTURED_REPLY` (it carried data) leaves simple replies in force.
#[test]
fn refused_options_let_the_client_fall_back() {
    let (_server, path, _) = server("options");
    let mut stream = UnixStream::connect(&path).unwrap();
    read_n(&mut stream, 18);
    stream
        .write_all(&CLIENT_FIXED_NEWSTYLE.to_be_bytes())
        .unwrap();
    send_option(&mut stream, OPT_STARTTLS, &[]);
    assert_eq!(option_reply(&mut stream).0, REP_ERR_UNSUP);
    send_option(&mut stream, OPT_STRUCTURED_REPLY, b"x");
    assert_eq!(option_reply(&mut stream).0, REP_ERR_INVALID);
    send_option(&mut stream, 999, b"whatever");
    assert_eq!(option_reply(&mut stream).0, REP_ERR_UNSUP);
    send_option(&mut stream, OPT_GO, &[0, 0, 0, 9]); // name length past the data
    assert_eq!(option_reply(&mut stream).0, REP_ERR_INVALID);
    let mut unknown = 3u32.to_be_bytes().to_vec();
    unknown.extend_from_slice(b"xyz");
    unknown.extend_from_slice(&0u16.to_be_bytes());
    send_option(&mut stream, OPT_INFO, &unknown);
    assert_eq!(option_reply(&mut stream).0, REP_ERR_UNKNOWN);
    send_option(&mut stream, OPT_LIST, b"x");
    assert_eq!(option_reply(&mut stream).0, REP_ERR_INVALID);
    send_option(&mut stream, OPT_EXPORT_NAME, b"spinstack");
    let answer = read_n(&mut stream, 10 + 124);
    assert_eq!(
        u64::from_be_bytes(answer[0..8].try_into().unwrap()),
        SIZE_BYTES
    );
    stream.write_all(&request(CMD_READ, 0, 1, 0, 512)).unwrap();
    assert_eq!(simple_reply(&mut stream), (0, 1));
}

/// Attacks that cannot be answered close only the attacker's connection; another
/// client is served throughout, and nothing was written.
#[test]
fn broken_clients_are_dropped_and_others_served() {
    let (_server, path, backend) = server("attacks");
    let mut good = connect_go(&path);

    // Unknown client flags.
    let mut bad = UnixStream::connect(&path).unwrap();
    read_n(&mut bad, 18);
    bad.write_all(&0x8000_0000u32.to_be_bytes()).unwrap();
    assert!(closed(&mut bad));
    // Bad option magic.
    let mut bad = UnixStream::connect(&path).unwrap();
    read_n(&mut bad, 18);
    bad.write_all(&CLIENT_FIXED_NEWSTYLE.to_be_bytes()).unwrap();
    bad.write_all(&[0xAB; 16]).unwrap();
    assert!(closed(&mut bad));
    // An option claiming 4 GiB of data.
    let mut bad = UnixStream::connect(&path).unwrap();
    read_n(&mut bad, 18);
    bad.write_all(&CLIENT_FIXED_NEWSTYLE.to_be_bytes()).unwrap();
    let mut huge = OPTION_MAGIC.to_be_bytes().to_vec();
    huge.extend_from_slice(&OPT_GO.to_be_bytes());
    huge.extend_from_slice(&u32::MAX.to_be_bytes());
    bad.write_all(&huge).unwrap();
    assert!(closed(&mut bad));
    // A write over the payload limit.
    let mut bad = connect_go(&path);
    bad.write_all(&request(CMD_WRITE, 0, 5, 0, 1 << 30))
        .unwrap();
    assert!(closed(&mut bad));
    // Bad request magic.
    let mut bad = connect_go(&path);
    bad.write_all(&[0x55; 28]).unwrap();
    assert!(closed(&mut bad));
    // A write whose payload never arrives whole.
    let mut bad = connect_go(&path);
    bad.write_all(&request(CMD_WRITE, 0, 6, 0, 4096)).unwrap();
    bad.write_all(&[0xEE; 1000]).unwrap();
    drop(bad);

    good.write_all(&request(CMD_READ, 0, 42, 0, 4096)).unwrap();
    assert_eq!(simple_reply(&mut good), (0, 42));
    assert_eq!(read_n(&mut good, 4096), vec![0u8; 4096]);
    assert!(
        backend.writes.lock().unwrap().is_empty(),
        "nothing may be written"
    );
}

/// Requests the protocol can answer get their error and the connection goes on.
#[test]
fn invalid_requests_get_their_errors() {
    let (_server, path, backend) = server("errors");
    let mut stream = connect_go(&path);
    let cases: Vec<(Vec<u8>, u32)> = vec![
        (request(CMD_READ, 0, 1, SIZE_BYTES - 512, 1024), EINVAL),
        (request(CMD_READ, 0, 2, 0, 1 << 20), EINVAL), // over the payload limit
        (request(CMD_READ, CMD_FLAG_NO_HOLE, 3, 0, 512), EINVAL),
        (request(CMD_TRIM, 0, 4, u64::MAX - 10, 512), EINVAL),
        (request(CMD_FLUSH, 0, 5, 0, 512), EINVAL),
        (request(77, 0, 6, 0, 512), EINVAL),
        (request(CMD_READ, 0, 7, 0, 0), EINVAL),
    ];
    for (bytes, errno) in cases {
        let handle = u64::from_be_bytes(bytes[8..16].try_into().unwrap());
        stream.write_all(&bytes).unwrap();
        assert_eq!(simple_reply(&mut stream), (errno, handle));
    }
    let mut past_end = request(CMD_WRITE, 0, 8, SIZE_BYTES - 512, 1024);
    past_end.extend_from_slice(&[1u8; 1024]);
    stream.write_all(&past_end).unwrap();
    assert_eq!(simple_reply(&mut stream), (ENOSPC, 8));
    let mut good = request(CMD_WRITE, CMD_FLAG_FUA, 9, 512, 3);
    good.extend_from_slice(b"abc");
    stream.write_all(&good).unwrap();
    assert_eq!(simple_reply(&mut stream), (0, 9));
    assert_eq!(
        *backend.writes.lock().unwrap(),
        vec![(512, b"abc".to_vec())]
    );
    stream.write_all(&request(CMD_DISC, 0, 10, 0, 0)).unwrap();
    assert!(closed(&mut stream));
}

// Guards finding NBD-F3 (2026-11-28): `FUA` on `READ` and `FLUSH` was refused with
// `EINVAL` although the export advertises `SEND_FUA`, where the protocol says the
// server MUST accept the bit on every command. Proves every command with `FUA` is
// accepted on such an export (a read still returns its data), and that an export
// without `SEND_FUA` (read-only) still refuses the bit.
#[test]
fn fua_is_accepted_on_every_command_exactly_when_advertised() {
    let (_server, path, backend) = server_with("fua", false);
    let mut stream = connect_go(&path);
    let mut write = request(CMD_WRITE, CMD_FLAG_FUA, 1, 0, 3);
    write.extend_from_slice(b"xyz");
    stream.write_all(&write).unwrap();
    assert_eq!(simple_reply(&mut stream), (0, 1));
    stream
        .write_all(&request(CMD_READ, CMD_FLAG_FUA, 2, 0, 3))
        .unwrap();
    assert_eq!(simple_reply(&mut stream), (0, 2));
    assert_eq!(read_n(&mut stream, 3), b"xyz");
    for (command, handle, length) in [
        (CMD_TRIM, 3, 512),
        (CMD_WRITE_ZEROES, 4, 512),
        (CMD_FLUSH, 5, 0),
    ] {
        stream
            .write_all(&request(command, CMD_FLAG_FUA, handle, 0, length))
            .unwrap();
        assert_eq!(simple_reply(&mut stream), (0, handle));
    }
    assert_eq!(backend.writes.lock().unwrap().len(), 1);

    let (_server, path, _) = server_with("nofua", true);
    let mut stream = connect_go(&path);
    for (command, handle) in [(CMD_READ, 7), (CMD_FLUSH, 8)] {
        let length = if command == CMD_READ { 512 } else { 0 };
        stream
            .write_all(&request(command, CMD_FLAG_FUA, handle, 0, length))
            .unwrap();
        assert_eq!(simple_reply(&mut stream), (EINVAL, handle));
    }
    stream.write_all(&request(CMD_READ, 0, 9, 0, 512)).unwrap();
    assert_eq!(simple_reply(&mut stream), (0, 9));
}
