//! Member failure, rebuild and the Failed state: a second failure is an error, never
//! wrong data.

use crate::common::{memories, memory, Rng, SECTOR};
use spinstack_sim::units::{Lbn, Sectors};
use spinstack_store::{BlockStore, FaultyStore, MemoryStore, StoreError};
use spinstack_volume::bytes::{ArrayState, Raid10Volume, Raid1Volume, Raid5Volume, VolumeError};
use spinstack_volume::map::MemberIndex;

fn assert_failed_error<T: std::fmt::Debug>(result: Result<T, StoreError>, what: &str) {
    assert!(
        matches!(result, Err(StoreError::Failed { .. })),
        "{what}: expected the array's Failed error, got {result:?}"
    );
}

/// Writes random data over the whole volume and returns it.
fn fill<S: BlockStore>(volume: &mut S, seed: u64) -> Vec<u8> {
    let data = Rng::new(seed).bytes(volume.capacity().0 as usize * SECTOR);
    volume.write(Lbn(0), &data).unwrap();
    data
}

// Proves a RAID-5 that lost two members refuses every request instead of returning
// reconstructed garbage, and that `status` says so.
#[test]
fn raid5_second_failure_fails_every_request() {
    let mut volume = Raid5Volume::new(Sectors(8), memories(4, 256)).unwrap();
    let data = fill(&mut volume, 1);
    volume.fail_member(MemberIndex(1)).unwrap();
    let mut buf = vec![0u8; data.len()];
    volume.read(Lbn(0), &mut buf).unwrap();
    assert!(buf == data, "degraded read reconstructs");
    volume.fail_member(MemberIndex(3)).unwrap();
    assert!(matches!(volume.status().state, ArrayState::Failed { .. }));
    assert_eq!(volume.status().failed, vec![MemberIndex(1), MemberIndex(3)]);
    for start in (0..volume.capacity().0).step_by(8) {
        assert_failed_error(volume.read(Lbn(start), &mut buf[..8 * SECTOR]), "read");
    }
    assert_failed_error(volume.write(Lbn(0), &data[..SECTOR]), "write");
    assert_failed_error(volume.trim(Lbn(0), Sectors(1)), "trim");
    assert_failed_error(volume.flush(), "flush");
    assert!(matches!(
        volume.scrub(false),
        Err(VolumeError::Store(StoreError::Failed { .. }))
    ));
}

// Proves a member failure seen on the data path (the member returns Failed) degrades
// the array and the request still returns correct data; a second one fails it.
#[test]
fn raid5_member_errors_drive_the_state_machine() {
    let stores: Vec<FaultyStore<MemoryStore>> =
        (0..3).map(|_| FaultyStore::new(memory(256))).collect();
    let mut volume = Raid5Volume::new(Sectors(8), stores).unwrap();
    let data = fill(&mut volume, 2);
    let (mut stores, _) = volume.into_parts();
    stores[0].as_mut().unwrap().fail();
    let stores = stores.into_iter().map(Option::unwrap).collect();
    let mut volume = Raid5Volume::new(Sectors(8), stores).unwrap();
    let mut buf = vec![0u8; data.len()];
    volume.read(Lbn(0), &mut buf).unwrap();
    assert!(buf == data);
    assert_eq!(volume.status().failed, vec![MemberIndex(0)]);
    // Writes keep parity right without member 0; reads rebuild its data from it.
    let new = Rng::new(3).bytes(40 * SECTOR);
    volume.write(Lbn(5), &new).unwrap();
    volume.read(Lbn(5), &mut buf[..new.len()]).unwrap();
    assert!(buf[..new.len()] == new[..]);
    volume.fail_member(MemberIndex(2)).unwrap();
    assert_failed_error(
        volume.read(Lbn(0), &mut buf[..SECTOR]),
        "read after two failures",
    );
}

// Proves a write to a rebuilding member below the cursor lands on it: after the rebuild,
// with every other copy gone, the new member alone returns the new data.
#[test]
fn mirror_write_below_rebuild_cursor_reaches_new_member() {
    let mut volume = Raid1Volume::new(memories(2, 1024)).unwrap();
    fill(&mut volume, 4);
    volume.fail_member(MemberIndex(1)).unwrap();
    volume.replace_member(MemberIndex(1), memory(1024)).unwrap();
    assert_eq!(volume.rebuild_step(2).unwrap(), 2);
    let progress = volume.status().rebuild_progress.unwrap();
    assert!(progress > 0.0 && progress < 1.0, "{progress}");
    let new = Rng::new(5).bytes(300 * SECTOR);
    volume.write(Lbn(0), &new).unwrap();
    while volume.rebuild_step(3).unwrap() > 0 {}
    assert_eq!(volume.status().state, ArrayState::Healthy);
    volume.fail_member(MemberIndex(0)).unwrap();
    let mut buf = vec![0u8; new.len()];
    volume.read(Lbn(0), &mut buf).unwrap();
    assert!(
        buf == new,
        "the rebuilt member holds the write made during the rebuild"
    );
}

// Proves the same for RAID-5: a write during the rebuild, both below and above the
// cursor, is on the rebuilt member afterwards.
#[test]
fn raid5_write_across_rebuild_cursor_reaches_new_member() {
    let mut volume = Raid5Volume::new(Sectors(8), memories(3, 512)).unwrap();
    fill(&mut volume, 6);
    volume.fail_member(MemberIndex(2)).unwrap();
    volume.replace_member(MemberIndex(2), memory(512)).unwrap();
    volume.rebuild_step(20).unwrap();
    let new = Rng::new(7).bytes(200 * SECTOR);
    volume.write(Lbn(300), &new).unwrap();
    while volume.rebuild_step(7).unwrap() > 0 {}
    volume.fail_member(MemberIndex(0)).unwrap();
    let mut buf = vec![0u8; new.len()];
    volume.read(Lbn(300), &mut buf).unwrap();
    assert!(buf == new);
    assert_eq!(
        volume.scrub(false).unwrap().stripes_skipped,
        volume.layout_stripes()
    );
}

trait Stripes {
    fn layout_stripes(&self) -> u64;
}

impl<S: BlockStore> Stripes for Raid5Volume<S, spinstack_volume::map::Raid5Map> {
    fn layout_stripes(&self) -> u64 {
        use spinstack_volume::map::ParityLayout;
        self.layout().stripes()
    }
}

// Proves a mirror fails only when every copy of some chunk is lost: RAID-10 near-2 on
// 4 members survives losing members 0 and 2 (different pairs), not 0 and 1.
#[test]
fn raid10_fails_when_every_copy_of_a_chunk_is_lost() {
    let mut volume = Raid10Volume::new(Sectors(8), 2, memories(4, 256)).unwrap();
    let data = fill(&mut volume, 8);
    volume.fail_member(MemberIndex(0)).unwrap();
    volume.fail_member(MemberIndex(2)).unwrap();
    let mut buf = vec![0u8; data.len()];
    volume.read(Lbn(0), &mut buf).unwrap();
    assert!(buf == data, "each chunk still has a copy");
    volume.fail_member(MemberIndex(1)).unwrap();
    assert!(matches!(volume.status().state, ArrayState::Failed { .. }));
    for start in (0..volume.capacity().0).step_by(8) {
        assert_failed_error(volume.read(Lbn(start), &mut buf[..8 * SECTOR]), "read");
    }
    assert_failed_error(volume.write(Lbn(0), &data[..SECTOR]), "write");
}

// Proves a 3-way RAID-1 serves data with two members lost and fails with all three.
#[test]
fn raid1_three_way_fails_only_with_every_copy_lost() {
    let mut volume = Raid1Volume::new(memories(3, 256)).unwrap();
    let data = fill(&mut volume, 9);
    volume.fail_member(MemberIndex(0)).unwrap();
    volume.fail_member(MemberIndex(2)).unwrap();
    let mut buf = vec![0u8; data.len()];
    volume.read(Lbn(0), &mut buf).unwrap();
    assert!(buf == data);
    volume.fail_member(MemberIndex(1)).unwrap();
    assert_failed_error(volume.read(Lbn(0), &mut buf), "read");
}

// Proves the state machine refuses a replacement of a member that has not failed.
#[test]
fn replacing_a_live_member_is_refused() {
    let mut volume = Raid5Volume::new(Sectors(8), memories(3, 256)).unwrap();
    let error = volume
        .replace_member(MemberIndex(1), memory(256))
        .unwrap_err();
    assert!(error.to_string().contains("healthy"), "{error}");
}

// Proves the volume ranges a rebuild step stands for in a timing model are what the
// rebuild reads from the other members: for RAID-5 each stripe's whole data (the
// stripes of a rebuild cover the volume once, coalesced), for RAID-10 the chunks the
// member mirrors (its pair's, not the other pair's), for RAID-1 the member's own
// addresses. (`serve --timing model` paces online rebuilds with them.)
#[test]
fn rebuild_read_ranges_are_what_the_rebuild_reads() {
    let raid5 = Raid5Volume::new(Sectors(8), memories(4, 256)).unwrap();
    let stripes = 256 / 8;
    assert_eq!(
        raid5.rebuild_read_ranges(0..stripes),
        [(Lbn(0), raid5.capacity())],
        "a whole rebuild reads every stripe's data once"
    );
    assert_eq!(
        raid5.rebuild_read_ranges(3..5),
        [(Lbn(3 * 24), Sectors(2 * 24))]
    );
    assert_eq!(
        raid5.rebuild_read_ranges(stripes - 1..stripes + 9),
        [(Lbn((stripes - 1) * 24), Sectors(24))],
        "stripes past the end read nothing"
    );
    // RAID-10 near-2 over four members: row r holds chunk 2r on members 0 and 1 and
    // chunk 2r + 1 on members 2 and 3.
    let raid10 = Raid10Volume::new(Sectors(8), 2, memories(4, 256)).unwrap();
    assert_eq!(
        raid10.rebuild_read_ranges(MemberIndex(1), 0..2),
        [(Lbn(0), Sectors(8)), (Lbn(16), Sectors(8))]
    );
    assert_eq!(
        raid10.rebuild_read_ranges(MemberIndex(3), 1..2),
        [(Lbn(24), Sectors(8))]
    );
    let raid1 = Raid1Volume::new(memories(2, 1024)).unwrap();
    let rows = raid1.rebuild_read_ranges(MemberIndex(1), 0..u64::MAX);
    assert_eq!(
        rows,
        [(Lbn(0), raid1.capacity())],
        "coalesced, ends at the member"
    );
}
