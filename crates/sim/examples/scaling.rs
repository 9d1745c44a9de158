//! Engine cost against request count: closed-loop random 4 KiB reads at queue depth 1
//! on the fixed-service fake device, for 10^4 .. 10^7 requests. If the engine's cost
//! per request is constant, requests per wall second stay flat across sizes.
//!
//! `cargo run --release -p spinstack-sim --example scaling [max_exponent]`

use spinstack_sim::driver::run_closed_loop;
use spinstack_sim::engine::{Engine, EngineOptions};
use spinstack_sim::fake::FixedServiceDevice;
use spinstack_sim::stats::ResponseStats;
use spinstack_sim::units::{Lbn, Nanoseconds, Sectors};
use spinstack_sim::workload::{AccessPattern, Workload, WorkloadSpec};
use std::time::Instant;

fn main() {
    let max_exponent: u32 = std::env::args()
        .nth(1)
        .and_then(|word| word.parse().ok())
        .unwrap_or(7);
    println!("{:>10}  {:>10}  {:>14}", "requests", "wall s", "requests/s");
    for exponent in 4..=max_exponent {
        let count = 10u64.pow(exponent);
        let mut engine = Engine::new(EngineOptions::default());
        engine.add_device(FixedServiceDevice::new(
            Sectors(1 << 30),
            Nanoseconds(5_000_000),
            4,
        ));
        let mut workload = Workload::new(WorkloadSpec {
            pattern: AccessPattern::Random,
            read_fraction: 1.0,
            request_sectors: Sectors(8),
            lbn_start: Lbn(0),
            lbn_end: Lbn(1 << 30),
            count,
            think: Nanoseconds::ZERO,
            seed: 1,
        })
        .expect("valid workload");
        let mut stats = ResponseStats::new();
        let started = Instant::now();
        run_closed_loop(&mut engine, 1, &mut workload, |done| {
            stats.record(done.completion.response_time())
        })
        .expect("fake device accepts every request");
        let wall = started.elapsed().as_secs_f64();
        assert_eq!(stats.count(), count);
        println!("{count:>10}  {wall:>10.3}  {:>14.0}", count as f64 / wall);
    }
}
