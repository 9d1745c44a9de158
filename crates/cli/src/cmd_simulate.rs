//! `spinstack simulate`: a seeded synthetic workload on one drive, closed loop at a
//! fixed queue depth, with response-time statistics. OWNER: engine helper.

use anyhow::Context;
use serde::Serialize;
use spinstack_disk::catalog;
use spinstack_disk::drive::{Drive, DriveOptions};
use spinstack_disk::spec::SchedulingPolicy;
use spinstack_sim::device::BlockDevice;
use spinstack_sim::driver::run_closed_loop;
use spinstack_sim::engine::{Engine, EngineOptions};
use spinstack_sim::stats::{ResponseStats, ResponseSummary};
use spinstack_sim::units::{Lbn, Nanoseconds, Sectors};
use spinstack_sim::workload::{AccessPattern, Workload, WorkloadSpec};
use std::time::Instant;

/// Arguments of `spinstack simulate`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Catalog name (see `spinstack disks`) or path to a .parv / .toml drive file.
    #[arg(long)]
    disk: String,
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
    /// Requests kept outstanding at the drive (closed loop).
    #[arg(long, default_value_t = 1)]
    queue_depth: u32,
    /// Drive scheduling policy; the drive's own when absent.
    #[arg(long, value_enum)]
    policy: Option<Policy>,
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Print one JSON object instead of text.
    #[arg(long)]
    json: bool,
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

pub fn run(args: Args) -> anyhow::Result<()> {
    let spec = catalog::resolve(&args.disk)
        .with_context(|| format!("cannot load drive {:?}", args.disk))?;
    let options = DriveOptions {
        queue_depth: Some(args.queue_depth),
        policy: args.policy.map(|policy| match policy {
            Policy::Fcfs => SchedulingPolicy::Fcfs,
            Policy::Sptf => SchedulingPolicy::Sptf,
        }),
        ..DriveOptions::default()
    };
    let drive = Drive::new(&spec, options)
        .with_context(|| format!("cannot build drive {:?}", spec.name))?;
    let report = simulate(drive, &spec.name, &args)?;
    print_report(&report, args.json)
}

/// Run the workload of `args` on `device` and summarise it.
fn simulate<D: BlockDevice>(device: D, disk: &str, args: &Args) -> anyhow::Result<Report> {
    anyhow::ensure!(args.size_kib > 0, "--size-kib must be at least 1");
    anyhow::ensure!(args.queue_depth > 0, "--queue-depth must be at least 1");
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
    let mut engine = Engine::new(EngineOptions::default());
    engine.add_device(device);
    let mut stats = ResponseStats::new();
    let started = Instant::now();
    let summary = run_closed_loop(&mut engine, args.queue_depth, &mut workload, |done| {
        stats.record(done.completion.response_time())
    })
    .context("the simulation stopped")?;
    let wall_seconds = started.elapsed().as_secs_f64();
    Ok(Report {
        disk: disk.to_string(),
        pattern: args.pattern,
        read_fraction: args.read_fraction,
        size_kib: args.size_kib,
        count: args.count,
        queue_depth: args.queue_depth,
        policy: args.policy,
        seed: args.seed,
        completed: summary.completed,
        response: stats.summary(),
        simulated_seconds: summary.end.as_secs_f64(),
        wall_seconds,
        simulated_requests_per_wall_second: summary.completed as f64 / wall_seconds.max(1e-9),
    })
}

fn print_report(report: &Report, json: bool) -> anyhow::Result<()> {
    if json {
        println!("{}", serde_json::to_string(report)?);
        return Ok(());
    }
    let response = &report.response;
    println!(
        "{}: {} {:?} {} KiB requests, read fraction {}, queue depth {}, seed {}",
        report.disk,
        report.completed,
        report.pattern,
        report.size_kib,
        report.read_fraction,
        report.queue_depth,
        report.seed
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
        let report = simulate(device, "fake", &args).unwrap();
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
}
