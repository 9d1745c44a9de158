//! Model tests: `MemoryStore` and `FileStore` behave exactly like a flat `Vec<u8>` for
//! random sequences of reads, writes, trims and flushes, including requests that fall
//! partly or wholly outside the store (refused, and changing nothing). Capacities of
//! 1..700 sectors put requests across the 64 KiB page boundaries of `MemoryStore`.
//! On failure proptest prints the minimal failing case (capacity and operations),
//! and each assertion names the operation's index.

mod common;

use common::{pattern, ScratchDir};
use proptest::prelude::*;
use spinstack_sim::units::{Lbn, Sectors, SECTOR_BYTES};
use spinstack_store::memory::PAGE_BYTES;
use spinstack_store::{BlockStore, FileStore, MemoryStore, StoreError};

const SECTOR: usize = SECTOR_BYTES as usize;

#[derive(Clone, Debug)]
enum Op {
    Read { lbn: u64, sectors: u64 },
    Write { lbn: u64, sectors: u64, seed: u64 },
    Trim { lbn: u64, sectors: u64 },
    Flush,
}

fn op(capacity: u64) -> impl Strategy<Value = Op> {
    // Addresses reach a little past the end so some requests must be refused.
    let lbn = 0..capacity + 8;
    let sectors = prop_oneof![0..8u64, 0..300u64];
    prop_oneof![
        3 => (lbn.clone(), sectors.clone()).prop_map(|(lbn, sectors)| Op::Read { lbn, sectors }),
        4 => (lbn.clone(), sectors.clone(), any::<u64>())
            .prop_map(|(lbn, sectors, seed)| Op::Write { lbn, sectors, seed }),
        2 => (lbn, sectors).prop_map(|(lbn, sectors)| Op::Trim { lbn, sectors }),
        1 => Just(Op::Flush),
    ]
}

fn case() -> impl Strategy<Value = (u64, Vec<Op>)> {
    (1..700u64)
        .prop_flat_map(|capacity| (Just(capacity), prop::collection::vec(op(capacity), 1..40)))
}

fn in_range(capacity: u64, lbn: u64, sectors: u64) -> bool {
    lbn + sectors <= capacity
}

/// Applies `ops` to `store` and to a flat reference, checking every result.
fn check_against_flat(store: &mut dyn BlockStore, capacity: u64, ops: &[Op]) {
    let mut flat = vec![0u8; capacity as usize * SECTOR];
    for (index, op) in ops.iter().enumerate() {
        let span =
            |lbn: u64, sectors: u64| lbn as usize * SECTOR..(lbn + sectors) as usize * SECTOR;
        match *op {
            Op::Read { lbn, sectors } => {
                let mut buf = vec![0xeeu8; sectors as usize * SECTOR];
                let result = store.read(Lbn(lbn), &mut buf);
                if in_range(capacity, lbn, sectors) {
                    result.unwrap_or_else(|e| panic!("op {index} {op:?}: {e}"));
                    assert!(
                        buf == flat[span(lbn, sectors)],
                        "op {index} {op:?}: wrong bytes"
                    );
                } else {
                    assert!(
                        matches!(result, Err(StoreError::OutOfRange { .. })),
                        "op {index} {op:?}"
                    );
                }
            }
            Op::Write { lbn, sectors, seed } => {
                let data = pattern(seed, sectors as usize * SECTOR);
                let result = store.write(Lbn(lbn), &data);
                if in_range(capacity, lbn, sectors) {
                    result.unwrap_or_else(|e| panic!("op {index} {op:?}: {e}"));
                    flat[span(lbn, sectors)].copy_from_slice(&data);
                } else {
                    assert!(
                        matches!(result, Err(StoreError::OutOfRange { .. })),
                        "op {index} {op:?}"
                    );
                }
            }
            Op::Trim { lbn, sectors } => {
                let result = store.trim(Lbn(lbn), Sectors(sectors));
                if in_range(capacity, lbn, sectors) {
                    result.unwrap_or_else(|e| panic!("op {index} {op:?}: {e}"));
                    flat[span(lbn, sectors)].fill(0);
                } else {
                    assert!(
                        matches!(result, Err(StoreError::OutOfRange { .. })),
                        "op {index} {op:?}"
                    );
                }
            }
            Op::Flush => store
                .flush()
                .unwrap_or_else(|e| panic!("op {index} flush: {e}")),
        }
    }
    let mut whole = vec![0u8; flat.len()];
    store.read(Lbn(0), &mut whole).expect("whole-store read");
    assert!(whole == flat, "final contents differ from the reference");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    // Proves MemoryStore is a faithful sparse array of sectors.
    #[test]
    fn memory_store_matches_flat_reference((capacity, ops) in case()) {
        let mut store = MemoryStore::new(Sectors(capacity)).unwrap();
        check_against_flat(&mut store, capacity, &ops);
        let pages = (capacity as usize * SECTOR).div_ceil(PAGE_BYTES);
        prop_assert!(store.allocated_pages() <= pages);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(100))]

    // Proves FileStore is a faithful array of sectors, punching holes or (with
    // `punch_holes` false, as on file systems without hole punching) writing zeros,
    // and that its contents survive closing and reopening the file.
    #[test]
    fn file_store_matches_flat_reference((capacity, ops) in case(), punch_holes in any::<bool>()) {
        let dir = ScratchDir::new("model");
        let path = dir.file("store.img");
        let mut store = FileStore::create(&path, Sectors(capacity)).unwrap();
        store.set_punch_holes(punch_holes);
        check_against_flat(&mut store, capacity, &ops);
        let mut before = vec![0u8; capacity as usize * SECTOR];
        store.read(Lbn(0), &mut before).unwrap();
        store.flush().unwrap();
        drop(store);
        let mut reopened = FileStore::open(&path).unwrap();
        prop_assert_eq!(reopened.capacity(), Sectors(capacity));
        let mut after = vec![0u8; before.len()];
        reopened.read(Lbn(0), &mut after).unwrap();
        prop_assert!(before == after, "contents changed across reopen");
    }
}

// Proves a MemoryStore allocates pages only where written, frees pages a trim covers
// whole, and only zeroes pages a trim covers in part.
#[test]
fn memory_store_is_sparse() {
    let page_sectors = (PAGE_BYTES / SECTOR) as u64;
    let mut store = MemoryStore::new(Sectors(16 * page_sectors)).unwrap();
    assert_eq!(store.allocated_pages(), 0);
    store
        .write(Lbn(3 * page_sectors - 1), &[7u8; 2 * SECTOR])
        .unwrap();
    assert_eq!(
        store.allocated_pages(),
        2,
        "a write across a boundary touches two pages"
    );
    store.write(Lbn(0), &vec![1u8; 16 * PAGE_BYTES]).unwrap();
    assert_eq!(store.allocated_pages(), 16);
    // From the middle of page 2 to the middle of page 5: pages 3 and 4 freed.
    store
        .trim(Lbn(2 * page_sectors + 5), Sectors(3 * page_sectors))
        .unwrap();
    assert_eq!(store.allocated_pages(), 14);
    let mut page = vec![0u8; PAGE_BYTES];
    store.read(Lbn(2 * page_sectors), &mut page).unwrap();
    assert!(page[..5 * SECTOR].iter().all(|&b| b == 1));
    assert!(page[5 * SECTOR..].iter().all(|&b| b == 0));
    store.trim(Lbn(0), Sectors(16 * page_sectors)).unwrap();
    assert_eq!(store.allocated_pages(), 0);
    assert_eq!(store.allocated_bytes(), 0);
}

// Proves a terabyte MemoryStore costs only what is written, and a trim of the whole
// terabyte is quick (it visits allocated pages, not the range).
#[test]
fn huge_memory_store_is_cheap() {
    let capacity = Sectors((1u64 << 40) / SECTOR_BYTES);
    let mut store = MemoryStore::new(capacity).unwrap();
    store.write(Lbn(capacity.0 - 1), &[9u8; SECTOR]).unwrap();
    assert_eq!(store.allocated_bytes(), PAGE_BYTES as u64);
    store.trim(Lbn(0), capacity).unwrap();
    assert_eq!(store.allocated_pages(), 0);
}

// Proves FileStore files are sparse: a new file allocates (almost) nothing, and a
// trim punches the written range out again on file systems that support holes.
#[test]
fn file_store_is_sparse_and_trim_punches_holes() {
    let dir = ScratchDir::new("sparse");
    let mut store = FileStore::create(dir.file("s.img"), Sectors(1 << 16)).unwrap();
    assert!(
        store.allocated_bytes().unwrap() < 64 * 1024,
        "new file is not sparse"
    );
    store.write(Lbn(0), &vec![3u8; 4 << 20]).unwrap();
    store.flush().unwrap();
    let written = store.allocated_bytes().unwrap();
    assert!(written >= 4 << 20);
    store
        .trim(Lbn(0), Sectors((4 << 20) / SECTOR_BYTES))
        .unwrap();
    let mut back = vec![1u8; 4 << 20];
    store.read(Lbn(0), &mut back).unwrap();
    assert!(back.iter().all(|&b| b == 0));
    let after = store.allocated_bytes().unwrap();
    eprintln!("allocated after write {written} B, after trim {after} B");
    // tmpfs, ext4, xfs and btrfs punch holes; on a file system that does not, the
    // store falls back to writing zeros and keeps the space, which is also correct.
    if store.punches_holes() {
        assert!(
            after < written,
            "trim punched no hole: {after} B >= {written} B"
        );
    }
}
