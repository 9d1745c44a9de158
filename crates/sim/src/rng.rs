//! The workspace's one seeded random-number source.
//!
//! Every crate that needs randomness (workloads, experiments, extraction jitter, tests)
//! takes it from here, so a seed means the same thing everywhere and a published number
//! never depends on an outside crate whose stream could change between versions.
//!
//! Two generators, both public-domain algorithms by Blackman and Vigna, both integer-only
//! so a seed gives the same sequence on every platform and Rust version:
//!
//! | generator | state | used for |
//! |---|---|---|
//! | [`SplitMix64`] | 64 bits | experiments' and extraction's streams ([`SplitMix64::for_label`] gives each series its own), test data, and seeding xoshiro |
//! | [`Xoshiro256StarStar`] | 256 bits | synthetic workloads and long randomized runs |
//!
//! Both offer the same draws (`below`, `unit_f64`, `normal`, `exponential`,
//! `fill_bytes`), each a pure function of the underlying `next_u64` stream. Neither is
//! cryptographic.

/// SplitMix64: a 64-bit counter passed through a mixing function. The same seed always
/// gives the same sequence.
#[derive(Clone, Debug)]
pub struct SplitMix64 {
    state: u64,
}

impl SplitMix64 {
    pub fn new(seed: u64) -> SplitMix64 {
        SplitMix64 { state: seed }
    }

    /// A stream derived from a label (experiment id, series name) and a base seed, so
    /// that every series has its own stream and adding a series changes no other.
    pub fn for_label(base_seed: u64, label: &str) -> SplitMix64 {
        SplitMix64::new(base_seed ^ label_hash(label))
    }

    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
}

/// xoshiro256**: 256 bits of state expanded from one 64-bit seed through [`SplitMix64`];
/// small, fast, good statistical quality.
#[derive(Clone, Debug)]
pub struct Xoshiro256StarStar {
    state: [u64; 4],
}

impl Xoshiro256StarStar {
    pub fn seed_from_u64(seed: u64) -> Self {
        let mut expander = SplitMix64::new(seed);
        Xoshiro256StarStar {
            state: std::array::from_fn(|_| expander.next_u64()),
        }
    }

    pub fn next_u64(&mut self) -> u64 {
        let s = &mut self.state;
        let result = s[1].wrapping_mul(5).rotate_left(7).wrapping_mul(9);
        let t = s[1] << 17;
        s[2] ^= s[0];
        s[3] ^= s[1];
        s[1] ^= s[2];
        s[0] ^= s[3];
        s[2] ^= t;
        s[3] = s[3].rotate_left(45);
        result
    }
}

/// FNV-1a over the label: stable across platforms and Rust versions (unlike `std`'s
/// hashers, whose output may change).
fn label_hash(label: &str) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in label.bytes() {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
    }
    hash
}

/// The draws both generators share, written once over `next_u64`.
macro_rules! draws {
    ($generator:ty) => {
        impl $generator {
            /// Uniform in `[0, bound)` without modulo bias (Lemire's multiply-and-reject).
            ///
            /// # Panics
            /// When `bound` is zero: there is no value to return.
            pub fn below(&mut self, bound: u64) -> u64 {
                assert!(bound > 0, "below(0): the range is empty");
                let threshold = bound.wrapping_neg() % bound;
                loop {
                    let product = u128::from(self.next_u64()) * u128::from(bound);
                    if (product as u64) >= threshold {
                        return (product >> 64) as u64;
                    }
                }
            }

            /// Uniform in `[0, 1)` with 53 random bits.
            pub fn unit_f64(&mut self) -> f64 {
                (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
            }

            /// Standard normal (Box–Muller, cosine branch; two draws per value).
            pub fn normal(&mut self) -> f64 {
                let u1 = self.unit_f64().max(f64::MIN_POSITIVE);
                let u2 = self.unit_f64();
                (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
            }

            /// Exponential with the given mean.
            pub fn exponential(&mut self, mean: f64) -> f64 {
                -mean * (1.0 - self.unit_f64()).ln()
            }

            /// Fills `buffer` with the stream's bytes, little-endian, eight per draw
            /// (the last draw's extra bytes are dropped).
            pub fn fill_bytes(&mut self, buffer: &mut [u8]) {
                for chunk in buffer.chunks_mut(8) {
                    let word = self.next_u64().to_le_bytes();
                    chunk.copy_from_slice(&word[..chunk.len()]);
                }
            }
        }
    };
}

draws!(SplitMix64);
draws!(Xoshiro256StarStar);

#[cfg(test)]
mod tests {
    use super::*;

    // Proves the generators are the published algorithms: the first outputs for seed 0
    // match reference values computed independently (Python) from the published
    // algorithms, so a change that alters a stream fails here before it moves any
    // experiment.
    #[test]
    fn streams_are_pinned() {
        let mut splitmix = SplitMix64::new(0);
        assert_eq!(splitmix.next_u64(), 0xe220_a839_7b1d_cdaf);
        assert_eq!(splitmix.next_u64(), 0x6e78_9e6a_a1b9_65f4);
        assert_eq!(splitmix.next_u64(), 0x06c4_5d18_8009_454f);
        let mut labelled = SplitMix64::for_label(7, "fig1");
        let mut by_hand = SplitMix64::new(7 ^ label_hash("fig1"));
        assert_eq!(labelled.next_u64(), by_hand.next_u64());
        let mut xoshiro = Xoshiro256StarStar::seed_from_u64(0);
        let first: Vec<u64> = (0..3).map(|_| xoshiro.next_u64()).collect();
        assert_eq!(first, XOSHIRO_SEED_0);
    }

    /// xoshiro256** from seed 0 (state expanded by SplitMix64), first three outputs.
    const XOSHIRO_SEED_0: [u64; 3] = [
        0x99ec_5f36_cb75_f2b4,
        0xbf6e_1f78_4956_452a,
        0x1a5f_849d_4933_e6e0,
    ];

    // Proves a labelled stream is a pure function of seed and label, that labels differ,
    // and that `below` stays in range.
    #[test]
    fn same_seed_same_stream_and_bounded() {
        let mut a = SplitMix64::for_label(7, "fig1");
        let mut b = SplitMix64::for_label(7, "fig1");
        let mut c = SplitMix64::for_label(7, "fig6");
        let first: Vec<u64> = (0..100).map(|_| a.below(1000)).collect();
        let second: Vec<u64> = (0..100).map(|_| b.below(1000)).collect();
        let other: Vec<u64> = (0..100).map(|_| c.below(1000)).collect();
        assert_eq!(first, second);
        assert_ne!(first, other);
        assert!(first.iter().all(|&x| x < 1000));
    }

    // Proves the unit draw is in [0, 1) and `fill_bytes` writes the stream's bytes in
    // order, including a short tail.
    #[test]
    fn unit_and_bytes() {
        let mut rng = Xoshiro256StarStar::seed_from_u64(3);
        assert!((0..1000)
            .map(|_| rng.unit_f64())
            .all(|x| (0.0..1.0).contains(&x)));
        let mut buffer = [0u8; 11];
        SplitMix64::new(5).fill_bytes(&mut buffer);
        let mut reference = SplitMix64::new(5);
        let expected: Vec<u8> = [reference.next_u64(), reference.next_u64()]
            .iter()
            .flat_map(|word| word.to_le_bytes())
            .take(11)
            .collect();
        assert_eq!(buffer.to_vec(), expected);
    }
}
