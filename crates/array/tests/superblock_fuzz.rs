//! The superblock decoder never panics, whatever the bytes (arbitrary, or a valid
//! superblock with bytes changed), and a valid superblock round-trips.

use proptest::prelude::*;
use spinstack_array::superblock::{newest, MemberRole, Superblock, SLOT_BYTES};
use spinstack_array::{BufferSpec, Level, WritePolicy};
use spinstack_sim::units::Sectors;

fn valid(generation: u64, members: u32) -> Superblock {
    valid_with(generation, members, 0)
}

fn valid_with(generation: u64, members: u32, corrected_read_sectors: u64) -> Superblock {
    Superblock {
        volume_id: [7; 16],
        generation,
        roles_generation: generation,
        level: Level::Raid5,
        track_units: None,
        buffer: Some(BufferSpec {
            block: Sectors(256),
            blocks: 64,
            policy: WritePolicy::WriteBack,
        }),
        clean: true,
        members,
        index: members - 1,
        member_size: Sectors(4096),
        chunk: Some(Sectors(128)),
        rebuild_cursor: 3,
        copies: 0,
        disks: vec!["atlas10k".into()],
        roles: (0..members)
            .map(|m| {
                if m == 1 {
                    MemberRole::Rebuilding
                } else {
                    MemberRole::Active
                }
            })
            .collect(),
        corrected_read_sectors,
    }
}

proptest! {
    // Arbitrary bytes of any length: an error or a superblock, never a panic.
    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..9000)) {
        let _ = Superblock::decode(&bytes);
        let _ = newest(&bytes);
    }

    // A valid superblock with up to 8 bytes changed: decoding never panics, and any
    // change the checksum does not cover is impossible (all 4096 bytes are covered).
    #[test]
    fn mutated_superblocks_never_panic(
        generation in any::<u64>(),
        members in 3u32..=64,
        edits in proptest::collection::vec((0usize..SLOT_BYTES, any::<u8>()), 1..8),
    ) {
        let mut slot = valid(generation, members).encode();
        let original = slot.clone();
        for (at, byte) in edits {
            slot[at] = byte;
        }
        let decoded = Superblock::decode(&slot);
        if slot != original {
            prop_assert!(decoded.is_err(), "a changed slot decoded");
        }
    }

    // Encode then decode returns the same superblock.
    #[test]
    fn round_trip(generation in any::<u64>(), members in 3u32..=64, corrected in any::<u64>()) {
        let block = valid_with(generation, members, corrected);
        prop_assert_eq!(Superblock::decode(&block.encode()).unwrap(), block);
    }
}

// Proves the decoder checks fields after the checksum: a re-checksummed slot with a
// bad level is refused with the byte offset named.
#[test]
fn bad_field_names_its_offset() {
    let mut slot = valid(1, 4).encode();
    slot[48] = 99;
    let checksum = spinstack_store::intent::crc32c(&slot[..SLOT_BYTES - 4]);
    slot[SLOT_BYTES - 4..].copy_from_slice(&checksum.to_le_bytes());
    let error = Superblock::decode(&slot).unwrap_err();
    assert_eq!(error.offset, 48);
    assert!(
        error.to_string().contains("unknown level code 99"),
        "{error}"
    );
}
