//! What the server asks of the storage behind an export: [`Backend`], the
//! [`Command`]s it receives, and the [`Reply`] handle through which it answers, now or
//! later, from any thread (so replies can leave out of order). A reply does not know
//! the wire: whether it goes out simple or structured is the connection's (see
//! `framing`).

use crate::framing::{self, Framed};
pub use crate::outcome::{CommandError, Extent};
use std::borrow::Cow;
use std::sync::Arc;

/// Most extents one block status reply carries; a backend's longer list is cut
/// there, which the protocol allows (the client asks again from where it ends). The
/// reply's size is then known before the backend answers, so it counts against the
/// connection's held-bytes bound like read data.
pub const MAX_EXTENTS_PER_REPLY: usize = 1024;

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
    /// Answers a `BLOCK_STATUS` query for `length_bytes` from `_offset_bytes` (both
    /// checked inside the export) with [`Reply::extents`]. The default reports the
    /// whole range as one extent with no flag: allocated, not known to read as
    /// zeroes. That is true of any storage (it claims no hole and no zeroes), so a
    /// backend that does not track holes (a RAID array, a buffered volume) stays
    /// honest by keeping it; one that does track them may say more.
    fn block_status(&self, _offset_bytes: u64, length_bytes: u32, reply: Reply) {
        reply.extents(&[Extent::allocated(length_bytes)]);
    }
}

/// Where a connection's replies go (see `replies`): written at once by the
/// connection's reader, queued for its writer by any other thread; the in-flight
/// slot and the `held_bytes` the request counted are released once written.
pub(crate) trait ReplyChannel: Send + Sync {
    fn send(&self, framed: Framed<'_>, held_bytes: u64);
}

/// What a successful answer to a request must carry, so that a backend cannot send
/// one the client does not expect.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Expects {
    /// Nothing: writes, flushes, trims, zeroes, and requests that failed a check.
    Nothing,
    /// Exactly the read's data.
    Data {
        offset_bytes: u64,
        length_bytes: u32,
    },
    /// Extents of `base:allocation` for a block status query.
    Extents {
        length_bytes: u32,
        /// `REQ_ONE`: exactly one extent.
        one_extent: bool,
        context_id: u32,
    },
}

/// The answer to one request. Send it with [`Reply::ok`], [`Reply::data`],
/// [`Reply::extents`] or [`Reply::error`]; dropping it unanswered sends `EIO`.
pub struct Reply {
    handle: u64,
    expects: Expects,
    /// The connection negotiated structured replies.
    structured: bool,
    /// Payload bytes the connection counts for this request until it is answered.
    held_bytes: u64,
    channel: Option<Arc<dyn ReplyChannel>>,
}

impl Reply {
    pub(crate) fn new(
        handle: u64,
        expects: Expects,
        structured: bool,
        held_bytes: u64,
        channel: Arc<dyn ReplyChannel>,
    ) -> Reply {
        Reply {
            handle,
            expects,
            structured,
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
        if self.expects != Expects::Nothing {
            // A read answered without data would desynchronise a simple-reply
            // stream, and a block status without extents says nothing.
            return self.error(CommandError::Io);
        }
        let framed = framing::done(self.handle, self.structured);
        self.send(framed);
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
        match self.expects {
            Expects::Data {
                offset_bytes,
                length_bytes,
            } if length_bytes as usize == data.len() => {
                let framed = framing::data(self.handle, self.structured, offset_bytes, data);
                self.send(framed)
            }
            _ => self.error(CommandError::Io),
        }
    }

    /// Success of a block status query: consecutive extents from the query's offset.
    /// The reply keeps to the protocol whatever the backend gives: extents past the
    /// query's length are cut at it, neighbours with the same flags are merged, the
    /// list is cut at [`MAX_EXTENTS_PER_REPLY`] (at one under `REQ_ONE`). An empty
    /// list or an extent of zero length (no progress) answers `EIO`.
    pub fn extents(self, extents: &[Extent]) {
        let Expects::Extents {
            length_bytes,
            one_extent,
            context_id,
        } = self.expects
        else {
            return self.error(CommandError::Io);
        };
        let most = if one_extent { 1 } else { MAX_EXTENTS_PER_REPLY };
        match framing::descriptors(extents, length_bytes, most) {
            Some(descriptors) => {
                let framed = framing::extents(self.handle, context_id, &descriptors);
                self.send(framed)
            }
            None => self.error(CommandError::Io),
        }
    }

    pub fn error(self, error: CommandError) {
        let framed = framing::error(self.handle, self.structured, error);
        self.send(framed);
    }

    fn send(mut self, framed: Framed<'_>) {
        if let Some(channel) = self.channel.take() {
            channel.send(framed, self.held_bytes);
        }
    }
}

impl Drop for Reply {
    fn drop(&mut self) {
        if let Some(channel) = self.channel.take() {
            let framed = framing::error(self.handle, self.structured, CommandError::Io);
            channel.send(framed, self.held_bytes);
        }
    }
}
