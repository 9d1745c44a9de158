//! The interior test: chains of single-sector reads over checkpoints along a
//! hypothesised track, whose angles say whether the span is free of boundaries,
//! where a boundary hides if not, whether the span is too long for one track, and
//! (read together) whether the pair at its end jumps by a skew. Also the chain's
//! slope, which stands for one slot's passage where the extractor works.

use super::boundary_test::Tester;
use super::statistics::{median, robust_circular_mean, wrap_half};
use super::Phase;
use crate::probe::{Probe, ProbeError};
use spinstack_sim::units::{Lbn, Sectors};

/// What the interior test says of a hypothesised track.
#[derive(Clone, Debug, PartialEq)]
pub(super) enum Interior {
    /// Confidently no boundary inside.
    Free,
    /// Every segment decided, and these `(from, to)` segments (in LBN order)
    /// confidently hold a boundary: some pair x, x+1 with from <= x < to.
    Suspect(Vec<(Lbn, Lbn)>),
    /// The samples ran out before the confidence was reached.
    Undecided,
    /// The span holds confidently more LBNs than slots pass in a revolution: it
    /// is no single track, whatever the boundary tests say (a skew that does
    /// not clear their threshold hides its boundaries from them).
    Overfull,
}

/// What the checkpoint chain says of the pair (end − 1, end) of a hypothesised
/// track.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum EndPair {
    /// The pair's angle confidently holds a skew: a boundary.
    Crossing,
    /// Not measured, undecided, or no jump: the boundary test must decide.
    NotShown,
}

/// Segments the interior test divides a track into: each segment's angle must
/// stay below a revolution with a skew added, and the median slope must survive
/// two segments that hold boundaries.
pub(super) const INTERIOR_SEGMENTS: u64 = 5;

impl<P: Probe + ?Sized> Tester<'_, P> {
    /// Is [start, start + sectors) free of boundaries? See [`Interior`]. Single-sector
    /// reads at checkpoints along the span, chained back to back, give the angle
    /// between neighbouring checkpoints (completion to completion, modulo a
    /// revolution; the bus time of one sector cancels, so the test works however
    /// slow the host link). On one track the angles grow in proportion to the
    /// LBN distance; a boundary inside a segment adds its skew, the same gap the
    /// boundary test sees, to that segment alone.
    ///
    /// With `end_pair`, the chain also reads `start + sectors`, the first LBN of
    /// the next track if the hypothesis holds, and says whether the last segment,
    /// the pair (end − 1, end), confidently jumps by a skew: see [`EndPair`].
    pub(super) fn interior(
        &mut self,
        start: Lbn,
        sectors: Sectors,
        end_pair: bool,
    ) -> Result<(Interior, EndPair), ProbeError> {
        if sectors.0 <= 2 {
            // Its one pair is the end boundary's business.
            return Ok((Interior::Free, EndPair::NotShown));
        }
        self.interior_tests += 1;
        let (start, sectors) = (start.0, sectors.0);
        let segments = INTERIOR_SEGMENTS.min(sectors - 1);
        let mut checkpoints: Vec<u64> = (0..=segments)
            .map(|i| start + i * (sectors - 1) / segments)
            .collect();
        let end_pair = end_pair && start + sectors < self.capacity.0;
        if end_pair {
            checkpoints.push(start + sectors);
        }
        let inside = segments as usize;
        let mut angles: Vec<Vec<f64>> = vec![Vec::new(); checkpoints.len() - 1];
        loop {
            self.interior_pass(&checkpoints, &mut angles)?;
            let passes = angles[0].len();
            let decision = self.judge_interior(&checkpoints[..=inside], &angles[..inside]);
            let exhausted = passes >= self.options.max_samples;
            if passes >= self.options.interior_min_passes.max(2) {
                self.learn_slope(&checkpoints[..=inside], &angles[..inside]);
                match decision {
                    Some(Interior::Free) if end_pair => {
                        let pair = self.judge_end_pair(&checkpoints, &angles);
                        if pair.is_some() || exhausted {
                            return Ok((Interior::Free, pair.unwrap_or(EndPair::NotShown)));
                        }
                    }
                    Some(result) => return Ok((result, EndPair::NotShown)),
                    None => {}
                }
            }
            if exhausted {
                return Ok((Interior::Undecided, EndPair::NotShown));
            }
        }
    }

    /// The end pair's verdict once decided (None while not): its angle, less one
    /// LBN's share of the interior slope, against the boundary test's gap, with
    /// as many agreeing samples and the same confidence as the boundary test asks.
    /// Only a confident jump counts; an angle near one slot may still be a
    /// crossing without skew, which only the boundary test can see.
    pub(super) fn judge_end_pair(
        &self,
        checkpoints: &[u64],
        angles: &[Vec<f64>],
    ) -> Option<EndPair> {
        let c = self.calibration;
        let inside = angles.len() - 1;
        let samples = &angles[inside];
        let (angle, inliers) = robust_circular_mean(samples, c.revolution_ns, c.sample_sigma_ns)?;
        if inliers < self.options.min_samples {
            return None;
        }
        if inside < INTERIOR_SEGMENTS as usize {
            return None;
        }
        let slope = self.chain_slope(&checkpoints[..=inside], &angles[..inside])?;
        let excess = wrap_half(angle - slope, c.revolution_ns).abs();
        let slot = self.chain_slot(&checkpoints[..=inside], &angles[..inside]);
        let gap = c.gap_for(self.local_same(slot));
        let error = c.sample_sigma_ns * 1.5 / (inliers as f64).sqrt();
        if (excess - gap).abs() <= self.options.confidence_sigmas * error {
            return None;
        }
        Some(if excess > gap {
            EndPair::Crossing
        } else {
            EndPair::NotShown
        })
    }

    /// One chain of single-sector reads over the checkpoints: one angle sample per
    /// segment.
    pub(super) fn interior_pass(
        &mut self,
        checkpoints: &[u64],
        angles: &mut [Vec<f64>],
    ) -> Result<(), ProbeError> {
        self.phase = Phase::Chain;
        let revolution = self.calibration.revolution_ns;
        let mut last = self.completion(Lbn(checkpoints[0]), Sectors(1))?;
        for (i, &c) in checkpoints[1..].iter().enumerate() {
            let now = self.completion(Lbn(c), Sectors(1))?;
            angles[i].push((now - last).rem_euclid(revolution));
            last = now;
        }
        Ok(())
    }

    /// Remember a chain's slope (once it has its minimum passes) as the local slot.
    pub(super) fn learn_slope(&mut self, checkpoints: &[u64], angles: &[Vec<f64>]) {
        let slot = self.chain_slot(checkpoints, angles);
        if slot > 0.0 {
            self.local_slot_ns = self.local_slot_ns.max(slot);
            self.last_slope_ns = Some(slot);
        }
    }

    /// One slot's passage near `from` (None if not measured): the chain slope over
    /// five two-LBN segments, which at most one boundary can spoil.
    pub(super) fn local_slot(&mut self, from: Lbn) -> Result<Option<f64>, ProbeError> {
        let from = from.0;
        if from + 10 >= self.capacity.0 {
            return Ok(None);
        }
        let checkpoints: Vec<u64> = (0..=5).map(|i| from + 2 * i).collect();
        let mut angles: Vec<Vec<f64>> = vec![Vec::new(); 5];
        for _ in 0..self.options.min_samples {
            self.interior_pass(&checkpoints, &mut angles)?;
        }
        self.phase = Phase::FirstBoundary;
        let slot = self.chain_slot(&checkpoints, &angles);
        self.local_slot_ns = slot;
        Ok((slot > 0.0).then_some(slot))
    }

    /// The median angle per LBN over the segments (one slot's passage where they
    /// hold no boundary), once every segment has a robust mean.
    fn chain_slope(&self, checkpoints: &[u64], angles: &[Vec<f64>]) -> Option<f64> {
        let c = self.calibration;
        let mut slopes = Vec::with_capacity(angles.len());
        for (i, samples) in angles.iter().enumerate() {
            let (angle, _) = robust_circular_mean(samples, c.revolution_ns, c.sample_sigma_ns)?;
            // A segment of a slot or two may come out just below zero, not a
            // revolution on.
            let angle = wrap_half(angle, c.revolution_ns);
            slopes.push(angle / (checkpoints[i + 1] - checkpoints[i]) as f64);
        }
        Some(median(&mut slopes))
    }

    /// One slot's passage as a chain shows it, for the gap: the median slope over
    /// five segments (of which a boundary or two cannot move the median), capped
    /// at a revolution over the hypothesis's LBNs (a true track fits them in one
    /// turn, and a too-long hypothesis must not widen the gap); 0 from fewer.
    fn chain_slot(&self, checkpoints: &[u64], angles: &[Vec<f64>]) -> f64 {
        if angles.len() < INTERIOR_SEGMENTS as usize {
            return 0.0;
        }
        let lbns = checkpoints[checkpoints.len() - 1] - checkpoints[0] + 1;
        let slope = self.chain_slope(checkpoints, angles).unwrap_or(0.0);
        slope.min(self.calibration.revolution_ns / lbns as f64)
    }

    /// The verdict once every segment is decided with the stated confidence
    /// (None while one is not): the first segment whose angle exceeds its
    /// proportional share by more than the boundary test's gap holds a boundary.
    /// A verdict other than `Free` must rest on as many agreeing samples per
    /// segment as a boundary test's (three): two host stalls of about the same
    /// length in one segment (one read in a hundred stalls, and a chain reads
    /// millions) would otherwise make a two-sample majority and decide on their
    /// own (an `Overfull` true track on the Maxtor 10K V CZK, jitter seed 7).
    /// `Free` may rest on two of three: stalls only delay a completion, so two
    /// that hid one segment's skew would add it to the segment before, which
    /// then shows it.
    pub(super) fn judge_interior(
        &self,
        checkpoints: &[u64],
        angles: &[Vec<f64>],
    ) -> Option<Interior> {
        let c = self.calibration;
        let revolution = c.revolution_ns;
        let mut centres = Vec::with_capacity(angles.len());
        for samples in angles {
            centres.push(robust_circular_mean(
                samples,
                revolution,
                c.sample_sigma_ns,
            )?);
        }
        let verdict = self.interior_verdict(checkpoints, angles, &centres)?;
        let agreed = centres.iter().all(|c| c.1 >= self.options.min_samples);
        (agreed || verdict == Interior::Free).then_some(verdict)
    }

    /// The verdict from each segment's robust mean and its agreeing samples.
    fn interior_verdict(
        &self,
        checkpoints: &[u64],
        angles: &[Vec<f64>],
        centres: &[(f64, usize)],
    ) -> Option<Interior> {
        let c = self.calibration;
        let revolution = c.revolution_ns;
        let lengths: Vec<f64> = checkpoints
            .windows(2)
            .map(|w| (w[1] - w[0]) as f64)
            .collect();
        let mut slopes: Vec<f64> = centres.iter().zip(&lengths).map(|(a, l)| a.0 / l).collect();
        let slope = median(&mut slopes);
        let gap = c.gap_for(self.local_same(self.chain_slot(checkpoints, angles)));
        // One track holds no more LBNs than slots pass in a revolution: a short
        // track and the next one adding up to the hypothesis betray themselves by
        // a slope that fits confidently fewer slots than LBNs (the noise of the
        // total angle hides an excess below a few percent of the track).
        let total: f64 = centres.iter().map(|a| a.0).sum();
        let span = (checkpoints[checkpoints.len() - 1] - checkpoints[0]) as f64;
        let total_error = c.sample_sigma_ns * 1.5 * (angles.len() as f64).sqrt()
            / (centres.iter().map(|a| a.1).min().unwrap_or(1) as f64).sqrt();
        let slots_most = revolution * span / (total - self.options.confidence_sigmas * total_error);
        if total > self.options.confidence_sigmas * total_error && span + 1.0 > slots_most + 0.5 {
            return Some(Interior::Overfull);
        }
        let mut suspects = Vec::new();
        for (i, ((angle, inliers), length)) in centres.iter().zip(&lengths).enumerate() {
            let excess = wrap_half(angle - slope * length, revolution).abs();
            let error = c.sample_sigma_ns * 1.5 / (*inliers as f64).sqrt();
            if (excess - gap).abs() <= self.options.confidence_sigmas * error {
                return None; // not yet decided
            }
            if excess > gap {
                suspects.push((Lbn(checkpoints[i]), Lbn(checkpoints[i + 1])));
            }
        }
        Some(if suspects.is_empty() {
            Interior::Free
        } else {
            Interior::Suspect(suspects)
        })
    }
}
