//! Engine overhead: closed-loop random 4 KiB reads against the fixed-service fake
//! device, so the time measured is the engine's, the driver's and the workload
//! generator's, not a disk model's.

use spinstack_sim::driver::run_closed_loop;
use spinstack_sim::engine::{Engine, EngineOptions};
use spinstack_sim::fake::FixedServiceDevice;
use spinstack_sim::units::{Lbn, Nanoseconds, Sectors};
use spinstack_sim::workload::{AccessPattern, Workload, WorkloadSpec};

const REQUESTS: u64 = 100_000;
const CAPACITY: Sectors = Sectors(1 << 30);

fn main() {
    divan::main();
}

fn run(devices: usize, depth: u32) -> u64 {
    let mut engine = Engine::new(EngineOptions::default());
    for _ in 0..devices {
        engine.add_device(FixedServiceDevice::new(
            CAPACITY,
            Nanoseconds(5_000_000),
            64,
        ));
    }
    let mut workload = Workload::new(WorkloadSpec {
        pattern: AccessPattern::Random,
        read_fraction: 1.0,
        request_sectors: Sectors(8),
        lbn_start: Lbn(0),
        lbn_end: Lbn(CAPACITY.0),
        count: REQUESTS,
        think: Nanoseconds::ZERO,
        seed: 42,
    })
    .expect("valid workload");
    let mut total_response = 0u64;
    run_closed_loop(&mut engine, depth, &mut workload, |done| {
        total_response += done.completion.response_time().0;
    })
    .expect("fake device accepts every request");
    total_response
}

/// One device; `REQUESTS` requests per iteration.
#[divan::bench(args = [1, 16])]
fn one_device(bencher: divan::Bencher, depth: u32) {
    bencher
        .counter(divan::counter::ItemsCount::new(REQUESTS))
        .bench(|| run(1, divan::black_box(depth)));
}

/// 6,400 devices (the disaster-recovery study's count) sharing one clock.
#[divan::bench(args = [1, 16])]
fn many_devices(bencher: divan::Bencher, depth: u32) {
    bencher
        .counter(divan::counter::ItemsCount::new(REQUESTS))
        .bench(|| run(6_400, divan::black_box(depth)));
}
