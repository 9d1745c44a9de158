//! Bad input to every constructor and every operation is a clear error, never a
//! panic: each test feeds one kind of bad input and checks the error's kind and that
//! its message names what and where (the path, the LBN, the sizes).

mod common;

use common::ScratchDir;
use spinstack_sim::units::{Lbn, Sectors};
use spinstack_store::intent::record_sectors;
use spinstack_store::{BlockStore, FileStore, IntentError, MemoryStore, StoreError, WriteIntent};

fn message(error: &impl std::fmt::Display) -> String {
    error.to_string()
}

// Proves MemoryStore refuses a zero capacity and one too large to address in bytes.
#[test]
fn memory_store_bad_capacity() {
    for sectors in [0, u64::MAX, u64::MAX / 512 + 1] {
        let error = MemoryStore::new(Sectors(sectors)).unwrap_err();
        assert!(
            matches!(error, StoreError::InvalidCapacity { .. }),
            "{error}"
        );
        assert!(message(&error).contains(&sectors.to_string()), "{error}");
    }
}

// Proves FileStore::create refuses a zero capacity, an existing file and a missing
// directory, naming the path, and leaves no file behind a refused size.
#[test]
fn file_store_create_errors() {
    let dir = ScratchDir::new("errors-create");
    let path = dir.file("zero.img");
    let error = FileStore::create(&path, Sectors(0)).unwrap_err();
    assert!(
        matches!(error, StoreError::InvalidCapacity { .. }),
        "{error}"
    );
    assert!(!path.exists());

    let path = dir.file("taken.img");
    std::fs::write(&path, [0u8; 512]).unwrap();
    let error = FileStore::create(&path, Sectors(1)).unwrap_err();
    assert!(matches!(error, StoreError::Io { .. }), "{error}");
    assert!(
        message(&error).contains("taken.img") && message(&error).contains("create"),
        "{error}"
    );
    assert_eq!(
        std::fs::read(&path).unwrap().len(),
        512,
        "an existing file is never replaced"
    );

    let path = dir.file("no-such-dir/x.img");
    let error = FileStore::create(&path, Sectors(1)).unwrap_err();
    assert!(message(&error).contains("no-such-dir"), "{error}");
}

// Proves FileStore::open refuses a missing file, an empty file, a length that is not
// whole sectors and a directory, each naming the path.
#[test]
fn file_store_open_errors() {
    let dir = ScratchDir::new("errors-open");
    let missing = dir.file("missing.img");
    let error = FileStore::open(&missing).unwrap_err();
    assert!(matches!(error, StoreError::Io { .. }), "{error}");
    assert!(message(&error).contains("missing.img"), "{error}");

    for (name, len, why) in [("empty.img", 0, "empty"), ("odd.img", 1000, "whole number")] {
        let path = dir.file(name);
        std::fs::write(&path, vec![0u8; len]).unwrap();
        let error = FileStore::open(&path).unwrap_err();
        assert!(matches!(error, StoreError::BadFileLength { .. }), "{error}");
        let text = message(&error);
        assert!(
            text.contains(name) && text.contains(why) && text.contains(&len.to_string()),
            "{text}"
        );
    }

    let error = FileStore::open(dir.path()).unwrap_err();
    assert!(
        message(&error).contains(&dir.path().display().to_string()),
        "{error}"
    );
}

fn stores(dir: &ScratchDir) -> Vec<(&'static str, Box<dyn BlockStore>)> {
    vec![
        ("memory", Box::new(MemoryStore::new(Sectors(8)).unwrap())),
        (
            "file",
            Box::new(FileStore::create(dir.file("ops.img"), Sectors(8)).unwrap()),
        ),
    ]
}

// Proves every store refuses out-of-range requests (including ones whose end
// overflows u64) and buffers that are not whole sectors, naming the request and the
// capacity, and changes nothing.
#[test]
fn operations_refuse_bad_requests() {
    let dir = ScratchDir::new("errors-ops");
    for (kind, mut store) in stores(&dir) {
        store.write(Lbn(7), &[5u8; 512]).unwrap();
        let mut buf = [0u8; 1024];
        let refusals = [
            store.read(Lbn(7), &mut buf).unwrap_err(),
            store.write(Lbn(8), &[1u8; 512]).unwrap_err(),
            store.write(Lbn(u64::MAX), &[1u8; 512]).unwrap_err(),
            store.trim(Lbn(4), Sectors(5)).unwrap_err(),
            store.trim(Lbn(1), Sectors(u64::MAX)).unwrap_err(),
        ];
        for error in &refusals {
            assert!(
                matches!(error, StoreError::OutOfRange { .. }),
                "{kind}: {error}"
            );
            assert!(
                message(error).contains("capacity 8 sectors"),
                "{kind}: {error}"
            );
        }
        assert!(message(&refusals[1]).contains("LBN 8"), "{kind}");
        for len in [1, 511, 513] {
            let error = store.write(Lbn(0), &vec![1u8; len]).unwrap_err();
            assert!(
                matches!(error, StoreError::BufferNotWholeSectors { .. }),
                "{kind}: {error}"
            );
            assert!(
                message(&error).contains(&format!("{len} bytes")),
                "{kind}: {error}"
            );
            let error = store.read(Lbn(0), &mut vec![0u8; len]).unwrap_err();
            assert!(
                matches!(error, StoreError::BufferNotWholeSectors { .. }),
                "{kind}: {error}"
            );
        }
        let mut sector = [0u8; 512];
        store.read(Lbn(7), &mut sector).unwrap();
        assert_eq!(
            sector, [5u8; 512],
            "{kind}: a refused request changed the store"
        );
        // Empty requests at the end are valid no-ops.
        store.write(Lbn(8), &[]).unwrap();
        store.trim(Lbn(8), Sectors(0)).unwrap();
    }
}

// Proves an I/O error from the file system names the file and the request.
#[test]
fn io_errors_name_the_file() {
    let dir = ScratchDir::new("errors-io");
    let path = dir.file("shrunk.img");
    let mut store = FileStore::create(&path, Sectors(8)).unwrap();
    // Another program truncates the file under the store: reads past the new end fail.
    std::fs::OpenOptions::new()
        .write(true)
        .open(&path)
        .unwrap()
        .set_len(512)
        .unwrap();
    let error = store.read(Lbn(4), &mut [0u8; 512]).unwrap_err();
    assert!(matches!(error, StoreError::IoAt { .. }), "{error}");
    let text = message(&error);
    assert!(
        text.contains("shrunk.img") && text.contains("LBN 4") && text.contains("read"),
        "{text}"
    );
}

// Proves WriteIntent::create refuses a zero region size, zero regions, a volume too
// big for u64, more than 2^28 regions and a record store too small for the bitmap.
#[test]
fn intent_create_errors() {
    let store = || MemoryStore::new(Sectors(2)).unwrap();
    for (region_sectors, region_count) in [(0, 10), (8, 0), (u64::MAX, 2), (1, (1 << 28) + 1)] {
        let error =
            WriteIntent::create(store(), Sectors(region_sectors), region_count).unwrap_err();
        assert!(matches!(error, IntentError::BadGeometry { .. }), "{error}");
        assert!(
            message(&error).contains(&region_count.to_string()),
            "{error}"
        );
    }
    let error = WriteIntent::create(store(), Sectors(8), 4097).unwrap_err();
    assert!(
        matches!(error, IntentError::StoreTooSmall { .. }),
        "{error}"
    );
    let text = message(&error);
    assert!(
        text.contains("4097 regions")
            && text.contains("needs 3 sectors")
            && text.contains("holds 2"),
        "{text}"
    );
    assert_eq!(record_sectors(4097), Some(Sectors(3)));
    assert_eq!(
        record_sectors(u64::MAX),
        Some(Sectors(u64::MAX.div_ceil(4096) + 1))
    );
    WriteIntent::create(store(), Sectors(8), 4096).unwrap();
}

// Proves WriteIntent::open refuses a blank store (bad magic), another format version,
// a damaged header (checksum) and a store shrunk below its bitmap.
#[test]
fn intent_open_errors() {
    let error = WriteIntent::open(MemoryStore::new(Sectors(2)).unwrap()).unwrap_err();
    assert!(matches!(error, IntentError::BadMagic { .. }), "{error}");
    assert!(message(&error).contains("SPNINTNT"), "{error}");

    let mut good = MemoryStore::new(Sectors(3)).unwrap();
    WriteIntent::create(&mut good, Sectors(8), 5000).unwrap();
    let mut image = vec![0u8; 1536];
    good.read(Lbn(0), &mut image).unwrap();
    let with = |edit: &dyn Fn(&mut Vec<u8>), sectors: u64| {
        let mut bytes = image.clone();
        edit(&mut bytes);
        let mut store = MemoryStore::new(Sectors(sectors)).unwrap();
        store
            .write(Lbn(0), &bytes[..sectors as usize * 512])
            .unwrap();
        WriteIntent::open(store).map(|_| ()).unwrap_err()
    };
    let error = with(&|b| b[8] = 2, 3);
    assert!(
        matches!(error, IntentError::UnsupportedVersion { found: 2 }),
        "{error}"
    );
    let error = with(&|b| b[20] ^= 1, 3);
    assert!(matches!(error, IntentError::BadChecksum { .. }), "{error}");
    assert!(message(&error).contains("damaged"), "{error}");
    let error = with(&|_| {}, 2);
    assert!(
        matches!(error, IntentError::StoreTooSmall { .. }),
        "{error}"
    );
}
