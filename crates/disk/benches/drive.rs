//! Drive model cost: closed-loop random 4 KiB reads on the Atlas 10K (DiskSim's
//! DIXtrac-extracted model, imported from the shared validation data) at queue depth
//! 1 and 16, a replay of a validation trace at queue depth 1, and a scaling series
//! (cost per request should not grow with the request count).
//!
//! The drive files are read from `../shared/disksim/` relative to the workspace; when
//! that folder is absent every benchmark prints a message and measures nothing.

use spinstack_disk::drive::{Drive, DriveOptions};
use spinstack_disk::import::load_parv;
use spinstack_disk::spec::{DriveSpec, SchedulingPolicy};
use spinstack_sim::device::BlockDevice;
use spinstack_sim::driver::{run_closed_loop, RequestSpec};
use spinstack_sim::engine::{DeviceId, Engine, EngineOptions};
use spinstack_sim::trace::{read_validate_trace, ValidateRecord};
use spinstack_sim::units::{Lbn, Nanoseconds, Sectors};
use spinstack_sim::workload::{AccessPattern, Workload, WorkloadSpec};
use std::path::PathBuf;

fn main() {
    divan::main();
}

fn shared(relative: &str) -> Option<PathBuf> {
    spinstack_testdata::disksim(relative, "benchmark on DiskSim's validation data")
}

fn load(stem: &str) -> Option<DriveSpec> {
    let path = shared(&format!("params/{stem}.parv"))?;
    Some(load_parv(&path).unwrap_or_else(|error| panic!("{}: {error}", path.display())))
}

fn drive(spec: &DriveSpec, depth: u32, policy: SchedulingPolicy) -> Drive {
    let options = DriveOptions {
        queue_depth: Some(depth),
        policy: Some(policy),
        ..DriveOptions::default()
    };
    Drive::new(spec, options).expect("drive builds")
}

/// Closed-loop random 4 KiB reads over the whole drive; returns the summed response time.
fn random_reads(spec: &DriveSpec, depth: u32, policy: SchedulingPolicy, count: u64) -> u64 {
    let drive = drive(spec, depth, policy);
    let mut workload = Workload::new(WorkloadSpec {
        pattern: AccessPattern::Random,
        read_fraction: 1.0,
        request_sectors: Sectors(8),
        lbn_start: Lbn(0),
        lbn_end: Lbn(drive.capacity().0),
        count,
        think: Nanoseconds::ZERO,
        seed: 7,
    })
    .expect("valid workload");
    let mut engine = Engine::new(EngineOptions::default());
    engine.add_device(drive);
    let mut total = 0u64;
    run_closed_loop(&mut engine, depth, &mut workload, |done| {
        total += done.completion.response_time().0
    })
    .expect("drive accepts the workload");
    total
}

const REQUESTS: u64 = 20_000;

#[divan::bench(args = [1, 16])]
fn atlas10k_random_4k_fcfs(bencher: divan::Bencher, depth: u32) {
    let Some(spec) = load("atlas10k") else { return };
    bencher
        .counter(divan::counter::ItemsCount::new(REQUESTS))
        .bench(|| random_reads(&spec, depth, SchedulingPolicy::Fcfs, REQUESTS));
}

#[divan::bench(args = [16])]
fn atlas10k_random_4k_sptf(bencher: divan::Bencher, depth: u32) {
    let Some(spec) = load("atlas10k") else { return };
    bencher
        .counter(divan::counter::ItemsCount::new(REQUESTS))
        .bench(|| random_reads(&spec, depth, SchedulingPolicy::Sptf, REQUESTS));
}

/// Cost against request count: items/s should stay roughly flat from 10^4 to 10^6
/// (run `cargo run --release -p spinstack-sim --example scaling` for the engine alone
/// up to 10^7).
#[divan::bench(args = [10_000, 100_000, 1_000_000], sample_count = 3, sample_size = 1)]
fn atlas10k_scaling_qd1(bencher: divan::Bencher, count: u64) {
    let Some(spec) = load("atlas10k") else { return };
    bencher
        .counter(divan::counter::ItemsCount::new(count))
        .bench(|| random_reads(&spec, 1, SchedulingPolicy::Fcfs, count));
}

/// Replay of the Atlas III validation trace as DiskSim's validate mode does: one
/// request at a time, each issued its think time after the previous completes.
#[divan::bench]
fn atlas_iii_trace_replay(bencher: divan::Bencher) {
    let (Some(spec), Some(trace)) = (load("atlas_III"), shared("traces/atlas_III.trace")) else {
        return;
    };
    let records = read_validate_trace(&trace).expect("trace parses");
    bencher
        .counter(divan::counter::ItemsCount::new(records.len()))
        .bench(|| replay(&spec, &records));
}

fn replay(spec: &DriveSpec, records: &[ValidateRecord]) -> u64 {
    let mut engine = Engine::new(EngineOptions::default());
    engine.add_device(Drive::new(spec, DriveOptions::default()).expect("drive builds"));
    let mut next = records.iter();
    let mut source = |_: DeviceId| {
        next.next().map(|record| RequestSpec {
            operation: record.operation,
            lbn: record.lbn,
            sectors: record.sectors,
            think_after: record.think,
        })
    };
    let mut total = 0u64;
    run_closed_loop(&mut engine, 1, &mut source, |done| {
        total += done.completion.response_time().0
    })
    .expect("drive accepts the trace");
    total
}
