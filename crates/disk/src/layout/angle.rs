//! Rotational-angle arithmetic shared by the zoned and serpentine layouts.
//!
//! An angle is a 32-bit fraction of a revolution (2^32 = one turn). A track of
//! `spt` sectors gives each sector `floor(2^32 / spt)` of the turn; the
//! `2^32 mod spt` left over is a gap at the end of the track. Every time an
//! accumulated angle passes a full turn it also crosses that gap, which keeps
//! sector starts aligned with the sector grid (DiskSim's `addmult`, notes §2.5).

use super::Angle;

/// Per-track-size constants of the angle grid.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct SectorGrid {
    /// `floor(2^32 / spt)`.
    pub sector_width: u32,
    /// `2^32 mod spt`: the unused angle at the end of a track.
    pub track_gap: u32,
}

impl SectorGrid {
    /// The grid of a track with `sectors_per_track` sectors (must be non-zero).
    pub fn new(sectors_per_track: u32) -> SectorGrid {
        debug_assert!(sectors_per_track > 0);
        let turn = 1u64 << 32;
        let spt = u64::from(sectors_per_track);
        SectorGrid {
            sector_width: (turn / spt) as u32,
            track_gap: (turn % spt) as u32,
        }
    }

    /// `start + count * step`, adding the track gap once per full turn passed
    /// (DiskSim's `addmult`).
    #[inline]
    pub fn add_steps(self, start: u32, count: u64, step: u32) -> u32 {
        // With `count < 2^32` the sum is below `2^32 + (2^32 - 1)^2 < 2^64`, so
        // 64-bit arithmetic is exact; the 128-bit path is for absurd counts.
        let (low, turns) = if count <= u64::from(u32::MAX) {
            let sum = u64::from(start) + count * u64::from(step);
            (sum as u32, (sum >> 32) as u32)
        } else {
            let sum = u128::from(start) + u128::from(count) * u128::from(step);
            (sum as u32, (sum >> 32) as u32)
        };
        low.wrapping_add(turns.wrapping_mul(self.track_gap))
    }

    /// `start + count` whole sectors.
    #[inline]
    pub fn add_sectors(self, start: u32, count: u64) -> u32 {
        self.add_steps(start, count, self.sector_width)
    }

    /// An angle given in whole sectors (DiskSim truncates fractional skews first).
    pub fn sectors(self, count: u32) -> u32 {
        count.wrapping_mul(self.sector_width)
    }

    /// Angle of logical sector `sector` on a track whose sector 0 starts at `first`.
    #[inline]
    pub fn sector_angle(self, first: u32, sector: u32) -> Angle {
        Angle(self.add_sectors(first, u64::from(sector)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // Proves the grid constants and the wrap rule on the atlas10k zone-0 figures:
    // spt 334 → width floor(2^32/334) = 12859183, gap 2^32 - 334*12859183 = 174;
    // 428 sectors = one turn + 94 sectors, and the wrap adds the gap back so the
    // result is exactly 94 sector widths.
    #[test]
    fn wrap_keeps_sector_alignment() {
        let grid = SectorGrid::new(334);
        assert_eq!(grid.sector_width, 12_859_183);
        assert_eq!(grid.track_gap, 174);
        assert_eq!(grid.add_sectors(0, 428), 94 * 12_859_183);
        assert_eq!(grid.add_sectors(0, 333), 333 * 12_859_183);
    }

    // Proves the 64-bit fast path of `add_steps` agrees with exact 128-bit
    // arithmetic at the edge of its range (count 2^32 - 1, largest step).
    #[test]
    fn add_steps_fast_path_is_exact() {
        let exact = |grid: SectorGrid, start: u32, count: u64, step: u32| {
            let sum = u128::from(start) + u128::from(count) * u128::from(step);
            let turns = (sum >> 32) as u32;
            (sum as u32).wrapping_add(turns.wrapping_mul(grid.track_gap))
        };
        for spt in [1u32, 7, 334, 1445, u32::MAX] {
            let grid = SectorGrid::new(spt);
            for count in [0u64, 1, 428, u64::from(u32::MAX), 1 << 32, u64::MAX] {
                for (start, step) in [(0, 0), (u32::MAX, u32::MAX), (12_345, grid.sector_width)] {
                    let got = grid.add_steps(start, count, step);
                    assert_eq!(
                        got,
                        exact(grid, start, count, step),
                        "{spt} {count} {start} {step}"
                    );
                }
            }
        }
    }
}
