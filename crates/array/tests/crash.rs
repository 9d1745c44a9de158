//! Crashes: an array dropped without close after writes whose parity never reached
//! the disk, and a copy of the files taken mid-workload, both assemble to a
//! consistent array (scrub finds nothing) holding every flushed write.
//! (`Model` compares whole volumes; the crash image compares sector by sector.)

mod common;

use common::{assert_matches, random_writes, spec, temp_dir, Model, Rng};
use spinstack_array::{member_path, Array, BufferSpec, Level, WritePolicy};
use spinstack_sim::units::{Lbn, Sectors};
use spinstack_store::BlockStore;
use spinstack_volume::map::{MemberIndex, ParityLayout, Raid5Map};
use std::os::unix::fs::FileExt;

// Proves the write-intent record drives the resync: writes in flight at a crash
// whose parity writes were lost (simulated by garbling those parity units after a
// drop without close) are found dirty at open, their parity recomputed, and a scrub
// then finds no mismatch while every write reads back.
#[test]
fn lost_parity_writes_are_resynced_at_open() {
    let seed = 0xc4a5_0001;
    let dir = temp_dir("crash-parity");
    let mut array = Array::create(&dir, &spec(Level::Raid5, 4, 2048)).unwrap();
    let mut model = Model::new(array.capacity());
    let mut rng = Rng::new(seed);
    random_writes(&mut array, &mut model, &mut rng, 100, 40);
    array.flush().unwrap();
    let layout = Raid5Map::new(4, Sectors(16), Sectors(2048)).unwrap();
    let mut torn_stripes = Vec::new();
    for _ in 0..20 {
        let lbn = rng.below(array.capacity().0 - 8);
        let mut buf = vec![0u8; 8 * 512];
        rng.fill_bytes(&mut buf);
        array.write(Lbn(lbn), &buf).unwrap();
        model.write(Lbn(lbn), &buf);
        torn_stripes.push(layout.stripe_of(Lbn(lbn)).unwrap());
        torn_stripes.push(layout.stripe_of(Lbn(lbn + 7)).unwrap());
    }
    drop(array); // killed: no flush, no close
    for &stripe in &torn_stripes {
        let parity: MemberIndex = layout.parity_member(stripe);
        let unit = layout.unit(stripe, parity);
        let mut garbage = vec![0u8; (unit.used.0 * 512) as usize];
        rng.fill_bytes(&mut garbage);
        let file = std::fs::OpenOptions::new()
            .write(true)
            .open(member_path(&dir, parity.0))
            .unwrap();
        file.write_all_at(&garbage, (16 + unit.start.0) * 512)
            .unwrap();
    }
    let (mut array, report) = Array::open(&dir).unwrap();
    assert!(
        !report.was_clean,
        "seed {seed:#x}: the array was not closed"
    );
    assert!(
        report.dirty_regions > 0 && report.units_resynced > 0,
        "seed {seed:#x}: {report:?}"
    );
    assert_eq!(array.scrub(false).unwrap().mismatches, 0, "seed {seed:#x}");
    assert_matches(&mut array, &model, seed);
    // Parity is right, not merely consistent: a degraded read rebuilds the same data.
    array.fail_member(1).unwrap();
    assert_matches(&mut array, &model, seed);
}

// Proves a copy of the directory taken mid-workload (a machine crash image: flushed
// writes on the files, the write-back buffer's unflushed blocks lost) assembles,
// scrubs clean, and holds every flushed write; unflushed sectors are old or new.
#[test]
fn crash_image_keeps_flushed_writes() {
    let seed = 0xc4a5_0002;
    let dir = temp_dir("crash-image");
    let image = temp_dir("crash-image-copy");
    let mut spec = spec(Level::Raid1, 2, 2048);
    spec.buffer = Some(BufferSpec {
        block: Sectors(32),
        blocks: 4,
        policy: WritePolicy::WriteBack,
    });
    let mut array = Array::create(&dir, &spec).unwrap();
    let mut flushed = Model::new(array.capacity());
    let mut rng = Rng::new(seed);
    random_writes(&mut array, &mut flushed, &mut rng, 100, 20);
    array.flush().unwrap();
    // Every value each sector took after the flush: any of them (or the flushed one)
    // may be on the files, as the buffer evicts blocks whenever it needs slots.
    let mut later: Vec<Vec<Vec<u8>>> = vec![Vec::new(); (array.capacity().0) as usize];
    for _ in 0..30 {
        let sectors = 1 + rng.below(20);
        let lbn = rng.below(array.capacity().0 - sectors + 1);
        let mut buf = vec![0u8; (sectors * 512) as usize];
        rng.fill_bytes(&mut buf);
        array.write(Lbn(lbn), &buf).unwrap();
        for (i, sector) in buf.chunks(512).enumerate() {
            later[lbn as usize + i].push(sector.to_vec());
        }
    }
    for name in ["member-0.img", "member-1.img", "intent.img"] {
        std::fs::copy(dir.join(name), image.join(name)).unwrap();
    }
    array.close().unwrap();
    let (mut copy, report) = Array::open(&image).unwrap();
    assert!(!report.was_clean);
    assert_eq!(copy.scrub(false).unwrap().mismatches, 0, "seed {seed:#x}");
    let mut buf = vec![0u8; flushed.0.len()];
    copy.read(Lbn(0), &mut buf).unwrap();
    let sectors = buf.chunks(512).zip(flushed.0.chunks(512)).zip(&later);
    for (sector, ((got, flushed), later)) in sectors.enumerate() {
        assert!(
            got == flushed || later.iter().any(|value| got == value.as_slice()),
            "seed {seed:#x}: sector {sector} is neither the flushed nor the later data"
        );
    }
}
