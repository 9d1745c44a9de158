//! Timing-only extraction (traxtents §4.1.1): track boundaries from read times
//! alone, for drives that do not translate addresses.
//!
//! **The boundary test.** Whether LBNs x and x+1 lie on different tracks is decided
//! from a chain of reads issued back to back: read(x,1), then read(x,2), read(x,1),
//! read(x,2), ... With the read cache off, each read of a chain starts where the
//! previous one ended, so it waits until sector x comes round again: a read of x
//! alone after a read of x,x+1 takes one revolution P minus the time δ between the
//! end of x and the end of x+1, and a read of x,x+1 after x alone takes P + δ. On
//! one track δ is one sector time (tens of microseconds); across a boundary it
//! holds a head switch or a seek and the skew that hides it (a millisecond on the
//! Atlas 10K). Each sample comes from its own (x alone, x,x+1) read pair, so that
//! one host stall spoils one sample only; no rotational synchronisation is needed.
//! The extractor decides from the mean of the samples that agree with their
//! median (at least three, two thirds of them) against a threshold a gap above
//! the same-track δ, and keeps sampling until that mean is a stated number of
//! standard errors away from the threshold. A test that cannot reach that
//! confidence is *uncertain*. The gap covers the noise (8 σ), an isolated slipped
//! sector (1.5 same-track δ) and the least head switch (1/64 revolution). The
//! same-track δ is the one calibrated at LBN 0, or one slot's passage where the
//! extractor works now when that is longer: in a zone with fewer slots than LBN
//! 0's, a slip's δ would otherwise pass a threshold set at LBN 0. The local slot
//! is the slope of the cursor's latest checkpoint chain (below), read over five
//! segments and capped at a revolution over the chain's LBNs.
//!
//! **The common case: one chain per track.** From a known boundary T and the most
//! recent track size S (traxtents: "the next track has the same size"), the
//! interior test's checkpoint chain (below) over [T, T+S) also reads T+S, the first
//! LBN of the next track if S is right. On one track the angle from T+S−1 to T+S
//! is one slot; across the boundary it holds the skew. The chain's three passes
//! give that pair three samples from three separate passes, which must agree and
//! clear the same gap with the same confidence as a boundary test; then a track
//! whose interior is free is accepted without any boundary test. Only a jump
//! counts: a pair with no jump may still be a crossing without skew, which only
//! the boundary test sees.
//!
//! **The fallback search.** When the chain does not accept: a free interior whose
//! end pair did not jump gets the boundary test at T+S−1; a suspect interior gets
//! the boundary test at the ends of the other recent sizes inside the suspect
//! segments (usually a slip made the track one shorter), then on every pair in
//! them, last first. Otherwise one test at T+S'−1 for each recently seen size S',
//! then outward from the expected end (S−1, S+1, S−2, ...), and on a region's
//! first track linearly from T. Each end found so goes through the interior test
//! again. This is the paper's "binary search for the first request size that
//! breaks the linear model" replaced by a local test: the local test needs no
//! linear model (whose slope changes from zone to zone) and is immune to
//! zero-latency firmware.
//!
//! **Interior confirmation (no false acceptance).** A confirmed end boundary
//! says nothing of the pairs inside: a short zone-end track plus the next track
//! can add up to the expected size. So no track is accepted before its interior
//! is confirmed: single-sector reads chained over five checkpoints give each
//! segment's angle (completion to completion, modulo a revolution; the one-sector
//! bus time cancels, so it works on drives whose host link is slower than the
//! platter, like the Atlas 10K); on one track the angles grow in proportion to
//! LBN distance, a boundary adds its skew to one segment, and a track cannot
//! hold confidently more LBNs than slots pass in a revolution (a span that does
//! is no track, whatever the boundary tests later say: a skew below their
//! threshold hides its boundaries from them, so such a track ends uncertain).
//! The chains' angles are reduced modulo a revolution, so a boundary whose
//! angle happens to equal its LBN distance's share (a zone change right after a
//! short zone-end track) is invisible to them; the head cannot switch in one
//! slot's passage, so a read across such a boundary travels an extra turn (or
//! nearly a turn), and a read that spans it sees that. Where the link keeps up
//! with the media, a read of the whole span must not travel an extra
//! revolution. Where the link is slower than the media (the Atlas 10K), a long
//! read ends when its bytes reach the host and hides the turn, so *tile reads*
//! stand in: reads short enough that their bus time stays within a third of a
//! turn, overlapping by one LBN, each timed after a read of its first sector
//! alone. They run on a track whose size differs from the one before it, and on
//! that one before (a short zone-end track and the next track can add up to the
//! size expected, and only the track after them shows the change): a hidden
//! boundary comes with a zone change, and a zone change changes the size. A
//! tile that travelled the extra turn gets the boundary test on every pair; a
//! crossing ends the track there, or flags the track before uncertain. A
//! suspect segment (or an undecided interior) is settled by the boundary test
//! on every pair in it; a pair that stays undecided makes the track
//! `uncertain`.
//!
//! **Cost.** In the common case three passes of seven single-sector reads, about
//! six revolutions, per track. On the Atlas 10K (jitter seed 7): 0.775 simulated
//! hours, about 21 chain reads, 1.2 boundary-test reads and 0.12 tile reads per
//! track ([`PhaseCosts`] accounts for every read). Where the link keeps up with
//! the media, the span read adds about 12 reads per track.
//!
//! **Cache defeat.** Extraction runs as many interleaved cursors over widely spread
//! regions of the disk (traxtents used 100), one track per cursor in turn, so that
//! consecutive tests never touch neighbouring data; each cursor first measures the
//! local slot with a short chain and finds the first boundary at or after its
//! region start, and stops where the next region's cursor began. The chains
//! reread the same sectors, so the read cache must be off (both papers turned it
//! off with the caching mode page).
//!
//! **What it cannot see.** Cylinder and surface (the map says `-`), remapped LBNs
//! (a read across one costs a seek and looks like two boundaries), runs of
//! slipped sectors as long as a head switch. On a slow link, a hidden boundary
//! (see above) inside a track whose size equals both its neighbours' escapes
//! the tile reads: that needs a zone-end track and a new zone's first track
//! that add up to the old size *and* a new zone of that same size (for
//! instance a one-LBN zone-end track followed by a slipped track), or that the
//! track is the last of its region (the track after it is another cursor's,
//! and nobody looks back). A tile read
//! whose single read is delayed by a host stall of a third to two thirds of a
//! turn can miss its extra turn (about one tile in a thousand). The property
//! test (`tests/timing_properties.rs`) runs both links: with the span read
//! and without it (a link 2.2 times slower than the sparsest track), 0 false
//! acceptances in 40,000 fresh slow-link layouts and 100,000 fresh fast-link
//! layouts; before the tile reads the slow link gave about one in 3,000.

use crate::probe::{Probe, ProbeError};
use serde::Serialize;
use spinstack_sim::units::{Lbn, Nanoseconds, Sectors};
use spinstack_trackmap::{Track, TrackMap};
use std::collections::VecDeque;

/// Knobs of the timing extractor.
#[derive(Clone, Debug, Serialize)]
pub struct TimingOptions {
    /// Samples a boundary test takes before it may decide.
    pub min_samples: usize,
    /// Samples after which an undecided test is reported uncertain.
    pub max_samples: usize,
    /// Checkpoint chains the interior test reads before it may decide.
    pub interior_min_passes: usize,
    /// Robust standard errors between the median and the threshold needed to decide
    /// (4.5 ≈ one wrong decision in 300,000 tests for Gaussian noise).
    pub confidence_sigmas: f64,
    /// Interleaved extraction cursors over widely spread regions.
    pub regions: usize,
    /// Reads used to calibrate the revolution time and the same-track δ.
    pub calibration_reads: usize,
}

impl Default for TimingOptions {
    fn default() -> Self {
        TimingOptions {
            min_samples: 3,
            max_samples: 15,
            interior_min_passes: 2,
            confidence_sigmas: 4.5,
            regions: 16,
            calibration_reads: 41,
        }
    }
}

/// The result of a timing extraction.
#[derive(Clone, Debug)]
pub struct TimingExtraction {
    pub map: TrackMap,
    pub boundary_tests: u64,
    /// Interior tests: one per accepted track, plus one per corrected end.
    pub interior_tests: u64,
    pub revolution: Nanoseconds,
    /// Same-track δ and the decision threshold, as calibrated.
    pub same_track_delta: Nanoseconds,
    pub threshold: Nanoseconds,
    /// Where the reads went, phase by phase (for profiling and the report).
    pub costs: PhaseCosts,
}

/// Reads and simulated time spent in one phase.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct PhaseCost {
    pub reads: u64,
    pub time: Nanoseconds,
}

/// The extractor's phases, for accounting.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    /// Boundary tests of candidate ends (recent sizes and the outward search).
    EndTest,
    /// Boundary tests of suspect pairs inside a hypothesised track.
    SuspectTest,
    /// Checkpoint chains (interior angles, and the end pair with them).
    Chain,
    /// The span read (drives whose link keeps up with the media).
    Span,
    /// The tile reads (drives whose link is slower than the media).
    Tiles,
    /// Finding each region's first boundary.
    FirstBoundary,
}

/// Reads and time by phase.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct PhaseCosts {
    pub end_test: PhaseCost,
    pub suspect_test: PhaseCost,
    pub chain: PhaseCost,
    pub span: PhaseCost,
    pub tiles: PhaseCost,
    pub first_boundary: PhaseCost,
}

impl PhaseCosts {
    fn of(&mut self, phase: Phase) -> &mut PhaseCost {
        match phase {
            Phase::EndTest => &mut self.end_test,
            Phase::SuspectTest => &mut self.suspect_test,
            Phase::Chain => &mut self.chain,
            Phase::Span => &mut self.span,
            Phase::Tiles => &mut self.tiles,
            Phase::FirstBoundary => &mut self.first_boundary,
        }
    }
}

/// The verdict of one boundary test.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Verdict {
    pub crossing: bool,
    /// False when the samples ran out before the confidence was reached.
    pub confident: bool,
    /// Median δ in nanoseconds.
    pub delta_ns: f64,
}

/// Calibration of the boundary test.
#[derive(Clone, Copy, Debug)]
struct Calibration {
    revolution_ns: f64,
    /// Robust standard deviation of one δ sample.
    sample_sigma_ns: f64,
    same_delta_ns: f64,
    threshold_ns: f64,
}

impl Calibration {
    /// The margin a crossing's δ must exceed a same-track δ of `same_ns` by. A
    /// crossing costs at least a head switch; no drive switches heads in less
    /// than ~1/64 of a revolution, and the noise must not reach the threshold.
    /// An isolated slipped sector doubles a same-track δ (on a media-limited
    /// drive δ is one slot's passage).
    fn gap_for(&self, same_ns: f64) -> f64 {
        (self.revolution_ns / 64.0)
            .max(8.0 * self.sample_sigma_ns)
            .max(1.5 * same_ns)
    }
}

fn median(values: &mut [f64]) -> f64 {
    values.sort_by(|a, b| a.total_cmp(b));
    let n = values.len();
    if n % 2 == 1 {
        values[n / 2]
    } else {
        (values[n / 2 - 1] + values[n / 2]) / 2.0
    }
}

/// Median absolute deviation scaled to a standard deviation (Gaussian consistency).
fn robust_sigma(values: &[f64]) -> f64 {
    let mut copy = values.to_vec();
    let centre = median(&mut copy);
    let mut deviations: Vec<f64> = values.iter().map(|v| (v - centre).abs()).collect();
    1.4826 * median(&mut deviations)
}

struct Tester<'p, P: Probe + ?Sized> {
    probe: &'p mut P,
    options: TimingOptions,
    capacity: u64,
    calibration: Calibration,
    tests: u64,
    interior_tests: u64,
    smallest_crossing_ns: f64,
    phase: Phase,
    costs: PhaseCosts,
    /// The last boundary test of the track being decided, so that the fallback
    /// does not repeat it.
    remembered: Option<(u64, Verdict)>,
    /// What one slot's passage is known to take where the extractor works now
    /// (from recent track sizes and the chain's slope; 0 when unknown). Zones
    /// with fewer slots than LBN 0's make a same-track δ, and a slip's, longer
    /// than calibrated, so the threshold follows the local slot.
    local_slot_ns: f64,
    /// The slope of the latest decided chain.
    last_slope_ns: Option<f64>,
}

/// What the interior test says of a hypothesised track.
#[derive(Clone, Debug, PartialEq)]
enum Interior {
    /// Confidently no boundary inside.
    Free,
    /// Every segment decided, and these `(from, to)` segments (in LBN order)
    /// confidently hold a boundary: some pair x, x+1 with from <= x < to.
    Suspect(Vec<(u64, u64)>),
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
enum EndPair {
    /// The pair's angle confidently holds a skew: a boundary.
    Crossing,
    /// Not measured, undecided, or no jump: the boundary test must decide.
    NotShown,
}

/// Segments the interior test divides a track into: each segment's angle must
/// stay below a revolution with a skew added, and the median slope must survive
/// two segments that hold boundaries.
const INTERIOR_SEGMENTS: u64 = 5;

/// `value` brought into (−revolution/2, revolution/2].
fn wrap_half(value: f64, revolution: f64) -> f64 {
    let v = value.rem_euclid(revolution);
    if v > revolution / 2.0 {
        v - revolution
    } else {
        v
    }
}

/// Mean of the angle samples that agree with their median (unwrapped around the
/// first sample), and how many agreed; None without a 2/3 majority.
fn robust_circular_mean(samples: &[f64], revolution: f64, sigma: f64) -> Option<(f64, usize)> {
    let first = *samples.first()?;
    let unwrapped: Vec<f64> = samples
        .iter()
        .map(|v| first + wrap_half(v - first, revolution))
        .collect();
    let centre = median(&mut unwrapped.clone());
    let inliers: Vec<f64> = unwrapped
        .into_iter()
        .filter(|v| (v - centre).abs() <= INLIER_SIGMAS * sigma * 1.5)
        .collect();
    if 3 * inliers.len() < 2 * samples.len() {
        return None;
    }
    let mean = inliers.iter().sum::<f64>() / inliers.len() as f64;
    Some((mean.rem_euclid(revolution), inliers.len()))
}

impl<'p, P: Probe + ?Sized> Tester<'p, P> {
    /// Completion instant of a read issued now.
    fn completion(&mut self, lbn: u64, sectors: u64) -> Result<f64, ProbeError> {
        let read = self.probe.timed_read(Lbn(lbn), Sectors(sectors))?;
        let cost = self.costs.of(self.phase);
        cost.reads += 1;
        cost.time += read.response();
        Ok(read.completed.0 as f64)
    }

    /// The same-track δ here: the calibrated one, or one local slot's passage
    /// (`slope_ns`, measured by a chain, included) where that is longer.
    fn local_same(&self, slope_ns: f64) -> f64 {
        self.calibration
            .same_delta_ns
            .max(self.local_slot_ns)
            .max(slope_ns)
    }

    /// The boundary test's threshold here.
    fn threshold(&self) -> f64 {
        let same = self.local_same(0.0);
        same + self.calibration.gap_for(same)
    }

    /// `count` samples of δ for the pair (x, x+1), each from its own two reads.
    fn samples(&mut self, x: u64, count: usize) -> Result<Vec<f64>, ProbeError> {
        let revolution = self.calibration.revolution_ns;
        let mut out = Vec::with_capacity(count);
        for _ in 0..count {
            let alone = self.completion(x, 1)?;
            let pair = self.completion(x, 2)?;
            out.push(phase_difference(pair - alone, revolution));
        }
        Ok(out)
    }

    /// Is there a boundary between x and x+1? Decided from the samples that agree
    /// with their median (a host stall spoils a sample by far more than the noise),
    /// once they are enough, a clear majority, and far enough from the threshold.
    fn test(&mut self, x: u64) -> Result<Verdict, ProbeError> {
        self.tests += 1;
        let c = self.calibration;
        let threshold = self.threshold();
        let mut samples = self.samples(x, self.options.min_samples)?;
        loop {
            let centre = median(&mut samples.clone());
            let inliers: Vec<f64> = samples
                .iter()
                .copied()
                .filter(|v| (v - centre).abs() <= INLIER_SIGMAS * c.sample_sigma_ns)
                .collect();
            let delta = inliers.iter().sum::<f64>() / inliers.len().max(1) as f64;
            let error = c.sample_sigma_ns / (inliers.len().max(1) as f64).sqrt();
            let agreed =
                inliers.len() >= self.options.min_samples && 3 * inliers.len() >= 2 * samples.len();
            let confident =
                agreed && (delta - threshold).abs() > self.options.confidence_sigmas * error;
            if confident || samples.len() >= self.options.max_samples {
                return Ok(Verdict {
                    crossing: delta > threshold,
                    confident,
                    delta_ns: delta,
                });
            }
            let more = self.samples(x, 2)?;
            samples.extend_from_slice(&more);
        }
    }

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
    fn interior(
        &mut self,
        start: u64,
        sectors: u64,
        end_pair: bool,
    ) -> Result<(Interior, EndPair), ProbeError> {
        if sectors <= 2 {
            // Its one pair is the end boundary's business.
            return Ok((Interior::Free, EndPair::NotShown));
        }
        self.interior_tests += 1;
        if self.span_crosses(start, sectors)? == Some(true) {
            let whole = vec![(start, start + sectors - 1)];
            return Ok((Interior::Suspect(whole), EndPair::NotShown));
        }
        let segments = INTERIOR_SEGMENTS.min(sectors - 1);
        let mut checkpoints: Vec<u64> = (0..=segments)
            .map(|i| start + i * (sectors - 1) / segments)
            .collect();
        let end_pair = end_pair && start + sectors < self.capacity;
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
    fn judge_end_pair(&self, checkpoints: &[u64], angles: &[Vec<f64>]) -> Option<EndPair> {
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

    /// The boundary test at x, or its verdict if this track's decision asked it
    /// already.
    fn remembered_test(&mut self, x: u64, phase: Phase) -> Result<Verdict, ProbeError> {
        if let Some((at, verdict)) = self.remembered {
            if at == x {
                return Ok(verdict);
            }
        }
        self.phase = phase;
        let verdict = self.test(x)?;
        self.learn(verdict);
        self.remembered = Some((x, verdict));
        Ok(verdict)
    }

    /// Does reading `sectors` from `start` cross a boundary? A read within one
    /// track travels less than a revolution from the end of `start` to the end of
    /// its last sector, exactly the angle between the two; a read that switches
    /// tracks on the way travels that angle plus whole revolutions once the switch
    /// and the sectors after it pass a full turn. Majority of three trials.
    ///
    /// The test measures media travel only when the host link keeps up with the
    /// media: where one more sector costs the host more than twice a sector's
    /// passage (the Atlas 10K's 0.099 ms bus sector against 0.018 ms on the
    /// platter), a long read ends when its bytes reach the host, and the test
    /// says nothing (None).
    fn span_crosses(&mut self, start: u64, sectors: u64) -> Result<Option<bool>, ProbeError> {
        self.phase = Phase::Span;
        let revolution = self.calibration.revolution_ns;
        if self.link_is_slow(sectors) {
            return Ok(None);
        }
        let last = start + sectors - 1;
        let mut votes = 0;
        for _ in 0..3 {
            let first_alone = self.completion(start, 1)?;
            let whole = self.completion(start, sectors)?;
            let travelled = whole - first_alone - revolution;
            let again = self.completion(start, 1)?;
            let last_alone = self.completion(last, 1)?;
            let angle = (last_alone - again).rem_euclid(revolution);
            if travelled - angle > revolution / 2.0 {
                votes += 1;
            }
        }
        Ok(Some(votes >= 2))
    }

    /// Where one more sector costs the host more than twice a sector's passage on
    /// a track of `sectors`: a long read ends when its bytes reach the host.
    fn link_is_slow(&self, sectors: u64) -> bool {
        let sector_passage = self.calibration.revolution_ns / sectors.max(1) as f64;
        self.calibration.same_delta_ns > 2.0 * sector_passage
    }

    /// Does some read inside [start, start + sectors) travel an extra turn? The
    /// slow-link stand-in for the span read: a boundary whose angle looks like
    /// same-track spacing (a zone change after a short zone-end track) is one
    /// the head cannot make in a slot's passage, so a read across it waits a
    /// turn (or its angle is nearly one), which the chains, reduced modulo a
    /// turn, cannot see. Short reads ("tiles", overlapping by one LBN so that
    /// every pair lies in one) stay short enough for the link not to hide the
    /// turn: a tile of n sectors after a read of its first alone ends one turn
    /// plus (n − 1) same-track δ later, at most a third of a turn, or about a
    /// turn later than that across such a boundary. Returns the first tile
    /// (from, to) that travelled the extra turn; None on a link that keeps up
    /// (the span read covers it) or where no tile did.
    fn extra_turn(
        &mut self,
        (start, resume): (u64, u64),
        end: u64,
    ) -> Result<Option<(u64, u64)>, ProbeError> {
        let sectors = end - start;
        if sectors <= 2 || !self.link_is_slow(sectors) {
            return Ok(None);
        }
        self.phase = Phase::Tiles;
        let c = self.calibration;
        let revolution = c.revolution_ns;
        let slot = self.local_slot_ns.max(revolution / sectors as f64);
        let per_sector = self.local_same(slot);
        let step = ((revolution / 3.0 / per_sector) as u64).max(1);
        let mut from = resume.max(start);
        while from + 1 < end {
            let to = (from + step).min(end - 1);
            let predicted = (to - from) as f64 * per_sector;
            let across = revolution - c.gap_for(per_sector) - 2.0 * slot;
            let threshold = (predicted + across) / 2.0;
            // A stall on the single read's side shortens the tile; retry those.
            for _ in 0..3 {
                let alone = self.completion(from, 1)?;
                let tile = self.completion(from, to - from + 1)?;
                let travelled = tile - alone - revolution;
                if travelled > threshold {
                    return Ok(Some((from, to)));
                }
                if travelled > predicted - INLIER_SIGMAS * c.sample_sigma_ns {
                    break;
                }
            }
            from = to;
        }
        Ok(None)
    }

    /// One chain of single-sector reads over the checkpoints: one angle sample per
    /// segment.
    fn interior_pass(
        &mut self,
        checkpoints: &[u64],
        angles: &mut [Vec<f64>],
    ) -> Result<(), ProbeError> {
        self.phase = Phase::Chain;
        let revolution = self.calibration.revolution_ns;
        let mut last = self.completion(checkpoints[0], 1)?;
        for (i, &c) in checkpoints[1..].iter().enumerate() {
            let now = self.completion(c, 1)?;
            angles[i].push((now - last).rem_euclid(revolution));
            last = now;
        }
        Ok(())
    }

    /// Remember a chain's slope (once it has its minimum passes) as the local slot.
    fn learn_slope(&mut self, checkpoints: &[u64], angles: &[Vec<f64>]) {
        let slot = self.chain_slot(checkpoints, angles);
        if slot > 0.0 {
            self.local_slot_ns = self.local_slot_ns.max(slot);
            self.last_slope_ns = Some(slot);
        }
    }

    /// One slot's passage near `from` (None if not measured): the chain slope over
    /// five two-LBN segments, which at most one boundary can spoil.
    fn local_slot(&mut self, from: u64) -> Result<Option<f64>, ProbeError> {
        if from + 10 >= self.capacity {
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
    fn judge_interior(&self, checkpoints: &[u64], angles: &[Vec<f64>]) -> Option<Interior> {
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
                suspects.push((checkpoints[i], checkpoints[i + 1]));
            }
        }
        Some(if suspects.is_empty() {
            Interior::Free
        } else {
            Interior::Suspect(suspects)
        })
    }

    /// Remember the smallest confident crossing (reported; the threshold stays
    /// where calibration put it: a crossing that costs a missed revolution must not
    /// raise it above a crossing that merely waits for the skew).
    fn learn(&mut self, verdict: Verdict) {
        if verdict.crossing && verdict.confident {
            self.smallest_crossing_ns = self.smallest_crossing_ns.min(verdict.delta_ns);
        }
    }
}

/// δ from the time between the two completions: the pair read, issued as the
/// single read completes, waits one revolution for x and then reads on. It is not
/// reduced modulo a revolution: a crossing whose switch overruns the skew costs a
/// revolution more, and must not look like a same-track pair.
fn phase_difference(elapsed: f64, revolution: f64) -> f64 {
    elapsed - revolution
}

/// Revolution time, sample noise and the same-track δ, measured at LBN 0.
fn calibrate<P: Probe + ?Sized>(probe: &mut P, reads: usize) -> Result<Calibration, ProbeError> {
    let reads = reads.max(9);
    let mut last = probe.timed_read(Lbn(0), Sectors(1))?.completed.0 as f64;
    let mut gaps = Vec::with_capacity(reads);
    for _ in 0..reads {
        let now = probe.timed_read(Lbn(0), Sectors(1))?.completed.0 as f64;
        gaps.push(now - last);
        last = now;
    }
    let revolution_ns = median(&mut gaps.clone());
    // δ at (0, 1): LBN 0 and 1 share a track on every drive with 2+ sectors a track.
    let mut deltas = Vec::with_capacity(reads);
    for _ in 0..reads {
        let alone = probe.timed_read(Lbn(0), Sectors(1))?.completed.0 as f64;
        let pair = probe.timed_read(Lbn(0), Sectors(2))?.completed.0 as f64;
        deltas.push(phase_difference(pair - alone, revolution_ns));
    }
    let same_delta_ns = median(&mut deltas.clone());
    let sample_sigma_ns = robust_sigma(&deltas).max(1_000.0);
    let mut calibration = Calibration {
        revolution_ns,
        sample_sigma_ns,
        same_delta_ns,
        threshold_ns: 0.0,
    };
    calibration.threshold_ns = same_delta_ns + calibration.gap_for(same_delta_ns);
    Ok(calibration)
}

/// One extraction cursor: a region of the disk being mapped.
struct Cursor {
    /// The next LBN known to start a track (None until the first boundary is found).
    next: Option<u64>,
    /// Where the cursor starts looking for its first boundary.
    start: u64,
    /// Where it stops: the first boundary found by the next region's cursor.
    stop: Option<u64>,
    tracks: Vec<Track>,
    recent_sizes: VecDeque<u64>,
    /// One slot's passage where the cursor works, as last measured (0 unknown).
    slot_ns: f64,
    /// Whether the tile reads have looked inside the latest track.
    last_tiled: bool,
    done: bool,
}

const RECENT_SIZES_BOUND: usize = 3;
/// Samples further than this many noise deviations from the median are stalls.
const INLIER_SIGMAS: f64 = 4.0;

/// Extract the track map by timing alone.
pub fn extract<P: Probe + ?Sized>(
    probe: &mut P,
    options: &TimingOptions,
) -> Result<TimingExtraction, ProbeError> {
    let capacity = probe.read_capacity()?.0;
    let drive = probe.name();
    let calibration = calibrate(probe, options.calibration_reads)?;
    let mut tester = Tester {
        probe,
        options: options.clone(),
        capacity,
        calibration,
        tests: 0,
        interior_tests: 0,
        smallest_crossing_ns: f64::INFINITY,
        phase: Phase::FirstBoundary,
        costs: PhaseCosts::default(),
        remembered: None,
        local_slot_ns: 0.0,
        last_slope_ns: None,
    };
    let mut cursors = make_cursors(capacity, options.regions);
    while cursors.iter().any(|c| !c.done) {
        for index in 0..cursors.len() {
            if !cursors[index].done {
                step(&mut tester, &mut cursors, index)?;
            }
        }
    }
    let tracks: Vec<Track> = cursors.into_iter().flat_map(|c| c.tracks).collect();
    // Each cursor stops where the next one's first track starts, so the tracks
    // tile unless the drive's timing contradicts itself.
    let map = TrackMap::new(
        drive.clone(),
        "timing",
        Sectors(capacity),
        tracks,
        Vec::new(),
    )
    .map_err(|tiling| ProbeError::Failed {
        probe: drive,
        command: "assembling the track map",
        detail: tiling.to_string(),
    })?;
    let c = tester.calibration;
    Ok(TimingExtraction {
        map,
        boundary_tests: tester.tests,
        interior_tests: tester.interior_tests,
        revolution: Nanoseconds(c.revolution_ns as u64),
        same_track_delta: Nanoseconds(c.same_delta_ns.max(0.0) as u64),
        threshold: Nanoseconds(c.threshold_ns as u64),
        costs: tester.costs,
    })
}

fn make_cursors(capacity: u64, regions: usize) -> Vec<Cursor> {
    let regions = (regions.max(1) as u64).min(capacity / 4096 + 1);
    (0..regions)
        .map(|r| {
            let start = capacity * r / regions;
            Cursor {
                next: (r == 0).then_some(0),
                start,
                stop: None,
                tracks: Vec::new(),
                recent_sizes: VecDeque::new(),
                slot_ns: 0.0,
                last_tiled: false,
                done: false,
            }
        })
        .collect()
}

/// Advance one cursor by one track (or by finding its first boundary).
fn step<P: Probe + ?Sized>(
    tester: &mut Tester<'_, P>,
    cursors: &mut [Cursor],
    index: usize,
) -> Result<(), ProbeError> {
    let capacity = tester.capacity;
    let Some(start) = cursors[index].next else {
        tester.last_slope_ns = None;
        let first = first_boundary_from(tester, cursors[index].start)?;
        cursors[index].slot_ns = tester.last_slope_ns.unwrap_or(0.0);
        cursors[index].next = Some(first);
        if index > 0 {
            cursors[index - 1].stop = Some(first);
        }
        return Ok(());
    };
    let limit = cursors[index].stop.unwrap_or(capacity).min(capacity);
    if start >= limit {
        // Finished only once the next region has said where it starts.
        let next_known = index + 1 >= cursors.len() || cursors[index].stop.is_some();
        cursors[index].done = next_known;
        return Ok(());
    }
    let sizes: Vec<u64> = cursors[index].recent_sizes.iter().copied().collect();
    tester.local_slot_ns = cursors[index].slot_ns;
    tester.last_slope_ns = None;
    let decided = track_end(tester, start, &sizes, limit)?;
    let cursor = &mut cursors[index];
    let (end, certain) = guard_extra_turns(tester, cursor, start, decided)?;
    cursor.slot_ns = tester.last_slope_ns.unwrap_or(cursor.slot_ns);
    let size = end - start;
    cursor.tracks.push(Track {
        first: Lbn(start),
        sectors: Sectors(size),
        location: None,
        uncertain: !certain,
    });
    if cursor.recent_sizes.front() != Some(&size) {
        cursor.recent_sizes.retain(|&s| s != size);
        cursor.recent_sizes.push_front(size);
        cursor.recent_sizes.truncate(RECENT_SIZES_BOUND);
    }
    assert!(cursor.recent_sizes.len() <= RECENT_SIZES_BOUND);
    cursor.next = Some(end);
    Ok(())
}

/// The first boundary at or after `from` (a track starts there), found by testing
/// pairs linearly.
fn first_boundary_from<P: Probe + ?Sized>(
    tester: &mut Tester<'_, P>,
    from: u64,
) -> Result<u64, ProbeError> {
    tester.phase = Phase::FirstBoundary;
    if from == 0 {
        return Ok(0);
    }
    tester.local_slot_ns = 0.0;
    tester.last_slope_ns = tester.local_slot(from)?;
    let mut x = from - 1;
    while x + 1 < tester.capacity {
        let verdict = tester.test(x)?;
        tester.learn(verdict);
        if verdict.crossing {
            return Ok(x + 1);
        }
        x += 1;
    }
    Ok(tester.capacity)
}

/// On a slow link, where a track's size differs from the one before it (a zone
/// change, a slip), the tile reads ([`Tester::extra_turn`]) look for a boundary
/// the chains cannot see, in this track and the one before (a short zone-end
/// track and the next one can add up to the size expected, and only the track
/// after them shows the change). A boundary found inside this track ends it
/// there; one inside the track before flags that track uncertain.
fn guard_extra_turns<P: Probe + ?Sized>(
    tester: &mut Tester<'_, P>,
    cursor: &mut Cursor,
    start: u64,
    (mut end, mut certain): (u64, bool),
) -> Result<(u64, bool), ProbeError> {
    let changed = cursor
        .tracks
        .last()
        .is_some_and(|t| t.sectors.0 != end - start);
    if !changed || !certain {
        cursor.last_tiled = false;
        return Ok((end, certain));
    }
    if let Some(previous) = cursor.tracks.last_mut() {
        if !previous.uncertain && !cursor.last_tiled {
            let (first, stop) = (previous.first.0, previous.end().0);
            let mut resume = first;
            while let Some(tile) = tester.extra_turn((first, resume), stop)? {
                if !matches!(last_crossing(tester, &[tile])?, Crossing::NoneConfidently) {
                    previous.uncertain = true;
                    break;
                }
                resume = tile.1;
            }
        }
    }
    cursor.last_tiled = true;
    let mut resume = start;
    while let Some(tile) = tester.extra_turn((start, resume), end)? {
        match last_crossing(tester, &[tile])? {
            Crossing::At(earlier) => {
                let verdict = tester.interior(start, earlier - start, false)?.0;
                (end, certain) = settle_interior(tester, start, (earlier, true), verdict)?;
                if !certain {
                    break;
                }
                resume = tile.0;
            }
            Crossing::NoneConfidently => resume = tile.1,
            Crossing::Undecided => return Ok((end, false)),
        }
    }
    Ok((end, certain))
}

/// One past the last LBN of the track starting at `start`, and whether every test
/// that decided it was confident. No end is accepted before the interior test has
/// confidently found no boundary inside the track (a short zone-end track and the
/// next one can add up to the expected size, and the outward search can meet the
/// later of two boundaries); a track whose interior stays undecided is uncertain.
///
/// The common case costs one checkpoint chain: the expected size's interior and
/// its end pair read together. Anything else (a size change, an undecided end, a
/// suspect interior) falls back to the boundary tests.
fn track_end<P: Probe + ?Sized>(
    tester: &mut Tester<'_, P>,
    start: u64,
    recent_sizes: &[u64],
    limit: u64,
) -> Result<(u64, bool), ProbeError> {
    tester.remembered = None;
    if let Some(end) = recent_sizes
        .first()
        .map(|s| start + s)
        .filter(|&e| e <= limit)
    {
        // At the limit the next region's cursor has found the boundary already.
        let known = end == limit;
        let (verdict, pair) = tester.interior(start, end - start, !known)?;
        // An overfull span is suspect as a whole, and the direct tests cannot
        // clear it.
        let overfull = verdict == Interior::Overfull;
        let verdict = if overfull {
            Interior::Suspect(vec![(start, end - 1)])
        } else {
            verdict
        };
        match verdict {
            Interior::Free if known || pair == EndPair::Crossing => {
                return Ok((end, true));
            }
            Interior::Free => {
                let test = tester.remembered_test(end - 1, Phase::EndTest)?;
                if test.crossing && test.confident {
                    return Ok((end, true));
                }
            }
            Interior::Suspect(segments) => {
                // Usually the track is one recently seen size shorter (a slip).
                let inside = |x: u64| segments.iter().any(|&(from, to)| from <= x && x < to);
                for &size in &recent_sizes[1..] {
                    let earlier = start + size;
                    if earlier < end && inside(earlier - 1) {
                        let test = tester.remembered_test(earlier - 1, Phase::SuspectTest)?;
                        if test.crossing && test.confident {
                            let verdict = tester.interior(start, size, false)?.0;
                            return settle_interior(tester, start, (earlier, true), verdict);
                        }
                    }
                }
                match last_crossing(tester, &segments)? {
                    Crossing::At(earlier) => {
                        let verdict = tester.interior(start, earlier - start, false)?.0;
                        return settle_interior(tester, start, (earlier, true), verdict);
                    }
                    // The direct tests clear the interior; the end remains.
                    Crossing::NoneConfidently if !overfull => {
                        if known {
                            return Ok((end, true));
                        }
                        let test = tester.remembered_test(end - 1, Phase::EndTest)?;
                        if test.crossing && test.confident {
                            return Ok((end, true));
                        }
                    }
                    Crossing::NoneConfidently | Crossing::Undecided => {}
                }
            }
            Interior::Undecided | Interior::Overfull => {}
        }
    }
    let (end, certain) = candidate_end(tester, start, recent_sizes, limit)?;
    let verdict = tester.interior(start, end - start, false)?.0;
    settle_interior(tester, start, (end, certain), verdict)
}

/// Accept the end once the interior is free, moving it earlier while the boundary
/// test finds a crossing inside.
fn settle_interior<P: Probe + ?Sized>(
    tester: &mut Tester<'_, P>,
    start: u64,
    (mut end, mut certain): (u64, bool),
    mut verdict: Interior,
) -> Result<(u64, bool), ProbeError> {
    loop {
        let overfull = verdict == Interior::Overfull;
        let segments = match verdict {
            Interior::Free => return Ok((end, certain)),
            // Rare (a persistent latency oddity at one LBN): test every pair.
            Interior::Undecided | Interior::Overfull => vec![(start, end - 1)],
            Interior::Suspect(segments) => segments,
        };
        match last_crossing(tester, &segments)? {
            Crossing::At(earlier) => (end, certain) = (earlier, true),
            Crossing::NoneConfidently => return Ok((end, certain && !overfull)),
            Crossing::Undecided => return Ok((end, false)),
        }
        verdict = tester.interior(start, end - start, false)?.0;
    }
}

/// The end the boundary test supports: a recently seen size (the common case), or
/// the crossing nearest the expected end.
fn candidate_end<P: Probe + ?Sized>(
    tester: &mut Tester<'_, P>,
    start: u64,
    recent_sizes: &[u64],
    limit: u64,
) -> Result<(u64, bool), ProbeError> {
    for &size in recent_sizes {
        let end = start + size;
        if end == limit {
            return Ok((end, true)); // the next region's cursor found this boundary
        }
        if end > limit {
            continue;
        }
        let verdict = tester.remembered_test(end - 1, Phase::EndTest)?;
        if verdict.crossing && verdict.confident {
            return Ok((end, true));
        }
    }
    let expected = recent_sizes.first().copied();
    let widest = recent_sizes.iter().copied().max();
    search_outward(tester, start, expected, widest, limit)
}

/// What the boundary test says of every pair in the suspect segments.
enum Crossing {
    /// The last confident crossing: a track ends before this LBN.
    At(u64),
    /// Every pair confidently shares a track: the suspicion was unfounded.
    NoneConfidently,
    /// No confident crossing, but some pair undecided.
    Undecided,
}

/// The boundary test on every pair (x, x+1), x in each [from, to), last pair
/// first: the usual suspect is a track one slip shorter than expected, and any
/// earlier crossing is caught by the interior test of the shortened track. The
/// direct test outranks the interior test: it settles a suspicion either way.
fn last_crossing<P: Probe + ?Sized>(
    tester: &mut Tester<'_, P>,
    segments: &[(u64, u64)],
) -> Result<Crossing, ProbeError> {
    tester.phase = Phase::SuspectTest;
    let mut all_confident = true;
    for &(from, to) in segments.iter().rev() {
        for x in (from..to).rev() {
            let verdict = tester.test(x)?;
            tester.learn(verdict);
            if verdict.crossing && verdict.confident {
                return Ok(Crossing::At(x + 1));
            }
            all_confident &= verdict.confident;
        }
    }
    Ok(if all_confident {
        Crossing::NoneConfidently
    } else {
        Crossing::Undecided
    })
}

/// Test candidate ends outward from the expected one (or from `start` with no
/// expectation) until a confident crossing; the best unconfident one otherwise.
fn search_outward<P: Probe + ?Sized>(
    tester: &mut Tester<'_, P>,
    start: u64,
    expected: Option<u64>,
    widest: Option<u64>,
    limit: u64,
) -> Result<(u64, bool), ProbeError> {
    let centre = expected.map_or(start + 1, |s| start + s);
    let reach = widest.map_or(limit - start, |s| 2 * s).max(2);
    let mut best: Option<(f64, u64)> = None;
    let mut all_confident = true;
    for step in 0..=2 * reach {
        let offset = (step as i64 + 1) / 2 * if step % 2 == 1 { 1 } else { -1 };
        let Some(end) = centre.checked_add_signed(offset) else {
            continue;
        };
        if end <= start || end > limit {
            if end > limit && expected.is_none() {
                break;
            }
            continue;
        }
        if end == limit {
            if limit < tester.capacity {
                return Ok((end, true)); // the next region's cursor found this boundary
            }
            continue; // the capacity: a boundary, but only if none comes earlier
        }
        let verdict = tester.remembered_test(end - 1, Phase::EndTest)?;
        if verdict.crossing && verdict.confident {
            return Ok((end, true));
        }
        all_confident &= verdict.confident;
        if verdict.crossing && best.is_none_or(|(d, _)| verdict.delta_ns > d) {
            best = Some((verdict.delta_ns, end));
        }
    }
    if limit == tester.capacity && best.is_none() {
        // No boundary before the end of the disk: this is the last track (certain
        // only if every pair tested confidently shares a track).
        return Ok((limit, all_confident));
    }
    Ok(best.map_or((limit, false), |(_, end)| (end, false)))
}
