//! RAID-0: chunk striping over equal members, as md's raid0 with one zone.
//!
//! Volume chunk `k` (of `chunk` sectors) lives on member `k % members` at member
//! chunk row `k / members`; within a chunk, offsets are kept. Each member uses
//! `rows = floor(member_capacity / chunk)` whole chunks; its tail beyond
//! `rows * chunk` is unused, so `capacity = rows * chunk * members`.
//!
//! Invariants: `locate` is a bijection from `0..capacity` onto the used member
//! sectors and `inverse` undoes it; `split_into` yields one piece per contiguous
//! member run, in volume order.

use super::{check_lbn, check_range, push_piece, MapError, MemberExtent, MemberIndex, Piece};
use spinstack_sim::units::{Lbn, Sectors};

/// A RAID-0 address map (see the module docs).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Raid0Map {
    members: u32,
    chunk: Sectors,
    member_capacity: Sectors,
    rows: u64,
    capacity: Sectors,
}

impl Raid0Map {
    /// Fewest members a RAID-0 accepts (one member would be a plain drive).
    pub const MIN_MEMBERS: u32 = 2;

    /// A map striping `chunk`-sector chunks over `members` members of
    /// `member_capacity` sectors each.
    pub fn new(members: u32, chunk: Sectors, member_capacity: Sectors) -> Result<Self, MapError> {
        if members < Self::MIN_MEMBERS {
            return Err(MapError::TooFewMembers {
                level: "RAID-0",
                members,
                minimum: Self::MIN_MEMBERS,
            });
        }
        if chunk.0 == 0 {
            return Err(MapError::ChunkZero);
        }
        let rows = member_capacity.0 / chunk.0;
        if rows == 0 {
            return Err(MapError::MemberTooSmall {
                member_capacity,
                needed: chunk,
            });
        }
        let capacity =
            (rows * chunk.0)
                .checked_mul(u64::from(members))
                .ok_or(MapError::TooLarge {
                    what: "the volume capacity",
                })?;
        Ok(Raid0Map {
            members,
            chunk,
            member_capacity,
            rows,
            capacity: Sectors(capacity),
        })
    }

    pub fn members(&self) -> u32 {
        self.members
    }
    pub fn chunk(&self) -> Sectors {
        self.chunk
    }
    pub fn member_capacity(&self) -> Sectors {
        self.member_capacity
    }
    /// Sectors at the start of each member that hold volume data; the rest is unused.
    pub fn member_used(&self) -> Sectors {
        Sectors(self.rows * self.chunk.0)
    }
    /// Volume sectors: the used part of every member.
    pub fn capacity(&self) -> Sectors {
        self.capacity
    }

    /// The member and member LBN holding volume `lbn`.
    pub fn locate(&self, lbn: Lbn) -> Result<(MemberIndex, Lbn), MapError> {
        check_lbn(lbn, self.capacity)?;
        Ok(self.locate_unchecked(lbn.0))
    }

    /// The volume LBN stored at `lbn` of `member`; `None` for sectors beyond the used
    /// area (or a member the map does not have).
    pub fn inverse(&self, member: MemberIndex, lbn: Lbn) -> Option<Lbn> {
        if member.0 >= self.members || lbn.0 >= self.member_used().0 {
            return None;
        }
        let row = lbn.0 / self.chunk.0;
        let offset_in_chunk = lbn.0 % self.chunk.0;
        let chunk_index = row * u64::from(self.members) + u64::from(member.0);
        Some(Lbn(chunk_index * self.chunk.0 + offset_in_chunk))
    }

    /// Replaces `out` with the pieces of the request (`sectors` from `lbn`), in volume
    /// order, one per contiguous member run. Reuses `out`'s allocation: callers on a
    /// hot path keep one `Vec` per volume. `out` is empty after an error.
    pub fn split_into(
        &self,
        lbn: Lbn,
        sectors: Sectors,
        out: &mut Vec<Piece>,
    ) -> Result<(), MapError> {
        out.clear();
        check_range(lbn, sectors, self.capacity)?;
        let mut done = 0;
        while done < sectors.0 {
            let volume_lbn = lbn.0 + done;
            let run = (self.chunk.0 - volume_lbn % self.chunk.0).min(sectors.0 - done);
            let (member, member_lbn) = self.locate_unchecked(volume_lbn);
            push_piece(
                out,
                Piece {
                    offset: Sectors(done),
                    extent: MemberExtent {
                        member,
                        lbn: member_lbn,
                        sectors: Sectors(run),
                    },
                },
            );
            done += run;
        }
        Ok(())
    }

    fn locate_unchecked(&self, lbn: u64) -> (MemberIndex, Lbn) {
        debug_assert!(lbn < self.capacity.0);
        let chunk_index = lbn / self.chunk.0;
        let members = u64::from(self.members);
        let member = MemberIndex((chunk_index % members) as u32);
        let row = chunk_index / members;
        (member, Lbn(row * self.chunk.0 + lbn % self.chunk.0))
    }
}
