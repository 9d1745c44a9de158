//! `ext2-bonnie` and `ext2-diff` — the validation paper's single-disk file-system
//! results on the Maxtor Atlas 10K V (§2.5): "Figure 5 shows the expected 3%
//! slowdown for a single stream of sequential disk accesses, where skipped
//! blocks that cross track boundaries can no longer contribute to the
//! bandwidth"; "Figure 6 shows that track-aligned accesses are almost twice as
//! fast as the normal case ... Disabling on-disk prefetch further speeds up
//! track-aligned access by another 8%."
//!
//! Built: Bonnie's sequential block read and block write (the write phase in
//! `ext2_bonnie_write`) and `diff --speed-large-files` (two files read
//! in turn), through `spinstack-fs` under Linux 2.6.16 ext2 (128 KB read-ahead
//! window, the 3 ms / 4-request plug) and the paper's track-aligned ext2
//! (boundary-crossing blocks as bad blocks, preallocation to the track
//! boundary, track-aligned read-ahead, track-aware plug), on catalog drive
//! `maxtor10kv-czk`. A conventional run without the plug is shown beside them
//! as evidence for the explanation of the Bonnie miss. At the paper's sizes: a
//! 1 GB Bonnie file (larger than the 128 MB of RAM) and two 512 MB files for diff
//! (earlier runs scaled them to 64 MB and 2 × 32 MB).

use super::ext2_bonnie_write as bonnie_write;
use super::validation_host::HostProfile;
use crate::claim::{Claim, Tolerance};
use crate::drives;
use crate::harness::{Experiment, Outcome, RunContext};
use crate::plot::{Bars, Figure, LegendCorner, Panel, PanelContent};
use crate::table::DataTable;
use crate::LabError;
use spinstack_disk::drive::{Drive, DriveOptions};
use spinstack_fs::cache::{PageCache, Replacement};
use spinstack_fs::readahead::{Policy, ReadAhead};
use spinstack_fs::scan::{Scan, ScanReport, ScanSetup};
use spinstack_fs::{Allocator, AllocatorConfig};
use spinstack_sim::driver::run;
use spinstack_sim::engine::{Engine, EngineOptions};
use spinstack_volume::timed::{PlugPolicy, Striped};

pub struct Ext2Bonnie;
pub struct Ext2Diff;

/// The validation paper's drive (its Table 2 CZK variant).
pub(super) const MAXTOR: &str = "maxtor10kv-czk";
/// The validation runs' memory limit (§2.5: "our 128-MB memory limit").
const CACHE_BYTES: u64 = 128 << 20;
/// The paper's sizes in 4 KB blocks: 1 GiB for Bonnie, 512 MiB per diff file.
const BONNIE_BLOCKS: u64 = 262_144;
const DIFF_FILE_BLOCKS: u64 = 131_072;
/// Pages per `read` call: 8 KB (assumed; neither Bonnie's block size nor
/// diff's buffer is stated in the paper).
const READ_PAGES: u64 = 2;

#[derive(Clone, Copy)]
struct Variant {
    name: &'static str,
    config: fn() -> AllocatorConfig,
    policy: fn() -> Policy,
    /// `None`: no plug; `Some(track_aware)`: Linux 2.6's plug.
    plug: Option<bool>,
    drive_prefetch: bool,
}

const CONVENTIONAL: Variant = Variant {
    name: "conventional",
    config: AllocatorConfig::ext2,
    policy: Policy::linux_default,
    plug: Some(false),
    drive_prefetch: true,
};
const TRACK_ALIGNED: Variant = Variant {
    name: "track-aligned",
    config: AllocatorConfig::ext2_track_aligned,
    policy: || Policy::TrackAligned,
    plug: Some(true),
    drive_prefetch: true,
};
const TRACK_ALIGNED_NO_PREFETCH: Variant = Variant {
    name: "track-aligned, no disk prefetch",
    drive_prefetch: false,
    ..TRACK_ALIGNED
};
const CONVENTIONAL_NO_PLUG: Variant = Variant {
    name: "conventional, no plug (evidence)",
    plug: None,
    ..CONVENTIONAL
};

#[derive(Clone, Copy, Debug, Default)]
struct Measured {
    seconds: f64,
    megabytes_per_second: f64,
    requests: u64,
    mean_request_kb: f64,
    /// File-system requests that took longer than one revolution from issue
    /// to completion (a lost revolution or a plug wait).
    slow_requests: u64,
}

fn measure(variant: Variant, files: usize, blocks: u64, id: &str) -> Result<Measured, LabError> {
    let fail = |problem: String| LabError::Run {
        id: id.to_string(),
        problem: format!("{}: {problem}", variant.name),
    };
    let spec = drives::spec(MAXTOR)?;
    let options = DriveOptions {
        // sdparm DPTL=0 (§2.2): no prefetch, the read cache stays on.
        read_ahead_disabled: !variant.drive_prefetch,
        ..DriveOptions::default()
    };
    let drive = Drive::new(&spec, options).map_err(|e| fail(e.to_string()))?;
    let revolution_s = 60.0 / f64::from(spec.mechanics.rpm);
    let map = drive.layout().track_map(&spec.name);
    let config = (variant.config)();
    let mut allocator = Allocator::new(&map, config).map_err(|e| fail(e.to_string()))?;
    // Written 8 blocks at a time, as a writer extends them.
    let (runs, indirect): (Vec<_>, Vec<_>) =
        super::file_layout::lay_out(&mut allocator, files, blocks)
            .map_err(fail)?
            .into_iter()
            .unzip();
    let plug = variant.plug.map(|track_aware| PlugPolicy {
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
    let id_in_engine = engine.add_device(device);
    let mut setup = ScanSetup {
        device: id_in_engine,
        map: &map,
        block_size: config.block_size,
        read_pages: READ_PAGES,
        cost: HostProfile::pentium_d_830().read_cost(),
        cache: PageCache::new(
            CACHE_BYTES,
            config.block_size.bytes(),
            Replacement::ActiveInactive,
        )
        .map_err(|e| fail(e.to_string()))?,
    };
    let scanned =
        super::common::scanned_files(&mut setup.cache, config.indirect, &runs, &indirect, || {
            ReadAhead::new((variant.policy)())
        });
    let mut host = Scan::new(setup, scanned);
    run(&mut engine, &mut host).map_err(|e| fail(e.to_string()))?;
    let bytes = files as u64 * blocks * config.block_size.bytes();
    Ok(summarise(host.report(), bytes, revolution_s))
}

fn summarise(report: &ScanReport, bytes: u64, revolution_s: f64) -> Measured {
    let sectors: u64 = report.requests.iter().map(|r| r.sectors.0).sum();
    let count = report.requests.len().max(1) as f64;
    let slow = report
        .requests
        .iter()
        .filter(|r| {
            r.done
                .is_some_and(|done| (done - r.issued).as_secs_f64() > revolution_s)
        })
        .count() as u64;
    let seconds = report.elapsed.as_secs_f64();
    Measured {
        seconds,
        megabytes_per_second: bytes as f64 / 1e6 / seconds.max(1e-12),
        requests: report.requests.len() as u64,
        mean_request_kb: sectors as f64 / 2.0 / count,
        slow_requests: slow,
    }
}

fn data_table(workload: &str, variants: &[Variant], runs: &[Measured]) -> DataTable {
    let mut data = DataTable::new(&[
        "workload",
        "variant",
        "seconds",
        "mb_per_s",
        "requests",
        "mean_request_kb",
        "slow_requests",
    ]);
    for (variant, m) in variants.iter().zip(runs) {
        data.push(vec![
            workload.into(),
            variant.name.into(),
            m.seconds.into(),
            m.megabytes_per_second.into(),
            m.requests.into(),
            m.mean_request_kb.into(),
            m.slow_requests.into(),
        ]);
    }
    data
}

fn bar_figure(title: &str, axis: &str, variants: &[Variant], values: Vec<f64>) -> Figure {
    Figure {
        panels: vec![Panel {
            title: title.to_string(),
            // Bars are horizontal: x is the value axis.
            x_label: axis.to_string(),
            y_label: "variant".to_string(),
            content: PanelContent::Bars(Bars {
                categories: vec!["ours".to_string()],
                components: variants
                    .iter()
                    .zip(values)
                    .map(|(v, value)| (v.name.to_string(), vec![value]))
                    .collect(),
                stacked: false,
            }),
            legend: LegendCorner::UpperRight,
        }],
    }
}

fn run_all(
    variants: &[Variant],
    files: usize,
    blocks: u64,
    context: &RunContext,
    id: &str,
) -> Result<Vec<Measured>, LabError> {
    super::common::measure_each(variants, context, |&variant| {
        measure(variant, files, blocks, id)
    })
}

fn common_notes() -> String {
    format!(
        "Linux 2.6.16 ext2: 4 KB blocks, 32768-block groups, 8-block preallocation; \
     read-ahead window up to 128 KB (VM_MAX_READAHEAD); plug 3 ms / 4 requests \
     (unplug_delay, unplug_thresh); the reader unplugs the queue when it waits for a \
     page. {} Cache 128 MB (§2.5). Drive: catalog maxtor10kv-czk (hand-made from the \
     paper's Tables 1–2 and §2.3; its firmware cache follows {}).",
        HostProfile::pentium_d_830().note("device I/O"),
        drives::cache_rules(MAXTOR),
    )
}

impl Experiment for Ext2Bonnie {
    fn id(&self) -> &'static str {
        "ext2-bonnie"
    }
    fn title(&self) -> &'static str {
        "Bonnie sequential block read, ext2 vs track-aligned ext2, Maxtor Atlas 10K V (validation Fig. 5)"
    }
    fn run(&self, context: &RunContext) -> Result<Outcome, LabError> {
        let variants = [CONVENTIONAL, TRACK_ALIGNED, CONVENTIONAL_NO_PLUG];
        let runs = run_all(&variants, 1, BONNIE_BLOCKS, context, self.id())?;
        let [conventional, aligned, no_plug] = [runs[0], runs[1], runs[2]];
        let write = |v: &Variant, cache: bool| {
            bonnie_write::measure_write(MAXTOR, v.name, (v.config)(), v.plug, cache)
        };
        let write_runs = variants
            .iter()
            .map(|v| write(v, true))
            .collect::<Result<Vec<_>, LabError>>()?;
        let write_through = [CONVENTIONAL, TRACK_ALIGNED]
            .iter()
            .map(|v| write(v, false))
            .collect::<Result<Vec<_>, LabError>>()?;
        let mut claims = vec![
            Claim::new(
                "Bonnie read: track-aligned / conventional bandwidth",
                "§2.5, Fig. 5",
                "ratio",
                0.97,
                aligned.megabytes_per_second / conventional.megabytes_per_second,
            )
            .explain_if_missed(format!(
                "Conventional: {:.1} MB/s, {} of its {} requests took longer than a \
                 revolution from issue to completion; without the plug the same stack \
                 reads {:.1} MB/s ({} slow requests). Linux issues each 128 KB ahead \
                 window when the reader enters the previous one, and the window waits \
                 in the plug (one request, below the 4-request threshold, 3 ms timer) \
                 until the reader blocks on it; the drive ({}) reads ahead meanwhile, \
                 so a delayed window finds its blocks buffered unless the read-ahead \
                 stopped. Track-aligned: {:.1} MB/s, its requests ending on track \
                 boundaries, sent at once by the track-aware plug and read whole with \
                 zero latency. Without the plug, track-aligned / conventional = {:.3}: \
                 the excluded blocks (about 1 in {:.0} of 4 KB blocks on ~1,100-sector \
                 tracks) against what zero-latency whole-track reads save in track \
                 skew, where the paper saw 3% lost.",
                conventional.megabytes_per_second,
                conventional.slow_requests,
                conventional.requests,
                no_plug.megabytes_per_second,
                no_plug.slow_requests,
                drives::cache_rules(MAXTOR),
                aligned.megabytes_per_second,
                aligned.megabytes_per_second / no_plug.megabytes_per_second,
                1100.0 / 8.0,
            )),
            Claim::with_tolerance(
                "Bonnie read, track-aligned: mean request size (one track ≈ 550 KB)",
                "§2.4 (track-sized fetches)",
                "KB",
                550.0,
                aligned.mean_request_kb,
                Tolerance::Relative(0.25),
            )
            .explain_if_missed(
                "The first request of the file and those clipped at group boundaries \
                 are shorter than a track; the outer tracks hold 1,144 and 1,092 sectors.",
            ),
        ];
        claims.push(bonnie_write::claim(&write_runs, &write_through));
        let mut data = data_table("bonnie block read 1 GB", &variants, &runs);
        bonnie_write::push_rows(
            &mut data,
            &variants.map(|v| v.name.to_string()),
            &write_runs,
        );
        bonnie_write::push_rows(
            &mut data,
            &[CONVENTIONAL, TRACK_ALIGNED]
                .map(|v| format!("{}, drive write cache off (evidence)", v.name)),
            &write_through,
        );
        let mut figure = bar_figure(
            "Bonnie block read and write (1 GB file), Maxtor Atlas 10K V",
            "bandwidth (MB/s)",
            &variants,
            runs.iter().map(|m| m.megabytes_per_second).collect(),
        );
        bonnie_write::add_bars(&mut figure, &write_runs);
        Ok(Outcome {
            data,
            figure,
            claims,
            notes: vec![
                "Both phases at the paper's 1 GB (larger than its 128 MB RAM). The paper's number is the \
                 relative drop of Fig. 5's bars as its text states it (3% for a single \
                 sequential stream)."
                    .to_string(),
                bonnie_write::note(),
                common_notes(),
                super::common::indirect_blocks_note(),
            ],
        })
    }
}

impl Experiment for Ext2Diff {
    fn id(&self) -> &'static str {
        "ext2-diff"
    }
    fn title(&self) -> &'static str {
        "diff of two files, ext2 vs track-aligned ext2, Maxtor Atlas 10K V (validation Fig. 6)"
    }
    fn run(&self, context: &RunContext) -> Result<Outcome, LabError> {
        let variants = [
            CONVENTIONAL,
            TRACK_ALIGNED,
            TRACK_ALIGNED_NO_PREFETCH,
            CONVENTIONAL_NO_PLUG,
        ];
        let runs = run_all(&variants, 2, DIFF_FILE_BLOCKS, context, self.id())?;
        let [conventional, aligned, no_prefetch, no_plug] = [runs[0], runs[1], runs[2], runs[3]];
        let claims = vec![
            Claim::new(
                "diff: conventional / track-aligned time ('almost twice as fast')",
                "§2.5, Fig. 6",
                "ratio",
                2.0,
                conventional.seconds / aligned.seconds,
            )
            .explain_if_missed(format!(
                "Conventional {:.3} s ({} requests, mean {:.0} KB, {} slower than a \
                 revolution), track-aligned {:.3} s ({} requests, mean {:.0} KB); the \
                 conventional stack without the plug {:.3} s.",
                conventional.seconds,
                conventional.requests,
                conventional.mean_request_kb,
                conventional.slow_requests,
                aligned.seconds,
                aligned.requests,
                aligned.mean_request_kb,
                no_plug.seconds
            )),
            Claim::new(
                "diff, track-aligned: speed-up from disabling disk prefetch (%)",
                "§2.5, Fig. 6",
                "%",
                8.0,
                100.0 * (aligned.seconds / no_prefetch.seconds - 1.0),
            )
            .explain_if_missed(format!(
                "Track-aligned {:.3} s with the drive's prefetch, {:.3} s without. The \
                 paper's gain comes from firmware prefetch that 'has no regard for track \
                 boundaries' reading past a track while the next track-aligned request \
                 waits; in the model the track-aware plug sends each track-sized request \
                 at once, the next one is always queued at the drive before the current \
                 one's media work ends, and the drive starts no prefetch while a request \
                 waits, so switching prefetch off changes nothing.",
                aligned.seconds, no_prefetch.seconds
            )),
        ];
        Ok(Outcome {
            data: data_table("diff 2 x 512 MB", &variants, &runs),
            figure: bar_figure(
                "diff of two 512 MB files: elapsed time (Maxtor Atlas 10K V)",
                "elapsed (s)",
                &variants,
                runs.iter().map(|m| m.seconds).collect(),
            ),
            claims,
            notes: vec![
                "Two 512 MB files (the paper's size), created one after the other \
                 in one directory, read in turn 8 KB per call. No disk prefetch: the \
                 drive's read-ahead off (sdparm DPTL=0), its read cache on."
                    .to_string(),
                common_notes(),
                super::common::indirect_blocks_note(),
            ],
        })
    }
}
