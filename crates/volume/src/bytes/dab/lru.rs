//! The buffer blocks of a [`super::DmaAlignedBuffer`]: a fixed arena of equal blocks,
//! an index from block number to slot, and an LRU order kept as a doubly linked list
//! through the slots (no allocation after construction).

use std::collections::HashMap;

const NIL: usize = usize::MAX;

/// One buffer block's bookkeeping (its bytes are in the arena at `slot * block`).
#[derive(Clone, Debug)]
struct Slot {
    /// Which aligned block of the store it holds; meaningful while `used`.
    block: u64,
    used: bool,
    dirty: bool,
    /// Towards the most recently used end.
    newer: usize,
    /// Towards the least recently used end.
    older: usize,
}

/// Slots, index and LRU order. Invariant: `index` maps exactly the used slots' blocks;
/// the list holds exactly the used slots, newest first.
#[derive(Debug)]
pub(super) struct Blocks {
    slots: Vec<Slot>,
    index: HashMap<u64, usize>,
    newest: usize,
    oldest: usize,
    free: Vec<usize>,
}

impl Blocks {
    pub fn new(count: usize) -> Blocks {
        let slot = Slot {
            block: 0,
            used: false,
            dirty: false,
            newer: NIL,
            older: NIL,
        };
        Blocks {
            slots: vec![slot; count],
            index: HashMap::with_capacity(count),
            newest: NIL,
            oldest: NIL,
            free: (0..count).rev().collect(),
        }
    }

    /// The slot holding `block`, if buffered.
    pub fn find(&self, block: u64) -> Option<usize> {
        self.index.get(&block).copied()
    }

    pub fn is_dirty(&self, slot: usize) -> bool {
        self.slots[slot].dirty
    }

    pub fn set_dirty(&mut self, slot: usize, dirty: bool) {
        debug_assert!(self.slots[slot].used);
        self.slots[slot].dirty = dirty;
    }

    pub fn block_of(&self, slot: usize) -> u64 {
        self.slots[slot].block
    }

    /// Moves `slot` to the newest end.
    pub fn touch(&mut self, slot: usize) {
        if self.newest == slot {
            return;
        }
        self.unlink(slot);
        self.link_newest(slot);
    }

    /// A free slot, if any (the caller then `insert`s).
    pub fn take_free(&mut self) -> Option<usize> {
        self.free.pop()
    }

    /// Returns a slot taken by `take_free` but not filled.
    pub fn give_back(&mut self, slot: usize) {
        debug_assert!(!self.slots[slot].used && !self.free.contains(&slot));
        self.free.push(slot);
    }

    /// The least recently used slot (the eviction candidate), if any.
    pub fn oldest(&self) -> Option<usize> {
        (self.oldest != NIL).then_some(self.oldest)
    }

    /// Drops `slot`'s block from the index and the list; the slot becomes free.
    pub fn remove(&mut self, slot: usize) {
        debug_assert!(self.slots[slot].used);
        self.index.remove(&self.slots[slot].block);
        self.unlink(slot);
        self.slots[slot].used = false;
        self.slots[slot].dirty = false;
        self.free.push(slot);
    }

    /// Makes a slot taken by `take_free` hold `block`, as the newest.
    pub fn insert(&mut self, slot: usize, block: u64) {
        debug_assert!(!self.slots[slot].used && !self.index.contains_key(&block));
        debug_assert!(!self.free.contains(&slot));
        let entry = &mut self.slots[slot];
        entry.block = block;
        entry.used = true;
        entry.dirty = false;
        self.index.insert(block, slot);
        self.link_newest(slot);
    }

    /// Used slots that are dirty, in ascending block order (into `out`).
    pub fn dirty_slots(&self, out: &mut Vec<usize>) {
        out.clear();
        out.extend((0..self.slots.len()).filter(|&s| self.slots[s].used && self.slots[s].dirty));
        out.sort_unstable_by_key(|&s| self.slots[s].block);
    }

    fn unlink(&mut self, slot: usize) {
        let (newer, older) = (self.slots[slot].newer, self.slots[slot].older);
        match newer {
            NIL => self.newest = older,
            n => self.slots[n].older = older,
        }
        match older {
            NIL => self.oldest = newer,
            o => self.slots[o].newer = newer,
        }
        self.slots[slot].newer = NIL;
        self.slots[slot].older = NIL;
    }

    fn link_newest(&mut self, slot: usize) {
        self.slots[slot].newer = NIL;
        self.slots[slot].older = self.newest;
        match self.newest {
            NIL => self.oldest = slot,
            n => self.slots[n].newer = slot,
        }
        self.newest = slot;
    }
}
