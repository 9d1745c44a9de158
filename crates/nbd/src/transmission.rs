//! The transmission phase of one connection: a reader that checks each request and
//! hands it to the [`Backend`]; replies leave in the order the backend answers them
//! (out of order when the backend answers out of order), written by the reader when
//! the backend answers at once and by the connection's own writer thread when another
//! thread answers (see `replies`). The reader stops reading while the connection is
//! at its bound of requests in flight or of payload bytes held
//! ([`Limits::max_held_bytes`]).
//!
//! Replies are simple, or structured when negotiation said so (see `framing` for how
//! each answer looks in either mode); the choice is made once per connection.
//!
//! Request checks, in order (the first that fails decides):
//! 1. bad magic: the stream cannot be trusted; the connection closes.
//! 2. a write whose payload is over the limit: its bytes cannot be skipped cheaply;
//!    the connection closes (the protocol allows it) and nothing is written.
//! 3. a write's payload is read whole; a client that disconnects mid-payload has
//!    nothing of it written.
//! 4. unknown flag bits, or a flag the command does not take: `EINVAL`. `FUA` is
//!    taken by every command when the export advertises `SEND_FUA` (the protocol
//!    says the server MUST then accept it anywhere; it means nothing to a read or a
//!    block status, and a flush already is one), and by none when it does not. `DF`
//!    is taken by reads when `SEND_DF` was sent (only with structured replies),
//!    `NO_HOLE` by write-zeroes, `REQ_ONE` by block status.
//! 5. zero length, a read over the limit: `EINVAL`; a range past the end: `ENOSPC`
//!    for writes and write-zeroes, `EINVAL` for reads, trims and block status; a
//!    flush with a range: `EINVAL`. A block status has no length limit: it carries no
//!    payload, and its answer is bounded by the extent cap instead.
//! 6. unknown command, or `BLOCK_STATUS` when no meta context was selected (the
//!    protocol's answer to both): `EINVAL`.
//!
//! `DF` (don't fragment) needs no work: a read is always answered with its whole
//! data in one `OFFSET_DATA` chunk (reads are at most the payload limit, well below
//! what one chunk holds), so `SEND_DF` is advertised whenever structured replies are
//! negotiated, and honest.
//!
//! `DISC` stops reading; the connection closes once every reply was sent.

use crate::backend::{
    Backend, Command, CommandError, Expects, Reply, ReplyChannel, MAX_EXTENTS_PER_REPLY,
};
use crate::negotiate::Negotiated;
use crate::replies::ConnectionReplies;
use crate::wire::*;
use std::io::{self, BufReader, Read, Write};
use std::sync::Arc;

/// Per-connection limits.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// Largest read or write payload (also advertised as the maximum block size).
    pub max_payload_bytes: u32,
    /// Requests read and not yet answered, per connection.
    pub max_in_flight: usize,
    /// Payload bytes a connection may hold before it stops reading requests: read
    /// data not yet sent and write data not yet answered. The request read last may
    /// pass it by its own payload, so a connection holds less than this plus
    /// `max_payload_bytes`.
    pub max_held_bytes: u64,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            max_payload_bytes: 32 * 1024 * 1024,
            max_in_flight: 128,
            // 128 requests of 32 MiB would be 4 GiB held by one connection (read
            // data waiting for the drive model): bound the bytes too.
            max_held_bytes: 32 * 1024 * 1024,
        }
    }
}

/// How a connection's transmission phase ended.
#[derive(Debug, PartialEq, Eq)]
pub enum Ending {
    /// The client sent `DISC`.
    Disconnect,
    /// The client closed the connection (possibly mid-request).
    ClientClosed,
    /// The server closed it: a protocol violation it cannot answer.
    Violation(String),
}

/// Serves requests from `reader` until the connection ends; replies go to `writer`
/// (see `replies` for who writes and when). `negotiated` is what the connection
/// agreed on: the transmission flags sent (they decide which command flags are
/// valid), the reply mode, the meta context. Returns once every reply was sent or
/// dropped.
pub fn transmit<R, W>(
    reader: R,
    writer: W,
    backend: &Arc<dyn Backend>,
    limits: Limits,
    negotiated: Negotiated,
) -> io::Result<Ending>
where
    R: Read,
    W: Write + Send + 'static,
{
    let replies = Arc::new(ConnectionReplies::new(
        writer,
        limits.max_in_flight,
        limits.max_held_bytes,
    ));
    let channel: Arc<dyn ReplyChannel> = replies.clone();
    let mut reader = BufReader::with_capacity(256 * 1024, reader);
    let outcome = std::thread::scope(|scope| {
        // Writes the replies other threads give (see `replies`).
        std::thread::Builder::new()
            .name("nbd-replies".into())
            .spawn_scoped(scope, || replies.write_queued())?;
        let connection = Connection {
            replies: &replies,
            channel: &channel,
            backend,
            limits,
            negotiated,
        };
        let read = read_requests(&mut reader, &connection);
        // Every reply was written or dropped: the writer thread can end.
        replies.in_flight.wait_empty();
        replies.close();
        read
    });
    let ending = outcome?;
    replies.flush();
    match replies.take_failure() {
        Some(error) if !is_hang_up(error.kind()) => Err(error),
        _ => Ok(ending),
    }
}

/// What the reader needs to serve one connection.
struct Connection<'a, W: Write + Send + 'static> {
    replies: &'a ConnectionReplies<W>,
    channel: &'a Arc<dyn ReplyChannel>,
    backend: &'a Arc<dyn Backend>,
    limits: Limits,
    negotiated: Negotiated,
}

/// Bytes a block status reply's payload holds at most (the context ID and the
/// capped extents), counted against the held-bytes bound like read data.
const BLOCK_STATUS_HELD_BYTES: u64 = 4 + 8 * MAX_EXTENTS_PER_REPLY as u64;

/// The reader's loop: reads, checks and submits requests until the stream ends.
fn read_requests<R: Read, W: Write + Send + 'static>(
    reader: &mut BufReader<R>,
    connection: &Connection<'_, W>,
) -> io::Result<Ending> {
    let in_flight = &connection.replies.in_flight;
    loop {
        // About to block (no buffered input, or no room in flight): send what is
        // buffered.
        if reader.buffer().is_empty() || in_flight.is_full() {
            connection.replies.flush();
        }
        in_flight.acquire();
        match next_request(reader, connection.limits) {
            Ok(Next::Request(header, payload)) => serve_request(connection, &header, payload),
            Ok(Next::End(ending)) => {
                in_flight.release(0);
                return Ok(ending);
            }
            Err(error) => {
                in_flight.release(0);
                return Err(error);
            }
        }
    }
}

/// Checks one request and hands it to the backend, or answers its error; the
/// request's in-flight slot was acquired.
fn serve_request<W: Write + Send + 'static>(
    connection: &Connection<'_, W>,
    header: &RequestHeader,
    payload: Option<Vec<u8>>,
) {
    let negotiated = &connection.negotiated;
    let size_bytes = connection.backend.size_bytes();
    let checked = check(header, payload, size_bytes, connection.limits, negotiated);
    // What a success must carry, and the bytes held until the reply is written.
    let (expects, held_bytes) = match &checked {
        Ok(Checked::Command(Command::Read {
            offset_bytes,
            length_bytes,
        })) => (
            Expects::Data {
                offset_bytes: *offset_bytes,
                length_bytes: *length_bytes,
            },
            *length_bytes as u64,
        ),
        Ok(Checked::Command(Command::Write { data, .. })) => (Expects::Nothing, data.len() as u64),
        Ok(Checked::BlockStatus {
            length_bytes,
            one_extent,
            context_id,
            ..
        }) => (
            Expects::Extents {
                length_bytes: *length_bytes,
                one_extent: *one_extent,
                context_id: *context_id,
            },
            BLOCK_STATUS_HELD_BYTES,
        ),
        _ => (Expects::Nothing, 0),
    };
    connection.replies.in_flight.hold(held_bytes);
    let structured = negotiated.structured_replies;
    let channel = Arc::clone(connection.channel);
    let reply = Reply::new(header.handle, expects, structured, held_bytes, channel);
    match checked {
        Ok(Checked::Command(command)) => connection.backend.submit(command, reply),
        Ok(Checked::BlockStatus {
            offset_bytes,
            length_bytes,
            ..
        }) => connection
            .backend
            .block_status(offset_bytes, length_bytes, reply),
        Err(error) => reply.error(error),
    }
}

/// What the reader found next on the stream.
enum Next {
    Request(RequestHeader, Option<Vec<u8>>),
    End(Ending),
}

/// Reads one request (header, and the payload of a write), or how the stream ended.
fn next_request<R: Read>(reader: &mut R, limits: Limits) -> io::Result<Next> {
    let mut header = [0u8; REQUEST_HEADER_BYTES];
    if let Err(error) = reader.read_exact(&mut header) {
        return closed_or(error).map(Next::End);
    }
    let header = match decode_request_header(&header) {
        Ok(header) => header,
        Err(error) => {
            return Ok(Next::End(Ending::Violation(format!(
                "request header: {error}"
            ))))
        }
    };
    if header.command == CMD_DISC {
        return Ok(Next::End(Ending::Disconnect));
    }
    if header.command != CMD_WRITE {
        return Ok(Next::Request(header, None));
    }
    if header.length_bytes > limits.max_payload_bytes {
        return Ok(Next::End(Ending::Violation(format!(
            "write of {} bytes is over the {}-byte limit",
            header.length_bytes, limits.max_payload_bytes
        ))));
    }
    let mut data = vec![0u8; header.length_bytes as usize];
    if let Err(error) = reader.read_exact(&mut data) {
        return closed_or(error).map(Next::End);
    }
    Ok(Next::Request(header, Some(data)))
}

/// Whether an I/O error only means the client went away.
fn is_hang_up(kind: io::ErrorKind) -> bool {
    matches!(
        kind,
        io::ErrorKind::UnexpectedEof
            | io::ErrorKind::ConnectionReset
            | io::ErrorKind::ConnectionAborted
            | io::ErrorKind::BrokenPipe
    )
}

/// An end of stream is the client closing; any other read error is passed up.
fn closed_or(error: io::Error) -> io::Result<Ending> {
    if is_hang_up(error.kind()) {
        Ok(Ending::ClientClosed)
    } else {
        Err(error)
    }
}

/// A request that passed the checks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Checked {
    /// For the backend's `submit`.
    Command(Command),
    /// For the backend's `block_status`, answered for the context `context_id`.
    BlockStatus {
        offset_bytes: u64,
        length_bytes: u32,
        /// `REQ_ONE`: the client wants exactly one extent.
        one_extent: bool,
        context_id: u32,
    },
}

/// The command flags `command` takes on a connection that was sent
/// `transmission_flags` (see the module doc, check 4).
fn allowed_flags(command: u16, transmission_flags: u16) -> u16 {
    let fua = if transmission_flags & FLAG_SEND_FUA != 0 {
        CMD_FLAG_FUA
    } else {
        0
    };
    match command {
        CMD_WRITE_ZEROES => fua | CMD_FLAG_NO_HOLE,
        CMD_READ if transmission_flags & FLAG_SEND_DF != 0 => fua | CMD_FLAG_DF,
        CMD_BLOCK_STATUS => fua | CMD_FLAG_REQ_ONE,
        _ => fua,
    }
}

/// Checks one request against the export (see the module doc) and builds what the
/// backend is given; `negotiated` is what the connection agreed on.
pub fn check(
    header: &RequestHeader,
    payload: Option<Vec<u8>>,
    size_bytes: u64,
    limits: Limits,
    negotiated: &Negotiated,
) -> Result<Checked, CommandError> {
    if header.flags & !allowed_flags(header.command, negotiated.transmission_flags) != 0 {
        return Err(CommandError::Invalid);
    }
    let force_unit_access = header.flags & CMD_FLAG_FUA != 0;
    let offset_bytes = header.offset_bytes;
    let length_bytes = header.length_bytes;
    if header.command == CMD_FLUSH {
        return if offset_bytes == 0 && length_bytes == 0 {
            Ok(Checked::Command(Command::Flush))
        } else {
            Err(CommandError::Invalid)
        };
    }
    check_range(header, size_bytes, limits)?;
    let command = match header.command {
        CMD_READ => Command::Read {
            offset_bytes,
            length_bytes,
        },
        CMD_WRITE => Command::Write {
            offset_bytes,
            data: payload.ok_or(CommandError::Invalid)?,
            force_unit_access,
        },
        CMD_TRIM => Command::Trim {
            offset_bytes,
            length_bytes,
            force_unit_access,
        },
        CMD_WRITE_ZEROES => Command::WriteZeroes {
            offset_bytes,
            length_bytes,
            force_unit_access,
            may_trim: header.flags & CMD_FLAG_NO_HOLE == 0,
        },
        CMD_BLOCK_STATUS => match negotiated.base_allocation {
            Some(context_id) => {
                return Ok(Checked::BlockStatus {
                    offset_bytes,
                    length_bytes,
                    one_extent: header.flags & CMD_FLAG_REQ_ONE != 0,
                    context_id,
                })
            }
            None => return Err(CommandError::Invalid),
        },
        _ => return Err(CommandError::Invalid),
    };
    Ok(Checked::Command(command))
}

/// Check 5 for every command with a range: length, limit, inside the export.
fn check_range(
    header: &RequestHeader,
    size_bytes: u64,
    limits: Limits,
) -> Result<(), CommandError> {
    let length_bytes = header.length_bytes;
    if length_bytes == 0 {
        return Err(CommandError::Invalid);
    }
    // One chunk carries a whole read (see `framing`), whatever the limit says.
    let max_read_bytes = limits.max_payload_bytes.min(MAX_OFFSET_DATA_BYTES);
    if header.command == CMD_READ && length_bytes > max_read_bytes {
        return Err(CommandError::Invalid);
    }
    let inside = header
        .offset_bytes
        .checked_add(length_bytes as u64)
        .is_some_and(|end| end <= size_bytes);
    match header.command {
        _ if inside => Ok(()),
        CMD_WRITE | CMD_WRITE_ZEROES => Err(CommandError::NoSpace),
        CMD_READ | CMD_TRIM | CMD_BLOCK_STATUS => Err(CommandError::Invalid),
        // Unknown commands are refused by the caller.
        _ => Ok(()),
    }
}
