//! RAID-1: n-way mirroring, as md's raid1.
//!
//! Every member holds every volume LBN at the same member LBN, so `capacity` is the
//! member capacity and copy `c` is member `c`. Which copy serves a read is the
//! caller's policy (read balancing), not the map's.
//!
//! Invariants: `locate` yields `members` distinct replicas, one per member, each at
//! the volume LBN; `inverse` is the identity on `0..capacity`.

use super::{check_lbn, check_range, MapError, MemberExtent, MemberIndex, Piece, Replicas};
use spinstack_sim::units::{Lbn, Sectors};

/// An n-way mirror (see the module docs).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MirrorMap {
    members: u32,
    member_capacity: Sectors,
}

impl MirrorMap {
    /// Fewest members of a mirror.
    pub const MIN_MEMBERS: u32 = 2;

    /// A mirror of `members` members of `member_capacity` sectors each.
    pub fn new(members: u32, member_capacity: Sectors) -> Result<Self, MapError> {
        if members < Self::MIN_MEMBERS {
            return Err(MapError::TooFewMembers {
                level: "RAID-1",
                members,
                minimum: Self::MIN_MEMBERS,
            });
        }
        if member_capacity.0 == 0 {
            return Err(MapError::MemberTooSmall {
                member_capacity,
                needed: Sectors(1),
            });
        }
        Ok(MirrorMap {
            members,
            member_capacity,
        })
    }

    pub fn members(&self) -> u32 {
        self.members
    }
    /// Copies of each LBN: one per member.
    pub fn copies(&self) -> u32 {
        self.members
    }
    pub fn capacity(&self) -> Sectors {
        self.member_capacity
    }

    /// Every copy of volume `lbn`, copy `c` on member `c`.
    pub fn locate(&self, lbn: Lbn) -> Result<Replicas, MapError> {
        check_lbn(lbn, self.member_capacity)?;
        // One row of `members` slots: copy c is slot c, at member LBN `lbn`.
        Ok(Replicas::new(0, self.members, self.members, 0, lbn.0))
    }

    /// The volume LBN stored at `lbn` of `member` (the same LBN), or `None` beyond the
    /// member capacity or for a member the map does not have.
    pub fn inverse(&self, member: MemberIndex, lbn: Lbn) -> Option<Lbn> {
        (member.0 < self.members && lbn.0 < self.member_capacity.0).then_some(lbn)
    }

    /// Replaces `out` with the request's pieces on copy `copy`: a single piece, since a
    /// mirror member holds the volume contiguously. (Same shape as
    /// [`super::Raid10Map::split_copy_into`], so callers treat both alike.)
    pub fn split_copy_into(
        &self,
        lbn: Lbn,
        sectors: Sectors,
        copy: u32,
        out: &mut Vec<Piece>,
    ) -> Result<(), MapError> {
        out.clear();
        if copy >= self.members {
            return Err(MapError::CopyOutOfRange {
                copy,
                copies: self.members,
            });
        }
        check_range(lbn, sectors, self.member_capacity)?;
        if sectors.0 > 0 {
            out.push(Piece {
                offset: Sectors(0),
                extent: MemberExtent {
                    member: MemberIndex(copy),
                    lbn,
                    sectors,
                },
            });
        }
        Ok(())
    }
}
