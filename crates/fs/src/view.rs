//! A file as the read-ahead policies see it ([`FileView`]): its blocks from
//! the allocator, the volume's track map, and which pages are resident. One
//! page per file-system block (Linux's 4 KB pages over ext2's 4 KB blocks;
//! FFS's buffers are its 8 KB blocks).

use crate::block::{BlockNumber, BlockRun, BlockSize};
use crate::pages::FileView;
use spinstack_trackmap::TrackMap;

/// A laid-out file: `runs` in file order over the volume `map` describes;
/// `resident(index)` says whether a page is cached or in flight.
pub struct LaidOutFile<'a, R: Fn(u64) -> bool> {
    runs: &'a [BlockRun],
    /// The file page each run starts at.
    run_starts: Vec<u64>,
    page_count: u64,
    map: &'a TrackMap,
    block_size: BlockSize,
    resident: R,
}

impl<'a, R: Fn(u64) -> bool> LaidOutFile<'a, R> {
    pub fn new(
        runs: &'a [BlockRun],
        map: &'a TrackMap,
        block_size: BlockSize,
        resident: R,
    ) -> Self {
        let mut run_starts = Vec::with_capacity(runs.len());
        let mut page_count = 0;
        for run in runs {
            run_starts.push(page_count);
            page_count += run.blocks;
        }
        LaidOutFile {
            runs,
            run_starts,
            page_count,
            map,
            block_size,
            resident,
        }
    }

    /// The run holding file page `index` and the page's offset in it.
    fn locate(&self, index: u64) -> Option<(BlockRun, u64)> {
        if index >= self.page_count {
            return None;
        }
        let run = self.run_starts.partition_point(|&start| start <= index) - 1;
        Some((self.runs[run], index - self.run_starts[run]))
    }

    /// The disk block holding file page `index`.
    pub fn block_of(&self, index: u64) -> Option<BlockNumber> {
        self.locate(index)
            .map(|(run, offset)| run.first.plus(offset))
    }
}

impl<R: Fn(u64) -> bool> FileView for LaidOutFile<'_, R> {
    fn page_count(&self) -> u64 {
        self.page_count
    }
    fn is_resident(&self, index: u64) -> bool {
        (self.resident)(index)
    }
    fn contiguous_from(&self, index: u64) -> u64 {
        self.locate(index)
            .map_or(0, |(run, offset)| run.blocks - offset)
    }
    fn pages_to_track_end(&self, index: u64) -> u64 {
        let Some((run, offset)) = self.locate(index) else {
            return 0;
        };
        let lbn = self.block_size.first_lbn(run.first.plus(offset));
        let track_end = self
            .map
            .next_boundary_after(lbn)
            .map_or(self.map.capacity().0, |b| b.0);
        let whole_blocks = (track_end - lbn.0) / self.block_size.sectors().0;
        whole_blocks.clamp(1, run.blocks - offset)
    }
    fn track_pages_at(&self, index: u64) -> u64 {
        let track = self
            .block_of(index)
            .and_then(|block| self.map.track_containing(self.block_size.first_lbn(block)));
        track.map_or(1, |t| (t.sectors.0 / self.block_size.sectors().0).max(1))
    }
}
