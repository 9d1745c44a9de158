//! Superblock fields the decoder checks beyond the checksum, and the words roles are
//! shown in: a damaged field is refused at its byte offset, and nothing a user reads
//! is Rust debug output.

mod common;

use common::{spec, temp_dir};
use spinstack_array::superblock::{MemberRole, Superblock, SLOT_BYTES};
use spinstack_array::{Array, Level};
use spinstack_sim::units::Sectors;
use spinstack_store::intent::crc32c;

fn valid() -> Superblock {
    Superblock {
        volume_id: [9; 16],
        generation: 6,
        roles_generation: 6,
        level: Level::Raid5,
        track_units: None,
        buffer: None,
        clean: true,
        members: 4,
        index: 2,
        member_size: Sectors(2048),
        chunk: Some(Sectors(16)),
        rebuild_cursor: 0,
        copies: 0,
        disks: vec!["atlas10k".into()],
        roles: vec![MemberRole::Active; 4],
        corrected_read_sectors: 0,
    }
}

/// The slot with `edit` applied and the checksum made valid again.
fn resealed(edit: impl FnOnce(&mut [u8])) -> Vec<u8> {
    let mut slot = valid().encode();
    edit(&mut slot);
    let checksum = crc32c(&slot[..SLOT_BYTES - 4]);
    slot[SLOT_BYTES - 4..].copy_from_slice(&checksum.to_le_bytes());
    slot
}

// Guards finding V7c (2026-11-28): the slot-length field (offset 12, "= 4096") set to
// 8192 with a valid checksum was accepted. Proves it is refused at offset 12.
#[test]
fn a_slot_length_other_than_4096_is_refused() {
    assert!(Superblock::decode(&resealed(|_| {})).is_ok());
    let slot = resealed(|s| s[12..16].copy_from_slice(&8192u32.to_le_bytes()));
    let error = Superblock::decode(&slot).unwrap_err();
    assert_eq!(error.offset, 12, "{error}");
    assert!(error.problem.contains("slot length 8192"), "{error}");
}

// Guards finding V7c (2026-11-28): a rebuild cursor of 2^64 - 1 was accepted. Proves
// a cursor past the member's sectors (every rebuild unit spans at least one) is
// refused at offset 96; one past the level's units is refused at assembly
// (`mixups.rs`).
#[test]
fn a_rebuild_cursor_past_the_member_is_refused() {
    let slot = resealed(|s| s[96..104].copy_from_slice(&u64::MAX.to_le_bytes()));
    let error = Superblock::decode(&slot).unwrap_err();
    assert_eq!(error.offset, 96, "{error}");
    let slot = resealed(|s| s[96..104].copy_from_slice(&2048u64.to_le_bytes()));
    assert!(
        Superblock::decode(&slot).is_ok(),
        "the last unit may be done"
    );
}

// Guards finding V7d (2026-11-28): disk names of 2048 NUL bytes decoded, and reached a
// message as 2048 `\0` escapes. Proves a control character in the names is refused
// at its offset (a newline still separates names).
#[test]
fn a_control_character_in_disk_names_is_refused() {
    let slot = resealed(|s| {
        s[108..112].copy_from_slice(&2048u32.to_le_bytes());
        s[192..192 + 2048].fill(0);
    });
    let error = Superblock::decode(&slot).unwrap_err();
    assert_eq!(error.offset, 192, "{error}");
    let slot = resealed(|s| {
        s[108..112].copy_from_slice(&10u32.to_le_bytes());
        s[192..202].copy_from_slice(b"atl\tas10k\0");
    });
    let error = Superblock::decode(&slot).unwrap_err();
    assert_eq!(error.offset, 195, "{error}");
}

// Guards finding V7d (2026-11-28): roles reached messages as `Rebuilding` / `Active`.
// Proves the roles print as plain words, and the message of a refused rebuild says
// the role that way.
#[test]
fn a_refused_rebuild_names_the_role_in_plain_words() {
    let dir = temp_dir("role-words");
    let mut array = Array::create(&dir, &spec(Level::Raid5, 3, 2048)).unwrap();
    let words: Vec<String> = [
        MemberRole::Active,
        MemberRole::Failed,
        MemberRole::Rebuilding,
    ]
    .iter()
    .map(|r| r.to_string())
    .collect();
    assert_eq!(words, ["active", "failed", "rebuilding"]);
    let error = array.start_rebuild(1).err().unwrap().to_string();
    assert!(
        error.contains("member 1 is active: only a failed member"),
        "{error}"
    );
    assert!(!error.contains("Active"), "{error}");
}
