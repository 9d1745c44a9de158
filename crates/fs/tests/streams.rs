//! Streams on the Maxtor Atlas 10K V in simulated time. What it proves: each
//! new stream records one start-up latency; an idle disk starts the first
//! stream within a few revolutions; a run that cannot keep up (many streams on
//! a tiny give-up limit) stops adding streams at the first one over the limit.

use spinstack_disk::drive::{Drive, DriveOptions};
use spinstack_fs::cache::{PageCache, Replacement};
use spinstack_fs::readahead::Policy;
use spinstack_fs::streams::{StreamReport, StreamSetup, StreamWorkload, Streams};
use spinstack_fs::{Allocator, AllocatorConfig};
use spinstack_sim::driver::run;
use spinstack_sim::engine::{Engine, EngineOptions};
use spinstack_sim::units::Nanoseconds;

fn streams(max_streams: usize, give_up_ms: u64, seed: u64) -> StreamReport {
    let spec = spinstack_disk::catalog::get("maxtor10kv-czk").expect("built-in drive");
    let drive = Drive::new(&spec, DriveOptions::default()).expect("valid drive");
    let map = drive.layout().track_map(&spec.name);
    let config = AllocatorConfig::ext2();
    let mut allocator = Allocator::new(&map, config).unwrap();
    let file = allocator.create(0).unwrap();
    allocator.allocate(file, 1 << 16).unwrap();
    let runs = allocator.runs(file).unwrap().to_vec();
    let mut engine = Engine::new(EngineOptions::default());
    let id = engine.add_device(drive);
    let setup = StreamSetup {
        device: id,
        map: &map,
        block_size: config.block_size,
        runs: &runs,
        policy: Policy::linux_default(),
        cache: PageCache::new(16 << 20, 4096, Replacement::ActiveInactive).unwrap(),
    };
    let workload = StreamWorkload {
        read_pages: 16,
        period: Nanoseconds::from_ms(128),
        arrival_interval: Nanoseconds::from_ms(10),
        give_up_after: Nanoseconds::from_ms(give_up_ms),
        max_streams,
        seed,
    };
    let mut host = Streams::new(setup, workload);
    run(&mut engine, &mut host).expect("the streams run");
    host.report().clone()
}

#[test]
fn each_stream_records_its_start_up_and_the_run_stops_at_the_limit() {
    let seed = 7;
    let relaxed = streams(5, 3000, seed);
    assert_eq!(relaxed.startup_latency.len(), 5, "seed {seed}");
    // Seek + rotation + 64 KB on an idle disk: well under 50 ms.
    assert!(
        relaxed.startup_latency[0] < Nanoseconds::from_ms(50),
        "seed {seed}"
    );
    assert!(relaxed.requests > 0 && relaxed.sectors > 0);
    // A new stream every 10 ms at 500 KB/s each, with a 1 ms limit: the first
    // stream that waits more than 1 ms ends the run.
    let strict = streams(200, 1, seed);
    let last = *strict.startup_latency.last().expect("a stream started");
    assert!(last > Nanoseconds::from_ms(1), "seed {seed}");
    assert!(strict.startup_latency.len() < 200, "seed {seed}");
}
