//! The states behind [`crate::readahead`]'s policies, each an enum or a small
//! struct with its transitions in a table.

use crate::pages::{FileView, PageRange, WindowLimit};

/// Where the reader was: the question "is this read sequential?".
///
/// | state | read of `[first, ..)` | sequential? | next state |
/// |---|---|---|---|
/// | `Fresh` | any | `first == 0` (Linux's `prev_page` starts at -1) | `After { last }` |
/// | `After { last }` | any | `first == last + 1`, or `first == last` (the rest of a partly read page) | `After { last }` |
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SequenceState {
    Fresh,
    After { last: u64 },
}

impl SequenceState {
    pub(crate) fn is_sequential(self, first: u64) -> bool {
        match self {
            SequenceState::Fresh => first == 0,
            SequenceState::After { last } => first == last + 1 || first == last,
        }
    }
}

/// FreeBSD's sequential count saturates at 127 (`IO_SEQMAX`, sys/sys/vnode.h);
/// read-ahead never uses more than its 32-block limit of it.
const SEQUENTIAL_COUNT_MAX: u64 = 127;

/// FFS's sequential count.
///
/// | state | read | next |
/// |---|---|---|
/// | fresh file | any | count = initial (1 unmodified; `max` fast start and traxtent), session sequential |
/// | count `c` | sequential, `n` blocks | `min(c + n, 127)` |
/// | count `c` | not sequential | 1; the session is no longer sequential |
///
/// Read-ahead after each read, when fewer than `max` blocks after it are
/// resident: `min(count, contiguous blocks on disk, max)` blocks from the
/// first non-resident one; traxtent FFS uses `max` for the count while the
/// session is sequential and clips at the track boundary.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct FfsState {
    pub(crate) sequential_count: u64,
    pub(crate) non_sequential_seen: bool,
}

impl FfsState {
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn on_read(
        &mut self,
        view: &impl FileView,
        demand: PageRange,
        sequential: bool,
        fresh: bool,
        initial: u64,
        max: u64,
        traxtent: bool,
    ) -> Vec<PageRange> {
        if fresh {
            self.sequential_count = initial;
        } else if sequential {
            self.sequential_count =
                (self.sequential_count + demand.pages).min(SEQUENTIAL_COUNT_MAX);
        } else {
            self.sequential_count = 1;
            self.non_sequential_seen = true;
        }
        let count = if traxtent && !self.non_sequential_seen {
            max
        } else {
            self.sequential_count
        };
        let after = demand.end();
        let resident = (after..view.page_count())
            .take(max as usize)
            .take_while(|&index| view.is_resident(index))
            .count() as u64;
        let start = after + resident;
        if resident >= max || start >= view.page_count() {
            return Vec::new();
        }
        let mut length = count.min(view.contiguous_from(start)).min(max);
        if traxtent {
            length = length.min(view.pages_to_track_end(start));
        }
        vec![PageRange {
            first: start,
            pages: length,
        }]
    }
}

/// Linux 2.6.16's read-ahead windows.
///
/// | phase | read | next phase | fetched ahead |
/// |---|---|---|---|
/// | `Fresh` or `Random` | sequential (a fresh file's read at 0; or the read after the last) | `Windows`: current = `[first, first + init(n))`, no ahead window (one at once when `n >= max`) | the current window |
/// | any | not sequential | `Random` | nothing (the read only) |
/// | `Windows`, no ahead window | sequential | ahead = `[start + size, + next(size))`; if the read reaches into it, shifted at once as below | the ahead window (and the next) |
/// | `Windows` with ahead | sequential, reaching `ahead_start` | current = ahead; a new ahead = `next(size)` after it | the new ahead window |
/// | `Windows` with ahead | sequential, before `ahead_start` | unchanged | nothing |
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LinuxPhase {
    Fresh,
    Random,
    Windows {
        start: u64,
        size: u64,
        /// `ahead_size` 0: no ahead window yet.
        ahead_start: u64,
        ahead_size: u64,
    },
}

#[derive(Clone, Copy, Debug)]
pub(crate) struct LinuxState {
    pub(crate) phase: LinuxPhase,
}

impl Default for LinuxState {
    fn default() -> LinuxState {
        LinuxState {
            phase: LinuxPhase::Fresh,
        }
    }
}

/// Linux's first window for a read of `pages` (see the module documentation).
pub fn initial_window(pages: u64, max: u64) -> u64 {
    let rounded = pages.max(1).next_power_of_two();
    if rounded <= max / 32 {
        rounded * 4
    } else if rounded <= max / 4 {
        rounded * 2
    } else {
        max
    }
}

/// Linux's next window after one of `current` pages.
pub fn next_window(current: u64, max: u64) -> u64 {
    let grown = if current < max / 16 {
        current * 4
    } else {
        current * 2
    };
    grown.min(max)
}

impl LinuxState {
    pub(crate) fn on_read(
        &mut self,
        view: &impl FileView,
        demand: PageRange,
        sequential: bool,
        limit: WindowLimit,
    ) -> Vec<PageRange> {
        let max = match limit {
            WindowLimit::Pages(pages) => pages,
            WindowLimit::Tracks(tracks) => tracks * view.track_pages_at(demand.first),
        }
        .max(1);
        if !sequential {
            self.phase = LinuxPhase::Random;
            return Vec::new();
        }
        match self.phase {
            LinuxPhase::Fresh | LinuxPhase::Random => {
                let size = initial_window(demand.pages, max);
                let (ahead_start, ahead_size) = if demand.pages >= max {
                    (demand.first + size, next_window(size, max))
                } else {
                    (demand.first + size, 0)
                };
                self.phase = LinuxPhase::Windows {
                    start: demand.first,
                    size,
                    ahead_start,
                    ahead_size,
                };
                let mut fetch = vec![PageRange {
                    first: demand.first,
                    pages: size,
                }];
                if ahead_size > 0 {
                    fetch.push(PageRange {
                        first: ahead_start,
                        pages: ahead_size,
                    });
                }
                fetch
            }
            LinuxPhase::Windows {
                start,
                size,
                ahead_size: 0,
                ..
            } => {
                let ahead = PageRange {
                    first: start + size,
                    pages: next_window(size, max),
                };
                self.phase = LinuxPhase::Windows {
                    start,
                    size,
                    ahead_start: ahead.first,
                    ahead_size: ahead.pages,
                };
                if demand.end() <= ahead.first {
                    return vec![ahead];
                }
                // A read that already reaches into the new ahead window shifts
                // into it at once and gets the next one (2.6.16 makes the ahead
                // window and then checks the crossing in the same call).
                let next = PageRange {
                    first: ahead.end(),
                    pages: next_window(ahead.pages, max),
                };
                self.phase = LinuxPhase::Windows {
                    start: ahead.first,
                    size: ahead.pages,
                    ahead_start: next.first,
                    ahead_size: next.pages,
                };
                vec![ahead, next]
            }
            LinuxPhase::Windows {
                ahead_start,
                ahead_size,
                ..
            } if demand.end() > ahead_start => {
                let ahead = PageRange {
                    first: ahead_start + ahead_size,
                    pages: next_window(ahead_size, max),
                };
                self.phase = LinuxPhase::Windows {
                    start: ahead_start,
                    size: ahead_size,
                    ahead_start: ahead.first,
                    ahead_size: ahead.pages,
                };
                vec![ahead]
            }
            LinuxPhase::Windows { .. } => Vec::new(),
        }
    }
}
