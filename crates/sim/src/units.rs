//! Newtypes for addresses, sizes and simulated time. Units are last in names:
//! `Lbn` is a logical block number (512-byte sectors), `Sectors` a count of them,
//! `Nanoseconds` a simulated instant or duration in integer nanoseconds.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::ops::{Add, AddAssign, Sub};

/// Bytes in one sector (DiskSim's block); every drive in the catalog uses 512.
pub const SECTOR_BYTES: u64 = 512;

/// A logical block number: the address a host uses, in 512-byte sectors.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
#[serde(transparent)]
pub struct Lbn(pub u64);

/// A count of 512-byte sectors.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
#[serde(transparent)]
pub struct Sectors(pub u64);

/// Simulated time (an instant since the start of a run, or a duration) in integer nanoseconds.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
#[serde(transparent)]
pub struct Nanoseconds(pub u64);

impl Lbn {
    /// The LBN `count` sectors after this one.
    pub fn offset(self, count: Sectors) -> Lbn {
        Lbn(self.0 + count.0)
    }
    /// Sectors from `earlier` to `self`; `earlier` must not be after `self`.
    pub fn sectors_since(self, earlier: Lbn) -> Sectors {
        debug_assert!(earlier <= self, "sectors_since: {earlier:?} > {self:?}");
        Sectors(self.0 - earlier.0)
    }
}

impl fmt::Display for Lbn {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "LBN {}", self.0)
    }
}

impl Sectors {
    pub fn bytes(self) -> u64 {
        self.0 * SECTOR_BYTES
    }
    /// The whole number of sectors in `bytes`; `None` when `bytes` is not a multiple of 512.
    pub fn from_bytes(bytes: u64) -> Option<Sectors> {
        bytes
            .is_multiple_of(SECTOR_BYTES)
            .then_some(Sectors(bytes / SECTOR_BYTES))
    }
}

impl fmt::Display for Sectors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} sectors", self.0)
    }
}

impl Nanoseconds {
    pub const ZERO: Nanoseconds = Nanoseconds(0);
    pub fn from_ms_f64(ms: f64) -> Nanoseconds {
        Nanoseconds((ms * 1e6).round().max(0.0) as u64)
    }
    pub fn from_us(us: u64) -> Nanoseconds {
        Nanoseconds(us * 1_000)
    }
    pub fn from_ms(ms: u64) -> Nanoseconds {
        Nanoseconds(ms * 1_000_000)
    }
    pub fn as_ms_f64(self) -> f64 {
        self.0 as f64 / 1e6
    }
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 / 1e9
    }
    pub fn saturating_sub(self, other: Nanoseconds) -> Nanoseconds {
        Nanoseconds(self.0.saturating_sub(other.0))
    }
}

impl Add for Nanoseconds {
    type Output = Nanoseconds;
    fn add(self, rhs: Nanoseconds) -> Nanoseconds {
        Nanoseconds(self.0 + rhs.0)
    }
}
impl AddAssign for Nanoseconds {
    fn add_assign(&mut self, rhs: Nanoseconds) {
        self.0 += rhs.0;
    }
}
impl Sub for Nanoseconds {
    type Output = Nanoseconds;
    fn sub(self, rhs: Nanoseconds) -> Nanoseconds {
        debug_assert!(self >= rhs, "negative duration {self:?} - {rhs:?}");
        Nanoseconds(self.0 - rhs.0)
    }
}

impl fmt::Display for Nanoseconds {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:.6} ms", self.as_ms_f64())
    }
}
