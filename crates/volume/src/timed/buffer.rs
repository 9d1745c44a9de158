//! The DMA-aligned buffer (DAB) in simulated time: a volume over one volume (a
//! RAID, or a drive behind its host path) that keeps an LRU of `blocks` buffer
//! blocks of `block` sectors, each holding the block-aligned range starting at a
//! multiple of `block` (the DAB paper's 256 sectors = 128 KB, the largest IDE DMA
//! transfer), so that a missing block costs one device I/O of the largest size.
//!
//! **The paper's four cases (§4.2)**, for a request within two blocks: (1) first
//! and last sector buffered: a hit, served from memory; (2) first buffered, last
//! not: fetch the aligned block holding the latter part; (3) last buffered, first
//! not: fetch the one holding the former part; (4) neither: fetch the aligned
//! block(s) holding it. Generally: every touched block not buffered is fetched
//! whole with one read. A request touching more than half the buffer bypasses it.
//!
//! **Writes.** Write-through: the write goes below (buffered copies are updated in
//! memory). Write-back: buffered blocks are updated in place and marked dirty; a
//! missed block is fetched first (a write covering a whole block needs no fetch);
//! the write completes after the copy. Dirty blocks go back whole when evicted and
//! on flush (then the flush goes below). A force-unit-access write is written
//! through. A trim goes below and drops the buffered blocks it covers whole.
//!
//! **Costs.** Serving a request from memory costs the host a copy
//! ([`HostCost::windows2000_buffered`] by default); device I/O costs are paid by
//! the layer below, which talks to drives.
//!
//! **Block states:** `Empty` → `Fetching` → `Valid` (clean or dirty); a dirty
//! block evicted goes `WritingBack` → `Fetching` (its new block); a flush takes
//! dirty blocks `WritingBack` → `Valid` clean. Requests that find every block busy
//! wait, in order, for one to become free. Memory is bounded by blocks × block.

use super::host::{HostCost, HostCpu};
use super::io::{MemberIo, MemberStats};
use super::route_control;
pub use crate::dab::{DabCase, DabCounters, WritePolicy};
use crate::map::MemberIndex;
use spinstack_sim::device::{BlockDevice, Control, ControlError, DeviceError};
use spinstack_sim::driver::Issue;
use spinstack_sim::members::{MemberLimits, ParentId};
use spinstack_sim::request::{BlockRequest, Completion, Operation, Status};
use spinstack_sim::units::{Lbn, Nanoseconds, Sectors};
use std::collections::{HashMap, VecDeque};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum SlotState {
    Empty,
    Fetching,
    Valid,
    /// Writing the dirty block back; then fetch `then_fetch`, if any.
    WritingBack {
        then_fetch: Option<u64>,
    },
}

#[derive(Clone, Debug)]
struct Slot {
    block: Option<u64>,
    state: SlotState,
    dirty: bool,
    last_use: u64,
    /// Requests waiting for this slot's block to arrive.
    waiters: Vec<ParentId>,
}

#[derive(Clone, Copy, Debug)]
enum Tag {
    Fetch {
        slot: u32,
    },
    WriteBack {
        slot: u32,
    },
    /// A request (or part) sent straight below.
    Through,
    /// The flush below, after a flush's write-backs.
    FlushBelow,
}

#[derive(Clone, Copy, Debug, Default)]
struct ParentState {
    /// Blocks (or, for a flush, write-backs) the request still waits for.
    pending: u32,
    /// A flush still writing dirty blocks back.
    flushing: bool,
    /// A buffered write: the blocks it waits for become dirty when they arrive.
    writes: bool,
    /// It found every slot busy and waits for one.
    starved: bool,
    status: Status,
}

/// See the module documentation.
pub struct DmaBuffer<D: BlockDevice> {
    io: MemberIo<D, Tag, ParentState>,
    block: Sectors,
    policy: WritePolicy,
    slots: Vec<Slot>,
    index: HashMap<u64, u32>,
    cpu: HostCpu,
    clock: u64,
    counters: DabCounters,
    /// Requests waiting for a free slot, oldest first.
    starved: VecDeque<ParentId>,
}

impl<D: BlockDevice> DmaBuffer<D> {
    /// A buffer of `blocks` blocks of `block` sectors over `below`; a memory copy
    /// costs `copy`.
    pub fn new(
        below: D,
        block: Sectors,
        blocks: u32,
        policy: WritePolicy,
        copy: HostCost,
    ) -> DmaBuffer<D> {
        assert!(
            block.0 > 0 && blocks > 0,
            "a buffer has blocks of some size"
        );
        let slot = Slot {
            block: None,
            state: SlotState::Empty,
            dirty: false,
            last_use: 0,
            waiters: Vec::new(),
        };
        DmaBuffer {
            io: MemberIo::new(
                vec![below],
                vec![None],
                HostCost::NONE,
                None,
                MemberLimits::default(),
            ),
            block,
            policy,
            slots: vec![slot; blocks as usize],
            index: HashMap::new(),
            cpu: HostCpu::new(copy),
            clock: 0,
            counters: DabCounters::default(),
            starved: VecDeque::new(),
        }
    }

    pub fn counters(&self) -> DabCounters {
        self.counters
    }
    /// The volume below.
    pub fn below(&self) -> &D {
        &self.io.members.members()[0]
    }
    /// Requests sent below (block fetches, write-backs, pass-through).
    pub fn stats(&self) -> Vec<MemberStats> {
        self.io.stats()
    }
    pub fn host_busy(&self) -> Nanoseconds {
        self.cpu.busy()
    }

    fn blocks_of(&self, request: &BlockRequest) -> std::ops::RangeInclusive<u64> {
        request.lbn.0 / self.block.0..=(request.end().0 - 1) / self.block.0
    }

    fn send(&mut self, parent: ParentId, issue: Issue, tag: Tag) {
        // One member; children were counted at submit.
        let _ = self.io.send(parent, MemberIndex(0), issue, tag);
    }

    fn fetch(&mut self, parent: ParentId, slot: u32, block: u64) {
        self.slots[slot as usize].state = SlotState::Fetching;
        self.counters.block_fetches += 1;
        let issue = Issue::new(
            Operation::Read,
            Lbn(block * self.block.0),
            self.block_sectors(block),
        );
        self.send(parent, issue, Tag::Fetch { slot });
    }

    fn write_back(&mut self, parent: ParentId, slot: u32, then_fetch: Option<u64>) {
        let block = self.slots[slot as usize]
            .block
            .expect("a dirty slot holds a block");
        self.slots[slot as usize].state = SlotState::WritingBack { then_fetch };
        self.slots[slot as usize].dirty = false;
        self.counters.write_backs += 1;
        let issue = Issue::new(
            Operation::Write,
            Lbn(block * self.block.0),
            self.block_sectors(block),
        );
        self.send(parent, issue, Tag::WriteBack { slot });
    }

    /// The last block may be shorter than `block` at the end of the volume.
    fn block_sectors(&self, block: u64) -> Sectors {
        let start = block * self.block.0;
        Sectors(self.block.0.min(self.capacity().0 - start))
    }

    /// A free slot for `block`: the least recently used slot nobody waits on and
    /// no I/O holds. `None` when every slot is busy.
    fn victim(&self) -> Option<u32> {
        self.slots
            .iter()
            .enumerate()
            .filter(|(_, s)| {
                matches!(s.state, SlotState::Empty | SlotState::Valid) && s.waiters.is_empty()
            })
            .min_by_key(|(_, s)| (s.state != SlotState::Empty, s.last_use))
            .map(|(i, _)| i as u32)
    }

    fn touch(&mut self, slot: u32) {
        self.clock += 1;
        self.slots[slot as usize].last_use = self.clock;
    }

    /// Put `block` into a slot for `parent` (fetching it unless `whole_write`), or
    /// report that every slot is busy.
    fn load(&mut self, parent: ParentId, block: u64, whole_write: bool) -> Result<u32, ()> {
        let slot = self.victim().ok_or(())?;
        let old = self.slots[slot as usize].block.take();
        if let Some(old) = old {
            self.index.remove(&old);
            self.counters.evictions += 1;
        }
        self.index.insert(block, slot);
        self.slots[slot as usize].block = Some(block);
        self.touch(slot);
        if whole_write {
            self.slots[slot as usize].state = SlotState::Valid;
            self.counters.fetches_avoided += 1;
            return Ok(slot);
        }
        self.slots[slot as usize].waiters.push(parent);
        self.io.members.state_mut(parent).pending += 1;
        let dirty_old = self.slots[slot as usize].dirty;
        match old {
            Some(_) if dirty_old => {
                // The old block goes back first, then the new one comes in.
                self.slots[slot as usize].block = old;
                self.write_back(parent, slot, Some(block));
                self.slots[slot as usize].block = Some(block);
            }
            _ => self.fetch(parent, slot, block),
        }
        Ok(slot)
    }
}

mod serve;

impl<D: BlockDevice> BlockDevice for DmaBuffer<D> {
    fn capacity(&self) -> Sectors {
        self.io.members.smallest_capacity()
    }
    fn submit(&mut self, request: BlockRequest) -> Result<(), DeviceError> {
        request.check(self.capacity())?;
        // A request may fetch, and write back, every block.
        let parent = self.io.open(request, 2 * (self.slots.len() as u64 + 2))?;
        self.serve(parent, request);
        self.io.members.settle(parent);
        Ok(())
    }
    fn next_event_time(&self) -> Option<Nanoseconds> {
        self.io.members.next_event_time()
    }
    fn advance(&mut self, now: Nanoseconds, completed: &mut Vec<Completion>) {
        while let Some(done) = self.io.next_child(now) {
            self.child_done(done.parent, done.tag, done.completion);
        }
        self.io.members.drain(completed);
    }
    fn control(
        &mut self,
        now: Nanoseconds,
        path: &[MemberIndex],
        command: Control,
    ) -> Result<(), ControlError> {
        // The buffer's one member is the volume below: a path goes through it
        // unchanged (member k of the buffered volume is member k below).
        match path.is_empty() {
            true => route_control(&mut self.io, "a DMA-aligned buffer", now, &[], command),
            false => self
                .io
                .members
                .control(now, MemberIndex(0), path, command)
                .map(|_| None),
        }
        .map(|_| ())
    }
}
