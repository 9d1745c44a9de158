//! Media access computed analytically, one track at a time (no event per sector).
//!
//! A planned access is a list of [`Run`]s: stretches of consecutive LBNs that pass
//! under the head back to back, one sector time (`xfertime(1)`) each. Each run
//! records the positioning that brought the head to its track, so the plan can be
//! cut at any instant (a pre-empted prefetch) and the arm position recovered
//! (notes §3.4, §4.3, §4.4).

use super::mechanics::{Mechanics, Picoseconds};
use crate::layout::{Layout, LayoutError, TrackExtent, TrackGeometry};
use spinstack_sim::units::Lbn;

/// Consecutive LBNs read or written back to back on one track.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Run {
    pub first: u64,
    pub count: u32,
    /// When the first sector starts passing under the head.
    pub start_ps: Picoseconds,
    pub sector_ps: Picoseconds,
    pub cylinder: u32,
    pub surface: u32,
    /// When positioning to this track began and ended (equal when already there).
    pub positioning_start_ps: Picoseconds,
    pub arrive_ps: Picoseconds,
    /// Whether that positioning moved the arm to another cylinder.
    pub moved_arm: bool,
}

impl Run {
    pub fn end_lbn(&self) -> u64 {
        self.first + self.count as u64
    }
    /// When the last sector has passed.
    pub fn end_ps(&self) -> Picoseconds {
        self.start_ps + self.count as i64 * self.sector_ps
    }
    /// When block `lbn` (inside the run) is in the buffer.
    pub fn done_ps(&self, lbn: u64) -> Picoseconds {
        self.start_ps + (lbn - self.first + 1) as i64 * self.sector_ps
    }
    pub fn contains(&self, lbn: u64) -> bool {
        lbn >= self.first && lbn < self.end_lbn()
    }
}

/// Where the arm is and from when it is free to move.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Arm {
    pub cylinder: u32,
    pub surface: u32,
    pub free_ps: Picoseconds,
}

/// How one access treats the media.
#[derive(Clone, Copy, Debug)]
pub struct AccessMode {
    pub is_write: bool,
    /// Zero-latency rule (immediate buffer read/write, or read-any-free-blocks).
    pub immediate: bool,
    /// Read-any-free-blocks: on the first track, the wanted arc starts at the track's
    /// first LBN so that blocks before the request are cached for free.
    pub free_blocks: bool,
    /// Writes: block `data_from + i` reaches the buffer at
    /// `data_ready_ps + i * data_block_ps`; no sector is written before its data.
    pub data_ready_ps: Picoseconds,
    pub data_block_ps: Picoseconds,
    pub data_from: u64,
    /// Blocks that must be in the buffer before any sector is written.
    pub data_min_blocks: u64,
    /// Stop at the first track end after `must_end` (read-ahead modes 1 and 2).
    pub stop: TrackStop,
    /// Lower bound on the first positioning time (DiskSim's minimum seek delay).
    pub min_first_positioning_ps: Picoseconds,
}

impl AccessMode {
    /// When block `lbn` may be written: its data is in the buffer, and so is the
    /// minimum the firmware wants buffered before writing (`data_min_blocks`).
    fn ready(&self, lbn: u64) -> Picoseconds {
        let at = |b: u64| {
            self.data_ready_ps + b.saturating_sub(self.data_from) as i64 * self.data_block_ps
        };
        let min_last = self.data_from + self.data_min_blocks.max(1) - 1;
        at(lbn).max(at(min_last))
    }
}

/// Write a run sector by sector as DiskSim does: a sector is written if its data
/// is in the buffer when it starts passing; otherwise it passes unwritten and the
/// head comes back to it one revolution (`revolution`) later.
fn write_runs(run: Run, revolution: Picoseconds, mode: &AccessMode, runs: &mut Vec<Run>) {
    let mut t = run.start_ps;
    let mut piece = Run { count: 0, ..run };
    for lbn in run.first..run.end_lbn() {
        if mode.ready(lbn) > t {
            if piece.count > 0 {
                runs.push(piece);
            }
            let waits = (mode.ready(lbn) - t + revolution - 1) / revolution;
            t += waits * revolution;
            piece = Run {
                first: lbn,
                count: 0,
                start_ps: t,
                ..run
            };
        }
        piece.count += 1;
        t += run.sector_ps;
    }
    if piece.count > 0 {
        runs.push(piece);
    }
}

/// The first time at or after `earliest` that a sector passing at `start` passes again.
fn wait_revolutions(start: Picoseconds, earliest: Picoseconds, period: Picoseconds) -> Picoseconds {
    if start >= earliest {
        start
    } else {
        start + (earliest - start + period - 1) / period * period
    }
}

/// How much of an access to plan now.
#[derive(Clone, Copy, Debug)]
pub struct Span {
    pub read_ahead_tracks: usize,
    pub continuing: bool,
}

impl Span {
    /// Everything up to the end.
    pub const ALL: Span = Span {
        read_ahead_tracks: usize::MAX,
        continuing: false,
    };
}

/// Where a read-ahead must stop regardless of its limit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TrackStop {
    Never,
    /// At the first head or cylinder change after the request's blocks.
    AtTrackChange,
    /// At the first cylinder change after the request's blocks.
    AtCylinderChange,
}

/// Remembers the last track looked up: consecutive lookups usually hit the same
/// track (the read-ahead limit and the plan of one request), and the layout's
/// track-boundary query is the costliest part of planning.
#[derive(Clone, Debug, Default)]
pub struct TrackCache {
    last: std::cell::Cell<Option<TrackGeometry>>,
}

impl TrackCache {
    /// The track holding `lbn` and its physical sectors per track.
    pub fn get(&self, layout: &Layout, lbn: u64) -> Result<(TrackExtent, u32), LayoutError> {
        let track = self.geometry(layout, lbn)?;
        Ok((track.extent, track.sectors_per_track))
    }

    /// The track holding `lbn` with its size and sector angles (one layout lookup).
    pub fn geometry(&self, layout: &Layout, lbn: u64) -> Result<TrackGeometry, LayoutError> {
        if let Some(track) = self.last.get() {
            if track.extent.contains(Lbn(lbn)) {
                return Ok(track);
            }
        }
        let track = layout.track_geometry(Lbn(lbn))?;
        self.last.set(Some(track));
        Ok(track)
    }
}

/// The geometry a planner needs: mechanics and layout.
pub struct Media<'a> {
    pub mechanics: &'a Mechanics,
    pub layout: &'a Layout,
    pub tracks: &'a TrackCache,
}

impl Media<'_> {
    /// Plan reading or writing `[from, to)` starting with the arm at `arm`, never
    /// before `arm.free_ps`. Blocks in `[from, must_end)` are always planned; blocks
    /// beyond it (read-ahead) stop early according to `mode.stop`. Appends runs in
    /// time order and returns the arm state at the end.
    ///
    /// `span.read_ahead_tracks` bounds how many tracks wholly past `must_end` are
    /// planned now (the rest is planned lazily by the caller); `span.continuing`
    /// says the plan continues an earlier one, so its first track is subject to
    /// the read-ahead stop rule too.
    #[allow(clippy::too_many_arguments)]
    pub fn plan(
        &self,
        mut arm: Arm,
        from: u64,
        to: u64,
        must_end: u64,
        mode: AccessMode,
        span: Span,
        runs: &mut Vec<Run>,
    ) -> Result<Arm, LayoutError> {
        let rotation = self.mechanics.rotation;
        let mut lbn = from;
        let mut first_track = true;
        let mut tracks_beyond = 0usize;
        while lbn < to {
            if lbn >= must_end {
                if tracks_beyond == span.read_ahead_tracks {
                    break;
                }
                tracks_beyond += 1;
            }
            let geometry = self.tracks.geometry(self.layout, lbn)?;
            let track = geometry.extent;
            if lbn >= must_end && (!first_track || span.continuing) {
                let stop = match mode.stop {
                    TrackStop::Never => false,
                    TrackStop::AtTrackChange => true,
                    TrackStop::AtCylinderChange => track.cylinder != arm.cylinder,
                };
                if stop {
                    break;
                }
            }
            let pos = self.mechanics.positioning(
                (arm.cylinder, arm.surface),
                (track.cylinder, track.surface),
                mode.is_write,
            );
            let mut pos_ps = pos.total_ps;
            if first_track {
                pos_ps = pos_ps.max(mode.min_first_positioning_ps);
            }
            let arrive = arm.free_ps + pos_ps;
            let track_end = track.end().0.min(to);
            let wanted_from = if first_track && mode.free_blocks && !mode.is_write {
                track.first.0
            } else {
                lbn
            };
            let before = runs.len();
            // DiskSim's zero-latency arc covers only the request's blocks; read-ahead
            // on the same track follows once they are all in.
            let split = if mode.immediate && lbn < must_end && must_end < track_end {
                must_end
            } else {
                track_end
            };
            self.plan_track(&geometry, wanted_from, lbn, split, arrive, mode, runs)?;
            if split < track_end {
                let now = runs[before..]
                    .iter()
                    .map(Run::end_ps)
                    .max()
                    .unwrap_or(arrive);
                let rest = AccessMode {
                    immediate: false,
                    free_blocks: false,
                    ..mode
                };
                self.plan_track(&geometry, split, split, track_end, now, rest, runs)?;
            }
            for run in &mut runs[before..] {
                run.positioning_start_ps = arm.free_ps;
                run.arrive_ps = arrive;
                run.moved_arm = pos.moves_arm;
            }
            let end = runs[before..]
                .iter()
                .map(Run::end_ps)
                .max()
                .unwrap_or(arrive);
            arm = Arm {
                cylinder: track.cylinder,
                surface: track.surface,
                free_ps: end,
            };
            let _ = rotation;
            lbn = track_end;
            first_track = false;
        }
        Ok(arm)
    }

    /// Plan the blocks `[wanted_from, end)` of one track with the head arriving at
    /// `arrive`. Blocks before `needed_from` are free blocks: read only when the
    /// head passes them anyway.
    #[allow(clippy::too_many_arguments)]
    fn plan_track(
        &self,
        geometry: &TrackGeometry,
        wanted_from: u64,
        needed_from: u64,
        end: u64,
        arrive: Picoseconds,
        mode: AccessMode,
        runs: &mut Vec<Run>,
    ) -> Result<(), LayoutError> {
        let rotation = self.mechanics.rotation;
        let (track, spt) = (&geometry.extent, geometry.sectors_per_track);
        let sector_width = geometry.sector_width();
        let sector_ps = rotation.xfertime(1, sector_width);
        // A track whose LBN count equals its sector count has no slipped or spare
        // sectors: LBN i of the track sits in sector i (sector 0 holds the lowest).
        let (first_sector, last_sector) = if track.sectors.0 == spt as u64 {
            let s = (wanted_from - track.first.0) as u32;
            (s, s + (end - 1 - wanted_from) as u32)
        } else {
            let pbn_of = |lbn: u64| self.layout.lbn_to_pbn(Lbn(lbn));
            (pbn_of(wanted_from)?.sector, pbn_of(end - 1)?.sector)
        };
        let count = (end - wanted_from) as u32;
        let base = Run {
            first: wanted_from,
            count,
            start_ps: 0,
            sector_ps,
            cylinder: track.cylinder,
            surface: track.surface,
            positioning_start_ps: 0,
            arrive_ps: arrive,
            moved_arm: false,
        };
        if last_sector < first_sector || last_sector - first_sector + 1 != count {
            // Slipped or remapped sectors inside the range: plan block by block.
            return self.plan_irregular(base, needed_from, arrive, mode, runs);
        }
        // No layout lookup per sector: the track's geometry gives its angles.
        let angle = |s: u32| Ok::<_, LayoutError>(geometry.angle_of_sector(s));
        let theta = rotation.angle_at(arrive);
        let a_first = angle(first_sector)?.0;
        let inside = mode.immediate && count > 1 && {
            let a_last = angle(last_sector)?.0;
            rotation.rottime(a_first, theta) <= rotation.rottime(a_first, a_last)
        };
        if mode.immediate && count > 1 && inside && theta != a_first {
            // Zero latency: start at the next sector boundary, wrap for the rest.
            let rel = theta.wrapping_sub(a_first) as u64;
            let k = (rel.div_ceil(sector_width as u64) as u32).min(count - 1);
            let a_k = angle(first_sector + k)?.0;
            let start1 = arrive + rotation.rottime(theta, a_k);
            runs.push(Run {
                first: wanted_from + k as u64,
                count: count - k,
                start_ps: start1,
                ..base
            });
            let needed_in_wrap = wanted_from + (k as u64) > needed_from;
            if needed_in_wrap || !mode.free_blocks {
                let start2 = start1 + rotation.rottime(a_k, a_first);
                runs.push(Run {
                    first: wanted_from,
                    count: k,
                    start_ps: start2,
                    ..base
                });
            }
            return Ok(());
        }
        let start = arrive + rotation.rottime(theta, a_first);
        if mode.is_write {
            let revolution = spt as i64 * sector_ps;
            write_runs(
                Run {
                    start_ps: start,
                    ..base
                },
                revolution,
                &mode,
                runs,
            );
            return Ok(());
        }
        runs.push(Run {
            start_ps: start,
            ..base
        });
        Ok(())
    }

    /// Block-by-block planning for a track range with slips or remaps inside it:
    /// each block waits for its own sector.
    fn plan_irregular(
        &self,
        base: Run,
        _needed_from: u64,
        arrive: Picoseconds,
        mode: AccessMode,
        runs: &mut Vec<Run>,
    ) -> Result<(), LayoutError> {
        let rotation = self.mechanics.rotation;
        let mut now = arrive;
        for lbn in base.first..base.end_lbn() {
            let (pbn, angle) = self.layout.locate(Lbn(lbn))?;
            let a = angle.0;
            let mut start = now + rotation.rottime(rotation.angle_at(now), a);
            if mode.is_write {
                start = wait_revolutions(start, mode.ready(lbn), rotation.period_ps);
            }
            runs.push(Run {
                first: lbn,
                count: 1,
                start_ps: start,
                cylinder: pbn.cylinder,
                surface: pbn.surface,
                ..base
            });
            now = start + base.sector_ps;
        }
        Ok(())
    }

    /// Positioning plus rotational latency from `arm` (at `arm.free_ps`) to the start
    /// of `lbn`'s sector: what SPTF minimises.
    pub fn positioning_time(
        &self,
        arm: Arm,
        lbn: u64,
        is_write: bool,
    ) -> Result<Picoseconds, LayoutError> {
        let (pbn, angle) = self.layout.locate(Lbn(lbn))?;
        let pos = self.mechanics.positioning(
            (arm.cylinder, arm.surface),
            (pbn.cylinder, pbn.surface),
            is_write,
        );
        let arrive = arm.free_ps + pos.total_ps;
        let rotation = self.mechanics.rotation;
        let a = angle.0;
        Ok(pos.total_ps + rotation.rottime(rotation.angle_at(arrive), a))
    }
}

/// What a plan achieved by instant `t` when it is cut there.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cut {
    /// Blocks in the buffer by `t`, as (first, count) in plan order.
    pub done: Vec<(u64, u32)>,
    /// The arm: on the track being worked at `t` (free at `t`), or at the
    /// destination of a positioning in flight (free when it ends).
    pub arm: Arm,
}

/// Cut a plan at `t`: a sector counts only once it has fully passed, and the arm
/// is free at `t` (the sector under the head is abandoned; see
/// `Drive::cut_prefetch` for why). A positioning in flight at `t` is finished
/// (DiskSim), or with `abandon_positioning` given up: the arm stays on the track
/// it was leaving, free at `t`.
pub fn cut_at(
    runs: &[Run],
    t: Picoseconds,
    (arm_before, arm_after): (Arm, Arm),
    abandon_positioning: bool,
) -> Cut {
    let mut done = Vec::new();
    let mut arm = arm_before;
    for run in runs {
        if t < run.positioning_start_ps {
            return Cut { done, arm };
        }
        if t < run.arrive_ps && abandon_positioning {
            arm.free_ps = t;
            return Cut { done, arm };
        }
        if t < run.arrive_ps {
            arm = Arm {
                cylinder: run.cylinder,
                surface: run.surface,
                free_ps: run.arrive_ps,
            };
            return Cut { done, arm };
        }
        arm = Arm {
            cylinder: run.cylinder,
            surface: run.surface,
            free_ps: t,
        };
        if t < run.end_ps() {
            let n = ((t - run.start_ps).max(0) / run.sector_ps) as u32;
            if n > 0 {
                done.push((run.first, n));
            }
            return Cut { done, arm };
        }
        done.push((run.first, run.count));
    }
    let mut arm = arm_after;
    arm.free_ps = arm.free_ps.max(t);
    Cut { done, arm }
}
