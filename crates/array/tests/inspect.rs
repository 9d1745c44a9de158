//! `inspect` (what `spinstack volume status` runs at rest) reads an array without
//! changing it, and reports what `Array::open` then assembles.

mod common;

use common::{random_writes, spec, temp_dir, Model, Rng};
use spinstack_array::{inspect, Array, ArrayStatus, Level};
use std::collections::BTreeMap;
use std::path::Path;

/// Every file of the array directory with its bytes.
fn snapshot(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.is_file())
        .map(|path| {
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            (name, std::fs::read(&path).unwrap())
        })
        .collect()
}

/// Inspects `dir`, asserting no file changed, then opens it and checks the inspection
/// against what assembly reports (the generation is the one before open's own bump).
fn inspect_then_open(dir: &Path, clean: bool) -> ArrayStatus {
    let before = snapshot(dir);
    let inspection = inspect(dir).unwrap();
    assert!(
        snapshot(dir) == before,
        "{}: inspect changed a file",
        dir.display()
    );
    assert_eq!(inspection.clean, clean);
    let (array, report) = Array::open(dir).unwrap();
    assert_eq!(report.was_clean, clean);
    assert_eq!(inspection.report.stale, report.stale);
    assert_eq!(inspection.report.missing, report.missing);
    let opened = array.status();
    let mut expected = opened.clone();
    expected.generation = inspection.status.generation;
    assert_eq!(inspection.status, expected);
    assert!(opened.generation > inspection.status.generation);
    array.close().unwrap();
    inspection.status
}

// Proves a status at rest of a dirty array (a crash: no close) writes nothing, so the
// resync waits for the next open, and agrees with what open assembles.
#[test]
fn inspecting_a_dirty_array_changes_nothing() {
    let dir = temp_dir("inspect-dirty");
    let mut array = Array::create(&dir, &spec(Level::Raid5, 4, 2048)).unwrap();
    let mut model = Model::new(array.capacity());
    random_writes(&mut array, &mut model, &mut Rng::new(31), 100, 40);
    drop(array); // a crash
    let status = inspect_then_open(&dir, false);
    assert_eq!(status.state, "healthy");
}

// Proves a degraded mirror and a RAID-5 in mid-rebuild report the same failed
// members, state and rebuild progress at rest as once assembled.
#[test]
fn inspecting_degraded_and_rebuilding_arrays_matches_open() {
    let dir = temp_dir("inspect-degraded");
    let mut array = Array::create(&dir, &spec(Level::Raid1, 3, 2048)).unwrap();
    array.fail_member(1).unwrap();
    array.close().unwrap();
    let status = inspect_then_open(&dir, true);
    assert_eq!((status.state, status.failed), ("degraded", vec![1]));

    let dir = temp_dir("inspect-rebuilding");
    let mut array = Array::create(&dir, &spec(Level::Raid5, 3, 4096)).unwrap();
    array.fail_member(0).unwrap();
    array.start_rebuild(0).unwrap();
    array.rebuild_step(100).unwrap();
    array.close().unwrap();
    let status = inspect_then_open(&dir, true);
    assert_eq!((status.state, status.rebuilding), ("rebuilding", Some(0)));
    // 4096 sectors / 16-sector chunks = 256 stripes, 100 of them rebuilt.
    assert_eq!(status.rebuild_progress, Some(100.0 / 256.0));
}
