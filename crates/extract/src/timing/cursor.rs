//! The extraction cursors: interleaved walkers over widely spread regions of the
//! disk, one track or one run of tracks per cursor in turn (so consecutive
//! tests rarely touch neighbouring data). Each finds its region's first
//! boundary, then decides a run of tracks of the latest size (`runs`) where the
//! track before is certain and of that size, one track otherwise, and stops
//! where the next region's cursor began; a track whose size changed gets the
//! span read (a link that keeps up with the media) or the tile reads.

use super::boundary_test::Tester;
use super::interior::INTERIOR_SEGMENTS;
use super::runs::RUN_TRACKS;
use super::search::{last_crossing, settle_interior, track_end, Crossing};
use super::Phase;
use crate::probe::{Probe, ProbeError};
use spinstack_sim::units::{Lbn, Sectors};
use spinstack_trackmap::Track;
use std::collections::VecDeque;

/// Recently seen track sizes a cursor tries first, most recent first.
const RECENT_SIZES_BOUND: usize = 3;

/// One extraction cursor: a region of the disk being mapped.
pub(super) struct Cursor {
    /// The next LBN known to start a track (None until the first boundary is found).
    next: Option<Lbn>,
    /// Where the cursor starts looking for its first boundary.
    start: Lbn,
    /// Where it stops: the first boundary found by the next region's cursor.
    stop: Option<Lbn>,
    pub(super) tracks: Vec<Track>,
    recent_sizes: VecDeque<Sectors>,
    /// One slot's passage where the cursor works, as last measured (0 unknown).
    slot_ns: f64,
    /// Whether the tile reads have looked inside the latest track.
    last_tiled: bool,
    /// Where the latest run of tracks stopped short: that track goes to the
    /// single-track search rather than into another run.
    run_stopped_at: Option<Lbn>,
    pub(super) done: bool,
}

/// The most regions a disk of `capacity` is split into: one per 4,096-LBN
/// stretch, so each cursor has tracks of its own to walk before it meets the
/// next cursor's start.
pub fn max_regions(capacity: Sectors) -> u64 {
    capacity.0 / 4096 + 1
}

/// One cursor per region, the regions spread evenly over the disk: `regions`,
/// but at least 1 and at most [`max_regions`]. The default of 16 is meant as
/// "up to 16" on a small device; a caller that takes an exact count from its
/// user checks it against [`max_regions`] first (the CLI's `--regions` does).
pub(super) fn make_cursors(capacity: Sectors, regions: usize) -> Vec<Cursor> {
    let most = max_regions(capacity);
    let capacity = capacity.0;
    let regions = (regions.max(1) as u64).min(most);
    (0..regions)
        .map(|r| {
            let start = Lbn(capacity * r / regions);
            Cursor {
                next: (r == 0).then_some(Lbn(0)),
                start,
                stop: None,
                tracks: Vec::new(),
                recent_sizes: VecDeque::new(),
                slot_ns: 0.0,
                last_tiled: false,
                run_stopped_at: None,
                done: false,
            }
        })
        .collect()
}

/// Advance one cursor by one track (or by finding its first boundary).
pub(super) fn step<P: Probe + ?Sized>(
    tester: &mut Tester<'_, P>,
    cursors: &mut [Cursor],
    index: usize,
) -> Result<(), ProbeError> {
    let disk_end = tester.disk_end();
    let Some(start) = cursors[index].next else {
        tester.last_slope_ns = None;
        let first = first_boundary_from(tester, cursors[index].start)?;
        cursors[index].slot_ns = tester.last_slope_ns.unwrap_or(0.0);
        cursors[index].next = Some(first);
        if index > 0 {
            cursors[index - 1].stop = Some(first);
        }
        return Ok(());
    };
    let limit = cursors[index].stop.unwrap_or(disk_end).min(disk_end);
    if start >= limit {
        // Finished only once the next region has said where it starts.
        let next_known = index + 1 >= cursors.len() || cursors[index].stop.is_some();
        cursors[index].done = next_known;
        return Ok(());
    }
    let sizes: Vec<Sectors> = cursors[index].recent_sizes.iter().copied().collect();
    tester.local_slot_ns = cursors[index].slot_ns;
    tester.last_slope_ns = None;
    if step_run(tester, &mut cursors[index], start, limit)? {
        return Ok(());
    }
    let decided = track_end(tester, start, &sizes, limit)?;
    let cursor = &mut cursors[index];
    let (end, mut certain) = guard_extra_turns(tester, cursor, start, decided)?;
    if certain && cursor.tracks.last().is_some_and(|t| t.uncertain) {
        // The start came from an uncertain decision: this track is certain
        // only once the boundary test confirms its first pair crosses.
        tester.phase = Phase::EndTest;
        let verdict = tester.test(Lbn(start.0 - 1))?;
        certain = verdict.crossing && verdict.confident;
    }
    cursor.slot_ns = tester.last_slope_ns.unwrap_or(cursor.slot_ns);
    let size = end.sectors_since(start);
    cursor.tracks.push(Track {
        first: start,
        sectors: size,
        location: None,
        uncertain: !certain,
    });
    if cursor.recent_sizes.front() != Some(&size) {
        cursor.recent_sizes.retain(|&s| s != size);
        cursor.recent_sizes.push_front(size);
        cursor.recent_sizes.truncate(RECENT_SIZES_BOUND);
    }
    assert!(cursor.recent_sizes.len() <= RECENT_SIZES_BOUND);
    cursor.next = Some(end);
    Ok(())
}

/// The common case: a run of tracks of the latest size ([`Tester::run_of_tracks`])
/// after a certain track of that size, each run ending strictly inside the
/// region (its last end pair reads the next LBN). False when no run applies
/// or the run confirmed no track; the track is then the single-track search's.
fn step_run<P: Probe + ?Sized>(
    tester: &mut Tester<'_, P>,
    cursor: &mut Cursor,
    start: Lbn,
    limit: Lbn,
) -> Result<bool, ProbeError> {
    let Some(&size) = cursor.recent_sizes.front() else {
        return Ok(false);
    };
    let previous_certain = cursor
        .tracks
        .last()
        .is_some_and(|t| !t.uncertain && t.sectors == size);
    let count = RUN_TRACKS.min((limit.0 - start.0).saturating_sub(1) / size.0.max(1));
    if !previous_certain
        || size.0 <= INTERIOR_SEGMENTS
        || count < 2
        || cursor.run_stopped_at == Some(start)
    {
        return Ok(false);
    }
    let accepted = tester.run_of_tracks(start, size, count)?;
    if accepted < count {
        cursor.run_stopped_at = Some(start.offset(Sectors(accepted * size.0)));
    }
    if accepted == 0 {
        return Ok(false);
    }
    for track in 0..accepted {
        cursor.tracks.push(Track {
            first: start.offset(Sectors(track * size.0)),
            sectors: size,
            location: None,
            uncertain: false,
        });
    }
    cursor.slot_ns = tester.last_slope_ns.unwrap_or(cursor.slot_ns);
    cursor.last_tiled = false;
    cursor.next = Some(start.offset(Sectors(accepted * size.0)));
    Ok(true)
}

/// The first boundary at or after `from` (a track starts there), found by testing
/// pairs linearly.
fn first_boundary_from<P: Probe + ?Sized>(
    tester: &mut Tester<'_, P>,
    from: Lbn,
) -> Result<Lbn, ProbeError> {
    tester.phase = Phase::FirstBoundary;
    if from == Lbn(0) {
        return Ok(Lbn(0));
    }
    tester.local_slot_ns = 0.0;
    tester.last_slope_ns = tester.local_slot(from)?;
    let mut x = from.0 - 1;
    while x + 1 < tester.capacity.0 {
        let verdict = tester.test(Lbn(x))?;
        if verdict.crossing {
            return Ok(Lbn(x + 1));
        }
        x += 1;
    }
    Ok(tester.disk_end())
}

/// On a slow link, where a track's size differs from the one before it (a zone
/// change, a slip), the tile reads ([`Tester::extra_turn`]) look for a boundary
/// the chains cannot see, in this track and the one before (a short zone-end
/// track and the next one can add up to the size expected, and only the track
/// after them shows the change). A boundary found inside this track ends it
/// there; one inside the track before flags that track uncertain.
fn guard_extra_turns<P: Probe + ?Sized>(
    tester: &mut Tester<'_, P>,
    cursor: &mut Cursor,
    start: Lbn,
    (mut end, mut certain): (Lbn, bool),
) -> Result<(Lbn, bool), ProbeError> {
    let changed = cursor
        .tracks
        .last()
        .is_some_and(|t| t.sectors != end.sectors_since(start));
    if !changed || !certain {
        cursor.last_tiled = false;
        return Ok((end, certain));
    }
    if let Some(previous) = cursor.tracks.last_mut() {
        if !previous.uncertain && !cursor.last_tiled {
            let (first, stop) = (previous.first, previous.end());
            let mut resume = first;
            while let Some(tile) = tester.extra_turn((first, resume), stop)? {
                if !matches!(last_crossing(tester, &[tile])?, Crossing::NoneConfidently) {
                    previous.uncertain = true;
                    break;
                }
                resume = tile.1;
            }
        }
    }
    cursor.last_tiled = true;
    let mut resume = start;
    while let Some(tile) = tester.extra_turn((start, resume), end)? {
        match last_crossing(tester, &[tile])? {
            Crossing::At(earlier) => {
                let verdict = tester
                    .interior(start, earlier.sectors_since(start), false)?
                    .0;
                (end, certain) = settle_interior(tester, start, (earlier, true), verdict)?;
                if !certain {
                    break;
                }
                resume = tile.0;
            }
            Crossing::NoneConfidently => resume = tile.1,
            Crossing::Undecided => return Ok((end, false)),
        }
    }
    Ok((end, certain))
}
