//! Scans on a fixed-service device (fast, no drive model), with random track
//! maps, file counts, read sizes, read-ahead policies and cache sizes — down to
//! caches smaller than one read-ahead, where read-ahead pages are evicted
//! before they are read and must be fetched again. What it proves: a scan
//! always ends, makes one call per `read_pages` of each file, fetches every
//! page at least once, and issues only requests inside the volume. Seeded;
//! the seed is printed on failure.

mod common;

use proptest::prelude::*;
use spinstack_fs::cache::{PageCache, Replacement};
use spinstack_fs::readahead::{Policy, ReadAhead, WindowLimit};
use spinstack_fs::scan::{ReadCost, Scan, ScanSetup, ScannedFile};
use spinstack_fs::Allocator;
use spinstack_sim::driver::run;
use spinstack_sim::engine::{Engine, EngineOptions};
use spinstack_sim::fake::FixedServiceDevice;
use spinstack_sim::rng::SplitMix64;
use spinstack_sim::units::Nanoseconds;

fn random_scan(seed: u64) -> Result<(), String> {
    let mut rng = SplitMix64::new(seed);
    let sizes: Vec<u64> = (0..100).map(|_| 8 + rng.below(60)).collect();
    let map = common::map_of(&sizes);
    let policies = common::small_policies(16 + rng.below(64));
    let (name, config) = policies[rng.below(4) as usize];
    let mut allocator = Allocator::new(&map, config).map_err(|e| e.to_string())?;
    let files = 1 + rng.below(3) as usize;
    let runs: Vec<Vec<_>> = (0..files)
        .map(|_| {
            let file = allocator.create(0).unwrap();
            allocator.allocate(file, 1 + rng.below(120)).unwrap();
            allocator.runs(file).unwrap().to_vec()
        })
        .collect();
    let policy = [
        Policy::ffs_unmodified(),
        Policy::ffs_fast_start(),
        Policy::ffs_traxtent(),
        Policy::linux_default(),
        Policy::LinuxWindow {
            limit: WindowLimit::Tracks(2),
        },
        Policy::TrackAligned,
    ][rng.below(6) as usize];
    let read_pages = 1 + rng.below(4);
    let cache_pages = read_pages + rng.below(40);
    let block_bytes = config.block_size.bytes();
    let device = FixedServiceDevice::new(map.capacity(), Nanoseconds::from_us(500), 64);
    let mut engine = Engine::new(EngineOptions::default());
    let id = engine.add_device(device);
    let setup = ScanSetup {
        device: id,
        map: &map,
        block_size: config.block_size,
        read_pages,
        cost: ReadCost::pentium3_buffered(),
        cache: PageCache::new(
            cache_pages * block_bytes,
            block_bytes,
            Replacement::ActiveInactive,
        )
        .unwrap(),
    };
    let scanned = runs
        .iter()
        .map(|runs| ScannedFile {
            runs,
            indirect: None,
            read_ahead: ReadAhead::new(policy),
        })
        .collect();
    let mut host = Scan::new(setup, scanned);
    let at = format!("seed {seed} ({name}, {policy:?}, {files} files, {read_pages} pages a call, {cache_pages}-page cache)");
    run(&mut engine, &mut host).map_err(|e| format!("{at}: {e}"))?;
    let report = host.report();
    let pages: Vec<u64> = runs
        .iter()
        .map(|r| r.iter().map(|run| run.blocks).sum())
        .collect();
    let calls: u64 = pages.iter().map(|p| p.div_ceil(read_pages)).sum();
    if report.calls != calls {
        return Err(format!("{at}: {} calls, expected {calls}", report.calls));
    }
    if report.pages_fetched < pages.iter().sum::<u64>() {
        return Err(format!(
            "{at}: {} pages fetched of {}",
            report.pages_fetched,
            pages.iter().sum::<u64>()
        ));
    }
    if let Some(bad) = report
        .requests
        .iter()
        .find(|r| r.done.is_none() || r.lbn.0 + r.sectors.0 > map.capacity().0)
    {
        return Err(format!("{at}: request {bad:?}"));
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    /// Every scan ends having read every page, whatever the cache size.
    #[test]
    fn scans_end_and_read_everything(seed in any::<u64>()) {
        random_scan(seed).map_err(TestCaseError::fail)?;
    }
}
