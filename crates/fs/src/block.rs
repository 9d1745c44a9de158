//! File-system blocks: their size, their numbers and runs of them, and where
//! they lie in the volume's LBN space.

use spinstack_sim::units::{Lbn, Sectors, SECTOR_BYTES};
use std::fmt;

/// A file-system block number, counted from LBN 0 of the volume in blocks of
/// the file system's [`BlockSize`] (FreeBSD's `blkno`, ext2's block number).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct BlockNumber(pub u64);

impl BlockNumber {
    /// The block `count` blocks after this one.
    pub fn plus(self, count: u64) -> BlockNumber {
        BlockNumber(self.0 + count)
    }
}

impl fmt::Display for BlockNumber {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "block {}", self.0)
    }
}

/// A file system's block size, a positive whole number of sectors.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct BlockSize {
    sectors: Sectors,
}

impl BlockSize {
    /// FreeBSD FFS as the traxtents paper ran it (§4.2.1: "the file system block
    /// size is 8 KB (sixteen contiguous LBNs)").
    pub const FFS_8_KIB: BlockSize = BlockSize {
        sectors: Sectors(16),
    };
    /// ext2 with 4 KB blocks (mke2fs's default block size for volumes past 512 MB).
    pub const EXT2_4_KIB: BlockSize = BlockSize {
        sectors: Sectors(8),
    };

    /// A block of `sectors`; `None` for 0 sectors.
    pub fn from_sectors(sectors: Sectors) -> Option<BlockSize> {
        (sectors.0 > 0).then_some(BlockSize { sectors })
    }

    /// A block of `bytes`; `None` unless `bytes` is a positive multiple of 512.
    pub fn from_bytes(bytes: u64) -> Option<BlockSize> {
        Sectors::from_bytes(bytes).and_then(BlockSize::from_sectors)
    }

    pub fn sectors(self) -> Sectors {
        self.sectors
    }
    pub fn bytes(self) -> u64 {
        self.sectors.0 * SECTOR_BYTES
    }

    /// The first LBN of `block`.
    pub fn first_lbn(self, block: BlockNumber) -> Lbn {
        Lbn(block.0 * self.sectors.0)
    }

    /// Whole blocks in a volume of `capacity` sectors; the partial block past
    /// the last whole one is never used.
    pub fn blocks_in(self, capacity: Sectors) -> u64 {
        capacity.0 / self.sectors.0
    }
}

/// `blocks` consecutive block numbers from `first`: one extent of a file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct BlockRun {
    pub first: BlockNumber,
    pub blocks: u64,
}

impl BlockRun {
    /// One past the run's last block.
    pub fn end(self) -> BlockNumber {
        self.first.plus(self.blocks)
    }
    pub fn contains(self, block: BlockNumber) -> bool {
        block >= self.first && block < self.end()
    }
    /// The block numbers of the run, in order.
    pub fn iter(self) -> impl Iterator<Item = BlockNumber> {
        (self.first.0..self.end().0).map(BlockNumber)
    }
}

/// Appends `block` to `runs`, extending the last run when `block` follows it.
pub(crate) fn push_block(runs: &mut Vec<BlockRun>, block: BlockNumber) {
    match runs.last_mut() {
        Some(last) if last.end() == block => last.blocks += 1,
        _ => runs.push(BlockRun {
            first: block,
            blocks: 1,
        }),
    }
}
