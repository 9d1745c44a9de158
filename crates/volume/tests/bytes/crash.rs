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

use crate::common::{memory, Rng, SECTOR};
use spinstack_sim::units::{Lbn, Sectors};
use spinstack_store::intent::record_sectors;
use spinstack_store::{BlockStore, FaultyStore, MemoryStore, PowerSwitch, StoreError};
use spinstack_volume::bytes::{Raid10Volume, Raid5Volume};
use spinstack_volume::map::{MemberIndex, ParityLayout, Raid10Map, Raid5Map};

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
    let error = Raid5Volume::assemble(
        layout(),
        clone_slots(&mut members),
        duplicate(&mut record),
        false,
    )
    .err()
    .expect("refused");
    assert!(
        error.to_string().contains("refusing to assemble"),
        "{error}"
    );
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

/// A member whose next write fails with an ordinary I/O error (EIO, ENOSPC on a
/// sparse member file), not a member failure, and which works again afterwards. The
/// test holds a handle to `fail_next_write` to arm it.
struct Flaky {
    inner: MemoryStore,
    fail_next_write: std::rc::Rc<std::cell::Cell<bool>>,
}

impl Flaky {
    fn new(sectors: u64) -> Flaky {
        Flaky {
            inner: memory(sectors),
            fail_next_write: Default::default(),
        }
    }
}

impl BlockStore for Flaky {
    fn capacity(&self) -> Sectors {
        self.inner.capacity()
    }
    fn read(&mut self, lbn: Lbn, buf: &mut [u8]) -> Result<(), StoreError> {
        self.inner.read(lbn, buf)
    }
    fn write(&mut self, lbn: Lbn, buf: &[u8]) -> Result<(), StoreError> {
        if self.fail_next_write.replace(false) {
            return Err(StoreError::IoAt {
                operation: "write",
                path: "flaky".into(),
                lbn,
                sectors: Sectors((buf.len() / SECTOR) as u64),
                source: std::io::Error::other("injected I/O error"),
            });
        }
        self.inner.write(lbn, buf)
    }
    fn flush(&mut self) -> Result<(), StoreError> {
        self.inner.flush()
    }
    fn trim(&mut self, lbn: Lbn, sectors: Sectors) -> Result<(), StoreError> {
        self.inner.trim(lbn, sectors)
    }
}

// Proves a write that returns an I/O error part-way through a stripe leaves its
// region marked until resynced: after the failed write, a clean flush and a restart,
// the region is dirty, resync makes parity agree, and a degraded read without a data
// member the write never touched returns that member's data. (Before, the region's
// bit was cleaned at the next flush although parity was stale, and that degraded
// read returned P_old xor D_new: data the client never wrote. Found by this
// sitting's review of the RAID-5 write path.)
#[test]
fn a_write_that_errs_midway_leaves_its_region_to_resync() {
    let stores: Vec<Flaky> = (0..MEMBERS).map(|_| Flaky::new(MEMBER_SECTORS)).collect();
    let parity = layout().parity_member(0);
    let arm_parity = stores[parity.index()].fail_next_write.clone();
    let record = Flaky::new(record_sectors(64).unwrap().0);
    let mut volume = Raid5Volume::with_layout(layout(), stores)
        .unwrap()
        .with_intent(record, 1)
        .unwrap();
    let image = fill(&mut volume);
    // Two sectors inside stripe 0's first chunk: its member is written first, then
    // the parity member, whose write fails.
    let (written, _) = layout().locate(Lbn(1)).unwrap();
    arm_parity.set(true);
    assert!(
        volume.write(Lbn(1), &new_data(2)).is_err(),
        "the parity write fails"
    );
    volume.flush_and_clean().unwrap();
    let (members, record) = volume.into_parts();
    let (mut volume, report) =
        Raid5Volume::assemble(layout(), members, record.unwrap(), false).unwrap();
    assert_eq!(
        report.dirty_regions,
        vec![0],
        "the failed write's region is dirty"
    );
    assert_eq!(volume.scrub(false).unwrap().mismatch_count, 0);
    let untouched = (0..MEMBERS as u32)
        .map(MemberIndex)
        .find(|&m| m != parity && m != written)
        .expect("a data member the write did not touch");
    let mut healthy = vec![0u8; image.len()];
    volume.read(Lbn(0), &mut healthy).unwrap();
    volume.fail_member(untouched).unwrap();
    let mut degraded = vec![0u8; image.len()];
    volume.read(Lbn(0), &mut degraded).unwrap();
    assert!(
        healthy == degraded,
        "a degraded read without member {untouched:?} agrees"
    );
}
