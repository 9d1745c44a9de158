//! `raid5-alignment` — the Linux validation paper (Qian et al.), §3: a RAID-5 of
//! five Maxtor Atlas 10K V drives whose track sizes differ (its Table 2 variants
//! CZK, C0K, 7GK, S0K and CZK again) read in random stripe-aligned requests, laid
//! out four ways:
//!
//! * **conventional** — Linux md's RAID-5, 4 KB chunks ("the base case");
//! * **track-aligned** — stripe units are each member's own tracks, fill-in parity
//!   reads, member requests cut at track boundaries (the paper's design);
//! * **largest-track chunk** — md chunks as large as the largest track: "some disks
//!   need to use 1+ tracks to form a chunk" (rejected);
//! * **smallest-track units** — one unit per track, as large as the smallest track:
//!   "about 10% of unused sectors for disks with larger track sizes" (rejected).
//!
//! Two workloads, each random over the whole volume: one stripe of the track-aligned
//! layout's size ("stripe-sized", about four tracks of data) and four of them
//! ("track-multiple", the paper's four-track prefetch window per disk). Every layout
//! reads the same amounts, starting at one of its own stripe boundaries. Measured
//! per layout: member request size, the share of member requests that are exactly
//! one whole track, the share that cross a track boundary, member head time per
//! request and per sector, volume bandwidth, and the raw capacity the layout leaves
//! unused.

use crate::claim::{Claim, Tolerance};
use crate::harness::{Experiment, Outcome, RunContext};
use crate::plot::{Bars, Figure, LegendCorner, Panel, PanelContent};
use crate::table::DataTable;
use crate::LabError;
use spinstack_disk::drive::DriveOptions;
use spinstack_sim::driver::{run_closed_loop, RequestSpec};
use spinstack_sim::engine::Engine;
use spinstack_sim::request::Operation;
use spinstack_sim::rng::Xoshiro256StarStar;
use spinstack_sim::units::{Lbn, Nanoseconds, Sectors};
use spinstack_volume::build::{build, Volume};
use spinstack_volume::config::{Level, TrackUnits, VolumeSpec};
use spinstack_volume::map::{ParityLayout, TrackAlignedLayout, UnitPolicy};
use spinstack_volume::timed::{HostCost, MemberStats, ReadBalance};

pub struct Raid5Alignment;

/// Validation paper Table 2: five drives of four track-size variants.
const MEMBERS: [&str; 5] = [
    "maxtor10kv-czk",
    "maxtor10kv-c0k",
    "maxtor10kv-7gk",
    "maxtor10kv-s0k",
    "maxtor10kv-czk",
];

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Layout {
    Conventional,
    TrackAligned,
    LargestTrack,
    SmallestTrack,
}

const LAYOUTS: [(Layout, &str); 4] = [
    (Layout::Conventional, "conventional (md, 4 KB chunk)"),
    (Layout::TrackAligned, "track-aligned"),
    (Layout::LargestTrack, "largest-track chunk"),
    (Layout::SmallestTrack, "smallest-track units"),
];

/// Stripes of the track-aligned layout per request, by workload.
const WORKLOADS: [(u64, &str); 2] = [(1, "stripe-sized"), (4, "track-multiple (4 stripes)")];

fn spec(layout: Layout) -> VolumeSpec {
    let (level, chunk, track_units) = match layout {
        Layout::Conventional => (Level::Raid5, Some(Sectors(8)), TrackUnits::WholeTrack),
        Layout::TrackAligned => (Level::Raid5TrackAligned, None, TrackUnits::WholeTrack),
        Layout::LargestTrack => (Level::Raid5TrackAligned, None, TrackUnits::LargestTrack),
        Layout::SmallestTrack => (Level::Raid5TrackAligned, None, TrackUnits::SmallestTrack),
    };
    VolumeSpec {
        level,
        chunk,
        members: MEMBERS.iter().map(|m| m.to_string()).collect(),
        copies: 2,
        track_units,
        read_balance: ReadBalance::ShortestQueue,
        fill_in_parity: level == Level::Raid5TrackAligned && layout != Layout::LargestTrack,
        stripe_cache: 256,
        delayed_stripes: true,
        buffer: None,
        plug: None,
        host: HostCost::NONE,
        origin: None,
    }
}

/// What one (layout, workload) run measured.
#[derive(Clone, Debug)]
struct Measured {
    layout: usize,
    workload: usize,
    members: Vec<MemberStats>,
    mib_per_second: f64,
    unused_fraction: f64,
}

impl Measured {
    fn total(&self, f: fn(&MemberStats) -> u64) -> f64 {
        self.members.iter().map(f).sum::<u64>() as f64
    }
    fn requests(&self) -> f64 {
        self.total(|m| m.requests)
    }
    fn mean_request_sectors(&self) -> f64 {
        self.total(|m| m.sectors) / self.requests()
    }
    fn whole_track_share(&self) -> f64 {
        self.total(|m| m.whole_track_requests) / self.requests()
    }
    fn crossing_share(&self) -> f64 {
        self.total(|m| m.track_crossing_requests) / self.requests()
    }
    /// Member head time (time with requests outstanding) per member request.
    fn head_ms_per_request(&self) -> f64 {
        self.total(|m| m.busy.0) / 1e6 / self.requests()
    }
    /// Member head time per sector read (data, fill-in and unused tails).
    fn head_us_per_sector(&self) -> f64 {
        self.total(|m| m.busy.0) / 1e3 / self.total(|m| m.sectors)
    }
}

/// The data of `count` stripes of `layout` from stripe `first`.
fn stripes_sectors(layout: &TrackAlignedLayout, first: u64, count: u64) -> Sectors {
    layout
        .stripe_start(first + count)
        .sectors_since(layout.stripe_start(first))
}

/// Where each request of a run starts and how long it is, from a random number:
/// a layout with track units reads `count` of its own stripes; an md layout reads
/// as much as `count` stripes of the whole-track layout hold there, from one of its
/// own stripe boundaries.
fn request_maker(
    volume: &Volume,
    aligned: &TrackAlignedLayout,
    count: u64,
) -> Box<dyn FnMut(u64) -> (Lbn, Sectors)> {
    let capacity = spinstack_sim::device::BlockDevice::capacity(volume).0;
    match volume {
        Volume::TrackAligned(v) => {
            let own = v.layout().clone();
            let stripes = own.stripes() - count;
            Box::new(move |random| {
                let first = random % stripes;
                (own.stripe_start(first), stripes_sectors(&own, first, count))
            })
        }
        Volume::Raid5(v) => {
            let unit = v.layout().stripe_data_sectors(0).0;
            let sizes = aligned.clone();
            let stripes = sizes.stripes() - count;
            Box::new(move |random| {
                let sectors = stripes_sectors(&sizes, random % stripes, count);
                let starts = (capacity - sectors.0) / unit;
                (Lbn((random >> 20) % starts * unit), sectors)
            })
        }
        _ => Box::new(|_| (Lbn(0), Sectors(1))),
    }
}

fn run_one(
    layout: usize,
    workload: usize,
    aligned: &TrackAlignedLayout,
    requests: u64,
    seed: u64,
) -> Result<Measured, LabError> {
    let (kind, label) = LAYOUTS[layout];
    let failed = |problem: String| LabError::Run {
        id: format!("raid5-alignment/{label}"),
        problem,
    };
    let built = build(&spec(kind), &DriveOptions::default()).map_err(|e| failed(e.to_string()))?;
    let (unused, raw) = unused_and_raw(&built.volume);
    let mut engine: Engine<Volume> = Engine::default();
    engine.add_device(built.volume);
    let mut next = request_maker(&engine.devices()[0], aligned, WORKLOADS[workload].0);
    // The same random stream for every layout of a workload.
    let mut rng = Xoshiro256StarStar::seed_from_u64(seed ^ workload as u64);
    let mut left = requests;
    let mut sectors_read = 0u64;
    let mut source = |_| {
        left = left.checked_sub(1)?;
        let (lbn, sectors) = next(rng.next_u64());
        sectors_read += sectors.0;
        Some(RequestSpec {
            operation: Operation::Read,
            lbn,
            sectors,
            think_after: Nanoseconds::ZERO,
        })
    };
    let summary =
        run_closed_loop(&mut engine, 1, &mut source, |_| {}).map_err(|e| failed(e.to_string()))?;
    let volume = &engine.devices()[0];
    Ok(Measured {
        layout,
        workload,
        members: volume.member_stats(),
        mib_per_second: sectors_read as f64 / 2048.0 / summary.end.as_secs_f64(),
        unused_fraction: unused as f64 / raw as f64,
    })
}

/// Unused and raw sectors of a parity volume's drives.
fn unused_and_raw(volume: &Volume) -> (u64, u64) {
    let raw: u64 = volume
        .drives()
        .iter()
        .map(|d| spinstack_sim::device::BlockDevice::capacity(d).0)
        .sum();
    (volume.unused_sectors().map_or(0, |s| s.0), raw)
}

impl Experiment for Raid5Alignment {
    fn id(&self) -> &'static str {
        "raid5-alignment"
    }
    fn title(&self) -> &'static str {
        "Track-aligned RAID-5 over heterogeneous drives vs conventional and the rejected alternatives (validation paper §3)"
    }
    fn run(&self, context: &RunContext) -> Result<Outcome, LabError> {
        context
            .progress
            .set_length((LAYOUTS.len() * WORKLOADS.len()) as u64);
        let aligned = aligned_layout()?;
        let requests = (context.scale.requests_per_point as u64 / 10).max(20);
        let mut runs = Vec::new();
        for workload in 0..WORKLOADS.len() {
            for layout in 0..LAYOUTS.len() {
                runs.push(run_one(layout, workload, &aligned, requests, context.seed)?);
                context.progress.inc(1);
            }
        }
        let first_zone = first_zone_smallest_track_loss(&aligned);
        Ok(Outcome {
            data: data_table(&runs),
            figure: figure(&runs),
            claims: claims(&runs, first_zone),
            notes: notes(&aligned, requests),
        })
    }
}

/// The track-aligned layout of the five members (for request sizes and zones).
fn aligned_layout() -> Result<TrackAlignedLayout, LabError> {
    let tracks = MEMBERS
        .iter()
        .map(|name| {
            let spec = crate::drives::spec(name)?;
            let layout = crate::drives::layout(&spec)?;
            Ok(layout.tracks().iter().map(|t| t.sectors).collect())
        })
        .collect::<Result<Vec<Vec<Sectors>>, LabError>>()?;
    TrackAlignedLayout::new(tracks, UnitPolicy::WholeTrack).map_err(|e| LabError::Run {
        id: "raid5-alignment".to_string(),
        problem: e.to_string(),
    })
}

/// The paper's reading of "chunk = the smallest track": within the outermost zone
/// (Table 2's sizes), each member's first tracks (both surfaces) cut to the
/// smallest of them: the share lost over the five members, and the most any one
/// track loses.
fn first_zone_smallest_track_loss(aligned: &TrackAlignedLayout) -> (f64, f64) {
    use spinstack_sim::device::MemberIndex;
    let mut lost = 0.0;
    let mut raw = 0.0;
    let mut worst: f64 = 0.0;
    // Two stripes: the first tracks of surface 0 and of surface 1 (bands alternate).
    for stripe in [0, 32] {
        let sizes: Vec<u64> = (0..MEMBERS.len() as u32)
            .map(|m| aligned.unit(stripe, MemberIndex(m)).allocated.0)
            .collect();
        let smallest = *sizes.iter().min().unwrap_or(&0);
        let largest = *sizes.iter().max().unwrap_or(&1);
        worst = worst.max((largest - smallest) as f64 / largest as f64);
        lost += sizes.iter().map(|&s| (s - smallest) as f64).sum::<f64>();
        raw += sizes.iter().sum::<u64>() as f64;
    }
    (lost / raw, worst)
}

mod report;
use report::{claims, data_table, figure, notes};
