//! Hostile clients against structured replies and block status, fuzzed with
//! proptest: random and mutated request streams with `BLOCK_STATUS` among them,
//! through transmission in either reply mode, with or without a meta context, over
//! a backend that answers many extents running past the query, sometimes none, and
//! sometimes drops its reply. Proves the server never panics or desynchronises
//! (every reply parses in order against an oracle written from the protocol, and
//! nothing is left over) and answers every request exactly once.

mod common;
use common::*;
use proptest::prelude::*;
use spinstack_nbd::transmission::{transmit, Limits};
use spinstack_nbd::wire::*;
use spinstack_nbd::{Backend, Command, Extent, Negotiated, Reply};
use std::io::{Cursor, Write};
use std::sync::{Arc, Mutex};

const SIZE_BYTES: u64 = 1 << 20;
const MAX_PAYLOAD_BYTES: u32 = 64 * 1024;

/// A memory export that reports its own extents (many, running past the query,
/// mixed flags), answers some queries with no extents (a broken backend: `EIO`),
/// and drops some trims unanswered (`EIO` through the drop).
struct Extents(Mutex<Vec<u8>>);

/// Block status queries at these offsets get an empty answer.
fn broken_query(offset_bytes: u64) -> bool {
    offset_bytes % 97 == 5
}
/// Trims at these offsets are dropped unanswered.
fn dropped_trim(offset_bytes: u64) -> bool {
    offset_bytes.is_multiple_of(13)
}

impl Backend for Extents {
    fn size_bytes(&self) -> u64 {
        SIZE_BYTES
    }
    fn rotational(&self) -> bool {
        false
    }
    fn submit(&self, command: Command, reply: Reply) {
        let mut data = self.0.lock().unwrap();
        match read_or_write(&mut data, command, reply) {
            Some((Command::Trim { offset_bytes, .. }, reply)) if dropped_trim(offset_bytes) => {
                drop(reply)
            }
            Some((_, reply)) => reply.ok(),
            None => {}
        }
    }
    fn block_status(&self, offset_bytes: u64, length_bytes: u32, reply: Reply) {
        if broken_query(offset_bytes) {
            return reply.extents(&[]);
        }
        let mut extents = Vec::new();
        let mut covered_bytes = 0u64;
        let mut step = offset_bytes;
        while covered_bytes < length_bytes as u64 + 5000 && extents.len() < 3000 {
            let extent = Extent {
                length_bytes: 1 + (step.wrapping_mul(7919) % 6000) as u32,
                hole: step.is_multiple_of(3),
                zero: step.is_multiple_of(2),
            };
            covered_bytes += extent.length_bytes as u64;
            extents.push(extent);
            step += 1;
        }
        reply.extents(&extents);
    }
}

/// What a correct server answers to one request.
#[derive(Debug)]
enum Answer {
    Data {
        offset_bytes: u64,
        length_bytes: u32,
    },
    Done,
    Extents {
        length_bytes: u32,
        one: bool,
    },
    Error,
}

/// The answer the protocol calls for, written from the document: flags the command
/// takes, lengths and ranges, block status only with a context.
fn oracle(header: &RequestHeader, send_fua: bool, structured: bool, context: bool) -> Answer {
    let fua = if send_fua { CMD_FLAG_FUA } else { 0 };
    let allowed = match header.command {
        CMD_READ if structured => fua | CMD_FLAG_DF,
        CMD_READ | CMD_WRITE | CMD_TRIM | CMD_FLUSH => fua,
        CMD_WRITE_ZEROES => fua | CMD_FLAG_NO_HOLE,
        CMD_BLOCK_STATUS if context => fua | CMD_FLAG_REQ_ONE,
        _ => return Answer::Error,
    };
    let (offset_bytes, length_bytes) = (header.offset_bytes, header.length_bytes);
    if header.flags & !allowed != 0 {
        return Answer::Error;
    }
    if header.command == CMD_FLUSH {
        return if offset_bytes == 0 && length_bytes == 0 {
            Answer::Done
        } else {
            Answer::Error
        };
    }
    let inside = offset_bytes
        .checked_add(length_bytes as u64)
        .is_some_and(|end| end <= SIZE_BYTES);
    let too_long = header.command == CMD_READ && length_bytes > MAX_PAYLOAD_BYTES;
    if length_bytes == 0 || too_long || !inside {
        return Answer::Error;
    }
    match header.command {
        CMD_READ => Answer::Data {
            offset_bytes,
            length_bytes,
        },
        CMD_BLOCK_STATUS if broken_query(offset_bytes) => Answer::Error,
        CMD_BLOCK_STATUS => Answer::Extents {
            length_bytes,
            one: header.flags & CMD_FLAG_REQ_ONE != 0,
        },
        CMD_TRIM if dropped_trim(offset_bytes) => Answer::Error,
        _ => Answer::Done,
    }
}

/// The requests a correct server answers in `stream`, in order: walks it and stops
/// where the server must stop (bad magic, `DISC`, an oversized write, a truncated
/// header or payload).
fn answered_requests(stream: &[u8]) -> Vec<RequestHeader> {
    let mut requests = Vec::new();
    let mut at = 0;
    while let Some(bytes) = stream.get(at..at + REQUEST_HEADER_BYTES) {
        let Ok(header) = decode_request_header(bytes.try_into().unwrap()) else {
            break;
        };
        at += REQUEST_HEADER_BYTES;
        if header.command == CMD_DISC {
            break;
        }
        if header.command == CMD_WRITE {
            if header.length_bytes > MAX_PAYLOAD_BYTES
                || stream.len() < at + header.length_bytes as usize
            {
                break;
            }
            at += header.length_bytes as usize;
        }
        requests.push(header);
    }
    requests
}

/// Reads one reply and checks it is `answer` to request `handle`.
fn check_reply(
    replies: &mut Replies<'_>,
    handle: u64,
    answer: &Answer,
    structured: bool,
) -> Result<(), TestCaseError> {
    if !structured {
        prop_assert_eq!(replies.take(4)?, &SIMPLE_REPLY_MAGIC.to_be_bytes()[..]);
        let error = replies.u32()?;
        prop_assert_eq!(replies.take(8)?, &handle.to_be_bytes()[..]);
        prop_assert_eq!(error != 0, matches!(answer, Answer::Error), "{:?}", answer);
        if let Answer::Data { length_bytes, .. } = answer {
            replies.take(*length_bytes as usize)?;
        }
        return Ok(());
    }
    let header = decode_chunk_header(replies.take(CHUNK_HEADER_BYTES)?.try_into().unwrap());
    let header = header.map_err(|error| TestCaseError::fail(error.to_string()))?;
    prop_assert_eq!((header.handle, header.flags), (handle, REPLY_FLAG_DONE));
    let payload = replies.take(header.length_bytes as usize)?;
    let refused = |error: WireError| TestCaseError::fail(error.to_string());
    match *answer {
        Answer::Data {
            offset_bytes,
            length_bytes,
        } => {
            prop_assert_eq!(header.reply_type, REPLY_TYPE_OFFSET_DATA);
            let (offset, data) = decode_offset_data(payload).map_err(refused)?;
            prop_assert_eq!((offset, data.len()), (offset_bytes, length_bytes as usize));
        }
        Answer::Done => {
            prop_assert_eq!((header.reply_type, payload.len()), (REPLY_TYPE_NONE, 0));
        }
        Answer::Extents { length_bytes, one } => {
            prop_assert_eq!(header.reply_type, REPLY_TYPE_BLOCK_STATUS);
            let (context, extents) = decode_block_status_payload(payload).map_err(refused)?;
            prop_assert_eq!(context, 1);
            let most = if one { 1 } else { 1024 };
            prop_assert!(extents.len() <= most, "{} extents", extents.len());
            let total: u64 = extents
                .iter()
                .map(|extent| extent.length_bytes as u64)
                .sum();
            prop_assert!(total <= length_bytes as u64, "extents past the query");
        }
        Answer::Error => {
            prop_assert_eq!(header.reply_type, REPLY_TYPE_ERROR);
            decode_error_payload(REPLY_TYPE_ERROR, payload).map_err(refused)?;
        }
    }
    Ok(())
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

/// Plausible requests, block status among them, with lengths up to 4 GiB; each with
/// its index as handle.
fn request_stream() -> impl Strategy<Value = Vec<u8>> {
    let commands = prop_oneof![
        4 => Just(CMD_BLOCK_STATUS),
        2 => Just(CMD_READ),
        1 => Just(CMD_WRITE),
        1 => Just(CMD_TRIM),
        1 => Just(CMD_FLUSH),
        1 => Just(CMD_WRITE_ZEROES),
        1 => 0u16..12,
    ];
    let offsets = prop_oneof![0u64..(SIZE_BYTES + 4096), Just(0u64), any::<u64>()];
    let lengths = prop_oneof![3 => 0u32..9000, 1 => Just(SIZE_BYTES as u32), 1 => any::<u32>()];
    let one = (commands, 0u16..32, offsets, lengths, any::<u8>());
    proptest::collection::vec(one, 0..16).prop_map(|requests| {
        let mut bytes = Vec::new();
        for (index, (command, flags, offset, length, fill)) in requests.into_iter().enumerate() {
            let length = if command == CMD_WRITE {
                length % 9000
            } else {
                length
            };
            bytes.extend_from_slice(&encode_request_header(&RequestHeader {
                flags,
                command,
                handle: index as u64,
                offset_bytes: offset,
                length_bytes: length,
            }));
            if command == CMD_WRITE {
                bytes.extend(std::iter::repeat_n(fill, length as usize));
            }
        }
        bytes
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

    /// Mutated request streams with block status, in either reply mode, with or
    /// without a context: the replies parse in order with nothing left over, one per
    /// request the server must answer, each the answer the protocol calls for
    /// (structured: one `DONE` chunk of the right type; block status within the
    /// query, one extent under `REQ_ONE`).
    #[test]
    fn block_status_requests_are_answered_once_in_step(
        mut stream in request_stream(),
        flips in proptest::collection::vec((any::<usize>(), any::<u8>()), 0..4),
        cut in any::<usize>(),
        structured in any::<bool>(),
        context in any::<bool>(),
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
        let context = structured && context;
        let mut flags = FLAG_HAS_FLAGS | FLAG_SEND_FLUSH;
        if send_fua { flags |= FLAG_SEND_FUA; }
        if structured { flags |= FLAG_SEND_DF; }
        let negotiated = Negotiated {
            transmission_flags: flags,
            structured_replies: structured,
            base_allocation: context.then_some(1),
        };
        let limits = Limits { max_payload_bytes: MAX_PAYLOAD_BYTES, max_in_flight: 4, max_held_bytes: 256 * 1024 };
        let backend: Arc<dyn Backend> = Arc::new(Extents(Mutex::new(vec![0; SIZE_BYTES as usize])));
        let sink = SharedSink::default();
        transmit(Cursor::new(stream.clone()), sink.clone(), &backend, limits, negotiated).unwrap();
        let output = sink.0.lock().unwrap().clone();
        let mut replies = Replies { bytes: &output, at: 0 };
        for header in answered_requests(&stream) {
            let answer = oracle(&header, send_fua, structured, context);
            check_reply(&mut replies, header.handle, &answer, structured)?;
        }
        prop_assert_eq!(replies.at, output.len(), "replies nobody asked for");
    }
}
