//! Member files damaged at rest: a redundant array treats a member file it cannot
//! use like a missing member (failed, with a note naming the file and why), moves it
//! aside at open so a rebuild can replace it, and refuses, saying why, only when the
//! level cannot do without it. (Permission denied is not tested: the tests may run as
//! root, for whom a read-only file opens anyway.)

mod common;

use common::{assert_matches, random_writes, spec, temp_dir, Model, Rng};
use spinstack_array::{inspect, member_path, Array, Level};
use std::path::Path;

/// A closed RAID-5 of four members holding random data, and its model.
fn raid5_with_data(name: &str, seed: u64) -> (std::path::PathBuf, Model) {
    let dir = temp_dir(name);
    let mut array = Array::create(&dir, &spec(Level::Raid5, 4, 2048)).unwrap();
    let mut model = Model::new(array.capacity());
    random_writes(&mut array, &mut model, &mut Rng::new(seed), 100, 40);
    array.close().unwrap();
    (dir, model)
}

/// Ways to damage a member file, each with words its note must hold.
fn damage(dir: &Path, member: u32, how: &str) -> &'static str {
    let path = member_path(dir, member);
    match how {
        "truncated" => {
            let file = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
            file.set_len((16 + 1024) * 512).unwrap();
            "file holds 1040 sectors but its superblock says 2064 (truncated?)"
        }
        "empty" => {
            std::fs::write(&path, b"").unwrap();
            "unreadable superblock"
        }
        "both slots corrupt" => {
            let mut bytes = std::fs::read(&path).unwrap();
            bytes[100] ^= 0xff;
            bytes[4096 + 100] ^= 0xff;
            std::fs::write(&path, &bytes).unwrap();
            "bad checksum"
        }
        "a directory" => {
            std::fs::remove_file(&path).unwrap();
            std::fs::create_dir(&path).unwrap();
            "directory"
        }
        "a dangling symlink" => {
            std::fs::remove_file(&path).unwrap();
            std::os::unix::fs::symlink(dir.join("nowhere.img"), &path).unwrap();
            "a symbolic link to"
        }
        other => panic!("unknown damage {other}"),
    }
}

// Guards finding V5 (2026-11-28): one damaged member (truncated, unreadable superblock
// in both slots, a directory, a dangling symlink) made a redundant array unusable:
// open, fail and rebuild were all refused, and the status even called a truncated
// member healthy. Proves, for each damage, that the status at rest and open both
// treat the member as failed with a note naming the file and why, that open moves the
// file aside (kept as member-2.img.damaged-G), that every read is right, and that
// the member can then be rebuilt and the array survive losing another one.
#[test]
fn a_damaged_member_is_treated_as_failed_and_can_be_rebuilt() {
    for (n, how) in [
        "truncated",
        "empty",
        "both slots corrupt",
        "a directory",
        "a dangling symlink",
    ]
    .into_iter()
    .enumerate()
    {
        let seed = 0x0da0 + n as u64;
        let (dir, model) = raid5_with_data(&format!("damaged-{n}"), seed);
        let why = damage(&dir, 2, how);
        let at_rest = inspect(&dir).unwrap();
        assert_eq!(
            (at_rest.status.state, &at_rest.status.failed),
            ("degraded", &vec![2]),
            "{how}"
        );
        let note = &at_rest.report.unusable[0].note;
        assert!(
            note.contains("member-2.img") && note.contains(why) && note.contains("failed"),
            "{how}: {note}"
        );

        let (mut array, report) = Array::open(&dir).unwrap();
        assert_eq!(report.unusable, at_rest.report.unusable, "{how}");
        assert_eq!(array.status().failed, vec![2], "{how}");
        let aside = dir.join(format!(
            "member-2.img.damaged-{}",
            array.status().generation
        ));
        assert!(aside.symlink_metadata().is_ok(), "{how}: {report:?}");
        assert!(member_path(&dir, 2).symlink_metadata().is_err(), "{how}");
        assert!(report.set_aside[0].note.contains("moved aside"), "{how}");
        assert_matches(&mut array, &model, seed);
        array.start_rebuild(2).unwrap();
        while !array.rebuild_step(64).unwrap().done {}
        array.fail_member(0).unwrap();
        assert_matches(&mut array, &model, seed);
        array.close().unwrap();
    }
}

// Guards finding V5 (2026-11-28), its other half: when the level cannot do without
// the damaged members, assembly still refuses, and the error says why each could not
// be used, naming the files.
#[test]
fn damaged_members_the_level_needs_are_refused_with_the_reasons() {
    let (dir, _) = raid5_with_data("damaged-two", 0x0db0);
    damage(&dir, 1, "truncated");
    damage(&dir, 3, "both slots corrupt");
    for error in [
        inspect(&dir).err().unwrap().to_string(),
        Array::open(&dir).err().unwrap().to_string(),
    ] {
        assert!(
            error.contains("more than a raid5 survives")
                && error.contains("member-1.img: file holds")
                && error.contains("member-3.img: unreadable superblock"),
            "{error}"
        );
    }
    assert!(member_path(&dir, 1).exists(), "nothing moved aside");
}

// Guards finding V7b (2026-11-28): a member whose newest superblock slot is corrupt
// fell back to its older slot and was reported only as "stale". Proves the report
// says which slot is unreadable and why, and that the member is failed.
#[test]
fn a_member_whose_newest_slot_is_corrupt_says_why() {
    let (dir, _) = raid5_with_data("newest-slot", 0x0dc0);
    let generation = inspect(&dir).unwrap().status.generation;
    let newest_slot = (generation % 2) as usize;
    let path = member_path(&dir, 2);
    let mut bytes = std::fs::read(&path).unwrap();
    bytes[newest_slot * 4096 + 33] ^= 0x01;
    std::fs::write(&path, &bytes).unwrap();
    let (array, report) = Array::open(&dir).unwrap();
    assert_eq!(report.stale, vec![2]);
    assert_eq!(array.status().failed, vec![2]);
    let note = &report.unreadable_slots[0].note;
    let expected = format!("superblock slot {newest_slot} is unreadable");
    assert!(
        note.contains("member-2.img") && note.contains(&expected) && note.contains("bad checksum"),
        "{note}"
    );
}

// Guards finding V7e (2026-11-28): `member-02.img` beside `member-2.img` was read as
// member 2 without a word. Proves a file named like a member but not canonically is
// never read (even a foreign one, which would otherwise be refused) and is reported.
#[test]
fn a_file_named_like_a_member_is_ignored_and_reported() {
    let (dir, _) = raid5_with_data("odd-name", 0x0dd0);
    let other = temp_dir("odd-name-other");
    Array::create(&other, &spec(Level::Raid5, 4, 2048))
        .unwrap()
        .close()
        .unwrap();
    std::fs::copy(member_path(&other, 2), dir.join("member-02.img")).unwrap();
    let at_rest = inspect(&dir).unwrap();
    assert_eq!(at_rest.status.state, "healthy");
    let expected = vec![dir.join("member-02.img").display().to_string()];
    assert_eq!(at_rest.report.odd_names, expected);
    let (_, report) = Array::open(&dir).unwrap();
    assert_eq!(report.odd_names, expected);
}
