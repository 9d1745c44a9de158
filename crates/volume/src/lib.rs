//! # spinstack-volume: volumes over member drives, in simulated time and over real bytes
//!
//! **What it models.** A volume is one LBN space built from several members. The
//! crate has one pure core and two ways of running it:
//!
//! * [`map`] — the pure address maps of the RAID levels spinstack studies: RAID-0
//!   chunk striping, n-way RAID-1, RAID-10 in Linux md's "near" layout, RAID-5 in
//!   md's default left-symmetric layout, and the track-aligned RAID-5 of the Linux
//!   validation paper (§3), whose stripes are the members' own tracks even when
//!   their sizes differ (and the two alternatives the paper rejects) — plus the read
//!   and write plans of the parity levels (which member extents a request reads and
//!   writes, and why). No time, no bytes.
//! * [`timed`] — the levels in simulated time: each is a `BlockDevice` over member
//!   `BlockDevice`s (modelled drives), issuing the plans' member extents through the
//!   shared member bookkeeping, with the host's per-I/O cost, an optional
//!   (track-aware) plug, degraded operation, and the DMA-aligned buffer (DAB) of Shi
//!   et al.; [`config`] reads volume files and [`build`] assembles a timed volume of
//!   catalog drives from one.
//! * [`bytes`] — the same maps and plans over real stores
//!   (`spinstack_store::BlockStore` members): RAID-0, RAID-1, RAID-10 and RAID-5 over
//!   any parity layout, each itself a `BlockStore` so layers stack; member failure,
//!   degraded operation and rebuild as a documented state machine; scrub; a
//!   write-intent record against the write hole, resynced at assembly; and the DAB
//!   over any store.
//!
//! **Invariants** (property-tested in `tests/map`, `tests/timed`, `tests/bytes`):
//! - every volume LBN below `capacity()` has exactly one home on each copy, and the
//!   inverse map sends each home back to it; every member sector has at most one
//!   role (data of one LBN, parity of one stripe offset, or unused); splitting a
//!   request yields pieces that tile it exactly;
//! - a parity stripe's parity sector `i` is the XOR of its data units' sector `i`;
//!   every write plan keeps that true, also with one failed member;
//! - a volume answers every request exactly once; with more failed members than the
//!   level survives it answers with an error, never with wrong data;
//! - bad input (too few members, zero chunk, LBN out of range, a bad volume file) is
//!   an error naming what and where, never a panic.
//!
//! **What it does not model.** md's other parity layouts (left-asymmetric, right-*,
//! RAID-6), RAID-10 "far"/"offset" copies, members of unequal size beyond using the
//! smallest (except in the track-aligned layout, given track by track), reshaping,
//! rebuild traffic in simulated time, and persistent member metadata (superblocks).

pub mod build;
pub mod bytes;
pub mod config;
pub mod dab;
pub mod map;
pub mod timed;
