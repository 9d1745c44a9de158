//! `raid5-bonnie` and `raid5-diff` — the validation paper's file-system results over
//! five-member RAID-5s (§3): "We compared the base case RAID-5 with a track-aligned
//! RAID-5 with five disks, and a chunk size of 4KB. For the Bonnie benchmark, we used
//! a 1-GB working set with 128MB of RAM. Figure 8 shows that the write bandwidth for
//! the three system settings falls within a similar range due to buffered writes.
//! However, for read bandwidth, the track-aligned RAID-5 outperforms the conventional
//! one by 57%." "Figure 9 shows that the track-aligned RAID-5 can achieve a 3x factor
//! speedup compared to the original RAID-5."
//!
//! Three volumes over the paper's five Maxtor Atlas 10K V drives (its Table 2
//! variants, as `raid5-alignment`), each read through `spinstack-fs` (ext2, a 128 MB
//! page cache, Linux 2.6.16's plug) in simulated time:
//!
//! * **conventional** — md's RAID-5, 4 KB chunks, Linux's 128 KB read-ahead window
//!   (md's RAID-5 raises a volume's read-ahead only to two stripes, 8 pages here,
//!   below the default);
//! * **four-track window** — the same RAID-5 with Linux's window allowed to grow to
//!   four member tracks (one track per data member, the paper's "prefetch window of
//!   four tracks"), not aligned to tracks;
//! * **track-aligned** — stripe units are the members' own tracks (fill-in parity
//!   reads, member requests cut at track boundaries, a track-aware plug); ext2 over
//!   its logical stripe map (blocks crossing a stripe boundary excluded,
//!   preallocation up to the stripe boundary) and track-aligned read-ahead over the
//!   same map: the stripe holding the read and the next whole stripe, so every member
//!   reads one whole track at a time, in parallel.
//!
//! Evidence beside them: the track-aligned RAID-5 with ext2 excluding blocks at every
//! *data unit* boundary (the logical track map) instead — what the allocator would do
//! with per-track boundaries, and why it does not —, the conventional RAID-5 without
//! Linux's plug, and the three volumes with no host
//! CPU time (neither the reader's per call and per KB copied nor the set-up of member
//! I/Os), which separates what the disks and the pipeline take from what the host's
//! assumed CPU costs take.
//!
//! Not scaled: the paper's 1 GB Bonnie file and two 512 MB diff files; each
//! experiment's eight read runs take about 10 s of one core (15 s wall on this
//! shared machine); `raid5-bonnie`'s seven write runs add about 5 s of one core
//! (about 15 s wall here).
//!
//! `raid5-bonnie` also runs Bonnie's block write over the same volumes
//! (`write`: Linux 2.6.16 write-back through the page cache, members' write
//! caches on; see there for how write-back meets md's stripes), with its
//! claim and evidence in `write_report`.

use super::file_layout::lay_out_apart;
use super::validation_host::HostProfile;
use crate::harness::{Experiment, Outcome, RunContext};
use crate::LabError;
use spinstack_disk::drive::DriveOptions;
use spinstack_fs::cache::{PageCache, Replacement};
use spinstack_fs::readahead::{Policy, ReadAhead, WindowLimit};
use spinstack_fs::scan::{ReadCost, Scan, ScanReport, ScanSetup};
use spinstack_fs::{Allocator, AllocatorConfig};
use spinstack_sim::device::BlockDevice;
use spinstack_sim::driver::run;
use spinstack_sim::engine::{Engine, EngineOptions};
use spinstack_sim::units::{Lbn, Nanoseconds, Sectors};
use spinstack_trackmap::{Track, TrackMap};
use spinstack_volume::build::{build, Volume};
use spinstack_volume::config::{Level, TrackUnits, VolumeSpec};
use spinstack_volume::map::{logical_stripe_map, logical_track_map};
use spinstack_volume::timed::{HostCost, MemberStats, PlugPolicy, ReadBalance};

mod report;
mod write;
mod write_report;

use write::{run_writes, write_runs_needed, write_source, WritePhase};

pub struct Raid5Bonnie;
pub struct Raid5Diff;

/// Validation paper Table 2: five drives of four track-size variants (as
/// `raid5-alignment`).
pub(crate) const MEMBERS: [&str; 5] = [
    "maxtor10kv-czk",
    "maxtor10kv-c0k",
    "maxtor10kv-7gk",
    "maxtor10kv-s0k",
    "maxtor10kv-czk",
];
/// The validation runs' memory limit (§3: "128MB of RAM").
const CACHE_BYTES: u64 = 128 << 20;
/// The paper's sizes in 4 KB blocks: a 1 GB Bonnie file, two 512 MB files for diff
/// (§3). Five volume runs of each take seconds, so nothing is scaled.
const BONNIE_BLOCKS: u64 = 262_144;
const DIFF_FILE_BLOCKS: u64 = 131_072;
/// Pages per `read` call: 8 KB (assumed, as in `ext2-bonnie`: neither Bonnie's
/// block size nor diff's buffer is stated in the paper).
const READ_PAGES: u64 = 2;
/// md's chunk in the base case (§3: "a chunk size of 4KB").
const CHUNK_SECTORS: Sectors = Sectors(8);
/// Where `raid5-diff`'s evidence moves the second file: another file of this
/// many 4 KB blocks created between the two.
const GAPS_BLOCKS: [u64; 5] = [1, 3, 7, 16, 40];
/// The members' tracks the four-track window is measured over: the first 64 tracks
/// of each member (two 32-cylinder bands, both surfaces), where the files lie.
const WINDOW_TRACKS_SAMPLED: usize = 64;

/// The RAID-5 below the file system.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Raid {
    /// md, 4 KB chunks.
    Md,
    /// Track-aligned; ext2 excludes blocks crossing the boundaries of its
    /// logical stripes (`per_unit: false`) or of its data units (`true`).
    TrackAligned { per_unit: bool },
}

#[derive(Clone, Copy, Debug)]
pub(crate) struct Variant {
    pub(crate) name: &'static str,
    /// The figures' row label.
    pub(crate) short: &'static str,
    pub(crate) raid: Raid,
    /// Linux's window limit in member tracks (`None`: 128 KB).
    pub(crate) window_tracks: Option<u64>,
    plug: bool,
    /// Charge the host's CPU time: the reader's per call and per KB copied, and
    /// the set-up of every member I/O.
    cpu: bool,
}

pub(crate) const CONVENTIONAL: Variant = Variant {
    name: "conventional (md, 4 KB chunk)",
    short: "md, 4 KB chunk",
    raid: Raid::Md,
    window_tracks: None,
    plug: true,
    cpu: true,
};
pub(crate) const FOUR_TRACK_WINDOW: Variant = Variant {
    name: "four-track window",
    short: "four-track window",
    window_tracks: Some(4),
    ..CONVENTIONAL
};
pub(crate) const TRACK_ALIGNED: Variant = Variant {
    name: "track-aligned",
    short: "track-aligned",
    raid: Raid::TrackAligned { per_unit: false },
    window_tracks: None,
    plug: true,
    cpu: true,
};
pub(crate) const PER_UNIT_EXCLUSION: Variant = Variant {
    name: "track-aligned, blocks excluded per data unit (evidence)",
    short: "TA, per-unit exclusion*",
    raid: Raid::TrackAligned { per_unit: true },
    ..TRACK_ALIGNED
};
pub(crate) const CONVENTIONAL_NO_CPU: Variant = Variant {
    name: "conventional, no CPU time (evidence)",
    short: "md, no CPU*",
    cpu: false,
    ..CONVENTIONAL
};
pub(crate) const CONVENTIONAL_NO_PLUG: Variant = Variant {
    name: "conventional, no plug (evidence)",
    short: "md, no plug*",
    plug: false,
    ..CONVENTIONAL
};
pub(crate) const FOUR_TRACK_WINDOW_NO_CPU: Variant = Variant {
    name: "four-track window, no CPU time (evidence)",
    short: "window, no CPU*",
    cpu: false,
    ..FOUR_TRACK_WINDOW
};
pub(crate) const TRACK_ALIGNED_NO_CPU: Variant = Variant {
    name: "track-aligned, no CPU time (evidence)",
    short: "TA, no CPU*",
    cpu: false,
    ..TRACK_ALIGNED
};

/// Every variant, in the order the tables and figures show them.
pub(crate) const VARIANTS: [Variant; 8] = [
    CONVENTIONAL,
    FOUR_TRACK_WINDOW,
    TRACK_ALIGNED,
    PER_UNIT_EXCLUSION,
    CONVENTIONAL_NO_PLUG,
    CONVENTIONAL_NO_CPU,
    FOUR_TRACK_WINDOW_NO_CPU,
    TRACK_ALIGNED_NO_CPU,
];

/// What one run measured.
#[derive(Clone, Debug, Default)]
pub(crate) struct Measured {
    pub(crate) seconds: f64,
    pub(crate) megabytes_per_second: f64,
    /// The reader's CPU time (system calls and copies).
    pub(crate) cpu_seconds: f64,
    /// The host's CPU time setting up member I/Os.
    pub(crate) member_io_cpu_seconds: f64,
    /// File-system requests to the volume, and their mean size.
    pub(crate) requests: u64,
    pub(crate) mean_request_kb: f64,
    /// Mean time from a file-system request's issue to its completion (plug wait,
    /// member I/O set-up, the slowest member's service).
    pub(crate) mean_request_ms: f64,
    pub(crate) members: Vec<MemberStats>,
    /// The read-ahead window limit, in pages (Linux windows only).
    pub(crate) window_pages: Option<u64>,
    /// Blocks the allocator excluded.
    pub(crate) excluded_blocks: u64,
    /// The data members' media rate (`media_megabytes_per_second`).
    pub(crate) media_megabytes_per_second: f64,
    /// One revolution of the members, in seconds.
    pub(crate) revolution_seconds: f64,
}

impl Measured {
    fn total(&self, f: fn(&MemberStats) -> u64) -> f64 {
        self.members.iter().map(f).sum::<u64>() as f64
    }
    pub(crate) fn member_requests(&self) -> f64 {
        self.total(|m| m.requests)
    }
    pub(crate) fn mean_member_request_kb(&self) -> f64 {
        self.total(|m| m.sectors) / 2.0 / self.member_requests().max(1.0)
    }
    pub(crate) fn whole_track_share(&self) -> f64 {
        self.total(|m| m.whole_track_requests) / self.member_requests().max(1.0)
    }
    pub(crate) fn crossing_share(&self) -> f64 {
        self.total(|m| m.track_crossing_requests) / self.member_requests().max(1.0)
    }
    /// Mean share of the run each member had requests outstanding.
    pub(crate) fn member_busy_share(&self) -> f64 {
        self.total(|m| m.busy.0) / 1e9 / self.members.len().max(1) as f64 / self.seconds
    }
    /// Member head time per KB the members read (data, fill-in parity, tails).
    pub(crate) fn member_us_per_kb(&self) -> f64 {
        self.total(|m| m.busy.0) / 1e3 / (self.total(|m| m.sectors) / 2.0).max(1.0)
    }
}

/// The host's cost per member I/O: the validation paper's Pentium D 830 (an
/// estimate, as `ext2-bonnie`), or nothing for the evidence runs without CPU time.
fn host_cost(variant: Variant) -> HostCost {
    if variant.cpu {
        HostProfile::pentium_d_830().device_io
    } else {
        HostCost::NONE
    }
}

pub(crate) fn volume_spec(variant: Variant) -> VolumeSpec {
    let aligned = matches!(variant.raid, Raid::TrackAligned { .. });
    VolumeSpec {
        level: if aligned {
            Level::Raid5TrackAligned
        } else {
            Level::Raid5
        },
        chunk: (!aligned).then_some(CHUNK_SECTORS),
        members: MEMBERS.iter().map(|m| m.to_string()).collect(),
        copies: 2,
        track_units: TrackUnits::WholeTrack,
        read_balance: ReadBalance::ShortestQueue,
        fill_in_parity: aligned,
        stripe_cache: 256,
        delayed_stripes: true,
        buffer: None,
        plug: variant.plug.then_some(PlugPolicy {
            track_aware: aligned,
            ..PlugPolicy::linux26()
        }),
        host: host_cost(variant),
        origin: None,
    }
}

/// The members' drive options: the track-aligned RAID-5's drives run with their
/// prefetch off (sdparm DPTL=0, the cache on), as the paper ran every experiment
/// after §2.5's diff: "we disabled disk firmware prefetch for track-aligned
/// accesses"; the conventional volumes keep it on.
pub(crate) fn drive_options(variant: Variant) -> DriveOptions {
    DriveOptions {
        read_ahead_disabled: matches!(variant.raid, Raid::TrackAligned { .. }),
        ..DriveOptions::default()
    }
}

/// A map with no track boundaries inside the volume: md's chunks ignore tracks, so
/// plain ext2 over it sees only the capacity.
fn capacity_only_map(capacity: Sectors) -> Result<TrackMap, String> {
    let tracks = vec![Track {
        first: Lbn(0),
        sectors: capacity,
        location: None,
        uncertain: false,
    }];
    TrackMap::new(
        "md RAID-5",
        "no track boundaries",
        capacity,
        tracks,
        Vec::new(),
    )
    .map_err(|e| e.to_string())
}

/// The mean size of the members' first `WINDOW_TRACKS_SAMPLED` tracks, in sectors.
fn mean_track_sectors(volume: &Volume) -> u64 {
    let sizes: Vec<u64> = volume
        .drives()
        .iter()
        .flat_map(|drive| {
            drive
                .layout()
                .tracks()
                .iter()
                .take(WINDOW_TRACKS_SAMPLED)
                .map(|t| t.sectors.0)
                .collect::<Vec<_>>()
        })
        .collect();
    sizes.iter().sum::<u64>() / sizes.len().max(1) as u64
}

/// Pages of `tracks` member tracks: the mean of the members' first tracks.
pub(crate) fn window_pages(volume: &Volume, tracks: u64, block_sectors: u64) -> u64 {
    tracks * (mean_track_sectors(volume) / block_sectors)
}

/// What the data members' media give, in MB/s: each reading one of the tracks the
/// files lie on per revolution (no switches counted: no RAID-5 read beats it).
fn media_megabytes_per_second(volume: &Volume) -> f64 {
    let drives = volume.drives();
    let revolution_s = drives
        .first()
        .map_or(f64::INFINITY, |d| d.rotation_period_ps() as f64 / 1e12);
    let data_members = drives.len().saturating_sub(1) as f64;
    data_members * mean_track_sectors(volume) as f64 * 512.0 / 1e6 / revolution_s
}

/// The maps the allocator and the read-ahead use (see the module documentation).
pub(crate) fn maps(variant: Variant, volume: &Volume) -> Result<(TrackMap, TrackMap), String> {
    match (variant.raid, volume.track_aligned_layout()) {
        (Raid::Md, _) => {
            let map = capacity_only_map(volume.capacity())?;
            Ok((map.clone(), map))
        }
        (Raid::TrackAligned { per_unit }, Some(layout)) => {
            let stripes =
                logical_stripe_map(layout, "track-aligned RAID-5").map_err(|e| e.to_string())?;
            let allocation = if per_unit {
                logical_track_map(layout, "track-aligned RAID-5").map_err(|e| e.to_string())?
            } else {
                stripes.clone()
            };
            Ok((allocation, stripes))
        }
        (Raid::TrackAligned { .. }, None) => {
            Err("the track-aligned volume has no track-aligned layout".to_string())
        }
    }
}

/// Bonnie's read or diff's interleaved reads of `files` files of `blocks`
/// blocks, laid out one after the other as a writer extending each 32 KB at a
/// time would ([`super::file_layout::lay_out`]), over `variant`'s volume.
pub(crate) fn measure(
    variant: Variant,
    files: usize,
    blocks: u64,
    id: &str,
) -> Result<Measured, LabError> {
    measure_apart(variant, files, blocks, 0, id)
}

/// As [`measure`], the files laid out `gap_blocks` apart ([`lay_out_apart`]).
pub(crate) fn measure_apart(
    variant: Variant,
    files: usize,
    blocks: u64,
    gap_blocks: u64,
    id: &str,
) -> Result<Measured, LabError> {
    let fail = |problem: String| LabError::Run {
        id: id.to_string(),
        problem: format!("{}: {problem}", variant.name),
    };
    let built =
        build(&volume_spec(variant), &drive_options(variant)).map_err(|e| fail(e.to_string()))?;
    let volume = built.volume;
    let (allocation_map, read_ahead_map) = maps(variant, &volume).map_err(fail)?;
    let config = match variant.raid {
        Raid::Md => AllocatorConfig::ext2(),
        Raid::TrackAligned { .. } => AllocatorConfig::ext2_track_aligned(),
    };
    let mut allocator = Allocator::new(&allocation_map, config).map_err(|e| fail(e.to_string()))?;
    let excluded_blocks = allocator.traxtents().excluded().len() as u64;
    let (runs, indirect): (Vec<_>, Vec<_>) =
        lay_out_apart(&mut allocator, files, blocks, gap_blocks)
            .map_err(fail)?
            .into_iter()
            .unzip();
    drop(allocator);
    let block_sectors = config.block_size.sectors().0;
    let (policy, window) = match (variant.raid, variant.window_tracks) {
        (Raid::TrackAligned { .. }, _) => (Policy::TrackAligned, None),
        (Raid::Md, None) => (Policy::linux_default(), Some(32)),
        (Raid::Md, Some(tracks)) => {
            let pages = window_pages(&volume, tracks, block_sectors);
            let limit = WindowLimit::Pages(pages);
            (Policy::LinuxWindow { limit }, Some(pages))
        }
    };
    let mut engine = Engine::new(EngineOptions::default());
    let device = engine.add_device(volume);
    let mut setup = ScanSetup {
        device,
        map: &read_ahead_map,
        block_size: config.block_size,
        read_pages: READ_PAGES,
        cost: if variant.cpu {
            HostProfile::pentium_d_830().read_cost()
        } else {
            ReadCost {
                per_call: Nanoseconds::ZERO,
                per_kib: Nanoseconds::ZERO,
            }
        },
        cache: PageCache::new(
            CACHE_BYTES,
            config.block_size.bytes(),
            Replacement::ActiveInactive,
        )
        .map_err(|e| fail(e.to_string()))?,
    };
    let scanned =
        super::common::scanned_files(&mut setup.cache, config.indirect, &runs, &indirect, || {
            ReadAhead::new(policy)
        });
    let mut host = Scan::new(setup, scanned);
    run(&mut engine, &mut host).map_err(|e| fail(e.to_string()))?;
    let bytes = files as u64 * blocks * config.block_size.bytes();
    let volume = &engine.devices()[0];
    let mut measured = summarise(host.report(), bytes, volume.member_stats(), window);
    measured.member_io_cpu_seconds = volume.host_busy().as_secs_f64();
    measured.excluded_blocks = excluded_blocks;
    measured.media_megabytes_per_second = media_megabytes_per_second(volume);
    measured.revolution_seconds = volume
        .drives()
        .first()
        .map_or(0.0, |d| d.rotation_period_ps() as f64 / 1e12);
    Ok(measured)
}

fn summarise(
    report: &ScanReport,
    bytes: u64,
    members: Vec<MemberStats>,
    window_pages: Option<u64>,
) -> Measured {
    let sectors: u64 = report.requests.iter().map(|r| r.sectors.0).sum();
    let seconds = report.elapsed.as_secs_f64();
    let latencies: Vec<f64> = report
        .requests
        .iter()
        .filter_map(|r| r.done.map(|done| (done - r.issued).as_secs_f64() * 1e3))
        .collect();
    Measured {
        mean_request_ms: latencies.iter().sum::<f64>() / latencies.len().max(1) as f64,
        seconds,
        megabytes_per_second: bytes as f64 / 1e6 / seconds.max(1e-12),
        cpu_seconds: report.cpu.as_secs_f64(),
        requests: report.requests.len() as u64,
        mean_request_kb: sectors as f64 / 2.0 / report.requests.len().max(1) as f64,
        members,
        window_pages,
        ..Measured::default()
    }
}

impl Experiment for Raid5Bonnie {
    fn id(&self) -> &'static str {
        "raid5-bonnie"
    }
    fn title(&self) -> &'static str {
        "Bonnie sequential block read and write over five-member RAID-5s: md 4 KB chunk, four-track window, track-aligned (validation Fig. 8)"
    }
    fn run(&self, context: &RunContext) -> Result<Outcome, LabError> {
        context
            .progress
            .set_length(VARIANTS.len() as u64 + write_runs_needed() as u64);
        let runs = VARIANTS
            .iter()
            .map(|&variant| {
                let m = measure(variant, 1, BONNIE_BLOCKS, self.id())?;
                context.progress.inc(1);
                Ok(m)
            })
            .collect::<Result<Vec<_>, LabError>>()?;
        let writes = run_writes(context, self.id())?;
        Ok(report::bonnie(&runs, &writes))
    }
}

impl Experiment for Raid5Diff {
    fn id(&self) -> &'static str {
        "raid5-diff"
    }
    fn title(&self) -> &'static str {
        "diff of two files over five-member RAID-5s: md 4 KB chunk, four-track window, track-aligned (validation Fig. 9)"
    }
    fn run(&self, context: &RunContext) -> Result<Outcome, LabError> {
        // The variants, then as evidence the same diff with the second file
        // moved by another file between the two (the default run has none).
        let apart: Vec<(Variant, u64)> = [CONVENTIONAL, TRACK_ALIGNED]
            .into_iter()
            .flat_map(|variant| GAPS_BLOCKS.map(|gap| (variant, gap)))
            .collect();
        let items: Vec<(Variant, u64)> = VARIANTS
            .iter()
            .map(|&variant| (variant, 0))
            .chain(apart)
            .collect();
        let mut all = super::common::measure_each(&items, context, |&(variant, gap)| {
            measure_apart(variant, 2, DIFF_FILE_BLOCKS, gap, self.id())
        })?;
        let moved = all.split_off(VARIANTS.len());
        let runs = all;
        let (conventional, aligned) = moved.split_at(GAPS_BLOCKS.len());
        Ok(report::diff(
            &runs,
            &report::Apart {
                gaps_blocks: &GAPS_BLOCKS,
                conventional,
                aligned,
            },
        ))
    }
}

#[cfg(test)]
mod tests;
