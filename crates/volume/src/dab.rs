//! The DMA-aligned buffer's policy, shared by the buffer in simulated time
//! ([`crate::timed::DmaBuffer`]) and the one over real bytes
//! ([`crate::bytes::DmaAlignedBuffer`]): which of the DAB paper's cases (§4.2) a
//! request is, what the buffer counts, and how writes are handled. Both buffers
//! hold aligned blocks (block `b` holds LBNs `b × block ..`), decide a request's
//! case from the blocks holding its first and last sectors, and fetch every missing
//! block whole with one read.

/// How writes are handled (the paper's write-through and write-back buffers).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum WritePolicy {
    /// Writes go below at once; buffered copies are updated.
    WriteThrough,
    /// Writes update buffered blocks (a missed block is fetched first) and go below
    /// whole when evicted or flushed.
    WriteBack,
}

/// Which of the paper's cases a request is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DabCase {
    /// Case 1: first and last sector (and every block between) buffered.
    Hit,
    /// Case 2: first buffered, last not: fetch the block holding the latter part.
    FirstPresentLastMissing,
    /// Case 3: last buffered, first not: fetch the block holding the former part.
    FirstMissingLastPresent,
    /// Case 4: neither: fetch the aligned block(s) holding it.
    Miss,
    /// Beyond the paper (its requests span at most two blocks): both ends buffered,
    /// a block between them not.
    MiddleMissing,
}

impl DabCase {
    /// The case of a request spanning blocks `first..=last`, given which are buffered.
    pub fn of(first: u64, last: u64, buffered: impl Fn(u64) -> bool) -> DabCase {
        match (buffered(first), buffered(last)) {
            (true, true) if (first..=last).all(&buffered) => DabCase::Hit,
            (true, true) => DabCase::MiddleMissing,
            (true, false) => DabCase::FirstPresentLastMissing,
            (false, true) => DabCase::FirstMissingLastPresent,
            (false, false) => DabCase::Miss,
        }
    }
}

/// What a buffer did, cumulative.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct DabCounters {
    /// Reads and writes classified (trims and flushes are not).
    pub requests: u64,
    pub hits: u64,
    pub first_present_last_missing: u64,
    pub first_missing_last_present: u64,
    pub misses: u64,
    pub middle_missing: u64,
    /// Whole blocks read from below.
    pub block_fetches: u64,
    /// Write-back blocks a whole-block write filled without a fetch.
    pub fetches_avoided: u64,
    /// Dirty blocks written back whole (on eviction or flush).
    pub write_backs: u64,
    pub evictions: u64,
    /// Requests too large for the buffer, sent straight below (timed buffer).
    pub bypassed: u64,
}

impl DabCounters {
    /// Count one classified request.
    pub fn count(&mut self, case: DabCase) {
        self.requests += 1;
        *match case {
            DabCase::Hit => &mut self.hits,
            DabCase::FirstPresentLastMissing => &mut self.first_present_last_missing,
            DabCase::FirstMissingLastPresent => &mut self.first_missing_last_present,
            DabCase::Miss => &mut self.misses,
            DabCase::MiddleMissing => &mut self.middle_missing,
        } += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // Proves the paper's four cases and the middle-missing one from block
    // presence, and that counting files each under its name.
    #[test]
    fn cases_and_counts() {
        let present = |set: &'static [u64]| move |b: u64| set.contains(&b);
        assert_eq!(DabCase::of(3, 3, present(&[3])), DabCase::Hit);
        assert_eq!(
            DabCase::of(3, 4, present(&[3])),
            DabCase::FirstPresentLastMissing
        );
        assert_eq!(
            DabCase::of(3, 4, present(&[4])),
            DabCase::FirstMissingLastPresent
        );
        assert_eq!(DabCase::of(3, 4, present(&[])), DabCase::Miss);
        assert_eq!(DabCase::of(3, 5, present(&[3, 5])), DabCase::MiddleMissing);
        let mut counters = DabCounters::default();
        counters.count(DabCase::Hit);
        counters.count(DabCase::Miss);
        assert_eq!(
            (counters.requests, counters.hits, counters.misses),
            (2, 1, 1)
        );
    }
}
