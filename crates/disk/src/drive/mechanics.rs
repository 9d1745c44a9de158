//! Mechanics in DiskSim's integer units: time in picoseconds, angle as a `u32`
//! fraction of a revolution (2^32 = one turn). Seek curves, positioning time and
//! the rotation helpers (`rotate`, `rottime`, `xfertime`) follow
//! ../shared/reference/disksim-notes.md §3 so that our rotation matches DiskSim's
//! to the picosecond.

use crate::spec::{HplSeek, MechanicsSpec, SeekSpec};

/// Simulated time inside the drive: signed 64-bit picoseconds (DiskSim's `dm_time_t`).
pub type Picoseconds = i64;

/// Picoseconds in one nanosecond.
pub const PS_PER_NS: i64 = 1_000;

/// DiskSim's `dtoi`: milliseconds to picoseconds, truncating.
pub fn ms_to_ps(ms: f64) -> Picoseconds {
    (ms * 1e9) as i64
}

/// The spindle: rotation period and the integer angle/time conversions.
#[derive(Clone, Copy, Debug)]
pub struct Rotation {
    pub period_ps: Picoseconds,
}

impl Rotation {
    /// `period = dtoi(1000 / (rpm / 60))`, evaluated in that order as DiskSim does.
    pub fn from_rpm(rpm: u32) -> Rotation {
        Rotation {
            period_ps: ms_to_ps(1000.0 / (rpm as f64 / 60.0)),
        }
    }

    /// Angle turned in `t` picoseconds (reduced modulo the period first).
    pub fn rotate(&self, t: Picoseconds) -> u32 {
        let t = t.rem_euclid(self.period_ps) as u64;
        (((t << 24) / self.period_ps as u64) << 8) as u32
    }

    /// The angle under the head at absolute time `t`: angle 0 at t = 0, no random start.
    pub fn angle_at(&self, t: Picoseconds) -> u32 {
        self.rotate(t)
    }

    /// Time to turn from angle `from` to angle `to` (0 when they are equal).
    pub fn rottime(&self, from: u32, to: u32) -> Picoseconds {
        if from == to {
            return 0;
        }
        let delta = (to.wrapping_sub(from) >> 12) as u64;
        ((delta * self.period_ps as u64) >> 20) as i64
    }

    /// Time for `n` sectors of width `sector_width` to pass under the head.
    pub fn xfertime(&self, n: u32, sector_width: u32) -> Picoseconds {
        self.rottime(0, (n as u64 * sector_width as u64) as u32)
    }
}

/// A seek curve evaluated in integer picoseconds.
#[derive(Clone, Debug)]
pub enum SeekCurve {
    /// Measured points with (0, 0) in front; integer interpolation between them.
    Extracted {
        distances: Vec<u32>,
        times_ps: Vec<Picoseconds>,
    },
    Hpl(HplPs),
    HplPlus10 {
        hpl: HplPs,
        first_ten_ps: [Picoseconds; 10],
    },
    Published(PublishedSeek),
}

/// A data-sheet seek curve, t(d) = c + a·√(d−1) + b·(d−1) milliseconds for d ≥ 1:
/// the acceleration-limited (square-root) and coast-limited (linear) terms of Lee &
/// Katz and Ruemmler & Wilkes, with c the single-cylinder time.
///
/// `a` and `b` are solved from two constraints: t(N−1) = full stroke, and the mean
/// of t over random seeks = average. A random seek has independent, uniform start
/// and end cylinders among N, so distance d ≥ 1 has probability 2(N−d)/N²; the
/// mean is taken over seeks that move (d ≥ 1, weights N−d), computed exactly by
/// summing over every distance. If the solve gives a negative coefficient (an
/// average too close to the single-cylinder or full-stroke time for both terms to
/// be positive), that term is dropped and the other alone fits the average; the
/// full-stroke time is then not met exactly.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PublishedSeek {
    pub single_cylinder_ms: f64,
    /// Milliseconds per square root of a cylinder (`a`).
    pub sqrt_ms: f64,
    /// Milliseconds per cylinder (`b`).
    pub per_cylinder_ms: f64,
}

impl PublishedSeek {
    /// Fit the curve for a drive of `cylinders` cylinders.
    pub fn fit(single: f64, average: f64, full: f64, cylinders: u32) -> PublishedSeek {
        let n = f64::from(cylinders.max(3));
        // Weighted sums over d = 1..N−1 with weight N − d, of √(d−1) and d−1.
        let (mut weight, mut root, mut linear) = (0.0, 0.0, 0.0);
        for d in 1..cylinders.max(3) {
            let w = n - f64::from(d);
            let x = f64::from(d - 1);
            weight += w;
            root += w * x.sqrt();
            linear += w * x;
        }
        let (mean_root, mean_linear) = (root / weight, linear / weight);
        let x_full = n - 2.0;
        let (to_full, to_average) = (full - single, average - single);
        let det = x_full.sqrt() * mean_linear - x_full * mean_root;
        let mut a = (to_full * mean_linear - x_full * to_average) / det;
        let mut b = (x_full.sqrt() * to_average - mean_root * to_full) / det;
        if b < 0.0 {
            b = 0.0;
            a = to_average / mean_root;
        } else if a < 0.0 {
            a = 0.0;
            b = to_average / mean_linear;
        }
        PublishedSeek {
            single_cylinder_ms: single,
            sqrt_ms: a.max(0.0),
            per_cylinder_ms: b.max(0.0),
        }
    }

    /// t(d) in milliseconds, for d ≥ 1.
    pub fn time_ms(&self, d: u32) -> f64 {
        let x = f64::from(d.saturating_sub(1));
        self.single_cylinder_ms + self.sqrt_ms * x.sqrt() + self.per_cylinder_ms * x
    }
}

/// Cylinders assumed for a `Published` curve before the layout's count is known.
const NOMINAL_CYLINDERS: u32 = 10_000;

/// HPL seek equation values in picoseconds.
#[derive(Clone, Copy, Debug)]
pub struct HplPs {
    boundary: u64,
    short_base: Picoseconds,
    short_sqrt: Picoseconds,
    long_base: Picoseconds,
    long_per_cylinder: Picoseconds,
    single_cylinder: Option<Picoseconds>,
}

impl HplPs {
    fn new(h: &HplSeek) -> HplPs {
        HplPs {
            boundary: h.boundary_cylinders as u64,
            short_base: ms_to_ps(h.short_base_ms),
            short_sqrt: ms_to_ps(h.short_sqrt_ms),
            long_base: ms_to_ps(h.long_base_ms),
            long_per_cylinder: ms_to_ps(h.long_per_cylinder_ms),
            single_cylinder: h.single_cylinder_ms.map(ms_to_ps),
        }
    }

    /// The equation without the single-cylinder override.
    fn equation(&self, d: u64) -> Picoseconds {
        if d < self.boundary {
            let root = isqrt(d << 32) as i128; // sqrt(d) in 16.16 fixed point
            self.short_base + ((root * self.short_sqrt as i128) >> 16) as i64
        } else {
            self.long_base + self.long_per_cylinder * d as i64
        }
    }
}

/// Integer square root (floor).
fn isqrt(x: u64) -> u64 {
    if x == 0 {
        return 0;
    }
    let mut r = (x as f64).sqrt() as u64;
    while r * r > x {
        r -= 1;
    }
    while (r + 1) * (r + 1) <= x {
        r += 1;
    }
    r
}

impl SeekCurve {
    pub fn new(spec: &SeekSpec) -> Result<SeekCurve, String> {
        Ok(match spec {
            SeekSpec::Extracted { points } => {
                if points.is_empty() {
                    return Err("extracted seek curve has no points".into());
                }
                // Interpolation runs between neighbours: a distance out of order, a
                // repeat or a 0 would make a segment of no width or a backwards one.
                let mut previous = 0;
                for (index, point) in points.iter().enumerate() {
                    if point.distance_cylinders <= previous {
                        return Err(format!(
                            "seek curve point {} (distance {} cylinders) does not come after \
                             the one before ({previous}): distances must rise from 1",
                            index + 1,
                            point.distance_cylinders
                        ));
                    }
                    previous = point.distance_cylinders;
                }
                let mut distances = vec![0];
                let mut times_ps = vec![0];
                for p in points {
                    distances.push(p.distance_cylinders);
                    times_ps.push(ms_to_ps(p.time_ms));
                }
                SeekCurve::Extracted {
                    distances,
                    times_ps,
                }
            }
            SeekSpec::Hpl(h) => SeekCurve::Hpl(HplPs::new(h)),
            SeekSpec::HplPlus10 { hpl, first_ten_ms } => {
                if first_ten_ms.len() != 10 {
                    return Err(format!(
                        "hplplus10 needs 10 first seek times, got {}",
                        first_ten_ms.len()
                    ));
                }
                let mut first_ten_ps = [0; 10];
                for (slot, ms) in first_ten_ps.iter_mut().zip(first_ten_ms) {
                    *slot = ms_to_ps(*ms);
                }
                SeekCurve::HplPlus10 {
                    hpl: HplPs::new(hpl),
                    first_ten_ps,
                }
            }
            SeekSpec::Published {
                single_cylinder_ms,
                average_ms,
                full_stroke_ms,
            } => {
                let (single, average, full) = (*single_cylinder_ms, *average_ms, *full_stroke_ms);
                if !(0.0 < single && single <= average && average <= full) {
                    return Err(format!(
                        "published seek times single-cylinder {single} ms, average {average} ms, \
                         full-stroke {full} ms: a data sheet's rise, 0 < single <= average <= \
                         full stroke"
                    ));
                }
                Self::published(single, average, full)
            }
        })
    }

    /// A data-sheet drive ([`PublishedSeek`]). The cylinder count is not known
    /// here: the curve is fitted for a nominal count and refitted for the layout's
    /// by `with_full_stroke`.
    fn published(single: f64, average: f64, full: f64) -> SeekCurve {
        SeekCurve::Published(PublishedSeek::fit(single, average, full, NOMINAL_CYLINDERS))
    }

    /// Refit a `Published` curve so that full stroke is `cylinders - 1`.
    pub fn with_full_stroke(self, spec: &SeekSpec, cylinders: u32) -> SeekCurve {
        match spec {
            SeekSpec::Published {
                single_cylinder_ms,
                average_ms,
                full_stroke_ms,
            } => SeekCurve::Published(PublishedSeek::fit(
                *single_cylinder_ms,
                *average_ms,
                *full_stroke_ms,
                cylinders,
            )),
            _ => self,
        }
    }

    /// Seek time for a distance of `d` cylinders (0 for d = 0).
    pub fn seek_ps(&self, d: u32) -> Picoseconds {
        if d == 0 {
            return 0;
        }
        match self {
            SeekCurve::Extracted {
                distances,
                times_ps,
            } => extracted(distances, times_ps, d),
            SeekCurve::Hpl(h) => match h.single_cylinder {
                Some(t) if d == 1 => t,
                _ => h.equation(d as u64),
            },
            SeekCurve::HplPlus10 { hpl, first_ten_ps } => {
                if d <= 10 {
                    first_ten_ps[d as usize - 1]
                } else {
                    hpl.equation(d as u64)
                }
            }
            SeekCurve::Published(p) => ms_to_ps(p.time_ms(d)),
        }
    }
}

/// DiskSim's extracted-curve lookup: exact match, else integer linear interpolation
/// (or extrapolation past the last point) from the first point at or beyond `d`.
fn extracted(distances: &[u32], times: &[Picoseconds], d: u32) -> Picoseconds {
    let i = match distances.binary_search(&d) {
        Ok(i) => return times[i],
        Err(i) => i.min(distances.len() - 1).max(1),
    };
    let (d0, d1) = (distances[i - 1] as i64, distances[i] as i64);
    let (t0, t1) = (times[i - 1], times[i]);
    if d1 == d0 {
        return t1;
    }
    let step = (d as i64 - d0) * (t1 - t0).abs() / (d1 - d0);
    if t1 >= t0 {
        t0 + step
    } else {
        t0 - step
    }
}

/// Seek curve, head switch and write settle: DiskSim's positioning time.
#[derive(Clone, Debug)]
pub struct Mechanics {
    pub rotation: Rotation,
    pub seek: SeekCurve,
    pub head_switch_ps: Picoseconds,
    pub write_settle_ps: Picoseconds,
}

/// What the arm does for one positioning, split for the time breakdown.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Positioning {
    /// Total time until the head is on track and settled (never negative).
    pub total_ps: Picoseconds,
    /// True when the cylinder changes (a seek); false for a pure head switch or nothing.
    pub moves_arm: bool,
}

impl Mechanics {
    pub fn new(spec: &MechanicsSpec, cylinders: u32) -> Result<Mechanics, String> {
        if spec.rpm == 0 {
            return Err("rotation speed is 0 rpm".into());
        }
        let seek = SeekCurve::new(&spec.seek)?.with_full_stroke(&spec.seek, cylinders);
        Ok(Mechanics {
            rotation: Rotation::from_rpm(spec.rpm),
            seek,
            head_switch_ps: ms_to_ps(spec.head_switch_ms),
            write_settle_ps: ms_to_ps(spec.write_settle_ms),
        })
    }

    /// `max(seek(d), head switch if the head changes)`, plus the write settle when
    /// anything moved (the settle may be negative; the total never is).
    pub fn positioning(&self, from: (u32, u32), to: (u32, u32), is_write: bool) -> Positioning {
        let d = from.0.abs_diff(to.0);
        let mut t = self.seek.seek_ps(d);
        if from.1 != to.1 {
            t = t.max(self.head_switch_ps);
        }
        if t != 0 && is_write {
            t = (t + self.write_settle_ps).max(0);
        }
        Positioning {
            total_ps: t,
            moves_arm: d != 0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::SeekPoint;

    // Proves the integer rotation helpers reproduce DiskSim's published periods and
    // one-sector times (notes §2.6).
    #[test]
    fn rotation_matches_disksim_integers() {
        let r = Rotation::from_rpm(10025);
        assert_eq!(r.period_ps, 5985037406);
        let sw = ((1u64 << 32) / 334) as u32;
        assert_eq!(r.xfertime(1, sw), 17916710);
        let r = Rotation::from_rpm(5400);
        assert_eq!(r.period_ps, 11111111111);
        assert_eq!(r.xfertime(1, ((1u64 << 32) / 96) as u32), 115733676);
        assert_eq!(r.rottime(5, 5), 0);
    }

    // Proves the HPL-plus-ten curve gives the values checked in notes §3.2 for hp_c2247a.
    #[test]
    fn hplplus10_matches_notes() {
        let spec = SeekSpec::HplPlus10 {
            hpl: HplSeek {
                boundary_cylinders: 300,
                short_base_ms: 3.81,
                short_sqrt_ms: 0.33,
                long_base_ms: 7.75,
                long_per_cylinder_ms: 0.0059,
                single_cylinder_ms: None,
            },
            first_ten_ms: vec![2.89, 3.68, 3.81, 3.98, 4.27, 4.65, 4.52, 4.65, 4.82, 4.99],
        };
        let c = SeekCurve::new(&spec).unwrap();
        assert_eq!(c.seek_ps(1), 2_890_000_000);
        assert!(
            (c.seek_ps(11) - 4_904_484_558).abs() < 1000,
            "{}",
            c.seek_ps(11)
        );
        assert!((c.seek_ps(1000) - ms_to_ps(7.75 + 5.9)).abs() < 1000);
    }

    /// Mean of `curve` over random seeks that move, on `n` cylinders (weights n − d).
    fn random_mean_ms(curve: &SeekCurve, n: u32) -> f64 {
        let (mut sum, mut weight) = (0.0, 0.0);
        for d in 1..n {
            let w = f64::from(n - d);
            sum += w * curve.seek_ps(d) as f64 / 1e9;
            weight += w;
        }
        sum / weight
    }

    // Proves the published curve meets the data sheet's single-cylinder, random
    // average and full-stroke figures within 1 %, for the catalog's Atlas 10K II
    // figures and for a drive with few cylinders, and grows monotonically.
    #[test]
    fn published_curve_hits_the_three_figures() {
        for (single, average, full, cylinders) in [
            (0.8, 4.7, 10.0, 52_014),
            (0.8, 4.5, 10.0, 2_000),
            (0.6, 3.9, 8.0, 70_000),
        ] {
            let spec = SeekSpec::Published {
                single_cylinder_ms: single,
                average_ms: average,
                full_stroke_ms: full,
            };
            let curve = SeekCurve::new(&spec)
                .unwrap()
                .with_full_stroke(&spec, cylinders);
            let ms = |d: u32| curve.seek_ps(d) as f64 / 1e9;
            let within = |got: f64, want: f64| (got - want).abs() <= 0.01 * want;
            assert!(within(ms(1), single), "{cylinders}: t(1) = {}", ms(1));
            assert!(
                within(ms(cylinders - 1), full),
                "{cylinders}: full {}",
                ms(cylinders - 1)
            );
            let mean = random_mean_ms(&curve, cylinders);
            assert!(within(mean, average), "{cylinders}: mean {mean}");
            assert!((2..cylinders).all(|d| curve.seek_ps(d) >= curve.seek_ps(d - 1)));
        }
    }

    // Proves the fallback when both terms cannot be positive: an average near the
    // full-stroke time makes the linear term negative; it is dropped, the
    // square-root term alone fits the average.
    #[test]
    fn published_curve_falls_back_to_square_root() {
        let p = PublishedSeek::fit(1.0, 9.0, 10.0, 5_000);
        assert_eq!(p.per_cylinder_ms, 0.0);
        assert!(p.sqrt_ms > 0.0);
        let curve = SeekCurve::Published(p);
        let mean = random_mean_ms(&curve, 5_000);
        assert!((mean - 9.0).abs() < 0.09, "mean {mean}");
    }

    // Proves extracted curves interpolate with truncating integer division and follow
    // non-monotonic points and extrapolate past the end.
    #[test]
    fn extracted_interpolates() {
        let pts = [(1, 1.0), (10, 1.531), (12, 1.515), (20, 2.0)];
        let spec = SeekSpec::Extracted {
            points: pts
                .iter()
                .map(|&(d, t)| SeekPoint {
                    distance_cylinders: d,
                    time_ms: t,
                })
                .collect(),
        };
        let c = SeekCurve::new(&spec).unwrap();
        assert_eq!(c.seek_ps(10), ms_to_ps(1.531));
        assert_eq!(
            c.seek_ps(11),
            ms_to_ps(1.531) - (ms_to_ps(1.531) - ms_to_ps(1.515)) / 2
        );
        assert!(c.seek_ps(30) > c.seek_ps(20));
        assert_eq!(c.seek_ps(0), 0);
    }

    // Guards input finding 17 of the hostile test of 2026-11-28: seek curves with
    // distances out of order, repeated or 0 were accepted (interpolated over
    // segments of no width or backwards), and a data sheet whose single-cylinder
    // seek exceeded its full stroke gave 62 ms seeks. Proves each is refused.
    #[test]
    fn seek_curves_that_do_not_rise_are_refused() {
        let curve = |points: &[(u32, f64)]| {
            SeekCurve::new(&SeekSpec::Extracted {
                points: points
                    .iter()
                    .map(|&(d, t)| SeekPoint {
                        distance_cylinders: d,
                        time_ms: t,
                    })
                    .collect(),
            })
        };
        assert!(curve(&[(1, 1.0), (2, 1.1), (10, 2.0)]).is_ok());
        for bad in [
            &[(1, 1.0), (500, 1.3), (5, 1.4)][..],
            &[(1, 1.0), (2, 1.1), (2, 1.2)][..],
            &[(0, 0.5), (2, 1.1)][..],
        ] {
            let error = curve(bad).unwrap_err();
            assert!(error.contains("distances must rise"), "{bad:?}: {error}");
        }
        let published = |single, average, full| {
            SeekCurve::new(&SeekSpec::Published {
                single_cylinder_ms: single,
                average_ms: average,
                full_stroke_ms: full,
            })
        };
        assert!(published(0.8, 4.7, 10.0).is_ok());
        for (single, average, full) in [(60.0, 4.7, 6.5), (0.8, 30.0, 10.0), (0.0, 0.0, 0.0)] {
            assert!(
                published(single, average, full).is_err(),
                "{single} {average} {full}"
            );
        }
    }
}
