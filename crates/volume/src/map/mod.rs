//! Pure RAID address maps: where a volume LBN lives on the members, what a member
//! sector holds, and (in [`plan`]) which member extents a parity-RAID request reads
//! and writes.
//!
//! Two families, because their callers ask different questions:
//! - **copy maps** hold each volume LBN once per copy with no computed content:
//!   [`Raid0Map`] (one copy, chunk striping), [`MirrorMap`] (RAID-1: every member holds
//!   everything at the same member LBN) and [`Raid10Map`] (md's "near" layout);
//! - **parity layouts** implement [`ParityLayout`], so RAID-5 logic (plans, degraded
//!   reads, capacity accounting) is written once: [`Raid5Map`] (md left-symmetric) and
//!   [`TrackAlignedLayout`] (stripe `s` = track `s` of every member, paper §3),
//!   whose track boundaries in volume LBNs are [`logical_track_map`] (data units)
//!   and [`logical_stripe_map`] (stripes), for file systems above it.
//!
//! Words used throughout: a *member LBN* addresses a member drive, a *volume LBN*
//! the volume; a *piece* is the part of a volume request that lands on one contiguous
//! member run, tagged with its offset into the request; a parity *unit* is what one
//! member contributes to one stripe.
//!
//! Invariants (property-tested): `locate` and `inverse` are mutual inverses on the
//! used area; split pieces tile the request in volume order and agree with `locate`
//! sector by sector; a member sector has at most one role. Every map is immutable
//! after construction, validated by its constructor, and never panics on a request it
//! can reject with a [`MapError`].

mod error;
mod logical_tracks;
mod mirror;
mod parity;
pub mod plan;
mod raid0;
mod raid10;
mod raid5;
mod track_aligned;

pub use error::MapError;
pub use logical_tracks::{logical_stripe_map, logical_track_map, LOGICAL_MAP_METHOD};
pub use mirror::MirrorMap;
pub(crate) use parity::data_runs;
pub use parity::{
    stripe_segments, ParityLayout, Role, StripeRange, StripeSegment, StripeSegments, Unit,
};
pub use raid0::Raid0Map;
pub use raid10::Raid10Map;
pub use raid5::Raid5Map;
pub use track_aligned::{TrackAlignedLayout, UnitPolicy};

use serde::{Deserialize, Serialize};
use spinstack_sim::units::{Lbn, Sectors};

/// A member's position in the volume (0-based, as md's `raid_disk`); the same
/// type the engine's member bookkeeping and control paths use.
pub use spinstack_sim::device::MemberIndex;

/// A contiguous run of sectors on one member.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct MemberExtent {
    pub member: MemberIndex,
    /// First member LBN of the run.
    pub lbn: Lbn,
    pub sectors: Sectors,
}

impl MemberExtent {
    /// One past the last member LBN of the run.
    pub fn end(&self) -> Lbn {
        self.lbn.offset(self.sectors)
    }
}

/// The part of a volume request that lands on one contiguous member run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Piece {
    /// Sectors from the start of the volume request to this piece's first sector.
    pub offset: Sectors,
    pub extent: MemberExtent,
}

/// One copy of a volume LBN in a mirrored map.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Replica {
    /// Which copy (0-based); the same copy number names the same "side" that
    /// `split_copy_into` follows.
    pub copy: u32,
    pub member: MemberIndex,
    /// Member LBN of this copy.
    pub lbn: Lbn,
}

/// The copies of one volume LBN, in copy order, computed on the fly (no allocation).
///
/// Both mirrored maps place copy `c` of a chunk at *slot* `first_slot + c`, where
/// slots fill rows of `members` chunks left to right: slot `t` is member
/// `t % members` at row `t / members`. RAID-1 is the case `copies == members` (md
/// says the same of its near layout), whose every copy sits in row 0 of its chunk.
#[derive(Clone, Debug)]
pub struct Replicas {
    first_slot: u64,
    next_copy: u32,
    copies: u32,
    members: u32,
    chunk: u64,
    offset_in_chunk: u64,
}

impl Replicas {
    fn new(first_slot: u64, copies: u32, members: u32, chunk: u64, offset_in_chunk: u64) -> Self {
        debug_assert!(copies >= 1 && copies <= members);
        Replicas {
            first_slot,
            next_copy: 0,
            copies,
            members,
            chunk,
            offset_in_chunk,
        }
    }
}

impl Iterator for Replicas {
    type Item = Replica;
    fn next(&mut self) -> Option<Replica> {
        if self.next_copy >= self.copies {
            return None;
        }
        let slot = self.first_slot + u64::from(self.next_copy);
        let members = u64::from(self.members);
        let replica = Replica {
            copy: self.next_copy,
            member: MemberIndex((slot % members) as u32),
            lbn: Lbn((slot / members) * self.chunk + self.offset_in_chunk),
        };
        self.next_copy += 1;
        Some(replica)
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        let left = (self.copies - self.next_copy) as usize;
        (left, Some(left))
    }
}

impl ExactSizeIterator for Replicas {}

/// Checks that `sectors` starting at `lbn` lie within `capacity`. A zero-sector
/// request is valid anywhere up to and including `capacity` (it touches nothing).
pub(crate) fn check_range(lbn: Lbn, sectors: Sectors, capacity: Sectors) -> Result<(), MapError> {
    let end = lbn.0.checked_add(sectors.0);
    match end {
        Some(end) if end <= capacity.0 => Ok(()),
        _ if lbn.0 >= capacity.0 && sectors.0 > 0 => Err(MapError::LbnOutOfRange { lbn, capacity }),
        _ => Err(MapError::RangeOutOfRange {
            lbn,
            sectors,
            capacity,
        }),
    }
}

/// Checks one LBN against `capacity`.
pub(crate) fn check_lbn(lbn: Lbn, capacity: Sectors) -> Result<(), MapError> {
    if lbn.0 < capacity.0 {
        Ok(())
    } else {
        Err(MapError::LbnOutOfRange { lbn, capacity })
    }
}

/// Appends `piece`, merging it into the previous piece when it continues that piece
/// both in the request and on the same member (callers rely on "one piece per
/// contiguous member run").
pub(crate) fn push_piece(out: &mut Vec<Piece>, piece: Piece) {
    if let Some(last) = out.last_mut() {
        let continues_request = last.offset.0 + last.extent.sectors.0 == piece.offset.0;
        let continues_member =
            last.extent.member == piece.extent.member && last.extent.end() == piece.extent.lbn;
        if continues_request && continues_member {
            last.extent.sectors = Sectors(last.extent.sectors.0 + piece.extent.sectors.0);
            return;
        }
    }
    out.push(piece);
}
