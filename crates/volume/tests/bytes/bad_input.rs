//! Bad input is a clear error naming what was wrong, never a panic, and changes nothing.

use crate::common::{memories, memory, SECTOR};
use spinstack_sim::units::{Lbn, Sectors};
use spinstack_store::{BlockStore, MemoryStore, StoreError};
use spinstack_volume::bytes::{
    DabConfig, DmaAlignedBuffer, Raid0Volume, Raid10Volume, Raid1Volume, Raid5Volume, VolumeError,
    WritePolicy,
};
use spinstack_volume::map::{MemberIndex, Raid5Map};

/// Every data-path refusal a store must make, on `volume`.
fn refuses_bad_requests(name: &str, volume: &mut dyn BlockStore) {
    let capacity = volume.capacity();
    let mut buf = vec![0u8; 2 * SECTOR];
    let out_of_range = volume.read(Lbn(capacity.0 - 1), &mut buf).unwrap_err();
    assert!(
        matches!(out_of_range, StoreError::OutOfRange { .. }),
        "{name}: {out_of_range}"
    );
    assert!(
        out_of_range.to_string().contains(&capacity.0.to_string()),
        "{name}: {out_of_range}"
    );
    let write = volume.write(Lbn(u64::MAX), &buf).unwrap_err();
    assert!(
        matches!(write, StoreError::OutOfRange { .. }),
        "{name}: {write}"
    );
    let trim = volume.trim(Lbn(capacity.0), Sectors(1)).unwrap_err();
    assert!(
        matches!(trim, StoreError::OutOfRange { .. }),
        "{name}: {trim}"
    );
    let partial = volume.write(Lbn(0), &buf[..700]).unwrap_err();
    assert!(
        matches!(
            partial,
            StoreError::BufferNotWholeSectors { len_bytes: 700 }
        ),
        "{name}: {partial}"
    );
    let partial = volume.read(Lbn(0), &mut buf[..1]).unwrap_err();
    assert!(partial.to_string().contains("1 bytes"), "{name}: {partial}");
    // Empty requests are valid no-ops, also at the end.
    volume.read(capacity_lbn(capacity), &mut []).unwrap();
    volume.write(Lbn(0), &[]).unwrap();
    volume.trim(capacity_lbn(capacity), Sectors(0)).unwrap();
    let mut zeros = vec![1u8; 2 * SECTOR];
    volume.read(Lbn(0), &mut zeros).unwrap();
    assert!(
        zeros.iter().all(|&b| b == 0),
        "{name}: a refused write changed something"
    );
}

fn capacity_lbn(capacity: Sectors) -> Lbn {
    Lbn(capacity.0)
}

// Proves every level and the buffer refuse out-of-range requests and partial-sector
// buffers with the store contract's errors, and treat empty requests as no-ops.
#[test]
fn every_level_refuses_bad_requests() {
    refuses_bad_requests(
        "RAID-0",
        &mut Raid0Volume::new(Sectors(8), memories(2, 64)).unwrap(),
    );
    refuses_bad_requests("RAID-1", &mut Raid1Volume::new(memories(2, 64)).unwrap());
    refuses_bad_requests(
        "RAID-10",
        &mut Raid10Volume::new(Sectors(8), 2, memories(3, 64)).unwrap(),
    );
    refuses_bad_requests(
        "RAID-5",
        &mut Raid5Volume::new(Sectors(8), memories(3, 64)).unwrap(),
    );
    let raid = Raid5Volume::new(Sectors(8), memories(3, 64)).unwrap();
    let config = DabConfig::new(2, WritePolicy::WriteBack);
    refuses_bad_requests("DAB", &mut DmaAlignedBuffer::new(raid, config).unwrap());
}

// Proves members of different sizes are refused, naming the member and both sizes.
#[test]
fn members_of_different_sizes_are_named() {
    let stores = vec![memory(64), memory(64), memory(80)];
    let error = Raid5Volume::new(Sectors(8), stores).err().unwrap();
    assert!(matches!(
        error,
        VolumeError::MemberSizesDiffer {
            member: MemberIndex(2),
            ..
        }
    ));
    let text = error.to_string();
    assert!(
        text.contains("member 2") && text.contains("80 sectors") && text.contains("64 sectors"),
        "{text}"
    );
    let error = Raid1Volume::new(vec![memory(64), memory(32)])
        .err()
        .unwrap();
    assert!(error.to_string().contains("member 1"), "{error}");
}

// Proves too few members are refused by the map, naming the level and the minimum.
#[test]
fn too_few_members_are_refused() {
    let error = Raid5Volume::new(Sectors(8), memories(1, 64)).err().unwrap();
    assert!(
        error
            .to_string()
            .contains("RAID-5 needs at least 3 members, got 1"),
        "{error}"
    );
    let error = Raid0Volume::new(Sectors(8), memories(1, 64)).err().unwrap();
    assert!(
        error.to_string().contains("RAID-0 needs at least 2"),
        "{error}"
    );
    let error = Raid10Volume::new(Sectors(8), 3, memories(2, 64))
        .err()
        .unwrap();
    assert!(
        error.to_string().contains("3 copies on 2 members"),
        "{error}"
    );
    let error = Raid1Volume::<MemoryStore>::new(Vec::new()).err().unwrap();
    assert!(
        error.to_string().contains("RAID-1 needs at least 2"),
        "{error}"
    );
}

// Proves a map and a store list that disagree are refused: wrong count, short member.
#[test]
fn stores_must_fit_the_map() {
    let map = Raid5Map::new(4, Sectors(8), Sectors(64)).unwrap();
    let error = Raid5Volume::with_layout(map.clone(), memories(3, 64))
        .err()
        .unwrap();
    assert!(
        error.to_string().contains("has 4 members but 3 stores"),
        "{error}"
    );
    let stores = vec![memory(64), memory(64), memory(40), memory(64)];
    let error = Raid5Volume::with_layout(map, stores).err().unwrap();
    assert!(
        error
            .to_string()
            .contains("member 2 holds 40 sectors but the map uses 64"),
        "{error}"
    );
    let mut volume = Raid5Volume::new(Sectors(8), memories(3, 64)).unwrap();
    volume.fail_member(MemberIndex(1)).unwrap();
    let error = volume
        .replace_member(MemberIndex(1), memory(16))
        .err()
        .unwrap();
    assert!(
        error.to_string().contains("member 1 holds 16 sectors"),
        "{error}"
    );
    let error = volume.fail_member(MemberIndex(9)).err().unwrap();
    assert!(
        error.to_string().contains("member 9 does not exist"),
        "{error}"
    );
}

// Proves bad buffer geometries and write-intent regions are refused with the reason.
#[test]
fn bad_buffer_and_region_sizes_are_refused() {
    let config = DabConfig {
        blocks: 0,
        block_sectors: Sectors(256),
        policy: WritePolicy::WriteThrough,
    };
    let error = DmaAlignedBuffer::new(memory(64), config).err().unwrap();
    assert!(error.to_string().contains("at least one block"), "{error}");
    let config = DabConfig {
        blocks: 4,
        block_sectors: Sectors(0),
        policy: WritePolicy::WriteBack,
    };
    let error = DmaAlignedBuffer::new(memory(64), config).err().unwrap();
    assert!(error.to_string().contains("at least one sector"), "{error}");
    let config = DabConfig {
        blocks: usize::MAX,
        block_sectors: Sectors(256),
        policy: WritePolicy::WriteBack,
    };
    assert!(DmaAlignedBuffer::new(memory(64), config).is_err());
    let volume = Raid5Volume::new(Sectors(8), memories(3, 64)).unwrap();
    let error = volume.with_intent(memory(8), 0).err().unwrap();
    assert!(error.to_string().contains("at least one stripe"), "{error}");
    let volume = Raid1Volume::new(memories(2, 64)).unwrap();
    let error = volume.with_intent(memory(1), 1).err().unwrap();
    assert!(error.to_string().contains("write-intent record"), "{error}");
}
