//! Member files that do not belong together, and superblock fields out of range:
//! assembly refuses them naming the file that is wrong (decided by what most members
//! agree on) and the problem in plain words, never Rust debug output.

mod common;

use common::{edit_newest_slot, spec, temp_dir};
use spinstack_array::{inspect, member_path, Array, Level};
use std::path::Path;

fn closed_array(name: &str, level: Level, members: u32) -> std::path::PathBuf {
    let dir = temp_dir(name);
    Array::create(&dir, &spec(level, members, 2048))
        .unwrap()
        .close()
        .unwrap();
    dir
}

fn open_error(dir: &Path) -> String {
    match Array::open(dir) {
        Ok(_) => panic!("{} opened", dir.display()),
        Err(error) => error.to_string(),
    }
}

// Guards finding V6 (2026-11-28): a foreign member file with a higher generation than
// the array's made the error blame a legitimate member (`member-0.img belongs to
// volume ...`). Proves the volume is the one most member files agree on, and the
// error names the foreign file (at rest and at open).
#[test]
fn a_foreign_member_with_a_higher_generation_is_the_one_named() {
    let dir = closed_array("foreign-a", Level::Raid5, 4);
    let other = closed_array("foreign-b", Level::Raid5, 4);
    let (mut array, _) = Array::open(&other).unwrap();
    array.fail_member(3).unwrap();
    array.start_rebuild(3).unwrap();
    while !array.rebuild_step(64).unwrap().done {}
    array.close().unwrap();
    std::fs::copy(member_path(&other, 2), member_path(&dir, 2)).unwrap();
    let at_rest = inspect(&dir).err().unwrap().to_string();
    for error in [at_rest, open_error(&dir)] {
        assert!(
            error.starts_with(&member_path(&dir, 2).display().to_string())
                && error.contains("member-0.img, member-1.img, member-3.img")
                && error.contains("another array"),
            "{error}"
        );
    }
}

// Proves a directory whose member files split evenly between two volumes is refused
// with both groups listed, since nothing says which is the array.
#[test]
fn member_files_split_evenly_between_volumes_are_refused() {
    let dir = closed_array("split-a", Level::Raid1, 2);
    let other = closed_array("split-b", Level::Raid1, 2);
    std::fs::copy(member_path(&other, 1), member_path(&dir, 1)).unwrap();
    let error = open_error(&dir);
    assert!(
        error.contains("no volume has a majority")
            && error.contains("member-0.img: volume")
            && error.contains("member-1.img: volume"),
        "{error}"
    );
}

// Guards finding V7d (2026-11-28): a geometry mismatch printed both specs as Rust
// debug output (`ArraySpec { level: Raid5, ... Sectors(40000) ... }`). Proves the
// error names the odd file (not the majority) and each differing field in words.
#[test]
fn a_geometry_mismatch_names_the_differing_fields() {
    let dir = closed_array("geometry", Level::Raid5, 4);
    edit_newest_slot(
        &dir,
        1,
        |block| {
            block.member_size = spinstack_sim::units::Sectors(1500);
            block.generation += 1;
        },
        |_| {},
    );
    let error = open_error(&dir);
    assert!(
        error.contains("member-1.img")
            && error.contains("member size 1500 sectors, not 2048 sectors")
            && !error.contains("ArraySpec")
            && !error.contains("Sectors("),
        "{error}"
    );
}

// Guards finding V7c (2026-11-28): a rebuild cursor beyond the array's rebuild units
// was accepted. Proves assembly refuses one the decoder cannot see (it is within the
// member's sectors, but past the stripes only the layout knows), naming byte 96.
#[test]
fn a_rebuild_cursor_beyond_the_rebuild_units_is_refused() {
    let dir = closed_array("cursor-units", Level::Raid5, 4);
    // 2048 sectors in 16-sector chunks: 128 stripes, so 1000 decodes but is too far.
    for member in 0..4 {
        edit_newest_slot(&dir, member, |b| b.rebuild_cursor = 1000, |_| {});
    }
    let error = open_error(&dir);
    assert!(
        error.contains("byte 96") && error.contains("rebuild cursor 1000"),
        "{error}"
    );
}

// Guards finding V7d (2026-11-28): disk names of 2048 NUL bytes (valid checksum)
// decoded, and the geometry message then carried 2048 `\0` escapes. Proves such a
// slot is refused (the member falls back to its other slot, one generation behind,
// and is failed) and the note saying so is short.
#[test]
fn control_characters_in_disk_names_are_reported_briefly() {
    let dir = closed_array("nul-names", Level::Raid5, 4);
    edit_newest_slot(
        &dir,
        3,
        |_| {},
        |slot| {
            slot[108..112].copy_from_slice(&2048u32.to_le_bytes());
            slot[192..192 + 2048].fill(0);
        },
    );
    let (array, report) = Array::open(&dir).unwrap();
    assert_eq!(array.status().failed, vec![3]);
    let note = &report.unreadable_slots[0].note;
    assert!(
        note.contains("control character") && note.len() < 400,
        "{note}"
    );
}
