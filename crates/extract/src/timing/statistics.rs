//! The statistics every timing test decides from: the median, a robust
//! deviation, angles folded around a revolution and their robust mean, and δ
//! from two completions. Pure functions of `f64` samples in nanoseconds.

/// Samples further than this many noise deviations from the median are stalls.
pub(super) const INLIER_SIGMAS: f64 = 4.0;

/// The median of `values` (sorted in place; the mean of the middle two for an
/// even count).
pub(super) fn median(values: &mut [f64]) -> f64 {
    values.sort_by(|a, b| a.total_cmp(b));
    let n = values.len();
    if n % 2 == 1 {
        values[n / 2]
    } else {
        (values[n / 2 - 1] + values[n / 2]) / 2.0
    }
}

/// Median absolute deviation scaled to a standard deviation (Gaussian consistency).
pub(super) fn robust_sigma(values: &[f64]) -> f64 {
    let mut copy = values.to_vec();
    let centre = median(&mut copy);
    let mut deviations: Vec<f64> = values.iter().map(|v| (v - centre).abs()).collect();
    1.4826 * median(&mut deviations)
}

/// `value` brought into (−revolution/2, revolution/2].
pub(super) fn wrap_half(value: f64, revolution: f64) -> f64 {
    let v = value.rem_euclid(revolution);
    if v > revolution / 2.0 {
        v - revolution
    } else {
        v
    }
}

/// Mean of the angle samples that agree with their median (unwrapped around the
/// first sample), and how many agreed; None without a 2/3 majority.
pub(super) fn robust_circular_mean(
    samples: &[f64],
    revolution: f64,
    sigma: f64,
) -> Option<(f64, usize)> {
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

/// δ from the time between the two completions: the pair read, issued as the
/// single read completes, waits one revolution for x and then reads on. It is not
/// reduced modulo a revolution: a crossing whose switch overruns the skew costs a
/// revolution more, and must not look like a same-track pair.
pub(super) fn phase_difference(elapsed: f64, revolution: f64) -> f64 {
    elapsed - revolution
}
