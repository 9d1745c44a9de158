//! [`MirrorVolume`]: n-way RAID-1 ([`Raid1Volume`]) and RAID-10 near
//! ([`Raid10Volume`]) over real stores, one implementation over [`CopyLayout`].
//!
//! - **Read**: each piece from the first copy whose member is live there (copy 0 when
//!   healthy: no read balancing); a piece on a dead member, or a member that fails
//!   while reading it, is read from the next copy instead.
//! - **Read errors**: a piece whose read returns an I/O error (`Io`, `IoAt`) is read
//!   from the next copy that holds it, then written back to the erring member and read
//!   back; the member stays in service unless that rewrite or read-back fails (then it
//!   is failed). With no other copy, the error is passed up and nothing changes. This
//!   is md's read-error correction (since Linux 2.6.15; before, md failed the member
//!   on any read error).
//! - **Write / trim**: every live copy, in copy order. A member failing mid-request
//!   (gone, or an I/O error on the write or trim: its copy is then unknown) is marked
//!   failed and skipped; the request still completes on the other copies.
//! - **Flush**: every live member.
//! - **Rebuild** ([`MirrorVolume::rebuild_step`]): member rows in order, each read
//!   from another copy and written to the new member. Below the cursor the new member
//!   is live (and written by every write); at and above it, it is not.
//!
//! Maintenance (scrub, write-intent resync, assembly) is in `mirror_maintenance`.

use super::common::{
    bytes, check_members, check_request, common_capacity, is_io_error, is_member_failure,
    push_joined, Intent, MemberStores,
};
use super::copy_layout::CopyLayout;
use super::error::{array_failed, VolumeError};
use super::health::{ArrayState, Liveness, VolumeStatus};
use crate::map::{MemberIndex, MirrorMap, Piece, Raid10Map};
use spinstack_sim::units::{Lbn, Sectors};
use spinstack_store::store::check_range;
use spinstack_store::{BlockStore, StoreError};

/// An n-way RAID-1 volume.
pub type Raid1Volume<S> = MirrorVolume<S, MirrorMap>;
/// A RAID-10 volume in md's near layout.
pub type Raid10Volume<S> = MirrorVolume<S, Raid10Map>;

const FAILED: &str = "request to a mirror whose every copy of a chunk is lost";

/// A mirrored volume over member stores of type `S` (see the module docs).
pub struct MirrorVolume<S: BlockStore, M: CopyLayout> {
    pub(crate) map: M,
    pub(crate) members: MemberStores<S>,
    pub(crate) intent: Option<Intent<S>>,
    /// Piece lists, one per copy level of a read that falls back copy by copy.
    pieces: Vec<Vec<Piece>>,
    /// One unit of bytes, for rebuild, resync and scrub.
    pub(crate) unit_buf: Vec<u8>,
    /// One unit of bytes, to read back a piece rewritten after a read error.
    read_back: Vec<u8>,
}

/// A change applied to every live copy.
#[derive(Clone, Copy)]
enum Change<'a> {
    Write(&'a [u8]),
    Trim,
}

impl<S: BlockStore> MirrorVolume<S, MirrorMap> {
    /// An n-way mirror of `stores` (all the same size; one copy per store).
    pub fn new(stores: Vec<S>) -> Result<Self, VolumeError> {
        let capacity = common_capacity(&stores)?;
        Self::with_map(MirrorMap::new(stores.len() as u32, capacity)?, stores)
    }
}

impl<S: BlockStore> MirrorVolume<S, Raid10Map> {
    /// A near-`copies` RAID-10 of `chunk`-sector chunks over `stores` (all the same size).
    pub fn new(chunk: Sectors, copies: u32, stores: Vec<S>) -> Result<Self, VolumeError> {
        let capacity = common_capacity(&stores)?;
        let map = Raid10Map::with_copies(stores.len() as u32, copies, chunk, capacity)?;
        Self::with_map(map, stores)
    }
}

impl<S: BlockStore, M: CopyLayout> MirrorVolume<S, M> {
    /// A volume by a given map; each store must hold what the map uses of a member.
    pub fn with_map(map: M, stores: Vec<S>) -> Result<Self, VolumeError> {
        Self::from_slots(map, stores.into_iter().map(Some).collect())
    }

    /// A volume whose missing members (`None`) start out failed.
    pub(crate) fn from_slots(map: M, stores: Vec<Option<S>>) -> Result<Self, VolumeError> {
        check_members(M::LEVEL, map.members(), &stores, |_| map.member_used())?;
        let mut volume = MirrorVolume {
            pieces: vec![Vec::new(); map.copies() as usize],
            unit_buf: vec![0; bytes(map.unit_sectors().0)],
            read_back: vec![0; bytes(map.unit_sectors().0)],
            map,
            members: MemberStores::new(stores),
            intent: None,
        };
        for member in volume.members.missing() {
            if volume.fail_member(member).is_err() || volume.members.health.is_failed() {
                return Err(VolumeError::ArrayFailed {
                    failed: volume.members.health.failed().to_vec(),
                });
            }
        }
        Ok(volume)
    }

    /// Adds a new, clean write-intent record in `store`, regions of `units_per_region`
    /// units (chunks; RAID-1: 64 KiB). The members must already agree (new arrays:
    /// fresh or trimmed stores; otherwise run `scrub(true)` first).
    pub fn with_intent(mut self, store: S, units_per_region: u64) -> Result<Self, VolumeError> {
        let region = self.region_sectors(units_per_region)?;
        self.intent = Some(Intent::create(store, region, self.map.capacity())?);
        Ok(self)
    }

    pub(crate) fn region_sectors(&self, units_per_region: u64) -> Result<Sectors, VolumeError> {
        match units_per_region.checked_mul(self.map.unit_sectors().0) {
            Some(0) => Err(VolumeError::ZeroRegion { unit: "chunk" }),
            Some(sectors) => Ok(Sectors(sectors)),
            None => Err(VolumeError::Map(crate::map::MapError::TooLarge {
                what: "the write-intent region",
            })),
        }
    }

    pub fn map(&self) -> &M {
        &self.map
    }

    pub fn status(&self) -> VolumeStatus {
        let health = &self.members.health;
        VolumeStatus {
            level: M::LEVEL,
            state: health.state().clone(),
            failed: health.failed().to_vec(),
            rebuild_progress: health.rebuild_progress(),
            corrected_read_sectors: self.members.corrected_read_sectors().to_vec(),
        }
    }

    /// Marks `member` failed, as if it had returned `StoreError::Failed`.
    pub fn fail_member(&mut self, member: MemberIndex) -> Result<(), VolumeError> {
        self.members.check_member(member)?;
        let _ = self.member_failed(member);
        Ok(())
    }

    /// Records a member failure seen on the data path; the array's error if fatal.
    pub(crate) fn member_failed(&mut self, member: MemberIndex) -> Result<(), StoreError> {
        let map = &self.map;
        self.members.fail(member, |f| map.survives(f), FAILED)
    }

    /// What a write, trim or flush of `member` returned, under the member-failure rule
    /// (`MemberStores::settle_change`): `Ok(false)` when it failed the member.
    pub(crate) fn settle(
        &mut self,
        member: MemberIndex,
        result: Result<(), StoreError>,
    ) -> Result<bool, StoreError> {
        let map = &self.map;
        self.members
            .settle_change(member, result, |f| map.survives(f), FAILED)
    }

    /// Puts `store` in place of failed `member` and starts rebuilding it; returns the
    /// old store. The array must be degraded with `member` failed.
    pub fn replace_member(
        &mut self,
        member: MemberIndex,
        store: S,
    ) -> Result<Option<S>, VolumeError> {
        self.members.check_member(member)?;
        let needed = self.map.member_used();
        if store.capacity() < needed {
            return Err(VolumeError::MemberTooSmall {
                member,
                capacity: store.capacity(),
                needed,
            });
        }
        let rows = self.rebuild_rows();
        self.members
            .health
            .start_rebuild(member, rows)
            .map_err(|state| VolumeError::WrongState {
                operation: "replace a member that has not failed",
                state,
            })?;
        Ok(self.members.replace_store(member, store))
    }

    /// Rebuilds up to `max_rows` member rows of the member being rebuilt; returns how
    /// many it did (0 when nothing is being rebuilt).
    pub fn rebuild_step(&mut self, max_rows: u64) -> Result<u64, VolumeError> {
        let mut done = 0;
        while done < max_rows {
            let ArrayState::Rebuilding { member, cursor, .. } = *self.members.health.state() else {
                break;
            };
            self.rebuild_row(member, cursor)?;
            let still_rebuilding = matches!(
                *self.members.health.state(),
                ArrayState::Rebuilding { member: m, cursor: c, .. } if m == member && c == cursor
            );
            if !still_rebuilding {
                break;
            }
            self.members.health.advance_rebuild(cursor + 1);
            done += 1;
        }
        if self.members.health.is_failed() {
            return Err(VolumeError::ArrayFailed {
                failed: self.members.health.failed().to_vec(),
            });
        }
        Ok(done)
    }

    /// The volume ranges whose reads, with `member` failed, read from another copy
    /// what rebuilding `member`'s `rows` reads (each row's unit, at the volume address
    /// it mirrors; unused slots read nothing). Coalesced, in row order. For a timing
    /// model, which has no rebuild traffic of its own (`serve --timing model`).
    pub fn rebuild_read_ranges(
        &self,
        member: MemberIndex,
        rows: std::ops::Range<u64>,
    ) -> Vec<(Lbn, Sectors)> {
        let unit = self.map.unit_sectors().0;
        let used = self.map.member_used().0;
        let mut ranges: Vec<(Lbn, Sectors)> = Vec::new();
        for row in rows {
            let start = row.saturating_mul(unit);
            if start >= used {
                break;
            }
            if let Some(lbn) = self.map.volume_lbn(member, Lbn(start)) {
                push_joined(&mut ranges, lbn, Sectors(unit.min(used - start)));
            }
        }
        ranges
    }

    pub(crate) fn rebuild_rows(&self) -> u64 {
        self.map.member_used().0.div_ceil(self.map.unit_sectors().0)
    }

    /// Copies member row `row` of `member` from another copy.
    fn rebuild_row(&mut self, member: MemberIndex, row: u64) -> Result<(), VolumeError> {
        let unit = self.map.unit_sectors().0;
        let start = Lbn(row * unit);
        let sectors = Sectors(unit.min(self.map.member_used().0 - start.0));
        let Some(volume_lbn) = self.map.volume_lbn(member, start) else {
            return Ok(()); // an unused slot: nothing to copy
        };
        let mut buf = std::mem::take(&mut self.unit_buf);
        let data = &mut buf[..bytes(sectors.0)];
        let result = self.read_copies(volume_lbn, data, 0).and_then(|()| {
            let written = self.members.write(member, start, data);
            self.settle(member, written).map(drop)
        });
        self.unit_buf = buf;
        Ok(result?)
    }

    /// Sectors of `piece` from its start that its member holds validly (all of them
    /// when live, none when dead, those below the cursor while rebuilding).
    fn live_sectors(&self, piece: &Piece) -> u64 {
        let extent = piece.extent;
        match self.members.health.liveness(extent.member) {
            Liveness::Live => extent.sectors.0,
            Liveness::Dead => 0,
            Liveness::LiveBelow(cursor) => {
                let live_end = cursor.saturating_mul(self.map.unit_sectors().0);
                live_end.saturating_sub(extent.lbn.0).min(extent.sectors.0)
            }
        }
    }

    /// Reads `buf.len()` bytes from volume `lbn`, each piece from copy `copy` or, where
    /// that copy is not live or its read errs, a later one (see the module docs).
    pub(crate) fn read_copies(
        &mut self,
        lbn: Lbn,
        buf: &mut [u8],
        copy: u32,
    ) -> Result<(), StoreError> {
        self.members.check_usable(FAILED)?;
        if copy >= self.map.copies() {
            return Err(array_failed(FAILED));
        }
        let mut pieces = std::mem::take(&mut self.pieces[copy as usize]);
        let sectors = Sectors((buf.len() / super::common::SECTOR) as u64);
        let mapped = self.map.split_copy_into(lbn, sectors, copy, &mut pieces);
        debug_assert!(mapped.is_ok(), "request checked against the capacity");
        let result = pieces.iter().try_for_each(|piece| {
            let out = &mut buf[bytes(piece.offset.0)..][..bytes(piece.extent.sectors.0)];
            if self.live_sectors(piece) == piece.extent.sectors.0 {
                match self
                    .members
                    .read(piece.extent.member, piece.extent.lbn, out)
                {
                    Ok(()) => return Ok(()),
                    Err(error) if is_member_failure(&error) => {
                        self.member_failed(piece.extent.member)?
                    }
                    Err(error) if is_io_error(&error) => {
                        return self.correct_piece(lbn, piece, copy, out, error)
                    }
                    Err(error) => return Err(error),
                }
            }
            self.read_copies(lbn.offset(piece.offset), out, copy + 1)
        });
        self.pieces[copy as usize] = pieces;
        result
    }

    /// The read of `piece` (of copy `copy` of a request at volume `lbn`) returned
    /// `error`, an I/O error: reads the piece from a later copy into `out`, writes it
    /// back to the erring member and reads it back, failing that member if either
    /// fails. With no later copy holding it, `error` is returned and nothing changes.
    pub(crate) fn correct_piece(
        &mut self,
        lbn: Lbn,
        piece: &Piece,
        copy: u32,
        out: &mut [u8],
        error: StoreError,
    ) -> Result<(), StoreError> {
        match self.read_copies(lbn.offset(piece.offset), out, copy + 1) {
            Ok(()) => {}
            // Out of copies while the array stands: only this piece is unreadable.
            Err(StoreError::Failed { .. }) if !self.members.health.is_failed() => {
                return Err(error)
            }
            Err(other) => return Err(other),
        }
        self.rewrite_piece(piece, out)
    }

    /// Writes `data` (the piece's right contents) over `piece` after a read error and
    /// reads it back; fails its member if either fails.
    pub(crate) fn rewrite_piece(&mut self, piece: &Piece, data: &[u8]) -> Result<(), StoreError> {
        let (member, start) = (piece.extent.member, piece.extent.lbn);
        let rewritten =
            (self.members).rewrite_verified(member, start, data, &mut self.read_back)?;
        if !rewritten {
            self.member_failed(member)?;
        }
        Ok(())
    }

    pub(crate) fn piece_is_live(&self, piece: &Piece) -> bool {
        self.live_sectors(piece) == piece.extent.sectors.0
    }

    /// Writes `data` at volume `lbn` to every live copy, without touching the record
    /// (resync: the region is already marked); returns whether every copy live at the
    /// start was written (`false`: a member failed instead).
    pub(crate) fn write_copies(&mut self, lbn: Lbn, data: &[u8]) -> Result<bool, StoreError> {
        let sectors = Sectors((data.len() / super::common::SECTOR) as u64);
        self.change_copies(lbn, sectors, Change::Write(data))
    }

    /// Applies `change` to every live copy of the request; returns whether no member
    /// failed on the way.
    fn change_copies(
        &mut self,
        lbn: Lbn,
        sectors: Sectors,
        change: Change<'_>,
    ) -> Result<bool, StoreError> {
        self.members.check_usable(FAILED)?;
        let mut pieces = std::mem::take(&mut self.pieces[0]);
        let mut result = Ok(true);
        for copy in 0..self.map.copies() {
            let mapped = self.map.split_copy_into(lbn, sectors, copy, &mut pieces);
            debug_assert!(mapped.is_ok(), "request checked against the capacity");
            for piece in &pieces {
                result = match self.change_piece(piece, change) {
                    Ok(applied) => result.map(|all| all && applied),
                    Err(error) => Err(error),
                };
                if result.is_err() {
                    break;
                }
            }
            if result.is_err() {
                break;
            }
        }
        self.pieces[0] = pieces;
        result
    }

    /// Applies `change` to one piece where its member is live; `false` when the member
    /// failed instead (and was marked failed).
    fn change_piece(&mut self, piece: &Piece, change: Change<'_>) -> Result<bool, StoreError> {
        let live = self.live_sectors(piece);
        if live == 0 {
            return Ok(true);
        }
        let (member, lbn) = (piece.extent.member, piece.extent.lbn);
        let applied = match change {
            Change::Write(buf) => {
                let data = &buf[bytes(piece.offset.0)..][..bytes(live)];
                self.members.write(member, lbn, data)
            }
            Change::Trim => self.members.trim(member, lbn, Sectors(live)),
        };
        self.settle(member, applied)
    }

    /// Marks the request's regions in the record (if any), applies the change, ends them.
    fn change(&mut self, lbn: Lbn, sectors: Sectors, change: Change<'_>) -> Result<(), StoreError> {
        self.members.check_usable(FAILED)?;
        let regions = match &mut self.intent {
            Some(intent) => Some(intent.begin(lbn, sectors)?),
            None => None,
        };
        let result = self.change_copies(lbn, sectors, change).map(drop);
        if let (Some(intent), Some(regions)) = (&mut self.intent, regions) {
            intent.end(regions, result.is_ok());
        }
        result
    }

    /// Flushes every live member; a member failing here is marked failed.
    pub(crate) fn flush_members(&mut self) -> Result<(), StoreError> {
        for index in 0..self.members.count() {
            let member = MemberIndex(index);
            if self.members.health.liveness(member) == Liveness::Dead {
                continue;
            }
            // A member whose flush fails may have lost writes it accepted (a file
            // store's page cache drops them on a failed write-back), so what it holds
            // is unknown: failed, as after a write error.
            let flushed = self.members.flush(member);
            self.settle(member, flushed)?;
        }
        Ok(())
    }

    /// Flushes every live member and clears the write-intent bit of every idle region
    /// at once (a clean shutdown); returns how many bits it cleared (0 without a record).
    pub fn flush_and_clean(&mut self) -> Result<u64, VolumeError> {
        self.members.check_usable(FAILED)?;
        let Some(mut intent) = self.intent.take() else {
            self.flush_members()?;
            return Ok(0);
        };
        let result = intent.flush_and_clean(|| self.flush_members());
        self.intent = Some(intent);
        result
    }

    /// The member stores (`None` for a member missing at assembly) and the record store.
    pub fn into_parts(self) -> (Vec<Option<S>>, Option<S>) {
        (self.members.stores, self.intent.map(Intent::into_store))
    }
}

impl<S: BlockStore, M: CopyLayout> BlockStore for MirrorVolume<S, M> {
    fn capacity(&self) -> Sectors {
        self.map.capacity()
    }

    fn read(&mut self, lbn: Lbn, buf: &mut [u8]) -> Result<(), StoreError> {
        check_request(self.capacity(), lbn, buf.len())?;
        self.read_copies(lbn, buf, 0)
    }

    fn write(&mut self, lbn: Lbn, buf: &[u8]) -> Result<(), StoreError> {
        let sectors = check_request(self.capacity(), lbn, buf.len())?;
        self.change(lbn, sectors, Change::Write(buf))
    }

    fn flush(&mut self) -> Result<(), StoreError> {
        self.members.check_usable(FAILED)?;
        let mut intent = self.intent.take();
        let result = match &mut intent {
            Some(intent) => intent.flush_with(|| self.flush_members()),
            None => self.flush_members(),
        };
        self.intent = intent;
        result
    }

    fn trim(&mut self, lbn: Lbn, sectors: Sectors) -> Result<(), StoreError> {
        check_range(self.capacity(), lbn, sectors)?;
        self.change(lbn, sectors, Change::Trim)
    }
}
