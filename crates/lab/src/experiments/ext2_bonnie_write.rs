//! `ext2-bonnie`'s write phase — validation paper §2.5, Fig. 5: "The write
//! phase creates a 1-GB file, which exceeds our 128-MB memory limit";
//! "the expected 3% slowdown for a single stream of sequential disk
//! accesses" (the figure's write bars are not given as numbers in the text).
//!
//! Bonnie's block write ("Writing intelligently") as a program: create the
//! file, `write` 16 KB (`Chunk` = 16384 in Bonnie.c) at a time, `close`; the
//! phase is timed from the first write to the close, with no `fsync` (Bonnie
//! closes "to force as much of the I/O out as we can", which on Linux starts
//! no write-back). Linux 2.6.16 write-back ([`WritePolicy::linux_2_6_16`]:
//! 30 s age, 5 s period, 10% background, 40% throttle, 1024-page passes,
//! 1 MiB requests) over the same device stack as the read phase (plug,
//! host cost per device I/O, catalog `maxtor10kv-czk`) with the drive's write
//! cache on, as the paper ran it (§2.5: "We enabled SCSI cache, disk caching,
//! and prefetch"; the catalog entry's cache is write-through). At the paper's
//! size: a 1 GB file in 128 MB (it runs in about a second). The same write
//! with the write cache off is run beside it as evidence.

use super::validation_host::HostProfile;
use crate::claim::Claim;
use crate::plot::{Figure, PanelContent};
use crate::table::DataTable;
use crate::LabError;
use spinstack_disk::drive::{Drive, DriveOptions};
use spinstack_fs::bonnie;
use spinstack_fs::cache::{PageCache, Replacement};
use spinstack_fs::flush::WritePolicy;
use spinstack_fs::program::{FileHandle, Program, ProgramSetup};
use spinstack_fs::readahead::Policy;
use spinstack_fs::{Allocator, AllocatorConfig};
use spinstack_sim::driver::run;
use spinstack_sim::engine::{Engine, EngineOptions};
use spinstack_sim::request::Operation;
use spinstack_volume::timed::{PlugPolicy, Striped};

/// Bonnie's write at the paper's size: 1 GB in 4 KB blocks, 128 MB of memory.
pub(super) const WRITE_BLOCKS: u64 = 262144;
const WRITE_CACHE_BYTES: u64 = 128 << 20;

/// What one Bonnie write measured.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct BonnieWrite {
    pub seconds: f64,
    pub megabytes_per_second: f64,
    pub writes: u64,
    pub mean_write_kb: f64,
    /// Time the writer waited for write-back (the throttle).
    pub throttled_seconds: f64,
    /// Pages still dirty or in flight when the file was closed.
    pub unwritten_at_close_mb: f64,
    /// Write requests that cross a track boundary.
    pub crossing_writes: u64,
}

/// Bonnie's block write of a `WRITE_BLOCKS` file.
pub(super) fn measure_write(
    spec_name: &str,
    variant: &str,
    config: AllocatorConfig,
    plug: Option<bool>,
    drive_write_cache: bool,
) -> Result<BonnieWrite, LabError> {
    let fail = |problem: String| LabError::Run {
        id: "ext2-bonnie".to_string(),
        problem: format!("write, {variant}: {problem}"),
    };
    let mut spec = crate::drives::spec(spec_name)?;
    if drive_write_cache {
        // Write-back: DiskSim's fast-write level 2 (see the module doc).
        spec.firmware.cache.fast_write_level = 2;
    }
    let drive = Drive::new(&spec, DriveOptions::default()).map_err(|e| fail(e.to_string()))?;
    let map = drive.layout().track_map(&spec.name);
    let allocator = Allocator::new(&map, config).map_err(|e| fail(e.to_string()))?;
    let plug = plug.map(|track_aware| PlugPolicy {
        track_aware,
        ..PlugPolicy::linux26()
    });
    let device = Striped::single(
        drive,
        Some(map.clone()),
        HostProfile::pentium_d_830().device_io,
        plug,
    )
    .map_err(|e| fail(e.to_string()))?;
    let mut engine = Engine::new(EngineOptions::default());
    let id = engine.add_device(device);
    let block_bytes = config.block_size.bytes();
    let setup = ProgramSetup {
        device: id,
        map: &map,
        allocator,
        cache: PageCache::new(WRITE_CACHE_BYTES, block_bytes, Replacement::ActiveInactive)
            .map_err(|e| fail(e.to_string()))?,
        writeback: WritePolicy::linux_2_6_16(),
        read_ahead: Policy::linux_default(),
        cost: HostProfile::pentium_d_830().read_cost(),
    };
    let file = FileHandle(0);
    let steps = bonnie::block_write(file, WRITE_BLOCKS, block_bytes);
    let mut program = Program::new(setup, steps);
    run(&mut engine, &mut program).map_err(|e| fail(e.to_string()))?;
    let report = program.report();
    let closed_at = report.marks.first().copied().unwrap_or(report.elapsed);
    let writes: Vec<_> = report
        .requests
        .iter()
        .filter(|r| r.operation == Operation::Write)
        .collect();
    let unwritten_pages = writes
        .iter()
        .filter(|r| r.done.is_none_or(|done| done > closed_at))
        .map(|r| r.sectors.0 * 512 / block_bytes)
        .sum::<u64>();
    let crossing_writes = writes
        .iter()
        .filter(|r| {
            let end = r.lbn.0 + r.sectors.0;
            map.next_boundary_after(r.lbn).is_some_and(|b| b.0 < end)
        })
        .count() as u64;
    let seconds = closed_at.as_secs_f64();
    Ok(BonnieWrite {
        seconds,
        megabytes_per_second: (WRITE_BLOCKS * block_bytes) as f64 / 1e6 / seconds.max(1e-12),
        writes: writes.len() as u64,
        mean_write_kb: writes.iter().map(|r| r.sectors.0 as f64 / 2.0).sum::<f64>()
            / writes.len().max(1) as f64,
        throttled_seconds: report.throttled.as_secs_f64(),
        unwritten_at_close_mb: (unwritten_pages * block_bytes) as f64 / 1e6,
        crossing_writes,
    })
}

/// The write rows of the experiment's table (same columns as the reads;
/// `slow_requests` holds the writes that cross a track boundary).
pub(super) fn push_rows(data: &mut DataTable, variants: &[String], runs: &[BonnieWrite]) {
    for (variant, m) in variants.iter().zip(runs) {
        data.push(vec![
            "bonnie block write 1 GB".into(),
            variant.clone().into(),
            m.seconds.into(),
            m.megabytes_per_second.into(),
            m.writes.into(),
            m.mean_write_kb.into(),
            m.crossing_writes.into(),
        ]);
    }
}

/// A second bar per variant: the write bandwidth.
pub(super) fn add_bars(figure: &mut Figure, runs: &[BonnieWrite]) {
    let Some(panel) = figure.panels.first_mut() else {
        return;
    };
    panel.y_label = "Bonnie phase".to_string();
    let PanelContent::Bars(bars) = &mut panel.content else {
        return;
    };
    bars.categories = vec!["block read".to_string(), "block write".to_string()];
    for ((_, values), m) in bars.components.iter_mut().zip(runs) {
        values.push(m.megabytes_per_second);
    }
}

pub(super) fn note() -> String {
    "Write phase: Bonnie's block write (16 KB writes, Bonnie.c's Chunk), timed to the \
     close with no fsync, as Bonnie times it; the paper's 1 GB file in 128 MB. Linux 2.6.16 write-back (mm/page-writeback.c): dirty_expire 30 s, \
     dirty_writeback 5 s, dirty_background_ratio 10%, dirty_ratio 40% (of the cache \
     here, of dirtyable memory in Linux), MAX_WRITEBACK_PAGES 1024 per background pass; \
     requests up to 1 MiB, then the plug. The drive as in the read phase with its \
     write cache on (§2.5; DiskSim fast-write level 2), and off as evidence. CPU per \
     write call as per read call."
        .to_string()
}

/// `runs`: conventional, track-aligned, conventional without the plug (write
/// cache on); `through`: conventional and track-aligned with it off.
pub(super) fn claim(runs: &[BonnieWrite], through: &[BonnieWrite]) -> Claim {
    let [conventional, aligned, no_plug] = [runs[0], runs[1], runs[2]];
    let [through_conventional, through_aligned] = [through[0], through[1]];
    let detail = |m: BonnieWrite| {
        format!(
            "{:.1} MB/s, {} write-back requests of {:.0} KB on average ({} crossing a track \
             boundary before the plug, which cuts them when track-aware), throttled {:.2} s of {:.2} s, {:.1} MB not yet on disk at the close (counted \
             as written, as Bonnie's timing does)",
            m.megabytes_per_second,
            m.writes,
            m.mean_write_kb,
            m.crossing_writes,
            m.throttled_seconds,
            m.seconds,
            m.unwritten_at_close_mb
        )
    };
    Claim::new(
        "Bonnie write: track-aligned / conventional bandwidth",
        "§2.5, Fig. 5",
        "ratio",
        0.97,
        aligned.megabytes_per_second / conventional.megabytes_per_second,
    )
    .explain(format!(
        "Write cache on — conventional: {}. Track-aligned: {}. Conventional without the \
         plug: {}. Writes are buffered: the writer fills the cache at CPU speed until 40% \
         of it is dirty or in flight, then waits while write-back streams the file out; \
         the drive's write cache takes each request at once and writes the stream in LBN \
         order, so where the host's requests end does not matter and both stacks write \
         at the media rate less what the track-aligned one's excluded blocks take. With \
         the write cache off (evidence) — conventional: {}; track-aligned: {}; ratio \
         {:.3}: each write then waits for the media, the conventional 1 MiB requests \
         start and end mid-track and wait part of a revolution each, while the \
         track-aware plug cuts the track-aligned stack's requests into whole tracks \
         written with zero latency.",
        detail(conventional),
        detail(aligned),
        detail(no_plug),
        detail(through_conventional),
        detail(through_aligned),
        through_aligned.megabytes_per_second / through_conventional.megabytes_per_second
    ))
}
