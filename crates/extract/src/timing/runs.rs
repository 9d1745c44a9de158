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
use super::Phase;
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
    ///
    /// Every pass reads the tracks still undecided, in LBN order (a track's
    /// first LBN is read once when the track before it was read too: it is that
    /// track's end). A track decided stays decided; the tracks after the first
    /// rejected one no longer matter.
    pub(super) fn run_of_tracks(
        &mut self,
        start: Lbn,
        size: Sectors,
        count: u64,
    ) -> Result<u64, ProbeError> {
        let (start, size) = (start.0, size.0);
        assert!(size > INTERIOR_SEGMENTS && count >= 1);
        // Each track's checkpoints: its six, then the next track's first LBN.
        let points: Vec<Vec<u64>> = (0..count)
            .map(|track| {
                let first = start + track * size;
                (0..=INTERIOR_SEGMENTS)
                    .map(|i| first + i * (size - 1) / INTERIOR_SEGMENTS)
                    .chain(std::iter::once(first + size))
                    .collect()
            })
            .collect();
        let segments = INTERIOR_SEGMENTS as usize + 1;
        let mut angles: Vec<Vec<Vec<f64>>> = vec![vec![Vec::new(); segments]; count as usize];
        let mut verdicts: Vec<Option<RunVerdict>> = vec![None; count as usize];
        // The end pairs need as many samples as a boundary test.
        let least = self
            .options
            .interior_min_passes
            .max(self.options.min_samples)
            .max(2);
        loop {
            let pending: Vec<usize> = (0..verdicts.len())
                .take_while(|&t| {
                    verdicts[..t]
                        .iter()
                        .all(|v| *v != Some(RunVerdict::Rejected))
                })
                .filter(|&t| verdicts[t].is_none())
                .collect();
            if pending.is_empty() {
                break;
            }
            self.run_pass(&points, &pending, &mut angles)?;
            if angles[pending[0]][0].len() < least {
                continue;
            }
            for &track in &pending {
                let exhausted = angles[track][0].len() >= self.options.max_samples;
                verdicts[track] = self
                    .judge_run_track(&points[track], &angles[track])
                    .or(exhausted.then_some(RunVerdict::Rejected));
            }
        }
        let accepted = verdicts
            .iter()
            .take_while(|v| **v == Some(RunVerdict::Accepted))
            .count() as u64;
        self.interior_tests += accepted;
        Ok(accepted)
    }

    /// One chain through the checkpoints of the `pending` tracks (in LBN order),
    /// one angle sample per segment of each.
    fn run_pass(
        &mut self,
        points: &[Vec<u64>],
        pending: &[usize],
        angles: &mut [Vec<Vec<f64>>],
    ) -> Result<(), ProbeError> {
        self.phase = Phase::Chain;
        let revolution = self.calibration.revolution_ns;
        let mut last: Option<(u64, f64)> = None;
        for &track in pending {
            let checkpoints = &points[track];
            let mut previous = match last {
                Some((lbn, completed)) if lbn == checkpoints[0] => completed,
                _ => self.completion(Lbn(checkpoints[0]), Sectors(1))?,
            };
            for (segment, &lbn) in checkpoints[1..].iter().enumerate() {
                let now = self.completion(Lbn(lbn), Sectors(1))?;
                angles[track][segment].push((now - previous).rem_euclid(revolution));
                previous = now;
            }
            last = Some((checkpoints[checkpoints.len() - 1], previous));
        }
        Ok(())
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
