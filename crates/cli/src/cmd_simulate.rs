//! `spinstack simulate`: a seeded synthetic workload on one drive or on a volume
//! (a RAID of drives described in a volume file), closed loop at a fixed queue
//! depth, with response-time statistics and, for a volume, per-member traffic.
//! With `--trace FILE --format F` a block trace is replayed instead
//! ([`crate::simulate_trace`]).

use crate::cmd_trace::{parse_device, progress_due, ActionArg, FormatArg, TraceInput};
use crate::simulate_trace::{self, ReplayOptions};
use crate::volume_report::{print_volume, volume_report, BuiltNames, VolumeReport};
use anyhow::Context;
use serde::Serialize;
use spinstack_disk::drive::{Drive, DriveOptions};
use spinstack_disk::spec::SchedulingPolicy;
use spinstack_sim::device::BlockDevice;
use spinstack_sim::driver::{run_closed_loop, RequestSource, RequestSpec};
use spinstack_sim::engine::DeviceId;
use spinstack_sim::engine::{Engine, EngineOptions};
use spinstack_sim::request::Operation;
use spinstack_sim::rng::Xoshiro256StarStar;
use spinstack_sim::stats::{ResponseStats, ResponseSummary};
use spinstack_sim::units::{Lbn, Nanoseconds, Sectors};
use spinstack_sim::workload::{AccessPattern, Workload, WorkloadSpec};
use spinstack_volume::map::ParityLayout;
use spinstack_volume::{build, config};
use std::time::Instant;

/// Arguments of `spinstack simulate`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Catalog name (see `spinstack disks`) or path to a .parv / .toml drive file;
    /// either may end with the host link it is attached through, e.g. atlas10k@80MB/s.
    #[arg(long, required_unless_present = "volume", conflicts_with = "volume")]
    disk: Option<String>,
    /// A volume file (TOML: level, chunk, members, an optional buffer table); see the README.
    #[arg(long)]
    volume: Option<std::path::PathBuf>,
    #[arg(long, value_enum, default_value_t = Pattern::Random)]
    pattern: Pattern,
    /// Fraction of requests that are reads, 0 to 1.
    #[arg(long, default_value_t = 1.0)]
    read_fraction: f64,
    /// Request size in KiB.
    #[arg(long, default_value_t = 4)]
    size_kib: u32,
    /// Number of requests.
    #[arg(long, default_value_t = 10_000)]
    count: u64,
    /// Instead of `--pattern`/`--size-kib`: random reads of this many whole stripes,
    /// each starting on a stripe boundary (RAID-5 volumes; for the track-aligned
    /// RAID-5 every member request is then one whole track).
    #[arg(
        long,
        requires = "volume",
        conflicts_with_all = ["pattern", "size_kib", "read_fraction"]
    )]
    stripes: Option<u64>,
    /// Requests kept outstanding at the drive (closed loop; 1 when absent). With
    /// `--trace`: replay as a closed loop at this depth instead of at the trace's times.
    #[arg(long)]
    pub(crate) queue_depth: Option<u32>,
    /// Drive scheduling policy; the drive's own when absent.
    #[arg(long, value_enum)]
    policy: Option<Policy>,
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Print one JSON object instead of text.
    #[arg(long)]
    pub(crate) json: bool,
    /// Replay this block trace (open loop at its times, or closed loop with
    /// `--queue-depth`) instead of a synthetic workload.
    #[arg(
        long,
        requires = "format",
        conflicts_with_all = ["stripes", "pattern", "size_kib", "read_fraction", "count"]
    )]
    trace: Option<std::path::PathBuf>,
    /// The trace's format.
    #[arg(long, value_enum, requires = "trace")]
    format: Option<FormatArg>,
    /// For a blkparse trace: which event is the request (issue D, queue Q, complete C).
    #[arg(long, value_enum, default_value = "d")]
    blkparse_action: ActionArg,
    /// Replay only this device of the trace (a number, or MAJOR,MINOR for
    /// blkparse); the first record's device when absent.
    #[arg(long, value_parser = parse_device, requires = "trace")]
    device: Option<u32>,
    /// Replay at most this many records (at least 1).
    #[arg(long, requires = "trace", value_parser = parse_limit)]
    pub(crate) limit: Option<u64>,
    /// Take addresses past the device's capacity modulo the capacity instead of
    /// stopping with an error.
    #[arg(long, requires = "trace")]
    pub(crate) wrap: bool,
}

/// `--limit`: a record count of at least 1. Refused up front, since `--limit 0`
/// would read nothing and then report that "the trace holds no records" (inputs
/// finding 25).
fn parse_limit(text: &str) -> Result<u64, String> {
    match text.parse::<u64>() {
        Ok(0) => Err("a limit of 0 records would replay nothing; give at least 1".into()),
        Ok(limit) => Ok(limit),
        Err(_) => Err(format!(
            "expected a whole number of records, found {text:?}"
        )),
    }
}

impl Args {
    /// The closed loop's depth for synthetic workloads.
    fn depth(&self) -> u32 {
        self.queue_depth.unwrap_or(1)
    }

    /// How to read `--trace`.
    /// How a trace is replayed, from the flags that shape it.
    fn replay_options(&self) -> ReplayOptions {
        ReplayOptions {
            limit: self.limit,
            wrap: self.wrap,
            queue_depth: self.queue_depth,
        }
    }

    pub(crate) fn trace_input(&self) -> anyhow::Result<TraceInput> {
        Ok(TraceInput {
            format: self.format.context("--trace needs --format")?,
            blkparse_action: self.blkparse_action,
            device: self.device,
        })
    }
}

#[derive(clap::ValueEnum, Clone, Copy, Debug, Serialize)]
#[serde(rename_all = "lowercase")]
enum Pattern {
    Random,
    Sequential,
}

#[derive(clap::ValueEnum, Clone, Copy, Debug, Serialize)]
#[serde(rename_all = "lowercase")]
enum Policy {
    Fcfs,
    Sptf,
}

/// Everything `simulate` prints.
#[derive(Serialize, Debug)]
struct Report {
    disk: String,
    /// Present for `--volume`.
    #[serde(skip_serializing_if = "Option::is_none")]
    volume: Option<VolumeReport>,
    /// Present for `--stripes`: each request reads this many whole stripes, and
    /// `pattern`, `read_fraction` and `size_kib` do not apply (random reads).
    #[serde(skip_serializing_if = "Option::is_none")]
    stripes: Option<u64>,
    pattern: Pattern,
    read_fraction: f64,
    size_kib: u32,
    count: u64,
    queue_depth: u32,
    policy: Option<Policy>,
    seed: u64,
    completed: u64,
    response: ResponseSummary,
    simulated_seconds: f64,
    wall_seconds: f64,
    simulated_requests_per_wall_second: f64,
}

/// Flags that make sense only together, checked before any simulation: a flag
/// that would be ignored is an error, not a silent default.
fn check_flags(args: &Args) -> anyhow::Result<()> {
    anyhow::ensure!(
        args.stripes.is_none() || args.volume.is_some(),
        "--stripes needs --volume (a RAID-5 volume file): a single drive has no stripes"
    );
    if args.trace.is_none() {
        anyhow::ensure!(args.count >= 1, "--count must be at least 1");
    }
    // Checked here to name the option; the workload's own check says only
    // "read fraction", after the drive is loaded.
    anyhow::ensure!(
        (0.0..=1.0).contains(&args.read_fraction),
        "--read-fraction must be between 0 and 1, got {}",
        float_as_said(args.read_fraction)
    );
    let bound = EngineOptions::default().max_outstanding_per_device;
    if let Some(depth) = args.queue_depth {
        anyhow::ensure!(
            (1..=bound).contains(&depth),
            "--queue-depth must be between 1 and {bound} (the simulator's bound on \
             requests one device holds), got {depth}"
        );
    }
    Ok(())
}

/// A float for an error message: plain when short, in exponent form when plain
/// would print hundreds of digits (`-1e300`, not a 300-digit integer).
fn float_as_said(value: f64) -> String {
    let magnitude = value.abs();
    if magnitude == 0.0 || (1e-6..1e9).contains(&magnitude) {
        value.to_string()
    } else {
        format!("{value:e}")
    }
}

pub fn run(args: Args) -> anyhow::Result<()> {
    check_flags(&args)?;
    let options = DriveOptions {
        // A trace replayed by its times keeps the drive's own queue depth.
        queue_depth: args.disk.as_ref().and_then(|_| match &args.trace {
            Some(_) => args.queue_depth,
            None => Some(args.depth()),
        }),
        policy: args.policy.map(|policy| match policy {
            Policy::Fcfs => SchedulingPolicy::Fcfs,
            Policy::Sptf => SchedulingPolicy::Sptf,
        }),
        ..DriveOptions::default()
    };
    if let Some(path) = &args.volume {
        return run_volume(path, options, &args);
    }
    let disk = args.disk.as_deref().unwrap_or_default();
    let spec = crate::load_drive(disk).with_context(|| format!("cannot load drive {disk:?}"))?;
    let drive = Drive::new(&spec, options)
        .with_context(|| format!("cannot build drive {:?}", spec.name))?;
    if let Some(trace) = &args.trace {
        let input = args.trace_input()?;
        let (report, _) =
            simulate_trace::replay(drive, &spec.name, &args.replay_options(), trace, &input)?;
        return simulate_trace::print(&report, args.json);
    }
    let (report, _) = simulate(drive, &spec.name, &args)?;
    print_report(&report, args.json)
}

fn run_volume(path: &std::path::Path, options: DriveOptions, args: &Args) -> anyhow::Result<()> {
    let spec = config::read(path)?;
    let built = build::build(&spec, &options).context("cannot build the volume")?;
    for note in &built.notes {
        eprintln!("note: {}: {note}", path.display());
    }
    let name = format!("{} volume {}", spec.level.name(), path.display());
    if let Some(trace) = &args.trace {
        let input = args.trace_input()?;
        let (mut report, engine) =
            simulate_trace::replay(built.volume, &name, &args.replay_options(), trace, &input)?;
        let names = BuiltNames {
            member_names: built.member_names,
            notes: built.notes,
        };
        let volume = volume_report(path, &spec, names, &engine.devices()[0]);
        report.volume = Some(volume);
        simulate_trace::print(&report, args.json)?;
        if let (false, Some(volume)) = (args.json, &report.volume) {
            print_volume(volume);
        }
        return Ok(());
    }
    let (mut report, engine) = match args.stripes {
        Some(count) => {
            let layout = built.volume.parity_layout().with_context(|| {
                format!(
                    "--stripes needs a RAID-5 volume; {} is {}",
                    path.display(),
                    spec.level.name()
                )
            })?;
            let mut source = StripeReads::new(layout, count, args.count, args.seed)?;
            simulate_with(built.volume, &name, args, &mut source)?
        }
        None => simulate(built.volume, &name, args)?,
    };
    let member_names = built.member_names;
    let notes = built.notes;
    report.volume = Some(volume_report(
        path,
        &spec,
        BuiltNames {
            member_names,
            notes,
        },
        &engine.devices()[0],
    ));
    print_report(&report, args.json)
}

/// Run the workload of `args` on `device` and summarise it; the engine holds the
/// device afterwards.
fn simulate<D: BlockDevice>(
    device: D,
    disk: &str,
    args: &Args,
) -> anyhow::Result<(Report, Engine<D>)> {
    anyhow::ensure!(args.size_kib > 0, "--size-kib must be at least 1");
    anyhow::ensure!(args.depth() > 0, "--queue-depth must be at least 1");
    let sectors = Sectors::from_bytes(u64::from(args.size_kib) * 1024)
        .context("request size is not a whole number of sectors")?;
    let workload = WorkloadSpec {
        pattern: match args.pattern {
            Pattern::Random => AccessPattern::Random,
            Pattern::Sequential => AccessPattern::Sequential,
        },
        read_fraction: args.read_fraction,
        request_sectors: sectors,
        lbn_start: Lbn(0),
        lbn_end: Lbn(device.capacity().0),
        count: args.count,
        think: Nanoseconds::ZERO,
        seed: args.seed,
    };
    let mut workload = Workload::new(workload).context("invalid workload")?;
    simulate_with(device, disk, args, &mut workload)
}

/// Random reads of `count` whole stripes of a parity layout, each from a stripe
/// boundary.
struct StripeReads {
    layout: Box<dyn ParityLayout>,
    count: u64,
    left: u64,
    random: Xoshiro256StarStar,
}

impl StripeReads {
    fn new(
        layout: Box<dyn ParityLayout>,
        count: u64,
        requests: u64,
        seed: u64,
    ) -> anyhow::Result<StripeReads> {
        anyhow::ensure!(
            count > 0 && count < layout.stripes(),
            "--stripes must be between 1 and {} (the volume's stripes less one)",
            layout.stripes().saturating_sub(1)
        );
        Ok(StripeReads {
            layout,
            count,
            left: requests,
            random: Xoshiro256StarStar::seed_from_u64(seed),
        })
    }
}

impl RequestSource for StripeReads {
    fn next_request(&mut self, _: DeviceId) -> Option<RequestSpec> {
        self.left = self.left.checked_sub(1)?;
        let first = self.random.below(self.layout.stripes() - self.count);
        let start = self.layout.stripe_start(first);
        let end = self.layout.stripe_start(first + self.count);
        Some(RequestSpec {
            operation: Operation::Read,
            lbn: start,
            sectors: end.sectors_since(start),
            think_after: Nanoseconds::ZERO,
        })
    }
}

/// Run requests from `source` on `device` (closed loop at the queue depth of
/// `args`) and summarise them.
fn simulate_with<D: BlockDevice, S: RequestSource>(
    device: D,
    disk: &str,
    args: &Args,
    source: &mut S,
) -> anyhow::Result<(Report, Engine<D>)> {
    anyhow::ensure!(args.depth() > 0, "--queue-depth must be at least 1");
    let mut engine = Engine::new(EngineOptions::default());
    engine.add_device(device);
    let mut stats = ResponseStats::new();
    let started = Instant::now();
    let progress = request_progress(args.count);
    let summary = run_closed_loop(&mut engine, args.depth(), source, |done| {
        stats.record(done.completion.response_time());
        // A run under a second is over before a bar would help: none is drawn.
        if progress_due(stats.count()) && started.elapsed() >= PROGRESS_AFTER {
            progress.set_position(stats.count());
        }
    });
    progress.finish_and_clear();
    let summary = summary.context("the simulation stopped")?;
    let wall_seconds = started.elapsed().as_secs_f64();
    let report = Report {
        disk: disk.to_string(),
        volume: None,
        stripes: args.stripes,
        pattern: args.pattern,
        read_fraction: args.read_fraction,
        size_kib: args.size_kib,
        count: args.count,
        queue_depth: args.depth(),
        policy: args.policy,
        seed: args.seed,
        completed: summary.completed,
        response: stats.summary(),
        simulated_seconds: summary.end.as_secs_f64(),
        wall_seconds,
        simulated_requests_per_wall_second: summary.completed as f64 / wall_seconds.max(1e-9),
    };
    Ok((report, engine))
}

/// How long a synthetic run goes before its progress bar is drawn.
const PROGRESS_AFTER: std::time::Duration = std::time::Duration::from_secs(1);

/// A bar on standard error counting completed requests against `--count`:
/// `--count` has no bound, and a run of billions would otherwise say nothing
/// for hours. Hidden when standard error is not a terminal (indicatif's stderr
/// target), and not drawn before [`PROGRESS_AFTER`].
fn request_progress(count: u64) -> indicatif::ProgressBar {
    let progress = indicatif::ProgressBar::new(count);
    progress.set_style(
        indicatif::ProgressStyle::with_template(
            "{spinner} simulating: {pos}/{len} requests ({per_sec}, {eta} left)",
        )
        .expect("a fixed template"),
    );
    progress
}

fn print_report(report: &Report, json: bool) -> anyhow::Result<()> {
    if json {
        println!("{}", serde_json::to_string(report)?);
        return Ok(());
    }
    let response = &report.response;
    let workload = match report.stripes {
        Some(stripes) => format!(
            "{} random reads of {stripes} whole stripes from a stripe boundary",
            report.completed
        ),
        None => format!(
            "{} {:?} {} KiB requests, read fraction {}",
            report.completed,
            report.pattern,
            report.size_kib,
            float_as_said(report.read_fraction)
        ),
    };
    println!(
        "{}: {workload}, queue depth {}, seed {}",
        report.disk, report.queue_depth, report.seed
    );
    println!(
        "response time (ms): mean {:.3}  p50 {:.3}  p90 {:.3}  p99 {:.3}  max {:.3}",
        response.mean_ms, response.p50_ms, response.p90_ms, response.p99_ms, response.max_ms
    );
    println!(
        "simulated {:.3} s ({:.1} IO/s) in {:.3} s wall: {:.0} simulated requests per wall second",
        report.simulated_seconds,
        report.completed as f64 / report.simulated_seconds.max(1e-12),
        report.wall_seconds,
        report.simulated_requests_per_wall_second
    );
    if let Some(volume) = &report.volume {
        print_volume(volume);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;
    use spinstack_sim::fake::FixedServiceDevice;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        args: Args,
    }

    fn args(extra: &[&str]) -> Args {
        let mut words = vec!["simulate", "--disk", "fake"];
        words.extend_from_slice(extra);
        Cli::try_parse_from(words).unwrap().args
    }

    // Proves the command path end to end on a fixed-service device: every request
    // completes, response time is depth x service (FIFO), the JSON has the fields.
    #[test]
    fn runs_against_fake_device() {
        let args = args(&["--count", "1000", "--queue-depth", "4", "--json"]);
        let device = FixedServiceDevice::new(Sectors(1 << 24), Nanoseconds(2_000_000), 16);
        let (report, _) = simulate(device, "fake", &args).unwrap();
        assert_eq!(report.completed, 1000);
        assert!(
            (report.response.p50_ms - 8.0).abs() < 0.05,
            "{:?}",
            report.response
        );
        assert!((report.simulated_seconds - 2.0).abs() < 1e-9);
        let json = serde_json::to_value(&report).unwrap();
        for field in [
            "response",
            "simulated_seconds",
            "wall_seconds",
            "simulated_requests_per_wall_second",
        ] {
            assert!(json.get(field).is_some(), "{field}");
        }
        assert!(json["response"].get("p99_ms").is_some());
    }

    // Proves bad arguments are errors, not panics.
    #[test]
    fn rejects_bad_arguments() {
        let device = || FixedServiceDevice::new(Sectors(1 << 24), Nanoseconds(1), 16);
        assert!(simulate(device(), "fake", &args(&["--read-fraction", "2"])).is_err());
        assert!(simulate(device(), "fake", &args(&["--size-kib", "0"])).is_err());
        assert!(simulate(device(), "fake", &args(&["--queue-depth", "0"])).is_err());
        assert!(Cli::try_parse_from(["simulate", "--disk", "x", "--pattern", "zigzag"]).is_err());
    }

    // Proves flags that would be ignored or meaningless are refused before any run,
    // each naming the flag: --stripes on a single drive (before, silently a 4 KiB
    // random workload), --count 0 (before, statistics of nothing printed as zeros),
    // a queue deeper than the simulator's per-device bound (before, an engine error
    // naming DeviceId(0)).
    #[test]
    fn refuses_flags_that_would_be_ignored() {
        for (extra, names) in [
            (&["--stripes", "3"][..], "--stripes needs --volume"),
            (&["--count", "0"][..], "--count must be at least 1"),
            (
                &["--queue-depth", "100000"][..],
                "--queue-depth must be between 1 and 4096",
            ),
        ] {
            let error = check_flags(&args(extra)).unwrap_err().to_string();
            assert!(error.contains(names), "{extra:?}: {error}");
        }
        check_flags(&args(&["--count", "1", "--queue-depth", "4096"])).unwrap();
    }

    // Guards input finding 14 of the hostile test of 2026-11-28: with --stripes (or
    // --trace), --size-kib, --pattern and --read-fraction were ignored while the report
    // printed them as the workload. Proves each is refused beside either, and that a
    // stripe run's report says what it ran.
    #[test]
    fn workload_flags_beside_stripes_or_a_trace_are_refused() {
        let volume = ["simulate", "--volume", "v.toml"];
        for (mode, extra) in [
            (&["--stripes", "2"][..], &["--size-kib", "8"][..]),
            (&["--stripes", "2"][..], &["--pattern", "sequential"][..]),
            (&["--stripes", "2"][..], &["--read-fraction", "0"][..]),
            (
                &["--trace", "t", "--format", "msr"][..],
                &["--size-kib", "64"][..],
            ),
            (
                &["--trace", "t", "--format", "msr"][..],
                &["--count", "5"][..],
            ),
        ] {
            let words: Vec<&str> = volume.iter().chain(mode).chain(extra).copied().collect();
            assert!(
                Cli::try_parse_from(&words).is_err(),
                "{words:?} was accepted"
            );
        }
        let device = FixedServiceDevice::new(Sectors(1 << 24), Nanoseconds(1_000), 16);
        let (mut report, _) = simulate(device, "fake", &args(&["--count", "3"])).unwrap();
        report.stripes = Some(2);
        let text = serde_json::to_value(&report).unwrap();
        assert_eq!(text["stripes"], 2);
    }
}
