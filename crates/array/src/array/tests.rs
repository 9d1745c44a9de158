//! Unit tests of the array that reach inside it: failures the volume records by
//! itself, which member files cannot be made to cause.

use super::*;

/// A fresh directory for one test (a previous run's removed first).
fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "spinstack-array-unit-{}-{name}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

/// An array of `members` members of 256 sectors at `level`, with no buffer.
fn spec(level: Level, members: u32, chunk: Option<Sectors>) -> ArraySpec {
    ArraySpec {
        level,
        members,
        member_size: Sectors(256),
        chunk,
        disks: Vec::new(),
        buffer: None,
        track_units: None,
    }
}

// Proves a member the volume fails by itself on the data path is in the
// superblocks when the request returns, before any flush, so a crash right after
// a write acknowledged degraded finds the member failed, not back as active with
// stale data. The member is failed in the volume directly, as a member write error
// inside the request would fail it (member files cannot be made to fail a write
// here). (Before, the failure was recorded only at the next flush: defect "the
// array must record a member failed on the data path".)
#[test]
fn a_member_failed_on_the_data_path_is_recorded_before_the_request_returns() {
    let dir = temp_dir("record-at-once");
    let spec = spec(Level::Raid5, 4, Some(Sectors(16)));
    let mut array = Array::create(&dir, &spec).unwrap();
    array.engine.volume_mut().fail_member(2).unwrap();
    array.write(Lbn(0), &[7u8; 4096]).unwrap();
    let at_rest = crate::inspect(&dir).unwrap();
    assert_eq!(at_rest.status.failed, vec![2]);
    crash_then_find_failed(array, &dir, &[2]);
}

// Proves a member failed by the flush a maintenance operation starts with is in
// the superblocks when the operation returns: here a three-way mirror's member 2
// is failed in the volume directly, as a member flush error in `start_rebuild`'s
// flush would fail it (member files cannot be made to fail a flush here), and
// the rebuild of member 0 then writes the role table. (Before, that table still
// said member 2 was active, so a crash before the next request brought it back
// with stale data: noticed in the review of the member-error change, 2026-11-28.)
#[test]
fn a_member_failed_by_a_maintenance_flush_is_recorded() {
    let dir = temp_dir("maintenance-flush");
    let spec = spec(Level::Raid1, 3, None);
    let mut array = Array::create(&dir, &spec).unwrap();
    array.fail_member(0).unwrap();
    array.engine.volume_mut().fail_member(2).unwrap();
    array.start_rebuild(0).unwrap();
    let at_rest = crate::inspect(&dir).unwrap();
    assert_eq!(at_rest.status.failed, vec![2]);
    assert_eq!(at_rest.status.rebuilding, Some(0));
    crash_then_find_failed(array, &dir, &[2]);
}

/// Drops `array` as a crash would (no flush, no close), opens it again and checks
/// that assembly found `failed` recorded as failed.
fn crash_then_find_failed(array: Array, dir: &Path, failed: &[u32]) {
    drop(array);
    let (array, report) = Array::open(dir).unwrap();
    assert_eq!(report.recorded_failed, failed);
    assert_eq!(array.status().failed, failed);
    drop(array);
    let _ = std::fs::remove_dir_all(dir);
}

/// Writes a distinct pattern over the whole array and flushes it; returns it.
fn fill(array: &mut Array, seed: u8) -> Vec<u8> {
    let bytes = array.capacity().bytes() as usize;
    let data: Vec<u8> = (0..bytes)
        .map(|i| (i as u8).wrapping_mul(31) ^ seed)
        .collect();
    array.write(Lbn(0), &data).unwrap();
    array.flush().unwrap();
    data
}

fn read_all(array: &mut Array) -> Vec<u8> {
    let mut data = vec![0u8; array.capacity().bytes() as usize];
    array.read(Lbn(0), &mut data).unwrap();
    data
}

/// Opens the array in `dir` and checks that members 1 and 2 were accepted behind,
/// for a reason that says `why`, and that it reads back `data`.
fn assert_members_1_and_2_accepted(dir: &Path, why: &str, data: &[u8]) {
    let (mut array, report) = Array::open(dir).unwrap();
    assert_eq!(report.accepted_behind, vec![1, 2]);
    let said = report.accepted_behind_why.as_deref().unwrap_or_default();
    assert!(said.contains(why), "{report:?}");
    assert_eq!(read_all(&mut array), data);
}

/// Copies members 1 and 2 aside, then (after `between`) puts the copies back.
fn put_back_old_copies(dir: &Path, between: impl FnOnce()) {
    for m in [1, 2] {
        std::fs::copy(member_path(dir, m), dir.join(format!("old-{m}"))).unwrap();
    }
    between();
    for m in [1, 2] {
        std::fs::copy(dir.join(format!("old-{m}")), member_path(dir, m)).unwrap();
    }
}

// Regression test for finding V4 (volumes-serve hostile testing): old copies of two
// RAID-5 member files, put back one generation behind the others after the array
// moved on, were accepted as "an interrupted update" and their stale data served as
// current. Proves they are now refused, naming them, unless assembly is forced.
#[test]
fn old_copies_one_generation_behind_are_refused_unless_forced() {
    let dir = temp_dir("old-copies");
    let mut array = Array::create(&dir, &spec(Level::Raid5, 4, Some(Sectors(16)))).unwrap();
    fill(&mut array, 1);
    array.close().unwrap();
    put_back_old_copies(&dir, || {
        let (mut array, _) = Array::open(&dir).unwrap();
        fill(&mut array, 2);
        drop(array); // killed: never closed
    });
    let refusal = match Array::open(&dir) {
        Ok(_) => panic!("old copies of members 1 and 2 were assembled"),
        Err(error) => error.to_string(),
    };
    assert!(
        refusal.contains("members [1, 2]") && refusal.contains("force-assemble"),
        "{refusal}"
    );
    let (array, report) = Array::open_forced(&dir).unwrap();
    assert_eq!(report.accepted_behind, vec![1, 2]);
    assert!(report.accepted_behind_why.unwrap().contains("forced"));
    array.close().unwrap();
    // Forced once, the members are current again: a plain open needs no force.
    let (_, report) = Array::open(&dir).unwrap();
    assert!(report.accepted_behind.is_empty(), "{report:?}");
}

// The same for copies taken while the array was open (served): the close's update
// finished on every member, so copies from before it are old.
#[test]
fn copies_taken_while_open_are_refused_after_a_clean_close() {
    let dir = temp_dir("copies-while-open");
    Array::create(&dir, &spec(Level::Raid5, 4, Some(Sectors(16))))
        .unwrap()
        .close()
        .unwrap();
    let (mut array, _) = Array::open(&dir).unwrap();
    fill(&mut array, 3);
    put_back_old_copies(&dir, move || {
        fill(&mut array, 4);
        array.close().unwrap();
    });
    assert!(matches!(
        Array::open(&dir),
        Err(ArrayError::OldCopies { ref members, .. }) if members == &[1, 2]
    ));
}

// Proves the record does not cost what it was added for: members one behind because
// a crash interrupted a superblock update (the record says it started and did not
// finish) are still accepted, with their data, and the report says why.
#[test]
fn members_an_interrupted_update_missed_are_still_accepted() {
    let dir = temp_dir("interrupted-update");
    let mut array = Array::create(&dir, &spec(Level::Raid5, 4, Some(Sectors(16)))).unwrap();
    let data = fill(&mut array, 5);
    let volume_id = array.volume_id;
    let interrupted = array.generation + 1;
    // The close's update (generation `interrupted`) reaches members 0 and 3 only:
    // members 1 and 2 keep their superblocks of the generation before, and the
    // record keeps "started, not finished", as a crash between the member writes
    // leaves them (the data was flushed before, so the copies hold it).
    put_back_old_copies(&dir, || array.close().unwrap());
    UpdateRecordFile::open(&dir, volume_id, interrupted - 1)
        .unwrap()
        .start(interrupted)
        .unwrap();
    assert_members_1_and_2_accepted(&dir, "interrupted", &data);
}

// Proves an array made before the record existed (no update.img) still assembles
// members one behind, saying the record cannot confirm why, and gets a record.
#[test]
fn without_a_record_members_one_behind_are_accepted_and_said_unconfirmed() {
    let dir = temp_dir("no-record");
    let mut array = Array::create(&dir, &spec(Level::Raid5, 4, Some(Sectors(16)))).unwrap();
    let data = fill(&mut array, 6);
    put_back_old_copies(&dir, || array.close().unwrap());
    std::fs::remove_file(update_record_path(&dir)).unwrap();
    assert_members_1_and_2_accepted(&dir, "cannot confirm", &data);
    assert!(update_record_path(&dir).exists());
}
