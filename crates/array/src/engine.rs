//! The data path of an array: the level's byte volume over [`MemberStore`]s, with
//! the DMA-aligned buffer on top when configured; one enum, dispatching.
//!
//! **Track-aligned layouts and `member_size`.** A member file is not a drive: it holds
//! `member_size` sectors, usually far fewer than the named drive. The layout takes the
//! drive's true track sizes (its catalog layout's track map) in LBN order and keeps the
//! whole tracks that fit in `member_size`; the partial track at the end is dropped (a
//! unit must be exactly one track), so the layout leaves up to one track per member
//! unused. The stripe count is then the fewest tracks any member keeps, as for drives
//! of different sizes. Stripe `s` is still track `s` of each member: had the member
//! been the drive's first `member_size` sectors, every unit would be a whole track.

use crate::member::MemberStore;
use crate::ArraySpec;
use spinstack_sim::units::{Lbn, Sectors};
use spinstack_store::{BlockStore, StoreError};
use spinstack_volume::bytes::{
    ArrayState, CopyLayout, DabConfig, DmaAlignedBuffer, Raid0Volume, Raid10Volume, Raid1Volume,
    Raid5Volume, RecoveryReport, ResumeRebuild, ScrubReport, VolumeError, VolumeStatus,
    MIRROR_UNIT_SECTORS,
};
use spinstack_volume::config::{Level, TrackUnits};
use spinstack_volume::map::{
    MemberIndex, MirrorMap, ParityLayout, Raid0Map, Raid10Map, Raid5Map, TrackAlignedLayout,
    UnitPolicy,
};
use std::ops::Range;

/// The drive used for the timing model (and track maps) when no disk is named.
pub const DEFAULT_DISK: &str = "atlas10k";
/// About this many volume sectors per write-intent region (1 MiB).
const REGION_TARGET_SECTORS: u64 = 2048;

/// The address map of a level, built from a spec (and the drives' track maps).
pub(crate) enum Layout {
    Single,
    Raid0(Raid0Map),
    Raid1(MirrorMap),
    Raid10(Raid10Map),
    Raid5(Raid5Map),
    TrackAligned(TrackAlignedLayout),
}

/// The disk name of each member (the default drive when none is named).
pub fn member_disks(spec: &ArraySpec) -> Vec<String> {
    (0..spec.members as usize)
        .map(|m| match spec.disks.len() {
            0 => DEFAULT_DISK.to_string(),
            1 => spec.disks[0].clone(),
            _ => spec.disks.get(m).cloned().unwrap_or_default(),
        })
        .collect()
}

/// A drive's track sizes, the whole tracks that fit in `member_size` (module docs).
pub(crate) fn truncated_tracks(name: &str, member_size: Sectors) -> Result<Vec<Sectors>, String> {
    let spec = spinstack_disk::catalog::resolve(name).map_err(|e| e.to_string())?;
    let layout = spinstack_disk::layout::Layout::new(&spec.layout).map_err(|e| e.to_string())?;
    let map = layout.track_map(&spec.name);
    let mut tracks = Vec::new();
    let mut total = 0u64;
    for track in map.track_sizes() {
        if total + track.0 > member_size.0 {
            break;
        }
        total += track.0;
        tracks.push(track);
    }
    if tracks.is_empty() {
        return Err(format!(
            "member size {} sectors holds no whole track of this drive",
            member_size.0
        ));
    }
    Ok(tracks)
}

/// Why a layout could not be built: a drive (by name) or the map.
pub(crate) enum LayoutError {
    Disk { name: String, problem: String },
    Map(String),
}

impl Layout {
    /// Whether the level still serves every sector with `lost` members out (a member
    /// being rebuilt counts as out).
    pub fn survives(&self, lost: &[u32]) -> bool {
        let lost: Vec<MemberIndex> = lost.iter().map(|&m| MemberIndex(m)).collect();
        match self {
            Layout::Single | Layout::Raid0(_) => lost.is_empty(),
            Layout::Raid1(map) => map.survives(&lost),
            Layout::Raid10(map) => map.survives(&lost),
            Layout::Raid5(_) | Layout::TrackAligned(_) => lost.len() <= 1,
        }
    }

    /// The volume's capacity (what the assembled volume will report).
    pub fn capacity(&self, spec: &ArraySpec) -> Sectors {
        match self {
            Layout::Single => spec.member_size,
            Layout::Raid0(map) => map.capacity(),
            Layout::Raid1(map) => map.capacity(),
            Layout::Raid10(map) => map.capacity(),
            Layout::Raid5(map) => map.capacity(),
            Layout::TrackAligned(map) => map.capacity(),
        }
    }

    /// Rebuild units of one member (the unit a rebuild cursor counts): stripes for the
    /// RAID-5 levels, member rows for mirrors, none where nothing can be rebuilt.
    pub fn rebuild_units(&self) -> u64 {
        match self {
            Layout::Single | Layout::Raid0(_) => 0,
            Layout::Raid1(map) => map.member_used().0.div_ceil(map.unit_sectors().0),
            Layout::Raid10(map) => map.member_used().0.div_ceil(map.unit_sectors().0),
            Layout::Raid5(map) => map.stripes(),
            Layout::TrackAligned(map) => map.stripes(),
        }
    }

    pub fn build(spec: &ArraySpec) -> Result<Layout, LayoutError> {
        let map = |e: spinstack_volume::map::MapError| LayoutError::Map(e.to_string());
        let chunk = spec.chunk.unwrap_or(Sectors(0));
        let (members, size) = (spec.members, spec.member_size);
        Ok(match spec.level {
            Level::Single => Layout::Single,
            Level::Raid0 => Layout::Raid0(Raid0Map::new(members, chunk, size).map_err(map)?),
            Level::Raid1 => Layout::Raid1(MirrorMap::new(members, size).map_err(map)?),
            Level::Raid10 => {
                Layout::Raid10(Raid10Map::with_copies(members, 2, chunk, size).map_err(map)?)
            }
            Level::Raid5 => Layout::Raid5(Raid5Map::new(members, chunk, size).map_err(map)?),
            Level::Raid5TrackAligned => {
                let mut sizes = Vec::new();
                for name in member_disks(spec) {
                    let tracks = truncated_tracks(&name, size)
                        .map_err(|problem| LayoutError::Disk { name, problem })?;
                    sizes.push(tracks);
                }
                match spec.track_units.unwrap_or(TrackUnits::WholeTrack) {
                    TrackUnits::LargestTrack => {
                        Layout::Raid5(Raid5Map::with_largest_track_chunk(&sizes).map_err(map)?)
                    }
                    TrackUnits::SmallestTrack => Layout::TrackAligned(
                        TrackAlignedLayout::new(sizes, UnitPolicy::SmallestTrack).map_err(map)?,
                    ),
                    TrackUnits::WholeTrack => Layout::TrackAligned(
                        TrackAlignedLayout::new(sizes, UnitPolicy::WholeTrack).map_err(map)?,
                    ),
                }
            }
        })
    }
}

/// One level's byte volume.
pub(crate) enum LevelVolume {
    Single(MemberStore),
    Raid0(Raid0Volume<MemberStore>),
    Raid1(Raid1Volume<MemberStore>),
    Raid10(Raid10Volume<MemberStore>),
    Raid5(Raid5Volume<MemberStore, Raid5Map>),
    TrackAligned(Raid5Volume<MemberStore, TrackAlignedLayout>),
}

/// Calls the same expression on whichever volume (not `Single`) it is.
macro_rules! redundant {
    ($self:expr, $v:ident => $call:expr, single => $single:expr) => {
        match $self {
            LevelVolume::Single(_) => $single,
            LevelVolume::Raid0($v) => $call,
            LevelVolume::Raid1($v) => $call,
            LevelVolume::Raid10($v) => $call,
            LevelVolume::Raid5($v) => $call,
            LevelVolume::TrackAligned($v) => $call,
        }
    };
}

fn per_region(target: u64, unit: Sectors) -> u64 {
    (target / unit.0.max(1)).max(1)
}

fn raid5_region<L: ParityLayout>(layout: &L) -> u64 {
    per_region(REGION_TARGET_SECTORS, layout.stripe_data_sectors(0))
}

impl LevelVolume {
    /// A new volume over fresh (all-zero, hence consistent) members, with a new
    /// write-intent record in `intent` for the redundant levels.
    pub fn create(
        layout: Layout,
        mut stores: Vec<MemberStore>,
        intent: MemberStore,
    ) -> Result<LevelVolume, VolumeError> {
        Ok(match layout {
            Layout::Single => LevelVolume::Single(stores.remove(0)),
            Layout::Raid0(map) => LevelVolume::Raid0(Raid0Volume::with_map(map, stores)?),
            Layout::Raid1(map) => {
                LevelVolume::Raid1(Raid1Volume::with_map(map, stores)?.with_intent(
                    intent,
                    per_region(REGION_TARGET_SECTORS, MIRROR_UNIT_SECTORS),
                )?)
            }
            Layout::Raid10(map) => {
                let units = per_region(REGION_TARGET_SECTORS, map.chunk());
                LevelVolume::Raid10(
                    Raid10Volume::with_map(map, stores)?.with_intent(intent, units)?,
                )
            }
            Layout::Raid5(map) => {
                let stripes = raid5_region(&map);
                LevelVolume::Raid5(
                    Raid5Volume::with_layout(map, stores)?.with_intent(intent, stripes)?,
                )
            }
            Layout::TrackAligned(map) => {
                let stripes = raid5_region(&map);
                LevelVolume::TrackAligned(
                    Raid5Volume::with_layout(map, stores)?.with_intent(intent, stripes)?,
                )
            }
        })
    }

    /// Assembles after a restart (see `Raid5Volume::assemble_resuming`): missing or
    /// failed members are `None`; the record's dirty regions are resynced. Dirty and
    /// degraded RAID-5 is forced; its unverified stripes are in the report.
    pub fn assemble(
        layout: Layout,
        mut slots: Vec<Option<MemberStore>>,
        intent: Option<MemberStore>,
        resume: Option<ResumeRebuild>,
    ) -> Result<(LevelVolume, RecoveryReport), VolumeError> {
        let no_intent = || {
            VolumeError::Store(StoreError::Failed {
                operation: "open the write-intent record",
            })
        };
        let none = RecoveryReport::default();
        Ok(match layout {
            Layout::Single => match slots.remove(0) {
                Some(store) => (LevelVolume::Single(store), none),
                None => {
                    return Err(VolumeError::ArrayFailed {
                        failed: vec![MemberIndex(0)],
                    })
                }
            },
            Layout::Raid0(map) => {
                let stores: Option<Vec<_>> = slots.into_iter().collect();
                let stores =
                    stores.ok_or_else(|| VolumeError::ArrayFailed { failed: Vec::new() })?;
                (
                    LevelVolume::Raid0(Raid0Volume::with_map(map, stores)?),
                    none,
                )
            }
            Layout::Raid1(map) => {
                let (v, r) = Raid1Volume::assemble_resuming(
                    map,
                    slots,
                    intent.ok_or_else(no_intent)?,
                    resume,
                )?;
                (LevelVolume::Raid1(v), r)
            }
            Layout::Raid10(map) => {
                let (v, r) = Raid10Volume::assemble_resuming(
                    map,
                    slots,
                    intent.ok_or_else(no_intent)?,
                    resume,
                )?;
                (LevelVolume::Raid10(v), r)
            }
            Layout::Raid5(map) => {
                let (v, r) = Raid5Volume::assemble_resuming(
                    map,
                    slots,
                    intent.ok_or_else(no_intent)?,
                    true,
                    resume,
                )?;
                (LevelVolume::Raid5(v), r)
            }
            Layout::TrackAligned(map) => {
                let (v, r) = Raid5Volume::assemble_resuming(
                    map,
                    slots,
                    intent.ok_or_else(no_intent)?,
                    true,
                    resume,
                )?;
                (LevelVolume::TrackAligned(v), r)
            }
        })
    }

    pub fn status(&self) -> VolumeStatus {
        redundant!(self, v => v.status(), single => VolumeStatus {
            level: "single",
            state: ArrayState::Healthy,
            failed: Vec::new(),
            rebuild_progress: None,
            corrected_read_sectors: vec![0],
        })
    }

    pub fn fail_member(&mut self, member: u32) -> Result<(), VolumeError> {
        let member = MemberIndex(member);
        redundant!(self, v => v.fail_member(member), single => Err(VolumeError::WrongState {
            operation: "fail the only member of a single-drive volume",
            state: "healthy".into(),
        }))
    }

    pub fn replace_member(&mut self, member: u32, store: MemberStore) -> Result<(), VolumeError> {
        let member = MemberIndex(member);
        let refused = |level: &str| VolumeError::WrongState {
            operation: "rebuild a member of a level without redundancy",
            state: level.to_string(),
        };
        match self {
            LevelVolume::Single(_) => Err(refused("single")),
            LevelVolume::Raid0(_) => Err(refused("raid0")),
            LevelVolume::Raid1(v) => v.replace_member(member, store).map(drop),
            LevelVolume::Raid10(v) => v.replace_member(member, store).map(drop),
            LevelVolume::Raid5(v) => v.replace_member(member, store).map(drop),
            LevelVolume::TrackAligned(v) => v.replace_member(member, store).map(drop),
        }
    }

    pub fn rebuild_step(&mut self, max_units: u64) -> Result<u64, VolumeError> {
        match self {
            LevelVolume::Single(_) | LevelVolume::Raid0(_) => Ok(0),
            LevelVolume::Raid1(v) => v.rebuild_step(max_units),
            LevelVolume::Raid10(v) => v.rebuild_step(max_units),
            LevelVolume::Raid5(v) => v.rebuild_step(max_units),
            LevelVolume::TrackAligned(v) => v.rebuild_step(max_units),
        }
    }

    /// The volume ranges whose degraded reads read what rebuilding `member`'s `units`
    /// reads (see `RebuildStep::read_ranges`); none for levels without redundancy.
    pub fn rebuild_read_ranges(
        &self,
        member: MemberIndex,
        units: Range<u64>,
    ) -> Vec<(Lbn, Sectors)> {
        match self {
            LevelVolume::Single(_) | LevelVolume::Raid0(_) => Vec::new(),
            LevelVolume::Raid1(v) => v.rebuild_read_ranges(member, units),
            LevelVolume::Raid10(v) => v.rebuild_read_ranges(member, units),
            LevelVolume::Raid5(v) => v.rebuild_read_ranges(units),
            LevelVolume::TrackAligned(v) => v.rebuild_read_ranges(units),
        }
    }

    /// Scrub; levels without redundancy have nothing to compare.
    pub fn scrub(&mut self, repair: bool) -> Result<ScrubReport, VolumeError> {
        match self {
            LevelVolume::Single(_) | LevelVolume::Raid0(_) => Ok(ScrubReport::default()),
            LevelVolume::Raid1(v) => v.scrub(repair),
            LevelVolume::Raid10(v) => v.scrub(repair),
            LevelVolume::Raid5(v) => v.scrub(repair),
            LevelVolume::TrackAligned(v) => v.scrub(repair),
        }
    }

    /// Flushes and clears every idle write-intent bit (clean shutdown).
    pub fn flush_and_clean(&mut self) -> Result<(), VolumeError> {
        match self {
            LevelVolume::Single(s) => s.flush().map_err(VolumeError::Store),
            LevelVolume::Raid0(v) => v.flush().map_err(VolumeError::Store),
            LevelVolume::Raid1(v) => v.flush_and_clean().map(drop),
            LevelVolume::Raid10(v) => v.flush_and_clean().map(drop),
            LevelVolume::Raid5(v) => v.flush_and_clean().map(drop),
            LevelVolume::TrackAligned(v) => v.flush_and_clean().map(drop),
        }
    }
}

impl BlockStore for LevelVolume {
    fn capacity(&self) -> Sectors {
        match self {
            LevelVolume::Single(s) => s.capacity(),
            LevelVolume::Raid0(v) => v.capacity(),
            LevelVolume::Raid1(v) => v.capacity(),
            LevelVolume::Raid10(v) => v.capacity(),
            LevelVolume::Raid5(v) => v.capacity(),
            LevelVolume::TrackAligned(v) => v.capacity(),
        }
    }
    fn read(&mut self, lbn: Lbn, buf: &mut [u8]) -> Result<(), StoreError> {
        match self {
            LevelVolume::Single(s) => s.read(lbn, buf),
            LevelVolume::Raid0(v) => v.read(lbn, buf),
            LevelVolume::Raid1(v) => v.read(lbn, buf),
            LevelVolume::Raid10(v) => v.read(lbn, buf),
            LevelVolume::Raid5(v) => v.read(lbn, buf),
            LevelVolume::TrackAligned(v) => v.read(lbn, buf),
        }
    }
    fn write(&mut self, lbn: Lbn, buf: &[u8]) -> Result<(), StoreError> {
        match self {
            LevelVolume::Single(s) => s.write(lbn, buf),
            LevelVolume::Raid0(v) => v.write(lbn, buf),
            LevelVolume::Raid1(v) => v.write(lbn, buf),
            LevelVolume::Raid10(v) => v.write(lbn, buf),
            LevelVolume::Raid5(v) => v.write(lbn, buf),
            LevelVolume::TrackAligned(v) => v.write(lbn, buf),
        }
    }
    fn flush(&mut self) -> Result<(), StoreError> {
        match self {
            LevelVolume::Single(s) => s.flush(),
            LevelVolume::Raid0(v) => v.flush(),
            LevelVolume::Raid1(v) => v.flush(),
            LevelVolume::Raid10(v) => v.flush(),
            LevelVolume::Raid5(v) => v.flush(),
            LevelVolume::TrackAligned(v) => v.flush(),
        }
    }
    fn trim(&mut self, lbn: Lbn, sectors: Sectors) -> Result<(), StoreError> {
        match self {
            LevelVolume::Single(s) => s.trim(lbn, sectors),
            LevelVolume::Raid0(v) => v.trim(lbn, sectors),
            LevelVolume::Raid1(v) => v.trim(lbn, sectors),
            LevelVolume::Raid10(v) => v.trim(lbn, sectors),
            LevelVolume::Raid5(v) => v.trim(lbn, sectors),
            LevelVolume::TrackAligned(v) => v.trim(lbn, sectors),
        }
    }
}

/// The level's volume, buffered or not. One per array, so the variants' sizes do
/// not matter (boxing would only add an indirection to every request).
#[allow(clippy::large_enum_variant)]
pub(crate) enum Engine {
    Plain(LevelVolume),
    Buffered(DmaAlignedBuffer<LevelVolume>),
}

impl Engine {
    pub fn new(volume: LevelVolume, buffer: Option<DabConfig>) -> Result<Engine, VolumeError> {
        Ok(match buffer {
            Some(config) => Engine::Buffered(DmaAlignedBuffer::new(volume, config)?),
            None => Engine::Plain(volume),
        })
    }

    pub fn volume(&self) -> &LevelVolume {
        match self {
            Engine::Plain(v) => v,
            Engine::Buffered(b) => b.inner(),
        }
    }

    /// The level's volume for maintenance that does not change the data the buffer
    /// holds copies of (fail, rebuild, scrub, resync). Flush first so no dirty block
    /// is left above it.
    pub fn volume_mut(&mut self) -> &mut LevelVolume {
        match self {
            Engine::Plain(v) => v,
            Engine::Buffered(b) => b.inner_mut(),
        }
    }

    fn store(&mut self) -> &mut dyn BlockStore {
        match self {
            Engine::Plain(v) => v,
            Engine::Buffered(b) => b,
        }
    }
}

impl BlockStore for Engine {
    fn capacity(&self) -> Sectors {
        self.volume().capacity()
    }
    fn read(&mut self, lbn: Lbn, buf: &mut [u8]) -> Result<(), StoreError> {
        self.store().read(lbn, buf)
    }
    fn write(&mut self, lbn: Lbn, buf: &[u8]) -> Result<(), StoreError> {
        self.store().write(lbn, buf)
    }
    fn flush(&mut self) -> Result<(), StoreError> {
        self.store().flush()
    }
    fn trim(&mut self, lbn: Lbn, sectors: Sectors) -> Result<(), StoreError> {
        self.store().trim(lbn, sectors)
    }
}
