//! `ext2-streams` — validation paper §2.5, Fig. 7, on the Maxtor Atlas 10K V:
//! multimedia-like streams, one new stream per second, each reading ~500 KB/s
//! sequentially from a random position; the start-up latency of each new
//! stream. Conventionally about 130 streams start within 3 s; at 130 streams a
//! one-track read-ahead window cuts the latency by ~30% and track-aligned
//! access by ~55%.
//!
//! Built with `spinstack_fs::streams` over conventional ext2 (128 KB window,
//! Linux's plug), ext2 with a one-track window (not aligned), and the paper's
//! track-aligned ext2 (track-aware plug, disk prefetch off as the paper ran it
//! "for subsequent experiments"). What the paper leaves open, and what we
//! assume (each named where it is set):
//! - the data: "randomly selects a disk position" — one file over most of the
//!   disk (64 GB of its 73 GB), each stream at a random page of it;
//! - the program: each stream reads one second of data (500 KB) per call and
//!   then sleeps a second ("at around 500KB/sec": the rate is about, not
//!   exactly, 500 KB/s, falling as calls slow down); its start-up latency is
//!   the return of its first call (its first second of playback buffered); the
//!   time to its first byte is kept in `data.csv` beside it; the script starts
//!   a stream every 1.001 s (`sleep 1` plus about 1 ms to start a process), so
//!   a new stream starts just after the calls the running streams have due in
//!   the same second;
//! - the I/O path: Linux 2.6.16's default elevator, the anticipatory
//!   scheduler, sends the requests in ascending LBN order from where the last
//!   ended, the oldest first when, at its FIFO check (at most once per 125 ms
//!   `read_expire`), it has waited that long (`spinstack_fs::elevator`), as
//!   many at once as the paper's driver keeps out: `aacraid`'s 128 per device,
//!   capped by the drive's 64 tags (`validation_host::queue_depth`). The drive
//!   then picks among them by shortest positioning time (its catalog entry).
//!   Anticipation is not modelled: with requests at the drive it seldom waits
//!   (see `spinstack_fs::elevator`). Until 2026-11-27 the elevator sent one
//!   request at a time, an assumption made before the driver's depth was
//!   looked up; `HISTORY.md` beside the pinned test has what that gave;
//! - the trials: eight seeds per variant (the same seed, the same stream
//!   positions in every variant), since one run's knee and its start-ups near
//!   it move with the seed; the claims take the median knee and the means at
//!   the paper's 130 streams.

mod trials;

use super::validation_host::{self, HostProfile};
use crate::claim::Claim;
use crate::drives;
use crate::harness::{Experiment, Outcome, RunContext};
use crate::plot::{Figure, LegendCorner, Mark, Panel, PanelContent, Series};
use crate::table::DataTable;
use crate::LabError;
use spinstack_disk::drive::{Drive, DriveOptions};
use spinstack_fs::cache::{PageCache, Replacement};
use spinstack_fs::elevator::ElevatorConfig;
use spinstack_fs::indirect::IndirectMap;
use spinstack_fs::readahead::Policy;
use spinstack_fs::streams::{Pacing, StreamSetup, StreamWorkload, Streams};
use spinstack_fs::{Allocator, AllocatorConfig, BlockNumber, BlockRun};
use spinstack_sim::driver::run;
use spinstack_sim::engine::{Engine, EngineOptions};
use spinstack_sim::parallel::map_in_order;
use spinstack_sim::units::Nanoseconds;
use spinstack_trackmap::TrackMap;
use spinstack_volume::timed::{PlugPolicy, Striped};
use trials::{
    crossing, cut, describe, knees, latency_around, median, near, reached, Measured, Near,
};

pub struct Ext2Streams;

const MAXTOR: &str = "maxtor10kv-czk";
/// §2.5: "We used 2GB for our memory size" for this experiment; the page
/// cache is bounded at all of it (the kernel's and the streams' own memory,
/// tens of MB, is left out).
const CACHE_BYTES: u64 = 2 << 30;
/// One 64 GB file of 4 KB blocks (most of the 73 GB disk: the paper's streams
/// start at "a disk position"), written 8 blocks at a time.
const FILE_BLOCKS: u64 = 1 << 24;
/// Each stream reads 500 KB (125 pages of 4 KB) once a second: the paper's
/// "~500 KB/s"; one second per call is assumed.
pub(super) const READ_PAGES: u64 = 125;
pub(super) const PERIOD_MS: u64 = 1000;
/// The paper's streams run "at around 500KB/sec": a program that reads and
/// then sleeps for the period (assumed), so its rate is about, not exactly,
/// 500 KB/s, and the streams' calls drift out of step with each other.
pub(super) const PACING: Pacing = Pacing::SleepAfterCall;
/// The script starts a stream "after each second": `sleep 1` plus starting a
/// process (fork, exec, open: about 1 ms, assumed), so the streams' phases
/// drift 1 ms apart and a new stream starts just after the calls the running
/// streams have due in the same second.
pub(super) const ARRIVAL_US: u64 = 1_001_000;
/// The paper's comparison point and limit.
const PAPER_STREAMS: usize = 130;
pub(super) const GIVE_UP_S: u64 = 3;
/// The paper's start-up latency at 130 streams: 3 s conventionally, 30% and
/// 55% less with the one-track window and track-aligned (§2.5).
const PAPER_REDUCTION: [f64; 3] = [0.0, 30.0, 55.0];
/// Streams averaged around the comparison point (single start-ups vary by
/// where the stream's first request falls in the drive's queue).
const WINDOW: usize = 10;
/// A lighter load the evidence also compares at (streams 71–80).
const EARLY: usize = 80;
/// Independent trials per variant (seeds `seed` to `seed + TRIALS - 1`): over
/// eight seeds a conventional run's knee ranged from 148 to 194 streams and its
/// 10-stream means near the knee from 1.1 to 1.9 s, so one run's verdicts (the
/// knee, a cut near it) moved with any change of timing.
const TRIALS: u64 = 8;
/// A cap well past the paper's 130, so every variant reaches its limit.
const MAX_STREAMS: usize = 2 * PAPER_STREAMS;

#[derive(Clone, Copy)]
struct Variant {
    name: &'static str,
    config: fn() -> AllocatorConfig,
    policy: fn() -> Policy,
    track_aware_plug: bool,
    drive_prefetch: bool,
}

const VARIANTS: [Variant; 3] = [
    Variant {
        name: "conventional",
        config: AllocatorConfig::ext2,
        policy: Policy::linux_default,
        track_aware_plug: false,
        drive_prefetch: true,
    },
    Variant {
        name: "one-track window",
        config: AllocatorConfig::ext2,
        policy: Policy::one_track_window,
        track_aware_plug: false,
        drive_prefetch: true,
    },
    Variant {
        name: "track-aligned",
        config: AllocatorConfig::ext2_track_aligned,
        policy: || Policy::TrackAligned,
        track_aware_plug: true,
        drive_prefetch: false,
    },
];

fn measure(variant: Variant, seed: u64) -> Result<Measured, LabError> {
    let fail = |problem: String| LabError::Run {
        id: "ext2-streams".to_string(),
        problem: format!("{}: {problem}", variant.name),
    };
    let spec = drives::spec(MAXTOR)?;
    let options = DriveOptions {
        // The drive's own tagged queue (the elevator keeps it at most full).
        queue_depth: None,
        // §2.5: "for subsequent experiments, we disabled disk firmware prefetch
        // for track-aligned accesses" (sdparm DPTL=0: the cache stays on).
        read_ahead_disabled: !variant.drive_prefetch,
        ..DriveOptions::default()
    };
    let drive = Drive::new(&spec, options).map_err(|e| fail(e.to_string()))?;
    let map = drive.layout().track_map(&spec.name);
    let config = (variant.config)();
    let mut allocator = Allocator::new(&map, config).map_err(|e| fail(e.to_string()))?;
    let (runs, indirect) = super::file_layout::lay_out(&mut allocator, 1, FILE_BLOCKS)
        .map_err(fail)?
        .remove(0);
    let plug = PlugPolicy {
        track_aware: variant.track_aware_plug,
        ..PlugPolicy::linux26()
    };
    let device = Striped::single(
        drive,
        Some(map.clone()),
        HostProfile::pentium_d_830().device_io,
        Some(plug),
    )
    .map_err(|e| fail(e.to_string()))?;
    let mut engine = Engine::new(EngineOptions::default());
    let id = engine.add_device(device);
    let mut setup = StreamSetup {
        device: id,
        map: &map,
        block_size: config.block_size,
        runs: &runs,
        indirect: IndirectMap::new(config.indirect, &indirect),
        policy: (variant.policy)(),
        cache: PageCache::new(
            CACHE_BYTES,
            config.block_size.bytes(),
            Replacement::ActiveInactive,
        )
        .map_err(|e| fail(e.to_string()))?,
        elevator: Some(ElevatorConfig::linux26_reads(validation_host::queue_depth(
            &spec,
        ))),
    };
    super::common::cache_indirect_blocks(
        &mut setup.cache,
        [IndirectMap::new(config.indirect, &indirect)],
    );
    let workload = StreamWorkload {
        read_pages: READ_PAGES,
        period: Nanoseconds::from_ms(PERIOD_MS),
        pacing: PACING,
        arrival_interval: Nanoseconds::from_us(ARRIVAL_US),
        give_up_after: Nanoseconds::from_ms(GIVE_UP_S * 1000),
        max_streams: MAX_STREAMS,
        seed,
    };
    let mut host = Streams::new(setup, workload);
    run(&mut engine, &mut host).map_err(|e| fail(e.to_string()))?;
    let drive = engine
        .device(id)
        .and_then(|device| device.stats().first().copied())
        .ok_or_else(|| fail("the drive's statistics are missing".to_string()))?;
    let (tracks, tracks_with_indirect) = tracks_holding(&map, config, &runs, &indirect);
    Ok(Measured {
        report: host.report().clone(),
        drive,
        tracks,
        tracks_with_indirect,
    })
}

/// Tracks the file's runs span (a track shared by two runs counted twice),
/// and the distinct tracks holding one of its indirect blocks.
fn tracks_holding(
    map: &TrackMap,
    config: AllocatorConfig,
    runs: &[BlockRun],
    indirect: &[BlockNumber],
) -> (u64, u64) {
    let track_of = |block: BlockNumber| map.track_index_of(config.block_size.first_lbn(block));
    let spanned = runs
        .iter()
        .filter_map(|run| Some(track_of(BlockNumber(run.end().0 - 1))? - track_of(run.first)? + 1))
        .sum::<usize>() as u64;
    let holding: std::collections::BTreeSet<usize> = indirect
        .iter()
        .filter_map(|&block| track_of(block))
        .collect();
    (spanned, holding.len() as u64)
}

impl Experiment for Ext2Streams {
    fn id(&self) -> &'static str {
        "ext2-streams"
    }
    fn title(&self) -> &'static str {
        "Start-up latency of multimedia-like streams, ext2 vs one-track window vs track-aligned (validation Fig. 7)"
    }
    fn run(&self, context: &RunContext) -> Result<Outcome, LabError> {
        let items: Vec<(usize, u64)> = (0..VARIANTS.len())
            .flat_map(|v| (0..TRIALS).map(move |t| (v, t)))
            .collect();
        context.progress.set_length(items.len() as u64);
        let runs = map_in_order(
            &items,
            |&(v, trial)| measure(VARIANTS[v], context.seed + trial),
            || context.progress.inc(1),
        );
        let mut by_variant: Vec<Vec<Measured>> = VARIANTS.iter().map(|_| Vec::new()).collect();
        for (&(v, _), run) in items.iter().zip(runs) {
            by_variant[v].push(run?);
        }
        let mut data = DataTable::new(&[
            "variant",
            "trial_seed",
            "stream",
            "startup_latency_s",
            "first_byte_s",
            "disk_waits",
            "requests_in_flight_at_start",
        ]);
        for (variant, trials) in VARIANTS.iter().zip(&by_variant) {
            for (trial, m) in trials.iter().enumerate() {
                for (k, startup) in m.report.startups.iter().enumerate() {
                    let (Some(latency), Some(first_byte)) = (startup.latency, startup.first_byte)
                    else {
                        break;
                    };
                    data.push(vec![
                        variant.name.into(),
                        (context.seed + trial as u64).into(),
                        (k + 1).into(),
                        latency.as_secs_f64().into(),
                        first_byte.as_secs_f64().into(),
                        startup.disk_waits.into(),
                        startup.queued_at_start.into(),
                    ]);
                }
            }
        }
        let claims = claims(&by_variant);
        Ok(Outcome {
            data,
            figure: figure(&by_variant),
            claims,
            notes: vec![format!(
                "Each stream reads 500 KB (125 pages; one second of data per call, \
                 assumed) and sleeps a second, from a random page of one 64 GB file (most \
                 of the disk), through a 2 GB page cache and its own read-ahead, \
                 each call served as Linux 2.6.16 serves it (a window at a time, the \
                 ahead window issued with it); a new stream every 1.001 s until one's \
                 first call takes over 3 s (or {MAX_STREAMS} streams). {TRIALS} trials \
                 per variant, seeds {} to {} (the same seed gives every variant the same \
                 stream positions): one run's start-ups near its knee scatter between 0 \
                 and 3 s and its knee moves by tens of streams with the seed, so the \
                 streams within 3 s are the trials' median and the latencies are means \
                 over the trials (the plot's curves: where every trial got). Start-up \
                 latency: the first call's return (the first byte's time is in \
                 data.csv). Reductions compare the mean latency of the {WINDOW} streams \
                 up to stream {PAPER_STREAMS}, the paper's comparison point. The \
                 elevator (Linux 2.6.16's \
                 anticipatory scheduler's order: an ascending sweep, the oldest first \
                 when expired at its FIFO check every 125 ms) keeps {} requests at the \
                 drive (aacraid's {} per device, capped by the drive's tagged queue), \
                 which serves them shortest positioning time first; below it Linux's \
                 plug (3 ms, 4 requests; track-aware for the track-aligned run), host cost per device I/O {} (the paper's \
                 Pentium D 830, estimated from Chung et al. 2000; see ext2-bonnie). No \
                 CPU time per read call; no inode or directory reads. Drive {MAXTOR}, its firmware cache \
                 following {}; its prefetch off for the track-aligned run (sdparm DPTL=0, \
                 the cache on), as the paper ran it: 'for subsequent experiments, we \
                 disabled disk firmware prefetch for track-aligned accesses' (§2.5).",
                context.seed,
                context.seed + TRIALS - 1,
                validation_host::queue_depth_of(MAXTOR)?,
                validation_host::AACRAID_QUEUE_DEPTH,
                HostProfile::pentium_d_830().device_io.describe(),
                drives::cache_rules(MAXTOR),
            ), super::common::indirect_blocks_note()],
        })
    }
}

fn claims(by_variant: &[Vec<Measured>]) -> Vec<Claim> {
    let n = PAPER_STREAMS;
    let all = VARIANTS
        .iter()
        .zip(by_variant)
        .map(|(v, trials)| describe(v.name, trials, n))
        .collect::<Vec<_>>()
        .join("; ");
    let base = near(&by_variant[0], n);
    let conventional_knees = knees(&by_variant[0]);
    let started = median(&conventional_knees);
    let limit = Claim::new(
        "conventional: streams started within 3 s",
        "§2.5, Fig. 7",
        "streams",
        PAPER_STREAMS as f64,
        started,
    )
    .explain_if_missed(knee_evidence(&by_variant[0], started, &base, &all));
    let reductions = [1, 2].map(|k| reduction_claim(by_variant, k, &base, &all));
    let mut claims = vec![limit];
    claims.extend(reductions);
    claims
}

/// Why the conventional run's knee is where it is, from the trials.
fn knee_evidence(trials: &[Measured], started: f64, base: &Near, all: &str) -> String {
    let n = PAPER_STREAMS;
    let each = knees(trials)
        .iter()
        .map(|k| format!("{k:.0}"))
        .collect::<Vec<_>>()
        .join(", ");
    let ended = crossing(trials);
    let first_bytes = if ended.no_byte == ended.trials {
        "none had a byte within 3 s".to_string()
    } else if ended.no_byte == 0 {
        format!(
            "every one had its first byte, at {:.2} s on average",
            ended.first_byte_s
        )
    } else {
        format!(
            "{} had no byte within 3 s, the others their first byte at {:.2} s on average",
            ended.no_byte, ended.first_byte_s
        )
    };
    let cost = if base.trials == 0 {
        format!(
            "No trial reached streams {}–{n}, where a call's drive time is taken; the \
             paper's 3 s at 130 streams is (3 + 1) s / 130 = 31 ms a call.",
            n - WINDOW + 1
        )
    } else {
        format!(
            "What a stream costs sets where calls slow to 3 s: at streams {}–{n} a call \
             costs the drive {:.2} requests of {:.0} KB × {:.1} ms = {:.0} ms, while the \
             paper's 3 s at 130 streams is (3 + 1) s / 130 = 31 ms a call, so our drive \
             serves a conventional 128 KB request for less than the paper's did (why is \
             not isolated by this run: the drive's read-ahead and its choice among \
             queued requests are the model's, not measured on the paper's drive).",
            n - WINDOW + 1,
            base.requests_per_call,
            base.request_kb,
            base.request_ms,
            base.requests_per_call * base.request_ms,
        )
    };
    format!(
        "Ours reaches 3 s after {started:.0} streams (median of {TRIALS} trials; each \
         trial's: {each}). A run ends at its first stream whose first call takes over \
         3 s; the {WINDOW} streams before it took {:.2} s on average ({} trials). Of the \
         streams that ended a run, {first_bytes}; {:.0} requests were out when they \
         started (the drive's tagged queue holds some, the elevator the rest). {cost} \
         {all}.",
        ended.before_s, ended.trials, ended.queued,
    )
}

/// Variant `k`'s cut at the paper's 130 streams, with the evidence of a miss.
fn reduction_claim(by_variant: &[Vec<Measured>], k: usize, base: &Near, all: &str) -> Claim {
    let n = PAPER_STREAMS;
    let name = VARIANTS[k].name;
    let this = near(&by_variant[k], n);
    // The cut at other loads, where every trial of both variants got.
    let elsewhere = [EARLY, 100, 120, 140, 150]
        .iter()
        .filter(|&&at| {
            [0, k]
                .iter()
                .all(|&v| by_variant[v].iter().all(|m| reached(m, at)))
        })
        .map(|&at| format!("{:.0}% at stream {at}", cut(by_variant, k, at)))
        .collect::<Vec<_>>()
        .join(", ");
    // Paired by seed: each trial's own cut (trials that reached stream n in both).
    let per_trial: Vec<f64> = by_variant[0]
        .iter()
        .zip(&by_variant[k])
        .filter(|(a, b)| reached(a, n) && reached(b, n))
        .map(|(a, b)| {
            100.0 * (1.0 - latency_around(&b.report, n) / latency_around(&a.report, n).max(1e-12))
        })
        .collect();
    let (low, high) = per_trial
        .iter()
        .fold((f64::MAX, f64::MIN), |(lo, hi), &c| (lo.min(c), hi.max(c)));
    Claim::new(
        &format!("{name}: start-up latency reduction at 130 streams (%)"),
        "§2.5, Fig. 7",
        "%",
        PAPER_REDUCTION[k],
        cut(by_variant, k, n),
    )
    .explain_if_missed(format!(
        "Mean over the trials of streams {}–{n}: {name} {:.2} s against {:.2} s \
         conventionally (the paper's conventional run is at 3 s there; ours reaches \
         3 s later, see the first claim). Each trial's own cut (same seed, same \
         positions) ranges {low:.0}% to {high:.0}% over {} trials; the cut elsewhere: \
         {elsewhere}. When a new stream started, {:.0} requests were out against {:.0} \
         conventionally; each {:.0} KB request cost the drive {:.1} ms against {:.1} ms \
         for a {:.0} KB one; its first byte came at {:.2} s against {:.2} s, and its \
         500 KB call waited {:.1} times against {:.1}. A conventional 128 KB request \
         costs the drive little more than its transfer, which is what the larger \
         windows were to win.{} {all}.",
        n - WINDOW + 1,
        this.latency_s,
        base.latency_s,
        per_trial.len(),
        this.queued,
        base.queued,
        this.request_kb,
        this.request_ms,
        base.request_ms,
        base.request_kb,
        this.first_byte_s,
        base.first_byte_s,
        this.waits,
        base.waits,
        if matches!((VARIANTS[k].policy)(), Policy::TrackAligned) {
            split_tracks(&by_variant[k], this.requests_per_call)
        } else {
            String::new()
        },
    ))
}

/// The file's tracks that hold an indirect block, each read as two requests
/// by a track-aligned window.
fn split_tracks(trials: &[Measured], requests_per_call: f64) -> String {
    let Some(m) = trials.first() else {
        return String::new();
    };
    if m.tracks_with_indirect == 0 || m.tracks == 0 {
        return String::new();
    }
    format!(
        " ext2's indirect blocks (one per 4 MB of file) lie in {} of the file's {} \
         tracks ({:.1}%): a window there is two requests, the second sent once the first \
         is done ({:.2} requests per call here).",
        m.tracks_with_indirect,
        m.tracks,
        100.0 * m.tracks_with_indirect as f64 / m.tracks as f64,
        requests_per_call,
    )
}

/// Mean start-up latency per stream over the trials, up to the last stream
/// every trial started (the curve would otherwise mix trials); below, each
/// trial's knee.
fn figure(by_variant: &[Vec<Measured>]) -> Figure {
    let mut series: Vec<Series> = VARIANTS
        .iter()
        .zip(by_variant)
        .enumerate()
        .map(|(color, (variant, trials))| {
            let latencies: Vec<Vec<Nanoseconds>> =
                trials.iter().map(|m| m.report.startup_latency()).collect();
            let common = latencies.iter().map(Vec::len).min().unwrap_or(0);
            let points = (0..common)
                .map(|k| {
                    let sum: f64 = latencies.iter().map(|l| l[k].as_secs_f64()).sum();
                    ((k + 1) as f64, sum / latencies.len() as f64)
                })
                .collect();
            Series::new(variant.name, Mark::Line, color, points)
        })
        .collect();
    let paper_points = PAPER_REDUCTION
        .iter()
        .map(|r| (PAPER_STREAMS as f64, GIVE_UP_S as f64 * (1.0 - r / 100.0)))
        .collect();
    series.push(Series::new(
        "paper at 130 streams: 3 s, -30%, -55%",
        Mark::Paper,
        0,
        paper_points,
    ));
    let mut knee_series: Vec<Series> = VARIANTS
        .iter()
        .zip(by_variant)
        .enumerate()
        .map(|(color, (variant, trials))| {
            let points = knees(trials)
                .iter()
                .enumerate()
                .map(|(t, &k)| ((t + 1) as f64, k))
                .collect();
            Series::new(variant.name, Mark::Markers, color, points)
        })
        .collect();
    knee_series.push(Series::new(
        "paper (conventional): 130",
        Mark::Dashed,
        6,
        vec![
            (1.0, PAPER_STREAMS as f64),
            (TRIALS as f64, PAPER_STREAMS as f64),
        ],
    ));
    Figure {
        panels: vec![
            Panel {
                title: format!(
                    "Mean start-up latency of each new stream over {TRIALS} trials (Maxtor Atlas 10K V)"
                ),
                x_label: "streams (one new per second)".to_string(),
                y_label: "start-up latency (s)".to_string(),
                content: PanelContent::Lines(series),
                legend: LegendCorner::UpperLeft,
            },
            Panel {
                title: "Streams started within 3 s, each trial".to_string(),
                x_label: "trial (seed offset + 1)".to_string(),
                y_label: "streams".to_string(),
                content: PanelContent::Lines(knee_series),
                legend: LegendCorner::LowerRight,
            },
        ],
    }
}
