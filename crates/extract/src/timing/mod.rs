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
//! **The common case: runs of tracks.** From a known boundary T and the most
//! recent track size S (traxtents: "the next track has the same size"), the
//! interior test's checkpoint chain (below) over [T, T+S) also reads T+S, the first
//! LBN of the next track if S is right. On one track the angle from T+S−1 to T+S
//! is one slot; across the boundary it holds the skew. The chain's three passes
//! give that pair three samples from three separate passes, which must agree and
//! clear the same gap with the same confidence as a boundary test; then a track
//! whose interior is free is accepted without any boundary test. Only a jump
//! counts: a pair with no jump may still be a crossing without skew, which only
//! the boundary test sees. After a certain track of size S, one chain runs
//! through up to sixteen predicted tracks T, T+S, T+2S, ... (`runs`): each
//! track's end pair read is the next track's first checkpoint, so a pass costs a
//! revolution and a skew per track instead of two revolutions (reading the track,
//! then coming back to its first LBN) plus a seek between cursors. Each track is
//! judged as a lone chain would judge it; the run accepts tracks in LBN order up
//! to the first it does not accept, which goes to the single-track search. Where
//! the skew covers the head switch but not the switch plus a command's overhead
//! (the DJNA-371350), the next track's first LBN read alone after the last waits
//! a turn: two passes in three read the pair as one two-sector read instead, and
//! the end pair and the last segment are each taken as the difference between a
//! pass of each kind (only where the link keeps up with the media: on a slower
//! link a two-sector read ends when its bytes reach the host).
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
//! with the media, a read of the whole track (the *span read*) must not travel
//! an extra revolution. Where the link is slower than the media (the Atlas 10K),
//! a long read ends when its bytes reach the host and hides the turn, so *tile
//! reads* stand in: reads short enough that their bus time stays within a third
//! of a turn, overlapping by one LBN, each timed after a read of its first
//! sector alone. Either runs on a track whose size differs from the one before
//! it, and on that one before (a short zone-end track and the next track can add
//! up to the size expected, and only the track after them shows the change): a
//! hidden boundary comes with a zone change, and a zone change changes the size.
//! (The span read once ran on every track, where it cost twelve reads a track,
//! and where jitter wrapped a whole track's angle, which is a slot short of a
//! turn, to nearly zero, it saw a false extra turn on one track in six of the
//! Cheetah X15 and sent the whole track to the boundary test, pair by pair.) A
//! span or tile that travelled the extra turn gets the boundary test on every
//! pair; a crossing ends the track there, or flags the track before uncertain. A
//! suspect segment (or an undecided interior) is settled by the boundary test
//! on every pair in it; a pair that stays undecided makes the track
//! `uncertain`.
//!
//! **Cost.** In the common case three passes of about six reads a track. With
//! jitter seed 7 the chains cost 4.1 revolutions a track on the Atlas 10K (19
//! chain reads, 0.7 end-test, 0.16 suspect-test and 0.12 tile reads a track;
//! 0.54 simulated hours), 5.4 on the Cheetah X15 and 4.9 on the DJNA-371350
//! (pair passes on both); every catalog drive is under 0.7 simulated hours per
//! 9 GB except the DJNA-371350 (0.98 h: 7,200 RPM and 214 sectors a track on
//! average). [`PhaseCosts`] accounts for every read; `tests/catalog.rs` prints
//! the table. The span read runs only where the tile reads would (a size
//! change, see below), fifteen reads there.
//!
//! **Cache defeat.** Extraction runs as many interleaved cursors over widely spread
//! regions of the disk (traxtents used 100), one track or one run per cursor in
//! turn, so that consecutive tests rarely touch neighbouring data; each cursor first measures the
//! local slot with a short chain and finds the first boundary at or after its
//! region start, and stops where the next region's cursor began. The chains
//! reread the same sectors, so the read cache must be off (both papers turned it
//! off with the caching mode page).
//!
//! **What it cannot see.** Cylinder and surface (the map says `-`), remapped LBNs
//! (a read across one costs a seek and looks like two boundaries), runs of
//! slipped sectors as long as a head switch. A hidden boundary (see above)
//! inside a track whose size equals both its neighbours' escapes the span and
//! tile reads, which run only where the size changes: that needs a zone-end
//! track and a new zone's first track that add up to the old size *and* a new
//! zone of that same size (for instance a one-LBN zone-end track followed by a
//! slipped track), or that the track is the last of its region (the track after
//! it is another cursor's, and nobody looks back). A tile read whose single
//! read is delayed by a host stall of a third to two thirds of a turn can miss
//! its extra turn (about one tile in a thousand). The property test
//! (`tests/timing_properties.rs`) runs both links: with the span read and
//! without it (a link 2.2 times slower than the sparsest track). Slow link:
//! 0 false acceptances in 40,000 fresh seeds (80,000 layouts); before the tile
//! reads it gave about one in 3,000. Fast link: 1 false acceptance in 100,000
//! seeds (200,000 layouts; seed 19761, a one-LBN zone-end track and a slipped
//! track, the escape above). While the span read ran on every track of a fast
//! link it gave 0 there, but cost twelve reads a track (1.7 simulated hours on
//! the Cheetah X15 with jitter seed 7, before the boundary tests its false
//! extra turns then asked for).
//!
//! **Where things are.** `statistics` holds the robust averages every test
//! decides from; `calibration` the revolution, the noise and the same-track δ
//! measured at LBN 0; `boundary_test` the tester (the extraction's state, its
//! accounted reads) and the boundary test of one pair; `interior` the
//! checkpoint chains; `runs` the chains through several predicted tracks;
//! `turns` the span and tile reads that look for an extra
//! turn; `search` how one track's end is decided from those tests; `cursor`
//! the interleaved cursors that walk the disk. This file holds the public
//! options and result types and [`extract`], which ties them together.

mod boundary_test;
mod calibration;
mod cursor;
mod interior;
mod runs;
mod search;
mod statistics;
#[cfg(test)]
mod tests;
mod turns;

use crate::probe::{Probe, ProbeError};
use boundary_test::Tester;
use calibration::calibrate;
pub use cursor::max_regions;
use cursor::{make_cursors, step};
use serde::Serialize;
use spinstack_sim::units::Nanoseconds;
use spinstack_trackmap::{Track, TrackMap};

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
    /// Interleaved extraction cursors over widely spread regions: at most this
    /// many, and no more than [`max_regions`] of the disk.
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

/// Extract the track map by timing alone.
pub fn extract<P: Probe + ?Sized>(
    probe: &mut P,
    options: &TimingOptions,
) -> Result<TimingExtraction, ProbeError> {
    let capacity = probe.read_capacity()?;
    let drive = probe.name();
    let calibration = calibrate(probe, options.calibration_reads)?;
    let mut tester = Tester::new(probe, options.clone(), capacity, calibration);
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
    let map =
        TrackMap::new(drive.clone(), "timing", capacity, tracks, Vec::new()).map_err(|tiling| {
            ProbeError::Failed {
                probe: drive,
                command: "assembling the track map",
                detail: tiling.to_string(),
            }
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
