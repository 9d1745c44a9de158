//! The tester: the state one extraction carries (probe, options, calibration,
//! counts, the local slot), its timed reads with their accounting by phase, and
//! the boundary test of one pair (x, x+1) from (x alone, x and x+1) read pairs.

use super::calibration::Calibration;
use super::statistics::{median, phase_difference, INLIER_SIGMAS};
use super::{Phase, PhaseCosts, TimingOptions, Verdict};
use crate::probe::{Probe, ProbeError};
use spinstack_sim::units::{Lbn, Sectors};

/// The state of one extraction and the tests it runs (this file: reads and the
/// boundary test; `interior` and `turns` add the chains and the extra-turn reads).
pub(super) struct Tester<'p, P: Probe + ?Sized> {
    probe: &'p mut P,
    pub(super) options: TimingOptions,
    /// The LBNs the drive exports: no read reaches `Lbn(capacity)`.
    pub(super) capacity: Sectors,
    pub(super) calibration: Calibration,
    /// Boundary tests run.
    pub(super) tests: u64,
    pub(super) interior_tests: u64,
    /// The phase the next reads are accounted to.
    pub(super) phase: Phase,
    pub(super) costs: PhaseCosts,
    /// The last boundary test of the track being decided, so that the fallback
    /// does not repeat it.
    pub(super) remembered: Option<(Lbn, Verdict)>,
    /// What one slot's passage is known to take where the extractor works now
    /// (from recent track sizes and the chain's slope; 0 when unknown). Zones
    /// with fewer slots than LBN 0's make a same-track δ, and a slip's, longer
    /// than calibrated, so the threshold follows the local slot.
    pub(super) local_slot_ns: f64,
    /// The slope of the latest decided chain.
    pub(super) last_slope_ns: Option<f64>,
}

impl<'p, P: Probe + ?Sized> Tester<'p, P> {
    pub(super) fn new(
        probe: &'p mut P,
        options: TimingOptions,
        capacity: Sectors,
        calibration: Calibration,
    ) -> Self {
        Tester {
            probe,
            options,
            capacity,
            calibration,
            tests: 0,
            interior_tests: 0,
            phase: Phase::FirstBoundary,
            costs: PhaseCosts::default(),
            remembered: None,
            local_slot_ns: 0.0,
            last_slope_ns: None,
        }
    }

    /// One past the last LBN of the disk.
    pub(super) fn disk_end(&self) -> Lbn {
        Lbn(self.capacity.0)
    }

    /// Completion instant of a read issued now, accounted to the current phase.
    pub(super) fn completion(&mut self, lbn: Lbn, sectors: Sectors) -> Result<f64, ProbeError> {
        let read = self.probe.timed_read(lbn, sectors)?;
        let cost = self.costs.of(self.phase);
        cost.reads += 1;
        cost.time += read.response();
        Ok(read.completed.0 as f64)
    }

    /// The same-track δ here: the calibrated one, or one local slot's passage
    /// (`slope_ns`, measured by a chain, included) where that is longer.
    pub(super) fn local_same(&self, slope_ns: f64) -> f64 {
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
    fn samples(&mut self, x: Lbn, count: usize) -> Result<Vec<f64>, ProbeError> {
        let revolution = self.calibration.revolution_ns;
        let mut out = Vec::with_capacity(count);
        for _ in 0..count {
            let alone = self.completion(x, Sectors(1))?;
            let pair = self.completion(x, Sectors(2))?;
            out.push(phase_difference(pair - alone, revolution));
        }
        Ok(out)
    }

    /// Is there a boundary between x and x+1? Decided from the samples that agree
    /// with their median (a host stall spoils a sample by far more than the noise),
    /// once they are enough, a clear majority, and far enough from the threshold.
    pub(super) fn test(&mut self, x: Lbn) -> Result<Verdict, ProbeError> {
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

    /// The boundary test at x, or its verdict if this track's decision asked it
    /// already.
    pub(super) fn remembered_test(&mut self, x: Lbn, phase: Phase) -> Result<Verdict, ProbeError> {
        if let Some((at, verdict)) = self.remembered {
            if at == x {
                return Ok(verdict);
            }
        }
        self.phase = phase;
        let verdict = self.test(x)?;
        self.remembered = Some((x, verdict));
        Ok(verdict)
    }
}
