//! [`CopyLayout`]: what the mirrored byte volume needs of a copy map, implemented for
//! [`MirrorMap`] (RAID-1) and [`Raid10Map`] (RAID-10 near), so one volume serves both.

use crate::map::{MapError, MemberIndex, MirrorMap, Piece, Raid10Map};
use spinstack_sim::units::{Lbn, Sectors};

/// The rebuild, resync and scrub unit of a RAID-1, which has no chunk: 64 KiB.
pub const MIRROR_UNIT_SECTORS: Sectors = Sectors(128);

/// A map keeping `copies` copies of every volume sector (see the implementations).
pub trait CopyLayout {
    /// "RAID-1" or "RAID-10", for messages and status.
    const LEVEL: &'static str;
    fn members(&self) -> u32;
    fn copies(&self) -> u32;
    fn capacity(&self) -> Sectors;
    /// The unit of rebuild, resync, scrub reports and write-intent regions: the chunk
    /// (RAID-1: [`MIRROR_UNIT_SECTORS`]). Volume unit `u` is volume sectors
    /// `u * unit..`, and member row `r` is member sectors `r * unit..`.
    fn unit_sectors(&self) -> Sectors;
    /// Sectors at the start of each member the map uses.
    fn member_used(&self) -> Sectors;
    /// The request's pieces on copy `copy`, in volume order (`out` replaced).
    fn split_copy_into(
        &self,
        lbn: Lbn,
        sectors: Sectors,
        copy: u32,
        out: &mut Vec<Piece>,
    ) -> Result<(), MapError>;
    /// The volume LBN stored at `lbn` of `member`, `None` for an unused sector.
    fn volume_lbn(&self, member: MemberIndex, lbn: Lbn) -> Option<Lbn>;
    /// Whether every volume sector keeps a live copy with `failed` out.
    fn survives(&self, failed: &[MemberIndex]) -> bool;
}

impl CopyLayout for MirrorMap {
    const LEVEL: &'static str = "RAID-1";
    fn members(&self) -> u32 {
        MirrorMap::members(self)
    }
    fn copies(&self) -> u32 {
        MirrorMap::copies(self)
    }
    fn capacity(&self) -> Sectors {
        MirrorMap::capacity(self)
    }
    fn unit_sectors(&self) -> Sectors {
        MIRROR_UNIT_SECTORS
    }
    fn member_used(&self) -> Sectors {
        MirrorMap::capacity(self)
    }
    fn split_copy_into(
        &self,
        lbn: Lbn,
        sectors: Sectors,
        copy: u32,
        out: &mut Vec<Piece>,
    ) -> Result<(), MapError> {
        MirrorMap::split_copy_into(self, lbn, sectors, copy, out)
    }
    fn volume_lbn(&self, member: MemberIndex, lbn: Lbn) -> Option<Lbn> {
        self.inverse(member, lbn)
    }
    fn survives(&self, failed: &[MemberIndex]) -> bool {
        failed.len() < MirrorMap::members(self) as usize
    }
}

impl CopyLayout for Raid10Map {
    const LEVEL: &'static str = "RAID-10";
    fn members(&self) -> u32 {
        Raid10Map::members(self)
    }
    fn copies(&self) -> u32 {
        Raid10Map::copies(self)
    }
    fn capacity(&self) -> Sectors {
        Raid10Map::capacity(self)
    }
    fn unit_sectors(&self) -> Sectors {
        self.chunk()
    }
    fn member_used(&self) -> Sectors {
        Sectors(self.member_capacity().0 / self.chunk().0 * self.chunk().0)
    }
    fn split_copy_into(
        &self,
        lbn: Lbn,
        sectors: Sectors,
        copy: u32,
        out: &mut Vec<Piece>,
    ) -> Result<(), MapError> {
        Raid10Map::split_copy_into(self, lbn, sectors, copy, out)
    }
    fn volume_lbn(&self, member: MemberIndex, lbn: Lbn) -> Option<Lbn> {
        self.inverse(member, lbn).map(|(volume, _copy)| volume)
    }
    fn survives(&self, failed: &[MemberIndex]) -> bool {
        // Chunk k's copies sit on consecutive slots from k * copies; which members they
        // are repeats every `members` chunks, so those chunks decide.
        let chunks = self.capacity().0 / self.chunk().0;
        let (members, copies) = (u64::from(self.members()), u64::from(self.copies()));
        (0..chunks.min(members)).all(|chunk| {
            (0..copies).any(|c| {
                let member = MemberIndex(((chunk * copies + c) % members) as u32);
                !failed.contains(&member)
            })
        })
    }
}
