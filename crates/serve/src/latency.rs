//! Response-time percentiles of a running server, in bounded memory: a histogram
//! with logarithmic buckets (8 per power of two, so a percentile is within 9% of
//! the true value), from 1 µs to about 1,000 s.

use serde::Serialize;
use spinstack_sim::units::Nanoseconds;

const SUB_BUCKETS: usize = 8;
const OCTAVES: usize = 30;
const FIRST_NS: u64 = 1_000;

/// A histogram of response times.
#[derive(Clone, Debug)]
pub struct LatencyHistogram {
    counts: Vec<u64>,
    total: u64,
    sum_ns: u128,
    max_ns: u64,
}

/// What `volume status` prints of it.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct LatencySummary {
    pub requests: u64,
    pub mean_ms: f64,
    pub p50_ms: f64,
    pub p90_ms: f64,
    pub p99_ms: f64,
    pub max_ms: f64,
}

impl Default for LatencyHistogram {
    fn default() -> Self {
        LatencyHistogram {
            counts: vec![0; SUB_BUCKETS * OCTAVES + 1],
            total: 0,
            sum_ns: 0,
            max_ns: 0,
        }
    }
}

impl LatencyHistogram {
    pub fn record(&mut self, latency: Nanoseconds) {
        let index = bucket_of(latency.0).min(self.counts.len() - 1);
        self.counts[index] += 1;
        self.total += 1;
        self.sum_ns += latency.0 as u128;
        self.max_ns = self.max_ns.max(latency.0);
    }

    pub fn summary(&self) -> LatencySummary {
        let ms = |ns: u64| ns as f64 / 1e6;
        LatencySummary {
            requests: self.total,
            mean_ms: if self.total == 0 {
                0.0
            } else {
                self.sum_ns as f64 / self.total as f64 / 1e6
            },
            p50_ms: ms(self.percentile(0.50)),
            p90_ms: ms(self.percentile(0.90)),
            p99_ms: ms(self.percentile(0.99)),
            max_ms: ms(self.max_ns),
        }
    }

    /// The upper edge of the bucket holding the `fraction` quantile (capped at the
    /// largest value seen); zero when empty.
    pub fn percentile(&self, fraction: f64) -> u64 {
        if self.total == 0 {
            return 0;
        }
        let rank = ((fraction * self.total as f64).ceil() as u64).clamp(1, self.total);
        let mut seen = 0;
        for (index, &count) in self.counts.iter().enumerate() {
            seen += count;
            if seen >= rank {
                return upper_edge(index).min(self.max_ns);
            }
        }
        self.max_ns
    }
}

fn bucket_of(ns: u64) -> usize {
    if ns < FIRST_NS {
        return 0;
    }
    let ratio = ns as f64 / FIRST_NS as f64;
    1 + (ratio.log2() * SUB_BUCKETS as f64).floor() as usize
}

fn upper_edge(index: usize) -> u64 {
    if index == 0 {
        return FIRST_NS;
    }
    (FIRST_NS as f64 * 2f64.powf(index as f64 / SUB_BUCKETS as f64)).ceil() as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Percentiles land within one bucket (9%) above the exact value.
    #[test]
    fn percentiles_are_within_a_bucket() {
        let mut histogram = LatencyHistogram::default();
        for ms in 1..=1000u64 {
            histogram.record(Nanoseconds(ms * 1_000_000));
        }
        for (fraction, exact_ns) in [(0.5, 500e6), (0.9, 900e6), (0.99, 990e6)] {
            let got = histogram.percentile(fraction) as f64;
            assert!(
                got >= exact_ns && got <= exact_ns * 1.091,
                "{fraction}: {got}"
            );
        }
        assert_eq!(histogram.summary().max_ms, 1000.0);
        assert!((histogram.summary().mean_ms - 500.5).abs() < 1e-9);
    }
}
