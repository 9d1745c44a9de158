//! Statistics: response-time summaries, DiskSim-style histograms and the demerit
//! figure.
//!
//! The demerit figure (Ruemmler & Wilkes) is the root-mean-square horizontal distance
//! between two response-time distributions. [`demerit_ms`] reproduces the number
//! DiskSim's validation prints (its `rms` tool reading two printed histograms);
//! [`demerit_exact_ms`] is the same idea on the raw samples, without bucketing.

use crate::units::Nanoseconds;

/// Buckets in DiskSim's "access time" histograms (statdefs: `Distribution size: 1750`).
pub const DISKSIM_BUCKETS: usize = 1750;
/// DiskSim scales milliseconds by 1000 before bucketing (statdefs: `Scale 1000`).
const DISKSIM_SCALE: f64 = 1000.0;
/// The `rms` tool samples both quantile functions at every multiple of this fraction.
const RMS_STEP: f64 = 0.0001;

/// Bucket starts in scaled units (microseconds): `b0 = 0`, `b(i+1) = b(i) + 1 + floor(b(i)/100)`.
/// The largest start (about 2.05e9) fits the 32-bit `int` DiskSim uses.
fn disksim_bucket_starts() -> &'static [i64; DISKSIM_BUCKETS] {
    static STARTS: std::sync::OnceLock<[i64; DISKSIM_BUCKETS]> = std::sync::OnceLock::new();
    STARTS.get_or_init(|| {
        let mut starts = [0i64; DISKSIM_BUCKETS];
        for index in 1..DISKSIM_BUCKETS {
            let previous = starts[index - 1];
            starts[index] = previous + 1 + previous / 100;
        }
        starts
    })
}

/// A DiskSim 1750-bucket histogram of milliseconds.
///
/// As in DiskSim, a value goes through `(int)(ms * 1000)` (truncation); bucket 0 holds
/// values below 0, bucket `k >= 1` holds scaled values in `[start(k-1), start(k))`, and
/// the last bucket also holds everything above. So the cumulative fraction through
/// bucket `k` is the fraction of values below `start(k)`, which is what DiskSim prints
/// on the row of `start(k)`.
#[derive(Clone, Debug)]
pub struct DisksimHistogram {
    counts: Vec<u64>,
    total: u64,
}

impl Default for DisksimHistogram {
    fn default() -> Self {
        DisksimHistogram {
            counts: vec![0; DISKSIM_BUCKETS],
            total: 0,
        }
    }
}

impl DisksimHistogram {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn add_ms(&mut self, value_ms: f64) {
        // `as` saturates (NaN becomes 0), where C's cast would be undefined.
        let scaled = (value_ms * DISKSIM_SCALE) as i64;
        let starts = disksim_bucket_starts();
        let bucket = if scaled < 0 {
            0
        } else {
            // Number of starts at or below `scaled`: the bucket whose upper start exceeds it.
            starts
                .partition_point(|&start| start <= scaled)
                .min(DISKSIM_BUCKETS - 1)
        };
        self.counts[bucket] += 1;
        self.total += 1;
    }

    pub fn count(&self) -> u64 {
        self.total
    }

    /// The rows `rms` reads back: (bucket start in ms, cumulative fraction below it),
    /// each value rounded as DiskSim's `printf` prints it (`%6.3f`, `%f`), up to and
    /// including the first row whose fraction reads 1. Empty for an empty histogram.
    pub fn printed_cdf(&self) -> Vec<(f64, f64)> {
        let mut rows = Vec::new();
        if self.total == 0 {
            return rows;
        }
        let starts = disksim_bucket_starts();
        let mut cumulative = 0.0f64;
        for (index, &count) in self.counts.iter().enumerate() {
            // DiskSim sums per-bucket densities, so rounding follows the same path.
            cumulative += count as f64 / self.total as f64;
            let x_ms = round_as_printed(starts[index] as f64 / DISKSIM_SCALE, 3);
            let fraction = round_as_printed(cumulative, 6);
            rows.push((x_ms, fraction));
            if fraction >= 1.0 {
                return rows;
            }
        }
        // Rounding never left the sum below 1 in practice; close the curve so the
        // quantile walk below always terminates.
        if let Some(last) = rows.last_mut() {
            last.1 = 1.0;
        }
        rows
    }
}

/// The value `printf("%.*f")` writes and `sscanf("%lf")` reads back.
fn round_as_printed(value: f64, decimals: usize) -> f64 {
    format!("{value:.decimals$}").parse().unwrap_or(value)
}

/// Demerit (Ruemmler & Wilkes) in ms between two response-time samples, computed
/// as DiskSim's `rms` tool does (see ../shared/reference/disksim-notes.md §5): both
/// samples go into 1750-bucket histograms, each printed CDF is interpolated linearly
/// between its rows, and the x-distance is sampled at every 0.0001 of probability.
/// Returns NaN when either sample is empty (DiskSim prints no distribution then).
pub fn demerit_ms(measured_ms: &[f64], simulated_ms: &[f64]) -> f64 {
    let curves = [measured_ms, simulated_ms].map(|sample| {
        let mut histogram = DisksimHistogram::new();
        sample.iter().for_each(|&value| histogram.add_ms(value));
        histogram.printed_cdf()
    });
    rms_between_curves(&curves[0], &curves[1])
}

/// The `rms` tool's walk: for p = 0.0001, 0.0002, ... (accumulated in floating point,
/// as the tool does) while p <= 1, find on each curve the first row with fraction
/// >= p, interpolate x between it and the row before, and average the squared gaps.
pub fn rms_between_curves(first: &[(f64, f64)], second: &[(f64, f64)]) -> f64 {
    if first.is_empty() || second.is_empty() {
        return f64::NAN;
    }
    let (mut first_row, mut second_row) = (0usize, 0usize);
    let (mut sum_squares, mut points) = (0.0f64, 0u64);
    let mut probability = RMS_STEP;
    while probability <= 1.0 {
        let gap = quantile_on_curve(first, &mut first_row, probability)
            - quantile_on_curve(second, &mut second_row, probability);
        sum_squares += gap * gap;
        points += 1;
        probability += RMS_STEP;
    }
    (sum_squares / points as f64).sqrt()
}

/// x at fraction `probability` on a printed CDF, advancing `row` monotonically.
fn quantile_on_curve(curve: &[(f64, f64)], row: &mut usize, probability: f64) -> f64 {
    let last = curve.len() - 1;
    while *row < last && curve[*row].1 < probability {
        *row += 1;
    }
    if *row == 0 {
        // Only when values below zero filled the first row; the tool would read
        // before its array here, so use the row itself.
        return curve[0].0;
    }
    let (x_low, y_low) = curve[*row - 1];
    let (x_high, y_high) = curve[*row];
    if y_high <= y_low {
        return x_high;
    }
    x_low + (probability - y_low) / (y_high - y_low) * (x_high - x_low)
}

/// Demerit in ms on the raw samples: the root of the integral over p in [0, 1] of the
/// squared difference of the two empirical quantile functions (step functions), i.e.
/// the 2-Wasserstein distance between the samples. Returns NaN when either is empty;
/// NaN values in a sample sort last.
pub fn demerit_exact_ms(first_ms: &[f64], second_ms: &[f64]) -> f64 {
    if first_ms.is_empty() || second_ms.is_empty() {
        return f64::NAN;
    }
    let sorted = |sample: &[f64]| {
        let mut copy = sample.to_vec();
        copy.sort_by(f64::total_cmp);
        copy
    };
    let (first, second) = (sorted(first_ms), sorted(second_ms));
    let (n_first, n_second) = (first.len() as f64, second.len() as f64);
    let (mut i, mut j, mut p_done, mut integral) = (0usize, 0usize, 0.0f64, 0.0f64);
    // Walk the merged breakpoints i/n1 and j/n2; between them both quantiles are constant.
    while i < first.len() && j < second.len() {
        let (next_first, next_second) = ((i + 1) as f64 / n_first, (j + 1) as f64 / n_second);
        let p_next = next_first.min(next_second);
        let gap = first[i] - second[j];
        integral += gap * gap * (p_next - p_done);
        p_done = p_next;
        if next_first <= p_next {
            i += 1;
        }
        if next_second <= p_next {
            j += 1;
        }
    }
    integral.max(0.0).sqrt()
}

/// Sub-buckets per power of two in [`ResponseStats`]' histogram: values are kept to
/// within 1/128 of themselves (reported at the bucket middle, so within 0.4 %).
const SUB_BUCKET_BITS: u32 = 7;
const SUB_BUCKETS: u64 = 1 << SUB_BUCKET_BITS;
/// Upper bound on histogram buckets: 64 powers of two, `SUB_BUCKETS` each.
const MAX_STAT_BUCKETS: usize = 64 * SUB_BUCKETS as usize;

/// Streaming summary of response times: count, mean, standard deviation, min, max
/// and percentiles from a log-linear histogram. Memory is bounded by
/// `MAX_STAT_BUCKETS` counters (grown only as far as the largest value needs,
/// about 3,000 for times under a second).
#[derive(Clone, Debug, Default)]
pub struct ResponseStats {
    count: u64,
    mean_ns: f64,
    /// Sum of squared deviations from the running mean (Welford).
    squared_deviations: f64,
    min: Nanoseconds,
    max: Nanoseconds,
    buckets: Vec<u64>,
}

/// A printable summary, in milliseconds.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct ResponseSummary {
    pub count: u64,
    pub mean_ms: f64,
    pub std_dev_ms: f64,
    pub min_ms: f64,
    pub max_ms: f64,
    pub p50_ms: f64,
    pub p90_ms: f64,
    pub p99_ms: f64,
    pub p999_ms: f64,
}

fn stat_bucket(value: u64) -> usize {
    if value < SUB_BUCKETS {
        return value as usize;
    }
    let magnitude = 63 - value.leading_zeros(); // >= SUB_BUCKET_BITS
    let shift = magnitude - SUB_BUCKET_BITS;
    let sub = (value >> shift) - SUB_BUCKETS; // in [0, SUB_BUCKETS)
    ((shift as u64 + 1) * SUB_BUCKETS + sub) as usize
}

/// The lowest value and the width of a histogram bucket.
fn stat_bucket_range(bucket: usize) -> (u64, u64) {
    let bucket = bucket as u64;
    if bucket < SUB_BUCKETS {
        return (bucket, 1);
    }
    let shift = bucket / SUB_BUCKETS - 1;
    let sub = bucket % SUB_BUCKETS;
    ((SUB_BUCKETS + sub) << shift, 1 << shift)
}

impl ResponseStats {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn record(&mut self, response: Nanoseconds) {
        let value = response.0;
        if self.count == 0 || response < self.min {
            self.min = response;
        }
        self.max = self.max.max(response);
        self.count += 1;
        let delta = value as f64 - self.mean_ns;
        self.mean_ns += delta / self.count as f64;
        self.squared_deviations += delta * (value as f64 - self.mean_ns);
        let bucket = stat_bucket(value);
        assert!(
            bucket < MAX_STAT_BUCKETS,
            "histogram bucket {bucket} out of bound"
        );
        if bucket >= self.buckets.len() {
            self.buckets.resize(bucket + 1, 0);
        }
        self.buckets[bucket] += 1;
    }

    /// Fold `other` into `self` (e.g. per-drive statistics into a system-wide one);
    /// the result equals recording both streams into one summary.
    pub fn merge(&mut self, other: &ResponseStats) {
        if other.count == 0 {
            return;
        }
        if self.count == 0 {
            *self = other.clone();
            return;
        }
        let count = self.count + other.count;
        let delta = other.mean_ns - self.mean_ns;
        // Chan et al.'s pairwise update of the mean and the squared deviations.
        self.squared_deviations += other.squared_deviations
            + delta * delta * (self.count as f64 * other.count as f64 / count as f64);
        self.mean_ns += delta * other.count as f64 / count as f64;
        self.count = count;
        self.min = self.min.min(other.min);
        self.max = self.max.max(other.max);
        if other.buckets.len() > self.buckets.len() {
            self.buckets.resize(other.buckets.len(), 0);
        }
        for (mine, theirs) in self.buckets.iter_mut().zip(&other.buckets) {
            *mine += theirs;
        }
    }

    pub fn count(&self) -> u64 {
        self.count
    }
    pub fn mean(&self) -> Nanoseconds {
        Nanoseconds(self.mean_ns.round() as u64)
    }
    pub fn min(&self) -> Nanoseconds {
        self.min
    }
    pub fn max(&self) -> Nanoseconds {
        self.max
    }
    /// Population standard deviation in ns (DiskSim's `std.dev.` is also the population one).
    pub fn std_dev_ns(&self) -> f64 {
        if self.count == 0 {
            return 0.0;
        }
        (self.squared_deviations / self.count as f64)
            .max(0.0)
            .sqrt()
    }

    /// The nearest-rank `fraction` quantile (e.g. 0.99), to histogram precision and
    /// clamped to [min, max]. Zero when empty.
    pub fn percentile(&self, fraction: f64) -> Nanoseconds {
        if self.count == 0 {
            return Nanoseconds::ZERO;
        }
        let rank = ((fraction.clamp(0.0, 1.0) * self.count as f64).ceil() as u64).max(1);
        let mut seen = 0u64;
        for (bucket, &count) in self.buckets.iter().enumerate() {
            seen += count;
            if seen >= rank {
                let (low, width) = stat_bucket_range(bucket);
                let middle = low + width / 2;
                return Nanoseconds(middle.clamp(self.min.0, self.max.0));
            }
        }
        self.max
    }

    pub fn summary(&self) -> ResponseSummary {
        ResponseSummary {
            count: self.count,
            mean_ms: self.mean_ns / 1e6,
            std_dev_ms: self.std_dev_ns() / 1e6,
            min_ms: self.min.as_ms_f64(),
            max_ms: self.max.as_ms_f64(),
            p50_ms: self.percentile(0.5).as_ms_f64(),
            p90_ms: self.percentile(0.9).as_ms_f64(),
            p99_ms: self.percentile(0.99).as_ms_f64(),
            p999_ms: self.percentile(0.999).as_ms_f64(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn spread_sample(count: usize) -> Vec<f64> {
        // Deterministic spread of response times from 0.5 to about 25 ms.
        (0..count)
            .map(|index| 0.5 + ((index * 7919) % count) as f64 * 24.5 / count as f64)
            .collect()
    }

    // Proves the bucket starts follow b(i+1) = b(i) + 1 + floor(b(i)/100).
    #[test]
    fn bucket_starts_match_the_recurrence() {
        let starts = disksim_bucket_starts();
        assert_eq!(&starts[..4], &[0, 1, 2, 3]);
        assert_eq!(starts[100], 100);
        assert_eq!(&starts[101..103], &[102, 104]);
        assert_eq!(starts[DISKSIM_BUCKETS - 1], 2_049_165_458);
    }

    // Proves a value is counted on the first row whose start exceeds its scaled value
    // (scaled 0 is not below start 0 but is below start 1).
    #[test]
    fn histogram_rows_are_fractions_below_each_start() {
        let mut histogram = DisksimHistogram::new();
        histogram.add_ms(0.0005); // scaled 0: below start(1) = 1, not below start(0) = 0
        histogram.add_ms(0.0025); // scaled 2
        let rows = histogram.printed_cdf();
        assert_eq!(rows[0], (0.0, 0.0));
        assert_eq!(rows[1], (0.001, 0.5));
        assert_eq!(rows[2], (0.002, 0.5));
        assert_eq!(rows[3], (0.003, 1.0));
        assert_eq!(rows.len(), 4);
    }

    // Proves identical samples give zero.
    #[test]
    fn identical_samples_have_zero_demerit() {
        let sample = spread_sample(5000);
        assert_eq!(demerit_ms(&sample, &sample), 0.0);
        assert_eq!(demerit_exact_ms(&sample, &sample), 0.0);
    }

    // Proves a +1 ms shift reads as about 1 ms (bucketing adds at most ~1 % of the value
    // plus interpolation error; the exact demerit is exactly 1).
    #[test]
    fn shifted_sample_has_demerit_near_one_ms() {
        let sample = spread_sample(5000);
        let shifted: Vec<f64> = sample.iter().map(|value| value + 1.0).collect();
        let demerit = demerit_ms(&sample, &shifted);
        assert!((demerit - 1.0).abs() < 0.05, "demerit {demerit}");
        let exact = demerit_exact_ms(&sample, &shifted);
        assert!((exact - 1.0).abs() < 1e-9, "exact {exact}");
    }

    // Hand-computed case: a single value at 0.0005 ms (row 1: x=0.001 reads 1) against a
    // single value at 0.0015 ms (row 2: x=0.002 reads 1). Curve A goes (0,0)->(0.001,1),
    // curve B (0,0)->(0.001,0)->(0.002,1). At p, A gives 0.001 p, B gives 0.001 (1 + p):
    // the gap is always 0.001 ms, so the demerit is 0.001.
    #[test]
    fn hand_computed_single_values() {
        let demerit = demerit_ms(&[0.0005], &[0.0015]);
        assert!((demerit - 0.001).abs() < 1e-12, "demerit {demerit}");
        // Two-point case: A = {1, 3} ms, B = {2, 2} ms: quantile gap is 1 everywhere.
        let exact = demerit_exact_ms(&[1.0, 3.0], &[2.0, 2.0]);
        assert!((exact - 1.0).abs() < 1e-12);
        // Unequal sizes: A = {0} (n=1), B = {0, 2}: gap 0 on [0, .5], 2 on (.5, 1]: sqrt(2).
        let exact = demerit_exact_ms(&[0.0], &[0.0, 2.0]);
        assert!((exact - 2f64.sqrt()).abs() < 1e-12);
    }

    // Proves empty input gives NaN rather than a panic, and a one-value sample works.
    #[test]
    fn empty_sample_is_nan() {
        assert!(demerit_ms(&[], &[1.0]).is_nan());
        assert!(demerit_exact_ms(&[1.0], &[]).is_nan());
        assert_eq!(demerit_ms(&[10.0], &[10.0]), 0.0);
    }

    // Proves the summary's exact parts and that percentiles are within the histogram's
    // stated precision of the true nearest-rank values.
    #[test]
    fn response_stats_summary() {
        let mut stats = ResponseStats::new();
        for value in 1..=1000u64 {
            stats.record(Nanoseconds(value * 10_000));
        }
        let summary = stats.summary();
        assert_eq!(summary.count, 1000);
        assert!((summary.mean_ms - 5.005).abs() < 1e-9);
        assert_eq!(summary.min_ms, 0.01);
        assert_eq!(summary.max_ms, 10.0);
        let true_std_ms = ((1000f64 * 1000.0 - 1.0) / 12.0).sqrt() * 0.01;
        assert!((summary.std_dev_ms - true_std_ms).abs() < 1e-9);
        for (got, want) in [
            (summary.p50_ms, 5.0),
            (summary.p90_ms, 9.0),
            (summary.p99_ms, 9.9),
            (summary.p999_ms, 9.99),
        ] {
            assert!((got - want).abs() <= want / 128.0, "{got} vs {want}");
        }
    }

    // Proves merging two summaries equals recording both streams into one.
    #[test]
    fn merge_equals_combined_recording() {
        let (mut first, mut second, mut both) = (
            ResponseStats::new(),
            ResponseStats::new(),
            ResponseStats::new(),
        );
        for value in 0..500u64 {
            let response = Nanoseconds(1_000 + value * value * 37 % 9_000_000);
            if value % 3 == 0 {
                first.record(response)
            } else {
                second.record(response)
            }
            both.record(response);
        }
        first.merge(&second);
        let (merged, direct) = (first.summary(), both.summary());
        assert_eq!(merged.count, direct.count);
        assert!((merged.mean_ms - direct.mean_ms).abs() < 1e-9);
        assert!((merged.std_dev_ms - direct.std_dev_ms).abs() < 1e-9);
        assert_eq!(
            (merged.min_ms, merged.max_ms, merged.p99_ms),
            (direct.min_ms, direct.max_ms, direct.p99_ms)
        );
        let mut empty = ResponseStats::new();
        empty.merge(&both);
        assert_eq!(empty.summary(), direct);
    }

    proptest! {
        // Proves every bucket range contains the values mapped to it.
        #[test]
        fn stat_buckets_contain_their_values(value in any::<u64>()) {
            let (low, width) = stat_bucket_range(stat_bucket(value));
            prop_assert!(low <= value && value - low < width, "value {value}");
            prop_assert!(stat_bucket(value) < MAX_STAT_BUCKETS);
        }

        // Proves the DiskSim demerit is symmetric and finite (and never panics) on
        // arbitrary non-negative samples.
        #[test]
        fn demerit_is_symmetric(
            first in proptest::collection::vec(0.0f64..100.0, 1..200),
            second in proptest::collection::vec(0.0f64..100.0, 1..200),
        ) {
            let forward = demerit_ms(&first, &second);
            let backward = demerit_ms(&second, &first);
            prop_assert!((forward - backward).abs() < 1e-9);
            prop_assert!(forward.is_finite());
        }
    }
}
