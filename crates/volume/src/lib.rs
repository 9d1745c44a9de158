//! # spinstack-volume: volumes over member drives
//!
//! **What it models.** A volume is one LBN space built from several member drives.
//! Today the crate holds [`map`]: the pure address maps of the RAID levels spinstack
//! studies — RAID-0 chunk striping, n-way RAID-1 mirroring, RAID-10 in Linux md's
//! "near" layout, RAID-5 in md's default left-symmetric layout, and the track-aligned
//! RAID-5 of the Linux validation paper (§3), whose stripes are the members' tracks
//! even when the members' track sizes differ — plus the read and write plans of the
//! parity levels (which member extents a request reads and writes, and why).
//!
//! **Who uses it.** The maps are shared by a simulated-time RAID (a volume whose
//! members are modelled drives) and a real-bytes RAID (parity computed over buffers).
//! Neither time nor bytes appear here, so both interpret the same plans: the timed
//! RAID issues the plan's member extents, the byte RAID also moves and XORs the data
//! the plan's tags describe.
//!
//! **Invariants** (each checked by the property tests in `tests/map`):
//! - every volume LBN below `capacity()` has exactly one home on each copy (one per
//!   member for RAID-0 and RAID-5, `copies` for RAID-1 and RAID-10), and the inverse
//!   map sends each home back to that LBN;
//! - every member sector has at most one role (data of one LBN, parity of one stripe
//!   offset, or unused);
//! - splitting a request yields pieces that tile it exactly, in volume order;
//! - a parity stripe's parity sector `i` is the XOR of its data units' sector `i`;
//!   every write plan keeps that true, also with one failed member;
//! - bad input (too few members, zero chunk, LBN out of range, ...) is an error,
//!   never a panic.
//!
//! **Real bytes.** [`bytes`] runs the same maps and plans over real stores
//! (`spinstack_store::BlockStore` members): RAID-0, n-way RAID-1, RAID-10 near and
//! RAID-5 over any parity layout, each itself a `BlockStore` so layers stack; member
//! failure, degraded operation and rebuild as a documented state machine; scrub; a
//! write-intent record against the write hole, resynced at assembly; and the
//! DMA-aligned buffer (DAB) of Shi et al. over any store.
//!
//! **What it does not model (yet).** Timing: the simulated-time RAID (`timed`) is a
//! separate module to come. Nor does it model md's other parity
//! layouts (left-asymmetric, right-*, RAID-6), RAID-10 "far"/"offset" copies,
//! members of unequal size (except in the track-aligned layout, whose members are
//! given track by track), reshaping, or which copy a mirrored read should use (read
//! balancing is the caller's policy).

pub mod bytes;
pub mod map;
