//! The state of every block of a volume and the free counts per group: the
//! allocator's free-block map, and the searches it makes over it.

use crate::block::BlockNumber;

/// What a block holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum BlockState {
    Free,
    /// Group metadata (superblock copy, group header, bitmaps, inodes).
    Metadata,
    /// Spans a track boundary; marked used so it is never allocated.
    Excluded,
    /// Holds a file's data.
    Data,
    /// Holds a file's indirect block (block pointers; see
    /// [`crate::config::IndirectBlocks`]).
    Indirect,
    /// Reserved for a file's next blocks (ext2 preallocation), not yet data.
    Preallocated,
}

/// Block states and free counts. Invariant: `free_per_group[g]` is the number
/// of `Free` blocks in group `g`, and `free_total` their sum.
#[derive(Clone, Debug)]
pub(crate) struct Space {
    states: Vec<BlockState>,
    group_blocks: u64,
    free_per_group: Vec<u64>,
    free_total: u64,
}

impl Space {
    /// All blocks free, in groups of `group_blocks` (the last may be shorter).
    pub(crate) fn new(block_count: u64, group_blocks: u64) -> Space {
        let groups = block_count.div_ceil(group_blocks);
        let free_per_group = (0..groups)
            .map(|g| group_blocks.min(block_count - g * group_blocks))
            .collect();
        Space {
            states: vec![BlockState::Free; block_count as usize],
            group_blocks,
            free_per_group,
            free_total: block_count,
        }
    }

    pub(crate) fn block_count(&self) -> u64 {
        self.states.len() as u64
    }
    pub(crate) fn group_count(&self) -> usize {
        self.free_per_group.len()
    }
    pub(crate) fn free_total(&self) -> u64 {
        self.free_total
    }
    pub(crate) fn free_in_group(&self, group: usize) -> u64 {
        self.free_per_group[group]
    }
    pub(crate) fn group_of(&self, block: BlockNumber) -> usize {
        (block.0 / self.group_blocks) as usize
    }
    /// The group's first block and one past its last.
    pub(crate) fn group_bounds(&self, group: usize) -> (BlockNumber, BlockNumber) {
        let first = group as u64 * self.group_blocks;
        let end = (first + self.group_blocks).min(self.block_count());
        (BlockNumber(first), BlockNumber(end))
    }

    /// The block's state; `None` past the volume.
    pub(crate) fn state(&self, block: BlockNumber) -> Option<BlockState> {
        self.states.get(block.0 as usize).copied()
    }
    pub(crate) fn is_free(&self, block: BlockNumber) -> bool {
        self.state(block) == Some(BlockState::Free)
    }

    /// Sets a block's state, keeping the free counts.
    pub(crate) fn set(&mut self, block: BlockNumber, state: BlockState) {
        let group = self.group_of(block);
        let slot = &mut self.states[block.0 as usize];
        match (*slot == BlockState::Free, state == BlockState::Free) {
            (true, false) => {
                self.free_per_group[group] -= 1;
                self.free_total -= 1;
            }
            (false, true) => {
                self.free_per_group[group] += 1;
                self.free_total += 1;
            }
            _ => {}
        }
        *slot = state;
    }

    /// The first free block at or after `start`, wrapping past the end of the
    /// volume to block 0; groups without a free block are skipped whole.
    pub(crate) fn next_free_from(&self, start: BlockNumber) -> Option<BlockNumber> {
        if self.free_total == 0 {
            return None;
        }
        let count = self.block_count();
        let mut block = if start.0 < count { start.0 } else { 0 };
        // Terminates: some block is free, and every step moves forward cyclically.
        loop {
            let group = self.group_of(BlockNumber(block));
            if self.free_per_group[group] == 0 {
                block = self.group_bounds(group).1 .0 % count;
                continue;
            }
            if self.states[block as usize] == BlockState::Free {
                return Some(BlockNumber(block));
            }
            block = (block + 1) % count;
        }
    }

    /// The first run of at least `blocks` free blocks inside `[first, end)`.
    pub(crate) fn free_run_within(
        &self,
        first: BlockNumber,
        end: BlockNumber,
        blocks: u64,
    ) -> Option<BlockNumber> {
        let mut run_start = first.0;
        for block in first.0..end.0 {
            if self.states[block as usize] != BlockState::Free {
                run_start = block + 1;
            } else if block + 1 - run_start >= blocks {
                return Some(BlockNumber(run_start));
            }
        }
        None
    }

    /// How many blocks from `first` (at most `limit`) are free in a row.
    pub(crate) fn free_run_length(&self, first: BlockNumber, limit: u64) -> u64 {
        let end = (first.0 + limit).min(self.block_count());
        (first.0..end)
            .take_while(|&b| self.states[b as usize] == BlockState::Free)
            .count() as u64
    }
}
