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
