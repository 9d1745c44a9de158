//! [`ScrubReport`]: what a scrub (md's `check` / `repair`) found.

/// Mismatches listed in a report; beyond this they are only counted.
pub const MAX_REPORTED_MISMATCHES: usize = 1 << 16;

/// The result of `scrub`. A *stripe* is a parity stripe (RAID-5) or a unit of the
/// mirror (a chunk of the volume; RAID-1: 64 KiB).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ScrubReport {
    /// Stripes compared (every member of them live).
    pub stripes_checked: u64,
    /// Stripes not comparable because a member holding them is out (or not yet
    /// rebuilt there).
    pub stripes_skipped: u64,
    /// Stripes whose parity (copies) disagreed, ascending; the first
    /// [`MAX_REPORTED_MISMATCHES`] only.
    pub mismatches: Vec<u64>,
    /// All stripes that disagreed, listed or not.
    pub mismatch_count: u64,
    /// Stripes rewritten by `repair`: parity recomputed from the data, or copies
    /// rewritten from the first live copy (not counted when the rewrite failed a
    /// member instead).
    pub repaired: u64,
    /// Sectors rebuilt from the redundancy, rewritten and read back after a member
    /// read error during the scrub (the whole extent the failed read asked for;
    /// check and repair alike: md corrects read errors in both).
    pub corrected_read_sectors: u64,
}

impl ScrubReport {
    pub(crate) fn record_mismatch(&mut self, stripe: u64) {
        self.mismatch_count += 1;
        if self.mismatches.len() < MAX_REPORTED_MISMATCHES {
            self.mismatches.push(stripe);
        }
    }
}
