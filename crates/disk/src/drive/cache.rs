//! The drive's segmented buffer cache (notes §4.3): a fixed number of segments,
//! each a window of at most `segment_sectors` consecutive LBNs, chosen by DiskSim's
//! priorities with least-recently-used tie-breaking.

/// What a segment holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SegmentState {
    /// No valid data.
    Empty,
    /// Data that is also on the media.
    Clean,
    /// Written data not yet on the media (write-back).
    Dirty,
}

/// One cache segment: valid blocks `[start, end)` (besides blocks an active
/// media plan is still bringing in).
#[derive(Clone, Copy, Debug)]
pub struct Segment {
    pub start: u64,
    pub end: u64,
    pub state: SegmentState,
    /// Last use; the smallest stamp is the least recently used.
    pub stamp: u64,
}

/// The set of segments. Bound: `segments.len()` never changes after construction.
#[derive(Clone, Debug)]
pub struct Cache {
    pub segments: Vec<Segment>,
    pub segment_sectors: u64,
    clock: u64,
}

impl Cache {
    pub fn new(count: usize, segment_sectors: u64) -> Cache {
        let empty = Segment {
            start: 0,
            end: 0,
            state: SegmentState::Empty,
            stamp: 0,
        };
        Cache {
            segments: vec![empty; count.max(1)],
            segment_sectors: segment_sectors.max(1),
            clock: 0,
        }
    }

    /// Mark a segment as just used (moves it to the tail of the LRU order).
    pub fn touch(&mut self, index: usize) {
        self.clock += 1;
        self.segments[index].stamp = self.clock;
    }

    /// Set a segment's contents, keeping the window within the segment size by
    /// dropping its oldest blocks.
    pub fn set(&mut self, index: usize, start: u64, end: u64, state: SegmentState) {
        let start = start.max(end.saturating_sub(self.segment_sectors));
        let seg = &mut self.segments[index];
        seg.start = start;
        seg.end = end;
        seg.state = if start >= end {
            SegmentState::Empty
        } else {
            state
        };
    }

    pub fn clear(&mut self, index: usize) {
        self.set(index, 0, 0, SegmentState::Empty);
    }

    /// Pick a segment for new data by priority (`score`, higher wins; 0 = not
    /// eligible), ties to the least recently used.
    pub fn choose(&self, score: impl Fn(usize, &Segment) -> u32) -> Option<usize> {
        let mut best: Option<(u32, u64, usize)> = None;
        for (i, seg) in self.segments.iter().enumerate() {
            let s = score(i, seg);
            if s == 0 {
                continue;
            }
            let better = match best {
                None => true,
                Some((bs, bstamp, _)) => s > bs || (s == bs && seg.stamp < bstamp),
            };
            if better {
                best = Some((s, seg.stamp, i));
            }
        }
        best.map(|(_, _, i)| i)
    }

    /// Empty every clean segment other than `keep` that overlaps `[start, end)`.
    pub fn invalidate_overlaps(&mut self, keep: usize, start: u64, end: u64) {
        for i in 0..self.segments.len() {
            let seg = self.segments[i];
            if i != keep && seg.state == SegmentState::Clean && seg.start < end && start < seg.end {
                self.clear(i);
            }
        }
    }
}

/// Merge done block ranges into a segment window `[start, end)` and return the
/// contiguous range that holds `anchor` (or, if none does, the one reaching
/// furthest). Ranges that overlap or touch join. Allocation-free when the lists are
/// the usual handful of runs; a huge read's plan (thousands of tracks) costs a sort,
/// not a pass per run (a 4 GiB read took seconds: inputs finding 9).
pub fn merge_ranges<I>(start: u64, end: u64, done: I, anchor: u64) -> (u64, u64)
where
    I: Iterator<Item = (u64, u32)> + Clone,
{
    let all = || {
        std::iter::once((start, end))
            .chain(done.clone().map(|(f, c)| (f, f + c as u64)))
            .filter(|r| r.0 < r.1)
    };
    // Plans have a handful of runs: work on a stack copy when they fit.
    let mut local = [(0u64, 0u64); 8];
    let mut count = 0;
    for r in all() {
        if count == local.len() {
            count = usize::MAX;
            break;
        }
        local[count] = r;
        count += 1;
    }
    if count != usize::MAX {
        return merge_slice(&mut local[..count], anchor);
    }
    let mut ranges: Vec<(u64, u64)> = all().collect();
    merge_slice(&mut ranges, anchor)
}

/// The joined range of `ranges` (non-empty `[first, end)` pairs; reordered) that
/// holds `anchor`, else the one ending last, else `(anchor, anchor)`. Sorted by
/// start, the ranges join in one sweep: each touches the joined range before it or
/// starts a new one, and every block of a joined range is in one of its ranges.
fn merge_slice(ranges: &mut [(u64, u64)], anchor: u64) -> (u64, u64) {
    ranges.sort_unstable();
    let mut current: Option<(u64, u64)> = None;
    for &r in ranges.iter() {
        current = match current {
            Some(c) if r.0 <= c.1 => Some((c.0, c.1.max(r.1))),
            Some(c) if c.0 <= anchor && anchor < c.1 => return c,
            _ => Some(r),
        };
    }
    // No joined range before the last holds the anchor: the last one, which ends
    // last of all, whether it holds the anchor or not.
    current.unwrap_or((anchor, anchor))
}

#[cfg(test)]
mod tests {
    use super::*;

    // Proves merging keeps the range holding the anchor and joins adjacent runs.
    #[test]
    fn merge_joins_adjacent_runs() {
        assert_eq!(
            merge_ranges(10, 20, [(20, 5), (40, 3)].into_iter(), 12),
            (10, 25)
        );
        assert_eq!(merge_ranges(0, 0, [(40, 3)].into_iter(), 12), (40, 43));
    }

    /// The merge as it was first written (a pass over the ranges until nothing
    /// grows): the reference the one-sweep merge must agree with.
    fn merge_by_passes(ranges: &[(u64, u64)], anchor: u64) -> (u64, u64) {
        let seed = ranges
            .iter()
            .copied()
            .find(|r| r.0 <= anchor && anchor < r.1)
            .or_else(|| ranges.iter().copied().max_by_key(|r| r.1));
        let Some(mut current) = seed else {
            return (anchor, anchor);
        };
        loop {
            let mut grown = false;
            for &r in ranges {
                let touches = r.0 <= current.1 && current.0 <= r.1;
                if touches && (r.0 < current.0 || r.1 > current.1) {
                    current = (current.0.min(r.0), current.1.max(r.1));
                    grown = true;
                }
            }
            if !grown {
                return current;
            }
        }
    }

    proptest::proptest! {
        // Proves the one-sweep merge (inputs finding 9) gives what the fixpoint merge
        // gave, for any window, runs (overlapping, touching, apart, any order, more
        // than fit the stack copy) and anchor.
        #[test]
        fn sweep_merge_matches_the_fixpoint_merge(
            window in (0u64..300, 0u64..60),
            runs in proptest::collection::vec((0u64..300, 0u32..40), 0..20),
            anchor in 0u64..340,
        ) {
            let (start, end) = (window.0, window.0 + window.1);
            let ranges: Vec<(u64, u64)> = std::iter::once((start, end))
                .chain(runs.iter().map(|&(f, c)| (f, f + c as u64)))
                .filter(|r| r.0 < r.1)
                .collect();
            proptest::prop_assert_eq!(
                merge_ranges(start, end, runs.iter().copied(), anchor),
                merge_by_passes(&ranges, anchor)
            );
        }
    }

    // Proves the window never exceeds the segment size and LRU breaks ties.
    #[test]
    fn window_and_lru() {
        let mut c = Cache::new(2, 8);
        c.set(0, 0, 20, SegmentState::Clean);
        assert_eq!((c.segments[0].start, c.segments[0].end), (12, 20));
        c.touch(0);
        assert_eq!(c.choose(|_, _| 1), Some(1));
    }
}
