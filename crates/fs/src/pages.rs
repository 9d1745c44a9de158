//! What a read-ahead policy sees of a file and the units it counts in: the
//! [`FileView`] a policy asks (residency, disk contiguity, track ends), runs of
//! file pages, and how far a window may grow. Apart from the policies so that
//! their state machines (`readahead_state`) and the file views (`view`) need
//! nothing else of each other.

/// What a policy may ask about the file being read. Indices are file pages.
pub trait FileView {
    /// Pages in the file.
    fn page_count(&self) -> u64;
    /// The page is cached or already being read.
    fn is_resident(&self, index: u64) -> bool;
    /// Pages from `index` on that follow each other on disk (at least 1 for a
    /// page of the file): FFS's contiguously allocated blocks left in the
    /// cluster.
    fn contiguous_from(&self, index: u64) -> u64;
    /// Pages from `index` on up to the next track boundary (at least 1 for a
    /// page of the file): the file's part of the page's track from there,
    /// across a gap inside the track (an indirect block), clipped.
    fn pages_to_track_end(&self, index: u64) -> u64;
    /// Pages one track holds, on the track of `index` (for windows measured
    /// in tracks).
    fn track_pages_at(&self, index: u64) -> u64;
}

/// A run of file pages.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PageRange {
    pub first: u64,
    pub pages: u64,
}

impl PageRange {
    pub fn end(self) -> u64 {
        self.first + self.pages
    }
}

/// How big a Linux window may grow.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WindowLimit {
    Pages(u64),
    /// This many tracks, measured where the window starts.
    Tracks(u64),
}
