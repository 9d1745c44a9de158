//! `ByteStore` model test: random reads, writes, trims and zero-writes at unaligned
//! byte offsets and lengths (inside one sector, across one boundary, spanning many
//! sectors, refused past the end) give exactly the bytes of a flat `Vec<u8>`, over a
//! store that trims and over one that refuses trim. On failure proptest prints the
//! minimal failing case and each assertion names the operation's index.

mod common;

use common::pattern;
use proptest::prelude::*;
use spinstack_sim::units::{Lbn, Sectors, SECTOR_BYTES};
use spinstack_store::{BlockStore, ByteStore, MemoryStore, StoreError, ZeroMode};

const CAPACITY_SECTORS: u64 = 40;
const CAPACITY_BYTES: u64 = CAPACITY_SECTORS * SECTOR_BYTES;

/// A store that refuses trim explicitly, as a layer that cannot discard would.
struct NoTrim(MemoryStore);

impl BlockStore for NoTrim {
    fn capacity(&self) -> Sectors {
        self.0.capacity()
    }
    fn read(&mut self, lbn: Lbn, buf: &mut [u8]) -> Result<(), StoreError> {
        self.0.read(lbn, buf)
    }
    fn write(&mut self, lbn: Lbn, buf: &[u8]) -> Result<(), StoreError> {
        self.0.write(lbn, buf)
    }
    fn flush(&mut self) -> Result<(), StoreError> {
        self.0.flush()
    }
    fn trim(&mut self, _lbn: Lbn, _sectors: Sectors) -> Result<(), StoreError> {
        Err(StoreError::Unsupported {
            operation: "trim",
            store: "NoTrim",
        })
    }
}

#[derive(Clone, Debug)]
enum Op {
    Read {
        offset: u64,
        len: u64,
    },
    Write {
        offset: u64,
        len: u64,
        seed: u64,
    },
    Trim {
        offset: u64,
        len: u64,
    },
    Zeroes {
        offset: u64,
        len: u64,
        may_trim: bool,
    },
    Flush,
}

fn range() -> impl Strategy<Value = (u64, u64)> {
    // Small lengths exercise single-sector patches; large ones the aligned middle.
    let len = prop_oneof![0..600u64, 0..8000u64];
    (0..CAPACITY_BYTES + 100, len)
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => range().prop_map(|(offset, len)| Op::Read { offset, len }),
        4 => (range(), any::<u64>()).prop_map(|((offset, len), seed)| Op::Write { offset, len, seed }),
        2 => range().prop_map(|(offset, len)| Op::Trim { offset, len }),
        2 => (range(), any::<bool>())
            .prop_map(|((offset, len), may_trim)| Op::Zeroes { offset, len, may_trim }),
        1 => Just(Op::Flush),
    ]
}

fn fits(offset: u64, len: u64) -> bool {
    offset + len <= CAPACITY_BYTES
}

fn check<S: BlockStore>(store: &mut ByteStore<S>, ops: &[Op], trim_supported: bool) {
    let mut flat = vec![0u8; CAPACITY_BYTES as usize];
    for (index, op) in ops.iter().enumerate() {
        let span = |offset: u64, len: u64| offset as usize..(offset + len) as usize;
        let refused = |result: Result<(), StoreError>| {
            assert!(
                matches!(result, Err(StoreError::ByteRangeOutOfRange { .. })),
                "op {index} {op:?}: expected a refusal, got {result:?}"
            )
        };
        match *op {
            Op::Read { offset, len } => {
                let mut buf = vec![0xeeu8; len as usize];
                let result = store.read(offset, &mut buf);
                if !fits(offset, len) {
                    refused(result);
                    continue;
                }
                result.unwrap_or_else(|e| panic!("op {index} {op:?}: {e}"));
                assert!(
                    buf == flat[span(offset, len)],
                    "op {index} {op:?}: wrong bytes"
                );
            }
            Op::Write { offset, len, seed } => {
                let data = pattern(seed, len as usize);
                let result = store.write(offset, &data);
                if !fits(offset, len) {
                    refused(result);
                    continue;
                }
                result.unwrap_or_else(|e| panic!("op {index} {op:?}: {e}"));
                flat[span(offset, len)].copy_from_slice(&data);
            }
            Op::Trim { offset, len } => {
                let result = store.trim(offset, len);
                if !fits(offset, len) {
                    refused(result);
                    continue;
                }
                let whole_sector_inside =
                    offset.div_ceil(SECTOR_BYTES) < (offset + len) / SECTOR_BYTES;
                match result {
                    Ok(()) => flat[span(offset, len)].fill(0),
                    // A store that refuses trim: the whole request is refused unchanged.
                    Err(StoreError::Unsupported { .. })
                        if !trim_supported && whole_sector_inside => {}
                    Err(e) => panic!("op {index} {op:?}: {e}"),
                }
            }
            Op::Zeroes {
                offset,
                len,
                may_trim,
            } => {
                let mode = if may_trim {
                    ZeroMode::MayTrim
                } else {
                    ZeroMode::Allocate
                };
                let result = store.write_zeroes(offset, len, mode);
                if !fits(offset, len) {
                    refused(result);
                    continue;
                }
                result.unwrap_or_else(|e| panic!("op {index} {op:?}: {e}"));
                flat[span(offset, len)].fill(0);
            }
            Op::Flush => store.flush().unwrap(),
        }
    }
    let mut whole = vec![0u8; flat.len()];
    store.read(0, &mut whole).unwrap();
    assert!(whole == flat, "final contents differ from the reference");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(500))]

    // Proves unaligned byte access over a trimming store matches a flat array.
    #[test]
    fn byte_store_matches_flat_reference(ops in prop::collection::vec(op(), 1..40)) {
        let mut store = ByteStore::new(MemoryStore::new(Sectors(CAPACITY_SECTORS)).unwrap());
        check(&mut store, &ops, true);
    }

    // Proves the same over a store that refuses trim: write_zeroes still zeroes (it
    // falls back to writing zeros) and trim reports the refusal and changes nothing.
    #[test]
    fn byte_store_over_store_refusing_trim(ops in prop::collection::vec(op(), 1..40)) {
        let inner = NoTrim(MemoryStore::new(Sectors(CAPACITY_SECTORS)).unwrap());
        let mut store = ByteStore::new(inner);
        check(&mut store, &ops, false);
    }
}

// Proves a range whose end overflows u64 is refused, not wrapped around.
#[test]
fn byte_range_overflow_is_refused() {
    let mut store = ByteStore::new(MemoryStore::new(Sectors(8)).unwrap());
    let error = store.write(u64::MAX - 2, &[1, 2, 3, 4]).unwrap_err();
    assert!(
        matches!(error, StoreError::ByteRangeOutOfRange { .. }),
        "{error}"
    );
    assert!(error.to_string().contains("4096 bytes"), "{error}");
    let error = store.trim(10, u64::MAX).unwrap_err();
    assert!(
        matches!(error, StoreError::ByteRangeOutOfRange { .. }),
        "{error}"
    );
}

// Proves a write inside one sector touches only its bytes (read-modify-write).
#[test]
fn partial_sector_write_keeps_neighbours() {
    let mut store = ByteStore::new(MemoryStore::new(Sectors(2)).unwrap());
    store.write(0, &[0xffu8; 1024]).unwrap();
    store.write(510, &[1, 2, 3, 4]).unwrap();
    let mut back = [0u8; 8];
    store.read(508, &mut back).unwrap();
    assert_eq!(back, [0xff, 0xff, 1, 2, 3, 4, 0xff, 0xff]);
}
