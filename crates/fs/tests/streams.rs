//! Streams on the Maxtor Atlas 10K V in simulated time. What it proves: each
//! new stream records one start-up latency; an idle disk starts the first
//! stream within a few revolutions; a run that cannot keep up (many streams on
//! a tiny give-up limit) stops adding streams at the first one over the limit;
//! a call larger than the read-ahead window waits for the disk once per
//! window, as Linux serves it, and its first byte comes no later than its
//! return; read-ahead the cache cannot hold until it is read is counted.

use spinstack_disk::drive::{Drive, DriveOptions};
use spinstack_fs::cache::{PageCache, Replacement};
use spinstack_fs::readahead::Policy;
use spinstack_fs::streams::{Pacing, StreamReport, StreamSetup, StreamWorkload, Streams};
use spinstack_fs::{Allocator, AllocatorConfig};
use spinstack_sim::driver::run;
use spinstack_sim::engine::{Engine, EngineOptions};
use spinstack_sim::units::Nanoseconds;

/// The cache of most tests: 16 MB, far more than their streams read ahead.
const CACHE_BYTES: u64 = 16 << 20;

fn streams(max_streams: usize, give_up_ms: u64, seed: u64) -> StreamReport {
    streams_of(max_streams, give_up_ms, seed, 16, Pacing::FixedRate)
}

fn streams_of(
    max_streams: usize,
    give_up_ms: u64,
    seed: u64,
    read_pages: u64,
    pacing: Pacing,
) -> StreamReport {
    streams_cached(
        max_streams,
        give_up_ms,
        seed,
        read_pages,
        pacing,
        CACHE_BYTES,
    )
}

fn streams_cached(
    max_streams: usize,
    give_up_ms: u64,
    seed: u64,
    read_pages: u64,
    pacing: Pacing,
    cache_bytes: u64,
) -> StreamReport {
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
        indirect: None,
        policy: Policy::linux_default(),
        cache: PageCache::new(cache_bytes, 4096, Replacement::ActiveInactive).unwrap(),
        elevator: None,
    };
    let workload = StreamWorkload {
        read_pages,
        period: Nanoseconds::from_ms(128),
        pacing,
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
    assert_eq!(relaxed.startup_latency().len(), 5, "seed {seed}");
    // Seek + rotation + 64 KB on an idle disk: well under 50 ms.
    assert!(
        relaxed.startup_latency()[0] < Nanoseconds::from_ms(50),
        "seed {seed}"
    );
    assert!(relaxed.requests > 0 && relaxed.sectors > 0);
    // A new stream every 10 ms at 500 KB/s each, with a 1 ms limit: the first
    // stream that waits more than 1 ms ends the run.
    let strict = streams(200, 1, seed);
    let last = *strict.startup_latency().last().expect("a stream started");
    assert!(last > Nanoseconds::from_ms(1), "seed {seed}");
    assert!(strict.startup_latency().len() < 200, "seed {seed}");
}

#[test]
fn a_call_larger_than_the_window_waits_once_per_window() {
    let seed = 11;
    // 125 pages (500 KB) from a random page with Linux's 128 KB window: a
    // 32-page read, then the window with its ahead window (one request), then
    // the next ahead window: three waits on an idle disk, never fewer than two.
    let report = streams_of(3, 3000, seed, 125, Pacing::SleepAfterCall);
    assert_eq!(report.startups.len(), 3, "seed {seed}");
    for (k, startup) in report.startups.iter().enumerate() {
        let (Some(latency), Some(first_byte)) = (startup.latency, startup.first_byte) else {
            panic!("seed {seed}: stream {k} did not start: {startup:?}");
        };
        assert!(
            first_byte <= latency,
            "seed {seed}: stream {k}: {startup:?}"
        );
        assert!(
            (2..=3).contains(&startup.disk_waits),
            "seed {seed}: stream {k}: {startup:?}"
        );
    }
    // The first stream found nothing in flight; each wait had its own request.
    assert_eq!(report.startups[0].queued_at_start, 0, "seed {seed}");
    assert!(report.requests >= 3 * 3, "seed {seed}: {}", report.requests);
}

// Proves `evicted_unread_pages` counts read-ahead the cache lets go before a
// stream reads it (raid5-streams reports it): none when the cache holds
// every stream's windows, some when twenty streams' 128 KB ahead windows
// share a 256 KB cache, and never more than the pages read.
#[test]
fn read_ahead_evicted_before_it_is_read_is_counted() {
    let seed = 5;
    let roomy = streams_of(20, 3000, seed, 125, Pacing::SleepAfterCall);
    assert_eq!(roomy.evicted_unread_pages, 0, "seed {seed}: {roomy:?}");
    let tight = streams_cached(20, 3000, seed, 125, Pacing::SleepAfterCall, 256 << 10);
    assert!(tight.evicted_unread_pages > 0, "seed {seed}: {tight:?}");
    let pages_read = tight.sectors / 8;
    assert!(
        tight.evicted_unread_pages <= pages_read,
        "seed {seed}: {} evicted of {pages_read} read",
        tight.evicted_unread_pages
    );
}
