//! Real-bytes RAID: volumes whose members are [`BlockStore`](spinstack_store::BlockStore)s holding real data, built
//! on the [`crate::map`] address maps and plans (no second address computation).
//!
//! **What it models.** [`Raid0Volume`], [`Raid1Volume`] (n-way), [`Raid10Volume`]
//! (md near) and [`Raid5Volume`] over any [`ParityLayout`](crate::map::ParityLayout)
//! (md left-symmetric, track-aligned under either unit policy, the largest-track chunk
//! alternative), member failure and degraded operation, rebuild onto a replacement
//! member, scrub (md's `check`/`repair`), a write-intent record against the write hole
//! with resync at assembly, and the DMA-aligned buffer of Shi et al.
//! ([`DmaAlignedBuffer`]).
//!
//! **Stacking.** Every volume implements `BlockStore` itself, so layers stack like
//! nbdkit filters (a buffer over a RAID-5, a RAID-0 over mirrors, ...). Each
//! implements every operation; none passes one through by default:
//! - `read` / `write`: through the map (see each level's module);
//! - `flush`: every live member, bracketed for the write-intent record;
//! - `trim`: every copy (mirrors, RAID-0); RAID-5 trims whole stripes on every member
//!   and writes zeros over partial ones so parity stays consistent.
//!
//! **MemberStores** are a generic `S: BlockStore`, one type for all members and the
//! write-intent record: monomorphic and allocation-free for `MemoryStore` or
//! `FileStore` arrays, and `Box<dyn BlockStore>` mixes kinds when wanted.
//!
//! **Failures** follow the state machine of [`health`] (table there). A member is
//! failed, and the request carries on degraded, when it returns `StoreError::Failed`
//! (or `fail_member` is called) and when a member *write, trim or flush* returns an I/O
//! error (`Io`, `IoAt`: EIO, or ENOSPC on a sparse member file). After such a write what
//! the member holds under the request is unknown while the other members moved on (a
//! failed flush may have dropped writes the member had accepted); kept,
//! it would leave data and parity (or copies) disagreeing until the next resync, and a
//! second failure in that window would reconstruct data nobody wrote. md fails a
//! member on a write error for the same reason. A member *read* that returns an I/O
//! error is corrected instead: its sectors are rebuilt from the other members (RAID-5:
//! the rest of the stripe; mirrors: another copy), written back and read back, and the
//! member is failed only if that fails (md's read-error correction, since Linux
//! 2.6.15; before, md failed the member on any read error, so one bad sector on a
//! degraded array lost the array). Where the others cannot supply the sectors (a
//! member already out there), the read error is passed up and nothing changes.
//! `replace_member` + `rebuild_step` bring a failed member back. When more members
//! are lost than the level covers, the array is `Failed` and every later request
//! returns `StoreError::Failed` (so a RAID above sees a failed member): never wrong
//! data. Other member errors (`PowerCut`, bad arguments, `Unsupported`) are passed
//! up unchanged and change no state; RAID-0, which
//! has no redundancy, passes up every error but `Failed`. A failure is recorded in
//! memory only: a caller that keeps member roles (`spinstack-array`) must persist it
//! before it acknowledges the request, or a crash brings the member back stale.
//! Entry points other than the data path return [`VolumeError`].
//!
//! **Invariants** (asserted by `tests/bytes`): a read returns what was last written
//! (or zeros after a trim), healthy, degraded, while rebuilding and after; with every
//! member live, every parity sector is the XOR of its stripe's data and every copy of
//! a chunk is equal (scrub finds no mismatch); bad input (out-of-range requests,
//! buffers that are not whole sectors, wrong member counts or sizes) is an error, never
//! a panic; every buffer is bounded (a stripe, a unit, or the DAB's blocks) and reused.
//!
//! **What it does not do.** No concurrency (operations take `&mut self`), no read
//! balancing (copy 0 first), no stripe cache (each write reads what its plan needs),
//! no persistent superblock (member roles, failure and rebuild progress are kept by
//! the caller, e.g. `spinstack-array`, which resumes a rebuild through
//! `assemble_resuming`), no RAID-6, no reshape. A crash
//! inside a write leaves each sector old or new; the write-intent record makes
//! parity and copies agree again at assembly, but cannot make a write atomic.

mod common;
mod copy_layout;
mod dab;
mod error;
pub mod health;
mod mirror;
mod mirror_maintenance;
mod raid0;
mod raid5;
mod scrub;

pub use common::{RecoveryReport, ResumeRebuild};
pub use copy_layout::{CopyLayout, MIRROR_UNIT_SECTORS};
pub use dab::{
    DabCase, DabConfig, DabCounters, DmaAlignedBuffer, WritePolicy, DEFAULT_BLOCK_SECTORS,
    MAX_BUFFER_BYTES,
};
pub use error::VolumeError;
pub use health::{ArrayState, VolumeStatus};
pub use mirror::{MirrorVolume, Raid10Volume, Raid1Volume};
pub use raid0::Raid0Volume;
pub use raid5::Raid5Volume;
pub use scrub::{ScrubReport, MAX_REPORTED_MISMATCHES};
