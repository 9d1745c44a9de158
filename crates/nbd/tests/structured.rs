//! Structured replies, meta contexts and block status over a real socket, checked
//! byte by byte against the layouts of the protocol document (written out here by
//! hand, not with the crate's encoders), on a small memory export.

mod common;
use common::*;
use spinstack_nbd::meta_context::encode_meta_context_request;
use spinstack_nbd::wire::*;
use spinstack_nbd::{Backend, Command, Extent, Reply, ServerConfig};
use std::io::Write;
use std::os::unix::net::UnixStream;
use std::sync::{Arc, Mutex};

const SIZE_BYTES: u64 = 64 * 1024;

/// A memory export whose byte at `i` is `i % 251` until written; block status is
/// the trait's default (it does not track holes).
struct Pattern(Mutex<Vec<u8>>);

impl Pattern {
    fn new() -> Pattern {
        Pattern(Mutex::new(
            (0..SIZE_BYTES).map(|i| (i % 251) as u8).collect(),
        ))
    }
}

impl Backend for Pattern {
    fn size_bytes(&self) -> u64 {
        SIZE_BYTES
    }
    fn rotational(&self) -> bool {
        false
    }
    fn submit(&self, command: Command, reply: Reply) {
        let mut data = self.0.lock().unwrap();
        if let Some((_, reply)) = read_or_write(&mut data, command, reply) {
            reply.ok();
        }
    }
}

/// An export that knows its first 4 KiB is a hole reading as zeroes.
struct Holey;

impl Backend for Holey {
    fn size_bytes(&self) -> u64 {
        SIZE_BYTES
    }
    fn rotational(&self) -> bool {
        false
    }
    fn submit(&self, _command: Command, reply: Reply) {
        reply.ok()
    }
    fn block_status(&self, offset_bytes: u64, length_bytes: u32, reply: Reply) {
        assert_eq!(offset_bytes, 0, "the tests ask from the start");
        let hole = Extent {
            length_bytes: 4096,
            hole: true,
            zero: true,
        };
        reply.extents(&[hole, Extent::allocated(length_bytes)]);
    }
}

fn serve(
    name: &str,
    backend: Arc<dyn Backend>,
    read_only: bool,
) -> (spinstack_nbd::ServerHandle, std::path::PathBuf) {
    let config = ServerConfig {
        read_only,
        ..ServerConfig::default()
    };
    serve_unix(name, backend, config)
}

/// A chunk header as the protocol lays it out.
fn chunk_header(flags: u16, reply_type: u16, handle: u64, length_bytes: u32) -> Vec<u8> {
    let mut out = vec![0x66, 0x8e, 0x33, 0xef];
    out.extend_from_slice(&flags.to_be_bytes());
    out.extend_from_slice(&reply_type.to_be_bytes());
    out.extend_from_slice(&handle.to_be_bytes());
    out.extend_from_slice(&length_bytes.to_be_bytes());
    out
}

/// Reads one error chunk and returns its error value, checking its layout.
fn error_chunk(stream: &mut UnixStream, handle: u64) -> u32 {
    let (header, payload) = chunk(stream);
    assert_eq!(
        (header.flags, header.reply_type, header.handle),
        (1, 0x8001, handle)
    );
    let message_bytes = u16::from_be_bytes([payload[4], payload[5]]) as usize;
    assert_eq!(payload.len(), 6 + message_bytes, "ERROR payload layout");
    assert!(message_bytes > 0, "errors carry a message");
    u32::from_be_bytes(payload[0..4].try_into().unwrap())
}

/// The meta-context reply of `option` with `queries`: the names of the contexts
/// returned with their IDs, and the final reply type.
fn meta_contexts(
    stream: &mut UnixStream,
    option: u32,
    name: &[u8],
    queries: &[&[u8]],
) -> (Vec<(u32, String)>, u32) {
    send_option(stream, option, &encode_meta_context_request(name, queries));
    let mut found = Vec::new();
    loop {
        let (reply_type, data) = option_reply(stream);
        if reply_type != REP_META_CONTEXT {
            return (found, reply_type);
        }
        let id = u32::from_be_bytes(data[0..4].try_into().unwrap());
        found.push((id, String::from_utf8(data[4..].to_vec()).unwrap()));
    }
}

/// Negotiation: `STRUCTURED_REPLY` with data is refused and without is acknowledged,
/// also twice; the meta-context options are refused before it and answer the query
/// forms of the `base:` namespace after it; `SEND_DF` comes with structured replies.
#[test]
fn negotiation_of_structured_replies_and_meta_contexts() {
    let (_server, path) = serve("snego", Arc::new(Pattern::new()), false);
    let mut stream = greeted(&path);
    let allocation = || vec![(0, "base:allocation".to_string())];
    assert_eq!(
        meta_contexts(&mut stream, OPT_LIST_META_CONTEXT, b"", &[]),
        (vec![], REP_ERR_INVALID)
    );
    assert_eq!(
        meta_contexts(
            &mut stream,
            OPT_SET_META_CONTEXT,
            b"",
            &[b"base:allocation"]
        ),
        (vec![], REP_ERR_INVALID)
    );
    send_option(&mut stream, OPT_STRUCTURED_REPLY, b"junk");
    assert_eq!(
        option_reply(&mut stream),
        (REP_ERR_INVALID, b"STRUCTURED_REPLY takes no data".to_vec())
    );
    for _ in 0..2 {
        send_option(&mut stream, OPT_STRUCTURED_REPLY, &[]);
        assert_eq!(option_reply(&mut stream), (REP_ACK, vec![]));
    }
    let list = |stream: &mut UnixStream, queries: &[&[u8]]| {
        meta_contexts(stream, OPT_LIST_META_CONTEXT, b"", queries)
    };
    assert_eq!(list(&mut stream, &[]), (allocation(), REP_ACK));
    assert_eq!(list(&mut stream, &[b"base:"]), (allocation(), REP_ACK));
    let both: &[&[u8]] = &[b"base:allocation", b"base:"];
    assert_eq!(list(&mut stream, both), (allocation(), REP_ACK));
    let unknown: &[&[u8]] = &[b"base:other", b"qemu:dirty-bitmap:x", b"x-a:"];
    assert_eq!(list(&mut stream, unknown), (vec![], REP_ACK));
    assert_eq!(list(&mut stream, &[b"nocolon"]), (vec![], REP_ERR_INVALID));
    assert_eq!(
        meta_contexts(&mut stream, OPT_LIST_META_CONTEXT, b"nope", &[]),
        (vec![], REP_ERR_UNKNOWN)
    );
    // A query count the data does not bear out.
    send_option(
        &mut stream,
        OPT_LIST_META_CONTEXT,
        &[0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff],
    );
    assert_eq!(option_reply(&mut stream).0, REP_ERR_INVALID);
    let set = |stream: &mut UnixStream, queries: &[&[u8]]| {
        meta_contexts(stream, OPT_SET_META_CONTEXT, b"spinstack", queries)
    };
    assert_eq!(set(&mut stream, &[b"base:"]), (vec![], REP_ACK));
    let twice: &[&[u8]] = &[b"base:allocation", b"base:allocation"];
    assert_eq!(
        set(&mut stream, twice),
        (vec![(1, "base:allocation".into())], REP_ACK)
    );
    let flags = go(&mut stream);
    assert_eq!(
        flags & FLAG_SEND_DF,
        FLAG_SEND_DF,
        "structured replies bring SEND_DF"
    );

    let mut simple = greeted(&path);
    assert_eq!(go(&mut simple) & FLAG_SEND_DF, 0, "no SEND_DF without them");
}

/// The bytes of structured replies: a read is one `OFFSET_DATA` chunk flagged
/// `DONE`; a write and a flush one `NONE` chunk; a read past the end one `ERROR`
/// chunk with `EINVAL` and a message; a block status one `BLOCK_STATUS` chunk with
/// the context ID and, from the default implementation, one extent of flags 0
/// covering the query (one under `REQ_ONE` too); a read with `DF` is accepted.
#[test]
fn structured_reply_bytes() {
    let (_server, path) = serve("sbytes", Arc::new(Pattern::new()), false);
    let (mut stream, _) = connect_structured(&path, Some(&[b"base:allocation"]));

    stream
        .write_all(&request(CMD_READ, 0, 0x11, 300, 8))
        .unwrap();
    let mut expected = chunk_header(1, 1, 0x11, 16);
    expected.extend_from_slice(&300u64.to_be_bytes());
    expected.extend((300..308u64).map(|i| (i % 251) as u8));
    assert_eq!(read_n(&mut stream, expected.len()), expected);

    stream
        .write_all(&request(CMD_READ, CMD_FLAG_DF, 0x12, 0, 4))
        .unwrap();
    let mut expected = chunk_header(1, 1, 0x12, 12);
    expected.extend_from_slice(&[0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 2, 3]);
    assert_eq!(read_n(&mut stream, expected.len()), expected);

    let mut write = request(CMD_WRITE, 0, 0x13, 0, 2);
    write.extend_from_slice(b"hi");
    stream.write_all(&write).unwrap();
    assert_eq!(read_n(&mut stream, 20), chunk_header(1, 0, 0x13, 0));
    stream
        .write_all(&request(CMD_FLUSH, 0, 0x14, 0, 0))
        .unwrap();
    assert_eq!(read_n(&mut stream, 20), chunk_header(1, 0, 0x14, 0));

    stream
        .write_all(&request(CMD_READ, 0, 0x15, SIZE_BYTES - 4, 8))
        .unwrap();
    assert_eq!(error_chunk(&mut stream, 0x15), EINVAL);

    for (handle, flags) in [(0x16, 0), (0x17, CMD_FLAG_REQ_ONE)] {
        stream
            .write_all(&request(CMD_BLOCK_STATUS, flags, handle, 4096, 40_000))
            .unwrap();
        let mut expected = chunk_header(1, 5, handle, 12);
        expected.extend_from_slice(&1u32.to_be_bytes()); // the context ID from SET
        expected.extend_from_slice(&40_000u32.to_be_bytes());
        expected.extend_from_slice(&0u32.to_be_bytes());
        assert_eq!(read_n(&mut stream, expected.len()), expected);
    }
    stream.write_all(&request(CMD_DISC, 0, 0x18, 0, 0)).unwrap();
    assert!(closed(&mut stream));
}

/// Block status refusals: past the end, zero length, an unknown flag, and any
/// block status without a selected context (structured replies alone, a `SET` that
/// selected nothing, a `SET` refused after one that succeeded) get `EINVAL` in an
/// error chunk; without structured replies, a simple `EINVAL` (and `DF` is refused).
#[test]
fn block_status_is_refused_as_the_protocol_says() {
    let (_server, path) = serve("srefuse", Arc::new(Pattern::new()), false);
    let (mut stream, _) = connect_structured(&path, Some(&[b"base:allocation"]));
    let cases = [
        request(CMD_BLOCK_STATUS, 0, 1, SIZE_BYTES - 512, 1024),
        request(CMD_BLOCK_STATUS, 0, 2, 0, 0),
        request(CMD_BLOCK_STATUS, CMD_FLAG_DF, 3, 0, 512),
    ];
    for (index, bytes) in cases.iter().enumerate() {
        stream.write_all(bytes).unwrap();
        assert_eq!(error_chunk(&mut stream, index as u64 + 1), EINVAL);
    }
    for queries in [None, Some(&[b"base:" as &[u8]][..])] {
        let (mut stream, _) = connect_structured(&path, queries);
        stream
            .write_all(&request(CMD_BLOCK_STATUS, 0, 9, 0, 512))
            .unwrap();
        assert_eq!(error_chunk(&mut stream, 9), EINVAL);
    }
    let mut stream = greeted(&path);
    send_option(&mut stream, OPT_STRUCTURED_REPLY, &[]);
    option_reply(&mut stream);
    let good = encode_meta_context_request(b"", &[b"base:allocation"]);
    send_option(&mut stream, OPT_SET_META_CONTEXT, &good);
    while option_reply(&mut stream).0 != REP_ACK {}
    send_option(&mut stream, OPT_SET_META_CONTEXT, &good[..good.len() - 1]);
    assert_eq!(option_reply(&mut stream).0, REP_ERR_INVALID);
    go(&mut stream);
    stream
        .write_all(&request(CMD_BLOCK_STATUS, 0, 10, 0, 512))
        .unwrap();
    assert_eq!(error_chunk(&mut stream, 10), EINVAL);

    let mut simple = connect_go(&path);
    simple
        .write_all(&request(CMD_BLOCK_STATUS, 0, 11, 0, 512))
        .unwrap();
    assert_eq!(simple_reply(&mut simple), (EINVAL, 11));
    simple
        .write_all(&request(CMD_READ, CMD_FLAG_DF, 12, 0, 512))
        .unwrap();
    assert_eq!(simple_reply(&mut simple), (EINVAL, 12));
    simple.write_all(&request(CMD_READ, 0, 13, 0, 2)).unwrap();
    assert_eq!(simple_reply(&mut simple), (0, 13));
    assert_eq!(read_n(&mut simple, 2), [0, 1]);
}

/// A backend's own extents pass through, neighbours cut and merged to the query:
/// a hole of 4 KiB then data, asked for 6 KiB, is two extents (4096 hole+zero,
/// 2048 data); under `REQ_ONE` only the hole. On a read-only export the query still
/// reaches the backend's own `block_status`, not the default.
#[test]
fn backend_extents_are_cut_to_the_query() {
    for read_only in [false, true] {
        let (_server, path) = serve(&format!("sholey{read_only}"), Arc::new(Holey), read_only);
        let (mut stream, _) = connect_structured(&path, Some(&[b"base:allocation"]));
        stream
            .write_all(&request(CMD_BLOCK_STATUS, 0, 1, 0, 6144))
            .unwrap();
        let (header, payload) = chunk(&mut stream);
        assert_eq!(
            (header.reply_type, header.flags),
            (REPLY_TYPE_BLOCK_STATUS, 1)
        );
        let (context, extents) = decode_block_status_payload(&payload).unwrap();
        assert_eq!(context, 1);
        let lengths_and_flags: Vec<(u32, u32)> = extents
            .iter()
            .map(|extent| (extent.length_bytes, extent.flags))
            .collect();
        assert_eq!(lengths_and_flags, [(4096, 3), (2048, 0)]);
        stream
            .write_all(&request(CMD_BLOCK_STATUS, CMD_FLAG_REQ_ONE, 2, 0, 6144))
            .unwrap();
        let (_, payload) = chunk(&mut stream);
        let (_, extents) = decode_block_status_payload(&payload).unwrap();
        assert_eq!(extents.len(), 1);
        assert_eq!((extents[0].length_bytes, extents[0].flags), (4096, 3));
    }
}

/// Answers reads from threads of its own, newest first once four wait.
#[derive(Default)]
struct Reversing {
    held: Mutex<Vec<(Reply, u64, u32)>>,
}

impl Backend for Reversing {
    fn size_bytes(&self) -> u64 {
        SIZE_BYTES
    }
    fn rotational(&self) -> bool {
        false
    }
    fn submit(&self, command: Command, reply: Reply) {
        let Command::Read {
            offset_bytes,
            length_bytes,
        } = command
        else {
            return reply.ok();
        };
        let mut held = self.held.lock().unwrap();
        held.push((reply, offset_bytes, length_bytes));
        if held.len() == 4 {
            let batch: Vec<_> = held.drain(..).rev().collect();
            std::thread::spawn(move || {
                for (reply, offset, length) in batch {
                    reply.data_vec(vec![offset as u8; length as usize]);
                }
            });
        }
    }
}

/// Structured read replies given by another thread (through the connection's
/// writer thread) leave out of order, each one chunk with its own offset and data.
#[test]
fn structured_replies_from_other_threads_leave_out_of_order() {
    let (_server, path) = serve("sorder", Arc::new(Reversing::default()), false);
    let (mut stream, _) = connect_structured(&path, None);
    for handle in 1..=4u64 {
        stream
            .write_all(&request(CMD_READ, 0, handle, handle * 100, 50))
            .unwrap();
    }
    let mut order = Vec::new();
    for _ in 0..4 {
        let (header, payload) = chunk(&mut stream);
        assert_eq!(
            (header.flags, header.reply_type),
            (1, REPLY_TYPE_OFFSET_DATA)
        );
        let (offset_bytes, data) = decode_offset_data(&payload).unwrap();
        assert_eq!(offset_bytes, header.handle * 100);
        assert_eq!(data, [offset_bytes as u8; 50]);
        order.push(header.handle);
    }
    assert_eq!(order, [4, 3, 2, 1]);
}
