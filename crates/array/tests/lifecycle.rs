//! Arrays across close and reopen: data survives, failures are persisted, an
//! interrupted rebuild resumes where it stopped, and assembly refuses or fails the
//! members it must.

mod common;

use common::{assert_matches, random_writes, spec, temp_dir, Model, Rng};
use spinstack_array::{member_path, Array, ArrayError, BufferSpec, Level, TrackUnits, WritePolicy};
use spinstack_sim::units::Sectors;
use spinstack_store::BlockStore;

// Proves every level keeps random data across close and open, with and without the
// DMA-aligned buffer (write-back: close must write it back).
#[test]
fn data_survives_close_and_open_at_every_level() {
    let cases = [
        (Level::Single, 1),
        (Level::Raid0, 3),
        (Level::Raid1, 2),
        (Level::Raid10, 4),
        (Level::Raid5, 4),
    ];
    for (case, (level, members)) in cases.into_iter().enumerate() {
        for buffered in [false, true] {
            let seed = 0x5eed_0000 + case as u64 * 2 + u64::from(buffered);
            let dir = temp_dir(&format!("survive-{}-{buffered}", level.name()));
            let mut spec = spec(level, members, 2048);
            if buffered {
                spec.buffer = Some(BufferSpec {
                    block: Sectors(64),
                    blocks: 8,
                    policy: WritePolicy::WriteBack,
                });
            }
            let mut array = Array::create(&dir, &spec).unwrap();
            let mut model = Model::new(array.capacity());
            let mut rng = Rng::new(seed);
            random_writes(&mut array, &mut model, &mut rng, 200, 40);
            array.close().unwrap();
            let (mut array, report) = Array::open(&dir).unwrap();
            assert!(report.was_clean, "seed {seed:#x}: closed cleanly");
            assert_eq!(array.status().state, "healthy");
            assert_matches(&mut array, &model, seed);
            assert_eq!(array.scrub(false).unwrap().mismatches, 0, "seed {seed:#x}");
            array.close().unwrap();
        }
    }
}

// Proves a track-aligned RAID-5 builds from catalog drives truncated to the member
// size and keeps data across a reopen (whole-track and smallest-track units).
#[test]
fn track_aligned_raid5_from_catalog_drives() {
    for units in [TrackUnits::WholeTrack, TrackUnits::SmallestTrack] {
        let dir = temp_dir(&format!("track-{units:?}"));
        let mut spec = spec(Level::Raid5TrackAligned, 3, 8192);
        spec.disks = vec![
            "maxtor10kv-czk".into(),
            "maxtor10kv-c0k".into(),
            "maxtor10kv-7gk".into(),
        ];
        spec.track_units = Some(units);
        let mut array = Array::create(&dir, &spec).unwrap();
        assert!(
            array.capacity().0 > 8192,
            "two data members' worth of whole tracks"
        );
        let mut model = Model::new(array.capacity());
        random_writes(&mut array, &mut model, &mut Rng::new(7), 100, 64);
        array.close().unwrap();
        let (mut array, _) = Array::open(&dir).unwrap();
        assert_matches(&mut array, &model, 7);
        assert_eq!(array.scrub(false).unwrap().mismatches, 0);
    }
}

// Proves a failure is persisted: after close and open the array is still degraded
// with the same member failed, and reads (rebuilt from parity) are correct.
#[test]
fn failure_survives_restart() {
    let dir = temp_dir("fail-restart");
    let mut array = Array::create(&dir, &spec(Level::Raid5, 4, 2048)).unwrap();
    let mut model = Model::new(array.capacity());
    random_writes(&mut array, &mut model, &mut Rng::new(11), 100, 40);
    array.fail_member(2).unwrap();
    random_writes(&mut array, &mut model, &mut Rng::new(12), 100, 40);
    array.close().unwrap();
    let (mut array, report) = Array::open(&dir).unwrap();
    assert_eq!(report.recorded_failed, vec![2]);
    let status = array.status();
    assert_eq!((status.state, status.failed.clone()), ("degraded", vec![2]));
    assert_matches(&mut array, &model, 11);
    let error = array.fail_member(1).unwrap_err().to_string();
    assert!(error.contains("cannot survive"), "{error}");
}

// Proves an interrupted rebuild resumes (not restarts) after reopening, finishes with
// the right data, and leaves parity consistent.
#[test]
fn interrupted_rebuild_resumes() {
    let dir = temp_dir("rebuild-resume");
    let mut array = Array::create(&dir, &spec(Level::Raid5, 3, 4096)).unwrap();
    let mut model = Model::new(array.capacity());
    random_writes(&mut array, &mut model, &mut Rng::new(21), 200, 40);
    array.fail_member(0).unwrap();
    array.start_rebuild(0).unwrap();
    let step = array.rebuild_step(100).unwrap();
    assert!(!step.done && step.units == 100);
    random_writes(&mut array, &mut model, &mut Rng::new(22), 50, 40);
    array.flush().unwrap();
    drop(array); // a crash: no close
    let (mut array, report) = Array::open(&dir).unwrap();
    let resumed = report.resumed_rebuild.expect("a rebuild in progress");
    assert_eq!((resumed.member, resumed.cursor), (0, 100));
    assert_eq!(array.status().state, "rebuilding");
    // 4096 sectors / 16-sector chunks = 256 stripes, 100 of them done before the crash.
    let mut units = 0;
    loop {
        let step = array.rebuild_step(64).unwrap();
        units += step.units;
        if step.done {
            break;
        }
    }
    assert_eq!(
        units,
        256 - 100,
        "resumed at the persisted cursor, not restarted"
    );
    assert_eq!(array.status().state, "healthy");
    assert_matches(&mut array, &model, 21);
    assert_eq!(array.scrub(false).unwrap().mismatches, 0);
    array.close().unwrap();
}

// Proves a stale member (an old copy of its file, from before a failure record) is
// treated as failed and reported, and that its data is never used.
#[test]
fn stale_member_is_failed() {
    let dir = temp_dir("stale");
    let mut array = Array::create(&dir, &spec(Level::Raid1, 3, 1024)).unwrap();
    let mut model = Model::new(array.capacity());
    random_writes(&mut array, &mut model, &mut Rng::new(31), 50, 20);
    array.close().unwrap();
    let old = dir.join("old-member-2");
    std::fs::copy(member_path(&dir, 2), &old).unwrap();
    let (mut array, _) = Array::open(&dir).unwrap();
    random_writes(&mut array, &mut model, &mut Rng::new(32), 50, 20);
    array.fail_member(0).unwrap();
    array.close().unwrap();
    std::fs::copy(&old, member_path(&dir, 2)).unwrap();
    let (mut array, report) = Array::open(&dir).unwrap();
    assert_eq!(report.stale, vec![2]);
    assert_eq!(array.status().failed, vec![0, 2]);
    assert_matches(&mut array, &model, 31);
}

fn open_error(dir: &std::path::Path) -> String {
    match Array::open(dir) {
        Ok(_) => panic!("{} opened", dir.display()),
        Err(error) => error.to_string(),
    }
}

// Proves assembly refuses members of another volume, a renamed member, a corrupt
// superblock the level cannot do without, too many missing members, and a second
// opener, naming the file. (A damaged member the level survives without is treated as
// failed instead: `damaged_members.rs`.)
#[test]
fn bad_members_are_refused_with_the_file_named() {
    let dir = temp_dir("refuse");
    let other = temp_dir("refuse-other");
    Array::create(&dir, &spec(Level::Raid5, 3, 512))
        .unwrap()
        .close()
        .unwrap();
    Array::create(&other, &spec(Level::Raid5, 3, 512))
        .unwrap()
        .close()
        .unwrap();
    let backup = dir.join("backup");
    std::fs::copy(member_path(&dir, 1), &backup).unwrap();

    std::fs::copy(member_path(&other, 1), member_path(&dir, 1)).unwrap();
    let error = open_error(&dir);
    assert!(
        error.contains("member-1.img") && error.contains("belongs to volume"),
        "{error}"
    );

    std::fs::copy(member_path(&dir, 2), member_path(&dir, 1)).unwrap();
    let error = open_error(&dir);
    assert!(
        error.contains("member-1.img") && error.contains("says it is member 2"),
        "{error}"
    );

    // With member 0 gone too, a raid5 cannot do without member 1: the refusal says why.
    std::fs::copy(&backup, member_path(&dir, 1)).unwrap();
    let moved = dir.join("moved-member-0");
    std::fs::rename(member_path(&dir, 0), &moved).unwrap();
    let mut bytes = std::fs::read(member_path(&dir, 1)).unwrap();
    bytes[40] ^= 1;
    bytes[4096 + 40] ^= 1;
    std::fs::write(member_path(&dir, 1), &bytes).unwrap();
    let error = open_error(&dir);
    assert!(
        error.contains("member-1.img") && error.contains("bad checksum"),
        "{error}"
    );

    bytes[0] = b'X';
    bytes[4096] = b'X';
    std::fs::write(member_path(&dir, 1), &bytes).unwrap();
    let error = open_error(&dir);
    assert!(
        error.contains("no superblock") && error.contains("more than a raid5 survives"),
        "{error}"
    );

    std::fs::rename(&moved, member_path(&dir, 0)).unwrap();
    std::fs::copy(&backup, member_path(&dir, 1)).unwrap();
    std::fs::remove_file(member_path(&dir, 0)).unwrap();
    let (array, report) = Array::open(&dir).unwrap();
    assert_eq!(report.missing, vec![0]);
    let error = open_error(&dir);
    assert!(
        error.contains("in use") && error.contains(&std::process::id().to_string()),
        "{error}"
    );
    drop(array);
    std::fs::remove_file(member_path(&dir, 1)).unwrap();
    let error = open_error(&dir);
    assert!(error.contains("more than a raid5 survives"), "{error}");

    let error = Array::create(&other, &spec(Level::Raid5, 3, 512))
        .err()
        .unwrap();
    assert!(matches!(error, ArrayError::AlreadyExists { .. }), "{error}");
}

// Proves (at compile time) that an array can move to a server thread.
/// An option the level has no use for is refused, naming it, instead of dropped: a
/// chunk for a mirror or the track-aligned RAID-5 (whose units are tracks), track
/// units for a plain RAID-5. (Before, `volume create --level raid5 --track-units
/// whole-track` made an ordinary RAID-5 without a word.)
#[test]
fn options_the_level_does_not_use_are_refused() {
    let dir = temp_dir("unused-options");
    for (mut spec, says) in [
        (spec(Level::Raid1, 2, 2048), "a raid1 has no chunk"),
        (
            spec(Level::Raid5TrackAligned, 3, 8192),
            "a raid5-track-aligned has no chunk",
        ),
        (
            spec(Level::Raid5, 3, 2048),
            "track units apply to raid5-track-aligned only",
        ),
    ] {
        if spec.level == Level::Raid5 {
            spec.track_units = Some(TrackUnits::WholeTrack);
        } else {
            spec.chunk = Some(Sectors(16));
        }
        let error = Array::create(&dir, &spec)
            .err()
            .expect("refused")
            .to_string();
        assert!(error.contains(says), "{error}");
    }
}

#[test]
fn array_is_send() {
    fn is_send<T: Send>() {}
    is_send::<Array>();
}

// Guards finding V7f (volumes-serve finding 7f): opening a directory that does not
// exist blamed its `lock` file, and opening an empty directory left a `lock` file in
// it. Proves both (and a regular file) are refused by what they are, writing nothing.
#[test]
fn a_path_that_holds_no_array_is_refused_and_left_as_it_was() {
    let missing = temp_dir("no-such-dir");
    std::fs::remove_dir(&missing).unwrap();
    let error = Array::open(&missing).err().expect("refused").to_string();
    assert!(error.contains("does not exist"), "{error}");
    assert!(!missing.exists(), "nothing may be created");
    let empty = temp_dir("empty-dir");
    let error = Array::open(&empty).err().expect("refused").to_string();
    assert!(error.contains("no array here"), "{error}");
    assert_eq!(
        std::fs::read_dir(&empty).unwrap().count(),
        0,
        "no lock file"
    );
    let file = empty.join("plain-file");
    std::fs::write(&file, b"x").unwrap();
    let error = Array::open_forced(&file)
        .err()
        .expect("refused")
        .to_string();
    assert!(error.contains("not a directory"), "{error}");
}
