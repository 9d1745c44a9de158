//! [`WriteIntent`]: a persistent record of which regions of a volume may have writes in
//! flight, so that a restart after a crash resyncs exactly those regions (RAID-5
//! parity, mirror copies), like the write-intent bitmap of Linux md.
//!
//! # Protocol
//!
//! The volume is cut into `region_count` regions of `region_sectors` sectors each (the
//! caller chooses: one or more stripes). For every data write:
//!
//! 1. [`WriteIntent::begin`] (or [`begin_range`](WriteIntent::begin_range)) for the
//!    regions it touches. If a region's bit is not yet set on the medium, the bit is
//!    set, its bitmap sector written and the record store flushed *before* `begin`
//!    returns. Only then may the data writes go out. If `begin` fails, the caller
//!    must not write.
//! 2. The data writes.
//! 3. [`WriteIntent::end`] once they have returned successfully, or
//!    [`end_range_failed`](WriteIntent::end_range_failed) when one returned an error:
//!    the members may then disagree, so the region stays marked, as if found dirty at
//!    open, until resynced.
//!
//! A bit may be cleared only once its region has no write in flight *and* the data
//! of its ended writes is durable. The record cannot see data flushes, so the caller
//! brackets each flush of the data stores:
//! `let ticket = intent.start_data_flush(); /* flush every data store */
//! intent.finish_data_flush(ticket)?;`. Regions whose writes all ended before
//! `start_data_flush` are then clean, and their bits are cleared in batches: by
//! [`WriteIntent::sync_clean`], or by `finish_data_flush` once
//! [`set_clean_after_ends`](WriteIntent::set_clean_after_ends) ends have accumulated.
//! Clearing late is safe (a region resyncs for nothing); clearing early is not, and
//! forgetting to report a flush only ever leaves bits set.
//!
//! After a crash, [`WriteIntent::open`] returns the dirty regions. Their bits stay set
//! until the caller has resynced each one, called [`WriteIntent::resynced`], flushed
//! the data stores as above and cleaned.
//!
//! # On-disk format (version 1)
//!
//! All integers little-endian. Sector 0 is the header:
//!
//! | offset | size | field |
//! |---:|---:|---|
//! | 0 | 8 | magic, ASCII `SPNINTNT` |
//! | 8 | 4 | format version, `u32` = 1 |
//! | 12 | 4 | reserved, zero |
//! | 16 | 8 | region size in volume sectors, `u64` ≥ 1 |
//! | 24 | 8 | region count, `u64`, 1 ..= 2^28 (region size × count must fit a `u64`) |
//! | 32 | 8 | generation, `u64`: 1 at creation, +1 at every open (lets a volume's own superblock tell this record from a stale copy) |
//! | 40 | 4 | CRC-32C (Castagnoli) of bytes 0..40 |
//! | 44 | 468 | reserved, zero (not checked) |
//!
//! Sectors `1 ..= ceil(region_count / 4096)` are the bitmap: region `r` is bit
//! `r % 8` (least significant first) of byte `r / 8` counted from the start of
//! sector 1. A set bit means writes to the region may have been in flight. Bits past
//! `region_count` are written as zero and ignored when read. The record store must
//! hold at least `1 + ceil(region_count / 4096)` sectors ([`record_sectors`]).
//!
//! The bitmap has no checksum: a sector write is assumed atomic (the usual disk
//! guarantee), so a bitmap sector is always either its old or its new contents. The
//! header is written only at creation and at open.

mod format;

pub use format::{crc32c, record_sectors, MAX_REGIONS};

use crate::store::{BlockStore, StoreError};
use format::{check_geometry, Header, REGIONS_PER_SECTOR};
use spinstack_sim::units::{Lbn, Sectors, SECTOR_BYTES};
use std::ops::Range;

const SECTOR: usize = SECTOR_BYTES as usize;

/// Ends accumulated before `finish_data_flush` writes cleared bits by itself.
pub const DEFAULT_CLEAN_AFTER_ENDS: u64 = 256;

/// Why a write-intent record could not be created, opened or updated.
#[derive(Debug, thiserror::Error)]
pub enum IntentError {
    #[error("write-intent record store: {0}")]
    Store(#[from] StoreError),
    #[error("not a write-intent record: magic is {found:02x?}, expected \"SPNINTNT\"")]
    BadMagic { found: [u8; 8] },
    #[error("write-intent record format version {found} is not supported (this build reads 1)")]
    UnsupportedVersion { found: u32 },
    #[error(
        "write-intent record header is damaged: stored checksum {stored:#010x}, \
         computed {computed:#010x}"
    )]
    BadChecksum { stored: u32, computed: u32 },
    #[error(
        "write-intent geometry of {region_count} regions of {region_sectors} is invalid: {why}"
    )]
    BadGeometry {
        region_sectors: Sectors,
        region_count: u64,
        why: &'static str,
    },
    #[error(
        "a write-intent record for {region_count} regions needs {needed} \
         but its store holds {capacity}"
    )]
    StoreTooSmall {
        region_count: u64,
        needed: Sectors,
        capacity: Sectors,
    },
    #[error("regions {start}..{end} are not a range inside the volume's {region_count} regions")]
    RegionsOutOfRange {
        start: u64,
        end: u64,
        region_count: u64,
    },
    #[error("end of region {region} without a write in flight there")]
    NotInFlight { region: u64 },
    #[error("region {region} already has the most writes in flight that can be counted")]
    TooManyInFlight { region: u64 },
}

/// Proof that a data flush started; hand it back to
/// [`WriteIntent::finish_data_flush`] once every data store has been flushed.
#[derive(Debug)]
#[must_use = "regions become clean only when the ticket is handed back after the flush"]
pub struct FlushTicket {
    epoch: u64,
}

/// A write-intent bitmap kept in a [`BlockStore`]; see the module doc.
#[derive(Debug)]
pub struct WriteIntent<S: BlockStore> {
    store: S,
    header: Header,
    /// The bitmap as it is on the medium (a set bit here is durably set there);
    /// byte `i` is byte `i % 512` of store sector `1 + i / 512`.
    bitmap: Vec<u8>,
    in_flight: Vec<u32>,
    /// Per region, the flush epoch in which its last write ended (or resync finished).
    ended_in_epoch: Vec<u64>,
    /// Regions found dirty at open and not yet resynced, as a bitmap like `bitmap`.
    resync_pending: Vec<u8>,
    /// Ends from now on are stamped with this epoch; a flush ticket closes it.
    epoch: u64,
    /// Ends stamped with an epoch below this are durable.
    durable_below_epoch: u64,
    clean_after_ends: u64,
    ends_since_clean: u64,
}

impl<S: BlockStore> WriteIntent<S> {
    /// Writes a new, all-clean record for `region_count` regions of `region_sectors`
    /// into `store` (its first [`record_sectors`] sectors), replacing whatever was there.
    pub fn create(
        mut store: S,
        region_sectors: Sectors,
        region_count: u64,
    ) -> Result<WriteIntent<S>, IntentError> {
        check_geometry(region_sectors, region_count, store.capacity())?;
        let header = Header {
            region_sectors,
            region_count,
            generation: 1,
        };
        let bitmap = vec![0u8; bitmap_bytes(region_count)];
        store.write(Lbn(1), &bitmap)?;
        store.write(Lbn(0), &header.encode())?;
        store.flush()?;
        let resync_pending = vec![0u8; bitmap.len()];
        Ok(WriteIntent::assemble(store, header, bitmap, resync_pending))
    }

    /// Opens the record in `store` after a restart: validates the header, bumps the
    /// generation, and returns the record with the regions left dirty (ascending).
    /// Those stay dirty until [`resynced`](WriteIntent::resynced) and cleaned.
    pub fn open(mut store: S) -> Result<(WriteIntent<S>, Vec<u64>), IntentError> {
        let mut sector = [0u8; SECTOR];
        store.read(Lbn(0), &mut sector)?;
        let mut header = Header::decode(&sector, store.capacity())?;
        let mut bitmap = vec![0u8; bitmap_bytes(header.region_count)];
        store.read(Lbn(1), &mut bitmap)?;
        clear_bits_past(&mut bitmap, header.region_count);
        header.generation = header.generation.wrapping_add(1);
        store.write(Lbn(0), &header.encode())?;
        store.flush()?;
        let dirty: Vec<u64> = set_bits(&bitmap).collect();
        let resync_pending = bitmap.clone();
        Ok((
            WriteIntent::assemble(store, header, bitmap, resync_pending),
            dirty,
        ))
    }

    fn assemble(
        store: S,
        header: Header,
        bitmap: Vec<u8>,
        resync_pending: Vec<u8>,
    ) -> WriteIntent<S> {
        let regions = header.region_count as usize;
        WriteIntent {
            store,
            header,
            bitmap,
            in_flight: vec![0; regions],
            ended_in_epoch: vec![0; regions],
            resync_pending,
            epoch: 1,
            durable_below_epoch: 1,
            clean_after_ends: DEFAULT_CLEAN_AFTER_ENDS,
            ends_since_clean: 0,
        }
    }

    pub fn region_sectors(&self) -> Sectors {
        self.header.region_sectors
    }

    pub fn region_count(&self) -> u64 {
        self.header.region_count
    }

    /// 1 at creation, +1 at every open.
    pub fn generation(&self) -> u64 {
        self.header.generation
    }

    /// The region holding volume sector `lbn` (may be past the last region).
    pub fn region_of(&self, lbn: Lbn) -> u64 {
        lbn.0 / self.header.region_sectors.0
    }

    /// The regions a write of `sectors` at `lbn` touches (empty for zero sectors).
    pub fn regions_touching(&self, lbn: Lbn, sectors: Sectors) -> Range<u64> {
        if sectors.0 == 0 {
            return 0..0;
        }
        let last = lbn.0.saturating_add(sectors.0 - 1);
        self.region_of(lbn)..last / self.header.region_sectors.0 + 1
    }

    /// Whether the region's bit is known to be set on the medium. (A bit whose clearing
    /// failed to reach the medium reads as clear here, but may still be set there.)
    pub fn is_marked(&self, region: u64) -> bool {
        region < self.header.region_count && bit(&self.bitmap, region)
    }

    /// Writes in flight in the region (0 for regions outside the volume).
    pub fn in_flight(&self, region: u64) -> u32 {
        self.in_flight.get(region as usize).copied().unwrap_or(0)
    }

    /// Regions whose bits are set on the medium, ascending.
    pub fn marked_regions(&self) -> Vec<u64> {
        set_bits(&self.bitmap).collect()
    }

    /// How many ends accumulate before `finish_data_flush` writes cleared bits by
    /// itself (at least 1).
    pub fn set_clean_after_ends(&mut self, ends: u64) {
        self.clean_after_ends = ends.max(1);
    }

    /// The record store, for inspection.
    pub fn store(&self) -> &S {
        &self.store
    }

    /// Gives the record store back, writing nothing: bits not yet cleaned stay set.
    pub fn into_inner(self) -> S {
        self.store
    }

    /// Marks `region` as having a write in flight; see the module doc.
    pub fn begin(&mut self, region: u64) -> Result<(), IntentError> {
        self.begin_range(region..region.saturating_add(1))
    }

    /// [`begin`](WriteIntent::begin) for every region of `regions`, with at most one
    /// flush. All or nothing: on error no counter changed.
    pub fn begin_range(&mut self, regions: Range<u64>) -> Result<(), IntentError> {
        self.check_regions(&regions)?;
        if let Some(region) = regions
            .clone()
            .find(|&r| self.in_flight[r as usize] == u32::MAX)
        {
            return Err(IntentError::TooManyInFlight { region });
        }
        let newly_set: Vec<u64> = regions.clone().filter(|&r| !bit(&self.bitmap, r)).collect();
        if !newly_set.is_empty() {
            for &region in &newly_set {
                set_bit(&mut self.bitmap, region);
            }
            let written = self
                .write_bitmap_sectors(&newly_set)
                .and_then(|()| self.store.flush());
            if let Err(error) = written {
                // Not known to be durable: forget it, so the next begin writes it again.
                for &region in &newly_set {
                    clear_bit(&mut self.bitmap, region);
                }
                return Err(error.into());
            }
        }
        for region in regions {
            self.in_flight[region as usize] += 1;
        }
        Ok(())
    }

    /// Records that a write begun on `region` has returned.
    pub fn end(&mut self, region: u64) -> Result<(), IntentError> {
        self.end_range(region..region.saturating_add(1))
    }

    /// [`end`](WriteIntent::end) for every region of `regions`. All or nothing.
    pub fn end_range(&mut self, regions: Range<u64>) -> Result<(), IntentError> {
        self.check_regions(&regions)?;
        if let Some(region) = regions.clone().find(|&r| self.in_flight[r as usize] == 0) {
            return Err(IntentError::NotInFlight { region });
        }
        for region in regions {
            self.in_flight[region as usize] -= 1;
            self.ended_in_epoch[region as usize] = self.epoch;
            self.ends_since_clean += 1;
        }
        Ok(())
    }

    /// Records that a write begun on `regions` has returned an error: it may have
    /// reached some members and not others, so their copies or parity may disagree.
    /// The regions stay marked, as if found dirty at open, until [`resynced`]
    /// (WriteIntent::resynced): no data flush cleans them, and the next open resyncs
    /// them. All or nothing, as `end_range`.
    ///
    /// [`resynced`]: WriteIntent::resynced
    pub fn end_range_failed(&mut self, regions: Range<u64>) -> Result<(), IntentError> {
        self.end_range(regions.clone())?;
        for region in regions {
            set_bit(&mut self.resync_pending, region);
        }
        Ok(())
    }

    /// Records that a region found dirty at open has been resynced (its copies or
    /// parity rewritten). Like an end, it is clean once a data flush has followed.
    pub fn resynced(&mut self, region: u64) -> Result<(), IntentError> {
        self.check_regions(&(region..region.saturating_add(1)))?;
        clear_bit(&mut self.resync_pending, region);
        self.ended_in_epoch[region as usize] = self.epoch;
        self.ends_since_clean += 1;
        Ok(())
    }

    /// Call just before flushing the data stores.
    pub fn start_data_flush(&mut self) -> FlushTicket {
        let ticket = FlushTicket { epoch: self.epoch };
        self.epoch += 1;
        ticket
    }

    /// Call once every data store has been flushed after `ticket` was taken: regions
    /// whose writes ended before that are clean. Writes cleared bits (returning how
    /// many) when enough ends have accumulated; otherwise 0.
    pub fn finish_data_flush(&mut self, ticket: FlushTicket) -> Result<u64, IntentError> {
        self.durable_below_epoch = self.durable_below_epoch.max(ticket.epoch + 1);
        if self.ends_since_clean >= self.clean_after_ends {
            return self.sync_clean();
        }
        Ok(0)
    }

    /// Clears the bits of every clean region (no write in flight, no resync pending,
    /// data durable), writes the changed bitmap sectors and flushes. Returns how many
    /// bits it cleared.
    pub fn sync_clean(&mut self) -> Result<u64, IntentError> {
        let clean: Vec<u64> = set_bits(&self.bitmap)
            .filter(|&region| self.is_clean(region))
            .collect();
        // Regions ended but not yet flushed carry over, so the batch that follows the
        // next data flush still counts them.
        self.ends_since_clean = set_bits(&self.bitmap)
            .filter(|&region| self.awaits_data_flush(region))
            .count() as u64;
        if clean.is_empty() {
            return Ok(0);
        }
        for &region in &clean {
            clear_bit(&mut self.bitmap, region);
        }
        // If this fails the bits may stay set on the medium: safe, a region resyncs.
        self.write_bitmap_sectors(&clean)?;
        self.store.flush()?;
        Ok(clean.len() as u64)
    }

    fn is_clean(&self, region: u64) -> bool {
        let index = region as usize;
        self.in_flight[index] == 0
            && !bit(&self.resync_pending, region)
            && self.ended_in_epoch[index] < self.durable_below_epoch
    }

    /// Idle, not awaiting resync, but its last writes not yet known durable.
    fn awaits_data_flush(&self, region: u64) -> bool {
        let index = region as usize;
        self.in_flight[index] == 0
            && !bit(&self.resync_pending, region)
            && self.ended_in_epoch[index] >= self.durable_below_epoch
    }

    fn check_regions(&self, regions: &Range<u64>) -> Result<(), IntentError> {
        let region_count = self.header.region_count;
        if regions.start > regions.end || regions.end > region_count {
            return Err(IntentError::RegionsOutOfRange {
                start: regions.start,
                end: regions.end,
                region_count,
            });
        }
        Ok(())
    }

    /// Writes the bitmap sectors holding `regions` (ascending), one call per run of
    /// consecutive sectors.
    fn write_bitmap_sectors(&mut self, regions: &[u64]) -> Result<(), StoreError> {
        let mut sectors: Vec<u64> = regions.iter().map(|r| r / REGIONS_PER_SECTOR).collect();
        sectors.dedup();
        let mut run_start = 0;
        for index in 1..=sectors.len() {
            let run_ends = index == sectors.len() || sectors[index] != sectors[index - 1] + 1;
            if run_ends {
                let first = sectors[run_start] as usize;
                let last = sectors[index - 1] as usize;
                let bytes = &self.bitmap[first * SECTOR..(last + 1) * SECTOR];
                self.store.write(Lbn(1 + first as u64), bytes)?;
                run_start = index;
            }
        }
        Ok(())
    }
}

/// Bytes of bitmap for `region_count` regions, whole sectors.
fn bitmap_bytes(region_count: u64) -> usize {
    (region_count.div_ceil(REGIONS_PER_SECTOR) * SECTOR_BYTES) as usize
}

fn bit(bitmap: &[u8], region: u64) -> bool {
    bitmap[(region / 8) as usize] & (1 << (region % 8)) != 0
}

fn set_bit(bitmap: &mut [u8], region: u64) {
    bitmap[(region / 8) as usize] |= 1 << (region % 8);
}

fn clear_bit(bitmap: &mut [u8], region: u64) {
    bitmap[(region / 8) as usize] &= !(1 << (region % 8));
}

/// Zeroes the bits of regions `region_count..`, which exist only as padding.
fn clear_bits_past(bitmap: &mut [u8], region_count: u64) {
    let total_bits = bitmap.len() as u64 * 8;
    for region in region_count..total_bits {
        clear_bit(bitmap, region);
    }
}

/// Indices of the set bits, ascending; skips zero words so a mostly clean bitmap is
/// scanned quickly.
fn set_bits(bitmap: &[u8]) -> impl Iterator<Item = u64> + '_ {
    bitmap
        .chunks(8)
        .enumerate()
        .filter(|(_, chunk)| chunk.iter().any(|&byte| byte != 0))
        .flat_map(|(word_index, chunk)| {
            chunk
                .iter()
                .enumerate()
                .flat_map(move |(byte_index, &byte)| {
                    (0..8u64)
                        .filter(move |bit| byte & (1 << bit) != 0)
                        .map(move |bit| (word_index * 64 + byte_index * 8) as u64 + bit)
                })
        })
}
