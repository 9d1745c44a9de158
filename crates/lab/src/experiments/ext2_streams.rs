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
//!   scheduler, holds the requests and sends them to the disk one at a time
//!   (the depth is assumed) in ascending LBN order from where the last ended,
//!   sending the oldest first when, at its FIFO check (at most once per 125 ms
//!   `read_expire`), it has waited that long (`spinstack_fs::elevator`). Every
//!   running stream with data due has its window queued there, and a new
//!   stream's first request waits for the sweep to reach it. Anticipation is
//!   not modelled (the streams sleep between calls, so it would not idle for
//!   them); sent in arrival order instead (everything expired), the run gives
//!   147 / -2% / 50% for the three claims.

use super::validation_host::HostProfile;
use crate::claim::Claim;
use crate::drives;
use crate::harness::{Experiment, Outcome, RunContext};
use crate::plot::{Figure, LegendCorner, Mark, Panel, PanelContent, Series};
use crate::table::DataTable;
use crate::LabError;
use spinstack_disk::drive::{Drive, DriveOptions};
use spinstack_fs::cache::{PageCache, Replacement};
use spinstack_fs::elevator::ElevatorConfig;
use spinstack_fs::readahead::Policy;
use spinstack_fs::streams::{Pacing, StreamReport, StreamSetup, StreamWorkload, Streams};
use spinstack_fs::{Allocator, AllocatorConfig};
use spinstack_sim::driver::run;
use spinstack_sim::engine::{Engine, EngineOptions};
use spinstack_sim::units::Nanoseconds;
use spinstack_volume::timed::{MemberStats, PlugPolicy, Striped};

pub struct Ext2Streams;

const MAXTOR: &str = "maxtor10kv-czk";
/// §2.5: "We used 2GB for our memory size" for this experiment; the page
/// cache is bounded at all of it (the kernel's and the streams' own memory,
/// tens of MB, is left out).
const CACHE_BYTES: u64 = 2 << 30;
/// One 64 GB file of 4 KB blocks (most of the 73 GB disk: the paper's streams
/// start at "a disk position"), written 8 blocks at a time.
const FILE_BLOCKS: u64 = 1 << 24;
const WRITE_PIECE_BLOCKS: u64 = 8;
/// Each stream reads 500 KB (125 pages of 4 KB) once a second: the paper's
/// "~500 KB/s"; one second per call is assumed.
pub(super) const READ_PAGES: u64 = 125;
pub(super) const PERIOD_MS: u64 = 1000;
/// The paper's streams run "at around 500KB/sec": a program that reads and
/// then sleeps for the period (assumed), so its rate is about, not exactly,
/// 500 KB/s, and the streams' calls drift out of step with each other.
pub(super) const PACING: Pacing = Pacing::SleepAfterCall;
/// Requests at the drive at once: the elevator sends one at a time
/// (`ElevatorConfig::linux26_reads`), so the drive's own queue never holds more.
const DISK_QUEUE_DEPTH: u32 = 1;
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

/// One variant's run: what the streams saw and what the drive did.
struct Measured {
    report: StreamReport,
    drive: MemberStats,
}

fn measure(variant: Variant, seed: u64) -> Result<Measured, LabError> {
    let fail = |problem: String| LabError::Run {
        id: "ext2-streams".to_string(),
        problem: format!("{}: {problem}", variant.name),
    };
    let spec = drives::spec(MAXTOR)?;
    let options = DriveOptions {
        queue_depth: Some(DISK_QUEUE_DEPTH),
        // §2.5: "for subsequent experiments, we disabled disk firmware prefetch
        // for track-aligned accesses" (sdparm DPTL=0: the cache stays on).
        read_ahead_disabled: !variant.drive_prefetch,
        ..DriveOptions::default()
    };
    let drive = Drive::new(&spec, options).map_err(|e| fail(e.to_string()))?;
    let map = drive.layout().track_map(&spec.name);
    let config = (variant.config)();
    let mut allocator = Allocator::new(&map, config).map_err(|e| fail(e.to_string()))?;
    let file = allocator.create(0).map_err(|e| fail(e.to_string()))?;
    for _ in 0..FILE_BLOCKS / WRITE_PIECE_BLOCKS {
        allocator
            .allocate(file, WRITE_PIECE_BLOCKS)
            .map_err(|e| fail(e.to_string()))?;
    }
    allocator.close(file).map_err(|e| fail(e.to_string()))?;
    let runs = allocator
        .runs(file)
        .ok_or_else(|| fail("a created file has no runs".to_string()))?
        .to_vec();
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
    let setup = StreamSetup {
        device: id,
        map: &map,
        block_size: config.block_size,
        runs: &runs,
        policy: (variant.policy)(),
        cache: PageCache::new(
            CACHE_BYTES,
            config.block_size.bytes(),
            Replacement::ActiveInactive,
        )
        .map_err(|e| fail(e.to_string()))?,
        elevator: Some(ElevatorConfig::linux26_reads()),
    };
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
    Ok(Measured {
        report: host.report().clone(),
        drive,
    })
}

/// Streams that started within the limit (those before the first that did not).
fn within_limit(report: &StreamReport) -> usize {
    let limit = Nanoseconds::from_ms(GIVE_UP_S * 1000);
    let latency = report.startup_latency();
    latency
        .iter()
        .position(|&l| l > limit)
        .unwrap_or(latency.len())
}

/// Mean of `values` over the `WINDOW` streams ending at stream `n`.
fn mean_around<T: Copy>(values: &[T], n: usize, as_f64: impl Fn(T) -> f64) -> f64 {
    let end = n.min(values.len());
    let start = end.saturating_sub(WINDOW);
    let slice = &values[start..end];
    slice.iter().map(|&v| as_f64(v)).sum::<f64>() / slice.len().max(1) as f64
}

fn latency_around(report: &StreamReport, n: usize) -> f64 {
    mean_around(&report.startup_latency(), n, |l| l.as_secs_f64())
}

/// What the run shows near stream `n`, for the claims' evidence.
fn describe(name: &str, m: &Measured, n: usize) -> String {
    let r = &m.report;
    let startups = &r.startups;
    let per_request_ms = m.drive.busy.as_secs_f64() * 1e3 / m.drive.completed.max(1) as f64;
    let mean_kb = r.sectors as f64 / 2.0 / r.requests.max(1) as f64;
    format!(
        "{name}: {} streams within 3 s; streams {}–{n}: start-up {:.2} s (first byte {:.2} \
         s), {:.1} disk waits in the first call, {:.0} requests out when each \
         started ({:.0} on average over the run); over the run {} calls taking {:.2} s on average, {} requests of {:.0} \
         KB on average ({:.2} per call), the drive busy {:.1} ms per request, {:.0}% of \
         the time",
        within_limit(r),
        n.saturating_sub(WINDOW) + 1,
        latency_around(r, n),
        mean_around(startups, n, |s| s.first_byte.map_or(0.0, |f| f.as_secs_f64())),
        mean_around(startups, n, |s| f64::from(s.disk_waits)),
        mean_around(startups, n, |s| s.queued_at_start as f64),
        r.mean_in_flight(),
        r.calls_done,
        r.call_time.as_secs_f64() / r.calls_done.max(1) as f64,
        r.requests,
        mean_kb,
        r.requests as f64 / r.calls_done.max(1) as f64,
        per_request_ms,
        100.0 * m.drive.busy.as_secs_f64() / r.ended.as_secs_f64().max(1e-9),
    )
}

impl Experiment for Ext2Streams {
    fn id(&self) -> &'static str {
        "ext2-streams"
    }
    fn title(&self) -> &'static str {
        "Start-up latency of multimedia-like streams, ext2 vs one-track window vs track-aligned (validation Fig. 7)"
    }
    fn run(&self, context: &RunContext) -> Result<Outcome, LabError> {
        context.progress.set_length(VARIANTS.len() as u64);
        let measured = VARIANTS
            .iter()
            .map(|&variant| {
                let one = measure(variant, context.seed)?;
                context.progress.inc(1);
                Ok(one)
            })
            .collect::<Result<Vec<_>, LabError>>()?;
        let reports: Vec<&StreamReport> = measured.iter().map(|m| &m.report).collect();
        // The paper compares at 130 streams, where its conventional run
        // reached 3 s: compare where ours did (the stream that crossed
        // included), or fewer if some variant stopped earlier.
        let n = reports
            .iter()
            .map(|r| r.startup_latency().len())
            .min()
            .unwrap_or(0)
            .min((within_limit(reports[0]) + 1).min(MAX_STREAMS));
        let latency: Vec<f64> = reports.iter().map(|r| latency_around(r, n)).collect();
        let reduction = |k: usize| 100.0 * (1.0 - latency[k] / latency[0].max(1e-12));
        let mut data = DataTable::new(&[
            "variant",
            "stream",
            "startup_latency_s",
            "first_byte_s",
            "disk_waits",
            "requests_in_flight_at_start",
        ]);
        for (variant, report) in VARIANTS.iter().zip(&reports) {
            for (k, startup) in report.startups.iter().enumerate() {
                let (Some(latency), Some(first_byte)) = (startup.latency, startup.first_byte)
                else {
                    break;
                };
                data.push(vec![
                    variant.name.into(),
                    (k + 1).into(),
                    latency.as_secs_f64().into(),
                    first_byte.as_secs_f64().into(),
                    startup.disk_waits.into(),
                    startup.queued_at_start.into(),
                ]);
            }
        }
        let described: Vec<String> = VARIANTS
            .iter()
            .zip(&measured)
            .map(|(v, m)| describe(v.name, m, n))
            .collect();
        let claims = claims(&measured, &described, n, reduction);
        Ok(Outcome {
            data,
            figure: figure(&reports),
            claims,
            notes: vec![format!(
                "Each stream reads 500 KB (125 pages; one second of data per call, \
                 assumed) and sleeps a second, from a random page of one 64 GB file (most \
                 of the disk; seed {}), through a 2 GB page cache and its own read-ahead, \
                 each call served as Linux 2.6.16 serves it (a window at a time, the \
                 ahead window issued with it); a new stream every 1.001 s until one's \
                 first call takes over 3 s (or {} streams). Start-up latency: the first \
                 call's return (the first byte's time is in data.csv). Reductions compare \
                 the mean latency of the {WINDOW} streams up to stream {n} (where \
                 conventional ext2 reached 3 s, as the paper's did at 130, or the most \
                 streams every variant started within 3 s). The elevator (Linux 2.6.16's \
                 anticipatory scheduler's order: an ascending sweep, the oldest first \
                 when expired at its FIFO check every 125 ms) sends one request at a \
                 time; below it Linux's plug (3 ms, 4 requests; track-aware \
                 for the track-aligned run), host cost per device I/O {} (the paper's \
                 Pentium D 830, estimated from Chung et al. 2000; see ext2-bonnie). No \
                 CPU time per read call; no metadata. Drive {MAXTOR}, its firmware cache \
                 following {}; its prefetch off for the track-aligned run (sdparm DPTL=0, \
                 the cache on), as the paper ran it: 'for subsequent experiments, we \
                 disabled disk firmware prefetch for track-aligned accesses' (§2.5).",
                context.seed,
                MAX_STREAMS,
                HostProfile::pentium_d_830().device_io.describe(),
                drives::cache_rules(MAXTOR),
            )],
        })
    }
}

/// What one variant's start-ups looked like near stream `n`.
struct Near {
    latency_s: f64,
    first_byte_s: f64,
    waits: f64,
    queued: f64,
    request_kb: f64,
    /// Drive time per request over the run (busy time over requests).
    request_ms: f64,
    requests_per_call: f64,
}

fn near(m: &Measured, n: usize) -> Near {
    let r = &m.report;
    Near {
        latency_s: latency_around(r, n),
        first_byte_s: mean_around(&r.startups, n, |s| {
            s.first_byte.map_or(0.0, |f| f.as_secs_f64())
        }),
        waits: mean_around(&r.startups, n, |s| f64::from(s.disk_waits)),
        queued: mean_around(&r.startups, n, |s| s.queued_at_start as f64),
        request_kb: r.sectors as f64 / 2.0 / r.requests.max(1) as f64,
        request_ms: m.drive.busy.as_secs_f64() * 1e3 / m.drive.completed.max(1) as f64,
        requests_per_call: r.requests as f64 / r.calls_done.max(1) as f64,
    }
}

fn claims(
    measured: &[Measured],
    described: &[String],
    n: usize,
    reduction: impl Fn(usize) -> f64,
) -> Vec<Claim> {
    let all = described.join("; ");
    let base = near(&measured[0], n);
    let started = within_limit(&measured[0].report);
    let limit = Claim::new(
        "conventional: streams started within 3 s",
        "§2.5, Fig. 7",
        "streams",
        PAPER_STREAMS as f64,
        started as f64,
    )
    .explain_if_missed(format!(
        "Ours reaches 3 s at stream {}. A new stream's first request queues behind one \
         request per running stream ({:.0} out when streams {}–{n} started), sent one at a \
         time in the elevator's sweep, and its 500 KB call waits {:.1} times with a \
         128 KB window; since a stream sleeps a second after each call, a loaded drive \
         slows every stream's calls rather than letting the queue grow without bound, so \
         latency grows by about the drive time of one call per added stream ({:.2} \
         requests of {:.0} KB × {:.1} ms = {:.0} ms here; the paper's 3 s at 130 streams \
         is (3 + 1) s / 130 = 31 ms). Where the rise starts and its slope depend on the \
         assumed call size, data span (64 GB: the seek) and pacing. {all}.",
        started + 1,
        base.queued,
        n.saturating_sub(WINDOW) + 1,
        base.waits,
        base.requests_per_call,
        base.request_kb,
        base.request_ms,
        base.requests_per_call * base.request_ms,
    ));
    // The cut over the `WINDOW` streams ending at stream `at`.
    let cut_at = |k: usize, at: usize| {
        let mean = |m: &Measured| latency_around(&m.report, at);
        100.0 * (1.0 - mean(&measured[k]) / mean(&measured[0]).max(1e-12))
    };
    let early_cut = |k: usize| cut_at(k, EARLY);
    let reductions = [1, 2].map(|k| {
        let name = VARIANTS[k].name;
        let this = near(&measured[k], n);
        Claim::new(
            &format!("{name}: start-up latency reduction at 130 streams (%)"),
            "§2.5, Fig. 7",
            "%",
            PAPER_REDUCTION[k],
            reduction(k),
        )
        .explain_if_missed(format!(
            "Compared at stream {n}, the most streams every variant started within 3 s \
             (the paper compares at 130, where its conventional run reached 3 s). \
             {name}: {:.2} s against {:.2} s conventionally. Its new stream still queues \
             behind about one request per running stream ({:.0} against {:.0} out \
             when it started), each {:.0} KB costing the drive {:.1} ms against {:.1} ms \
             for a {:.0} KB one, so its first byte comes at {:.2} s against {:.2} s; it \
             then waits {:.1} times for its 500 KB call against {:.1}. The larger window \
             saves waits, but each request a new stream queues behind costs the drive \
             more: the elevator's sweep sends a conventional stream's consecutive 128 KB \
             windows one after another, so most cost little more than their transfer \
             (the drive's read-ahead holds them), which is what the larger windows were \
             to win. Lighter loaded, at streams {}–{EARLY}, the cut is {:.0}% (one-track \
             window) and {:.0}% (track-aligned). Near the knee single start-ups scatter \
             between 0 and 3 s, so the cut moves with the streams compared: over the \
             ten up to stream {} it is {:.0}%, up to stream {} {:.0}%. {all}.",
            this.latency_s,
            base.latency_s,
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
            EARLY - WINDOW + 1,
            early_cut(1),
            early_cut(2),
            n.saturating_sub(2 * WINDOW),
            cut_at(k, n.saturating_sub(2 * WINDOW)),
            n.saturating_sub(WINDOW),
            cut_at(k, n.saturating_sub(WINDOW)),
        ))
    });
    let mut claims = vec![limit];
    claims.extend(reductions);
    claims
}

fn figure(reports: &[&StreamReport]) -> Figure {
    let mut series: Vec<Series> = VARIANTS
        .iter()
        .zip(reports)
        .enumerate()
        .map(|(color, (variant, report))| {
            let points = report
                .startup_latency()
                .iter()
                .enumerate()
                .map(|(k, l)| ((k + 1) as f64, l.as_secs_f64()))
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
    Figure {
        panels: vec![Panel {
            title: "Start-up latency of each new stream (Maxtor Atlas 10K V)".to_string(),
            x_label: "streams (one new per second)".to_string(),
            y_label: "start-up latency (s)".to_string(),
            content: PanelContent::Lines(series),
            legend: LegendCorner::UpperLeft,
        }],
    }
}
