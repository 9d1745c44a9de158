//! Traxtents: the runs of whole blocks each track holds, and the blocks that
//! span a track boundary (excluded from allocation by traxtent FFS and given as
//! ext2's bad-block list by the validation paper).

use crate::block::{BlockNumber, BlockRun, BlockSize};
use spinstack_trackmap::TrackMap;

/// Every traxtent of a volume for one block size, in block order, and the
/// excluded blocks between them.
///
/// Invariants: traxtents are non-empty, disjoint and increasing; no traxtent
/// holds an excluded block; every whole block of the volume is in exactly one
/// traxtent or is excluded (a track shorter than a block holds no traxtent).
#[derive(Clone, Debug)]
pub struct Traxtents {
    runs: Vec<BlockRun>,
    excluded: Vec<BlockNumber>,
    block_count: u64,
}

impl Traxtents {
    /// The traxtents of `map` in blocks of `block_size`. The excluded blocks
    /// are [`TrackMap::boundary_crossing_blocks`], the one computation the
    /// `mke2fs -l` export of `spinstack-extract` also uses, cut to the whole
    /// blocks of the volume.
    pub fn new(map: &TrackMap, block_size: BlockSize) -> Traxtents {
        let block_count = block_size.blocks_in(map.capacity());
        let excluded: Vec<BlockNumber> = map
            .boundary_crossing_blocks(block_size.sectors())
            .filter(|&block| block < block_count)
            .map(BlockNumber)
            .collect();
        // A traxtent is the whole blocks inside one track: from the first block
        // starting at or after the track's first LBN to the last block ending at
        // or before its end. A block in no traxtent holds a boundary: excluded.
        let sectors = block_size.sectors().0;
        let runs = map
            .tracks()
            .iter()
            .filter_map(|track| {
                let first = track.first.0.div_ceil(sectors);
                let end = (track.end().0 / sectors).min(block_count);
                (end > first).then_some(BlockRun {
                    first: BlockNumber(first),
                    blocks: end - first,
                })
            })
            .collect();
        Traxtents {
            runs,
            excluded,
            block_count,
        }
    }

    /// Every traxtent, in block order.
    pub fn runs(&self) -> &[BlockRun] {
        &self.runs
    }
    /// Blocks that span a track boundary, in increasing order.
    pub fn excluded(&self) -> &[BlockNumber] {
        &self.excluded
    }
    /// Whole blocks in the volume.
    pub fn block_count(&self) -> u64 {
        self.block_count
    }
    pub fn is_excluded(&self, block: BlockNumber) -> bool {
        self.excluded.binary_search(&block).is_ok()
    }
    /// The longest traxtent, in blocks (0 when there is none).
    pub fn longest(&self) -> u64 {
        self.runs.iter().map(|r| r.blocks).max().unwrap_or(0)
    }

    /// Index of the traxtent holding `block`; `None` for an excluded block or
    /// one past the volume.
    pub fn index_of(&self, block: BlockNumber) -> Option<usize> {
        let after = self.runs.partition_point(|r| r.first <= block);
        let index = after.checked_sub(1)?;
        self.runs[index].contains(block).then_some(index)
    }

    /// Index of the first traxtent starting after `block`.
    pub fn first_after(&self, block: BlockNumber) -> usize {
        self.runs.partition_point(|r| r.first <= block)
    }

    /// The traxtent holding `block`.
    pub fn containing(&self, block: BlockNumber) -> Option<BlockRun> {
        self.index_of(block).map(|index| self.runs[index])
    }

    /// Traxtent indices in order of distance from `block` (measured to each
    /// traxtent's first block), nearest first, ties going forward: the search
    /// order of "the closest traxtent".
    pub fn by_distance_from(&self, block: BlockNumber) -> impl Iterator<Item = usize> + '_ {
        let mut after = self.runs.partition_point(|r| r.first < block);
        let mut before = after; // indices below `before` are still to visit
        std::iter::from_fn(move || {
            let forward = self.runs.get(after).map(|r| r.first.0 - block.0);
            let backward = before
                .checked_sub(1)
                .map(|i| block.0 - self.runs[i].first.0);
            match (forward, backward) {
                (Some(f), Some(b)) if b < f => {
                    before -= 1;
                    Some(before)
                }
                (Some(_), _) => {
                    after += 1;
                    Some(after - 1)
                }
                (None, Some(_)) => {
                    before -= 1;
                    Some(before)
                }
                (None, None) => None,
            }
        })
    }
}
