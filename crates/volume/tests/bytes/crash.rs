//! Crash tests of the RAID-5 write hole and the write-intent record.
//!
//! Four members and the record are `FaultyStore`s on one `PowerSwitch`. An array of
//! random contents is set up and shut down cleanly; then one operation (a partial-
//! stripe write, a full-stripe write, a write spanning stripes, a trim) runs with the
//! power cut after `k` steps, for every `k` from 0 to the operation's step count, so
//! the crash falls before, between and after every record and member write. After
//! each crash the stores restart as the crash left them and the array is assembled
//! from them. Properties:
//! 1. recovery resyncs exactly regions the operation touched, and every one of them
//!    once the operation's first member write may have happened;
//! 2. afterwards every stripe's parity is the XOR of its data (scrub: no mismatch);
//! 3. every sector outside the operation's range reads as before, every sector inside
//!    as either its old or its new contents; and a degraded read of any member (each
//!    failed in turn) agrees, which is what the parity is for.
//!
//! Without a record, the same crash leaves a stripe whose parity disagrees (so the
//! test can see the bug it guards against).
//!
//! Then member errors that are not a crash, on `ErringStore`s: a member write error
//! fails the member and the write completes degraded (so a second failure cannot read
//! stale parity), an error passed up (a power cut) leaves its regions to resync, and
//! resync counts only what it wrote.

use crate::common::{erring, memory, ErringStore, Faults, Injected, Rng, SECTOR};
use spinstack_sim::units::{Lbn, Sectors};
use spinstack_store::intent::record_sectors;
use spinstack_store::{BlockStore, FaultyStore, MemoryStore, PowerSwitch, StoreError};
use spinstack_volume::bytes::{ArrayState, Raid10Volume, Raid1Volume, Raid5Volume, ResumeRebuild};
use spinstack_volume::map::{MemberIndex, MirrorMap, ParityLayout, Raid10Map, Raid5Map};
use std::rc::Rc;

const MEMBERS: usize = 4;
const CHUNK: u64 = 4;
const MEMBER_SECTORS: u64 = 64;
type Faulty = FaultyStore<MemoryStore>;

#[derive(Clone, Copy, Debug)]
enum Op {
    Write { lbn: u64, sectors: u64 },
    Trim { lbn: u64, sectors: u64 },
}

impl Op {
    fn range(self) -> (u64, u64) {
        match self {
            Op::Write { lbn, sectors } | Op::Trim { lbn, sectors } => (lbn, sectors),
        }
    }
}

fn layout() -> Raid5Map {
    Raid5Map::new(MEMBERS as u32, Sectors(CHUNK), Sectors(MEMBER_SECTORS)).unwrap()
}

/// A clean array with random contents, its stores on `power`; returns it and the
/// volume image.
fn setup(power: &PowerSwitch, with_intent: bool) -> (Raid5Volume<Faulty, Raid5Map>, Vec<u8>) {
    let stores = (0..MEMBERS)
        .map(|_| FaultyStore::on_switch(memory(MEMBER_SECTORS), power))
        .collect();
    let mut volume = Raid5Volume::with_layout(layout(), stores).unwrap();
    if with_intent {
        let record = FaultyStore::on_switch(memory(record_sectors(64).unwrap().0), power);
        volume = volume.with_intent(record, 1).unwrap();
    }
    let image = fill(&mut volume);
    (volume, image)
}

/// Writes random contents over the whole array and shuts it down cleanly; returns
/// the volume image.
fn fill<S: BlockStore>(volume: &mut Raid5Volume<S, Raid5Map>) -> Vec<u8> {
    let image = Rng::new(42).bytes(volume.capacity().0 as usize * SECTOR);
    volume.write(Lbn(0), &image).unwrap();
    volume.flush_and_clean().unwrap();
    image
}

fn new_data(sectors: u64) -> Vec<u8> {
    Rng::new(7).bytes(sectors as usize * SECTOR)
}

fn run(volume: &mut Raid5Volume<Faulty, Raid5Map>, op: Op) -> bool {
    match op {
        Op::Write { lbn, sectors } => volume.write(Lbn(lbn), &new_data(sectors)).is_ok(),
        Op::Trim { lbn, sectors } => volume.trim(Lbn(lbn), Sectors(sectors)).is_ok(),
    }
}

/// The stores as the crash left them.
fn restart(
    volume: Raid5Volume<Faulty, Raid5Map>,
) -> (Vec<Option<MemoryStore>>, Option<MemoryStore>) {
    let (members, record) = volume.into_parts();
    let members = members
        .into_iter()
        .map(|m| Some(m.unwrap().into_inner().unwrap()))
        .collect();
    (members, record.map(|r| r.into_inner().unwrap()))
}

/// Steps `op` takes on a fresh array (record writes, flushes and member writes).
fn steps_of(op: Op) -> u64 {
    let power = PowerSwitch::new();
    let (mut volume, _) = setup(&power, true);
    let before = power.steps();
    assert!(run(&mut volume, op));
    power.steps() - before
}

/// Crashes `op` after `k` steps, assembles, and checks properties 1-3.
fn crash_and_check(op: Op, k: u64) {
    let power = PowerSwitch::new();
    let (mut volume, old) = setup(&power, true);
    power.cut_after(k);
    run(&mut volume, op);
    let (members, record) = restart(volume);
    let (mut volume, report) = Raid5Volume::assemble(layout(), members, record.unwrap(), false)
        .unwrap_or_else(|e| panic!("{op:?} cut after {k}: assemble: {e}"));
    let (lbn, sectors) = op.range();
    let stripe_data = CHUNK * (MEMBERS as u64 - 1);
    let touched: Vec<u64> = (lbn / stripe_data..=(lbn + sectors - 1) / stripe_data).collect();
    assert!(
        report.dirty_regions.iter().all(|r| touched.contains(r)),
        "{op:?} cut after {k}: dirty {:?} outside {touched:?}",
        report.dirty_regions
    );
    // Steps 0 and 1 are the record's bit write and flush: no member write before them.
    if k >= 2 {
        assert_eq!(
            report.dirty_regions, touched,
            "{op:?} cut after {k}: property 1"
        );
    }
    let scrub = volume.scrub(false).unwrap();
    assert_eq!(
        scrub.mismatch_count, 0,
        "{op:?} cut after {k}: property 2: {scrub:?}"
    );
    let new = match op {
        Op::Write { sectors, .. } => new_data(sectors),
        Op::Trim { sectors, .. } => vec![0u8; sectors as usize * SECTOR],
    };
    check_old_or_new(&mut volume, &old, &new, lbn, || {
        format!("{op:?} cut after {k}")
    });
    for member in 0..MEMBERS as u32 {
        let (members, record) = volume.into_parts();
        let members = members.into_iter().map(|m| m.unwrap()).collect();
        let mut healthy = Raid5Volume::with_layout(layout(), members).unwrap();
        let mut expected = vec![0u8; old.len()];
        healthy.read(Lbn(0), &mut expected).unwrap();
        healthy.fail_member(MemberIndex(member)).unwrap();
        let mut degraded = vec![0u8; old.len()];
        healthy.read(Lbn(0), &mut degraded).unwrap();
        assert!(
            expected == degraded,
            "{op:?} cut after {k}: degraded read without {member}"
        );
        let (members, _) = healthy.into_parts();
        volume = Raid5Volume::assemble(layout(), members, record.unwrap(), false)
            .unwrap()
            .0;
    }
}

/// Property 3: outside `lbn..` the old contents, inside old or new, sector by sector.
fn check_old_or_new<S: BlockStore>(
    volume: &mut S,
    old: &[u8],
    new: &[u8],
    lbn: u64,
    context: impl Fn() -> String,
) {
    let mut now = vec![0u8; old.len()];
    volume.read(Lbn(0), &mut now).unwrap();
    let range = lbn as usize..lbn as usize + new.len() / SECTOR;
    for sector in 0..old.len() / SECTOR {
        let got = &now[sector * SECTOR..][..SECTOR];
        let was = &old[sector * SECTOR..][..SECTOR];
        if range.contains(&sector) {
            let written = &new[(sector - range.start) * SECTOR..][..SECTOR];
            assert!(
                got == was || got == written,
                "{}: sector {sector} is neither old nor new",
                context()
            );
        } else {
            assert!(
                got == was,
                "{}: sector {sector} outside the operation changed",
                context()
            );
        }
    }
}

fn crash_everywhere(op: Op) {
    let steps = steps_of(op);
    assert!(steps >= 3, "{op:?} takes {steps} steps");
    for k in 0..=steps {
        crash_and_check(op, k);
    }
}

// Proves properties 1-3 for a read-modify-write of a few sectors inside one chunk.
#[test]
fn partial_stripe_write_survives_crash_at_every_step() {
    crash_everywhere(Op::Write {
        lbn: 13,
        sectors: 2,
    });
}

// Proves properties 1-3 for a reconstruct-write covering most of a stripe.
#[test]
fn most_of_stripe_write_survives_crash_at_every_step() {
    crash_everywhere(Op::Write {
        lbn: 25,
        sectors: 10,
    });
}

// Proves properties 1-3 for a full-stripe write (no reads, four member writes).
#[test]
fn full_stripe_write_survives_crash_at_every_step() {
    crash_everywhere(Op::Write {
        lbn: 24,
        sectors: 12,
    });
}

// Proves properties 1-3 for a write spanning three stripes (two partial, one full).
#[test]
fn multi_stripe_write_survives_crash_at_every_step() {
    crash_everywhere(Op::Write {
        lbn: 10,
        sectors: 30,
    });
}

// Proves properties 1-3 for a trim of one whole stripe plus parts of its neighbours
// (member trims, then zero writes through the write path).
#[test]
fn trim_survives_crash_at_every_step() {
    crash_everywhere(Op::Trim {
        lbn: 20,
        sectors: 20,
    });
}

// Proves the harness can see the write hole: without a record, some crash point of a
// partial-stripe write leaves a stripe whose parity disagrees with its data, which a
// degraded read would turn into data never written.
#[test]
fn without_intent_a_crash_leaves_parity_inconsistent() {
    let op = Op::Write {
        lbn: 13,
        sectors: 2,
    };
    let mut inconsistent = 0;
    for k in 0..=steps_of(op) {
        let power = PowerSwitch::new();
        let (mut volume, _) = setup(&power, false);
        power.cut_after(k);
        run(&mut volume, op);
        let (members, _) = restart(volume);
        let members = members.into_iter().map(Option::unwrap).collect();
        let mut volume = Raid5Volume::with_layout(layout(), members).unwrap();
        inconsistent += volume.scrub(false).unwrap().mismatch_count;
    }
    assert!(inconsistent > 0, "no crash point left parity inconsistent");
}

// Proves a dirty record with a member missing is refused (md's dirty-degraded rule)
// unless forced, and that forcing reports the stripes it could not verify.
#[test]
fn dirty_degraded_assembly_is_refused_unless_forced() {
    let op = Op::Write {
        lbn: 13,
        sectors: 2,
    };
    let power = PowerSwitch::new();
    let (mut volume, _) = setup(&power, true);
    power.cut_after(3);
    run(&mut volume, op);
    let (mut members, record) = restart(volume);
    let stripe = 13 / (CHUNK * 3);
    let data_member = layout().data_member(stripe, 0);
    members[data_member.index()] = None;
    let mut record = record.unwrap();
    assert_refused_unforced(&mut members, &mut record, None);
    let (_, report) = Raid5Volume::assemble(layout(), members, record, true).unwrap();
    assert_eq!(report.unverified_stripes, vec![stripe]);
}

/// A copy of a memory store's contents (to assemble twice from one crash).
fn duplicate(store: &mut MemoryStore) -> MemoryStore {
    let mut buf = vec![0u8; store.capacity().0 as usize * SECTOR];
    store.read(Lbn(0), &mut buf).unwrap();
    let mut copy = MemoryStore::new(store.capacity()).unwrap();
    copy.write(Lbn(0), &buf).unwrap();
    copy
}

/// Asserts that assembling copies of `members` and `record` without force is refused
/// as dirty and degraded (the originals stay for a forced assembly).
fn assert_refused_unforced(
    members: &mut [Option<MemoryStore>],
    record: &mut MemoryStore,
    resume: Option<ResumeRebuild>,
) {
    let error = Raid5Volume::assemble_resuming(
        layout(),
        clone_slots(members),
        duplicate(record),
        false,
        resume,
    )
    .err()
    .expect("refused");
    assert!(
        error.to_string().contains("refusing to assemble"),
        "{error}"
    );
}

fn clone_slots(members: &mut [Option<MemoryStore>]) -> Vec<Option<MemoryStore>> {
    members
        .iter_mut()
        .map(|m| m.as_mut().map(duplicate))
        .collect()
}

/// A RAID-10 near-2 on 3 members with a record of one-chunk regions, on `power`,
/// holding random contents after a clean shutdown.
fn mirror_setup(power: &PowerSwitch) -> (Raid10Volume<Faulty>, Vec<u8>) {
    let stores = (0..3)
        .map(|_| FaultyStore::on_switch(memory(MEMBER_SECTORS), power))
        .collect();
    let record = FaultyStore::on_switch(memory(record_sectors(64).unwrap().0), power);
    let mut volume = Raid10Volume::new(Sectors(CHUNK), 2, stores)
        .unwrap()
        .with_intent(record, 1)
        .unwrap();
    let image = Rng::new(43).bytes(volume.capacity().0 as usize * SECTOR);
    volume.write(Lbn(0), &image).unwrap();
    volume.flush_and_clean().unwrap();
    (volume, image)
}

// Proves a mirror's write-intent recovery: after a crash at every step of a write
// spanning three chunks, assembly copies the first copy over the others in the dirty
// regions, so every copy agrees (scrub) and each sector is old or new.
#[test]
fn mirror_write_survives_crash_at_every_step() {
    let (lbn, sectors) = (6u64, 9u64);
    let new = new_data(sectors);
    let steps = {
        let power = PowerSwitch::new();
        let (mut volume, _) = mirror_setup(&power);
        let before = power.steps();
        volume.write(Lbn(lbn), &new).unwrap();
        power.steps() - before
    };
    let map = Raid10Map::new(3, Sectors(CHUNK), Sectors(MEMBER_SECTORS)).unwrap();
    for k in 0..=steps {
        let power = PowerSwitch::new();
        let (mut volume, old) = mirror_setup(&power);
        power.cut_after(k);
        let _ = volume.write(Lbn(lbn), &new);
        let (members, record) = volume.into_parts();
        let members = members
            .into_iter()
            .map(|m| Some(m.unwrap().into_inner().unwrap()))
            .collect();
        let record = record.unwrap().into_inner().unwrap();
        let (mut volume, report) = Raid10Volume::assemble(map.clone(), members, record).unwrap();
        if k >= 2 {
            assert_eq!(report.dirty_regions, vec![1, 2, 3], "cut after {k}");
        }
        let scrub = volume.scrub(false).unwrap();
        assert_eq!(scrub.mismatch_count, 0, "cut after {k}: {scrub:?}");
        check_old_or_new(&mut volume, &old, &new, lbn, || {
            format!("mirror cut after {k}")
        });
    }
}

/// A RAID-5 of erring members with a record of one-stripe regions, holding random
/// contents after a clean shutdown; returns it, the members' fault handles and the
/// volume image.
fn erring_setup() -> (Raid5Volume<ErringStore, Raid5Map>, Vec<Rc<Faults>>, Vec<u8>) {
    let (stores, faults) = erring(MEMBERS, MEMBER_SECTORS);
    let record = ErringStore::new(record_sectors(64).unwrap().0);
    let mut volume = Raid5Volume::with_layout(layout(), stores)
        .unwrap()
        .with_intent(record, 1)
        .unwrap();
    let image = fill(&mut volume);
    (volume, faults, image)
}

/// An erring RAID-5 whose write to stripe 0 was cut before its parity write (so the
/// stripe's region is dirty and its parity stale); returns it, the fault handles, the
/// parity member of stripe 0, and the volume's contents as read after the cut.
fn stripe_zero_left_dirty() -> (
    Raid5Volume<ErringStore, Raid5Map>,
    Vec<Rc<Faults>>,
    MemberIndex,
    Vec<u8>,
) {
    let (mut volume, faults, _) = erring_setup();
    let parity = layout().parity_member(0);
    faults[parity.index()]
        .next_write
        .set(Some(Injected::PowerCut));
    assert!(volume.write(Lbn(1), &new_data(2)).is_err());
    let mut expected = vec![0u8; volume.capacity().0 as usize * SECTOR];
    volume.read(Lbn(0), &mut expected).unwrap();
    (volume, faults, parity, expected)
}

/// Reads the volume sector by sector: each read must fail or return `expected`, except
/// in `either` (sectors a write that errored covers), where `old` is also right.
fn check_correct_or_error<S: BlockStore>(
    volume: &mut S,
    expected: &[u8],
    old: &[u8],
    either: std::ops::Range<usize>,
) {
    let mut sector = vec![0u8; SECTOR];
    for index in 0..expected.len() / SECTOR {
        if volume.read(Lbn(index as u64), &mut sector).is_err() {
            continue;
        }
        let at = index * SECTOR..(index + 1) * SECTOR;
        let right = sector[..] == expected[at.clone()]
            || (either.contains(&index) && sector[..] == old[at]);
        assert!(
            right,
            "sector {index} is neither what was written nor an error"
        );
    }
}

// Proves a member write that returns an I/O error fails that member and the write
// completes degraded: it succeeds, the member is out, and every read, then and after
// a clean shutdown and assembly without the member, returns what was written. (Before,
// the error was passed up with the member kept and parity stale until the next
// assembly's resync: defect "in-session window after a member write error".)
#[test]
fn a_member_write_error_fails_the_member_and_the_write_completes() {
    let (mut volume, faults, image) = erring_setup();
    let parity = layout().parity_member(0);
    // Two sectors inside stripe 0's first chunk: its member is written first, then
    // the parity member, whose write fails.
    faults[parity.index()].next_write.set(Some(Injected::Io));
    let new = new_data(2);
    volume
        .write(Lbn(1), &new)
        .expect("the write completes degraded");
    assert_eq!(volume.status().failed, vec![parity]);
    let mut expected = image.clone();
    expected[SECTOR..3 * SECTOR].copy_from_slice(&new);
    let mut now = vec![0u8; image.len()];
    volume.read(Lbn(0), &mut now).unwrap();
    assert!(now == expected, "reads return what was written");
    volume.flush_and_clean().unwrap();
    let (mut members, record) = volume.into_parts();
    members[parity.index()] = None; // the caller recorded the failure
    let (mut volume, report) =
        Raid5Volume::assemble(layout(), members, record.unwrap(), false).unwrap();
    assert!(report.dirty_regions.is_empty(), "{report:?}");
    volume.read(Lbn(0), &mut now).unwrap();
    assert!(now == expected, "after assembly too");
}

// Proves the window a member write error used to open is closed: right after the
// errored write another member fails, and every read returns what was written or an
// error, never data nobody wrote. (Before, the errored write left new data under old
// parity with the member kept, and the degraded read of the other member returned
// P_old xor D_new: defect "in-session window after a member write error".)
#[test]
fn a_second_failure_after_a_member_write_error_never_reads_wrong_data() {
    let (mut volume, faults, image) = erring_setup();
    let parity = layout().parity_member(0);
    faults[parity.index()].next_write.set(Some(Injected::Io));
    let new = new_data(2);
    let written = volume.write(Lbn(1), &new).is_ok();
    let (touched, _) = layout().locate(Lbn(1)).unwrap();
    let untouched = (0..MEMBERS as u32)
        .map(MemberIndex)
        .find(|&m| m != parity && m != touched)
        .expect("a data member the write did not touch");
    volume.fail_member(untouched).unwrap();
    let mut expected = image.clone();
    expected[SECTOR..3 * SECTOR].copy_from_slice(&new);
    // A write that returned an error may have left its sectors old or new.
    let either = if written { 0..0 } else { 1..3 };
    check_correct_or_error(&mut volume, &expected, &image, either);
}

// Proves the same window is closed for a mirror: after a member write error on a
// 3-way RAID-1 the write completes on the other copies, and with copy 0's member then
// failed the volume still reads what was written (before, the write stopped at the
// error and the kept member served the old data).
#[test]
fn a_mirror_member_write_error_fails_the_member_and_the_write_completes() {
    let (stores, faults) = erring(3, MEMBER_SECTORS);
    let mut volume = Raid1Volume::new(stores).unwrap();
    let image = Rng::new(44).bytes(volume.capacity().0 as usize * SECTOR);
    volume.write(Lbn(0), &image).unwrap();
    faults[1].next_write.set(Some(Injected::Io));
    let new = new_data(9);
    let written = volume.write(Lbn(6), &new).is_ok();
    volume.fail_member(MemberIndex(0)).unwrap();
    let mut expected = image.clone();
    expected[6 * SECTOR..15 * SECTOR].copy_from_slice(&new);
    check_correct_or_error(&mut volume, &expected, &image, 0..0);
    assert!(written, "the write completes on the live copies");
    assert_eq!(volume.status().failed, vec![MemberIndex(0), MemberIndex(1)]);
}

// Proves an error that does not fail a member (a power cut) is still passed up with
// no state change, and that its write's region stays marked until resynced: after the
// errored write, a clean flush and a restart, the region is dirty, resync makes
// parity agree, and a degraded read without a data member the write never touched
// returns that member's data (the write-intent path kept for such errors).
#[test]
fn an_error_passed_up_leaves_its_region_to_resync() {
    let (mut volume, faults, _) = erring_setup();
    let parity = layout().parity_member(0);
    let (written, _) = layout().locate(Lbn(1)).unwrap();
    faults[parity.index()]
        .next_write
        .set(Some(Injected::PowerCut));
    let result = volume.write(Lbn(1), &new_data(2));
    assert!(
        matches!(result, Err(StoreError::PowerCut { .. })),
        "{result:?}"
    );
    assert_eq!(volume.status().state, ArrayState::Healthy);
    volume.flush_and_clean().unwrap();
    let (members, record) = volume.into_parts();
    let (mut volume, report) =
        Raid5Volume::assemble(layout(), members, record.unwrap(), false).unwrap();
    assert_eq!(report.dirty_regions, vec![0], "the errored write's region");
    assert_eq!(volume.scrub(false).unwrap().mismatch_count, 0);
    let untouched = (0..MEMBERS as u32)
        .map(MemberIndex)
        .find(|&m| m != parity && m != written)
        .expect("a data member the write did not touch");
    let mut healthy = vec![0u8; volume.capacity().0 as usize * SECTOR];
    volume.read(Lbn(0), &mut healthy).unwrap();
    volume.fail_member(untouched).unwrap();
    let mut degraded = vec![0u8; healthy.len()];
    volume.read(Lbn(0), &mut degraded).unwrap();
    assert!(
        healthy == degraded,
        "a degraded read without member {untouched:?} agrees"
    );
}

// Proves resync counts only stripes whose parity it wrote: when the parity member's
// write fails during the resync at assembly (gone, or an I/O error), the member is
// failed, the stripe is not counted, and reads return the data. (Before, a parity
// member gone here was counted as resynced, and an I/O error failed the assembly:
// defect "resync_stripe counts a stripe whose parity write failed".)
#[test]
fn resync_counts_only_stripes_whose_parity_was_written() {
    for injected in [Injected::Gone, Injected::Io] {
        let (volume, faults, parity, expected) = stripe_zero_left_dirty();
        let (members, record) = volume.into_parts();
        faults[parity.index()].next_write.set(Some(injected));
        let (mut volume, report) = Raid5Volume::assemble(layout(), members, record.unwrap(), false)
            .unwrap_or_else(|e| panic!("{injected:?}: {e}"));
        assert_eq!(report.dirty_regions, vec![0], "{injected:?}");
        assert_eq!(
            report.units_resynced, 0,
            "{injected:?}: nothing was written"
        );
        assert_eq!(volume.status().failed, vec![parity], "{injected:?}");
        let mut now = vec![0u8; expected.len()];
        volume.read(Lbn(0), &mut now).unwrap();
        assert!(now == expected, "{injected:?}: the data as it was");
    }
}

// Proves a mirror's resync counts only units it wrote to every live copy: a copy whose
// write fails during the resync is failed and its unit not counted. (Before, every
// unit of a dirty region was counted: the same defect as RAID-5's resync count.)
#[test]
fn mirror_resync_counts_only_units_it_wrote() {
    let (stores, faults) = erring(2, MEMBER_SECTORS);
    let record = ErringStore::new(record_sectors(64).unwrap().0);
    let map = MirrorMap::new(2, Sectors(MEMBER_SECTORS)).unwrap();
    let mut volume = Raid1Volume::with_map(map.clone(), stores)
        .unwrap()
        .with_intent(record, 1)
        .unwrap();
    faults[1].next_write.set(Some(Injected::PowerCut));
    assert!(volume.write(Lbn(3), &new_data(4)).is_err());
    let (members, record) = volume.into_parts();
    faults[1].next_write.set(Some(Injected::Gone));
    let (volume, report) = Raid1Volume::assemble(map, members, record.unwrap()).unwrap();
    assert_eq!(report.dirty_regions, vec![0]);
    assert_eq!(report.units_resynced, 0, "copy 1 was never written");
    assert_eq!(volume.status().failed, vec![MemberIndex(1)]);
}

// Proves a dirty record while a member is being rebuilt is refused like dirty and
// degraded (unless forced), since above the rebuild cursor that member holds nothing
// and a dirty stripe's parity there cannot be verified; forcing lists the stripe.
// (Before, the check counted only failed members, so the array assembled without
// force: defect "dirty-degraded refusal ignores a member under rebuild".)
#[test]
fn dirty_assembly_while_rebuilding_is_refused_unless_forced() {
    let power = PowerSwitch::new();
    let (mut volume, _) = setup(&power, true);
    let lbn = 37; // stripe 3, above the cursor the rebuild reaches
    let stripe = lbn / (CHUNK * 3);
    let (member, _) = layout().locate(Lbn(lbn)).unwrap();
    volume.fail_member(member).unwrap();
    let fresh = FaultyStore::on_switch(memory(MEMBER_SECTORS), &power);
    volume.replace_member(member, fresh).unwrap();
    assert_eq!(volume.rebuild_step(2).unwrap(), 2);
    // Stopped without a flush: the write's region is still marked.
    volume.write(Lbn(lbn), &new_data(2)).unwrap();
    let (mut members, record) = restart(volume);
    let resume = Some(ResumeRebuild { member, cursor: 2 });
    let mut record = record.unwrap();
    assert_refused_unforced(&mut members, &mut record, resume);
    let (_, report) =
        Raid5Volume::assemble_resuming(layout(), members, record, true, resume).expect("forced");
    assert_eq!(report.unverified_stripes, vec![stripe]);
}

// Proves a read error met while resyncing a dirty stripe at assembly no longer keeps
// the array offline when forced: the unreadable data member is failed, the array
// assembles degraded, the stripe (whose data on that member now rests on parity that
// may be stale) is reported unverified, and every other stripe reads as before.
// Without force the assembly refuses, as for any dirty stripe with a data member out.
// (Before, the read error was returned either way, so no assembly could open the
// array: noticed in the review of the member-error change, 2026-11-28.)
#[test]
fn a_read_error_in_a_dirty_stripe_fails_the_member_when_forced() {
    for force in [false, true] {
        let (volume, faults, parity, expected) = stripe_zero_left_dirty();
        let (written, _) = layout().locate(Lbn(1)).unwrap();
        let unreadable = (0..MEMBERS as u32)
            .map(MemberIndex)
            .find(|&m| m != written && m != parity)
            .expect("a third member");
        let unit = layout().unit(0, unreadable);
        faults[unreadable.index()]
            .unreadable
            .borrow_mut()
            .insert(unit.start.0);
        let (members, record) = volume.into_parts();
        let assembled = Raid5Volume::assemble(layout(), members, record.unwrap(), force);
        let Ok((mut volume, report)) = assembled else {
            assert!(!force, "forced, the assembly refused");
            continue;
        };
        assert!(
            force,
            "not forced, a dirty stripe with a data member out assembled"
        );
        assert_eq!(report.unverified_stripes, vec![0]);
        assert_eq!(volume.status().failed, vec![unreadable]);
        let rest = layout().stripe_start(1).0 as usize * SECTOR;
        let mut now = vec![0u8; expected.len() - rest];
        volume.read(Lbn((rest / SECTOR) as u64), &mut now).unwrap();
        assert!(now == expected[rest..], "the other stripes read as before");
    }
}
