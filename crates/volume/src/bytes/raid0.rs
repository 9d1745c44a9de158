//! [`Raid0Volume`]: chunk striping over real stores, by [`Raid0Map`].
//!
//! No redundancy: the first member failure moves the array to `Failed` (see the state
//! table in [`super::health`]) and every later request returns an error; there is no
//! degraded mode, rebuild, scrub or write-intent record.

use super::common::{
    bytes, check_members, check_request, common_capacity, is_member_failure, MemberStores,
};
use super::error::{array_failed, VolumeError};
use super::health::VolumeStatus;
use crate::map::{MemberIndex, Piece, Raid0Map};
use spinstack_sim::units::{Lbn, Sectors};
use spinstack_store::{BlockStore, StoreError};

const LEVEL: &str = "RAID-0";
const FAILED: &str = "request to a RAID-0 that lost a member";

/// A RAID-0 volume over member stores of type `S`.
pub struct Raid0Volume<S: BlockStore> {
    map: Raid0Map,
    members: MemberStores<S>,
    pieces: Vec<Piece>,
}

impl<S: BlockStore> Raid0Volume<S> {
    /// Stripes `chunk`-sector chunks over `stores`, which must all be the same size.
    pub fn new(chunk: Sectors, stores: Vec<S>) -> Result<Self, VolumeError> {
        let capacity = common_capacity(&stores)?;
        let map = Raid0Map::new(stores.len() as u32, chunk, capacity)?;
        Self::with_map(map, stores)
    }

    /// A volume by a given map; each store must hold the map's member capacity.
    pub fn with_map(map: Raid0Map, stores: Vec<S>) -> Result<Self, VolumeError> {
        let stores: Vec<Option<S>> = stores.into_iter().map(Some).collect();
        check_members(LEVEL, map.members(), &stores, |_| map.member_used())?;
        Ok(Raid0Volume {
            map,
            members: MemberStores::new(stores),
            pieces: Vec::new(),
        })
    }

    pub fn map(&self) -> &Raid0Map {
        &self.map
    }

    /// Marks `member` failed, as if it had returned `StoreError::Failed`: the array fails.
    pub fn fail_member(&mut self, member: MemberIndex) -> Result<(), VolumeError> {
        self.members.check_member(member)?;
        let _ = self
            .members
            .fail(member, |failed| failed.is_empty(), FAILED);
        Ok(())
    }

    pub fn status(&self) -> VolumeStatus {
        VolumeStatus {
            level: LEVEL,
            state: self.members.health.state().clone(),
            failed: self.members.health.failed().to_vec(),
            rebuild_progress: None,
            corrected_read_sectors: self.members.corrected_read_sectors().to_vec(),
        }
    }

    /// The member stores, in map order.
    pub fn into_members(self) -> Vec<S> {
        self.members.stores.into_iter().flatten().collect()
    }

    /// Runs `op` on every piece of the request; a member failure fails the array.
    fn for_pieces(
        &mut self,
        lbn: Lbn,
        sectors: Sectors,
        mut op: impl FnMut(&mut MemberStores<S>, &Piece) -> Result<(), StoreError>,
    ) -> Result<(), StoreError> {
        self.members.check_usable(FAILED)?;
        let mut pieces = std::mem::take(&mut self.pieces);
        let mapped = self.map.split_into(lbn, sectors, &mut pieces);
        debug_assert!(mapped.is_ok(), "request checked against the capacity");
        let mut result = Ok(());
        for piece in &pieces {
            if let Err(error) = op(&mut self.members, piece) {
                if is_member_failure(&error) {
                    let _ = self
                        .members
                        .fail(piece.extent.member, |f| f.is_empty(), FAILED);
                    result = Err(array_failed(FAILED));
                } else {
                    result = Err(error);
                }
                break;
            }
        }
        self.pieces = pieces;
        result
    }
}

impl<S: BlockStore> BlockStore for Raid0Volume<S> {
    fn capacity(&self) -> Sectors {
        self.map.capacity()
    }

    fn read(&mut self, lbn: Lbn, buf: &mut [u8]) -> Result<(), StoreError> {
        let sectors = check_request(self.capacity(), lbn, buf.len())?;
        self.for_pieces(lbn, sectors, |members, piece| {
            let out = &mut buf[bytes(piece.offset.0)..][..bytes(piece.extent.sectors.0)];
            members.read(piece.extent.member, piece.extent.lbn, out)
        })
    }

    fn write(&mut self, lbn: Lbn, buf: &[u8]) -> Result<(), StoreError> {
        let sectors = check_request(self.capacity(), lbn, buf.len())?;
        self.for_pieces(lbn, sectors, |members, piece| {
            let data = &buf[bytes(piece.offset.0)..][..bytes(piece.extent.sectors.0)];
            members.write(piece.extent.member, piece.extent.lbn, data)
        })
    }

    fn flush(&mut self) -> Result<(), StoreError> {
        self.members.check_usable(FAILED)?;
        for index in 0..self.members.count() {
            let member = MemberIndex(index);
            if let Err(error) = self.members.flush(member) {
                if is_member_failure(&error) {
                    let _ = self.members.fail(member, |f| f.is_empty(), FAILED);
                    return Err(array_failed(FAILED));
                }
                return Err(error);
            }
        }
        Ok(())
    }

    fn trim(&mut self, lbn: Lbn, sectors: Sectors) -> Result<(), StoreError> {
        spinstack_store::store::check_range(self.capacity(), lbn, sectors)?;
        self.for_pieces(lbn, sectors, |members, piece| {
            members.trim(piece.extent.member, piece.extent.lbn, piece.extent.sectors)
        })
    }
}
