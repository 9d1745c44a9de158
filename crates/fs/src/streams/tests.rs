//! Unit tests of the streams' step planning and request joining.

use super::*;

/// A file of `pages` pages in tracks of `track` pages, nothing resident.
struct Flat {
    pages: u64,
    track: u64,
}

impl FileView for Flat {
    fn page_count(&self) -> u64 {
        self.pages
    }
    fn is_resident(&self, _: u64) -> bool {
        false
    }
    fn contiguous_from(&self, index: u64) -> u64 {
        self.pages - index
    }
    fn pages_to_track_end(&self, index: u64) -> u64 {
        self.track - index % self.track
    }
    fn track_pages_at(&self, _: u64) -> u64 {
        self.track
    }
}

// Proves a call is cut where Linux asks read-ahead again: at the window
// (128 KB, or one track), at the track boundary for track-aligned, never
// past the call, and not at all for FreeBSD's clustering.
#[test]
fn steps_end_at_the_window_or_the_track_boundary() {
    let view = Flat {
        pages: 10_000,
        track: 143,
    };
    assert_eq!(step_pages(Policy::linux_default(), &view, 5, 125), 32);
    assert_eq!(step_pages(Policy::linux_default(), &view, 5, 20), 20);
    assert_eq!(step_pages(Policy::one_track_window(), &view, 5, 125), 125);
    assert_eq!(step_pages(Policy::one_track_window(), &view, 5, 300), 143);
    assert_eq!(step_pages(Policy::TrackAligned, &view, 100, 125), 43);
    assert_eq!(step_pages(Policy::TrackAligned, &view, 143, 125), 125);
    assert_eq!(step_pages(Policy::ffs_unmodified(), &view, 5, 125), 125);
}

// Proves a reader of 125 pages a call with a 143-page window (one track)
// gets its ahead window a call ahead, as 2.6.16 does: the third call makes
// the ahead window, reaches into it and so gets the next one too; the
// fourth call's new window is what the fifth call reads.
#[test]
fn a_large_reader_gets_its_ahead_window_a_call_ahead() {
    let view = Flat {
        pages: 10_000,
        track: 143,
    };
    let mut read_ahead = ReadAhead::new(Policy::LinuxWindow {
        limit: WindowLimit::Pages(143),
    });
    let ahead_end = |plan: &crate::readahead::ReadPlan| {
        plan.read_ahead.iter().map(|r| r.end()).max().unwrap_or(0)
    };
    let first = read_ahead.on_read(&view, 1000, 125);
    assert!(first.read_ahead.is_empty(), "{first:?}");
    let second = read_ahead.on_read(&view, 1125, 125);
    assert_eq!(ahead_end(&second), 1125 + 143, "{second:?}");
    let third = read_ahead.on_read(&view, 1250, 125);
    assert_eq!(ahead_end(&third), 1268 + 143 + 143, "{third:?}");
    let fourth = read_ahead.on_read(&view, 1375, 125);
    assert_eq!(ahead_end(&fourth), 1554 + 143, "{fourth:?}");
    // The fifth call, [1500, 1625), lies inside what was fetched by then.
    assert!(1625 <= ahead_end(&fourth));
}

// Proves adjacent runs become one request and a gap keeps two.
#[test]
fn adjacent_runs_are_joined() {
    let run = |first, pages| PageRange { first, pages };
    let plan = [run(0, 32), run(32, 32), run(70, 4)];
    assert_eq!(joined(plan.into_iter()), vec![run(0, 64), run(70, 4)]);
}
