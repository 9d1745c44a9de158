//! Shared helpers: a seeded generator, stores (one with injectable I/O errors), and
//! the `Array` view the model test drives every level through.

use spinstack_sim::rng::Xoshiro256StarStar;
use spinstack_sim::units::{Lbn, Sectors, SECTOR_BYTES};
use spinstack_store::{BlockStore, MemoryStore, StoreError};
use spinstack_volume::bytes::{
    CopyLayout, DmaAlignedBuffer, MirrorVolume, Raid0Volume, Raid5Volume, ScrubReport, VolumeStatus,
};
use spinstack_volume::map::{MemberIndex, ParityLayout};
use std::cell::{Cell, RefCell};
use std::collections::BTreeSet;
use std::rc::Rc;

pub const SECTOR: usize = SECTOR_BYTES as usize;

pub struct Rng(pub Xoshiro256StarStar);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(Xoshiro256StarStar::seed_from_u64(seed))
    }
    /// Uniform in `low..=high`.
    pub fn range(&mut self, low: u64, high: u64) -> u64 {
        low + self.0.below(high - low + 1)
    }
    pub fn below(&mut self, bound: u64) -> u64 {
        self.0.below(bound)
    }
    pub fn fill(&mut self, buf: &mut [u8]) {
        for chunk in buf.chunks_mut(8) {
            let word = self.0.next_u64().to_le_bytes();
            chunk.copy_from_slice(&word[..chunk.len()]);
        }
    }
    pub fn bytes(&mut self, len: usize) -> Vec<u8> {
        let mut buf = vec![0u8; len];
        self.fill(&mut buf);
        buf
    }
}

pub fn memory(sectors: u64) -> MemoryStore {
    MemoryStore::new(Sectors(sectors)).expect("a valid test store size")
}

pub fn memories(count: usize, sectors: u64) -> Vec<MemoryStore> {
    (0..count).map(|_| memory(sectors)).collect()
}

/// An environment variable as a number, or `default`.
pub fn env_u64(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// What the model test needs of a volume beyond `BlockStore`.
pub trait Array: BlockStore {
    fn members(&self) -> u32;
    /// Whether the level survives one member failure.
    fn redundant(&self) -> bool;
    fn fail(&mut self, member: u32);
    /// Puts a fresh store (random garbage) in place of `member` and starts rebuilding.
    fn replace(&mut self, member: u32, rng: &mut Rng);
    /// Rebuilds up to `units`; returns how many.
    fn rebuild(&mut self, units: u64) -> u64;
    fn scrub(&mut self) -> ScrubReport;
    fn status(&self) -> VolumeStatus;
}

/// A replacement member of `sectors` holding garbage in its first sectors, so a
/// rebuild that skipped a sector would be caught.
fn garbage_store(sectors: u64, rng: &mut Rng) -> MemoryStore {
    let mut store = memory(sectors);
    let garbage = rng.bytes(SECTOR * sectors.min(64) as usize);
    store.write(Lbn(0), &garbage).expect("in range");
    store
}

impl Array for Raid0Volume<MemoryStore> {
    fn members(&self) -> u32 {
        self.map().members()
    }
    fn redundant(&self) -> bool {
        false
    }
    fn fail(&mut self, member: u32) {
        self.fail_member(MemberIndex(member))
            .expect("member exists");
    }
    fn replace(&mut self, _: u32, _: &mut Rng) {}
    fn rebuild(&mut self, _: u64) -> u64 {
        0
    }
    fn scrub(&mut self) -> ScrubReport {
        ScrubReport::default()
    }
    fn status(&self) -> VolumeStatus {
        Raid0Volume::status(self)
    }
}

impl<M: CopyLayout> Array for MirrorVolume<MemoryStore, M> {
    fn members(&self) -> u32 {
        self.map().members()
    }
    fn redundant(&self) -> bool {
        true
    }
    fn fail(&mut self, member: u32) {
        self.fail_member(MemberIndex(member))
            .expect("member exists");
    }
    fn replace(&mut self, member: u32, rng: &mut Rng) {
        let store = garbage_store(self.map().member_used().0, rng);
        self.replace_member(MemberIndex(member), store)
            .expect("replace");
    }
    fn rebuild(&mut self, units: u64) -> u64 {
        self.rebuild_step(units).expect("rebuild")
    }
    fn scrub(&mut self) -> ScrubReport {
        MirrorVolume::scrub(self, false).expect("scrub")
    }
    fn status(&self) -> VolumeStatus {
        MirrorVolume::status(self)
    }
}

/// Sectors `member` needs under `layout` (its last unit's end).
pub fn member_sectors<L: ParityLayout>(layout: &L, member: u32) -> u64 {
    let unit = layout.unit(layout.stripes() - 1, MemberIndex(member));
    unit.start.0 + unit.allocated.0
}

impl<L: ParityLayout> Array for Raid5Volume<MemoryStore, L> {
    fn members(&self) -> u32 {
        self.layout().members()
    }
    fn redundant(&self) -> bool {
        true
    }
    fn fail(&mut self, member: u32) {
        self.fail_member(MemberIndex(member))
            .expect("member exists");
    }
    fn replace(&mut self, member: u32, rng: &mut Rng) {
        let store = garbage_store(member_sectors(self.layout(), member), rng);
        self.replace_member(MemberIndex(member), store)
            .expect("replace");
    }
    fn rebuild(&mut self, units: u64) -> u64 {
        self.rebuild_step(units).expect("rebuild")
    }
    fn scrub(&mut self) -> ScrubReport {
        Raid5Volume::scrub(self, false).expect("scrub")
    }
    fn status(&self) -> VolumeStatus {
        Raid5Volume::status(self)
    }
}

impl<A: Array> Array for DmaAlignedBuffer<A> {
    fn members(&self) -> u32 {
        self.inner().members()
    }
    fn redundant(&self) -> bool {
        self.inner().redundant()
    }
    fn fail(&mut self, member: u32) {
        self.inner_mut().fail(member)
    }
    fn replace(&mut self, member: u32, rng: &mut Rng) {
        self.inner_mut().replace(member, rng)
    }
    fn rebuild(&mut self, units: u64) -> u64 {
        self.inner_mut().rebuild(units)
    }
    fn scrub(&mut self) -> ScrubReport {
        // Dirty blocks first, so the members hold everything the scrub should check.
        self.flush().expect("flush");
        self.inner_mut().scrub()
    }
    fn status(&self) -> VolumeStatus {
        self.inner().status()
    }
}

/// An error [`ErringStore`] returns instead of a write or trim.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Injected {
    /// An ordinary I/O error (`IoAt`: EIO, ENOSPC on a sparse member file).
    Io,
    /// A power cut (`PowerCut`), which is not the member's fault.
    PowerCut,
    /// The member is gone (`Failed`).
    Gone,
}

impl Injected {
    fn error(self, operation: &'static str, lbn: Lbn, sectors: Sectors) -> StoreError {
        match self {
            Injected::Io => StoreError::IoAt {
                operation,
                path: "erring member".into(),
                lbn,
                sectors,
                source: std::io::Error::other("injected I/O error"),
            },
            Injected::PowerCut => StoreError::PowerCut { operation },
            Injected::Gone => StoreError::Failed { operation },
        }
    }
}

/// The faults of an [`ErringStore`], shared with the test that arms them.
#[derive(Debug, Default)]
pub struct Faults {
    /// Sectors whose reads fail with `IoAt` until written (a drive reallocates an
    /// unreadable sector when it is written).
    pub unreadable: RefCell<BTreeSet<u64>>,
    /// What the next write or trim returns instead of being applied (then disarmed).
    pub next_write: Cell<Option<Injected>>,
    /// Every write and trim fails with `IoAt` (a drive that can no longer write).
    pub writes_fail: Cell<bool>,
    /// What the next flush returns instead of flushing (then disarmed).
    pub next_flush: Cell<Option<Injected>>,
}

/// A member with injectable errors that are not a failed device (see [`Faults`]).
pub struct ErringStore {
    inner: MemoryStore,
    pub faults: Rc<Faults>,
}

impl ErringStore {
    pub fn new(sectors: u64) -> ErringStore {
        ErringStore {
            inner: memory(sectors),
            faults: Rc::default(),
        }
    }

    /// Refuses a write or trim of `sectors` from `lbn` if a fault is armed, else
    /// marks the sectors readable again.
    fn admit_write(
        &mut self,
        operation: &'static str,
        lbn: Lbn,
        sectors: Sectors,
    ) -> Result<(), StoreError> {
        let injected = match self.faults.next_write.take() {
            Some(injected) => Some(injected),
            None => self.faults.writes_fail.get().then_some(Injected::Io),
        };
        if let Some(injected) = injected {
            return Err(injected.error(operation, lbn, sectors));
        }
        let mut unreadable = self.faults.unreadable.borrow_mut();
        for sector in lbn.0..lbn.0 + sectors.0 {
            unreadable.remove(&sector);
        }
        Ok(())
    }
}

impl BlockStore for ErringStore {
    fn capacity(&self) -> Sectors {
        self.inner.capacity()
    }
    fn read(&mut self, lbn: Lbn, buf: &mut [u8]) -> Result<(), StoreError> {
        let sectors = Sectors((buf.len() / SECTOR) as u64);
        let end = lbn.0 + sectors.0;
        if self
            .faults
            .unreadable
            .borrow()
            .range(lbn.0..end)
            .next()
            .is_some()
        {
            return Err(Injected::Io.error("read", lbn, sectors));
        }
        self.inner.read(lbn, buf)
    }
    fn write(&mut self, lbn: Lbn, buf: &[u8]) -> Result<(), StoreError> {
        self.admit_write("write", lbn, Sectors((buf.len() / SECTOR) as u64))?;
        self.inner.write(lbn, buf)
    }
    fn flush(&mut self) -> Result<(), StoreError> {
        if let Some(injected) = self.faults.next_flush.take() {
            return Err(injected.error("flush", Lbn(0), Sectors(0)));
        }
        self.inner.flush()
    }
    fn trim(&mut self, lbn: Lbn, sectors: Sectors) -> Result<(), StoreError> {
        self.admit_write("trim", lbn, sectors)?;
        self.inner.trim(lbn, sectors)
    }
}

/// `count` erring stores of `sectors` each, and their fault handles.
pub fn erring(count: usize, sectors: u64) -> (Vec<ErringStore>, Vec<Rc<Faults>>) {
    let stores: Vec<ErringStore> = (0..count).map(|_| ErringStore::new(sectors)).collect();
    let faults = stores.iter().map(|s| s.faults.clone()).collect();
    (stores, faults)
}
