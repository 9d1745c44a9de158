//! A file as the read-ahead policies see it ([`FileView`]): its blocks from
//! the allocator, the volume's track map, and which pages are resident. One
//! page per file-system block (Linux's 4 KB pages over ext2's 4 KB blocks;
//! FFS's buffers are its 8 KB blocks).

use crate::block::{BlockNumber, BlockRun, BlockSize};
use crate::pages::FileView;
use spinstack_trackmap::TrackMap;
use std::borrow::Cow;

/// A laid-out file: `runs` in file order over the volume `map` describes;
/// `resident(index)` says whether a page is cached or in flight.
pub struct LaidOutFile<'a, R: Fn(u64) -> bool> {
    runs: &'a [BlockRun],
    /// The file page each run starts at (borrowed when the caller keeps them
    /// across many views: building them is linear in the runs).
    run_starts: Cow<'a, [u64]>,
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
        let run_starts = run_starts(runs);
        let page_count = runs.iter().map(|r| r.blocks).sum();
        LaidOutFile {
            runs,
            run_starts: Cow::Owned(run_starts),
            page_count,
            map,
            block_size,
            resident,
        }
    }

    /// As [`LaidOutFile::new`], with `starts` = [`run_starts`]`(runs)` kept by
    /// the caller, so a view costs nothing to build over a file of many runs
    /// (a track-aligned file has one per stripe).
    pub fn with_run_starts(
        runs: &'a [BlockRun],
        starts: &'a [u64],
        map: &'a TrackMap,
        block_size: BlockSize,
        resident: R,
    ) -> Self {
        debug_assert_eq!(starts.len(), runs.len());
        let page_count = match (runs.last(), starts.last()) {
            (Some(run), Some(start)) => start + run.blocks,
            _ => 0,
        };
        LaidOutFile {
            runs,
            run_starts: Cow::Borrowed(starts),
            page_count,
            map,
            block_size,
            resident,
        }
    }

    /// Which run holds file page `index`, and the page's offset in it.
    fn position(&self, index: u64) -> Option<(usize, u64)> {
        if index >= self.page_count {
            return None;
        }
        let run = self.run_starts.partition_point(|&start| start <= index) - 1;
        Some((run, index - self.run_starts[run]))
    }

    /// The run holding file page `index` and the page's offset in it.
    fn locate(&self, index: u64) -> Option<(BlockRun, u64)> {
        self.position(index)
            .map(|(run, offset)| (self.runs[run], offset))
    }

    /// The disk block holding file page `index`.
    pub fn block_of(&self, index: u64) -> Option<BlockNumber> {
        self.locate(index)
            .map(|(run, offset)| run.first.plus(offset))
    }
}

/// The file page each of `runs` starts at.
pub fn run_starts(runs: &[BlockRun]) -> Vec<u64> {
    runs.iter()
        .scan(0, |page, run| {
            let start = *page;
            *page += run.blocks;
            Some(start)
        })
        .collect()
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
    /// The file's pages from `index` on whose blocks lie before the track
    /// boundary after page `index`'s block: the rest of its run, then the runs
    /// after it that go on upward inside the same track past a gap (the
    /// indirect block a file system placed there), so a track's window is the
    /// file's part of the track; at least 1.
    fn pages_to_track_end(&self, index: u64) -> u64 {
        let Some((first_run, first_offset)) = self.position(index) else {
            return 0;
        };
        let sectors = self.block_size.sectors().0;
        let start = self
            .block_size
            .first_lbn(self.runs[first_run].first.plus(first_offset));
        let track_end = self
            .map
            .next_boundary_after(start)
            .map_or(self.map.capacity().0, |b| b.0);
        let mut pages = 0;
        let mut from = start.0;
        for (position, run) in self.runs.iter().enumerate().skip(first_run) {
            let offset = if position == first_run {
                first_offset
            } else {
                0
            };
            let first = self.block_size.first_lbn(run.first.plus(offset)).0;
            if first < from || first >= track_end {
                break;
            }
            let room = (track_end - first) / sectors;
            let blocks = run.blocks - offset;
            pages += room.min(blocks);
            if room < blocks {
                break;
            }
            from = first + blocks * sectors;
        }
        pages.max(1)
    }
    fn track_pages_at(&self, index: u64) -> u64 {
        let track = self
            .block_of(index)
            .and_then(|block| self.map.track_containing(self.block_size.first_lbn(block)));
        track.map_or(1, |t| (t.sectors.0 / self.block_size.sectors().0).max(1))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use spinstack_sim::units::{Lbn, Sectors};
    use spinstack_trackmap::Track;

    // Proves a view over starts the caller kept answers every page as one that
    // builds its own: the same block, the same contiguous pages, the same count,
    // for uneven runs and past the end.
    #[test]
    fn kept_run_starts_answer_as_built_ones() {
        let runs = [(10, 3), (20, 1), (40, 7), (100, 5)].map(|(first, blocks)| BlockRun {
            first: BlockNumber(first),
            blocks,
        });
        let tracks = vec![Track {
            first: Lbn(0),
            sectors: Sectors(2048),
            location: None,
            uncertain: false,
        }];
        let map = TrackMap::new("test", "one track", Sectors(2048), tracks, Vec::new()).unwrap();
        let size = BlockSize::EXT2_4_KIB;
        let built = LaidOutFile::new(&runs, &map, size, |_| false);
        let starts = run_starts(&runs);
        assert_eq!(starts, vec![0, 3, 4, 11]);
        let kept = LaidOutFile::with_run_starts(&runs, &starts, &map, size, |_| false);
        assert_eq!(kept.page_count(), 16);
        assert_eq!(built.page_count(), kept.page_count());
        for index in 0..20 {
            assert_eq!(built.block_of(index), kept.block_of(index), "page {index}");
            assert_eq!(
                built.contiguous_from(index),
                kept.contiguous_from(index),
                "page {index}"
            );
        }
    }

    // Proves a track's window follows the file past a one-block gap inside the
    // track (an indirect block) and stops at the boundary, at a run that goes
    // back down, and at the file's end.
    #[test]
    fn the_pages_to_a_track_end_follow_the_file_across_a_gap() {
        let tracks = (0..4)
            .map(|t| Track {
                first: Lbn(t * 80),
                sectors: Sectors(80),
                location: None,
                uncertain: false,
            })
            .collect();
        let map = TrackMap::new("test", "four tracks", Sectors(320), tracks, Vec::new()).unwrap();
        let size = BlockSize::EXT2_4_KIB; // 8 sectors: 10 blocks a track
        let run = |first, blocks| BlockRun {
            first: BlockNumber(first),
            blocks,
        };
        // Blocks 2-4, gap at 5, 6-13 (crossing into track 1), then back to 0.
        let runs = [run(2, 3), run(6, 8), run(0, 1)];
        let view = LaidOutFile::new(&runs, &map, size, |_| false);
        assert_eq!(view.pages_to_track_end(0), 3 + 4, "blocks 2-4 and 6-9");
        assert_eq!(view.pages_to_track_end(2), 1 + 4);
        assert_eq!(view.pages_to_track_end(3), 4, "blocks 6-9");
        assert_eq!(
            view.pages_to_track_end(7),
            4,
            "blocks 10-13, then the run down to 0"
        );
        assert_eq!(
            view.pages_to_track_end(11),
            1,
            "block 0, the file's last page"
        );
        assert_eq!(view.pages_to_track_end(12), 0, "past the file");
    }
}
