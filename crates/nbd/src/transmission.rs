//! The transmission phase of one connection: a reader that checks each request and
//! hands it to the [`Backend`], and a writer thread that sends replies in the order
//! the backend answers them (out of order when the backend answers out of order).
//!
//! Request checks, in order (the first that fails decides):
//! 1. bad magic: the stream cannot be trusted; the connection closes.
//! 2. a write whose payload is over the limit: its bytes cannot be skipped cheaply;
//!    the connection closes (the protocol allows it) and nothing is written.
//! 3. a write's payload is read whole; a client that disconnects mid-payload has
//!    nothing of it written.
//! 4. unknown flag bits, or a flag the command does not take: `EINVAL`.
//! 5. zero length, a read over the limit: `EINVAL`; a range past the end: `ENOSPC`
//!    for writes and write-zeroes, `EINVAL` for reads and trims; a flush with a range:
//!    `EINVAL`.
//! 6. unknown command: `EINVAL`.
//!
//! `DISC` stops reading; the connection closes once every reply was sent.

use crate::backend::{Backend, Command, CommandError, InFlight, Outgoing, Reply};
use crate::wire::*;
use std::io::{self, BufReader, BufWriter, Read, Write};
use std::sync::mpsc::{self, Receiver};
use std::sync::Arc;

/// Per-connection limits.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// Largest read or write payload (also advertised as the maximum block size).
    pub max_payload_bytes: u32,
    /// Requests read and not yet answered, per connection.
    pub max_in_flight: usize,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            max_payload_bytes: 32 * 1024 * 1024,
            max_in_flight: 128,
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
/// from a thread of their own. Returns once every reply was sent or dropped.
pub fn transmit<R, W>(
    reader: R,
    writer: W,
    backend: &Arc<dyn Backend>,
    limits: Limits,
) -> io::Result<Ending>
where
    R: Read,
    W: Write + Send + 'static,
{
    let in_flight = Arc::new(InFlight::new(limits.max_in_flight));
    let (sink, replies) = mpsc::channel::<Outgoing>();
    let writer_in_flight = Arc::clone(&in_flight);
    let writer_thread = std::thread::Builder::new()
        .name("nbd-writer".into())
        .spawn(move || write_replies(BufWriter::new(writer), replies, &writer_in_flight))?;

    let mut reader = BufReader::with_capacity(256 * 1024, reader);
    let ending = loop {
        in_flight.acquire();
        let mut header = [0u8; REQUEST_HEADER_BYTES];
        if let Err(error) = reader.read_exact(&mut header) {
            in_flight.release();
            break closed_or(error)?;
        }
        let header = match decode_request_header(&header) {
            Ok(header) => header,
            Err(error) => {
                in_flight.release();
                break Ending::Violation(format!("request header: {error}"));
            }
        };
        if header.command == CMD_DISC {
            in_flight.release();
            break Ending::Disconnect;
        }
        let payload = if header.command == CMD_WRITE {
            if header.length_bytes > limits.max_payload_bytes {
                in_flight.release();
                break Ending::Violation(format!(
                    "write of {} bytes is over the {}-byte limit",
                    header.length_bytes, limits.max_payload_bytes
                ));
            }
            let mut data = vec![0u8; header.length_bytes as usize];
            if let Err(error) = reader.read_exact(&mut data) {
                in_flight.release();
                break closed_or(error)?;
            }
            Some(data)
        } else {
            None
        };
        let read_length = (header.command == CMD_READ).then_some(header.length_bytes);
        let reply = Reply::new(header.handle, read_length, sink.clone());
        match check(&header, payload, backend.size_bytes(), limits) {
            Ok(command) => backend.submit(command, reply),
            Err(error) => reply.error(error),
        }
    };
    drop(sink);
    in_flight.wait_empty();
    match writer_thread.join() {
        Ok(result) => result?,
        Err(_) => return Err(io::Error::other("reply writer panicked")),
    }
    Ok(ending)
}

/// An end of stream is the client closing; any other read error is passed up.
fn closed_or(error: io::Error) -> io::Result<Ending> {
    match error.kind() {
        io::ErrorKind::UnexpectedEof
        | io::ErrorKind::ConnectionReset
        | io::ErrorKind::ConnectionAborted
        | io::ErrorKind::BrokenPipe => Ok(Ending::ClientClosed),
        _ => Err(error),
    }
}

/// Checks one request against the export (see the module doc) and builds its command.
pub fn check(
    header: &RequestHeader,
    payload: Option<Vec<u8>>,
    size_bytes: u64,
    limits: Limits,
) -> Result<Command, CommandError> {
    let allowed_flags = match header.command {
        CMD_WRITE | CMD_TRIM => CMD_FLAG_FUA,
        CMD_WRITE_ZEROES => CMD_FLAG_FUA | CMD_FLAG_NO_HOLE,
        _ => 0,
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

/// Sends replies as they come; after a write error keeps draining (so the in-flight
/// count still falls and the reader can finish) and reports the error at the end.
fn write_replies<W: Write>(
    mut writer: BufWriter<W>,
    replies: Receiver<Outgoing>,
    in_flight: &InFlight,
) -> io::Result<()> {
    let mut failure: Option<io::Error> = None;
    let mut pending = false;
    loop {
        let next = match replies.try_recv() {
            Ok(reply) => Some(reply),
            Err(mpsc::TryRecvError::Empty) => {
                // Nothing queued: push out what is buffered before blocking.
                if pending && failure.is_none() {
                    if let Err(error) = writer.flush() {
                        failure = Some(error);
                    }
                    pending = false;
                }
                replies.recv().ok()
            }
            Err(mpsc::TryRecvError::Disconnected) => None,
        };
        let Some(reply) = next else { break };
        if failure.is_none() {
            let result = writer
                .write_all(&encode_simple_reply(reply.handle, reply.error))
                .and_then(|()| writer.write_all(&reply.data));
            match result {
                Ok(()) => pending = true,
                Err(error) => failure = Some(error),
            }
        }
        in_flight.release();
    }
    if failure.is_none() {
        if let Err(error) = writer.flush() {
            failure = Some(error);
        }
    }
    match failure {
        None => Ok(()),
        Some(error) if closed_or(io::Error::new(error.kind(), "")).is_ok() => Ok(()),
        Some(error) => Err(error),
    }
}
