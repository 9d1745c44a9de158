//! Reading through indirect blocks. Before a file system can read a page past
//! a file's direct blocks it needs the indirect blocks that map it: Linux's
//! ext2 (`ext2_get_branch`) and FreeBSD's FFS (`ufs_bmaparray`) each read a
//! missing one with a synchronous `bread`, top level first, before the data
//! request can be built. A host asks [`IndirectMap::next_needed`] which block
//! a planned read still needs, fetches it as a request of its own (through the
//! same queue as data), waits for it, and asks again; when every block is
//! cached it issues the data.
//!
//! Fetched indirect blocks live in the page cache under [`METADATA_FILE`],
//! keyed by block number: Linux keeps them in the block device's page cache,
//! so they share the file pages' memory bound and replacement, and each
//! lookup marks the block accessed (`touch_buffer`).
//!
//! Invariant: [`IndirectMap::next_needed`] names only blocks of the file's own
//! indirect list, and only ones the cache does not hold.

use crate::block::BlockNumber;
use crate::cache::{PageCache, PageKey};
use crate::config::IndirectBlocks;
use crate::pages::PageRange;
use crate::FileId;

/// The page-cache file of metadata blocks (never a data file's id).
pub const METADATA_FILE: FileId = FileId(u64::MAX);

/// The cache key of a metadata block.
pub fn metadata_key(block: BlockNumber) -> PageKey {
    PageKey {
        file: METADATA_FILE,
        index: block.0,
    }
}

/// Puts indirect block `block` in `cache` as a clean page (read in, or left by
/// the file's writer) and returns the pages evicted to make room. Clean pages
/// make room for it; only a cache whose every page is dirty could refuse, which
/// the read-only scans and streams never leave, and a refused block would be
/// fetched again by the next read that needs it, never assumed mapped.
pub fn cache_block(cache: &mut PageCache, block: BlockNumber) -> Vec<PageKey> {
    cache.insert(metadata_key(block)).unwrap_or_default()
}

/// A file's indirect blocks as a reader needs them: the layout and the blocks
/// in the order the file took them (`Allocator::indirect_blocks`).
#[derive(Clone, Copy, Debug)]
pub struct IndirectMap<'a> {
    layout: IndirectBlocks,
    blocks: &'a [BlockNumber],
}

/// What a planned read still needs before its data can be requested.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mapping {
    /// Every indirect block it needs is cached.
    Mapped,
    /// This block is neither cached nor being read: fetch it.
    Fetch(BlockNumber),
    /// This block is being read: wait for it.
    Wait(BlockNumber),
}

impl<'a> IndirectMap<'a> {
    /// `None` when the file system has no indirect blocks or the file none.
    pub fn new(layout: Option<IndirectBlocks>, blocks: &'a [BlockNumber]) -> Option<Self> {
        let layout = layout?;
        (!blocks.is_empty()).then_some(IndirectMap { layout, blocks })
    }

    /// Puts every one of the file's indirect blocks in `cache` as used twice
    /// (on Linux's active list, at the LRU's recent end): the state the file's
    /// writer leaves them in, having updated each once per block it maps. The
    /// caller says why its file's blocks are cached.
    pub fn warm(&self, cache: &mut PageCache) {
        for &block in self.blocks {
            cache_block(cache, block);
            cache.access(metadata_key(block));
            cache.access(metadata_key(block));
        }
    }

    /// The first indirect block (in page order, top level first) that the
    /// pages of `ranges` need and `cache` does not hold: to fetch, or to wait
    /// for when `in_flight` says it is being read. Each cached block the pages
    /// use is marked accessed once.
    pub fn next_needed(
        &self,
        ranges: &[PageRange],
        cache: &mut PageCache,
        in_flight: impl Fn(BlockNumber) -> bool,
    ) -> Mapping {
        let mut used: Vec<BlockNumber> = Vec::new();
        for range in ranges {
            let mut index = range.first.max(self.layout.direct);
            while index < range.end() {
                for position in self.layout.chain(index) {
                    let Some(&block) = self.blocks.get(position as usize) else {
                        continue;
                    };
                    if used.contains(&block) {
                        continue;
                    }
                    if !cache.access(metadata_key(block)) {
                        return if in_flight(block) {
                            Mapping::Wait(block)
                        } else {
                            Mapping::Fetch(block)
                        };
                    }
                    used.push(block);
                }
                // The next page with another single-indirect block.
                let past = index - self.layout.direct;
                let pointers = self.layout.pointers_per_block;
                index = self.layout.direct + (past / pointers + 1) * pointers;
            }
        }
        Mapping::Mapped
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cache::Replacement;

    // Proves a read needs the blocks mapping its pages top level first, none
    // for direct pages, waits for one in flight, and is mapped once they are
    // cached; the metadata lives in the cache under its own file.
    #[test]
    fn a_read_needs_its_indirect_blocks_top_level_first() {
        let layout = IndirectBlocks {
            direct: 2,
            pointers_per_block: 2,
        };
        // Data 0-1 direct; IND at 2; DIND + IND at 4; IND at 6.
        let blocks = [
            BlockNumber(100),
            BlockNumber(200),
            BlockNumber(201),
            BlockNumber(300),
        ];
        let map = IndirectMap::new(Some(layout), &blocks).unwrap();
        let mut cache = PageCache::new(64 * 4096, 4096, Replacement::Lru).unwrap();
        let range = |first, pages| [PageRange { first, pages }];
        let none = |_| false;
        assert_eq!(
            map.next_needed(&range(0, 2), &mut cache, none),
            Mapping::Mapped
        );
        assert_eq!(
            map.next_needed(&range(1, 2), &mut cache, none),
            Mapping::Fetch(BlockNumber(100))
        );
        assert_eq!(
            map.next_needed(&range(1, 2), &mut cache, |b| b == BlockNumber(100)),
            Mapping::Wait(BlockNumber(100))
        );
        cache.insert(metadata_key(BlockNumber(100))).unwrap();
        assert_eq!(
            map.next_needed(&range(1, 2), &mut cache, none),
            Mapping::Mapped
        );
        assert_eq!(
            map.next_needed(&range(3, 4), &mut cache, none),
            Mapping::Fetch(BlockNumber(200)),
            "the double-indirect block before its child"
        );
        cache.insert(metadata_key(BlockNumber(200))).unwrap();
        assert_eq!(
            map.next_needed(&range(3, 4), &mut cache, none),
            Mapping::Fetch(BlockNumber(201))
        );
        cache.insert(metadata_key(BlockNumber(201))).unwrap();
        assert_eq!(
            map.next_needed(&range(3, 4), &mut cache, none),
            Mapping::Fetch(BlockNumber(300))
        );
        assert!(IndirectMap::new(None, &blocks).is_none());
        assert!(IndirectMap::new(Some(layout), &[]).is_none());
    }
}
