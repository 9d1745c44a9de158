//! Runs of tracks: the common case read several tracks at a time. Inside a zone,
//! track after track has the size of the one before (traxtents: "the next track
//! has the same size"), so from a known boundary T and that size S the
//! boundaries T + S, T + 2S, ... are predicted, and one checkpoint chain runs
//! through all of them: each track's six checkpoints, then the next track's
//! first LBN, which is also the first checkpoint of the next track. Each track
//! is judged exactly as the single-track chain judges it (interior free, end
//! pair jumps by a skew, with the same agreeing samples and confidence); the
//! run accepts the tracks in LBN order up to the first one that is not
//! accepted, which goes back to the single-track search.
//!
//! Why: a chain over one track costs about two revolutions a pass, one to read
//! the track and nearly one to come back to its first LBN (plus, between
//! cursors, a seek and half a turn of latency). A chain through a run reads the
//! next track where the last one ended, so a pass costs about a revolution and a
//! skew per track; the return trip and the seek are paid once per run. On a
//! 7,200 RPM drive with 150 to 280 sectors a track, that is the difference
//! between about nine revolutions a track and under four.

use super::boundary_test::Tester;
use super::interior::{EndPair, Interior, INTERIOR_SEGMENTS};
use crate::probe::{Probe, ProbeError};
use spinstack_sim::units::{Lbn, Sectors};

/// Tracks one run predicts at most: a run wasted by a slip or a zone change
/// costs its passes over the tracks before the failing one only, and a longer
/// run saves little more of the return trip.
pub(super) const RUN_TRACKS: u64 = 8;

/// What the chain says of one track of a run (None while undecided).
#[derive(Clone, Copy, Debug, PartialEq)]
enum RunVerdict {
    Accepted,
    Rejected,
}

impl<P: Probe + ?Sized> Tester<'_, P> {
    /// How many of the `count` tracks of `size` from `start` (a known boundary)
    /// are confirmed, in LBN order: each one's interior confidently free and its
    /// end pair confidently jumping by a skew. The caller keeps `start + count ×
    /// size` inside the disk and its region.
    pub(super) fn run_of_tracks(
        &mut self,
        start: Lbn,
        size: Sectors,
        count: u64,
    ) -> Result<u64, ProbeError> {
        let (start, size) = (start.0, size.0);
        assert!(size > INTERIOR_SEGMENTS && count >= 1);
        let per_track = INTERIOR_SEGMENTS as usize + 1;
        let mut checkpoints = Vec::with_capacity(count as usize * per_track + 1);
        for track in 0..count {
            let first = start + track * size;
            checkpoints.extend(
                (0..=INTERIOR_SEGMENTS).map(|i| first + i * (size - 1) / INTERIOR_SEGMENTS),
            );
        }
        checkpoints.push(start + count * size);
        let mut angles: Vec<Vec<f64>> = vec![Vec::new(); checkpoints.len() - 1];
        // Tracks still read by each pass: past the first undecided one, the
        // verdicts do not matter yet.
        let mut reading = count as usize;
        loop {
            let used = reading * per_track;
            self.interior_pass(&checkpoints[..=used], &mut angles[..used])?;
            let passes = angles[0].len();
            // The end pairs need as many samples as a boundary test.
            let least = self
                .options
                .interior_min_passes
                .max(self.options.min_samples)
                .max(2);
            if passes < least {
                continue;
            }
            let exhausted = passes >= self.options.max_samples;
            let (slot_before, slope_before) = (self.local_slot_ns, self.last_slope_ns);
            let mut accepted = 0;
            let mut undecided = None;
            for track in 0..reading {
                let range = track * per_track..(track + 1) * per_track;
                let points = &checkpoints[range.start..=range.end];
                match self.judge_run_track(points, &angles[range]) {
                    Some(RunVerdict::Accepted) => accepted += 1,
                    Some(RunVerdict::Rejected) => break,
                    None => {
                        undecided = Some(track);
                        break;
                    }
                }
            }
            match undecided {
                Some(track) if !exhausted => {
                    // Judge again after another pass, from the same local slot.
                    (self.local_slot_ns, self.last_slope_ns) = (slot_before, slope_before);
                    reading = track + 1;
                }
                _ => {
                    self.interior_tests += accepted as u64;
                    return Ok(accepted as u64);
                }
            }
        }
    }

    /// One track of a run, judged as the single-track chain judges it: its
    /// interior (five segments) first, then, learning its slope as the local
    /// slot, its end pair.
    fn judge_run_track(&mut self, checkpoints: &[u64], angles: &[Vec<f64>]) -> Option<RunVerdict> {
        let inside = INTERIOR_SEGMENTS as usize;
        match self.judge_interior(&checkpoints[..=inside], &angles[..inside])? {
            Interior::Free => {}
            _ => return Some(RunVerdict::Rejected),
        }
        self.learn_slope(&checkpoints[..=inside], &angles[..inside]);
        Some(match self.judge_end_pair(checkpoints, angles)? {
            EndPair::Crossing => RunVerdict::Accepted,
            EndPair::NotShown => RunVerdict::Rejected,
        })
    }
}
