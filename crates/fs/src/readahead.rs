//! Read-ahead policies as state machines over a file's pages: given a read of
//! pages `[first, first + pages)` and what the file looks like (which pages are
//! resident or in flight, where its disk runs and tracks end), each says which
//! pages to fetch on demand and which to fetch ahead. They issue nothing: the
//! host path turns the plan into disk requests.
//!
//! | policy | source | what it fetches ahead |
//! |---|---|---|
//! | [`Policy::FfsSequentialCount`] | traxtents §4.2.1, FreeBSD FFS "unmodified" | when fewer than `max` blocks after the read are resident, `min(sequential count, blocks left in the disk cluster, max)` from the first non-resident one |
//! | [`Policy::FfsFastStart`] | traxtents §5.3 "fast start" | the same, but the sequential count starts at `max`: up to 32 contiguous blocks on a file's first access |
//! | [`Policy::FfsTraxtent`] | traxtents §4.2.2 | the same, the sequential count ignored until a non-sequential read, and never past a track boundary |
//! | [`Policy::LinuxWindow`] | Linux 2.6.16 mm/readahead.c | a current and an ahead window, sized by the rules below, up to `max` (128 KB by default; one track, or four, as the validation paper's windows) |
//! | [`Policy::TrackAligned`] | validation paper §2.4 | to the end of the track holding the read, and on sequential reads the next whole track |
//!
//! Sizes are in pages of the file's page size (FFS: its 8 KB blocks; Linux:
//! 4 KB pages). FFS's `max` is 32 blocks, "a representative default value"
//! (traxtents §4.2.1, footnote 1). Linux 2.6.16's window limits are
//! `VM_MAX_READAHEAD` = 128 KB (32 pages) and `VM_MIN_READAHEAD` = 16 KB
//! (include/linux/mm.h); its first window for a read of `n` pages is
//! `roundup_pow_of_two(n)` times 4 if that is at most `max / 32`, times 2 if at
//! most `max / 4`, else `max`; each next window is 4 × the current one while
//! that is below `max / 16`, else 2 ×, never above `max` (a 1-page reader sees
//! 4, 8, 16, 32, 32, ... pages with `max` = 32).

pub use crate::pages::{FileView, PageRange, WindowLimit};
pub use crate::readahead_state::{initial_window, next_window, LinuxPhase, SequenceState};
use crate::readahead_state::{FfsState, LinuxState};

/// What to fetch for one read: non-resident runs only, clipped to the file.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ReadPlan {
    pub demand: Vec<PageRange>,
    pub read_ahead: Vec<PageRange>,
}

impl ReadPlan {
    /// Every page the plan fetches.
    pub fn pages(&self) -> u64 {
        self.demand
            .iter()
            .chain(&self.read_ahead)
            .map(|r| r.pages)
            .sum()
    }
}

/// A read-ahead policy and its parameters (see the module's table).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Policy {
    FfsSequentialCount { max_blocks: u64 },
    FfsFastStart { max_blocks: u64 },
    FfsTraxtent { max_blocks: u64 },
    LinuxWindow { limit: WindowLimit },
    TrackAligned,
}

/// FFS's read-ahead limit: 32 blocks (traxtents §4.2.1, footnote 1).
pub const FFS_MAX_READ_AHEAD_BLOCKS: u64 = 32;
/// Linux 2.6.16's `VM_MAX_READAHEAD`: 128 KB, 32 pages of 4 KB.
pub const LINUX_MAX_READ_AHEAD_PAGES: u64 = 32;

impl Policy {
    pub fn ffs_unmodified() -> Policy {
        Policy::FfsSequentialCount {
            max_blocks: FFS_MAX_READ_AHEAD_BLOCKS,
        }
    }
    pub fn ffs_fast_start() -> Policy {
        Policy::FfsFastStart {
            max_blocks: FFS_MAX_READ_AHEAD_BLOCKS,
        }
    }
    pub fn ffs_traxtent() -> Policy {
        Policy::FfsTraxtent {
            max_blocks: FFS_MAX_READ_AHEAD_BLOCKS,
        }
    }
    /// Linux 2.6.16's default window (128 KB).
    pub fn linux_default() -> Policy {
        Policy::LinuxWindow {
            limit: WindowLimit::Pages(LINUX_MAX_READ_AHEAD_PAGES),
        }
    }
    /// The validation paper's one-track window (Fig. 7): Linux's window grown
    /// to one track, not aligned to it.
    pub fn one_track_window() -> Policy {
        Policy::LinuxWindow {
            limit: WindowLimit::Tracks(1),
        }
    }
}

/// One open file's read-ahead: the policy and its state.
#[derive(Clone, Debug)]
pub struct ReadAhead {
    policy: Policy,
    ffs: FfsState,
    linux: LinuxState,
    previous: SequenceState,
}

impl ReadAhead {
    pub fn new(policy: Policy) -> ReadAhead {
        ReadAhead {
            policy,
            ffs: FfsState::default(),
            linux: LinuxState::default(),
            previous: SequenceState::Fresh,
        }
    }
    pub fn policy(&self) -> Policy {
        self.policy
    }
    /// The Linux window state (for tests and traces).
    pub fn linux_phase(&self) -> LinuxPhase {
        self.linux.phase
    }
    /// FFS's sequential count.
    pub fn sequential_count(&self) -> u64 {
        self.ffs.sequential_count
    }

    /// The plan for a read of `pages` pages from `first`; updates the state.
    pub fn on_read(&mut self, view: &impl FileView, first: u64, pages: u64) -> ReadPlan {
        let count = view.page_count();
        if pages == 0 || first >= count {
            return ReadPlan::default();
        }
        let pages = pages.min(count - first);
        let demand = PageRange { first, pages };
        let sequential = self.previous.is_sequential(first);
        let fresh = self.previous == SequenceState::Fresh;
        self.previous = SequenceState::After {
            last: first + pages - 1,
        };
        let wanted = match self.policy {
            Policy::FfsSequentialCount { max_blocks } => self
                .ffs
                .on_read(view, demand, sequential, fresh, 1, max_blocks, false),
            Policy::FfsFastStart { max_blocks } => self.ffs.on_read(
                view, demand, sequential, fresh, max_blocks, max_blocks, false,
            ),
            Policy::FfsTraxtent { max_blocks } => self.ffs.on_read(
                view, demand, sequential, fresh, max_blocks, max_blocks, true,
            ),
            Policy::LinuxWindow { limit } => self.linux.on_read(view, demand, sequential, limit),
            Policy::TrackAligned => track_aligned(view, demand, sequential),
        };
        ReadPlan {
            demand: non_resident(view, demand),
            read_ahead: wanted
                .into_iter()
                .flat_map(|range| outside(clip(range, count), demand))
                .flat_map(|range| non_resident(view, range))
                .collect(),
        }
    }
}

/// Track-aligned: to the end of the track holding the read's last page and,
/// for a sequential reader, the next whole track (clipped at its boundary).
fn track_aligned(view: &impl FileView, demand: PageRange, sequential: bool) -> Vec<PageRange> {
    let last = demand.end() - 1;
    let track_end = last + view.pages_to_track_end(last);
    let mut ranges = vec![PageRange {
        first: demand.end(),
        pages: track_end - demand.end(),
    }];
    if sequential && track_end < view.page_count() {
        ranges.push(PageRange {
            first: track_end,
            pages: view.pages_to_track_end(track_end),
        });
    }
    ranges
}

fn clip(range: PageRange, count: u64) -> PageRange {
    let end = range.end().min(count);
    PageRange {
        first: range.first.min(end),
        pages: end - range.first.min(end),
    }
}

/// The parts of `range` before and after `demand` (read-ahead never repeats
/// the demand pages).
fn outside(range: PageRange, demand: PageRange) -> Vec<PageRange> {
    let before = PageRange {
        first: range.first,
        pages: range.end().min(demand.first).saturating_sub(range.first),
    };
    let after_first = range.first.max(demand.end());
    let after = PageRange {
        first: after_first,
        pages: range.end().saturating_sub(after_first),
    };
    [before, after]
        .into_iter()
        .filter(|r| r.pages > 0)
        .collect()
}

/// The runs of non-resident pages in `range`.
pub(crate) fn non_resident(view: &impl FileView, range: PageRange) -> Vec<PageRange> {
    let mut runs: Vec<PageRange> = Vec::new();
    for index in range.first..range.end() {
        if view.is_resident(index) {
            continue;
        }
        match runs.last_mut() {
            Some(run) if run.end() == index => run.pages += 1,
            _ => runs.push(PageRange {
                first: index,
                pages: 1,
            }),
        }
    }
    runs
}
