//! # spinstack-store: block stores holding real bytes, and the plumbing of a software RAID
//!
//! **What it models.** Where the rest of spinstack simulates *when* a disk answers,
//! this crate keeps *what* it holds: arrays of 512-byte sectors with real contents,
//! for the RAID levels, the DMA-aligned buffer and the NBD server built over it.
//!
//! **Modules.**
//! - [`store`]: the contract, [`BlockStore`] (`capacity`, `read`, `write`, `flush`,
//!   `trim`), and [`StoreError`].
//! - [`memory`]: [`MemoryStore`], sparse in 64 KiB pages.
//! - [`file`](mod@file): [`FileStore`], one sparse file (`pread`/`pwrite`, `fdatasync`, holes
//!   punched on trim).
//! - [`bytes`]: [`ByteStore`], byte offsets of any alignment over a store, as NBD
//!   clients send them (read-modify-write of partial sectors).
//! - [`xor`]: parity arithmetic, [`xor_into`] and [`xor_many`].
//! - [`faulty`]: [`FaultyStore`] and [`PowerSwitch`], failed devices and power cuts
//!   at any step, for tests.
//! - [`intent`]: [`WriteIntent`], a write-intent bitmap (as Linux md's) so a restart
//!   after a crash resyncs only the regions that may have had writes in flight.
//!
//! **Invariants.**
//! - Every layer implements every [`BlockStore`] operation or refuses it with
//!   [`StoreError::Unsupported`]; the trait has no default methods, so nothing is
//!   passed through by accident (layers stack like nbdkit filters).
//! - Requests are whole sectors inside the capacity; anything else is an error naming
//!   the request and the limit, never a panic, and a refused request changes nothing.
//! - After `flush` returns, everything written before it is durable.
//! - Trimmed sectors read back as zeros (our contract, stronger than SCSI UNMAP's).
//! - A write-intent bit is set on the medium before any data write to its region, and
//!   cleared only after that region's writes ended and the data was flushed.
//!
//! **What it does not do.** No RAID levels (they build on this), no caching, no
//! `O_DIRECT` or aligned buffers, no concurrency (operations take `&mut self`; wrap a
//! store in a lock to share it), no asynchronous I/O. Sector writes are assumed atomic;
//! a multi-sector write that a crash interrupts may be partly applied, and the layers
//! above must cope (that is what [`WriteIntent`] is for). [`FaultyStore`] loses
//! unflushed writes wholesale, not in arbitrary subsets or orders.

pub mod bytes;
pub mod faulty;
pub mod file;
pub mod intent;
pub mod memory;
pub mod store;
pub mod xor;

pub use bytes::{ByteStore, ZeroMode};
pub use faulty::{FaultyStore, PowerSwitch};
pub use file::FileStore;
pub use intent::{FlushTicket, IntentError, WriteIntent};
pub use memory::MemoryStore;
pub use store::{BlockStore, StoreError};
pub use xor::{xor_into, xor_many};
