//! Division by a per-zone constant without a hardware divide.
//!
//! `lbn_to_pbn` needs several divisions by per-zone constants (sectors per
//! track, per cylinder, per sparing region). A 64-bit `div` costs tens of
//! cycles, more than the rest of the lookup; for numerators and divisors
//! below 2^32 (every zone of every real drive) multiplying by
//! `ceil(2^64 / d)` and keeping the high word is exact: the error term is
//! below `n / 2^64 < 2^-32 <= 1/d`, too small to cross the next integer.

/// A divisor with its precomputed reciprocal.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Divisor {
    divisor: u64,
    /// `ceil(2^64 / divisor)` when `2 <= divisor < 2^32`, else 0 (plain
    /// division, or none for a divisor of 1: the sector unit of most zones).
    reciprocal: u64,
}

const SMALL: u64 = 1 << 32;

impl Divisor {
    /// `divisor` must be non-zero.
    pub fn new(divisor: u64) -> Divisor {
        debug_assert!(divisor > 0);
        let reciprocal = if (2..SMALL).contains(&divisor) {
            (u64::MAX / divisor) + 1
        } else {
            0
        };
        Divisor {
            divisor,
            reciprocal,
        }
    }

    #[inline]
    pub fn get(self) -> u64 {
        self.divisor
    }

    /// `(n / divisor, n % divisor)`.
    #[inline]
    pub fn div_rem(self, n: u64) -> (u64, u64) {
        if self.reciprocal != 0 && n < SMALL {
            let quotient = ((u128::from(n) * u128::from(self.reciprocal)) >> 64) as u64;
            (quotient, n - quotient * self.divisor)
        } else if self.divisor == 1 {
            (n, 0)
        } else {
            (n / self.divisor, n % self.divisor)
        }
    }

    #[inline]
    pub fn div(self, n: u64) -> u64 {
        self.div_rem(n).0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // Proves the reciprocal quotient equals plain division at the edges of the
    // exact range (numerators and divisors near 2^32) and beyond it.
    #[test]
    fn matches_plain_division() {
        let divisors = [
            1u64,
            2,
            3,
            7,
            334,
            1445,
            65_535,
            (1 << 31) + 1,
            SMALL - 1,
            SMALL,
            SMALL + 3,
        ];
        let numerators = [
            0u64,
            1,
            2,
            333,
            334,
            335,
            1 << 31,
            SMALL - 2,
            SMALL - 1,
            SMALL,
            u64::MAX,
        ];
        for &d in &divisors {
            let divisor = Divisor::new(d);
            for &n in &numerators {
                assert_eq!(divisor.div_rem(n), (n / d, n % d), "{n} / {d}");
            }
        }
    }
}
