//! Member I/O errors under an open array: a read error is corrected from the
//! redundancy and the member kept (in memory and in the superblocks), and the
//! corrected sectors are counted per member file.

mod common;

use common::{assert_matches, random_writes, spec, temp_dir, Model, Rng};
use spinstack_array::{inspect, member_path, Array, Level};
use spinstack_store::BlockStore;

// Proves a member read error is corrected through the array: the last data chunk of
// member 1 is cut off its file under the open array (the file store reports reading
// it as an I/O error), yet every read returns what was written, the member stays
// active in memory and in the superblocks, and its file holds the right data again
// (after close and open, a degraded read without member 2, which needs member 1's
// chunk, agrees). (Before, the read failed: defect "a member read error fails the
// whole request instead of reconstructing".)
#[test]
fn a_member_read_error_is_corrected_and_the_member_kept() {
    let seed = 0x0e44_0001;
    let dir = temp_dir("read-error");
    let mut array = Array::create(&dir, &spec(Level::Raid5, 4, 2048)).unwrap();
    let mut model = Model::new(array.capacity());
    random_writes(&mut array, &mut model, &mut Rng::new(seed), 200, 40);
    array.flush().unwrap();
    // 16-sector chunks on 4 members: the last stripe's parity is on member 0, so the
    // last 16 sectors of member 1 are data.
    let path = member_path(&dir, 1);
    let file = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
    let len_bytes = file.metadata().unwrap().len();
    file.set_len(len_bytes - 8 * 512).unwrap();
    assert_matches(&mut array, &model, seed);
    assert_eq!(array.status().state, "healthy");
    assert_eq!(inspect(&dir).unwrap().status.failed, Vec::<u32>::new());
    assert_eq!(
        file.metadata().unwrap().len(),
        len_bytes,
        "the chunk rewritten"
    );
    let corrected = array.status().corrected_read_sectors;
    assert!((8..=16).contains(&corrected[1]), "{corrected:?}");
    assert_eq!(corrected.iter().sum::<u64>(), corrected[1], "{corrected:?}");
    array.close().unwrap();
    assert_eq!(
        inspect(&dir).unwrap().status.corrected_read_sectors,
        corrected,
        "the count is in the superblocks"
    );
    let (mut array, _) = Array::open(&dir).unwrap();
    assert_eq!(array.status().corrected_read_sectors, corrected);
    array.fail_member(2).unwrap();
    assert_matches(&mut array, &model, seed);
    assert_eq!(
        array.scrub(false).unwrap().skipped,
        128,
        "every stripe degraded"
    );
}

// Proves a scrub reports the sectors it corrected and adds them to the member's
// count, which survives the close; and that a member rebuilt onto a fresh file starts
// at zero (its count belongs to the file it replaced), in memory and on disk.
#[test]
fn a_scrub_counts_its_corrections_and_a_rebuilt_member_starts_at_zero() {
    let seed = 0x0e44_0002;
    let dir = temp_dir("scrub-corrects");
    let mut array = Array::create(&dir, &spec(Level::Raid5, 4, 2048)).unwrap();
    let mut model = Model::new(array.capacity());
    random_writes(&mut array, &mut model, &mut Rng::new(seed), 200, 40);
    array.flush().unwrap();
    let path = member_path(&dir, 1);
    let file = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
    let len_bytes = file.metadata().unwrap().len();
    file.set_len(len_bytes - 8 * 512).unwrap();
    let report = array.scrub(false).unwrap();
    assert_eq!(report.mismatches, 0, "{report:?}");
    assert!(
        (8..=16).contains(&report.corrected_read_sectors),
        "{report:?}"
    );
    let corrected = array.status().corrected_read_sectors;
    assert_eq!(corrected[1], report.corrected_read_sectors, "{corrected:?}");
    array.close().unwrap();
    assert_eq!(
        inspect(&dir).unwrap().status.corrected_read_sectors,
        corrected
    );
    let (mut array, _) = Array::open(&dir).unwrap();
    array.fail_member(1).unwrap();
    array.start_rebuild(1).unwrap();
    assert_eq!(array.status().corrected_read_sectors, vec![0; 4]);
    while !array.rebuild_step(64).unwrap().done {}
    assert_matches(&mut array, &model, seed);
    array.close().unwrap();
    assert_eq!(
        inspect(&dir).unwrap().status.corrected_read_sectors,
        vec![0; 4]
    );
}

// Guards input finding 13 of the hostile test of 2026-11-28: a create refused by a
// late check (a buffer over the bound) or failing part way (a member file the file
// system will not make that large) left member files behind, and the corrected retry
// was refused as "already holds an array". Proves a buffer over the bound is refused
// before any file is made, and a create that fails making its member files leaves
// none, so the retry succeeds. (The second case needs a file system that refuses a
// 512 TiB file, as ext4 does; elsewhere it says so and checks the first only.)
#[test]
fn a_refused_or_failed_create_leaves_nothing_behind() {
    let dir = temp_dir("create-debris");
    let mut huge_buffer = spec(Level::Raid0, 2, 2048);
    huge_buffer.buffer = Some(spinstack_array::BufferSpec {
        block: spinstack_sim::units::Sectors(2 << 20),
        blocks: 100_000,
        policy: spinstack_array::WritePolicy::WriteBack,
    });
    assert!(Array::create(&dir, &huge_buffer).is_err());
    assert!(!member_path(&dir, 0).exists());
    Array::create(&dir, &spec(Level::Raid0, 2, 2048))
        .unwrap()
        .close()
        .unwrap();

    let dir = temp_dir("create-debris-huge");
    let huge_members = spec(Level::Raid1, 2, 1 << 40);
    match Array::create(&dir, &huge_members) {
        Ok(array) => {
            drop(array);
            eprintln!("skipping the part-way case: this file system makes 512 TiB files");
        }
        Err(_) => {
            assert!(!member_path(&dir, 0).exists() && !member_path(&dir, 1).exists());
            Array::create(&dir, &spec(Level::Raid1, 2, 2048))
                .unwrap()
                .close()
                .unwrap();
        }
    }
}
