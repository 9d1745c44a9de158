//! `WriteIntent` behaviour: marks are durable before `begin` returns, survive a
//! reopen, and are cleared only once a region's writes have ended and a data flush
//! has followed; dirty regions found at open stay marked until resynced. The crash
//! test lives in `intent_crash.rs`, the damaged-record test in `intent_fuzz.rs`.

use proptest::prelude::*;
use spinstack_sim::units::{Lbn, Sectors};
use spinstack_store::intent::record_sectors;
use spinstack_store::{BlockStore, FaultyStore, IntentError, MemoryStore, WriteIntent};

type Record = FaultyStore<MemoryStore>;

fn record_store(region_count: u64) -> Record {
    FaultyStore::new(MemoryStore::new(record_sectors(region_count).unwrap()).unwrap())
}

fn new_intent(region_count: u64) -> WriteIntent<Record> {
    WriteIntent::create(record_store(region_count), Sectors(8), region_count).unwrap()
}

/// Restarts: the record store as left, opened again.
fn reopen(intent: WriteIntent<Record>) -> (WriteIntent<MemoryStore>, Vec<u64>) {
    let store = intent.into_inner().into_inner().unwrap();
    WriteIntent::open(store).unwrap()
}

/// Tells the record that the (here imaginary) data stores have been flushed.
fn data_flush<S: BlockStore>(intent: &mut WriteIntent<S>) -> u64 {
    let ticket = intent.start_data_flush();
    intent.finish_data_flush(ticket).unwrap()
}

// Proves a new record opens clean, with its geometry, and each open bumps the generation.
#[test]
fn create_then_open_is_clean() {
    let intent = new_intent(100);
    assert_eq!(intent.generation(), 1);
    let (intent, dirty) = reopen(intent);
    assert!(dirty.is_empty());
    assert_eq!(
        (intent.region_sectors(), intent.region_count()),
        (Sectors(8), 100)
    );
    assert_eq!(intent.generation(), 2);
    let (intent, _) = WriteIntent::open(intent.into_inner()).unwrap();
    assert_eq!(intent.generation(), 3);
}

// Proves begin writes the bitmap sector and flushes before returning, only when the
// bit was not already set, and that begin_range costs at most one flush.
#[test]
fn begin_makes_the_mark_durable_first() {
    let mut intent = new_intent(10_000);
    let (writes, flushes) = (intent.store().writes(), intent.store().flushes());
    intent.begin(5).unwrap();
    assert_eq!(intent.store().writes(), writes + 1);
    assert_eq!(intent.store().flushes(), flushes + 1);
    intent.begin(5).unwrap();
    assert_eq!(
        intent.store().flushes(),
        flushes + 1,
        "an already-set bit costs no I/O"
    );
    // Regions 4090..4100 straddle bitmap sectors 0 and 1: one write, one flush.
    intent.begin_range(4090..4100).unwrap();
    assert_eq!(intent.store().writes(), writes + 2);
    assert_eq!(intent.store().flushes(), flushes + 2);
    assert_eq!(intent.in_flight(5), 2);
    assert!(intent.is_marked(4099) && !intent.is_marked(4100));
}

// Proves a write ended failed keeps its mark through data flushes and cleans, and
// reopens dirty, so its region is resynced at the next open; a write ended normally
// beside it is cleaned as usual.
#[test]
fn a_failed_write_stays_marked_until_resynced() {
    let mut intent = new_intent(4);
    intent.set_clean_after_ends(1);
    intent.begin_range(1..3).unwrap();
    intent.end_range_failed(1..2).unwrap();
    intent.end(2).unwrap();
    data_flush(&mut intent);
    intent.sync_clean().unwrap();
    assert!(intent.is_marked(1) && !intent.is_marked(2));
    assert_eq!(intent.in_flight(1), 0);
    let (mut intent, dirty) = reopen(intent);
    assert_eq!(dirty, vec![1]);
    intent.resynced(1).unwrap();
    data_flush(&mut intent);
    intent.sync_clean().unwrap();
    assert!(!intent.is_marked(1), "clean once resynced and flushed");
}

// Proves a mark is kept while any write is in flight, and cleared only after the
// last end *and* a data flush that started after it.
#[test]
fn marks_clear_only_after_end_and_data_flush() {
    let mut intent = new_intent(4);
    intent.set_clean_after_ends(1);
    intent.begin(1).unwrap();
    intent.begin(1).unwrap();
    intent.end(1).unwrap();
    assert_eq!(data_flush(&mut intent), 0, "one write still in flight");
    let ticket = intent.start_data_flush();
    intent.end(1).unwrap(); // ended after the flush started: not covered by it
    assert_eq!(intent.finish_data_flush(ticket).unwrap(), 0);
    assert_eq!(intent.sync_clean().unwrap(), 0);
    assert!(intent.is_marked(1));
    assert_eq!(data_flush(&mut intent), 1);
    assert!(!intent.is_marked(1));
    let (_, dirty) = reopen(intent);
    assert!(dirty.is_empty());
}

// Proves cleared marks are written in batches: not before the configured number of
// ends, then all at once by the flush that follows.
#[test]
fn marks_clear_in_batches() {
    let mut intent = new_intent(8);
    intent.set_clean_after_ends(3);
    for region in 0..2 {
        intent.begin(region).unwrap();
        intent.end(region).unwrap();
    }
    let writes = intent.store().writes();
    assert_eq!(data_flush(&mut intent), 0);
    assert_eq!(
        intent.store().writes(),
        writes,
        "no bitmap write below the batch size"
    );
    intent.begin(2).unwrap();
    intent.end(2).unwrap();
    assert_eq!(data_flush(&mut intent), 3);
    assert!(intent.marked_regions().is_empty());
}

// Proves a failed begin leaves no believed mark behind (so the next begin writes it
// again) and changes no counter.
#[test]
fn failed_begin_is_retried() {
    let mut intent = new_intent(4);
    intent.store().cut_power_after(0);
    assert!(matches!(intent.begin(2), Err(IntentError::Store(_))));
    assert!(!intent.is_marked(2));
    assert_eq!(intent.in_flight(2), 0);
}

// Proves regions found dirty at open stay marked, whatever is flushed or cleaned,
// until each is resynced and a data flush follows.
#[test]
fn dirty_regions_stay_marked_until_resynced() {
    let mut intent = new_intent(16);
    intent.begin_range(3..6).unwrap();
    let (mut intent, dirty) = reopen(intent);
    assert_eq!(dirty, vec![3, 4, 5]);
    intent.set_clean_after_ends(1);
    data_flush(&mut intent);
    assert_eq!(intent.sync_clean().unwrap(), 0);
    intent.resynced(3).unwrap();
    intent.resynced(5).unwrap();
    assert_eq!(
        intent.sync_clean().unwrap(),
        0,
        "resync writes not yet flushed"
    );
    assert_eq!(data_flush(&mut intent), 2);
    let (_, dirty) = WriteIntent::open(intent.into_inner()).unwrap();
    assert_eq!(dirty, vec![4]);
}

// Proves misuse is an error naming the region, never a panic or a silent no-op.
#[test]
fn misuse_is_refused() {
    let mut intent = new_intent(4);
    let error = intent.end(2).unwrap_err();
    assert!(
        matches!(error, IntentError::NotInFlight { region: 2 }),
        "{error}"
    );
    assert!(error.to_string().contains("region 2"));
    for error in [
        intent.begin(4).unwrap_err(),
        intent.begin(u64::MAX).unwrap_err(),
        intent.end_range(3..5).unwrap_err(),
        intent.resynced(9).unwrap_err(),
    ] {
        assert!(
            matches!(
                error,
                IntentError::RegionsOutOfRange {
                    region_count: 4,
                    ..
                }
            ),
            "{error}"
        );
    }
    #[allow(clippy::reversed_empty_ranges)]
    let reversed = intent.begin_range(3..1).unwrap_err();
    assert!(matches!(reversed, IntentError::RegionsOutOfRange { .. }));
    intent.begin_range(1..3).unwrap();
    assert!(matches!(
        intent.end_range(0..3),
        Err(IntentError::NotInFlight { region: 0 })
    ));
    assert_eq!(
        intent.in_flight(1),
        1,
        "a refused end_range changes no counter"
    );
}

// Proves the region arithmetic a RAID uses to find the regions of a request.
#[test]
fn regions_of_a_request() {
    let intent = new_intent(10);
    assert_eq!(intent.region_of(Lbn(15)), 1);
    assert_eq!(intent.regions_touching(Lbn(7), Sectors(2)), 0..2);
    assert_eq!(intent.regions_touching(Lbn(8), Sectors(8)), 1..2);
    assert_eq!(intent.regions_touching(Lbn(8), Sectors(0)), 0..0);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(100))]

    // Proves reopening reads back exactly the marks on the medium: regions begun and
    // never cleaned, across several bitmap sectors and the padding of the last one.
    #[test]
    fn reopen_reads_back_the_marks(
        region_count in 1..12_000u64,
        picks in prop::collection::vec((any::<u64>(), any::<bool>()), 0..40),
    ) {
        let mut intent = new_intent(region_count);
        intent.set_clean_after_ends(u64::MAX);
        for &(pick, ended) in &picks {
            let region = pick % region_count;
            intent.begin(region).unwrap();
            if ended {
                intent.end(region).unwrap();
            }
        }
        data_flush(&mut intent);
        intent.sync_clean().unwrap();
        let expected = intent.marked_regions();
        for &region in &expected {
            prop_assert!(intent.in_flight(region) > 0, "region {} marked but idle", region);
        }
        let (reopened, dirty) = reopen(intent);
        prop_assert_eq!(&dirty, &expected);
        prop_assert_eq!(reopened.marked_regions(), expected);
    }
}
