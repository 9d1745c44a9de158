//! Where a scan's time goes on the Quantum Atlas 10K, from the drive's own
//! per-request breakdown (the evidence behind `table2-ffs`'s scan claim). What
//! it proves: unmodified FFS's requests cross track boundaries inside
//! themselves and each crossing waits out the drive's track skew (63 sectors,
//! 1.13 ms: head switch plus rotation), while traxtent FFS's requests are whole
//! tracks less the excluded block, read with zero-latency access, so they pay
//! a head switch and almost no rotation. That is why the model's traxtent scan
//! is faster than unmodified FFS's, where the paper measured it 5% slower.

mod common;

use spinstack_disk::drive::{Drive, DriveOptions};
use spinstack_fs::readahead::{Policy, ReadAhead};
use spinstack_fs::scan::{Scan, ScanReport, ScannedFile};
use spinstack_fs::{Allocator, AllocatorConfig};
use spinstack_sim::driver::run;
use spinstack_sim::engine::{Engine, EngineOptions};

/// 64 MB of 8 KB blocks.
const FILE_BLOCKS: u64 = 8192;

/// A scan of one file on the bare Atlas 10K (80 MB/s link, tagged queue).
fn scan(config: AllocatorConfig, policy: Policy) -> ScanReport {
    let spec = spinstack_disk::catalog::resolve("atlas10k@80MB/s").expect("built-in drive");
    let options = DriveOptions {
        queue_depth: Some(16),
        ..DriveOptions::default()
    };
    let drive = Drive::new(&spec, options).expect("valid drive");
    let map = drive.layout().track_map("atlas10k");
    let mut allocator = Allocator::new(&map, config).expect("fits the drive");
    let file = allocator.create(0).unwrap();
    allocator.allocate(file, FILE_BLOCKS).unwrap();
    let runs = allocator.runs(file).unwrap().to_vec();
    let mut engine = Engine::new(EngineOptions::default());
    let id = engine.add_device(drive);
    let setup = common::ffs_scan_setup(id, &map, config.block_size);
    let file = ScannedFile {
        runs: &runs,
        indirect: None,
        read_ahead: ReadAhead::new(policy),
    };
    let mut host = Scan::new(setup, vec![file]);
    run(&mut engine, &mut host).expect("the scan runs");
    host.report().clone()
}

/// Mean (rotation + head switch) per track's worth of sectors read, in ms; and the number of requests the drive's cache served.
fn switch_cost_ms(report: &ScanReport, track_sectors: u64) -> (f64, usize) {
    let mut cost = 0.0;
    let mut hits = 0;
    let mut tracks = 0.0;
    for request in &report.requests[1..] {
        let detail = request.drive.expect("a bare drive reports its breakdown");
        hits += usize::from(detail.cache_hit);
        let b = detail.breakdown;
        cost += (b.rotational_latency + b.head_switch).as_secs_f64() * 1e3;
        // A sequential stream crosses one boundary per track's worth of sectors.
        tracks += request.sectors.0 as f64 / track_sectors as f64;
    }
    (cost / tracks, hits)
}

#[test]
fn traxtent_requests_do_not_wait_for_the_track_skew() {
    // The outer zone's 334-sector tracks (catalog atlas10k.toml).
    let track_sectors = 334;
    let unmodified = scan(AllocatorConfig::ffs(), Policy::ffs_unmodified());
    let traxtents = scan(AllocatorConfig::traxtent_ffs(), Policy::ffs_traxtent());
    let (unmodified_ms, unmodified_hits) = switch_cost_ms(&unmodified, track_sectors);
    let (traxtent_ms, traxtent_hits) = switch_cost_ms(&traxtents, track_sectors);
    eprintln!(
        "per track read: unmodified {unmodified_ms:.3} ms, traxtents {traxtent_ms:.3} ms; \
         cache hits {unmodified_hits} / {traxtent_hits}; elapsed {:.3} s / {:.3} s",
        unmodified.elapsed.as_secs_f64(),
        traxtents.elapsed.as_secs_f64()
    );
    // 63 sectors of skew at 6 ms per 334-sector revolution: 1.13 ms.
    assert!(unmodified_ms > 0.9, "unmodified waits for the skew");
    assert!(traxtent_ms < 0.6, "zero-latency whole-track reads skip it");
    assert_eq!(
        unmodified_hits + traxtent_hits,
        0,
        "the queue keeps prefetch idle"
    );
    assert!(traxtents.elapsed < unmodified.elapsed);
}
