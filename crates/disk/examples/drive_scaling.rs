//! Drive model cost against request count: closed-loop random 4 KiB reads on the
//! catalog's Atlas 10K at queue depth 1 and 16, for 10^4 .. 10^7 requests, through the
//! engine on one thread. If the cost per request is constant, requests per second stay
//! flat across sizes.
//!
//! Both a wall-clock and a CPU-time rate are printed: the CPU time of this thread
//! (from `/proc/thread-self/schedstat`, Linux) is what the simulation costs, unaffected
//! by other processes sharing the machine; the wall rate is what a user waits for.
//!
//! `cargo run --release -p spinstack-disk --example drive_scaling [max_exponent] [depths]`
//! (defaults: 7 and `1,16`).

use spinstack_disk::drive::{Drive, DriveOptions};
use spinstack_sim::device::BlockDevice;
use spinstack_sim::driver::run_closed_loop;
use spinstack_sim::engine::{Engine, EngineOptions};
use spinstack_sim::units::{Lbn, Nanoseconds, Sectors};
use spinstack_sim::workload::{AccessPattern, Workload, WorkloadSpec};
use std::time::{Duration, Instant};

fn main() {
    let mut args = std::env::args().skip(1);
    let max_exponent: u32 = args.next().and_then(|w| w.parse().ok()).unwrap_or(7);
    let depths: Vec<u32> = args
        .next()
        .map(|w| w.split(',').filter_map(|d| d.parse().ok()).collect())
        .unwrap_or_else(|| vec![1, 16]);
    let spec = spinstack_disk::catalog::get("atlas10k").expect("catalog has atlas10k");
    println!(
        "{:>5}  {:>10}  {:>8}  {:>8}  {:>12}  {:>12}  {:>12}",
        "depth", "requests", "wall s", "cpu s", "req/wall-s", "req/cpu-s", "mean ms"
    );
    for &depth in &depths {
        for exponent in 4..=max_exponent {
            let count = 10u64.pow(exponent);
            let drive = Drive::new(
                &spec,
                DriveOptions {
                    queue_depth: Some(depth),
                    ..DriveOptions::default()
                },
            )
            .expect("atlas10k builds");
            let run = measure(drive, depth, count);
            println!(
                "{depth:>5}  {count:>10}  {:>8.3}  {:>8.3}  {:>12.0}  {:>12.0}  {:>12.6}",
                run.wall.as_secs_f64(),
                run.cpu.map_or(f64::NAN, |c| c.as_secs_f64()),
                count as f64 / run.wall.as_secs_f64(),
                run.cpu.map_or(f64::NAN, |c| count as f64 / c.as_secs_f64()),
                run.mean_response_ms,
            );
        }
    }
}

struct Run {
    wall: Duration,
    /// `None` where the thread's CPU time cannot be read.
    cpu: Option<Duration>,
    mean_response_ms: f64,
}

fn measure(drive: Drive, depth: u32, count: u64) -> Run {
    let mut workload = Workload::new(WorkloadSpec {
        pattern: AccessPattern::Random,
        read_fraction: 1.0,
        request_sectors: Sectors(8),
        lbn_start: Lbn(0),
        lbn_end: Lbn(drive.capacity().0),
        count,
        think: Nanoseconds::ZERO,
        seed: 1,
    })
    .expect("valid workload");
    let mut engine = Engine::new(EngineOptions::default());
    engine.add_device(drive);
    let mut total_ns = 0u128;
    let mut completed = 0u64;
    let cpu_before = thread_cpu_time();
    let started = Instant::now();
    run_closed_loop(&mut engine, depth, &mut workload, |done| {
        total_ns += u128::from(done.completion.response_time().0);
        completed += 1;
    })
    .expect("the drive accepts every request");
    let wall = started.elapsed();
    let cpu = thread_cpu_time().zip(cpu_before).map(|(a, b)| a - b);
    assert_eq!(completed, count, "every request completes");
    Run {
        wall,
        cpu,
        mean_response_ms: total_ns as f64 / count as f64 / 1e6,
    }
}

/// CPU time consumed by the calling thread so far (Linux schedstat: first field, ns).
fn thread_cpu_time() -> Option<Duration> {
    let text = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    let ns: u64 = text.split_whitespace().next()?.parse().ok()?;
    Some(Duration::from_nanos(ns))
}
