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
//! skew per track; the return trip and the seek are paid once per run. The
//! DJNA-371350 (7,200 RPM, 152 to 277 sectors a track) spent about 9.5
//! revolutions a track in chains one track at a time, 7.1 in runs whose end
//! pairs were all read alone, 4.9 with the pair passes (jitter seed 7).

use super::boundary_test::Tester;
use super::interior::{EndPair, Interior, INTERIOR_SEGMENTS};
use super::statistics::{wrap_half, INLIER_SIGMAS};
use super::Phase;
use crate::probe::{Probe, ProbeError};
use spinstack_sim::units::{Lbn, Sectors};

/// Tracks one run predicts at most. A run stopped by a slip or a zone change
/// has read the tracks after the failing one for nothing (three passes each),
/// so longer runs lose on drives with many slips: 32 made the IBM 18ES dearer
/// than 8, and 16 saved the DJNA-371350 about 2% over 8.
pub(super) const RUN_TRACKS: u64 = 16;

/// The angles one track of a run has gathered: the first four segments from
/// every pass; the fifth segment (c4 to c5) and the end pair (c5 to the next
/// track's first LBN) together from the *full* passes; their sum (c4 to the end
/// of a two-sector read of c5 and the next LBN) from the *pair* passes.
#[derive(Clone, Debug, Default)]
struct RunSamples {
    inner: [Vec<f64>; 4],
    full: Vec<(f64, f64)>,
    /// The sum, and the full pass it is paired with.
    pair: Vec<(f64, usize)>,
}

impl RunSamples {
    fn passes(&self) -> usize {
        self.inner[0].len()
    }

    /// The six segments' samples as the single-track chain has them: each pair
    /// pass gives one sample of the fifth segment (its sum less the paired full
    /// pass's end pair) and one of the end pair (its sum less the paired full
    /// pass's fifth segment). Those derived samples share the full pass's
    /// error, so a pair pass counts only where its sum agrees (within `agree`)
    /// with the full pass's own sum: a full pass whose fourth checkpoint came
    /// late (a stall, or a drive that served it late) would otherwise hand the
    /// same false jump to every derived end-pair sample (a false acceptance on
    /// a fresh serpentine layout, property seed 42270).
    fn angles(&self, revolution: f64, agree: f64) -> Vec<Vec<f64>> {
        let mut angles: Vec<Vec<f64>> = self.inner.to_vec();
        let mut fifth: Vec<f64> = self.full.iter().map(|f| f.0).collect();
        let mut end: Vec<f64> = self.full.iter().map(|f| f.1).collect();
        for &(sum, with) in &self.pair {
            let (fifth_full, end_full) = self.full[with];
            if wrap_half(sum - fifth_full - end_full, revolution).abs() > agree {
                continue;
            }
            fifth.push((sum - end_full).rem_euclid(revolution));
            end.push((sum - fifth_full).rem_euclid(revolution));
        }
        angles.push(fifth);
        angles.push(end);
        angles
    }
}

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
    /// rejected one no longer matter. One pass in three is *full* (the last
    /// LBN alone, then the next track's first LBN alone); the others are *pair*
    /// passes (the last LBN and the next one in one two-sector read): where a
    /// track's skew covers the head switch but not the switch plus a command's
    /// overhead (the DJNA-371350: 34 sectors for a 1.0 ms switch, 0.15 ms
    /// overhead), the next track's first LBN read alone waits a whole turn,
    /// and a two-sector read does not.
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
        let mut samples: Vec<RunSamples> = vec![RunSamples::default(); count as usize];
        let mut verdicts: Vec<Option<RunVerdict>> = vec![None; count as usize];
        // The end pairs need as many samples as a boundary test.
        let least = self
            .options
            .interior_min_passes
            .max(self.options.min_samples)
            .max(2);
        let revolution = self.calibration.revolution_ns;
        // How far a pair pass's sum may be from its full pass's: the two measure
        // the same angle (c4 to the next track's first LBN).
        let agree = INLIER_SIGMAS * 1.5 * self.calibration.sample_sigma_ns;
        let mut pass = 0;
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
            // Where the link is slower than the media, a two-sector read ends
            // when its bytes reach the host, not when the next LBN passes.
            let full = pass % 3 == 0 || self.link_is_slow(size);
            self.run_pass(&points, &pending, &mut samples, full)?;
            pass += 1;
            if samples[pending[0]].passes() < least {
                continue;
            }
            for &track in &pending {
                let exhausted = samples[track].passes() >= self.options.max_samples;
                let angles = samples[track].angles(revolution, agree);
                verdicts[track] = self
                    .judge_run_track(&points[track], &angles)
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

    /// One chain through the checkpoints of the `pending` tracks (in LBN order):
    /// a full pass reads every checkpoint alone; a pair pass reads the last LBN
    /// and the next track's first in one two-sector read.
    fn run_pass(
        &mut self,
        points: &[Vec<u64>],
        pending: &[usize],
        samples: &mut [RunSamples],
        full: bool,
    ) -> Result<(), ProbeError> {
        self.phase = Phase::Chain;
        let revolution = self.calibration.revolution_ns;
        let angle = |from: f64, to: f64| (to - from).rem_euclid(revolution);
        let mut last: Option<(u64, f64)> = None;
        for &track in pending {
            let checkpoints = &points[track];
            let mut previous = match last {
                Some((lbn, completed)) if lbn == checkpoints[0] => completed,
                _ => self.completion(Lbn(checkpoints[0]), Sectors(1))?,
            };
            let record = &mut samples[track];
            for (segment, &lbn) in checkpoints[1..5].iter().enumerate() {
                let now = self.completion(Lbn(lbn), Sectors(1))?;
                record.inner[segment].push(angle(previous, now));
                previous = now;
            }
            let (last_lbn, next_lbn) = (checkpoints[5], checkpoints[6]);
            let next = if full {
                let at_last = self.completion(Lbn(last_lbn), Sectors(1))?;
                let next = self.completion(Lbn(next_lbn), Sectors(1))?;
                record
                    .full
                    .push((angle(previous, at_last), angle(at_last, next)));
                next
            } else {
                let next = self.completion(Lbn(last_lbn), Sectors(2))?;
                let with = record.full.len() - 1;
                record.pair.push((angle(previous, next), with));
                next
            };
            last = Some((next_lbn, next));
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
