//! Reads through indirect blocks, on catalog drives in simulated time. What it
//! proves: a scan of a file whose indirect blocks are not cached reads each of
//! them once, one block per request, and only then the data it maps (no data
//! request for a page past a block is issued before that block arrives); with
//! them cached (`IndirectMap::warm`) it reads none and the same data; streams
//! over an ext2 file read the indirect blocks their positions need, and none
//! when they are cached.

mod common;

use spinstack_disk::drive::{Drive, DriveOptions};
use spinstack_fs::cache::{PageCache, Replacement};
use spinstack_fs::indirect::IndirectMap;
use spinstack_fs::readahead::{Policy, ReadAhead};
use spinstack_fs::scan::{Scan, ScanReport, ScannedFile};
use spinstack_fs::streams::{Pacing, StreamReport, StreamSetup, StreamWorkload, Streams};
use spinstack_fs::{Allocator, AllocatorConfig, BlockNumber, BlockRun};
use spinstack_sim::driver::run;
use spinstack_sim::engine::{Engine, EngineOptions};
use spinstack_sim::units::Nanoseconds;

/// 64 MB of 8 KB FFS blocks: indirect blocks before data blocks 12, 2060
/// (with the double-indirect block), 4108 and 6156.
const FFS_FILE_BLOCKS: u64 = 8192;

/// The disk block of a file's data block `index`.
fn block_of(runs: &[BlockRun], index: u64) -> BlockNumber {
    let mut start = 0;
    for run in runs {
        if index < start + run.blocks {
            return run.first.plus(index - start);
        }
        start += run.blocks;
    }
    panic!("data block {index} is past the file");
}

type Scanned = (ScanReport, Vec<BlockNumber>, Vec<u64>, Vec<BlockRun>);

fn ffs_scan(warm: bool) -> Scanned {
    let spec = spinstack_disk::catalog::get("atlas10k").expect("built-in drive");
    let options = DriveOptions {
        queue_depth: Some(16),
        ..DriveOptions::default()
    };
    let drive = Drive::new(&spec, options).expect("valid drive");
    let map = drive.layout().track_map("atlas10k");
    let config = AllocatorConfig::ffs();
    let mut allocator = Allocator::new(&map, config).expect("fits the drive");
    let file = allocator.create(0).unwrap();
    allocator.allocate(file, FFS_FILE_BLOCKS).unwrap();
    let runs = allocator.runs(file).unwrap().to_vec();
    let indirect = allocator.indirect_blocks(file).unwrap().to_vec();
    // The first data block each indirect block maps, by its LBN order.
    let first_mapped = vec![12, 2060, 2060, 4108, 6156];
    let mut engine = Engine::new(EngineOptions::default());
    let id = engine.add_device(drive);
    let mut setup = common::ffs_scan_setup(id, &map, config.block_size);
    let indirect_map = IndirectMap::new(config.indirect, &indirect);
    if warm {
        indirect_map
            .expect("the file has indirect blocks")
            .warm(&mut setup.cache);
    }
    let scanned = ScannedFile {
        runs: &runs,
        indirect: indirect_map,
        read_ahead: ReadAhead::new(Policy::ffs_unmodified()),
    };
    let mut host = Scan::new(setup, vec![scanned]);
    run(&mut engine, &mut host).expect("the scan runs");
    let report = host.report().clone();
    (report, indirect, first_mapped, runs)
}

#[test]
fn a_cold_scan_reads_each_indirect_block_once_before_the_data_it_maps() {
    let (report, indirect, first_mapped, runs) = ffs_scan(false);
    let block_sectors = AllocatorConfig::ffs().block_size.sectors();
    let metadata: Vec<_> = report.requests.iter().filter(|r| r.metadata).collect();
    assert_eq!(metadata.len(), indirect.len());
    assert_eq!(indirect.len(), first_mapped.len());
    for (block, &first) in indirect.iter().zip(&first_mapped) {
        let lbn = AllocatorConfig::ffs().block_size.first_lbn(*block);
        let fetch = metadata
            .iter()
            .find(|r| r.lbn == lbn)
            .unwrap_or_else(|| panic!("indirect block {block} never read"));
        assert_eq!(fetch.sectors, block_sectors, "one block per request");
        let arrived = fetch.done.expect("the read completed");
        let data_lbn = AllocatorConfig::ffs()
            .block_size
            .first_lbn(block_of(&runs, first))
            .0;
        let too_early =
            report.requests.iter().filter(|r| !r.metadata).any(|r| {
                r.lbn.0 <= data_lbn && data_lbn < r.lbn.0 + r.sectors.0 && r.issued < arrived
            });
        assert!(!too_early, "data past {block} requested before it arrived");
    }
    assert_eq!(report.pages_fetched, FFS_FILE_BLOCKS);
}

#[test]
fn a_warm_scan_reads_no_indirect_block() {
    let (cold, ..) = ffs_scan(false);
    let (warm, ..) = ffs_scan(true);
    assert!(warm.requests.iter().all(|r| !r.metadata));
    assert_eq!(warm.pages_fetched, cold.pages_fetched);
    assert!(warm.elapsed <= cold.elapsed);
}

fn ext2_streams(warm: bool, seed: u64) -> StreamReport {
    let spec = spinstack_disk::catalog::get("maxtor10kv-czk").expect("built-in drive");
    let drive = Drive::new(&spec, DriveOptions::default()).expect("valid drive");
    let map = drive.layout().track_map(&spec.name);
    let config = AllocatorConfig::ext2();
    let mut allocator = Allocator::new(&map, config).unwrap();
    let file = allocator.create(0).unwrap();
    allocator.allocate(file, 1 << 18).unwrap(); // 1 GB: 256 indirect blocks
    let runs = allocator.runs(file).unwrap().to_vec();
    let indirect = allocator.indirect_blocks(file).unwrap().to_vec();
    let mut engine = Engine::new(EngineOptions::default());
    let id = engine.add_device(drive);
    let indirect_map = IndirectMap::new(config.indirect, &indirect);
    let mut cache = PageCache::new(64 << 20, 4096, Replacement::ActiveInactive).unwrap();
    if warm {
        indirect_map
            .expect("the file has indirect blocks")
            .warm(&mut cache);
    }
    let setup = StreamSetup {
        device: id,
        map: &map,
        block_size: config.block_size,
        runs: &runs,
        indirect: indirect_map,
        policy: Policy::linux_default(),
        cache,
        elevator: None,
    };
    let workload = StreamWorkload {
        read_pages: 16,
        period: Nanoseconds::from_ms(128),
        pacing: Pacing::FixedRate,
        arrival_interval: Nanoseconds::from_ms(10),
        give_up_after: Nanoseconds::from_ms(3000),
        max_streams: 8,
        seed,
    };
    let mut host = Streams::new(setup, workload);
    run(&mut engine, &mut host).expect("the streams run");
    host.report().clone()
}

#[test]
fn streams_read_the_indirect_blocks_their_positions_need() {
    let seed = 11;
    let cold = ext2_streams(false, seed);
    let warm = ext2_streams(true, seed);
    assert_eq!(cold.startup_latency().len(), 8, "seed {seed}");
    assert_eq!(warm.startup_latency().len(), 8, "seed {seed}");
    // Eight random positions in 1 GB: at most one indirect block each (two
    // may share one) and the double-indirect block past the first 4 MB.
    assert!(
        (1..=9).contains(&cold.metadata_requests),
        "seed {seed}: {} indirect reads",
        cold.metadata_requests
    );
    assert_eq!(warm.metadata_requests, 0, "seed {seed}");
    assert!(
        cold.startup_latency()[0] > warm.startup_latency()[0],
        "seed {seed}"
    );
}
