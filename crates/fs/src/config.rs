//! How an allocator lays a volume out and places files, with the four presets
//! the papers ran and where each parameter comes from.

use crate::block::BlockSize;

/// Where a file's blocks go when the preferred (next) block is taken.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Placement {
    /// The next free block at or after the preferred one (FFS and ext2 as
    /// shipped).
    NextFree,
    /// Traxtent FFS (traxtents §4.2.2): when the preferred block is excluded,
    /// the first block of the closest traxtent whose first block is free; a
    /// file's first allocation that fits in one traxtent goes inside one.
    Traxtent,
}

/// Blocks reserved for a file beyond the one it asked for, so that its next
/// blocks follow (ext2's preallocation).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Preallocation {
    None,
    /// A window of up to this many contiguous free blocks, the allocated block
    /// included (ext2: the allocated block and up to
    /// `EXT2_DEFAULT_PREALLOC_BLOCKS - 1` = 7 more).
    Blocks(u64),
    /// Up to the track boundary after the allocated block (the validation
    /// paper's §2.4 change: "allocate in tracks (or up to a track boundary)").
    ToTrackBoundary,
}

/// A file's block pointers past the ones in its inode live in indirect blocks,
/// which the file system allocates in the file's data stream: FFS
/// (`ffs_balloc`) and ext2 (`ext2_alloc_branch`) both take them, top level
/// first, just before the first data block they map, from the same preference
/// as that data block, so a file's data runs break there by one block (two at
/// the double-indirect block, three at the triple).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IndirectBlocks {
    /// Block pointers in the inode itself (UFS1 `NDADDR`, ext2
    /// `EXT2_NDIR_BLOCKS`: 12).
    pub direct: u64,
    /// Pointers per indirect block: the block size over a 4-byte pointer
    /// (UFS1 `NINDIR` = 2048 for 8 KB blocks; ext2 1024 for 4 KB blocks).
    pub pointers_per_block: u64,
}

impl IndirectBlocks {
    /// Indirect blocks a file allocates just before its data block `index`
    /// (0-based in the file): one at the first block each indirect block maps,
    /// plus the double-indirect block at the first block it maps, plus the
    /// triple-indirect block at its first.
    pub fn before(self, index: u64) -> u64 {
        self.needed_for(index + 1) - self.needed_for(index)
    }

    /// Indirect blocks a file of `data_blocks` blocks holds, counted as a
    /// tree: past the direct blocks, each level (single, double, triple) maps
    /// up to pointers^level blocks through ceil(mapped / pointers^j) blocks at
    /// each of its depths j = 1..level.
    pub fn needed_for(self, data_blocks: u64) -> u64 {
        let pointers = self.pointers_per_block;
        let mut rest = data_blocks.saturating_sub(self.direct);
        let (mut total, mut span) = (0u64, pointers);
        for level in 1..=3u32 {
            let mapped = rest.min(span);
            let mut unit = pointers;
            for _ in 0..level {
                total += mapped.div_ceil(unit);
                unit = unit.saturating_mul(pointers);
            }
            rest -= mapped;
            span = span.saturating_mul(pointers);
        }
        total
    }

    /// Where, in the order a file took its indirect blocks, are those that map
    /// its data block `index`: top level first (the triple-, double- and then
    /// single-indirect block), none for a direct block. A level's block that
    /// starts mapping at data block `s` was taken after the `needed_for(s)`
    /// blocks before it and after the higher levels' blocks that start at `s`.
    pub fn chain(self, index: u64) -> Vec<u64> {
        let pointers = self.pointers_per_block;
        let Some(past) = index.checked_sub(self.direct) else {
            return Vec::new();
        };
        // Each level's first data block, and the span each of its blocks maps.
        let mut level_start = self.direct;
        let mut rest = past;
        let mut span = pointers;
        for level in 1..=3u32 {
            if rest < span {
                // Starts of the blocks on the way down: the top block of this
                // level starts at `level_start`; below it each starts at the
                // multiple of its span that holds `rest`.
                let mut starts = Vec::with_capacity(level as usize);
                let mut unit = span;
                for _ in 0..level {
                    starts.push(level_start + rest / unit * unit);
                    unit /= pointers;
                }
                return starts
                    .iter()
                    .enumerate()
                    .map(|(depth, &start)| {
                        let above = starts[..depth].iter().filter(|&&s| s == start).count();
                        self.needed_for(start) + above as u64
                    })
                    .collect();
            }
            rest -= span;
            level_start += span;
            span = span.saturating_mul(pointers);
        }
        Vec::new()
    }
}

/// The layout and policy of one allocator. Every field is a parameter; the
/// presets name their sources.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AllocatorConfig {
    pub block_size: BlockSize,
    /// Blocks per cylinder group (FFS) or block group (ext2); the last group
    /// may be shorter.
    pub group_blocks: u64,
    /// Blocks at the start of every group holding its metadata (superblock
    /// copy, group header or descriptors, bitmaps, inode table).
    pub metadata_blocks_per_group: u64,
    /// FFS's `maxbpg`: blocks one file may take before its next block is
    /// placed in another group, counted since its last switch wherever they
    /// landed (a file that spills into the next group keeps counting, as
    /// FreeBSD counts logical blocks). `None`: no limit (ext2). With
    /// [`IndirectBlocks`], the direct blocks and the indirect blocks are not
    /// counted: FFS keeps a file's blocks below `NDADDR + NINDIR` in its
    /// inode's group and then moves at every `maxbpg`-th block an indirect
    /// block maps (`ffs_blkpref`), so with `maxbpg = NINDIR` each new indirect
    /// block opens a new group.
    pub max_blocks_per_group_per_file: Option<u64>,
    /// Mark the blocks that span a track boundary used (traxtent FFS's
    /// excluded blocks; ext2's bad-block list from `mke2fs -l`).
    pub exclude_track_crossing_blocks: bool,
    pub placement: Placement,
    pub preallocation: Preallocation,
    /// Indirect blocks placed in the data stream; `None`: a file is data
    /// blocks only.
    pub indirect: Option<IndirectBlocks>,
}

/// FFS cylinder-group size in the traxtents paper's experiments (§4.2.1: "The
/// block groups created for our experiments are 32 MB in size").
pub const FFS_GROUP_BYTES: u64 = 32 << 20;
/// FreeBSD 4.x `newfs` inode density: one inode per `NFPI` (4) fragments of
/// `fsize` (1 KB) — 4096 bytes of data per inode (sbin/newfs/newfs.c).
pub const FFS_BYTES_PER_INODE: u64 = 4096;
/// A UFS1 on-disk inode (`struct dinode`) is 128 bytes.
pub const FFS_INODE_BYTES: u64 = 128;
/// FreeBSD's default `maxbpg` for 8 KB blocks: `MAXBLKPG(bsize) = bsize /
/// sizeof(daddr_t)` (sbin/newfs/newfs.c, "one indirect block worth of data
/// blocks"), with UFS1's 4-byte `daddr_t`: 8192 / 4 = 2048 blocks (16 MB) —
/// half of a 32 MB group, as the traxtents paper says (§4.2.1: "only half of
/// the blocks in a block group ... to a single file before switching").
pub const FFS_MAX_BLOCKS_PER_GROUP_PER_FILE: u64 = 2048;
/// UFS1's block pointers: 12 in the inode (`NDADDR`, sys/ufs/ufs/dinode.h),
/// 8192 / 4 = 2048 per 8 KB indirect block (`NINDIR`).
pub const FFS_INDIRECT: IndirectBlocks = IndirectBlocks {
    direct: 12,
    pointers_per_block: 2048,
};

/// ext2 blocks per group: one bitmap block's bits, 8 × the block size (32768
/// for 4 KB blocks; mke2fs's default).
pub const EXT2_GROUP_BLOCKS_4_KIB: u64 = 8 * 4096;
/// mke2fs's default `inode_ratio` of 8192 bytes per inode (e2fsprogs 1.3x/1.40
/// `mke2fs.conf` `[defaults]`, the era of the validation paper's Linux 2.6.16).
pub const EXT2_BYTES_PER_INODE: u64 = 8192;
/// ext2 revision-1 inodes as mke2fs made them then: 128 bytes.
pub const EXT2_INODE_BYTES: u64 = 128;
/// Linux 2.6.16 ext2 preallocation window, the allocated block included
/// (`EXT2_DEFAULT_PREALLOC_BLOCKS` = 8, include/linux/ext2_fs.h).
pub const EXT2_PREALLOCATION_BLOCKS: u64 = 8;
/// ext2's block pointers: 12 in the inode (`EXT2_NDIR_BLOCKS`,
/// include/linux/ext2_fs.h), 4096 / 4 = 1024 per 4 KB indirect block.
pub const EXT2_INDIRECT_4_KIB: IndirectBlocks = IndirectBlocks {
    direct: 12,
    pointers_per_block: 1024,
};

impl AllocatorConfig {
    /// FreeBSD FFS as the traxtents paper measured it ("unmodified"): 8 KB
    /// blocks, 32 MB cylinder groups whose metadata is a superblock copy, the
    /// group block and the inode blocks, `maxbpg` = 2048, next-free placement,
    /// UFS1's indirect blocks in the data stream ([`FFS_INDIRECT`]).
    ///
    /// The scans and streams fetch the indirect blocks they need
    /// ([`crate::indirect`]); programs (copy, Postmark) neither read nor write
    /// them (copy's summary says so; Postmark's files have under 12 blocks).
    pub fn ffs() -> AllocatorConfig {
        let block_size = BlockSize::FFS_8_KIB;
        let group_blocks = FFS_GROUP_BYTES / block_size.bytes();
        let inode_blocks =
            (FFS_GROUP_BYTES / FFS_BYTES_PER_INODE) * FFS_INODE_BYTES / block_size.bytes();
        AllocatorConfig {
            block_size,
            group_blocks,
            // Superblock copy + cylinder-group block + inodes (128 blocks).
            metadata_blocks_per_group: 2 + inode_blocks,
            max_blocks_per_group_per_file: Some(FFS_MAX_BLOCKS_PER_GROUP_PER_FILE),
            exclude_track_crossing_blocks: false,
            placement: Placement::NextFree,
            preallocation: Preallocation::None,
            indirect: Some(FFS_INDIRECT),
        }
    }

    /// Traxtent FFS (traxtents §4.2.2): FFS with the blocks spanning a track
    /// boundary excluded and traxtent placement.
    pub fn traxtent_ffs() -> AllocatorConfig {
        AllocatorConfig {
            exclude_track_crossing_blocks: true,
            placement: Placement::Traxtent,
            ..AllocatorConfig::ffs()
        }
    }

    /// Linux 2.6.16 ext2 with 4 KB blocks as mke2fs makes it: 32768-block
    /// groups whose metadata is a superblock copy, the group descriptors, two
    /// bitmaps and the inode table (every group is given a superblock copy: the
    /// `sparse_super` saving of a few blocks per group is not modelled), and
    /// 8-block preallocation, and its indirect blocks ([`EXT2_INDIRECT_4_KIB`])
    /// in the data stream, taken from the preallocation like data
    /// (`ext2_alloc_branch`). The scans and streams fetch the ones they need
    /// ([`crate::indirect`]); programs (Bonnie's write) never write them.
    pub fn ext2() -> AllocatorConfig {
        let block_size = BlockSize::EXT2_4_KIB;
        let group_blocks = EXT2_GROUP_BLOCKS_4_KIB;
        let group_bytes = group_blocks * block_size.bytes();
        let inode_blocks =
            (group_bytes / EXT2_BYTES_PER_INODE) * EXT2_INODE_BYTES / block_size.bytes();
        AllocatorConfig {
            block_size,
            group_blocks,
            metadata_blocks_per_group: 4 + inode_blocks,
            max_blocks_per_group_per_file: None,
            exclude_track_crossing_blocks: false,
            placement: Placement::NextFree,
            preallocation: Preallocation::Blocks(EXT2_PREALLOCATION_BLOCKS),
            indirect: Some(EXT2_INDIRECT_4_KIB),
        }
    }

    /// ext2 as the validation paper changed it (§2.4): the track map's
    /// boundary-crossing blocks given to mke2fs as bad blocks, preallocation
    /// up to the next track boundary. Placement is ext2's own (next free).
    pub fn ext2_track_aligned() -> AllocatorConfig {
        AllocatorConfig {
            exclude_track_crossing_blocks: true,
            preallocation: Preallocation::ToTrackBoundary,
            ..AllocatorConfig::ext2()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::IndirectBlocks;

    /// Proves `before` puts one indirect block at each block an indirect
    /// block starts mapping, plus the double- and triple-indirect blocks at
    /// the first block of their ranges, and none elsewhere (UFS1's layout).
    #[test]
    fn indirect_blocks_start_where_the_levels_do() {
        let ufs1 = IndirectBlocks {
            direct: 12,
            pointers_per_block: 2048,
        };
        assert_eq!(ufs1.before(0), 0);
        assert_eq!(ufs1.before(11), 0);
        assert_eq!(ufs1.before(12), 1);
        assert_eq!(ufs1.before(13), 0);
        assert_eq!(ufs1.before(12 + 2047), 0);
        assert_eq!(ufs1.before(12 + 2048), 2, "double-indirect and its first");
        assert_eq!(ufs1.before(12 + 2048 + 2048), 1);
        assert_eq!(ufs1.before(12 + 2048 + 2048 * 2048), 3, "triple level");
        let tiny = IndirectBlocks {
            direct: 1,
            pointers_per_block: 2,
        };
        // Blocks 1-2 single; 3-6 double; 7-14 triple; none past 14.
        let counts: Vec<u64> = (0..16).map(|index| tiny.before(index)).collect();
        assert_eq!(counts, vec![0, 1, 0, 2, 0, 1, 0, 3, 0, 1, 0, 2, 0, 1, 0, 0]);
    }

    /// Proves `chain` names, for every data block of small layouts, the
    /// blocks a reference finds by replaying the allocation: each level's
    /// block is the last one of its kind taken at or before the data block
    /// (kind 1 single, 2 double, 3 triple), and `needed_for` counts them all.
    #[test]
    fn chains_name_the_blocks_the_allocation_took() {
        for (direct, pointers) in [(1, 2), (2, 3), (12, 4), (0, 2)] {
            let layout = IndirectBlocks {
                direct,
                pointers_per_block: pointers,
            };
            let end = direct + pointers + pointers.pow(2) + pointers.pow(3);
            // (position, kind) of every indirect block, in the order taken.
            let mut taken: Vec<u64> = Vec::new();
            let mut last_of_kind = [None::<u64>; 4];
            for index in 0..end {
                let count = layout.before(index);
                for kind in (1..=count).rev() {
                    last_of_kind[kind as usize] = Some(taken.len() as u64);
                    taken.push(kind);
                }
                let region = if index < direct {
                    0
                } else if index < direct + pointers {
                    1
                } else if index < direct + pointers + pointers.pow(2) {
                    2
                } else {
                    3
                };
                let expected: Vec<u64> = (1..=region)
                    .rev()
                    .map(|kind| last_of_kind[kind].expect("taken before"))
                    .collect();
                assert_eq!(layout.chain(index), expected, "{layout:?} block {index}");
                assert_eq!(layout.needed_for(index + 1), taken.len() as u64);
            }
            assert!(layout.chain(end).is_empty(), "past the triple level");
        }
    }
}
