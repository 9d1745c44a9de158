//! Calibration of the boundary test at LBN 0: the revolution time, the noise of
//! one δ sample and the same-track δ, and the gap a crossing's δ must clear.

use super::statistics::{median, phase_difference, robust_sigma};
use crate::probe::{Probe, ProbeError};
use spinstack_sim::units::{Lbn, Sectors};

/// Calibration of the boundary test.
#[derive(Clone, Copy, Debug)]
pub(super) struct Calibration {
    pub(super) revolution_ns: f64,
    /// Robust standard deviation of one δ sample.
    pub(super) sample_sigma_ns: f64,
    pub(super) same_delta_ns: f64,
    pub(super) threshold_ns: f64,
}

impl Calibration {
    /// The margin a crossing's δ must exceed a same-track δ of `same_ns` by. A
    /// crossing costs at least a head switch; no drive switches heads in less
    /// than ~1/64 of a revolution, and the noise must not reach the threshold.
    /// An isolated slipped sector doubles a same-track δ (on a media-limited
    /// drive δ is one slot's passage).
    pub(super) fn gap_for(&self, same_ns: f64) -> f64 {
        (self.revolution_ns / 64.0)
            .max(8.0 * self.sample_sigma_ns)
            .max(1.5 * same_ns)
    }
}

/// Revolution time, sample noise and the same-track δ, measured at LBN 0.
pub(super) fn calibrate<P: Probe + ?Sized>(
    probe: &mut P,
    reads: usize,
) -> Result<Calibration, ProbeError> {
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
