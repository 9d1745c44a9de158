//! Scans on the Quantum Atlas 10K in simulated time, through the one event
//! loop, under unmodified FFS, fast start and traxtent FFS (allocation and
//! read-ahead together): a linear scan of one file, and two files read in turn
//! as `diff` does. What it proves: every page is fetched once; traxtent FFS's
//! requests never cross a track boundary while unmodified FFS's do. The times
//! and request sizes are printed beside the traxtents paper's (Table 2: 4 GB
//! scan 189.6 / 188.9 / 199.8 s; 512 MB diff 69.7 / 70.0 / 56.6 s, 4108 I/Os of
//! mostly 256 KB vs 6724 averaging 160 KB); they are not asserted — this is a
//! unit of the model, not the `table2-ffs` experiment.

mod common;

use spinstack_disk::drive::{Drive, DriveOptions};
use spinstack_fs::readahead::{Policy, ReadAhead};
use spinstack_fs::scan::{Scan, ScanReport, ScannedFile};
use spinstack_fs::{Allocator, AllocatorConfig};
use spinstack_sim::driver::run;
use spinstack_sim::engine::{Engine, EngineOptions};
use spinstack_sim::units::Sectors;
use spinstack_trackmap::TrackMap;
use spinstack_volume::timed::{HostCost, Striped};

/// 64 MB: four of FFS's 16 MB per-group sections.
const FILE_BLOCKS: u64 = 8192;

/// Scans `files` files of `blocks` blocks each, created one after the other
/// in group 0 (one directory), read in turn one 8 KB block per call.
fn scan(
    config: AllocatorConfig,
    policy: Policy,
    files: usize,
    blocks: u64,
) -> (ScanReport, TrackMap) {
    // The traxtents testbed's 80 MB/s Ultra2 Wide SCSI link (§5.1), not the
    // 5 MB/s link the DiskSim parameter set was extracted on.
    let spec = spinstack_disk::catalog::resolve("atlas10k@80MB/s").expect("built-in drive");
    let drive = Drive::new(&spec, DriveOptions::default()).expect("valid drive");
    let map = drive.layout().track_map("atlas10k");
    let mut allocator = Allocator::new(&map, config).expect("fits the drive");
    let runs: Vec<Vec<_>> = (0..files)
        .map(|_| {
            let file = allocator.create(0).unwrap();
            allocator.allocate(file, blocks).unwrap();
            allocator.runs(file).unwrap().to_vec()
        })
        .collect();
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
    let setup = common::ffs_scan_setup(id, &map, config.block_size);
    let scanned = runs
        .iter()
        .map(|runs| ScannedFile {
            runs,
            indirect: None,
            read_ahead: ReadAhead::new(policy),
        })
        .collect();
    let mut host = Scan::new(setup, scanned);
    run(&mut engine, &mut host).expect("the scan runs");
    (host.report().clone(), map)
}

fn crossing(map: &TrackMap, report: &ScanReport) -> usize {
    report
        .requests
        .iter()
        .filter(|r| {
            let last = r.lbn.offset(Sectors(r.sectors.0 - 1));
            map.track_index_of(r.lbn) != map.track_index_of(last)
        })
        .count()
}

fn variants() -> [(&'static str, AllocatorConfig, Policy); 3] {
    [
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
    ]
}

/// Checks one variant's report and prints it; returns its seconds.
fn check(
    what: &str,
    name: &str,
    files: usize,
    blocks: u64,
    report: &ScanReport,
    map: &TrackMap,
) -> f64 {
    let crossings = crossing(map, report);
    let mean_kib = report.pages_fetched * 8 / report.requests.len() as u64;
    eprintln!(
        "{what}, {name}: {:.3} s, {} requests (mean {mean_kib} KB), {crossings} cross a track boundary, CPU {:.3} s",
        report.elapsed.as_secs_f64(),
        report.requests.len(),
        report.cpu.as_secs_f64()
    );
    assert_eq!(
        report.pages_fetched,
        files as u64 * blocks,
        "{name}: every page once"
    );
    assert_eq!(
        report.calls,
        files as u64 * blocks,
        "{name}: one 8 KB call per block"
    );
    if name == "traxtents" {
        assert_eq!(crossings, 0, "traxtent requests stay on one track");
    } else {
        assert!(crossings > 0, "{name}: unaligned requests cross tracks");
    }
    report.elapsed.as_secs_f64()
}

#[test]
fn linear_scan_aligned_and_unaligned_read_ahead() {
    let mut seconds = Vec::new();
    for (name, config, policy) in variants() {
        let (report, map) = scan(config, policy, 1, FILE_BLOCKS);
        seconds.push(check("scan of 64 MB", name, 1, FILE_BLOCKS, &report, &map));
    }
    eprintln!(
        "scan: traxtents / unmodified {:.3} (paper's 4 GB scan: 199.8 / 189.6 = {:.3})",
        seconds[2] / seconds[0],
        199.8 / 189.6
    );
}

#[test]
fn two_files_read_in_turn_like_diff() {
    let blocks = FILE_BLOCKS / 2;
    let mut seconds = Vec::new();
    for (name, config, policy) in variants() {
        let (report, map) = scan(config, policy, 2, blocks);
        seconds.push(check("diff of 2 x 32 MB", name, 2, blocks, &report, &map));
    }
    eprintln!(
        "diff: traxtents / unmodified {:.3} (paper's 512 MB diff: 56.6 / 69.7 = {:.3})",
        seconds[2] / seconds[0],
        56.6 / 69.7
    );
}
