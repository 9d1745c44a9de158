//! RAID-5 in md's default left-symmetric layout, with equal chunk-sized units.
//!
//! Stripe `s` is member chunk row `s` of every member. Its parity is on member
//! `members - 1 - s % members`; data index `d` is on member `(parity + 1 + d) %
//! members` (md's `raid5_compute_sector`, `ALGORITHM_LEFT_SYMMETRIC`), so volume
//! chunk `k` is data index `k % (members - 1)` of stripe `k / (members - 1)`. Every
//! unit is `chunk` sectors, used and allocated alike; each member's tail beyond
//! `stripes * chunk` is unused.
//!
//! Invariants: as for every [`ParityLayout`]; in particular consecutive volume chunks
//! land on consecutive members (mod `members`), md's reason for the layout.

use super::parity::{left_symmetric_data, left_symmetric_data_index, left_symmetric_parity};
use super::track_aligned::validate_member_tracks;
use super::{check_lbn, MapError, MemberIndex, ParityLayout, Role, Unit};
use spinstack_sim::units::{Lbn, Sectors};

/// A left-symmetric RAID-5 over equal members (see the module docs).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Raid5Map {
    members: u32,
    chunk: Sectors,
    member_capacity: Sectors,
    stripes: u64,
    stripe_data: u64,
    capacity: Sectors,
    raw: Sectors,
}

impl Raid5Map {
    /// Fewest members of a RAID-5 (two data units and parity).
    pub const MIN_MEMBERS: u32 = 3;

    /// A map of `members` members of `member_capacity` sectors, `chunk` sectors per unit.
    pub fn new(members: u32, chunk: Sectors, member_capacity: Sectors) -> Result<Self, MapError> {
        if members < Self::MIN_MEMBERS {
            return Err(MapError::TooFewMembers {
                level: "RAID-5",
                members,
                minimum: Self::MIN_MEMBERS,
            });
        }
        if chunk.0 == 0 {
            return Err(MapError::ChunkZero);
        }
        let stripes = member_capacity.0 / chunk.0;
        if stripes == 0 {
            return Err(MapError::MemberTooSmall {
                member_capacity,
                needed: chunk,
            });
        }
        let too_large = |what| MapError::TooLarge { what };
        let stripe_data = chunk
            .0
            .checked_mul(u64::from(members - 1))
            .ok_or(too_large("a stripe's data"))?;
        let capacity = stripes
            .checked_mul(stripe_data)
            .ok_or(too_large("the volume capacity"))?;
        let raw = member_capacity
            .0
            .checked_mul(u64::from(members))
            .ok_or(too_large("the members' total capacity"))?;
        Ok(Raid5Map {
            members,
            chunk,
            member_capacity,
            stripes,
            stripe_data,
            capacity: Sectors(capacity),
            raw: Sectors(raw),
        })
    }

    /// The validation paper's rejected alternative "chunk = the largest track" (§3):
    /// an ordinary left-symmetric RAID-5 whose chunk is the largest track of any member
    /// (over all of each member's tracks), over members as large as the smallest one.
    /// Units then straddle track boundaries wherever a track is smaller than the chunk
    /// ("some disks need 1+ tracks to form a chunk"), which is what makes it lose the
    /// track alignment that [`super::TrackAlignedLayout`] keeps.
    /// `member_tracks` is each member's track sizes, as for the track-aligned layout.
    pub fn with_largest_track_chunk(member_tracks: &[Vec<Sectors>]) -> Result<Self, MapError> {
        validate_member_tracks(member_tracks, "RAID-5", Self::MIN_MEMBERS)?;
        let largest_track = member_tracks
            .iter()
            .flatten()
            .copied()
            .max()
            .unwrap_or_default();
        let mut smallest_member = u64::MAX;
        for tracks in member_tracks {
            let total = tracks
                .iter()
                .try_fold(0u64, |sum, track| sum.checked_add(track.0));
            let total = total.ok_or(MapError::TooLarge {
                what: "a member's capacity",
            })?;
            smallest_member = smallest_member.min(total);
        }
        let members = u32::try_from(member_tracks.len()).map_err(|_| MapError::TooLarge {
            what: "the member count",
        })?;
        Self::new(members, largest_track, Sectors(smallest_member))
    }

    pub fn chunk(&self) -> Sectors {
        self.chunk
    }
    pub fn member_capacity(&self) -> Sectors {
        self.member_capacity
    }
}

impl ParityLayout for Raid5Map {
    fn members(&self) -> u32 {
        self.members
    }
    fn stripes(&self) -> u64 {
        self.stripes
    }
    fn capacity(&self) -> Sectors {
        self.capacity
    }
    fn stripe_of(&self, lbn: Lbn) -> Result<u64, MapError> {
        check_lbn(lbn, self.capacity)?;
        Ok(lbn.0 / self.stripe_data)
    }
    fn stripe_start(&self, stripe: u64) -> Lbn {
        debug_assert!(stripe <= self.stripes);
        Lbn(stripe * self.stripe_data)
    }
    fn stripe_data_sectors(&self, stripe: u64) -> Sectors {
        debug_assert!(stripe < self.stripes);
        Sectors(self.stripe_data)
    }
    fn parity_member(&self, stripe: u64) -> MemberIndex {
        left_symmetric_parity(stripe, self.members)
    }
    fn data_member(&self, stripe: u64, data_index: u32) -> MemberIndex {
        left_symmetric_data(stripe, self.members, data_index)
    }
    fn data_index(&self, stripe: u64, member: MemberIndex) -> Option<u32> {
        left_symmetric_data_index(stripe, self.members, member)
    }
    fn unit(&self, stripe: u64, member: MemberIndex) -> Unit {
        debug_assert!(stripe < self.stripes && member.0 < self.members);
        Unit {
            start: Lbn(stripe * self.chunk.0),
            used: self.chunk,
            allocated: self.chunk,
        }
    }
    fn inverse(&self, member: MemberIndex, lbn: Lbn) -> Role {
        if member.0 >= self.members || lbn.0 >= self.stripes * self.chunk.0 {
            return Role::Unused;
        }
        let stripe = lbn.0 / self.chunk.0;
        let offset = lbn.0 % self.chunk.0;
        match self.data_index(stripe, member) {
            Some(d) => Role::Data(Lbn(stripe * self.stripe_data
                + u64::from(d) * self.chunk.0
                + offset)),
            None => Role::Parity {
                stripe,
                offset: Sectors(offset),
            },
        }
    }
    fn raw_sectors(&self) -> Sectors {
        self.raw
    }
    fn parity_sectors(&self) -> Sectors {
        Sectors(self.stripes * self.chunk.0)
    }
    fn unused_sectors(&self) -> Sectors {
        let tail = self.member_capacity.0 - self.stripes * self.chunk.0;
        Sectors(tail * u64::from(self.members))
    }
    // Arithmetic instead of the provided walk over units: one division per lookup.
    fn locate(&self, lbn: Lbn) -> Result<(MemberIndex, Lbn), MapError> {
        let stripe = self.stripe_of(lbn)?;
        let offset = lbn.0 % self.stripe_data;
        let member = left_symmetric_data(stripe, self.members, (offset / self.chunk.0) as u32);
        Ok((member, Lbn(stripe * self.chunk.0 + offset % self.chunk.0)))
    }
}
