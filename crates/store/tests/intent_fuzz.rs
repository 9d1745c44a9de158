//! Fuzz-style property test: `WriteIntent::open` over a record store holding
//! arbitrary bytes returns `Ok` or a clear error, never panics, and never allocates
//! for a region count its store cannot hold. Three kinds of input: raw random bytes
//! (fails at the magic), a real record with random byte edits (fails at the checksum
//! or opens), and headers with a *valid* checksum but random field values (reaches the
//! geometry checks). On failure proptest prints the minimal failing bytes.

use proptest::prelude::*;
use spinstack_sim::units::{Lbn, Sectors};
use spinstack_store::intent::crc32c;
use spinstack_store::{BlockStore, IntentError, MemoryStore, WriteIntent};

fn store_with(bytes: &[u8], sectors: u64) -> MemoryStore {
    let mut store = MemoryStore::new(Sectors(sectors)).unwrap();
    let mut image = bytes.to_vec();
    image.resize(sectors as usize * 512, 0);
    store.write(Lbn(0), &image).unwrap();
    store
}

/// Opens and checks the outcome is coherent: Ok means every dirty region exists and
/// the bitmap fits the store.
fn open_checked(store: MemoryStore) -> Result<(), IntentError> {
    let capacity = store.capacity();
    let (intent, dirty) = WriteIntent::open(store)?;
    assert!(dirty.iter().all(|&region| region < intent.region_count()));
    assert!(intent.region_count().div_ceil(4096) < capacity.0);
    Ok(())
}

fn header(version: u32, region_sectors: u64, region_count: u64, generation: u64) -> Vec<u8> {
    let mut sector = vec![0u8; 512];
    sector[..8].copy_from_slice(b"SPNINTNT");
    sector[8..12].copy_from_slice(&version.to_le_bytes());
    sector[16..24].copy_from_slice(&region_sectors.to_le_bytes());
    sector[24..32].copy_from_slice(&region_count.to_le_bytes());
    sector[32..40].copy_from_slice(&generation.to_le_bytes());
    let checksum = crc32c(&sector[..40]);
    sector[40..44].copy_from_slice(&checksum.to_le_bytes());
    sector
}

fn interesting_u64() -> impl Strategy<Value = u64> {
    prop_oneof![
        Just(0u64),
        Just(1),
        Just(u64::MAX),
        0..20_000u64,
        any::<u64>()
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1000))]

    // Proves random bytes are refused with an error, never a panic.
    #[test]
    fn random_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..2048), sectors in 1..6u64) {
        let result = open_checked(store_with(&bytes, sectors));
        if let Err(error) = result {
            prop_assert!(!error.to_string().is_empty());
        }
    }

    // Proves a damaged real record either opens coherently or is refused.
    #[test]
    fn edited_record_never_panics(edits in prop::collection::vec((0..1536usize, any::<u8>()), 1..8)) {
        let mut store = MemoryStore::new(Sectors(3)).unwrap();
        let mut intent = WriteIntent::create(&mut store, Sectors(16), 8000).unwrap();
        intent.begin_range(10..20).unwrap();
        drop(intent);
        let mut image = vec![0u8; 1536];
        store.read(Lbn(0), &mut image).unwrap();
        for (at, value) in edits {
            image[at] = value;
        }
        let _ = open_checked(store_with(&image, 3));
    }

    // Proves headers with a valid checksum but any field values reach the geometry
    // checks and are refused with the matching error, or open.
    #[test]
    fn valid_checksum_any_fields(
        version in prop_oneof![Just(1u32), any::<u32>()],
        region_sectors in interesting_u64(),
        region_count in interesting_u64(),
        generation in interesting_u64(),
        sectors in 1..5u64,
    ) {
        let bytes = header(version, region_sectors, region_count, generation);
        match open_checked(store_with(&bytes, sectors)) {
            Ok(()) => {
                prop_assert!(version == 1 && region_sectors > 0 && region_count > 0);
                prop_assert!(region_count.div_ceil(4096) < sectors);
            }
            Err(IntentError::UnsupportedVersion { found }) => prop_assert_ne!(found, 1),
            Err(IntentError::BadGeometry { .. }) => {
                prop_assert!(region_sectors == 0 || region_count == 0 || region_count > 1 << 28
                    || region_sectors.checked_mul(region_count).is_none());
            }
            Err(IntentError::StoreTooSmall { needed, capacity, .. }) => prop_assert!(needed > capacity),
            Err(other) => prop_assert!(false, "unexpected error: {}", other),
        }
    }
}
