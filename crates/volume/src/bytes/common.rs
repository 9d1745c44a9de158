//! What every byte volume shares: the member table (stores plus the health state
//! machine), argument checks, and the write-intent glue.

use super::error::{intent_to_store, VolumeError};
use super::health::Health;
use crate::map::MemberIndex;
use spinstack_sim::units::{Lbn, Sectors, SECTOR_BYTES};
use spinstack_store::store::check_buffer;
use spinstack_store::{BlockStore, StoreError, WriteIntent};
use std::ops::Range;

pub(crate) const SECTOR: usize = SECTOR_BYTES as usize;

/// Bytes of `sectors`, as a buffer length.
pub(crate) fn bytes(sectors: u64) -> usize {
    (sectors * SECTOR_BYTES) as usize
}

/// Appends the volume range at `lbn` of `sectors` to `ranges`, joined to the last one
/// when it starts where that one ends (the rebuild ranges a timing model is given).
pub(crate) fn push_joined(ranges: &mut Vec<(Lbn, Sectors)>, lbn: Lbn, sectors: Sectors) {
    match ranges.last_mut() {
        Some((last, length)) if last.0 + length.0 == lbn.0 => length.0 += sectors.0,
        _ => ranges.push((lbn, sectors)),
    }
}

/// Whether a member operation failed because the member is gone (`StoreError::Failed`),
/// as opposed to an I/O error ([`is_io_error`]) or an error that is not the member's
/// (bad arguments, a power cut), which the array passes up unchanged.
pub(crate) fn is_member_failure(error: &StoreError) -> bool {
    matches!(error, StoreError::Failed { .. })
}

/// Whether a member operation returned an ordinary I/O error (`Io`, `IoAt`: EIO, or
/// ENOSPC on a sparse member file): the member answered but could not do it.
pub(crate) fn is_io_error(error: &StoreError) -> bool {
    matches!(error, StoreError::Io { .. } | StoreError::IoAt { .. })
}

/// Whether a member *write, trim or flush* that returned `error` fails the member: it is gone,
/// or it returned an I/O error, after which what it holds under the request is unknown
/// while the rest of the stripe (or the other copies) moved on. Keeping it would leave
/// data and parity (or copies) disagreeing until the next assembly's resync, and a
/// second failure in that window would reconstruct data nobody wrote; failing it now
/// keeps every live member right (md fails a member on a write error for this reason).
fn write_fails_member(error: &StoreError) -> bool {
    is_member_failure(error) || is_io_error(error)
}

/// Checks a data-path request: whole sectors inside `capacity`.
pub(crate) fn check_request(
    capacity: Sectors,
    lbn: Lbn,
    len: usize,
) -> Result<Sectors, StoreError> {
    check_buffer(capacity, lbn, len)
}

/// The member stores and the array's health. A store is `None` only for a member
/// missing at assembly; a failed member keeps its store (so `into_parts` returns it)
/// but is never touched again.
pub(crate) struct MemberStores<S> {
    pub stores: Vec<Option<S>>,
    pub health: Health,
    /// Per member, the sectors rewritten (and read back right) after a read error:
    /// the whole extent the failed read asked for, rebuilt from the redundancy. Since
    /// the volume was assembled or the member's store replaced; md keeps the same
    /// count per device (its `errors`), and one that keeps rising marks a failing disk.
    corrected_read_sectors: Vec<u64>,
}

impl<S: BlockStore> MemberStores<S> {
    pub fn new(stores: Vec<Option<S>>) -> MemberStores<S> {
        let health = Health::new(stores.len() as u32);
        let corrected_read_sectors = vec![0; stores.len()];
        MemberStores {
            stores,
            health,
            corrected_read_sectors,
        }
    }

    /// Members whose store is absent (assembled without them).
    pub fn missing(&self) -> Vec<MemberIndex> {
        (0..self.count())
            .map(MemberIndex)
            .filter(|m| self.stores[m.index()].is_none())
            .collect()
    }

    pub fn count(&self) -> u32 {
        self.stores.len() as u32
    }

    /// Puts `store` in `member`'s place; returns the old one. The new store's count
    /// of corrected read errors starts at zero: it is another device.
    pub fn replace_store(&mut self, member: MemberIndex, store: S) -> Option<S> {
        self.corrected_read_sectors[member.index()] = 0;
        self.stores[member.index()].replace(store)
    }

    /// Per member, the sectors corrected after a read error (see the field).
    pub fn corrected_read_sectors(&self) -> &[u64] {
        &self.corrected_read_sectors
    }

    /// All members' corrected sectors together.
    pub fn corrected_read_sectors_total(&self) -> u64 {
        self.corrected_read_sectors.iter().sum()
    }

    fn store(
        &mut self,
        member: MemberIndex,
        operation: &'static str,
    ) -> Result<&mut S, StoreError> {
        self.stores
            .get_mut(member.index())
            .and_then(Option::as_mut)
            .ok_or(StoreError::Failed { operation })
    }

    pub fn read(
        &mut self,
        member: MemberIndex,
        lbn: Lbn,
        buf: &mut [u8],
    ) -> Result<(), StoreError> {
        self.store(member, "read of a missing member")?
            .read(lbn, buf)
    }

    pub fn write(&mut self, member: MemberIndex, lbn: Lbn, buf: &[u8]) -> Result<(), StoreError> {
        self.store(member, "write to a missing member")?
            .write(lbn, buf)
    }

    pub fn trim(
        &mut self,
        member: MemberIndex,
        lbn: Lbn,
        sectors: Sectors,
    ) -> Result<(), StoreError> {
        self.store(member, "trim of a missing member")?
            .trim(lbn, sectors)
    }

    pub fn flush(&mut self, member: MemberIndex) -> Result<(), StoreError> {
        self.store(member, "flush of a missing member")?.flush()
    }

    /// Records `member`'s failure; `Err` (the array has failed) when the level cannot
    /// survive it.
    pub fn fail(
        &mut self,
        member: MemberIndex,
        survives: impl Fn(&[MemberIndex]) -> bool,
        operation: &'static str,
    ) -> Result<(), StoreError> {
        if self.health.member_failed(member, survives) {
            Ok(())
        } else {
            Err(StoreError::Failed { operation })
        }
    }

    /// Applies the member-failure rule to what a write, trim or flush of `member`
    /// returned: `Ok(true)` when it was done; `Ok(false)` when it fails the member
    /// ([`write_fails_member`]), which is now marked failed and the level survives;
    /// `Err` for any other error, or when the level cannot survive the failure.
    pub fn settle_change(
        &mut self,
        member: MemberIndex,
        result: Result<(), StoreError>,
        survives: impl Fn(&[MemberIndex]) -> bool,
        operation: &'static str,
    ) -> Result<bool, StoreError> {
        match result {
            Ok(()) => Ok(true),
            Err(error) if write_fails_member(&error) => {
                self.fail(member, survives, operation).map(|()| false)
            }
            Err(error) => Err(error),
        }
    }

    /// Writes `data` over `member` at `lbn` after a read error there and reads it back
    /// into `scratch`: `Ok(false)` when the write or the read-back failed, or read back
    /// other bytes (the caller then fails the member, md's rule for a read error that
    /// cannot be rewritten); `Err` for an error that is not the member's.
    pub fn rewrite_verified(
        &mut self,
        member: MemberIndex,
        lbn: Lbn,
        data: &[u8],
        scratch: &mut Vec<u8>,
    ) -> Result<bool, StoreError> {
        match self.write(member, lbn, data) {
            Ok(()) => {}
            Err(error) if write_fails_member(&error) => return Ok(false),
            Err(error) => return Err(error),
        }
        if scratch.len() < data.len() {
            scratch.resize(data.len(), 0);
        }
        let read_back = &mut scratch[..data.len()];
        let verified = match self.read(member, lbn, read_back) {
            Ok(()) => read_back == data,
            Err(error) if write_fails_member(&error) => false,
            Err(error) => return Err(error),
        };
        if verified {
            self.corrected_read_sectors[member.index()] += (data.len() / SECTOR) as u64;
        }
        Ok(verified)
    }

    /// Fails with the array's error if it has failed.
    pub fn check_usable(&self, operation: &'static str) -> Result<(), StoreError> {
        if self.health.is_failed() {
            return Err(StoreError::Failed { operation });
        }
        Ok(())
    }

    pub fn check_member(&self, member: MemberIndex) -> Result<(), VolumeError> {
        if member.0 >= self.count() {
            return Err(VolumeError::NoSuchMember {
                member,
                members: self.count(),
            });
        }
        Ok(())
    }
}

/// Checks the member stores against a map: their number, and that each holds at least
/// what the map uses of it (`needed(member)`).
pub(crate) fn check_members<S: BlockStore>(
    level: &'static str,
    expected: u32,
    stores: &[Option<S>],
    needed: impl Fn(MemberIndex) -> Sectors,
) -> Result<(), VolumeError> {
    if stores.len() != expected as usize {
        return Err(VolumeError::MemberCount {
            level,
            expected,
            given: stores.len(),
        });
    }
    for (index, store) in stores.iter().enumerate() {
        let member = MemberIndex(index as u32);
        let Some(store) = store else { continue };
        let needed = needed(member);
        if store.capacity() < needed {
            return Err(VolumeError::MemberTooSmall {
                member,
                capacity: store.capacity(),
                needed,
            });
        }
    }
    Ok(())
}

/// The members' common capacity, or an error naming the first member that differs.
/// (Zero stores: zero, and the map constructor will refuse the member count.)
pub(crate) fn common_capacity<S: BlockStore>(stores: &[S]) -> Result<Sectors, VolumeError> {
    let Some(first) = stores.first().map(BlockStore::capacity) else {
        return Ok(Sectors(0));
    };
    for (index, store) in stores.iter().enumerate() {
        if store.capacity() != first {
            return Err(VolumeError::MemberSizesDiffer {
                member: MemberIndex(index as u32),
                capacity: store.capacity(),
                first,
            });
        }
    }
    Ok(first)
}

/// A write-intent record over volume LBN regions of `region_sectors`.
pub(crate) struct Intent<S: BlockStore> {
    pub record: WriteIntent<S>,
    capacity: Sectors,
}

/// The report of a write-intent recovery at assembly.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RecoveryReport {
    /// The record's generation after opening (1 at creation, +1 per open).
    pub generation: u64,
    /// Regions the record had marked dirty, ascending.
    pub dirty_regions: Vec<u64>,
    /// Resync units rewritten: stripes whose parity was recomputed and written
    /// (RAID-5) or chunks copied from the first live copy to every other live copy
    /// (mirrors). A unit whose write failed a member instead is not counted.
    pub units_resynced: u64,
    /// Stripes that could not be resynced because their data member was missing, only
    /// with `force` (their reconstructed data may be torn; see the RAID-5 docs).
    pub unverified_stripes: Vec<u64>,
}

/// A rebuild to resume at assembly: `member` was being rebuilt (onto the store given
/// for it) and every rebuild unit below `cursor` is known written and flushed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ResumeRebuild {
    pub member: MemberIndex,
    /// Rebuild units (RAID-5 stripes, mirror member rows) already rebuilt.
    pub cursor: u64,
}

/// What the region size of a record depends on.
pub(crate) fn region_count(capacity: Sectors, region_sectors: Sectors) -> u64 {
    capacity.0.div_ceil(region_sectors.0)
}

impl<S: BlockStore> Intent<S> {
    /// A new, clean record for a volume of `capacity` sectors.
    pub fn create(
        store: S,
        region_sectors: Sectors,
        capacity: Sectors,
    ) -> Result<Intent<S>, VolumeError> {
        let record = WriteIntent::create(
            store,
            region_sectors,
            region_count(capacity, region_sectors),
        )?;
        Ok(Intent { record, capacity })
    }

    /// Opens an existing record, checking that its region count covers a volume of
    /// `capacity` with its region size (any region size is valid: resync covers every
    /// unit a dirty region overlaps); returns it and its dirty regions.
    pub fn open(store: S, capacity: Sectors) -> Result<(Intent<S>, Vec<u64>), VolumeError> {
        let (record, dirty) = WriteIntent::open(store)?;
        let expected_count = region_count(capacity, record.region_sectors());
        if record.region_count() != expected_count {
            return Err(VolumeError::IntentMismatch {
                found_sectors: record.region_sectors(),
                found_count: record.region_count(),
                expected_count,
                capacity,
            });
        }
        Ok((Intent { record, capacity }, dirty))
    }

    /// Marks the regions of a write (durably) before any member write; returns them for
    /// [`Intent::end`].
    pub fn begin(&mut self, lbn: Lbn, sectors: Sectors) -> Result<Range<u64>, StoreError> {
        let regions = self.record.regions_touching(lbn, sectors);
        self.record
            .begin_range(regions.clone())
            .map_err(intent_to_store)?;
        Ok(regions)
    }

    /// The write begun on `regions` has returned: `succeeded` or not. A write that
    /// returned an error may have reached some members and not others (an error that
    /// does not fail a member, such as a power cut, is passed up with every member
    /// kept), so its regions stay marked until resynced (at the next assembly) instead
    /// of being cleaned by the next data flush.
    pub fn end(&mut self, regions: Range<u64>, succeeded: bool) {
        let ended = if succeeded {
            self.record.end_range(regions)
        } else {
            self.record.end_range_failed(regions)
        };
        // Only a region without a write in flight can refuse, which `begin` rules out.
        debug_assert!(ended.is_ok(), "end without begin: {ended:?}");
    }

    /// The volume sectors of `region`, clipped to the capacity.
    pub fn region_range(&self, region: u64) -> (Lbn, Sectors) {
        let region_sectors = self.record.region_sectors().0;
        let start = region.saturating_mul(region_sectors).min(self.capacity.0);
        let end = start.saturating_add(region_sectors).min(self.capacity.0);
        (Lbn(start), Sectors(end - start))
    }

    /// Brackets a flush of every data store (`flush_members`) so the record can clean
    /// the regions whose writes ended before it.
    pub fn flush_with(
        &mut self,
        flush_members: impl FnOnce() -> Result<(), StoreError>,
    ) -> Result<(), StoreError> {
        let ticket = self.record.start_data_flush();
        flush_members()?;
        self.record
            .finish_data_flush(ticket)
            .map_err(intent_to_store)?;
        Ok(())
    }

    /// Flushes the data (`flush_members`) and clears the bit of every idle region now,
    /// instead of waiting for the record's batch of ends.
    pub fn flush_and_clean(
        &mut self,
        flush_members: impl FnOnce() -> Result<(), StoreError>,
    ) -> Result<u64, VolumeError> {
        self.flush_with(flush_members)?;
        Ok(self.record.sync_clean()?)
    }

    pub fn into_store(self) -> S {
        self.record.into_inner()
    }
}
