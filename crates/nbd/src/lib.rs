//! # spinstack-nbd: an NBD server written to the protocol
//!
//! **What it is.** The server side of the Network Block Device protocol (the NBD
//! project's `doc/proto.md`), so that unmodified clients (`nbdinfo`, `nbdcopy`,
//! `qemu-img`, `fio --ioengine=nbd`, `nbdfuse`, the Linux `nbd` driver) use a spinstack
//! volume. The storage is a [`Backend`]; this crate only speaks the protocol.
//!
//! **Modules.**
//! - [`wire`]: constants and pure codecs of the fixed-size messages (fuzzed).
//! - [`negotiate`](mod@negotiate): fixed newstyle negotiation (`GO`, `INFO`,
//!   `EXPORT_NAME`, `LIST`, `ABORT`, `STRUCTURED_REPLY`, `LIST_META_CONTEXT`,
//!   `SET_META_CONTEXT`; everything else refused with `REP_ERR_UNSUP` so clients
//!   fall back; its state table is in the module doc).
//! - [`meta_context`]: the meta-context option data, parsed strictly, and the one
//!   context served, `base:allocation`.
//! - [`transmission`]: request checks (in the order the module doc gives), `READ`,
//!   `WRITE`, `FLUSH`, `TRIM`, `WRITE_ZEROES`, `BLOCK_STATUS`, `DISC` (`FUA` on any
//!   of them when the export advertises `SEND_FUA`, `DF` on reads with structured
//!   replies); replies sent in the order the backend answers: simple, or one
//!   structured chunk each when negotiated (`framing` has the table).
//! - [`server`]: Unix or TCP listening, one thread per connection.
//!
//! **Invariants.**
//! - Nothing reaches the backend that failed a check: a request past the end, with
//!   unknown flags, or whose payload did not arrive whole is answered with an error
//!   or ends the connection, and writes nothing.
//! - Every request read is answered exactly once (a backend that drops its
//!   [`Reply`] answers `EIO`), unless the connection is closed: one simple reply, or
//!   with structured replies one chunk flagged `DONE`.
//! - A reply is what its request needs whatever the backend does: a read's data is
//!   exactly its length, a block status's extents keep the protocol's length rules
//!   (the [`Reply`] checks and cuts them), else the client gets `EIO`.
//! - Every queue is bounded: options per negotiation, option and payload sizes,
//!   requests in flight and payload bytes held per connection, connections per
//!   server. A hostile client can cost the server at most its bounds.
//! - No thread that serves several connections writes to a socket: a reply given by
//!   another thread than the connection's reader goes through that connection's own
//!   writer thread, so a client that stops reading stalls only itself.
//!
//! **What it does not do.** No meta context but `base:allocation`, and no hole
//! information of its own: a backend that does not track holes (the default of
//! [`Backend::block_status`]) reports every range allocated, not known zero. Reads
//! are never split into chunks or answered with `OFFSET_HOLE`. No extended headers
//! (64-bit lengths), no TLS, no `CACHE`, `RESIZE` or `FAST_ZERO`, one export per
//! server.

pub mod backend;
mod framing;
pub mod meta_context;
pub mod negotiate;
mod outcome;
mod replies;
pub mod server;
mod stream;
pub mod transmission;
pub mod wire;

pub use backend::{Backend, Command, CommandError, Extent, Reply};
pub use negotiate::{ExportInfo, Negotiated};
pub use server::{start, Address, ServerConfig, ServerHandle};
pub use transmission::Limits;

use std::sync::Arc;

/// A backend seen read-only: commands that modify are refused with `EPERM` before
/// they reach the storage (the export also advertises `READ_ONLY`).
pub struct ReadOnly(pub Arc<dyn Backend>);

impl Backend for ReadOnly {
    fn size_bytes(&self) -> u64 {
        self.0.size_bytes()
    }
    fn rotational(&self) -> bool {
        self.0.rotational()
    }
    fn submit(&self, command: Command, reply: Reply) {
        if command.modifies() {
            reply.error(CommandError::NotPermitted);
        } else {
            self.0.submit(command, reply);
        }
    }
    fn block_status(&self, offset_bytes: u64, length_bytes: u32, reply: Reply) {
        self.0.block_status(offset_bytes, length_bytes, reply);
    }
}
