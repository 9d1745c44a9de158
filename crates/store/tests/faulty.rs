//! `FaultyStore` semantics: failed devices, power cuts at a chosen step on one store
//! and across several stores sharing a `PowerSwitch`, volatile caches that lose
//! unflushed writes, and counters. These are the tools the RAID and write-intent
//! crash tests rely on, so each behaviour is pinned down here.

use spinstack_sim::units::{Lbn, Sectors};
use spinstack_store::{BlockStore, FaultyStore, MemoryStore, PowerSwitch, StoreError};

fn memory(sectors: u64) -> MemoryStore {
    MemoryStore::new(Sectors(sectors)).unwrap()
}

fn sector_of(store: &mut impl BlockStore, lbn: u64) -> u8 {
    let mut buf = [0u8; 512];
    store.read(Lbn(lbn), &mut buf).unwrap();
    assert!(
        buf.iter().all(|&b| b == buf[0]),
        "sector {lbn} is not uniform"
    );
    buf[0]
}

// Proves fail() makes every operation return Failed and changes nothing afterwards.
#[test]
fn failed_store_refuses_everything() {
    let mut store = FaultyStore::new(memory(8));
    store.write(Lbn(0), &[1u8; 512]).unwrap();
    store.fail();
    assert!(store.is_failed());
    let mut buf = [0u8; 512];
    assert!(matches!(
        store.read(Lbn(0), &mut buf),
        Err(StoreError::Failed { operation: "read" })
    ));
    assert!(matches!(
        store.write(Lbn(0), &[2u8; 512]),
        Err(StoreError::Failed { .. })
    ));
    assert!(matches!(
        store.trim(Lbn(0), Sectors(1)),
        Err(StoreError::Failed { .. })
    ));
    assert!(matches!(store.flush(), Err(StoreError::Failed { .. })));
    assert_eq!(store.writes(), 1);
    let mut inner = store.into_inner().unwrap();
    assert_eq!(sector_of(&mut inner, 0), 1);
}

// Proves cut_power_after(n) lets exactly n steps through, drops the (n+1)-th write,
// and refuses every operation after it; the restarted store holds the first n writes.
#[test]
fn power_cut_drops_the_write_after_n() {
    let mut store = FaultyStore::new(memory(8));
    store.cut_power_after(3);
    for lbn in 0..3 {
        store.write(Lbn(lbn), &[lbn as u8 + 1; 512]).unwrap();
    }
    let mut buf = [0u8; 512];
    store.read(Lbn(0), &mut buf).unwrap(); // reads are not steps, and the power is on
    let error = store.write(Lbn(3), &[9u8; 512]).unwrap_err();
    assert!(
        matches!(error, StoreError::PowerCut { operation: "write" }),
        "{error}"
    );
    assert!(store.power().is_cut());
    assert!(matches!(
        store.read(Lbn(0), &mut buf),
        Err(StoreError::PowerCut { .. })
    ));
    assert!(matches!(store.flush(), Err(StoreError::PowerCut { .. })));
    assert_eq!(store.writes(), 3);
    let mut inner = store.into_inner().unwrap();
    let contents: Vec<u8> = (0..4).map(|lbn| sector_of(&mut inner, lbn)).collect();
    assert_eq!(contents, [1, 2, 3, 0]);
}

// Proves flushes and trims are steps too, so a crash can fall just before a flush.
#[test]
fn flushes_and_trims_are_steps() {
    let mut store = FaultyStore::new(memory(8));
    store.cut_power_after(2);
    store.write(Lbn(0), &[1u8; 512]).unwrap();
    store.trim(Lbn(0), Sectors(1)).unwrap();
    assert!(matches!(
        store.flush(),
        Err(StoreError::PowerCut { operation: "flush" })
    ));
    assert_eq!((store.writes(), store.trims(), store.flushes()), (1, 1, 0));
    assert_eq!(store.power().steps(), 2);
}

// Proves a shared switch counts the steps of every store on it, so a test can crash
// an array at its k-th member write, and the cut stops every member at once.
#[test]
fn shared_switch_cuts_across_stores() {
    let power = PowerSwitch::new();
    let mut members: Vec<FaultyStore<MemoryStore>> = (0..3)
        .map(|_| FaultyStore::on_switch(memory(4), &power))
        .collect();
    power.cut_after(4);
    // Round-robin writes: member 0, 1, 2, 0, then member 1's second write is cut.
    for step in 0..4u8 {
        members[step as usize % 3]
            .write(Lbn(0), &[step + 1; 512])
            .unwrap();
    }
    let error = members[1].write(Lbn(0), &[99u8; 512]).unwrap_err();
    assert!(matches!(error, StoreError::PowerCut { .. }));
    let mut buf = [0u8; 512];
    assert!(matches!(
        members[2].read(Lbn(0), &mut buf),
        Err(StoreError::PowerCut { .. })
    ));
    let contents: Vec<u8> = members
        .into_iter()
        .map(|m| sector_of(&mut m.into_inner().unwrap(), 0))
        .collect();
    assert_eq!(contents, [4, 2, 3]);
    assert_eq!(power.steps(), 4);
}

// Proves a volatile cache loses exactly the writes and trims since the last flush at
// a power cut, keeps everything flushed, and loses nothing on a clean shutdown.
#[test]
fn volatile_cache_loses_unflushed_writes_on_power_cut() {
    let mut store = FaultyStore::new(memory(8)).with_volatile_cache();
    store.write(Lbn(0), &[1u8; 1024]).unwrap();
    store.flush().unwrap();
    store.write(Lbn(1), &[2u8; 512]).unwrap();
    store.trim(Lbn(0), Sectors(1)).unwrap();
    store.write(Lbn(2), &[3u8; 512]).unwrap();
    assert_eq!(
        sector_of(&mut store, 2),
        3,
        "unflushed writes are visible before the crash"
    );
    store.power().cut_now();
    let mut inner = store.into_inner().unwrap();
    let contents: Vec<u8> = (0..3).map(|lbn| sector_of(&mut inner, lbn)).collect();
    assert_eq!(contents, [1, 1, 0]);

    let mut clean = FaultyStore::new(memory(8)).with_volatile_cache();
    clean.write(Lbn(0), &[5u8; 512]).unwrap();
    let mut inner = clean.into_inner().unwrap();
    assert_eq!(
        sector_of(&mut inner, 0),
        5,
        "a clean shutdown keeps unflushed writes"
    );
}

// Proves a write-through store (the default) keeps every applied write at a cut.
#[test]
fn write_through_keeps_unflushed_writes() {
    let mut store = FaultyStore::new(memory(8));
    store.write(Lbn(0), &[7u8; 512]).unwrap();
    store.power().cut_now();
    assert_eq!(sector_of(&mut store.into_inner().unwrap(), 0), 7);
}

// Proves bad arguments are refused by the store below without taking a step, so they
// never move the point where the power goes.
#[test]
fn refused_requests_take_no_step() {
    let mut store = FaultyStore::new(memory(4));
    store.cut_power_after(1);
    assert!(matches!(
        store.write(Lbn(4), &[0u8; 512]),
        Err(StoreError::OutOfRange { .. })
    ));
    assert!(matches!(
        store.write(Lbn(0), &[0u8; 100]),
        Err(StoreError::BufferNotWholeSectors { .. })
    ));
    assert!(matches!(
        store.trim(Lbn(3), Sectors(2)),
        Err(StoreError::OutOfRange { .. })
    ));
    store.write(Lbn(0), &[1u8; 512]).unwrap();
    assert_eq!(store.power().steps(), 1);
}
