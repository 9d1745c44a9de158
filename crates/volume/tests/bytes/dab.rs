//! The DMA-aligned buffer's cases, counters and bounds.

use crate::common::{memory, Rng, SECTOR};
use spinstack_sim::units::{Lbn, Sectors};
use spinstack_store::{BlockStore, FaultyStore, MemoryStore};
use spinstack_volume::bytes::{DabConfig, DabCounters, DmaAlignedBuffer, WritePolicy};

fn buffer(policy: WritePolicy, blocks: usize) -> DmaAlignedBuffer<FaultyStore<MemoryStore>> {
    let mut store = memory(4096);
    let data = Rng::new(1).bytes(4096 * SECTOR);
    store.write(Lbn(0), &data).unwrap();
    let config = DabConfig {
        blocks,
        block_sectors: Sectors(256),
        policy,
    };
    DmaAlignedBuffer::new(FaultyStore::new(store), config).unwrap()
}

fn read(dab: &mut DmaAlignedBuffer<FaultyStore<MemoryStore>>, lbn: u64, sectors: usize) {
    let mut buf = vec![0u8; sectors * SECTOR];
    dab.read(Lbn(lbn), &mut buf).unwrap();
}

// Proves the paper's four cases are told apart and counted, that only missing blocks
// are fetched (each with one whole aligned read), and that eviction is LRU.
#[test]
fn the_four_cases_are_counted() {
    let mut dab = buffer(WritePolicy::WriteThrough, 4);
    read(&mut dab, 10, 8); // case 4, miss: block 0 fetched
    read(&mut dab, 20, 8); // case 1, hit
    read(&mut dab, 250, 12); // case 2: block 0 buffered, block 1 fetched
    read(&mut dab, 760, 12); // case 4 over two blocks: 2 and 3 fetched
    read(&mut dab, 1000, 30); // case 2: block 3 buffered, block 4 fetched, evicting 0
    read(&mut dab, 250, 10); // case 3: block 0 missing, block 1 buffered
    let c = dab.counters();
    assert_eq!(c.requests, 6);
    assert_eq!((c.hits, c.misses), (1, 2), "{c:?}");
    assert_eq!(
        (c.first_present_last_missing, c.first_missing_last_present),
        (2, 1),
        "{c:?}"
    );
    // The last read fetched block 0 by evicting the LRU block, 1, then fetched 1 again
    // by evicting 2: LRU order, whole blocks, one read each.
    assert_eq!((c.block_fetches, c.evictions), (7, 3), "{c:?}");
    assert_eq!(dab.inner().writes(), 0, "reads never write");
}

// Proves the middle-missing case and the first-missing/last-present case by layout.
#[test]
fn partial_hits_both_ways() {
    let mut dab = buffer(WritePolicy::WriteThrough, 8);
    read(&mut dab, 600, 1); // block 2 buffered
    read(&mut dab, 500, 200); // block 1 missing, block 2 present: case 3
    assert_eq!(dab.counters().first_missing_last_present, 1);
    read(&mut dab, 1100, 1); // block 4
    read(&mut dab, 700, 500); // blocks 2 (present), 3 (missing), 4 (present)
    assert_eq!(dab.counters().middle_missing, 1);
    read(&mut dab, 300, 1000); // all of blocks 1..=5? block 5 missing -> case 2
    let c = dab.counters();
    assert_eq!(c.first_present_last_missing, 1, "{c:?}");
    assert_eq!(c.block_fetches, 5, "blocks 2, 1, 4, 3, 5: one fetch each");
}

// Proves write-back absorbs writes (no device write until eviction or flush), writes
// back whole blocks, and that flush leaves the store below holding everything.
#[test]
fn write_back_defers_and_flush_writes_whole_blocks() {
    let mut dab = buffer(WritePolicy::WriteBack, 2);
    let data = Rng::new(2).bytes(8 * SECTOR);
    dab.write(Lbn(3), &data).unwrap();
    dab.write(Lbn(300), &data).unwrap();
    assert_eq!(dab.inner().writes(), 0);
    assert_eq!(
        dab.counters().block_fetches,
        2,
        "missed partial writes fetch their block"
    );
    dab.write(Lbn(512), &Rng::new(3).bytes(256 * SECTOR))
        .unwrap();
    let c: DabCounters = dab.counters();
    assert_eq!(
        (c.fetches_avoided, c.evictions, c.write_backs),
        (1, 1, 1),
        "{c:?}"
    );
    dab.flush().unwrap();
    assert_eq!(dab.counters().write_backs, 3);
    let store = dab.into_inner().map_err(|b| b.1).unwrap();
    let mut inner = store.into_inner().unwrap();
    let mut back = vec![0u8; 8 * SECTOR];
    inner.read(Lbn(300), &mut back).unwrap();
    assert!(back == data);
}

// Proves a failed write-back keeps the block dirty (nothing written is lost) and that
// write-through never leaves a stale buffered copy after a failed write.
#[test]
fn failures_lose_nothing() {
    let mut dab = buffer(WritePolicy::WriteBack, 1);
    let data = Rng::new(4).bytes(SECTOR);
    dab.write(Lbn(5), &data).unwrap();
    dab.inner_mut().fail();
    assert!(dab.flush().is_err());
    assert!(
        dab.read(Lbn(600), &mut vec![0u8; SECTOR]).is_err(),
        "eviction needs the write-back"
    );
    let mut back = vec![0u8; SECTOR];
    dab.read(Lbn(5), &mut back).unwrap();
    assert!(back == data, "still buffered and dirty");
    let (_, error) = *dab.into_inner().expect_err("write-back fails");
    assert!(error.to_string().contains("failed"), "{error}");
}

// Proves memory is bounded by blocks x block size whatever the request size.
#[test]
fn huge_requests_stay_within_the_blocks() {
    let mut dab = buffer(WritePolicy::WriteBack, 3);
    let data = Rng::new(5).bytes(4096 * SECTOR);
    dab.write(Lbn(0), &data).unwrap();
    let mut back = vec![0u8; data.len()];
    dab.read(Lbn(0), &mut back).unwrap();
    assert!(back == data);
    dab.trim(Lbn(100), Sectors(3000)).unwrap();
    dab.read(Lbn(0), &mut back).unwrap();
    assert!(back[100 * SECTOR..3100 * SECTOR].iter().all(|&b| b == 0));
    assert!(back[..100 * SECTOR] == data[..100 * SECTOR]);
    // 13 evictions while writing 16 blocks through 3 slots, 16 per full read after.
    assert_eq!(dab.counters().evictions, 13 + 16 + 16);
}
