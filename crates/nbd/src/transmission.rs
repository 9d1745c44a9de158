//! The transmission phase of one connection: a reader that checks each request and
//! hands it to the [`Backend`]; replies leave in the order the backend answers them
//! (out of order when the backend answers out of order), written by the reader when
//! the backend answers at once and by the connection's own writer thread when another
//! thread answers (see `replies`). The reader stops reading while the connection is
//! at its bound of requests in flight or of payload bytes held
//! ([`Limits::max_held_bytes`]).
//!
//! Request checks, in order (the first that fails decides):
//! 1. bad magic: the stream cannot be trusted; the connection closes.
//! 2. a write whose payload is over the limit: its bytes cannot be skipped cheaply;
//!    the connection closes (the protocol allows it) and nothing is written.
//! 3. a write's payload is read whole; a client that disconnects mid-payload has
//!    nothing of it written.
//! 4. unknown flag bits, or a flag the command does not take: `EINVAL`. `FUA` is
//!    taken by every command when the export advertises `SEND_FUA` (the protocol
//!    says the server MUST then accept it anywhere; it means nothing to a read, and
//!    a flush already is one), and by none when it does not.
//! 5. zero length, a read over the limit: `EINVAL`; a range past the end: `ENOSPC`
//!    for writes and write-zeroes, `EINVAL` for reads and trims; a flush with a range:
//!    `EINVAL`.
//! 6. unknown command: `EINVAL`.
//!
//! `DISC` stops reading; the connection closes once every reply was sent.

use crate::backend::{Backend, Command, CommandError, Reply, ReplyChannel};
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
/// (see `replies` for who writes and when). `transmission_flags` are the flags the
/// export advertised (they decide which command flags are valid). Returns once every
/// reply was sent or dropped.
pub fn transmit<R, W>(
    reader: R,
    writer: W,
    backend: &Arc<dyn Backend>,
    limits: Limits,
    transmission_flags: u16,
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
        let read = read_requests(
            &mut reader,
            &replies,
            &channel,
            backend,
            limits,
            transmission_flags,
        );
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

/// The reader's loop: reads, checks and submits requests until the stream ends.
fn read_requests<R: Read, W: Write + Send + 'static>(
    reader: &mut BufReader<R>,
    replies: &ConnectionReplies<W>,
    channel: &Arc<dyn ReplyChannel>,
    backend: &Arc<dyn Backend>,
    limits: Limits,
    transmission_flags: u16,
) -> io::Result<Ending> {
    loop {
        // About to block (no buffered input, or no room in flight): send what is
        // buffered.
        if reader.buffer().is_empty() || replies.in_flight.is_full() {
            replies.flush();
        }
        replies.in_flight.acquire();
        match next_request(reader, limits) {
            Ok(Next::Request(header, payload)) => {
                let read_length = (header.command == CMD_READ).then_some(header.length_bytes);
                let size_bytes = backend.size_bytes();
                let checked = check(&header, payload, size_bytes, limits, transmission_flags);
                // The bytes this request keeps in memory until its reply is written.
                let held_bytes = match &checked {
                    Ok(Command::Read { length_bytes, .. }) => *length_bytes as u64,
                    Ok(Command::Write { data, .. }) => data.len() as u64,
                    _ => 0,
                };
                replies.in_flight.hold(held_bytes);
                let reply = Reply::new(header.handle, read_length, held_bytes, Arc::clone(channel));
                match checked {
                    Ok(command) => backend.submit(command, reply),
                    Err(error) => reply.error(error),
                }
            }
            Ok(Next::End(ending)) => {
                replies.in_flight.release(0);
                return Ok(ending);
            }
            Err(error) => {
                replies.in_flight.release(0);
                return Err(error);
            }
        }
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

/// Checks one request against the export (see the module doc) and builds its
/// command; `transmission_flags` are the export's advertised flags.
pub fn check(
    header: &RequestHeader,
    payload: Option<Vec<u8>>,
    size_bytes: u64,
    limits: Limits,
    transmission_flags: u16,
) -> Result<Command, CommandError> {
    let fua = if transmission_flags & FLAG_SEND_FUA != 0 {
        CMD_FLAG_FUA
    } else {
        0
    };
    let allowed_flags = match header.command {
        CMD_WRITE_ZEROES => fua | CMD_FLAG_NO_HOLE,
        _ => fua,
    };
    if header.flags & !allowed_flags != 0 {
        return Err(CommandError::Invalid);
    }
    let force_unit_access = header.flags & CMD_FLAG_FUA != 0;
    let offset_bytes = header.offset_bytes;
    let length_bytes = header.length_bytes;
    if header.command == CMD_FLUSH {
        return if offset_bytes == 0 && length_bytes == 0 {
            Ok(Command::Flush)
        } else {
            Err(CommandError::Invalid)
        };
    }
    if length_bytes == 0 {
        return Err(CommandError::Invalid);
    }
    let inside = offset_bytes
        .checked_add(length_bytes as u64)
        .is_some_and(|end| end <= size_bytes);
    let past_end = if header.command == CMD_WRITE || header.command == CMD_WRITE_ZEROES {
        CommandError::NoSpace
    } else {
        CommandError::Invalid
    };
    match header.command {
        CMD_READ if length_bytes > limits.max_payload_bytes => Err(CommandError::Invalid),
        CMD_READ | CMD_WRITE | CMD_TRIM | CMD_WRITE_ZEROES if !inside => Err(past_end),
        CMD_READ => Ok(Command::Read {
            offset_bytes,
            length_bytes,
        }),
        CMD_WRITE => Ok(Command::Write {
            offset_bytes,
            data: payload.ok_or(CommandError::Invalid)?,
            force_unit_access,
        }),
        CMD_TRIM => Ok(Command::Trim {
            offset_bytes,
            length_bytes,
            force_unit_access,
        }),
        CMD_WRITE_ZEROES => Ok(Command::WriteZeroes {
            offset_bytes,
            length_bytes,
            force_unit_access,
            may_trim: header.flags & CMD_FLAG_NO_HOLE == 0,
        }),
        _ => Err(CommandError::Invalid),
    }
}
