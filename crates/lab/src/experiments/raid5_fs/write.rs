//! `raid5-bonnie`'s write phase (validation paper §3, Fig. 8: "the write
//! bandwidth for the three system settings falls within a similar range due
//! to buffered writes").
//!
//! Bonnie's block write as `ext2-bonnie` runs it on one drive (16 KB writes,
//! timed from the first write to the close with no `fsync`, Linux 2.6.16
//! write-back: see `ext2_bonnie_write`), here through the same volumes,
//! allocators and host costs as the read phase, with the members' write
//! caches on (§2.5's setting — "We enabled SCSI cache, disk caching, and
//! prefetch" —, which §3 does not restate: assumed to carry over) and, as in
//! the read phase, the track-aligned RAID-5's prefetch off: §2.5 said that for
//! Bonnie on one disk, before its diff result led to "for subsequent
//! experiments, we disabled disk firmware prefetch for track-aligned accesses";
//! Fig. 8 is one of those, and `sdparm` sets a drive, not a benchmark phase.
//!
//! How the write-back reaches the RAID: each pass sends the file's dirty
//! pages as disk-contiguous requests of up to 1 MiB. The timed RAID-5 cuts
//! each request at stripe boundaries and plans every stripe piece: a piece
//! covering its stripe's data is a full-stripe write (no reads); a partial
//! one needs what the cheaper of read-modify-write and reconstruct-write
//! reads, less the units its stripe cache (256 stripes) knows whole from
//! earlier writes, and waits for those reads as md 2.6.16 makes it wait
//! (delayed stripes: the reads go when the array's plug is released, 3 ms
//! after it was plugged or when the volume is unplugged, one batch at a
//! time), so later pieces of the same stripe join it and spare reads (see
//! `spinstack_volume::timed::parity::delayed`). md's cache is 256
//! `stripe_head`s of one 4 KB page per member, not 256 whole stripes: with 4
//! KB chunks the two agree; with track-sized units (about 137 pages) a
//! delayed stripe holds the page rows its reads cover, so md holds a few
//! nearly written stripes but under two barely begun ones. With md's 4 KB
//! chunks every page is a whole unit, so a 1 MiB request is 63–64 full
//! stripes and its ragged ends are completed from the stripe cache; with
//! track-sized units a 1 MiB request is under half a stripe (about 2.2 MB of
//! data), so the delay matters there: the run's stripe-write counters show
//! it, and an evidence run plans each piece on arrival instead.

use super::super::validation_host::HostProfile;
use super::{
    drive_options, maps, volume_spec, Raid, Variant, BONNIE_BLOCKS, CACHE_BYTES, TRACK_ALIGNED,
    VARIANTS,
};
use crate::harness::RunContext;
use crate::LabError;
use spinstack_disk::drive::DriveOptions;
use spinstack_fs::bonnie;
use spinstack_fs::cache::{PageCache, Replacement};
use spinstack_fs::flush::WritePolicy;
use spinstack_fs::program::{FileHandle, Program, ProgramSetup};
use spinstack_fs::readahead::Policy;
use spinstack_fs::scan::ReadCost;
use spinstack_fs::{Allocator, AllocatorConfig};
use spinstack_sim::driver::run;
use spinstack_sim::engine::{Engine, EngineOptions};
use spinstack_sim::request::Operation;
use spinstack_sim::units::Nanoseconds;
use spinstack_volume::build::build;
use spinstack_volume::config::VolumeSpec;
use spinstack_volume::timed::{MemberStats, StripeWriteCounters};

/// What one Bonnie block write measured.
#[derive(Clone, Debug, Default)]
pub(crate) struct WriteMeasured {
    /// From the first write to the close.
    pub(crate) seconds: f64,
    pub(crate) megabytes_per_second: f64,
    /// The writer's CPU time (system calls and copies).
    pub(crate) cpu_seconds: f64,
    /// Time the writer waited in the throttle for write-back.
    pub(crate) throttled_seconds: f64,
    /// File-system write requests to the volume (the whole run, also after the
    /// close), and their mean size.
    pub(crate) requests: u64,
    pub(crate) mean_request_kb: f64,
    /// Mean time from a write request's issue to its completion.
    pub(crate) mean_request_ms: f64,
    /// Dirty or in-flight data when the file was closed (counted as written, as
    /// Bonnie's timing does).
    pub(crate) unwritten_at_close_mb: f64,
    /// When the last page reached the volume (the run goes on after the close).
    pub(crate) all_written_seconds: f64,
    pub(crate) stripes: StripeWriteCounters,
    pub(crate) members: Vec<MemberStats>,
    /// The host's CPU time setting up member I/Os.
    pub(crate) member_io_cpu_seconds: f64,
}

impl WriteMeasured {
    /// Time the writer was neither computing nor throttled.
    pub(crate) fn other_seconds(&self) -> f64 {
        (self.seconds - self.cpu_seconds - self.throttled_seconds).max(0.0)
    }
    pub(crate) fn stripe_writes(&self) -> u64 {
        let s = &self.stripes;
        s.full_stripe + s.read_modify_write + s.reconstruct_write + s.degraded
    }
    pub(crate) fn full_stripe_share(&self) -> f64 {
        self.stripes.full_stripe as f64 / self.stripe_writes().max(1) as f64
    }
    /// Member data read before writing, in MB.
    pub(crate) fn pre_read_mb(&self) -> f64 {
        self.stripes.pre_read_sectors as f64 * 512.0 / 1e6
    }
    /// Mean share of the time to the last write each member had requests
    /// outstanding.
    pub(crate) fn member_busy_share(&self) -> f64 {
        let busy: u64 = self.members.iter().map(|m| m.busy.0).sum();
        busy as f64 / 1e9 / self.members.len().max(1) as f64 / self.all_written_seconds.max(1e-12)
    }
}

/// When a RAID-5 stripe write that needs pre-reads does them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Stripes {
    /// md 2.6.16: when the array's plug releases it (delayed stripes).
    Delayed,
    /// Evidence: at once, planned on arrival (delayed stripes off).
    PlannedOnArrival,
}

/// Bonnie's block write of a `blocks`-block file over `variant`'s volume.
pub(crate) fn measure_write(
    variant: Variant,
    stripes: Stripes,
    blocks: u64,
    id: &str,
) -> Result<WriteMeasured, LabError> {
    let fail = |problem: String| LabError::Run {
        id: id.to_string(),
        problem: format!("write, {}: {problem}", variant.name),
    };
    let options = DriveOptions {
        write_back_cache: true,
        ..drive_options(variant)
    };
    let spec = VolumeSpec {
        delayed_stripes: stripes == Stripes::Delayed,
        ..volume_spec(variant)
    };
    let volume = build(&spec, &options)
        .map_err(|e| fail(e.to_string()))?
        .volume;
    let (allocation_map, map) = maps(variant, &volume).map_err(fail)?;
    let config = match variant.raid {
        Raid::Md => AllocatorConfig::ext2(),
        Raid::TrackAligned { .. } => AllocatorConfig::ext2_track_aligned(),
    };
    let allocator = Allocator::new(&allocation_map, config).map_err(|e| fail(e.to_string()))?;
    let block_bytes = config.block_size.bytes();
    let mut engine = Engine::new(EngineOptions::default());
    let device = engine.add_device(volume);
    let setup = ProgramSetup {
        device,
        map: &map,
        allocator,
        cache: PageCache::new(CACHE_BYTES, block_bytes, Replacement::ActiveInactive)
            .map_err(|e| fail(e.to_string()))?,
        writeback: WritePolicy::linux_2_6_16(),
        // The program never reads: the policy only has to exist.
        read_ahead: Policy::linux_default(),
        cost: if variant.cpu {
            HostProfile::pentium_d_830().read_cost()
        } else {
            ReadCost {
                per_call: Nanoseconds::ZERO,
                per_kib: Nanoseconds::ZERO,
            }
        },
    };
    let file = FileHandle(0);
    let steps = bonnie::block_write(file, blocks, block_bytes);
    let mut program = Program::new(setup, steps);
    run(&mut engine, &mut program).map_err(|e| fail(e.to_string()))?;
    let report = program.report();
    let closed_at = report.marks.first().copied().unwrap_or(report.elapsed);
    let writes: Vec<_> = report
        .requests
        .iter()
        .filter(|r| r.operation == Operation::Write)
        .collect();
    let unwritten_pages: u64 = writes
        .iter()
        .filter(|r| r.done.is_none_or(|done| done > closed_at))
        .map(|r| r.sectors.0 * 512 / block_bytes)
        .sum();
    let all_written = writes
        .iter()
        .filter_map(|r| r.done)
        .max()
        .unwrap_or(closed_at);
    let sectors: u64 = writes.iter().map(|r| r.sectors.0).sum();
    let latencies: Vec<f64> = writes
        .iter()
        .filter_map(|r| r.done.map(|done| (done - r.issued).as_secs_f64() * 1e3))
        .collect();
    let volume = &engine.devices()[0];
    let seconds = closed_at.as_secs_f64();
    Ok(WriteMeasured {
        seconds,
        megabytes_per_second: (blocks * block_bytes) as f64 / 1e6 / seconds.max(1e-12),
        cpu_seconds: report.cpu.as_secs_f64(),
        throttled_seconds: report.throttled.as_secs_f64(),
        requests: writes.len() as u64,
        mean_request_kb: sectors as f64 / 2.0 / writes.len().max(1) as f64,
        mean_request_ms: latencies.iter().sum::<f64>() / latencies.len().max(1) as f64,
        unwritten_at_close_mb: (unwritten_pages * block_bytes) as f64 / 1e6,
        all_written_seconds: all_written.as_secs_f64(),
        stripes: volume.stripe_write_counters().unwrap_or_default(),
        members: volume.member_stats(),
        member_io_cpu_seconds: volume.host_busy().as_secs_f64(),
    })
}

/// Whether two variants write alike: read-ahead does not touch the write path,
/// so a variant differing only in its window shares the other's write run.
pub(super) fn writes_alike(a: Variant, b: Variant) -> bool {
    a.raid == b.raid && a.plug == b.plug && a.cpu == b.cpu
}

/// The first variant each variant writes alike (itself, or an earlier one).
pub(super) fn write_source(index: usize) -> usize {
    (0..index)
        .find(|&earlier| writes_alike(VARIANTS[earlier], VARIANTS[index]))
        .unwrap_or(index)
}

/// Write runs: one per distinct write path, and the evidence run without md's
/// delayed stripes.
pub(super) fn write_runs_needed() -> usize {
    (0..VARIANTS.len())
        .filter(|&i| write_source(i) == i)
        .count()
        + 1
}

/// Bonnie's write phase: per variant (in `VARIANTS` order) and the evidence run.
pub(crate) struct WritePhase {
    pub(crate) per_variant: Vec<WriteMeasured>,
    /// The track-aligned RAID-5 planning each stripe write on arrival (md's
    /// delayed stripes off).
    pub(crate) undelayed: WriteMeasured,
}

/// Bonnie's block write over every variant, one run per distinct write path.
pub(super) fn run_writes(context: &RunContext, id: &str) -> Result<WritePhase, LabError> {
    let mut per_variant: Vec<WriteMeasured> = Vec::new();
    for (index, &variant) in VARIANTS.iter().enumerate() {
        let source = write_source(index);
        let measured = if source == index {
            let m = measure_write(variant, Stripes::Delayed, BONNIE_BLOCKS, id)?;
            context.progress.inc(1);
            m
        } else {
            per_variant[source].clone()
        };
        per_variant.push(measured);
    }
    let undelayed = measure_write(TRACK_ALIGNED, Stripes::PlannedOnArrival, BONNIE_BLOCKS, id)?;
    context.progress.inc(1);
    Ok(WritePhase {
        per_variant,
        undelayed,
    })
}
