//! A linear scan on the Maxtor Atlas 10K V (the validation paper's drive) under
//! Linux ext2 with its 128 KB window and Linux 2.6's plug, and under the paper's
//! track-aligned ext2 (boundary-crossing blocks as bad blocks, preallocation to
//! the track boundary, track-aligned read-ahead, track-aware plug). What it
//! proves: every page is fetched once; the track-aligned stack sends the drive
//! no request that crosses a track boundary while the conventional one does.
//! The times are printed (validation Fig. 5: ~3% slower track-aligned); this is
//! a unit of the model, not the `ext2-bonnie` experiment.

use spinstack_disk::drive::{Drive, DriveOptions};
use spinstack_fs::cache::{PageCache, Replacement};
use spinstack_fs::readahead::{Policy, ReadAhead};
use spinstack_fs::scan::{ReadCost, Scan, ScanSetup, ScannedFile};
use spinstack_fs::{Allocator, AllocatorConfig};
use spinstack_sim::driver::run;
use spinstack_sim::engine::{Engine, EngineOptions};
use spinstack_volume::timed::{HostCost, PlugPolicy, Striped};

/// 64 MB of 4 KB blocks, written in 8-block (32 KB) pieces as a writer would.
const FILE_BLOCKS: u64 = 16384;

#[test]
fn ext2_scan_conventional_and_track_aligned() {
    let spec = spinstack_disk::catalog::get("maxtor10kv-czk").expect("built-in drive");
    let mut seconds = Vec::new();
    for (name, config, policy, track_aware) in [
        (
            "conventional",
            AllocatorConfig::ext2(),
            Policy::linux_default(),
            false,
        ),
        (
            "track-aligned",
            AllocatorConfig::ext2_track_aligned(),
            Policy::TrackAligned,
            true,
        ),
    ] {
        let drive = Drive::new(&spec, DriveOptions::default()).expect("valid drive");
        let map = drive.layout().track_map(&spec.name);
        let mut allocator = Allocator::new(&map, config).expect("fits the drive");
        let file = allocator.create(0).unwrap();
        for _ in 0..FILE_BLOCKS / 8 {
            allocator.allocate(file, 8).unwrap();
        }
        allocator.close(file).unwrap();
        let runs = allocator.runs(file).unwrap().to_vec();
        let plug = PlugPolicy {
            track_aware,
            ..PlugPolicy::linux26()
        };
        let device = Striped::single(
            drive,
            Some(map.clone()),
            HostCost::windows2000_device_io(),
            Some(plug),
        )
        .expect("single drive");
        let mut engine = Engine::new(EngineOptions::default());
        let id = engine.add_device(device);
        let setup = ScanSetup {
            device: id,
            map: &map,
            block_size: config.block_size,
            read_pages: 2,
            cost: ReadCost::pentium3_buffered(),
            cache: PageCache::new(128 << 20, 4096, Replacement::ActiveInactive).unwrap(),
        };
        let file = ScannedFile {
            runs: &runs,
            indirect: None,
            read_ahead: ReadAhead::new(policy),
        };
        let mut host = Scan::new(setup, vec![file]);
        run(&mut engine, &mut host).expect("the scan runs");
        let report = host.report();
        let stats = engine.device(id).unwrap().stats()[0];
        eprintln!(
            "{name}: {:.3} s for 64 MB, {} file-system requests, {} drive requests ({} whole tracks, {} crossing a boundary)",
            report.elapsed.as_secs_f64(),
            report.requests.len(),
            stats.requests,
            stats.whole_track_requests,
            stats.track_crossing_requests
        );
        assert_eq!(report.pages_fetched, FILE_BLOCKS, "{name}: every page once");
        if track_aware {
            assert_eq!(stats.track_crossing_requests, 0, "{name}");
        } else {
            assert!(stats.track_crossing_requests > 0, "{name}");
        }
        seconds.push(report.elapsed.as_secs_f64());
    }
    eprintln!(
        "track-aligned / conventional: {:.3}",
        seconds[1] / seconds[0]
    );
}
