//! Scrub finds corruption planted directly in a member store, and repair fixes it.

use crate::common::{memories, Rng, SECTOR};
use spinstack_sim::units::{Lbn, Sectors};
use spinstack_store::BlockStore;
use spinstack_volume::bytes::{Raid10Volume, Raid1Volume, Raid5Volume};
use spinstack_volume::map::{MemberIndex, ParityLayout, Raid10Map, Raid5Map};

// Proves a flipped byte in one parity sector is reported as exactly its stripe, that
// `check` changes nothing, and that `repair` recomputes the parity from the data.
#[test]
fn raid5_scrub_finds_and_repairs_corrupt_parity() {
    let mut volume = Raid5Volume::new(Sectors(8), memories(4, 256)).unwrap();
    let data = Rng::new(1).bytes(volume.capacity().0 as usize * SECTOR);
    volume.write(Lbn(0), &data).unwrap();
    assert_eq!(volume.scrub(false).unwrap().mismatch_count, 0);
    let layout = volume.layout().clone();
    let stripe = 13;
    let parity = layout.parity_member(stripe);
    let unit = layout.unit(stripe, parity);
    let (stores, _) = volume.into_parts();
    let mut stores: Vec<_> = stores.into_iter().map(Option::unwrap).collect();
    let mut sector = vec![0u8; SECTOR];
    let at = unit.start.offset(Sectors(5));
    stores[parity.index()].read(at, &mut sector).unwrap();
    sector[100] ^= 0x40;
    stores[parity.index()].write(at, &sector).unwrap();
    let mut volume = Raid5Volume::with_layout(layout, stores).unwrap();
    let report = volume.scrub(false).unwrap();
    assert_eq!(report.mismatches, vec![stripe]);
    assert_eq!((report.stripes_checked, report.repaired), (32, 0));
    assert_eq!(
        volume.scrub(false).unwrap().mismatches,
        vec![stripe],
        "check only reports"
    );
    let report = volume.scrub(true).unwrap();
    assert_eq!(
        (report.mismatches.clone(), report.repaired),
        (vec![stripe], 1)
    );
    assert_eq!(volume.scrub(false).unwrap().mismatch_count, 0);
    // The repaired parity is right: losing a data member still reads the data.
    volume
        .fail_member(layout_data_member(&volume, stripe))
        .unwrap();
    let mut buf = vec![0u8; data.len()];
    volume.read(Lbn(0), &mut buf).unwrap();
    assert!(buf == data);
}

fn layout_data_member(
    volume: &Raid5Volume<spinstack_store::MemoryStore, Raid5Map>,
    stripe: u64,
) -> MemberIndex {
    volume.layout().data_member(stripe, 0)
}

// Proves a corrupted sector of one mirror copy is reported as its chunk and repaired
// from the first copy.
#[test]
fn raid1_scrub_finds_and_repairs_corrupt_copy() {
    let mut volume = Raid1Volume::new(memories(3, 1024)).unwrap();
    let data = Rng::new(2).bytes(1024 * SECTOR);
    volume.write(Lbn(0), &data).unwrap();
    let (stores, _) = volume.into_parts();
    let mut stores: Vec<_> = stores.into_iter().map(Option::unwrap).collect();
    stores[2].write(Lbn(700), &[0xAB; SECTOR]).unwrap();
    let mut volume = Raid1Volume::new(stores).unwrap();
    let report = volume.scrub(false).unwrap();
    assert_eq!(report.mismatches, vec![700 / 128]);
    assert_eq!(report.stripes_checked, 8);
    assert_eq!(volume.scrub(true).unwrap().repaired, 1);
    assert_eq!(volume.scrub(false).unwrap().mismatch_count, 0);
    volume.fail_member(MemberIndex(0)).unwrap();
    volume.fail_member(MemberIndex(1)).unwrap();
    let mut buf = vec![0u8; data.len()];
    volume.read(Lbn(0), &mut buf).unwrap();
    assert!(buf == data, "copy 2 was repaired from copy 0");
}

// Proves RAID-10 scrub names the volume chunk whose copies differ.
#[test]
fn raid10_scrub_finds_corrupt_copy_by_chunk() {
    let mut volume = Raid10Volume::new(Sectors(8), 2, memories(5, 256)).unwrap();
    let data = Rng::new(3).bytes(volume.capacity().0 as usize * SECTOR);
    volume.write(Lbn(0), &data).unwrap();
    let map: Raid10Map = volume.map().clone();
    let chunk = 37u64;
    let copy1 = map.locate(Lbn(chunk * 8 + 3)).unwrap().nth(1).unwrap();
    let (stores, _) = volume.into_parts();
    let mut stores: Vec<_> = stores.into_iter().map(Option::unwrap).collect();
    stores[copy1.member.index()]
        .write(copy1.lbn, &[0u8; SECTOR])
        .unwrap();
    let mut volume = Raid10Volume::with_map(map, stores).unwrap();
    assert_eq!(volume.scrub(true).unwrap().mismatches, vec![chunk]);
    assert_eq!(volume.scrub(false).unwrap().mismatch_count, 0);
}
