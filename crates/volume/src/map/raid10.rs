//! RAID-10 in md's "near" layout (`--layout=n<copies>`, the md default `n2`).
//!
//! Member chunk *slots* are numbered row by row: slot `t` is member `t % members`,
//! member chunk row `t / members`. Volume chunk `k`'s copies `c = 0..copies` take
//! the consecutive slots `k * copies + c`. So with 4 members and 2 copies, chunk 0
//! is on members 0 and 1, chunk 1 on members 2 and 3, both in row 0; `members` need
//! not be a multiple of `copies` (md allows near-2 on 3 members: chunk 1 is then on
//! member 2 in row 0 and member 0 in row 1). md's "far" and "offset" copies are not
//! modelled.
//!
//! Each member uses `rows = floor(member_capacity / chunk)` rows; the volume has
//! `floor(rows * members / copies)` chunks (md's `raid10_size` for near copies), so
//! the few slots left in the last row when `rows * members` is not a multiple of
//! `copies` are unused, as is every member's tail beyond `rows * chunk`.
//!
//! Invariants: copies of one chunk are on distinct members (consecutive slots, and
//! `copies <= members`); `inverse` maps each used slot back to its chunk and copy.

use super::{
    check_lbn, check_range, push_piece, MapError, MemberExtent, MemberIndex, Piece, Replicas,
};
use spinstack_sim::units::{Lbn, Sectors};

/// A RAID-10 near-layout address map (see the module docs).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Raid10Map {
    members: u32,
    copies: u32,
    chunk: Sectors,
    member_capacity: Sectors,
    rows: u64,
    chunks: u64,
    capacity: Sectors,
}

impl Raid10Map {
    /// Fewest members of a RAID-10.
    pub const MIN_MEMBERS: u32 = 2;
    /// md's default number of near copies.
    pub const DEFAULT_COPIES: u32 = 2;

    /// A near-2 map (md's default) of `members` members of `member_capacity` sectors.
    pub fn new(members: u32, chunk: Sectors, member_capacity: Sectors) -> Result<Self, MapError> {
        Self::with_copies(members, Self::DEFAULT_COPIES, chunk, member_capacity)
    }

    /// A near map keeping `copies` copies (`2 <= copies <= members`).
    pub fn with_copies(
        members: u32,
        copies: u32,
        chunk: Sectors,
        member_capacity: Sectors,
    ) -> Result<Self, MapError> {
        if members < Self::MIN_MEMBERS {
            return Err(MapError::TooFewMembers {
                level: "RAID-10",
                members,
                minimum: Self::MIN_MEMBERS,
            });
        }
        if copies < 2 || copies > members {
            return Err(MapError::CopiesOutOfRange { copies, members });
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
        let too_large = MapError::TooLarge {
            what: "the volume capacity",
        };
        let slots = rows
            .checked_mul(u64::from(members))
            .ok_or(too_large.clone())?;
        let chunks = slots / u64::from(copies);
        let capacity = chunks.checked_mul(chunk.0).ok_or(too_large)?;
        Ok(Raid10Map {
            members,
            copies,
            chunk,
            member_capacity,
            rows,
            chunks,
            capacity: Sectors(capacity),
        })
    }

    pub fn members(&self) -> u32 {
        self.members
    }
    pub fn copies(&self) -> u32 {
        self.copies
    }
    pub fn chunk(&self) -> Sectors {
        self.chunk
    }
    pub fn member_capacity(&self) -> Sectors {
        self.member_capacity
    }
    pub fn capacity(&self) -> Sectors {
        self.capacity
    }

    /// Every copy of volume `lbn`, in copy order.
    pub fn locate(&self, lbn: Lbn) -> Result<Replicas, MapError> {
        check_lbn(lbn, self.capacity)?;
        let chunk_index = lbn.0 / self.chunk.0;
        Ok(Replicas::new(
            chunk_index * u64::from(self.copies),
            self.copies,
            self.members,
            self.chunk.0,
            lbn.0 % self.chunk.0,
        ))
    }

    /// The volume LBN stored at `lbn` of `member` and which copy it is; `None` for
    /// unused sectors (member tail, unused slots of the last row) or an unknown member.
    pub fn inverse(&self, member: MemberIndex, lbn: Lbn) -> Option<(Lbn, u32)> {
        if member.0 >= self.members || lbn.0 >= self.rows * self.chunk.0 {
            return None;
        }
        let slot = (lbn.0 / self.chunk.0) * u64::from(self.members) + u64::from(member.0);
        let chunk_index = slot / u64::from(self.copies);
        if chunk_index >= self.chunks {
            return None;
        }
        let copy = (slot % u64::from(self.copies)) as u32;
        Some((Lbn(chunk_index * self.chunk.0 + lbn.0 % self.chunk.0), copy))
    }

    /// Replaces `out` with the request's pieces on copy `copy` of every chunk it
    /// touches, in volume order, one per contiguous member run (runs merge only when
    /// `copies == members`, where each copy is a whole member). Reuses `out`'s
    /// allocation. `out` is empty after an error.
    pub fn split_copy_into(
        &self,
        lbn: Lbn,
        sectors: Sectors,
        copy: u32,
        out: &mut Vec<Piece>,
    ) -> Result<(), MapError> {
        out.clear();
        if copy >= self.copies {
            return Err(MapError::CopyOutOfRange {
                copy,
                copies: self.copies,
            });
        }
        check_range(lbn, sectors, self.capacity)?;
        let members = u64::from(self.members);
        let mut done = 0;
        while done < sectors.0 {
            let volume_lbn = lbn.0 + done;
            let offset_in_chunk = volume_lbn % self.chunk.0;
            let run = (self.chunk.0 - offset_in_chunk).min(sectors.0 - done);
            let slot = (volume_lbn / self.chunk.0) * u64::from(self.copies) + u64::from(copy);
            let extent = MemberExtent {
                member: MemberIndex((slot % members) as u32),
                lbn: Lbn((slot / members) * self.chunk.0 + offset_in_chunk),
                sectors: Sectors(run),
            };
            push_piece(
                out,
                Piece {
                    offset: Sectors(done),
                    extent,
                },
            );
            done += run;
        }
        Ok(())
    }
}
