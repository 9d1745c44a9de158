//! Pieces the experiments share: the random request streams of the traxtents
//! paper's §5.2 and one measured point (fresh drive, closed loop); the file
//! experiments' cached indirect blocks.

use crate::driver::{run_closed_loop, Access, Run, Workload};
use crate::drives::Zone;
use crate::harness::RunContext;
use crate::LabError;
use spinstack_disk::drive::{Drive, DriveOptions};
use spinstack_disk::spec::DriveSpec;
use spinstack_fs::cache::PageCache;
use spinstack_fs::indirect::IndirectMap;
use spinstack_fs::readahead::ReadAhead;
use spinstack_fs::scan::ScannedFile;
use spinstack_fs::{BlockNumber, BlockRun, IndirectBlocks};
use spinstack_sim::parallel::map_in_order;
use spinstack_sim::request::{Operation, TimeBreakdown};
use spinstack_sim::rng::SplitMix64;
use spinstack_sim::units::{Lbn, Sectors};

/// Where a request starts relative to track boundaries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Alignment {
    /// Starts on the first LBN of a track (a traxtent).
    Aligned,
    /// Starts anywhere (a track-unaware system).
    Unaligned,
}

impl Alignment {
    pub fn name(self) -> &'static str {
        match self {
            Alignment::Aligned => "aligned",
            Alignment::Unaligned => "unaligned",
        }
    }
}

/// `count` random requests of `sectors` inside the zone (§5.2: "5000 random requests
/// within the first zone of the disk").
pub fn random_accesses(
    zone: &Zone,
    sectors: Sectors,
    alignment: Alignment,
    operation: Operation,
    count: usize,
    rng: &mut SplitMix64,
) -> Vec<Access> {
    let last_start = zone.end().0 - sectors.0;
    // Aligned starts: tracks whose first LBN leaves room for the whole request.
    let aligned_starts = zone
        .tracks
        .iter()
        .take_while(|t| t.first.0 <= last_start)
        .count();
    assert!(
        aligned_starts > 0,
        "request of {sectors} does not fit in the zone"
    );
    (0..count)
        .map(|_| {
            let lbn = match alignment {
                Alignment::Aligned => zone.tracks[rng.below(aligned_starts as u64) as usize].first,
                Alignment::Unaligned => {
                    Lbn(zone.first().0 + rng.below(last_start - zone.first().0 + 1))
                }
            };
            Access {
                operation,
                lbn,
                sectors,
            }
        })
        .collect()
}

/// One point of a figure: what to run and on which drive.
pub struct Point<'a> {
    pub spec: &'a DriveSpec,
    pub zone: &'a Zone,
    pub workload: Workload,
    pub alignment: Alignment,
    pub operation: Operation,
    pub sectors: Sectors,
    pub requests: usize,
    /// Seeds the request stream; the label names the series so each has its own.
    pub seed: u64,
}

/// What stays fixed along one curve of a figure; only the request size varies.
#[derive(Clone, Copy)]
pub struct Curve<'a> {
    pub spec: &'a DriveSpec,
    pub zone: &'a Zone,
    pub workload: Workload,
    pub alignment: Alignment,
    pub operation: Operation,
}

impl<'a> Curve<'a> {
    /// The aligned and the unaligned curve (in that order) of one workload.
    pub fn aligned_and_unaligned(
        spec: &'a DriveSpec,
        zone: &'a Zone,
        workload: Workload,
        operation: Operation,
    ) -> [Curve<'a>; 2] {
        [Alignment::Aligned, Alignment::Unaligned].map(|alignment| Curve {
            spec,
            zone,
            workload,
            alignment,
            operation,
        })
    }

    /// This curve's point at `sectors`, with the run's request count and seed.
    pub fn point(self, sectors: Sectors, context: &RunContext) -> Point<'a> {
        Point {
            spec: self.spec,
            zone: self.zone,
            workload: self.workload,
            alignment: self.alignment,
            operation: self.operation,
            sectors,
            requests: context.scale.requests_per_point,
            seed: context.seed,
        }
    }
}

/// Every curve at every size, curve by curve (so a point's index divided by
/// `sizes.len()` is its curve's index).
pub fn curve_points<'a>(
    curves: impl IntoIterator<Item = Curve<'a>>,
    sizes: &[Sectors],
    context: &RunContext,
) -> Vec<Point<'a>> {
    curves
        .into_iter()
        .flat_map(|curve| {
            sizes
                .iter()
                .map(move |&sectors| curve.point(sectors, context))
        })
        .collect()
}

/// Size the progress bar to `points` and run them all (see `measure_all`).
pub fn measure_points(points: &[Point], context: &RunContext) -> Result<Vec<Run>, LabError> {
    context.progress.set_length(points.len() as u64);
    measure_all(points, context.progress)
}

/// Run one point on a freshly built drive (cold cache, head at cylinder 0).
pub fn measure(point: &Point) -> Result<Run, LabError> {
    let label = format!(
        "{}/{}/{}/{:?}/{}",
        point.spec.name,
        point.workload.name(),
        point.alignment.name(),
        point.operation,
        point.sectors.0
    );
    let mut rng = SplitMix64::for_label(point.seed, &label);
    let accesses = random_accesses(
        point.zone,
        point.sectors,
        point.alignment,
        point.operation,
        point.requests + crate::driver::WARM_UP_REQUESTS,
        &mut rng,
    );
    let mut drive =
        Drive::new(point.spec, DriveOptions::default()).map_err(|e| LabError::Drive {
            name: point.spec.name.clone(),
            problem: e.to_string(),
        })?;
    run_closed_loop(&mut drive, point.workload, &accesses).map_err(|e| LabError::Run {
        id: label,
        problem: e.to_string(),
    })
}

/// Mean of each breakdown component over the measured requests, in milliseconds.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct MeanBreakdown {
    pub overhead_ms: f64,
    pub seek_ms: f64,
    pub rotational_latency_ms: f64,
    pub head_switch_ms: f64,
    pub media_transfer_ms: f64,
    pub bus_transfer_ms: f64,
    pub overlap_ms: f64,
    pub response_ms: f64,
}

pub fn mean_breakdown(run: &Run) -> MeanBreakdown {
    let measured = run.measured();
    let n = measured.len().max(1) as f64;
    let mean = |f: &dyn Fn(&TimeBreakdown) -> u64| {
        measured
            .iter()
            .map(|c| f(&c.breakdown()) as f64)
            .sum::<f64>()
            / n
            / 1e6
    };
    MeanBreakdown {
        overhead_ms: mean(&|b| b.overhead.0),
        seek_ms: mean(&|b| b.seek.0),
        rotational_latency_ms: mean(&|b| b.rotational_latency.0),
        head_switch_ms: mean(&|b| b.head_switch.0),
        media_transfer_ms: mean(&|b| b.media_transfer.0),
        bus_transfer_ms: mean(&|b| b.bus_transfer.0),
        overlap_ms: mean(&|b| b.overlap.0),
        response_ms: measured
            .iter()
            .map(|c| c.response_time().as_ms_f64())
            .sum::<f64>()
            / n,
    }
}

/// Request sizes as fractions of a track: `steps` equal steps up to `tracks` tracks,
/// plus the small sizes (1, 8, 16, 32, 64 sectors) where curves bend most.
pub fn sizes_up_to(track: Sectors, tracks: u64, steps_per_track: u64) -> Vec<Sectors> {
    let mut sizes: Vec<u64> = vec![1, 8, 16, 32, 64];
    for step in 1..=tracks * steps_per_track {
        sizes.push((track.0 * step).div_ceil(steps_per_track));
    }
    sizes.sort_unstable();
    sizes.dedup();
    sizes.into_iter().map(Sectors).collect()
}

/// Index of the track-sized request in `sizes`, the size most claims are about.
pub fn track_size_index(sizes: &[Sectors], track: Sectors) -> usize {
    sizes
        .iter()
        .position(|&s| s == track)
        .expect("track size is a point")
}

/// Mean seek of random reads in the Atlas 10K II's first zone (traxtents §5.2:
/// "Subtracting 2.2 ms average seek time from the head time yields 6.1 ms"); the
/// traxtents experiments explain misses against it.
pub const PAPER_SEEK_MS: f64 = 2.2;

/// Kilobytes (1024 bytes) in `sectors`.
pub fn kilobytes(sectors: Sectors) -> f64 {
    sectors.bytes() as f64 / 1024.0
}

/// Relative reduction from `before` to `after`, as a percentage.
pub fn reduction_percent(before: f64, after: f64) -> f64 {
    100.0 * (before - after) / before
}

/// Run every point, using the machine's cores, and return the runs in the order of
/// `points` (so results never depend on thread timing). Advances `progress` by one
/// per finished point.
pub fn measure_all(
    points: &[Point],
    progress: &indicatif::ProgressBar,
) -> Result<Vec<Run>, LabError> {
    map_in_order(points, measure, || progress.inc(1))
        .into_iter()
        .collect()
}

/// Measures every item on all cores, results in the order of `items` (so they
/// never depend on thread timing), one progress step per finished item: the
/// file-system experiments' variants.
pub fn measure_each<T: Sync, M: Send>(
    items: &[T],
    context: &RunContext,
    measure: impl Fn(&T) -> Result<M, LabError> + Sync,
) -> Result<Vec<M>, LabError> {
    context.progress.set_length(items.len() as u64);
    map_in_order(items, measure, || context.progress.inc(1))
        .into_iter()
        .collect()
}

/// "By component, unaligned minus aligned: ..." — where alignment's saving comes
/// from, in the drive's own breakdown (whose components add up to the response).
pub fn component_differences(unaligned: &MeanBreakdown, aligned: &MeanBreakdown) -> String {
    let exposed_bus = |b: &MeanBreakdown| b.bus_transfer_ms - b.overlap_ms;
    format!(
        "by component, unaligned minus aligned: rotational latency {:+.2} ms, head switch \
         {:+.2} ms, overhead {:+.2} ms, seek {:+.2} ms, media transfer {:+.2} ms, bus \
         transfer not overlapped with media work {:+.2} ms",
        unaligned.rotational_latency_ms - aligned.rotational_latency_ms,
        unaligned.head_switch_ms - aligned.head_switch_ms,
        unaligned.overhead_ms - aligned.overhead_ms,
        unaligned.seek_ms - aligned.seek_ms,
        unaligned.media_transfer_ms - aligned.media_transfer_ms,
        exposed_bus(unaligned) - exposed_bus(aligned)
    )
}

/// The response time's six components, in milliseconds: overhead, seek, rotational
/// latency, head switch, media transfer and bus transfer not overlapped with media
/// work. By the breakdown's contract (spinstack-sim, request.rs) they add up to the
/// response time.
pub fn components_ms(b: &MeanBreakdown) -> [f64; 6] {
    [
        b.overhead_ms,
        b.seek_ms,
        b.rotational_latency_ms,
        b.head_switch_ms,
        b.media_transfer_ms,
        b.bus_transfer_ms - b.overlap_ms,
    ]
}

/// "overhead a + seek b + ... = c ms": a mean response time in the drive's own
/// components (which add up to it).
pub fn decomposition(b: &MeanBreakdown) -> String {
    let [overhead, seek, rotational_latency, head_switch, media_transfer, exposed_bus] =
        components_ms(b);
    format!(
        "overhead {overhead:.2} + seek {seek:.2} + rotational latency \
         {rotational_latency:.2} + head switch {head_switch:.2} + media transfer \
         {media_transfer:.2} + bus transfer not overlapped {exposed_bus:.2} = {:.2} ms",
        b.response_ms
    )
}

/// What the file experiments' summaries say about indirect blocks.
pub fn indirect_blocks_note() -> String {
    "Files carry their file system's indirect blocks where it places them: after \
     the first 12 data blocks, then one per 1,024 blocks (ext2, 4 MB) or 2,048 \
     (FFS, 16 MB), the double-indirect block beside the first of its range, so a \
     file's data runs break there by a block (a track holding one is read as two \
     requests). They start cached (the files were written in the same boot: their \
     writer updated each once per block it maps, which keeps it on Linux's active \
     list); a read fetches one only if it was evicted since, synchronously and \
     before the data it maps. None is written."
        .to_string()
}

/// The file experiments start with their files' indirect blocks cached: the
/// files were written in the same boot, and their writer updated each
/// indirect block once per block it maps (1,024 or 2,048 times), which puts it
/// on Linux's active list, out of reach of the use-once data streaming past
/// (1 MB of them per GB of ext2 file). Bonnie writes its file and reads it
/// back in one run; the papers do not say that the other files were read
/// cold. A read fetches only an indirect block that was evicted since.
pub fn cache_indirect_blocks<'a>(
    cache: &mut PageCache,
    files: impl IntoIterator<Item = Option<IndirectMap<'a>>>,
) {
    for map in files.into_iter().flatten() {
        map.warm(cache);
    }
}

/// The scan experiments' files: each file's runs with its indirect blocks
/// (`layout`: the file system's) and a fresh `read_ahead`, the indirect blocks
/// first put in `cache` ([`cache_indirect_blocks`]).
pub fn scanned_files<'a>(
    cache: &mut PageCache,
    layout: Option<IndirectBlocks>,
    runs: &'a [Vec<BlockRun>],
    indirect: &'a [Vec<BlockNumber>],
    read_ahead: impl Fn() -> ReadAhead,
) -> Vec<ScannedFile<'a>> {
    cache_indirect_blocks(
        cache,
        indirect
            .iter()
            .map(|blocks| IndirectMap::new(layout, blocks)),
    );
    runs.iter()
        .zip(indirect)
        .map(|(runs, blocks)| ScannedFile {
            runs,
            indirect: IndirectMap::new(layout, blocks),
            read_ahead: read_ahead(),
        })
        .collect()
}
