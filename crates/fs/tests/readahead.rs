//! Read-ahead policies, each on a synthetic file whose tracks and disk runs
//! are easy to count: Linux's window ramp and sizes, FFS's sequential-count
//! ramp, fast start, traxtent clipping, the one-track window and track-aligned
//! fetches; then seeded random reads checking, for every policy, that plans
//! stay in the file, never refetch resident pages, respect their size limits,
//! and (traxtent FFS, track-aligned) never cross a track boundary.

use proptest::prelude::*;
use spinstack_fs::readahead::{
    initial_window, next_window, FileView, LinuxPhase, PageRange, Policy, ReadAhead, ReadPlan,
    WindowLimit,
};
use spinstack_fs::view::LaidOutFile;
use spinstack_fs::{Allocator, AllocatorConfig, BlockSize, Placement};
use spinstack_sim::rng::SplitMix64;
use std::cell::RefCell;
use std::collections::BTreeSet;

mod common;

/// A file of `pages` pages laid out contiguously, tracks of `track_pages`
/// starting `offset` pages before the file (so the first track is short by
/// `offset`), with a break in disk contiguity at every track boundary when
/// `breaks` (an excluded block between tracks).
struct Synthetic {
    pages: u64,
    track_pages: u64,
    offset: u64,
    breaks: bool,
    resident: RefCell<BTreeSet<u64>>,
}

impl Synthetic {
    fn new(pages: u64, track_pages: u64, offset: u64, breaks: bool) -> Synthetic {
        Synthetic {
            pages,
            track_pages,
            offset,
            breaks,
            resident: RefCell::new(BTreeSet::new()),
        }
    }
    fn to_track_end(&self, index: u64) -> u64 {
        self.track_pages - (index + self.offset) % self.track_pages
    }
    /// Marks a plan's pages resident (the reads were issued).
    fn issue(&self, plan: &ReadPlan) {
        for range in plan.demand.iter().chain(&plan.read_ahead) {
            self.resident.borrow_mut().extend(range.first..range.end());
        }
    }
}

impl FileView for Synthetic {
    fn page_count(&self) -> u64 {
        self.pages
    }
    fn is_resident(&self, index: u64) -> bool {
        self.resident.borrow().contains(&index)
    }
    fn contiguous_from(&self, index: u64) -> u64 {
        let left = self.pages - index;
        if self.breaks {
            self.to_track_end(index).min(left)
        } else {
            left
        }
    }
    fn pages_to_track_end(&self, index: u64) -> u64 {
        self.to_track_end(index).min(self.pages - index)
    }
    fn track_pages_at(&self, _index: u64) -> u64 {
        self.track_pages
    }
}

/// Reads pages 0..count one at a time; returns each read's read-ahead sizes.
fn sequential_reads(policy: Policy, view: &Synthetic, count: u64) -> Vec<Vec<u64>> {
    let mut read_ahead = ReadAhead::new(policy);
    (0..count)
        .map(|page| {
            let plan = read_ahead.on_read(view, page, 1);
            view.issue(&plan);
            plan.read_ahead.iter().map(|r| r.pages).collect()
        })
        .collect()
}

fn nonempty(sizes: Vec<Vec<u64>>) -> Vec<u64> {
    sizes.into_iter().flatten().collect()
}

/// Linux 2.6.16's window sizes: first window 4 pages for a 1-page read (16 KB,
/// VM_MIN_READAHEAD), then 8, 16, 32 and 32 (128 KB, VM_MAX_READAHEAD).
#[test]
fn linux_window_ramps_as_documented() {
    assert_eq!(initial_window(1, 32), 4);
    assert_eq!(initial_window(8, 32), 16);
    assert_eq!(initial_window(9, 32), 32);
    assert_eq!(next_window(1, 32), 4, "below max/16: times 4");
    assert_eq!(next_window(4, 32), 8);
    assert_eq!(next_window(32, 32), 32);
    let view = Synthetic::new(200, 1000, 0, false);
    let sizes = nonempty(sequential_reads(Policy::linux_default(), &view, 120));
    // The first window [0, 4) less the demand page, then the ahead windows.
    assert_eq!(sizes[..6], [3, 8, 16, 32, 32, 32]);
}

/// A fresh file read away from page 0 is a random read (demand only); the
/// next sequential read opens the first window.
#[test]
fn linux_random_then_sequential() {
    let view = Synthetic::new(200, 1000, 0, false);
    let mut read_ahead = ReadAhead::new(Policy::linux_default());
    let plan = read_ahead.on_read(&view, 100, 1);
    assert_eq!(
        plan.demand,
        vec![PageRange {
            first: 100,
            pages: 1
        }]
    );
    assert!(plan.read_ahead.is_empty());
    assert_eq!(read_ahead.linux_phase(), LinuxPhase::Random);
    view.issue(&plan);
    let plan = read_ahead.on_read(&view, 101, 1);
    assert_eq!(
        plan.read_ahead,
        vec![PageRange {
            first: 102,
            pages: 3
        }]
    );
}

/// Unmodified FFS: the first read fetches the block and prefetches one more
/// (traxtents §5.3, `head *`); then the read-ahead grows with the sequential
/// count, 2, 3, 4, ... up to 32 blocks.
#[test]
fn ffs_sequential_count_ramps_to_32() {
    let view = Synthetic::new(2000, 100_000, 0, false);
    let sizes = nonempty(sequential_reads(Policy::ffs_unmodified(), &view, 1000));
    assert_eq!(sizes[..5], [1, 2, 3, 4, 5]);
    assert_eq!(*sizes.iter().max().unwrap(), 32);
    assert!(
        sizes.windows(2).all(|w| w[1] >= w[0]),
        "never shrinks on a sequential read"
    );
}

/// Fast start prefetches 32 contiguous blocks on the first access, fewer when
/// the disk cluster ends first.
#[test]
fn fast_start_prefetches_32_blocks_at_once() {
    let view = Synthetic::new(2000, 100_000, 0, false);
    assert_eq!(
        sequential_reads(Policy::ffs_fast_start(), &view, 1)[0],
        vec![32]
    );
    let broken = Synthetic::new(2000, 10, 0, true);
    assert_eq!(
        sequential_reads(Policy::ffs_fast_start(), &broken, 1)[0],
        vec![9]
    );
}

/// Traxtent FFS fetches the whole first traxtent on a file's first access
/// (traxtents §5.3: "the entire first traxtent"), stops at every boundary, and
/// falls back to the sequential count after a non-sequential read.
#[test]
fn traxtent_ffs_fetches_to_the_track_boundary() {
    let view = Synthetic::new(2000, 20, 0, false);
    let mut read_ahead = ReadAhead::new(Policy::ffs_traxtent());
    let plan = read_ahead.on_read(&view, 0, 1);
    assert_eq!(
        plan.read_ahead,
        vec![PageRange {
            first: 1,
            pages: 19
        }]
    );
    view.issue(&plan);
    let plan = read_ahead.on_read(&view, 1, 1);
    assert_eq!(
        plan.read_ahead,
        vec![PageRange {
            first: 20,
            pages: 20
        }],
        "the next whole track"
    );
    view.issue(&plan);
    let plan = read_ahead.on_read(&view, 500, 1);
    assert_eq!(
        plan.read_ahead,
        vec![PageRange {
            first: 501,
            pages: 1
        }],
        "sequential count after a jump"
    );
}

/// The one-track window grows to one track (20 pages here) and is not
/// aligned to tracks; the track-aligned policy fetches to the boundary and,
/// reading sequentially, the next whole track.
#[test]
fn one_track_window_and_track_aligned() {
    let view = Synthetic::new(400, 20, 5, false);
    let sizes = nonempty(sequential_reads(Policy::one_track_window(), &view, 200));
    assert_eq!(*sizes.iter().max().unwrap(), 20);
    assert_eq!(sizes[..4], [1, 4, 8, 16], "max/32 = 0: first window 2 x 1");

    let view = Synthetic::new(400, 20, 5, false);
    let mut read_ahead = ReadAhead::new(Policy::TrackAligned);
    let plan = read_ahead.on_read(&view, 0, 1);
    // The first track holds 15 of the file's pages (offset 5).
    assert_eq!(
        plan.read_ahead,
        vec![
            PageRange {
                first: 1,
                pages: 14
            },
            PageRange {
                first: 15,
                pages: 20
            }
        ]
    );
    view.issue(&plan);
    let plan = read_ahead.on_read(&view, 200, 3);
    assert_eq!(
        plan.demand,
        vec![PageRange {
            first: 200,
            pages: 3
        }]
    );
    assert_eq!(
        plan.read_ahead,
        vec![PageRange {
            first: 203,
            pages: 12
        }],
        "to the boundary at 215 only"
    );
}

/// A laid-out traxtent-FFS file (tracks of 10 sectors, 4-sector blocks): its
/// disk runs end at excluded blocks, but a boundary falling between two blocks
/// (LBN 20, between blocks 4 and 5) excludes nothing — the paper's "special
/// case where there is no excluded block between traxtents" — so the track end
/// comes before the run's end there.
#[test]
fn a_laid_out_file_reports_runs_and_track_ends() {
    let map = common::map_of(&[10; 40]);
    let config = AllocatorConfig {
        exclude_track_crossing_blocks: true,
        placement: Placement::Traxtent,
        ..common::small(1000, None)
    };
    let mut allocator = Allocator::new(&map, config).unwrap();
    let file = allocator.create(0).unwrap();
    allocator.allocate(file, 12).unwrap();
    let runs = allocator.runs(file).unwrap();
    let view = LaidOutFile::new(runs, &map, BlockSize::from_bytes(2048).unwrap(), |_| false);
    assert_eq!(view.page_count(), 12);
    assert_eq!(runs[0].first.0, 3, "blocks 0, 1 metadata, 2 excluded");
    assert_eq!(
        view.contiguous_from(0),
        4,
        "blocks 3..7, then block 7 is excluded"
    );
    assert_eq!(
        view.pages_to_track_end(0),
        2,
        "blocks 3, 4: the track ends at LBN 20"
    );
    assert_eq!(view.pages_to_track_end(2), 2, "blocks 5, 6");
    for index in 0..12 {
        assert!(
            view.pages_to_track_end(index) <= view.contiguous_from(index),
            "page {index}"
        );
    }
    assert_eq!(view.track_pages_at(0), 2);
}

/// One seeded run of mostly sequential reads with jumps, under `policy`.
fn random_reads(seed: u64, policy: Policy) -> Result<(), String> {
    let mut rng = SplitMix64::new(seed);
    let view = Synthetic::new(
        50 + rng.below(500),
        3 + rng.below(40),
        rng.below(3),
        rng.below(2) == 0,
    );
    let view = Synthetic {
        offset: view.offset % view.track_pages,
        ..view
    };
    let mut read_ahead = ReadAhead::new(policy);
    let mut position = 0;
    for step in 0..200 {
        let at = format!("seed {seed}, {policy:?}, step {step}");
        if rng.below(8) == 0 {
            position = rng.below(view.pages);
        }
        let pages = 1 + rng.below(4);
        let plan = read_ahead.on_read(&view, position, pages);
        let mut seen = BTreeSet::new();
        for range in plan.demand.iter().chain(&plan.read_ahead) {
            if range.pages == 0 || range.end() > view.pages {
                return Err(format!(
                    "{at}: {range:?} outside a {}-page file",
                    view.pages
                ));
            }
            for index in range.first..range.end() {
                if view.is_resident(index) || !seen.insert(index) {
                    return Err(format!("{at}: page {index} fetched again"));
                }
            }
        }
        for range in &plan.read_ahead {
            let limit = match policy {
                Policy::FfsSequentialCount { max_blocks } | Policy::FfsFastStart { max_blocks } => {
                    max_blocks
                }
                Policy::FfsTraxtent { max_blocks } => {
                    max_blocks.min(view.pages_to_track_end(range.first))
                }
                Policy::LinuxWindow {
                    limit: WindowLimit::Pages(max),
                } => max,
                Policy::LinuxWindow {
                    limit: WindowLimit::Tracks(k),
                } => k * view.track_pages,
                Policy::TrackAligned => view.pages_to_track_end(range.first),
            };
            if range.pages > limit {
                return Err(format!("{at}: read-ahead {range:?} exceeds {limit}"));
            }
        }
        view.issue(&plan);
        position = (position + pages).min(view.pages - 1);
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    /// Every policy's plans are inside the file, fetch nothing twice, and keep
    /// to their limits; traxtent FFS and track-aligned never cross a track
    /// boundary (their limit is the distance to it).
    #[test]
    fn plans_keep_their_limits(seed in any::<u64>()) {
        for policy in [
            Policy::ffs_unmodified(),
            Policy::ffs_fast_start(),
            Policy::ffs_traxtent(),
            Policy::linux_default(),
            Policy::one_track_window(),
            Policy::LinuxWindow { limit: WindowLimit::Tracks(4) },
            Policy::TrackAligned,
        ] {
            random_reads(seed, policy).map_err(TestCaseError::fail)?;
        }
    }
}
