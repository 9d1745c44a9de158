//! How the DMA-aligned buffer serves each operation (see the parent module).

use super::*;

impl<D: BlockDevice> DmaBuffer<D> {
    pub(super) fn serve(&mut self, parent: ParentId, request: BlockRequest) {
        let through = request.force_unit_access || self.policy == WritePolicy::WriteThrough;
        match request.operation {
            Operation::Flush => self.flush(parent),
            Operation::Trim => self.trim(parent, request),
            Operation::Write if through => self.write_through(parent, request),
            Operation::Read | Operation::Write => {
                let blocks = self.blocks_of(&request);
                if blocks.end() - blocks.start() + 1 > (self.slots.len() as u64 / 2).max(1) {
                    return self.bypass(parent, request);
                }
                self.count_case(&request);
                self.io.members.hold(parent);
                self.scan(parent, request);
            }
        }
    }

    /// The paper's case of a request (by its first and last blocks).
    fn count_case(&mut self, request: &BlockRequest) {
        let blocks = self.blocks_of(request);
        let case = DabCase::of(*blocks.start(), *blocks.end(), |block| {
            self.index
                .get(&block)
                .is_some_and(|&slot| self.slots[slot as usize].state == SlotState::Valid)
        });
        self.counters.count(case);
    }

    /// Go over the request's blocks: buffered ones are used, missing ones fetched;
    /// the request waits for what is on its way. Safe to repeat after starving.
    fn scan(&mut self, parent: ParentId, request: BlockRequest) {
        let write = request.operation == Operation::Write;
        self.io.members.state_mut(parent).writes = write;
        let mut starved = false;
        for block in self.blocks_of(&request) {
            match self.index.get(&block).copied() {
                Some(slot) => {
                    let s = &mut self.slots[slot as usize];
                    if s.waiters.contains(&parent) {
                        continue;
                    }
                    if s.state == SlotState::Valid {
                        s.dirty |= write;
                    } else {
                        s.waiters.push(parent);
                        self.io.members.state_mut(parent).pending += 1;
                    }
                    self.touch(slot);
                }
                None => {
                    let start = Lbn(block * self.block.0);
                    let covers = request.lbn <= start
                        && request.end() >= start.offset(self.block_sectors(block));
                    match self.load(parent, block, write && covers) {
                        Ok(slot) => self.slots[slot as usize].dirty |= write && covers,
                        Err(()) => starved = true,
                    }
                }
            }
        }
        let state = self.io.members.state_mut(parent);
        state.starved = starved;
        if starved {
            self.starved.push_back(parent);
        } else if state.pending == 0 {
            self.finish(parent);
        }
    }

    /// The request has all its blocks: it completes after its copy.
    fn finish(&mut self, parent: ParentId) {
        let sectors = self.io.members.request(parent).sectors;
        let at = self.cpu.run(self.io.members.now(), sectors);
        let status = self.io.members.state(parent).status;
        self.io.members.set_status(parent, status);
        self.io.members.complete_at(at, parent);
        self.io.members.release(parent);
    }

    /// A request larger than half the buffer goes straight below; a write drops the
    /// buffered copies it overwrites.
    fn bypass(&mut self, parent: ParentId, request: BlockRequest) {
        self.counters.bypassed += 1;
        if request.operation == Operation::Write {
            self.drop_covered(&request);
        }
        self.send_through(parent, request);
    }

    fn send_through(&mut self, parent: ParentId, request: BlockRequest) {
        let issue = Issue {
            operation: request.operation,
            lbn: request.lbn,
            sectors: request.sectors,
            force_unit_access: request.force_unit_access,
        };
        self.send(parent, issue, Tag::Through);
    }

    fn write_through(&mut self, parent: ParentId, request: BlockRequest) {
        // Buffered copies are updated in memory as the write passes.
        for block in self.blocks_of(&request) {
            if let Some(&slot) = self.index.get(&block) {
                self.touch(slot);
            }
        }
        self.send_through(parent, request);
    }

    fn trim(&mut self, parent: ParentId, request: BlockRequest) {
        self.drop_covered(&request);
        self.send_through(parent, request);
    }

    /// Forget buffered blocks `request` covers whole (they are superseded); blocks
    /// with I/O under way stay until it ends.
    fn drop_covered(&mut self, request: &BlockRequest) {
        for block in self.blocks_of(request) {
            let start = Lbn(block * self.block.0);
            let whole =
                request.lbn <= start && request.end() >= start.offset(self.block_sectors(block));
            let Some(&slot) = self.index.get(&block) else {
                continue;
            };
            let s = &mut self.slots[slot as usize];
            if whole && s.state == SlotState::Valid && s.waiters.is_empty() {
                s.state = SlotState::Empty;
                s.block = None;
                s.dirty = false;
                self.index.remove(&block);
            }
        }
    }

    /// Write every dirty block back whole, then flush below.
    fn flush(&mut self, parent: ParentId) {
        let dirty: Vec<u32> = (0..self.slots.len() as u32)
            .filter(|&s| {
                let slot = &self.slots[s as usize];
                slot.dirty && slot.state == SlotState::Valid
            })
            .collect();
        if dirty.is_empty() {
            return self.flush_below(parent);
        }
        self.io.members.hold(parent);
        let state = self.io.members.state_mut(parent);
        state.flushing = true;
        state.pending = dirty.len() as u32;
        for slot in dirty {
            self.write_back(parent, slot, None);
        }
    }

    fn flush_below(&mut self, parent: ParentId) {
        let flush = Issue::new(Operation::Flush, Lbn(0), Sectors(0));
        self.send(parent, flush, Tag::FlushBelow);
    }

    pub(super) fn child_done(&mut self, parent: ParentId, tag: Tag, completion: Completion) {
        let ok = completion.status.is_ok();
        if !ok {
            self.io.members.state_mut(parent).status = completion.status;
        }
        match tag {
            Tag::Fetch { slot } => self.block_arrived(slot, completion.status),
            Tag::WriteBack { slot } => match self.slots[slot as usize].state {
                SlotState::WritingBack {
                    then_fetch: Some(block),
                } => self.fetch(parent, slot, block),
                _ => {
                    self.slots[slot as usize].state = SlotState::Valid;
                    self.slots[slot as usize].dirty |= !ok;
                    let state = self.io.members.state_mut(parent);
                    state.pending -= 1;
                    if state.pending == 0 && state.flushing {
                        state.flushing = false;
                        self.flush_below(parent);
                        self.io.members.release(parent);
                    }
                }
            },
            Tag::Through | Tag::FlushBelow => {}
        }
        let status = self.io.members.state(parent).status;
        self.io.members.set_status(parent, status);
        self.feed_starved();
    }

    /// A fetched block is in (or failed): its waiters go on.
    fn block_arrived(&mut self, slot: u32, status: Status) {
        let waiters = std::mem::take(&mut self.slots[slot as usize].waiters);
        if status.is_ok() {
            self.slots[slot as usize].state = SlotState::Valid;
        } else {
            let s = &mut self.slots[slot as usize];
            if let Some(block) = s.block.take() {
                self.index.remove(&block);
            }
            s.state = SlotState::Empty;
            s.dirty = false;
        }
        for waiter in waiters {
            let state = self.io.members.state_mut(waiter);
            state.pending -= 1;
            if !status.is_ok() {
                state.status = status;
            }
            let (writes, done) = (state.writes, state.pending == 0 && !state.starved);
            if writes && status.is_ok() {
                self.slots[slot as usize].dirty = true;
            }
            if done {
                self.finish(waiter);
            }
        }
    }

    /// Requests that found every slot busy try again, oldest first.
    fn feed_starved(&mut self) {
        while self.victim().is_some() {
            let Some(parent) = self.starved.pop_front() else {
                return;
            };
            let request = self.io.members.request(parent);
            self.scan(parent, request);
            if self.io.members.state(parent).starved {
                // It went to the back; put it first again and wait.
                self.starved.pop_back();
                self.starved.push_front(parent);
                return;
            }
        }
    }
}
