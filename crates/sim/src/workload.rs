//! Seeded synthetic workloads.
//!
//! The generator is [`Xoshiro256StarStar`] from [`crate::rng`], the workspace's one
//! random-number source: integer-only, so a seed gives the same sequence on every
//! platform.

use crate::driver::{RequestSource, RequestSpec};
use crate::engine::DeviceId;
use crate::request::Operation;
use crate::rng::Xoshiro256StarStar;
use crate::units::{Lbn, Nanoseconds, Sectors};

/// Where successive requests go.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum AccessPattern {
    /// Uniform over the range, each start a multiple of the request size from the
    /// range start.
    Random,
    /// Back to back from the range start, wrapping to it at the end.
    Sequential,
}

/// A synthetic workload.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct WorkloadSpec {
    pub pattern: AccessPattern,
    /// Probability that a request is a read, in [0, 1].
    pub read_fraction: f64,
    pub request_sectors: Sectors,
    /// First LBN that may be touched.
    pub lbn_start: Lbn,
    /// One past the last LBN that may be touched.
    pub lbn_end: Lbn,
    /// Requests in all (across all devices using this source).
    pub count: u64,
    /// Think time after each completion (closed loop).
    pub think: Nanoseconds,
    pub seed: u64,
}

#[derive(Debug, thiserror::Error, PartialEq)]
pub enum WorkloadError {
    #[error("read fraction must be between 0 and 1, got {0}")]
    ReadFraction(f64),
    #[error("request size must be at least one sector")]
    EmptyRequest,
    #[error("LBN range [{start}, {end}) cannot hold one request of {sectors} sectors")]
    RangeTooSmall { start: u64, end: u64, sectors: u64 },
}

/// A seeded stream of requests following a [`WorkloadSpec`].
#[derive(Clone, Debug)]
pub struct Workload {
    spec: WorkloadSpec,
    random: Xoshiro256StarStar,
    issued: u64,
    next_sequential: Lbn,
    /// Number of possible request starts (random pattern).
    slots: u64,
}

impl Workload {
    pub fn new(spec: WorkloadSpec) -> Result<Workload, WorkloadError> {
        if !(0.0..=1.0).contains(&spec.read_fraction) {
            return Err(WorkloadError::ReadFraction(spec.read_fraction));
        }
        if spec.request_sectors.0 == 0 {
            return Err(WorkloadError::EmptyRequest);
        }
        let span = spec.lbn_end.0.saturating_sub(spec.lbn_start.0);
        if span < spec.request_sectors.0 {
            return Err(WorkloadError::RangeTooSmall {
                start: spec.lbn_start.0,
                end: spec.lbn_end.0,
                sectors: spec.request_sectors.0,
            });
        }
        Ok(Workload {
            spec,
            random: Xoshiro256StarStar::seed_from_u64(spec.seed),
            issued: 0,
            next_sequential: spec.lbn_start,
            slots: span / spec.request_sectors.0,
        })
    }

    pub fn spec(&self) -> &WorkloadSpec {
        &self.spec
    }

    /// The next request, or `None` once `count` have been produced.
    pub fn next_spec(&mut self) -> Option<RequestSpec> {
        if self.issued >= self.spec.count {
            return None;
        }
        self.issued += 1;
        let sectors = self.spec.request_sectors;
        let lbn = match self.spec.pattern {
            AccessPattern::Random => {
                let slot = self.random.below(self.slots);
                Lbn(self.spec.lbn_start.0 + slot * sectors.0)
            }
            AccessPattern::Sequential => {
                if self.next_sequential.offset(sectors) > self.spec.lbn_end {
                    self.next_sequential = self.spec.lbn_start;
                }
                let lbn = self.next_sequential;
                self.next_sequential = lbn.offset(sectors);
                lbn
            }
        };
        // Drawn for every request so the address stream does not depend on the mix.
        let operation = if self.random.unit_f64() < self.spec.read_fraction {
            Operation::Read
        } else {
            Operation::Write
        };
        Some(RequestSpec {
            operation,
            lbn,
            sectors,
            think_after: self.spec.think,
        })
    }
}

impl RequestSource for Workload {
    fn next_request(&mut self, _device: DeviceId) -> Option<RequestSpec> {
        self.next_spec()
    }
}

impl Iterator for Workload {
    type Item = RequestSpec;
    fn next(&mut self) -> Option<RequestSpec> {
        self.next_spec()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn spec(pattern: AccessPattern, seed: u64) -> WorkloadSpec {
        WorkloadSpec {
            pattern,
            read_fraction: 0.7,
            request_sectors: Sectors(8),
            lbn_start: Lbn(1000),
            lbn_end: Lbn(1000 + 8 * 500 + 3),
            count: 2000,
            think: Nanoseconds::ZERO,
            seed,
        }
    }

    // Proves the read fraction and the random spread are about right (10,000 draws:
    // the read share is within 3 %, every aligned slot of a small range is hit).
    #[test]
    fn mix_and_spread() {
        let mut workload = Workload::new(WorkloadSpec {
            count: 10_000,
            ..spec(AccessPattern::Random, 7)
        })
        .unwrap();
        let requests: Vec<_> = workload.by_ref().collect();
        let reads = requests
            .iter()
            .filter(|r| r.operation == Operation::Read)
            .count();
        assert!(
            (reads as f64 / 10_000.0 - 0.7).abs() < 0.03,
            "reads {reads}"
        );
        let mut seen = vec![false; 500];
        for request in &requests {
            seen[((request.lbn.0 - 1000) / 8) as usize] = true;
        }
        assert!(seen.iter().all(|&hit| hit));
        assert!(workload.next_spec().is_none());
    }

    // Proves sequential requests are back to back and wrap before running past the end.
    #[test]
    fn sequential_wraps() {
        let lbns: Vec<u64> = Workload::new(spec(AccessPattern::Sequential, 1))
            .unwrap()
            .take(502)
            .map(|request| request.lbn.0)
            .collect();
        assert_eq!(&lbns[..3], &[1000, 1008, 1016]);
        assert_eq!(lbns[499], 1000 + 8 * 499);
        assert_eq!(&lbns[500..], &[1000, 1008]);
    }

    // Proves bad specs are errors.
    #[test]
    fn bad_specs() {
        let base = spec(AccessPattern::Random, 1);
        assert!(Workload::new(WorkloadSpec {
            read_fraction: 1.5,
            ..base
        })
        .is_err());
        assert!(Workload::new(WorkloadSpec {
            read_fraction: f64::NAN,
            ..base
        })
        .is_err());
        assert!(Workload::new(WorkloadSpec {
            request_sectors: Sectors(0),
            ..base
        })
        .is_err());
        assert!(Workload::new(WorkloadSpec {
            lbn_end: Lbn(1004),
            ..base
        })
        .is_err());
    }

    proptest! {
        // Proves the same seed gives the same sequence, and every request stays in range.
        #[test]
        fn same_seed_same_sequence(seed in any::<u64>(), random in any::<bool>(), size in 1u64..64, span in 64u64..100_000) {
            let pattern = if random { AccessPattern::Random } else { AccessPattern::Sequential };
            let spec = WorkloadSpec {
                request_sectors: Sectors(size),
                lbn_end: Lbn(1000 + span),
                count: 300,
                ..spec(pattern, seed)
            };
            let first: Vec<_> = Workload::new(spec).unwrap().collect();
            let second: Vec<_> = Workload::new(spec).unwrap().collect();
            prop_assert_eq!(&first, &second, "seed {}", seed);
            prop_assert_eq!(first.len(), 300);
            for request in &first {
                prop_assert!(request.lbn.0 >= 1000 && request.lbn.offset(request.sectors).0 <= 1000 + span);
            }
        }
    }
}
