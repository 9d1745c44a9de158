//! What the server asks of the storage behind an export: [`Backend`], the
//! [`Command`]s it receives, and the [`Reply`] handle through which it answers, now or
//! later, from any thread (so replies can leave out of order).

use crate::wire;
use std::borrow::Cow;
use std::sync::Arc;

/// One transmission command, checked: inside the export, flags valid for it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Command {
    Read {
        offset_bytes: u64,
        length_bytes: u32,
    },
    Write {
        offset_bytes: u64,
        data: Vec<u8>,
        force_unit_access: bool,
    },
    Flush,
    Trim {
        offset_bytes: u64,
        length_bytes: u32,
        force_unit_access: bool,
    },
    WriteZeroes {
        offset_bytes: u64,
        length_bytes: u32,
        force_unit_access: bool,
        /// The client allows punching holes (it did not set `NO_HOLE`).
        may_trim: bool,
    },
}

impl Command {
    /// True for commands that change the export's contents.
    pub fn modifies(&self) -> bool {
        !matches!(self, Command::Read { .. } | Command::Flush)
    }
}

/// Why a command failed; each maps to the protocol's error number.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CommandError {
    /// The storage failed (a member lost beyond what the level covers, an I/O error).
    Io,
    /// The request is malformed (bad flags, a range the command does not allow).
    Invalid,
    /// A write reaches past the end of the export.
    NoSpace,
    /// The export does not support the command (e.g. writes on a read-only export).
    NotPermitted,
    /// The storage cannot do this command.
    NotSupported,
    /// The server is shutting down.
    Shutdown,
}

impl CommandError {
    /// The protocol's error value.
    pub fn errno(self) -> u32 {
        match self {
            CommandError::Io => wire::EIO,
            CommandError::Invalid => wire::EINVAL,
            CommandError::NoSpace => wire::ENOSPC,
            CommandError::NotPermitted => wire::EPERM,
            CommandError::NotSupported => wire::ENOTSUP,
            CommandError::Shutdown => wire::ESHUTDOWN,
        }
    }
}

/// The storage behind an export. `submit` may answer at once or hand the [`Reply`] to
/// another thread and answer later; either way it must answer exactly once (a `Reply`
/// dropped unanswered answers `EIO`, so a client never waits forever).
pub trait Backend: Send + Sync + 'static {
    /// The export's size in bytes; constant while served.
    fn size_bytes(&self) -> u64;
    /// Whether the export sits on rotating media (the `ROTATIONAL` flag: clients may
    /// then sort their requests).
    fn rotational(&self) -> bool;
    /// Carries out `command` and answers through `reply`.
    fn submit(&self, command: Command, reply: Reply);
}

/// Where a connection's replies go (see `replies`): written at once by the
/// connection's reader, queued for its writer by any other thread; the in-flight
/// slot and the `held_bytes` the request counted are released once written.
pub(crate) trait ReplyChannel: Send + Sync {
    fn send(&self, handle: u64, error: u32, data: Cow<'_, [u8]>, held_bytes: u64);
}

/// The answer to one request. Send it with [`Reply::ok`], [`Reply::data`] or
/// [`Reply::error`]; dropping it unanswered sends `EIO`.
pub struct Reply {
    handle: u64,
    /// Read length expected, so a backend cannot send a wrong-sized payload.
    read_length_bytes: Option<u32>,
    /// Payload bytes the connection counts for this request until it is answered.
    held_bytes: u64,
    channel: Option<Arc<dyn ReplyChannel>>,
}

impl Reply {
    pub(crate) fn new(
        handle: u64,
        read_length_bytes: Option<u32>,
        held_bytes: u64,
        channel: Arc<dyn ReplyChannel>,
    ) -> Reply {
        Reply {
            handle,
            read_length_bytes,
            held_bytes,
            channel: Some(channel),
        }
    }

    /// The client's handle for this request.
    pub fn handle(&self) -> u64 {
        self.handle
    }

    /// Success without data (writes, flushes, trims).
    pub fn ok(self) {
        if self.read_length_bytes.is_some() {
            // A read answered without data would desynchronise the stream.
            return self.error(CommandError::Io);
        }
        self.send(0, Cow::Borrowed(&[]));
    }

    /// Success of a read: `data` must be exactly the length asked for, else the
    /// client gets `EIO` (never a short or long payload).
    pub fn data(self, data: &[u8]) {
        self.data_cow(Cow::Borrowed(data));
    }

    /// As [`Reply::data`], handing over the buffer: a reply answered from another
    /// thread than the connection's waits in a queue, and this spares the copy.
    pub fn data_vec(self, data: Vec<u8>) {
        self.data_cow(Cow::Owned(data));
    }

    fn data_cow(self, data: Cow<'_, [u8]>) {
        match self.read_length_bytes {
            Some(length) if length as usize == data.len() => self.send(0, data),
            _ => self.error(CommandError::Io),
        }
    }

    pub fn error(self, error: CommandError) {
        self.send(error.errno(), Cow::Borrowed(&[]));
    }

    fn send(mut self, error: u32, data: Cow<'_, [u8]>) {
        if let Some(channel) = self.channel.take() {
            channel.send(self.handle, error, data, self.held_bytes);
        }
    }
}

impl Drop for Reply {
    fn drop(&mut self) {
        if let Some(channel) = self.channel.take() {
            channel.send(self.handle, wire::EIO, Cow::Borrowed(&[]), self.held_bytes);
        }
    }
}
