//! Block allocation for files over a volume's LBN space: FFS, traxtent FFS and
//! ext2 (plain or track-aligned), one engine under an [`AllocatorConfig`].
//!
//! How a file's next block is chosen (the order matters):
//! 1. a block the file has preallocated (ext2), which always follows its last;
//! 2. traxtent placement, the file's first allocation, and the request fits in
//!    the longest traxtent: the request's whole run inside one traxtent — at
//!    the preferred block if it fits there, else at the first free run of the
//!    closest traxtent that holds it (traxtents §4.2.2, "mid-size files are
//!    allocated such that they fit within a single traxtent");
//! 3. otherwise block by block: the preferred block is the one after the
//!    file's last block (a new file's: its group's first free block); once the
//!    file has taken `max_blocks_per_group_per_file` blocks since it last
//!    switched it switches to the next group with at least the average free
//!    count (FFS's `maxbpg`). If the preferred block is excluded and placement is
//!    traxtent, the first block of the closest traxtent whose first block is
//!    free; otherwise the next free block at or after the preferred one.
//!
//! Indirect blocks ([`crate::config::IndirectBlocks`]): before a data block
//! that is the first an indirect block maps, the file takes that indirect
//! block (and the double- or triple-indirect one above it, top level first) by
//! the same rules, so it lies in the data stream just before the data it maps.
//! They count as part of a traxtent-placed first allocation; they do not count
//! toward `maxbpg`.
//!
//! The group switch follows FreeBSD's `ffs_blkpref`: the limit is on the file's
//! data blocks since its last switch, not on a group's, so a file that spills
//! into the next group when its own fills (a second large file of a directory,
//! in the room the first left) still switches at its next `maxbpg`-th block, to
//! the first group with at least the average free count: past the groups the
//! earlier files half filled. FreeBSD searches from the inode's group + lbn /
//! maxbpg, this engine from the group after the current one; for files laid
//! out in order the two pick the same group.
//!
//! Simplification, stated: FFS picks a cluster of N free blocks for N buffered
//! blocks (McVoy & Kleiman clustering); on a volume where the next blocks are
//! free that is the same as block-by-block next-free placement, which is what
//! this engine does.

use crate::block::{push_block, BlockNumber, BlockRun};
use crate::config::{AllocatorConfig, IndirectBlocks, Placement, Preallocation};
use crate::space::{BlockState, Space};
use crate::traxtent::Traxtents;
use spinstack_trackmap::TrackMap;
use std::collections::BTreeMap;

/// What one block of an allocation is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Slot {
    Data,
    Indirect,
}

/// A file known to the allocator.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct FileId(pub u64);

/// Why an allocator could not be built or a request could not be met.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum AllocError {
    #[error("allocator configuration: {0}")]
    BadConfig(String),
    #[error("no file {0:?}")]
    UnknownFile(FileId),
    #[error("group {group} does not exist (the volume has {groups})")]
    UnknownGroup { group: usize, groups: usize },
    #[error("{file:?} asked for {wanted} blocks but only {available} are free")]
    NoSpace {
        file: FileId,
        wanted: u64,
        available: u64,
    },
}

#[derive(Clone, Debug)]
struct FileState {
    runs: Vec<BlockRun>,
    /// Data blocks the file holds (the file-order index of its next one).
    data_blocks: u64,
    /// Its indirect blocks, in the order taken.
    indirect: Vec<BlockNumber>,
    /// The last block it took, data or indirect: its next one follows it.
    last: Option<BlockNumber>,
    /// The group the file is filling, and the blocks that count toward `maxbpg`
    /// it took since it last switched groups (wherever they landed).
    group: usize,
    blocks_since_switch: u64,
    /// Blocks reserved to follow the file's last block (state `Preallocated`).
    preallocated: Option<BlockRun>,
}

/// The allocator: a volume's block states, its traxtents and its files.
#[derive(Clone, Debug)]
pub struct Allocator {
    config: AllocatorConfig,
    traxtents: Traxtents,
    space: Space,
    files: BTreeMap<FileId, FileState>,
    next_file: u64,
}

impl Allocator {
    /// A fresh file system over the volume `map` describes: group metadata
    /// reserved and, when configured, the boundary-crossing blocks excluded.
    pub fn new(map: &TrackMap, config: AllocatorConfig) -> Result<Allocator, AllocError> {
        let bad = |why: String| Err(AllocError::BadConfig(why));
        if config.group_blocks == 0 {
            return bad("a group of 0 blocks".into());
        }
        if config.metadata_blocks_per_group >= config.group_blocks {
            return bad(format!(
                "{} metadata blocks leave no data blocks in a group of {}",
                config.metadata_blocks_per_group, config.group_blocks
            ));
        }
        if config.max_blocks_per_group_per_file == Some(0) {
            return bad("a file may take 0 blocks per group".into());
        }
        if config.preallocation == Preallocation::Blocks(0) {
            return bad("a preallocation window of 0 blocks (use Preallocation::None)".into());
        }
        let traxtents = Traxtents::new(map, config.block_size);
        let block_count = traxtents.block_count();
        if block_count == 0 {
            return bad(format!(
                "the volume ({}) holds no whole {}-byte block",
                map.capacity(),
                config.block_size.bytes()
            ));
        }
        let mut space = Space::new(block_count, config.group_blocks);
        for group in 0..space.group_count() {
            let (first, end) = space.group_bounds(group);
            let metadata_end = (first.0 + config.metadata_blocks_per_group).min(end.0);
            for block in first.0..metadata_end {
                space.set(BlockNumber(block), BlockState::Metadata);
            }
        }
        if config.exclude_track_crossing_blocks {
            for &block in traxtents.excluded() {
                // Metadata stays metadata: it is not the allocator's to give.
                if space.is_free(block) {
                    space.set(block, BlockState::Excluded);
                }
            }
        }
        Ok(Allocator {
            config,
            traxtents,
            space,
            files: BTreeMap::new(),
            next_file: 0,
        })
    }

    pub fn config(&self) -> &AllocatorConfig {
        &self.config
    }
    pub fn traxtents(&self) -> &Traxtents {
        &self.traxtents
    }
    /// Whole blocks in the volume.
    pub fn block_count(&self) -> u64 {
        self.space.block_count()
    }
    pub fn group_count(&self) -> usize {
        self.space.group_count()
    }
    /// Blocks no file holds or reserves.
    pub fn free_blocks(&self) -> u64 {
        self.space.free_total()
    }
    /// A block's state; `None` past the volume.
    pub fn state(&self, block: BlockNumber) -> Option<BlockState> {
        self.space.state(block)
    }
    /// A file's blocks, as runs in file order.
    pub fn runs(&self, file: FileId) -> Option<&[BlockRun]> {
        self.files.get(&file).map(|f| f.runs.as_slice())
    }
    /// A file's indirect blocks, in the order it took them.
    pub fn indirect_blocks(&self, file: FileId) -> Option<&[BlockNumber]> {
        self.files.get(&file).map(|f| f.indirect.as_slice())
    }
    /// Blocks reserved for a file's next allocation.
    pub fn preallocated(&self, file: FileId) -> Option<BlockRun> {
        self.files.get(&file).and_then(|f| f.preallocated)
    }
    /// Every file, in creation order.
    pub fn files(&self) -> impl Iterator<Item = FileId> + '_ {
        self.files.keys().copied()
    }

    /// A new, empty file whose blocks start in `group` (FFS and ext2 put a
    /// file's first blocks in its inode's group, usually its directory's).
    pub fn create(&mut self, group: usize) -> Result<FileId, AllocError> {
        let groups = self.group_count();
        if group >= groups {
            return Err(AllocError::UnknownGroup { group, groups });
        }
        let file = FileId(self.next_file);
        self.next_file += 1;
        self.files.insert(
            file,
            FileState {
                runs: Vec::new(),
                data_blocks: 0,
                indirect: Vec::new(),
                last: None,
                group,
                blocks_since_switch: 0,
                preallocated: None,
            },
        );
        Ok(file)
    }

    /// Gives `file` `count` more data blocks and returns them as runs (the
    /// indirect blocks they need are taken too, see [`Allocator::indirect_blocks`]).
    /// All or nothing: when too few blocks are free, every other file's
    /// preallocation is taken back; if that is still too few, the file gets
    /// nothing and the error says how many were free.
    pub fn allocate(&mut self, file: FileId, count: u64) -> Result<Vec<BlockRun>, AllocError> {
        let own = self.own_preallocation(file)?;
        let slots = self.slots(file, count);
        let needed = slots.len() as u64;
        if self.space.free_total() + own < needed {
            // Preallocations are reservations; space pressure takes them back.
            let others: Vec<FileId> = self.files.keys().copied().filter(|&f| f != file).collect();
            for other in others {
                self.release_preallocation(other);
            }
        }
        let available = self.space.free_total() + own;
        if available < needed {
            return Err(AllocError::NoSpace {
                file,
                wanted: needed,
                available,
            });
        }
        let mut new_runs = Vec::new();
        if count == 0 {
            return Ok(new_runs);
        }
        if let Some(first) = self.traxtent_fit(file, needed) {
            for (slot, block) in slots.iter().zip(first.0..first.0 + needed) {
                self.take_slot(file, *slot, BlockNumber(block), &mut new_runs);
            }
            return Ok(new_runs);
        }
        for slot in slots {
            let block = self.next_block(file);
            self.take_slot(file, slot, block, &mut new_runs);
            if self.preallocation_is_empty(file) {
                self.preallocate_after(file, block);
            }
        }
        Ok(new_runs)
    }

    /// What the file's next `count` data blocks need, in the order taken:
    /// each data block, preceded by the indirect blocks that start at it.
    fn slots(&self, file: FileId, count: u64) -> Vec<Slot> {
        let first = self.files.get(&file).map_or(0, |f| f.data_blocks);
        let indirect = self.config.indirect;
        let mut slots = Vec::with_capacity(count as usize);
        for index in first..first + count {
            let before = indirect.map_or(0, |layout: IndirectBlocks| layout.before(index));
            slots.extend((0..before).map(|_| Slot::Indirect));
            slots.push(Slot::Data);
        }
        slots
    }

    /// The file is closed: its preallocated blocks go back to the free map
    /// (ext2 discards its preallocation when the file is released).
    pub fn close(&mut self, file: FileId) -> Result<(), AllocError> {
        self.own_preallocation(file)?;
        self.release_preallocation(file);
        Ok(())
    }

    /// Deletes the file; its blocks (and preallocation) become free. Returns
    /// how many data blocks it held.
    pub fn delete(&mut self, file: FileId) -> Result<u64, AllocError> {
        self.own_preallocation(file)?;
        self.release_preallocation(file);
        let state = self
            .files
            .remove(&file)
            .ok_or(AllocError::UnknownFile(file))?;
        let mut freed = 0;
        for run in state.runs {
            for block in run.iter() {
                self.space.set(block, BlockState::Free);
                freed += 1;
            }
        }
        for block in state.indirect {
            self.space.set(block, BlockState::Free);
        }
        Ok(freed)
    }

    fn own_preallocation(&self, file: FileId) -> Result<u64, AllocError> {
        let state = self.files.get(&file).ok_or(AllocError::UnknownFile(file))?;
        Ok(state.preallocated.map_or(0, |run| run.blocks))
    }

    fn preallocation_is_empty(&self, file: FileId) -> bool {
        self.files[&file].preallocated.is_none()
    }

    fn release_preallocation(&mut self, file: FileId) {
        if let Some(run) = self
            .files
            .get_mut(&file)
            .and_then(|f| f.preallocated.take())
        {
            for block in run.iter() {
                self.space.set(block, BlockState::Free);
            }
        }
    }

    /// Gives `block` to the file as its next data or indirect block, keeping
    /// its group count: data blocks count toward `maxbpg`, except the direct
    /// ones when the file system has indirect blocks (see
    /// [`AllocatorConfig::max_blocks_per_group_per_file`]).
    fn take_slot(
        &mut self,
        file: FileId,
        slot: Slot,
        block: BlockNumber,
        new_runs: &mut Vec<BlockRun>,
    ) {
        let group = self.space.group_of(block);
        let direct = self.config.indirect.map(|layout| layout.direct);
        let state = self
            .files
            .get_mut(&file)
            .expect("the caller checked the file");
        // A file that spills into the next group keeps counting toward `maxbpg`:
        // FreeBSD's limit is on the file's logical blocks, not on a group's.
        state.group = group;
        state.last = Some(block);
        match slot {
            Slot::Indirect => {
                self.space.set(block, BlockState::Indirect);
                state.indirect.push(block);
            }
            Slot::Data => {
                if direct.is_none_or(|direct| state.data_blocks >= direct) {
                    state.blocks_since_switch += 1;
                }
                state.data_blocks += 1;
                push_block(&mut state.runs, block);
                push_block(new_runs, block);
                self.space.set(block, BlockState::Data);
            }
        }
    }

    /// The next block for `file`, block by block (steps 1 and 3 of the module
    /// documentation). Only called when a block is free or preallocated.
    fn next_block(&mut self, file: FileId) -> BlockNumber {
        let state = self
            .files
            .get_mut(&file)
            .expect("the caller checked the file");
        if let Some(run) = state.preallocated.as_mut() {
            let block = run.first;
            run.first = run.first.plus(1);
            run.blocks -= 1;
            if run.blocks == 0 {
                state.preallocated = None;
            }
            return block;
        }
        let preferred = self.preferred(file);
        if self.config.placement == Placement::Traxtent
            && self.space.state(preferred) == Some(BlockState::Excluded)
        {
            if let Some(block) = self.closest_traxtent_start(preferred) {
                return block;
            }
        }
        self.space
            .next_free_from(preferred)
            .expect("allocate checked that a block is free")
    }

    /// Where the file's next block would best go, switching groups when the
    /// file has used up its share of the current one.
    fn preferred(&mut self, file: FileId) -> BlockNumber {
        let limit = self.config.max_blocks_per_group_per_file;
        let (last_end, group, since_switch) = {
            let state = &self.files[&file];
            (
                state.last.map(|block| block.plus(1)),
                state.group,
                state.blocks_since_switch,
            )
        };
        match last_end {
            None => self.group_data_start(group),
            Some(_) if limit.is_some_and(|max| since_switch >= max) => {
                let next = self.group_with_room(group + 1);
                let state = self.files.get_mut(&file).expect("checked");
                state.group = next;
                state.blocks_since_switch = 0;
                self.group_data_start(next)
            }
            Some(end) if end.0 < self.block_count() => end,
            Some(_) => BlockNumber(0),
        }
    }

    /// A group's first block past its metadata.
    fn group_data_start(&self, group: usize) -> BlockNumber {
        let (first, end) = self.space.group_bounds(group);
        BlockNumber((first.0 + self.config.metadata_blocks_per_group).min(end.0 - 1))
    }

    /// From `start` on, cyclically, the first group with at least the average
    /// free count (FFS's choice of a new group for a large file), else any
    /// group with a free block.
    fn group_with_room(&self, start: usize) -> usize {
        let groups = self.group_count();
        let average = self.space.free_total() / groups as u64;
        let order = (0..groups).map(|i| (start + i) % groups);
        order
            .clone()
            .find(|&g| self.space.free_in_group(g) >= average.max(1))
            .or_else(|| order.clone().find(|&g| self.space.free_in_group(g) > 0))
            .unwrap_or(start % groups)
    }

    /// The first block of the closest traxtent whose first block is free.
    fn closest_traxtent_start(&self, from: BlockNumber) -> Option<BlockNumber> {
        self.traxtents
            .by_distance_from(from)
            .map(|index| self.traxtents.runs()[index].first)
            .find(|&first| self.space.is_free(first))
    }

    /// Step 2: where a new file's first `count` blocks fit inside one traxtent,
    /// if placement is traxtent and some traxtent has that many free in a row.
    fn traxtent_fit(&self, file: FileId, count: u64) -> Option<BlockNumber> {
        let state = &self.files[&file];
        if self.config.placement != Placement::Traxtent
            || !state.runs.is_empty()
            || count > self.traxtents.longest()
        {
            return None;
        }
        let preferred = self.group_data_start(state.group);
        let preferred = self.space.next_free_from(preferred)?;
        if let Some(run) = self.traxtents.containing(preferred) {
            if preferred.0 + count <= run.end().0
                && self.space.free_run_length(preferred, count) == count
            {
                return Some(preferred);
            }
        }
        self.traxtents
            .by_distance_from(preferred)
            .map(|index| self.traxtents.runs()[index])
            .filter(|run| run.blocks >= count)
            .find_map(|run| self.space.free_run_within(run.first, run.end(), count))
    }

    /// Reserves the blocks after `block` that the preallocation policy wants.
    fn preallocate_after(&mut self, file: FileId, block: BlockNumber) {
        let (_, group_end) = self.space.group_bounds(self.space.group_of(block));
        let wanted = match self.config.preallocation {
            Preallocation::None => return,
            // ext2 preallocates inside the group's bitmap.
            Preallocation::Blocks(window) => (window - 1).min(group_end.0 - block.0 - 1),
            Preallocation::ToTrackBoundary => match self.traxtents.containing(block) {
                Some(run) => run.end().0 - block.0 - 1,
                None => 0,
            },
        };
        let start = block.plus(1);
        let blocks = self.space.free_run_length(start, wanted);
        if blocks == 0 {
            return;
        }
        for reserved in (BlockRun {
            first: start,
            blocks,
        })
        .iter()
        {
            self.space.set(reserved, BlockState::Preallocated);
        }
        let state = self.files.get_mut(&file).expect("checked");
        state.preallocated = Some(BlockRun {
            first: start,
            blocks,
        });
    }
}
