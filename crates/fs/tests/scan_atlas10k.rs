//! A linear scan of a file on the Quantum Atlas 10K in simulated time, through
//! the one event loop, under unmodified FFS, fast start and traxtent FFS
//! (allocation and read-ahead together): every page is fetched once; traxtent
//! FFS's requests never cross a track boundary while unmodified FFS's do; the
//! times are printed (the traxtents paper's 4 GB scan: 189.6 / 188.9 / 199.8 s,
//! Table 2). A unit of the model, not the `table2-ffs` experiment.

use spinstack_disk::drive::{Drive, DriveOptions};
use spinstack_fs::cache::{PageCache, Replacement};
use spinstack_fs::readahead::{Policy, ReadAhead};
use spinstack_fs::scan::{LinearScan, ReadCost, ScanReport};
use spinstack_fs::{Allocator, AllocatorConfig};
use spinstack_sim::driver::run;
use spinstack_sim::engine::{Engine, EngineOptions};
use spinstack_trackmap::TrackMap;
use spinstack_volume::timed::{HostCost, Striped};

/// 64 MB: four of FFS's 16 MB per-group sections.
const FILE_BLOCKS: u64 = 8192;

fn scan(config: AllocatorConfig, policy: Policy) -> (ScanReport, TrackMap) {
    let mut spec = spinstack_disk::catalog::get("atlas10k").expect("built-in drive");
    // The traxtents testbed's 80 MB/s Ultra2 Wide SCSI link (§5.1), not the
    // 5 MB/s link the DiskSim parameter set was extracted on (as
    // `spinstack_lab::drives::with_host_link` does for the lab's experiments).
    spec.firmware.bus_sector_transfer_ms = 512.0 / 80e6 * 1e3;
    let drive = Drive::new(&spec, DriveOptions::default()).expect("valid drive");
    let map = drive.layout().track_map("atlas10k");
    let mut allocator = Allocator::new(&map, config).expect("fits the drive");
    let file = allocator.create(0).unwrap();
    allocator.allocate(file, FILE_BLOCKS).unwrap();
    let runs = allocator.runs(file).unwrap().to_vec();
    // One drive with the DAB paper's host cost per device I/O and no plug
    // (FreeBSD's driver does not hold requests back).
    let device = Striped::single(
        drive,
        Some(map.clone()),
        HostCost::windows2000_device_io(),
        None,
    )
    .expect("single drive");
    let mut engine = Engine::new(EngineOptions::default());
    let id = engine.add_device(device);
    let cache = PageCache::new(128 << 20, 8192, Replacement::Lru).unwrap();
    let mut host = LinearScan::new(
        id,
        &runs,
        &map,
        config.block_size,
        1,
        ReadCost::pentium3_buffered(),
        cache,
        ReadAhead::new(policy),
    );
    run(&mut engine, &mut host).expect("the scan runs");
    (host.report().clone(), map)
}

fn crossing(map: &TrackMap, report: &ScanReport) -> usize {
    report
        .requests
        .iter()
        .filter(|r| {
            let last = r.lbn.offset(spinstack_sim::units::Sectors(r.sectors.0 - 1));
            map.track_index_of(r.lbn) != map.track_index_of(last)
        })
        .count()
}

#[test]
fn linear_scan_aligned_and_unaligned_read_ahead() {
    let variants = [
        (
            "unmodified",
            AllocatorConfig::ffs(),
            Policy::ffs_unmodified(),
        ),
        (
            "fast start",
            AllocatorConfig::ffs(),
            Policy::ffs_fast_start(),
        ),
        (
            "traxtents",
            AllocatorConfig::traxtent_ffs(),
            Policy::ffs_traxtent(),
        ),
    ];
    let mut seconds = Vec::new();
    for (name, config, policy) in variants {
        let (report, map) = scan(config, policy);
        let crossings = crossing(&map, &report);
        let mean_kib = report.pages_fetched * 8 / report.requests.len() as u64;
        eprintln!(
            "{name}: {:.3} s for {} MB, {} requests (mean {mean_kib} KB), {crossings} cross a track boundary, CPU {:.3} s",
            report.elapsed.as_secs_f64(),
            FILE_BLOCKS * 8 / 1024,
            report.requests.len(),
            report.cpu.as_secs_f64()
        );
        assert_eq!(report.pages_fetched, FILE_BLOCKS, "{name}: every page once");
        assert_eq!(report.calls, FILE_BLOCKS, "{name}: one 8 KB call per block");
        if name == "traxtents" {
            assert_eq!(crossings, 0, "traxtent requests stay on one track");
        } else {
            assert!(crossings > 0, "{name}: unaligned requests cross tracks");
        }
        seconds.push(report.elapsed.as_secs_f64());
    }
    eprintln!(
        "traxtents / unmodified: {:.3} (paper's 4 GB scan: 199.8 / 189.6 = {:.3})",
        seconds[2] / seconds[0],
        199.8 / 189.6
    );
}
