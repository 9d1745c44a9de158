//! What an answer says, apart from how it is framed on the wire: why a command
//! failed ([`CommandError`]) and the extents of a block status answer ([`Extent`]).
//! Both the backend's [`Reply`](crate::Reply) and the reply framing use them, so they
//! stand below both.

use crate::wire;

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
    /// What a structured error chunk tells the user.
    pub fn message(self) -> &'static str {
        match self {
            CommandError::Io => "the storage failed (I/O error)",
            CommandError::Invalid => {
                "invalid request: a command, flag, length or range this export does not take"
            }
            CommandError::NoSpace => "the range reaches past the end of the export",
            CommandError::NotPermitted => "the export is read-only",
            CommandError::NotSupported => "the storage cannot do this command",
            CommandError::Shutdown => "the server is shutting down",
        }
    }

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

/// One extent of a block status answer. Extents are consecutive: the first starts
/// at the query's offset, each next one where the previous ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Extent {
    pub length_bytes: u32,
    /// Not allocated in the storage (`base:allocation`'s `HOLE`).
    pub hole: bool,
    /// Known to read as zeroes (`base:allocation`'s `ZERO`).
    pub zero: bool,
}

impl Extent {
    /// Allocated, contents not known to be zero: the answer that is always true.
    pub fn allocated(length_bytes: u32) -> Extent {
        Extent {
            length_bytes,
            hole: false,
            zero: false,
        }
    }
    /// The `base:allocation` status flags.
    pub fn flags(&self) -> u32 {
        let hole = if self.hole { wire::STATE_HOLE } else { 0 };
        let zero = if self.zero { wire::STATE_ZERO } else { 0 };
        hole | zero
    }
}
