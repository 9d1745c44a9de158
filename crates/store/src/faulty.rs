//! [`FaultyStore`]: fault and crash injection for tests of the layers above stores.
//!
//! Two kinds of fault:
//! - **A failed device**: [`FaultyStore::fail`] makes every later operation on that one
//!   store return [`StoreError::Failed`] (a RAID member dies; the others go on).
//! - **A power cut**: a [`PowerSwitch`], shared by every store of a machine, counts the
//!   *steps* they take (each `write`, `trim` and `flush` call is one step: the points
//!   a crash can fall between). After [`PowerSwitch::cut_after`]`(n)`, the next `n`
//!   steps are applied and the one after is not: it returns [`StoreError::PowerCut`],
//!   and so does every later operation of every store on the switch. A test cuts the
//!   power at every `n` in turn to crash at every point of a multi-store sequence.
//!
//! [`FaultyStore::into_inner`] is the restart: it hands back the store as the crash
//! left it. By default a store is *write-through*: every applied write is durable.
//! [`FaultyStore::with_volatile_cache`] models a drive with a write-back cache
//! instead: on a power cut, every write and trim since that store's last successful
//! flush is lost (all of them, the harshest case; no reordering between flushes).
//! It keeps a copy of the bytes each unflushed write or trim replaced, so it is for
//! test-sized stores.
//!
//! Counters (`writes`, `trims`, `flushes`) count only applied calls.

use crate::store::{check_range, BlockStore, StoreError};
use spinstack_sim::units::{Lbn, Sectors};
use std::sync::{Arc, Mutex, MutexGuard};

/// The power supply of one or more [`FaultyStore`]s. Clones share the same supply.
#[derive(Clone, Debug, Default)]
pub struct PowerSwitch {
    state: Arc<Mutex<PowerState>>,
}

#[derive(Debug, Default)]
struct PowerState {
    /// Steps applied so far by every store on the switch.
    steps: u64,
    /// Steps allowed in total before the power goes; `None`: no cut planned.
    cut_at_steps: Option<u64>,
    /// The power is off.
    cut: bool,
}

impl PowerSwitch {
    pub fn new() -> PowerSwitch {
        PowerSwitch::default()
    }

    fn lock(&self) -> MutexGuard<'_, PowerState> {
        // A test that panicked while holding the lock leaves consistent counters.
        self.state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Steps (writes, trims, flushes) applied by every store on this switch.
    pub fn steps(&self) -> u64 {
        self.lock().steps
    }

    /// Lets `n_steps` more steps through (counted from now, over every store on the
    /// switch), then cuts the power at the next one.
    pub fn cut_after(&self, n_steps: u64) {
        let mut state = self.lock();
        state.cut_at_steps = Some(state.steps.saturating_add(n_steps));
    }

    /// Cuts the power now: every later operation returns [`StoreError::PowerCut`].
    pub fn cut_now(&self) {
        self.lock().cut = true;
    }

    /// Whether the power is off.
    pub fn is_cut(&self) -> bool {
        self.lock().cut
    }

    /// Refuses any operation once the power is off.
    fn check_on(&self, operation: &'static str) -> Result<(), StoreError> {
        if self.lock().cut {
            return Err(StoreError::PowerCut { operation });
        }
        Ok(())
    }

    /// Admits one step, or cuts the power if the planned cut is due.
    fn admit_step(&self, operation: &'static str) -> Result<(), StoreError> {
        let mut state = self.lock();
        if !state.cut && state.cut_at_steps.is_some_and(|at| state.steps >= at) {
            state.cut = true;
        }
        if state.cut {
            return Err(StoreError::PowerCut { operation });
        }
        state.steps += 1;
        Ok(())
    }
}

/// A write or trim not yet flushed, with the bytes it replaced, so that a power cut
/// can undo it (volatile-cache mode only).
#[derive(Debug)]
struct Unflushed {
    lbn: Lbn,
    old_bytes: Vec<u8>,
}

/// A store wrapper that can fail or lose power on command; see the module doc.
#[derive(Debug)]
pub struct FaultyStore<S: BlockStore> {
    inner: S,
    power: PowerSwitch,
    failed: bool,
    volatile_cache: bool,
    /// In volatile-cache mode, the writes and trims since the last flush, oldest first.
    unflushed: Vec<Unflushed>,
    writes: u64,
    trims: u64,
    flushes: u64,
}

impl<S: BlockStore> FaultyStore<S> {
    /// A write-through store on a power switch of its own.
    pub fn new(inner: S) -> FaultyStore<S> {
        FaultyStore::on_switch(inner, &PowerSwitch::new())
    }

    /// A write-through store powered by `power` (shared with other stores).
    pub fn on_switch(inner: S, power: &PowerSwitch) -> FaultyStore<S> {
        FaultyStore {
            inner,
            power: power.clone(),
            failed: false,
            volatile_cache: false,
            unflushed: Vec::new(),
            writes: 0,
            trims: 0,
            flushes: 0,
        }
    }

    /// Models a write-back cache: a power cut loses every write and trim since this
    /// store's last successful flush.
    pub fn with_volatile_cache(mut self) -> FaultyStore<S> {
        self.volatile_cache = true;
        self
    }

    /// The switch this store runs on (a clone sharing its state).
    pub fn power(&self) -> PowerSwitch {
        self.power.clone()
    }

    /// Cuts the power after `n_steps` more steps; see [`PowerSwitch::cut_after`].
    pub fn cut_power_after(&self, n_steps: u64) {
        self.power.cut_after(n_steps);
    }

    /// From now on every operation on this store returns [`StoreError::Failed`].
    pub fn fail(&mut self) {
        self.failed = true;
    }

    pub fn is_failed(&self) -> bool {
        self.failed
    }

    /// `write` calls applied.
    pub fn writes(&self) -> u64 {
        self.writes
    }

    /// `trim` calls applied.
    pub fn trims(&self) -> u64 {
        self.trims
    }

    /// `flush` calls applied.
    pub fn flushes(&self) -> u64 {
        self.flushes
    }

    /// Restarts: the store as the crash left it. If the power was cut and the store
    /// has a volatile cache, the writes and trims since its last flush are undone
    /// (newest first). Without a power cut this is a clean shutdown: nothing is lost.
    pub fn into_inner(mut self) -> Result<S, StoreError> {
        if self.power.is_cut() {
            while let Some(undo) = self.unflushed.pop() {
                self.inner.write(undo.lbn, &undo.old_bytes)?;
            }
        }
        Ok(self.inner)
    }

    fn check_usable(&self, operation: &'static str) -> Result<(), StoreError> {
        if self.failed {
            return Err(StoreError::Failed { operation });
        }
        self.power.check_on(operation)
    }

    /// Before a write or trim: admits the step and, with a volatile cache, saves the
    /// bytes about to be replaced.
    fn before_change(
        &mut self,
        operation: &'static str,
        lbn: Lbn,
        sectors: Sectors,
    ) -> Result<Option<Unflushed>, StoreError> {
        self.check_usable(operation)?;
        // Bad arguments are the inner store's to refuse; check first so a refused call
        // neither takes a step nor trips the power.
        check_range(self.inner.capacity(), lbn, sectors)?;
        self.power.admit_step(operation)?;
        if !self.volatile_cache {
            return Ok(None);
        }
        let mut old_bytes = vec![0u8; sectors.bytes() as usize];
        self.inner.read(lbn, &mut old_bytes)?;
        Ok(Some(Unflushed { lbn, old_bytes }))
    }
}

impl<S: BlockStore> BlockStore for FaultyStore<S> {
    fn capacity(&self) -> Sectors {
        self.inner.capacity()
    }

    fn read(&mut self, lbn: Lbn, buf: &mut [u8]) -> Result<(), StoreError> {
        self.check_usable("read")?;
        self.inner.read(lbn, buf)
    }

    fn write(&mut self, lbn: Lbn, buf: &[u8]) -> Result<(), StoreError> {
        let sectors = crate::store::buffer_sectors(buf.len())?;
        let undo = self.before_change("write", lbn, sectors)?;
        self.inner.write(lbn, buf)?;
        self.unflushed.extend(undo);
        self.writes += 1;
        Ok(())
    }

    fn flush(&mut self) -> Result<(), StoreError> {
        self.check_usable("flush")?;
        self.power.admit_step("flush")?;
        self.inner.flush()?;
        self.unflushed.clear();
        self.flushes += 1;
        Ok(())
    }

    fn trim(&mut self, lbn: Lbn, sectors: Sectors) -> Result<(), StoreError> {
        let undo = self.before_change("trim", lbn, sectors)?;
        self.inner.trim(lbn, sectors)?;
        self.unflushed.extend(undo);
        self.trims += 1;
        Ok(())
    }
}
