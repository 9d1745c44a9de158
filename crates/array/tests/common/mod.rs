//! Shared helpers: temporary array directories, specs, seeded random data, and a
//! reference model of the volume's contents.

#![allow(dead_code)]

use spinstack_array::{Array, ArraySpec, Level};
use spinstack_sim::units::{Lbn, Sectors};
use spinstack_store::BlockStore;
use std::path::PathBuf;

/// A fresh, empty directory under the system temp dir (removed at the start of the
/// next run with the same name, kept after a failure for inspection).
pub fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("spinstack-array-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

pub fn spec(level: Level, members: u32, member_size: u64) -> ArraySpec {
    ArraySpec {
        level,
        members,
        member_size: Sectors(member_size),
        // Only the striped levels take a chunk; the others refuse one.
        chunk: matches!(level, Level::Raid0 | Level::Raid10 | Level::Raid5).then_some(Sectors(16)),
        disks: Vec::new(),
        buffer: None,
        track_units: None,
    }
}

/// The workspace's seeded generator, so a failing test can be replayed from its seed.
pub use spinstack_sim::rng::SplitMix64 as Rng;

/// The volume's expected contents, sector by sector.
pub struct Model(pub Vec<u8>);

impl Model {
    pub fn new(capacity: Sectors) -> Model {
        Model(vec![0; capacity.bytes() as usize])
    }
    pub fn write(&mut self, lbn: Lbn, buf: &[u8]) {
        let at = (lbn.0 * 512) as usize;
        self.0[at..at + buf.len()].copy_from_slice(buf);
    }
}

/// Writes `count` random requests (1..=max_sectors) and mirrors them in `model`.
pub fn random_writes(
    array: &mut Array,
    model: &mut Model,
    rng: &mut Rng,
    count: usize,
    max_sectors: u64,
) {
    let capacity = array.capacity().0;
    for _ in 0..count {
        let sectors = 1 + rng.below(max_sectors.min(capacity));
        let lbn = rng.below(capacity - sectors + 1);
        let mut buf = vec![0u8; (sectors * 512) as usize];
        rng.fill_bytes(&mut buf);
        array.write(Lbn(lbn), &buf).unwrap();
        model.write(Lbn(lbn), &buf);
    }
}

/// Reads the whole volume and compares it with the model; names the first bad sector.
pub fn assert_matches(array: &mut Array, model: &Model, seed: u64) {
    let mut buf = vec![0u8; model.0.len()];
    array.read(Lbn(0), &mut buf).unwrap();
    if let Some(at) = buf.iter().zip(&model.0).position(|(a, b)| a != b) {
        panic!(
            "seed {seed:#x}: volume sector {} differs from what was written",
            at / 512
        );
    }
}

/// Rewrites member `member`'s newest superblock slot: `edit` changes the decoded
/// superblock, `raw` the encoded bytes, and the checksum is made valid again.
pub fn edit_newest_slot(
    dir: &std::path::Path,
    member: u32,
    edit: impl FnOnce(&mut spinstack_array::superblock::Superblock),
    raw: impl FnOnce(&mut [u8]),
) {
    let path = spinstack_array::member_path(dir, member);
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(&path)
        .unwrap();
    let mut head = vec![0u8; 2 * spinstack_array::superblock::SLOT_BYTES];
    std::os::unix::fs::FileExt::read_exact_at(&file, &mut head, 0).unwrap();
    let mut block = spinstack_array::superblock::newest(&head).unwrap();
    edit(&mut block);
    let mut slot = block.encode();
    raw(&mut slot);
    let checksum =
        spinstack_store::intent::crc32c(&slot[..spinstack_array::superblock::SLOT_BYTES - 4]);
    slot[spinstack_array::superblock::SLOT_BYTES - 4..].copy_from_slice(&checksum.to_le_bytes());
    let at = spinstack_array::superblock::slot_sector(block.generation) * 512;
    std::os::unix::fs::FileExt::write_all_at(&file, &slot, at).unwrap();
}
