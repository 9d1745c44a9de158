//! Building a timed volume of modelled drives from a [`VolumeSpec`]: members from
//! the drive catalog (or drive files), each with its true track map, the level's
//! map, and an optional DMA-aligned buffer on top. The result is one
//! [`Volume`], a `BlockDevice` whatever its level.

use crate::config::{Level, TrackUnits, VolumeSpec};
use crate::map::{MapError, MemberIndex, Raid5Map, TrackAlignedLayout, UnitPolicy};
use crate::timed::{
    DabCounters, DmaBuffer, HostCost, MemberStats, Mirrored, Parity, ParityOptions,
    StripeWriteCounters, Striped,
};
use spinstack_disk::drive::{Drive, DriveOptions};
use spinstack_sim::device::{BlockDevice, Control, ControlError, DeviceError};
use spinstack_sim::request::{BlockRequest, Completion};
use spinstack_sim::units::{Nanoseconds, Sectors};
use spinstack_trackmap::TrackMap;

/// Why a volume could not be built.
#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    #[error("{location}member {index} ({name}): {problem}")]
    Member {
        /// "FILE: line N: " when the spec came from a file, else empty.
        location: String,
        index: usize,
        name: String,
        problem: String,
    },
    #[error("the {level} layout: {source}")]
    Map {
        level: &'static str,
        source: MapError,
    },
}

/// A volume of drives, any level.
pub enum Volume {
    Striped(Striped<Drive>),
    Mirrored(Mirrored<Drive>),
    Raid5(Parity<Drive, Raid5Map>),
    TrackAligned(Parity<Drive, TrackAlignedLayout>),
    Buffered(Box<DmaBuffer<Volume>>),
}

/// A built volume and what the builder noticed.
pub struct Built {
    pub volume: Volume,
    /// Member names, in member order.
    pub member_names: Vec<String>,
    /// Things the user should know (members of different capacity, ...).
    pub notes: Vec<String>,
}

/// Build `spec` from catalog drives (each built with `drive_options`).
pub fn build(spec: &VolumeSpec, drive_options: &DriveOptions) -> Result<Built, BuildError> {
    let mut drives = Vec::new();
    let mut maps = Vec::new();
    let mut warnings = Vec::new();
    for (index, name) in spec.members.iter().enumerate() {
        let member = |problem: String| BuildError::Member {
            location: spec
                .member_location(index)
                .map_or(String::new(), |at| format!("{at}: ")),
            index,
            name: name.clone(),
            problem,
        };
        let drive_spec =
            spinstack_disk::catalog::resolve(name).map_err(|e| member(e.to_string()))?;
        // What the drive's file carries as warnings, said once per drive.
        for warning in drive_spec.warnings() {
            let note = format!("member {index} ({name}): {warning}");
            if !warnings.iter().any(|w: &String| w.ends_with(warning)) {
                warnings.push(note);
            }
        }
        let drive =
            Drive::new(&drive_spec, drive_options.clone()).map_err(|e| member(e.to_string()))?;
        maps.push(drive.layout().track_map(&drive_spec.name));
        drives.push(drive);
    }
    let mut notes = warnings;
    notes.extend(capacity_notes(spec, &drives));
    let volume = build_level(spec, drives, maps)?;
    let volume = match spec.buffer {
        Some(buffer) => Volume::Buffered(Box::new(DmaBuffer::new(
            volume,
            buffer.block,
            buffer.blocks,
            buffer.policy,
            HostCost::windows2000_buffered(),
        ))),
        None => volume,
    };
    Ok(Built {
        volume,
        member_names: spec.members.clone(),
        notes,
    })
}

fn capacity_notes(spec: &VolumeSpec, drives: &[Drive]) -> Vec<String> {
    let capacities: Vec<u64> = drives.iter().map(|d| d.capacity().0).collect();
    let (Some(&smallest), Some(&largest)) = (capacities.iter().min(), capacities.iter().max())
    else {
        return Vec::new();
    };
    if smallest == largest || spec.level == Level::Raid5TrackAligned {
        return Vec::new();
    }
    vec![format!(
        "members differ in capacity ({smallest} to {largest} sectors): every member is used up to the smallest, {smallest} sectors"
    )]
}

fn build_level(
    spec: &VolumeSpec,
    drives: Vec<Drive>,
    maps: Vec<TrackMap>,
) -> Result<Volume, BuildError> {
    let level = spec.level.name();
    let map_error = |source| BuildError::Map { level, source };
    let tracks: Vec<Option<TrackMap>> = maps.iter().cloned().map(Some).collect();
    let chunk = spec.chunk.unwrap_or(Sectors(0));
    let host = spec.host;
    Ok(match spec.level {
        Level::Single => {
            let drive = drives.into_iter().next().expect("one member, checked");
            Volume::Striped(
                Striped::single(drive, tracks.into_iter().next().flatten(), host, spec.plug)
                    .map_err(map_error)?,
            )
        }
        Level::Raid0 => Volume::Striped(
            Striped::raid0(drives, tracks, chunk, host, spec.plug).map_err(map_error)?,
        ),
        Level::Raid1 => Volume::Mirrored(
            Mirrored::new(drives, tracks, None, spec.read_balance, host, spec.plug)
                .map_err(map_error)?,
        ),
        Level::Raid10 => Volume::Mirrored(
            Mirrored::new(
                drives,
                tracks,
                Some((chunk, spec.copies)),
                spec.read_balance,
                host,
                spec.plug,
            )
            .map_err(map_error)?,
        ),
        Level::Raid5 => {
            let capacity = drives
                .iter()
                .map(|d| d.capacity())
                .min()
                .unwrap_or(Sectors(0));
            let layout = Raid5Map::new(drives.len() as u32, chunk, capacity).map_err(map_error)?;
            Volume::Raid5(Parity::new(
                drives,
                tracks,
                layout,
                parity_options(spec, false),
                host,
                spec.plug,
            ))
        }
        Level::Raid5TrackAligned => {
            let sizes: Vec<Vec<Sectors>> = maps.iter().map(|m| m.track_sizes().collect()).collect();
            match spec.track_units {
                TrackUnits::LargestTrack => {
                    let layout = Raid5Map::with_largest_track_chunk(&sizes).map_err(map_error)?;
                    Volume::Raid5(Parity::new(
                        drives,
                        tracks,
                        layout,
                        parity_options(spec, false),
                        host,
                        spec.plug,
                    ))
                }
                units => {
                    let policy = match units {
                        TrackUnits::SmallestTrack => UnitPolicy::SmallestTrack,
                        _ => UnitPolicy::WholeTrack,
                    };
                    let layout = TrackAlignedLayout::new(sizes, policy).map_err(map_error)?;
                    Volume::TrackAligned(Parity::new(
                        drives,
                        tracks,
                        layout,
                        parity_options(spec, true),
                        host,
                        spec.plug,
                    ))
                }
            }
        }
    })
}

fn parity_options(spec: &VolumeSpec, track_aligned: bool) -> ParityOptions {
    let base = if track_aligned {
        ParityOptions::track_aligned()
    } else {
        ParityOptions::md()
    };
    ParityOptions {
        fill_in_parity: spec.fill_in_parity,
        stripe_cache_stripes: spec.stripe_cache,
        delay_pre_reads: spec.delayed_stripes,
        ..base
    }
}

impl Volume {
    /// The drives, in member order.
    pub fn drives(&self) -> &[Drive] {
        match self {
            Volume::Striped(v) => v.members(),
            Volume::Mirrored(v) => v.members(),
            Volume::Raid5(v) => v.members(),
            Volume::TrackAligned(v) => v.members(),
            Volume::Buffered(b) => b.below().drives(),
        }
    }

    /// Requests, sectors and whole-track requests each drive received.
    pub fn member_stats(&self) -> Vec<MemberStats> {
        match self {
            Volume::Striped(v) => v.stats(),
            Volume::Mirrored(v) => v.stats(),
            Volume::Raid5(v) => v.stats(),
            Volume::TrackAligned(v) => v.stats(),
            Volume::Buffered(b) => b.below().member_stats(),
        }
    }

    /// Host CPU time spent so far: device I/O set-up in the level, plus the
    /// buffer's memory copies.
    pub fn host_busy(&self) -> Nanoseconds {
        match self {
            Volume::Striped(v) => v.host_busy(),
            Volume::Mirrored(v) => v.host_busy(),
            Volume::Raid5(v) => v.host_busy(),
            Volume::TrackAligned(v) => v.host_busy(),
            Volume::Buffered(b) => b.host_busy() + b.below().host_busy(),
        }
    }

    /// The RAID-5's stripe-write counters (also under a buffer); `None` for
    /// levels without parity.
    pub fn stripe_write_counters(&self) -> Option<StripeWriteCounters> {
        match self {
            Volume::Raid5(v) => Some(v.write_counters()),
            Volume::TrackAligned(v) => Some(v.write_counters()),
            Volume::Buffered(b) => b.below().stripe_write_counters(),
            _ => None,
        }
    }

    /// The buffer's counters, when the volume has one.
    pub fn buffer_counters(&self) -> Option<DabCounters> {
        match self {
            Volume::Buffered(b) => Some(b.counters()),
            _ => None,
        }
    }

    /// A copy of the parity layout (parity levels, also under a buffer), for
    /// workloads that address whole stripes.
    pub fn parity_layout(&self) -> Option<Box<dyn crate::map::ParityLayout>> {
        match self {
            Volume::Raid5(v) => Some(Box::new(v.layout().clone())),
            Volume::TrackAligned(v) => Some(Box::new(v.layout().clone())),
            Volume::Buffered(b) => b.below().parity_layout(),
            _ => None,
        }
    }

    /// The track-aligned layout (also under a buffer), for the logical track and
    /// stripe maps a file system above reads (`map::logical_track_map`,
    /// `map::logical_stripe_map`); `None` for levels whose chunks ignore tracks.
    pub fn track_aligned_layout(&self) -> Option<&TrackAlignedLayout> {
        match self {
            Volume::TrackAligned(v) => Some(v.layout()),
            Volume::Buffered(b) => b.below().track_aligned_layout(),
            _ => None,
        }
    }

    /// Sectors of the drives' raw space that hold neither data nor parity
    /// (parity levels): the layout's own unused sectors plus, where the layout uses
    /// every member only up to the smallest, the larger members' excess.
    pub fn unused_sectors(&self) -> Option<Sectors> {
        use crate::map::ParityLayout;
        let layout: &dyn ParityLayout = match self {
            Volume::Raid5(v) => v.layout(),
            Volume::TrackAligned(v) => v.layout(),
            Volume::Buffered(b) => return b.below().unused_sectors(),
            _ => return None,
        };
        let drives: u64 = self.drives().iter().map(|d| d.capacity().0).sum();
        let used = layout.raw_sectors().0 - layout.unused_sectors().0;
        Some(Sectors(drives - used))
    }

    fn device(&self) -> &dyn BlockDevice {
        match self {
            Volume::Striped(v) => v,
            Volume::Mirrored(v) => v,
            Volume::Raid5(v) => v,
            Volume::TrackAligned(v) => v,
            Volume::Buffered(b) => &**b,
        }
    }

    fn device_mut(&mut self) -> &mut dyn BlockDevice {
        match self {
            Volume::Striped(v) => v,
            Volume::Mirrored(v) => v,
            Volume::Raid5(v) => v,
            Volume::TrackAligned(v) => v,
            Volume::Buffered(b) => &mut **b,
        }
    }
}

impl BlockDevice for Volume {
    fn capacity(&self) -> Sectors {
        self.device().capacity()
    }
    fn submit(&mut self, request: BlockRequest) -> Result<(), DeviceError> {
        self.device_mut().submit(request)
    }
    fn next_event_time(&self) -> Option<Nanoseconds> {
        self.device().next_event_time()
    }
    fn advance(&mut self, now: Nanoseconds, completed: &mut Vec<Completion>) {
        self.device_mut().advance(now, completed)
    }
    fn control(
        &mut self,
        now: Nanoseconds,
        path: &[MemberIndex],
        command: Control,
    ) -> Result<(), ControlError> {
        self.device_mut().control(now, path, command)
    }
}
