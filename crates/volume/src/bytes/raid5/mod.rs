//! [`Raid5Volume`]: RAID-5 over real stores for any [`ParityLayout`] (md's
//! left-symmetric [`Raid5Map`], the track-aligned layout and its rejected
//! alternatives), executing the `map::plan` read and write plans over bytes.
//!
//! - **Read** ([`read`]): one read plan per part of the request with one failed member
//!   (a request crossing the rebuild cursor is two parts). Data is copied; a lost unit
//!   is rebuilt by XOR of the other units' same offsets (parity included).
//! - **Read errors** ([`correct`]): a member read that returns an I/O error, on the
//!   read path, in a write plan's reads or in a scrub, is rebuilt from the rest of the
//!   stripe, written back and read back (md's correction of read errors); the member
//!   is failed only if that fails. With a member out at that stripe the error is
//!   passed up, nothing changed. Rebuild and resync do not correct: the member being
//!   rebuilt is out there, and a dirty stripe's parity may be stale, so their read
//!   errors are returned.
//! - **Write** ([`write`]): stripe by stripe, one write plan each. Every old sector the
//!   plan reads is read *before* any member is written, and the new parity is computed
//!   from those reads and the new data (read-modify-write or reconstruct-write, as the
//!   plan says) before the writes start. So a member that fails during the writes
//!   (gone, or an I/O error: see the parent module) is marked failed and skipped: the
//!   parity already accounts for every unit's new contents, including the failed
//!   one's, which degraded reads then rebuild from it. A member failing during the
//!   reads is marked failed and the stripe replanned degraded (nothing was written
//!   yet).
//! - **Trim**: a stripe wholly inside the range has every live member's unit trimmed
//!   (all zeros, and the parity of zeros is zeros); a partial stripe is written with
//!   zeros through the write path, so its parity stays consistent. A trim that returns
//!   an I/O error fails its member, as a write does.
//! - **Flush**: every live member (bracketed for the write-intent record, if any).
//!
//! Maintenance (rebuild, scrub, assembly with write-intent resync) is in [`maintenance`].

mod correct;
mod maintenance;
mod read;
mod write;

use super::common::{check_members, common_capacity, Intent, MemberStores};
use super::error::VolumeError;
use super::health::{ArrayState, VolumeStatus};
use crate::map::plan::{ReadPlan, WritePlan};
use crate::map::{MemberIndex, ParityLayout, Raid5Map, Unit};
use correct::CorrectionBuffers;
use spinstack_sim::units::{Lbn, Sectors};
use spinstack_store::{BlockStore, StoreError};

const LEVEL: &str = "RAID-5";
const FAILED: &str = "request to a RAID-5 that has lost two members";

/// The RAID-5 survival rule: at most one member out (a member being rebuilt counts).
fn survives(failed: &[MemberIndex]) -> bool {
    failed.len() <= 1
}

/// A RAID-5 volume over member stores of type `S` laid out by `L` (see module docs).
pub struct Raid5Volume<S: BlockStore, L: ParityLayout> {
    layout: L,
    members: MemberStores<S>,
    intent: Option<Intent<S>>,
    read_plan: ReadPlan,
    write_plan: WritePlan,
    scratch: Scratch,
    correction: CorrectionBuffers,
}

/// Reused buffers: after warm-up the data path allocates nothing.
#[derive(Default)]
struct Scratch {
    /// Member reads that are not copied straight into the caller's buffer.
    read: Vec<u8>,
    /// Old contents a write plan reads, concatenated; `old_at[i]` is read `i`'s offset.
    old: Vec<u8>,
    old_at: Vec<usize>,
    /// New parity of the stripe being written, from the first parity run's start.
    parity: Vec<u8>,
    /// The stripe's units by member, and each data unit's first stripe data offset.
    units: Vec<Unit>,
    data_base: Vec<Option<u64>>,
    /// Zeros for partial-stripe trims (never written).
    zeros: Vec<u8>,
    /// Three units' worth, for rebuild, scrub and resync.
    unit_a: Vec<u8>,
    unit_b: Vec<u8>,
    unit_c: Vec<u8>,
}

/// Grows `buf` to at least `len` bytes and returns its first `len`.
fn sized(buf: &mut Vec<u8>, len: usize) -> &mut [u8] {
    if buf.len() < len {
        buf.resize(len, 0);
    }
    &mut buf[..len]
}

impl<S: BlockStore> Raid5Volume<S, Raid5Map> {
    /// md's left-symmetric RAID-5 of `chunk`-sector chunks over `stores` (all the same
    /// size).
    pub fn new(chunk: Sectors, stores: Vec<S>) -> Result<Self, VolumeError> {
        let capacity = common_capacity(&stores)?;
        let layout = Raid5Map::new(stores.len() as u32, chunk, capacity)?;
        Self::with_layout(layout, stores)
    }
}

impl<S: BlockStore, L: ParityLayout> Raid5Volume<S, L> {
    /// A volume by a given layout; each store must hold every unit the layout puts on
    /// it. The members must be consistent (parity = XOR of data): fresh or trimmed
    /// stores are; otherwise run `scrub(true)` before relying on redundancy.
    pub fn with_layout(layout: L, stores: Vec<S>) -> Result<Self, VolumeError> {
        Self::from_slots(layout, stores.into_iter().map(Some).collect())
    }

    /// A volume whose missing members (`None`) start out failed.
    fn from_slots(layout: L, stores: Vec<Option<S>>) -> Result<Self, VolumeError> {
        check_members(LEVEL, layout.members(), &stores, |m| {
            member_extent(&layout, m)
        })?;
        let mut volume = Raid5Volume {
            layout,
            members: MemberStores::new(stores),
            intent: None,
            read_plan: ReadPlan::default(),
            write_plan: WritePlan::default(),
            scratch: Scratch::default(),
            correction: CorrectionBuffers::default(),
        };
        for member in volume.members.missing() {
            volume.fail_member(member)?;
        }
        if volume.members.health.is_failed() {
            return Err(VolumeError::ArrayFailed {
                failed: volume.members.health.failed().to_vec(),
            });
        }
        Ok(volume)
    }

    /// Adds a new, clean write-intent record in `store` with regions of
    /// `stripes_per_region` stripes (of stripe 0's size: exact for md's layout; for a
    /// track-aligned one a region is about that many stripes, and resync covers every
    /// stripe a dirty region overlaps).
    pub fn with_intent(mut self, store: S, stripes_per_region: u64) -> Result<Self, VolumeError> {
        let region = self.region_sectors(stripes_per_region)?;
        self.intent = Some(Intent::create(store, region, self.layout.capacity())?);
        Ok(self)
    }

    fn region_sectors(&self, stripes_per_region: u64) -> Result<Sectors, VolumeError> {
        let stripe = self.layout.stripe_data_sectors(0).0;
        match stripes_per_region.checked_mul(stripe) {
            Some(0) => Err(VolumeError::ZeroRegion { unit: "stripe" }),
            Some(sectors) => Ok(Sectors(sectors)),
            None => Err(VolumeError::Map(crate::map::MapError::TooLarge {
                what: "the write-intent region",
            })),
        }
    }

    pub fn layout(&self) -> &L {
        &self.layout
    }

    pub fn status(&self) -> VolumeStatus {
        let health = &self.members.health;
        VolumeStatus {
            level: LEVEL,
            state: health.state().clone(),
            failed: health.failed().to_vec(),
            rebuild_progress: health.rebuild_progress(),
            corrected_read_sectors: self.members.corrected_read_sectors().to_vec(),
        }
    }

    /// Marks `member` failed, as if it had returned `StoreError::Failed`. A second
    /// failure fails the array.
    pub fn fail_member(&mut self, member: MemberIndex) -> Result<(), VolumeError> {
        self.members.check_member(member)?;
        let _ = self.members.fail(member, survives, FAILED);
        Ok(())
    }

    /// Puts `store` in place of failed `member` and starts rebuilding it stripe by
    /// stripe ([`Raid5Volume::rebuild_step`]); returns the old store.
    pub fn replace_member(
        &mut self,
        member: MemberIndex,
        store: S,
    ) -> Result<Option<S>, VolumeError> {
        self.members.check_member(member)?;
        let needed = member_extent(&self.layout, member);
        if store.capacity() < needed {
            return Err(VolumeError::MemberTooSmall {
                member,
                capacity: store.capacity(),
                needed,
            });
        }
        self.members
            .health
            .start_rebuild(member, self.layout.stripes())
            .map_err(|state| VolumeError::WrongState {
                operation: "replace a member that has not failed",
                state,
            })?;
        Ok(self.members.replace_store(member, store))
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

    /// The member a request to `stripe` must treat as failed, or the array's error.
    fn failed_at(&self, stripe: u64) -> Result<Option<MemberIndex>, StoreError> {
        match self.members.health.state() {
            ArrayState::Healthy => Ok(None),
            ArrayState::Degraded { failed } => Ok(failed.first().copied()),
            ArrayState::Rebuilding { member, cursor, .. } => {
                Ok((stripe >= *cursor).then_some(*member))
            }
            ArrayState::Failed { .. } => Err(StoreError::Failed { operation: FAILED }),
        }
    }

    /// Records a member failure seen on the data path; the array's error if fatal.
    fn member_failed(&mut self, member: MemberIndex) -> Result<(), StoreError> {
        self.members.fail(member, survives, FAILED)
    }

    /// What a write, trim or flush of `member` returned, under the member-failure rule
    /// (`MemberStores::settle_change`): `Ok(false)` when it failed the member.
    fn settle(
        &mut self,
        member: MemberIndex,
        result: Result<(), StoreError>,
    ) -> Result<bool, StoreError> {
        self.members.settle_change(member, result, survives, FAILED)
    }

    /// Loads `stripe`'s units and data offsets into the scratch.
    fn load_stripe(&mut self, stripe: u64) {
        let scratch = &mut self.scratch;
        scratch.units.clear();
        scratch.data_base.clear();
        let members = self.layout.members();
        scratch
            .units
            .extend((0..members).map(|m| self.layout.unit(stripe, MemberIndex(m))));
        scratch.data_base.resize(members as usize, None);
        let mut base = 0;
        for data_index in 0..members - 1 {
            let member = self.layout.data_member(stripe, data_index);
            scratch.data_base[member.index()] = Some(base);
            base += scratch.units[member.index()].used.0;
        }
    }
}

/// Sectors of `member` the layout uses: through the end of its last stripe's unit.
fn member_extent<L: ParityLayout>(layout: &L, member: MemberIndex) -> Sectors {
    match layout.stripes().checked_sub(1) {
        Some(last) => {
            let unit = layout.unit(last, member);
            Sectors(unit.start.0 + unit.allocated.0)
        }
        None => Sectors(0),
    }
}

impl<S: BlockStore, L: ParityLayout> BlockStore for Raid5Volume<S, L> {
    fn capacity(&self) -> Sectors {
        self.layout.capacity()
    }

    fn read(&mut self, lbn: Lbn, buf: &mut [u8]) -> Result<(), StoreError> {
        self.read_volume(lbn, buf)
    }

    fn write(&mut self, lbn: Lbn, buf: &[u8]) -> Result<(), StoreError> {
        self.write_volume(lbn, buf)
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
        self.trim_volume(lbn, sectors)
    }
}
