//! The boundary search: how one track's end is decided. The common case is one
//! checkpoint chain over the expected size; the fallbacks are the boundary test
//! at the ends of recently seen sizes, on every pair of suspect segments (last
//! first), and outward from the expected end. No end is accepted before the
//! interior test finds no boundary inside.

use super::boundary_test::Tester;
use super::interior::{EndPair, Interior};
use super::Phase;
use crate::probe::{Probe, ProbeError};
use spinstack_sim::units::{Lbn, Sectors};

/// The LBN x of the pair (x, x+1) that ends just before `end`.
fn pair_before(end: Lbn) -> Lbn {
    Lbn(end.0 - 1)
}

/// One past the last LBN of the track starting at `start`, and whether every test
/// that decided it was confident. No end is accepted before the interior test has
/// confidently found no boundary inside the track (a short zone-end track and the
/// next one can add up to the expected size, and the outward search can meet the
/// later of two boundaries); a track whose interior stays undecided is uncertain.
///
/// The common case costs one checkpoint chain: the expected size's interior and
/// its end pair read together. Anything else (a size change, an undecided end, a
/// suspect interior) falls back to the boundary tests.
pub(super) fn track_end<P: Probe + ?Sized>(
    tester: &mut Tester<'_, P>,
    start: Lbn,
    recent_sizes: &[Sectors],
    limit: Lbn,
) -> Result<(Lbn, bool), ProbeError> {
    tester.remembered = None;
    if let Some(end) = recent_sizes
        .first()
        .map(|&s| start.offset(s))
        .filter(|&e| e <= limit)
    {
        // At the limit the next region's cursor has found the boundary already.
        let known = end == limit;
        let (verdict, pair) = tester.interior(start, end.sectors_since(start), !known)?;
        // An overfull span is suspect as a whole, and the direct tests cannot
        // clear it.
        let overfull = verdict == Interior::Overfull;
        let verdict = if overfull {
            Interior::Suspect(vec![(start, pair_before(end))])
        } else {
            verdict
        };
        match verdict {
            Interior::Free if known || pair == EndPair::Crossing => {
                return Ok((end, true));
            }
            Interior::Free => {
                let test = tester.remembered_test(pair_before(end), Phase::EndTest)?;
                if test.crossing && test.confident {
                    return Ok((end, true));
                }
            }
            Interior::Suspect(segments) => {
                // Usually the track is one recently seen size shorter (a slip).
                let inside = |x: Lbn| segments.iter().any(|&(from, to)| from <= x && x < to);
                for &size in &recent_sizes[1..] {
                    let earlier = start.offset(size);
                    if earlier < end && inside(pair_before(earlier)) {
                        let test =
                            tester.remembered_test(pair_before(earlier), Phase::SuspectTest)?;
                        if test.crossing && test.confident {
                            let verdict = tester.interior(start, size, false)?.0;
                            return settle_interior(tester, start, (earlier, true), verdict);
                        }
                    }
                }
                match last_crossing(tester, &segments)? {
                    Crossing::At(earlier) => {
                        let verdict = tester
                            .interior(start, earlier.sectors_since(start), false)?
                            .0;
                        return settle_interior(tester, start, (earlier, true), verdict);
                    }
                    // The direct tests clear the interior; the end remains.
                    Crossing::NoneConfidently if !overfull => {
                        if known {
                            return Ok((end, true));
                        }
                        let test = tester.remembered_test(pair_before(end), Phase::EndTest)?;
                        if test.crossing && test.confident {
                            return Ok((end, true));
                        }
                    }
                    Crossing::NoneConfidently | Crossing::Undecided => {}
                }
            }
            Interior::Undecided | Interior::Overfull => {}
        }
    }
    let (end, certain) = candidate_end(tester, start, recent_sizes, limit)?;
    let verdict = tester.interior(start, end.sectors_since(start), false)?.0;
    settle_interior(tester, start, (end, certain), verdict)
}

/// Accept the end once the interior is free, moving it earlier while the boundary
/// test finds a crossing inside.
pub(super) fn settle_interior<P: Probe + ?Sized>(
    tester: &mut Tester<'_, P>,
    start: Lbn,
    (mut end, mut certain): (Lbn, bool),
    mut verdict: Interior,
) -> Result<(Lbn, bool), ProbeError> {
    loop {
        let overfull = verdict == Interior::Overfull;
        let segments = match verdict {
            Interior::Free => return Ok((end, certain)),
            // Rare (a persistent latency oddity at one LBN): test every pair.
            Interior::Undecided | Interior::Overfull => vec![(start, pair_before(end))],
            Interior::Suspect(segments) => segments,
        };
        match last_crossing(tester, &segments)? {
            Crossing::At(earlier) => (end, certain) = (earlier, true),
            Crossing::NoneConfidently => return Ok((end, certain && !overfull)),
            Crossing::Undecided => return Ok((end, false)),
        }
        verdict = tester.interior(start, end.sectors_since(start), false)?.0;
    }
}

/// The end the boundary test supports: a recently seen size (the common case), or
/// the crossing nearest the expected end.
fn candidate_end<P: Probe + ?Sized>(
    tester: &mut Tester<'_, P>,
    start: Lbn,
    recent_sizes: &[Sectors],
    limit: Lbn,
) -> Result<(Lbn, bool), ProbeError> {
    for &size in recent_sizes {
        let end = start.offset(size);
        if end == limit {
            return Ok((end, true)); // the next region's cursor found this boundary
        }
        if end > limit {
            continue;
        }
        let verdict = tester.remembered_test(pair_before(end), Phase::EndTest)?;
        if verdict.crossing && verdict.confident {
            return Ok((end, true));
        }
    }
    let expected = recent_sizes.first().copied();
    let widest = recent_sizes.iter().copied().max();
    search_outward(tester, start, expected, widest, limit)
}

/// What the boundary test says of every pair in the suspect segments.
pub(super) enum Crossing {
    /// The last confident crossing: a track ends before this LBN.
    At(Lbn),
    /// Every pair confidently shares a track: the suspicion was unfounded.
    NoneConfidently,
    /// No confident crossing, but some pair undecided.
    Undecided,
}

/// The boundary test on every pair (x, x+1), x in each [from, to), last pair
/// first: the usual suspect is a track one slip shorter than expected, and any
/// earlier crossing is caught by the interior test of the shortened track. The
/// direct test outranks the interior test: it settles a suspicion either way.
pub(super) fn last_crossing<P: Probe + ?Sized>(
    tester: &mut Tester<'_, P>,
    segments: &[(Lbn, Lbn)],
) -> Result<Crossing, ProbeError> {
    tester.phase = Phase::SuspectTest;
    let mut all_confident = true;
    for &(from, to) in segments.iter().rev() {
        for x in (from.0..to.0).rev() {
            let verdict = tester.test(Lbn(x))?;
            if verdict.crossing && verdict.confident {
                return Ok(Crossing::At(Lbn(x + 1)));
            }
            all_confident &= verdict.confident;
        }
    }
    Ok(if all_confident {
        Crossing::NoneConfidently
    } else {
        Crossing::Undecided
    })
}

/// Test candidate ends outward from the expected one (or from `start` with no
/// expectation) until a confident crossing; the best unconfident one otherwise.
fn search_outward<P: Probe + ?Sized>(
    tester: &mut Tester<'_, P>,
    start: Lbn,
    expected: Option<Sectors>,
    widest: Option<Sectors>,
    limit: Lbn,
) -> Result<(Lbn, bool), ProbeError> {
    let (start, limit, capacity) = (start.0, limit.0, tester.capacity.0);
    let centre = expected.map_or(start + 1, |s| start + s.0);
    let reach = widest.map_or(limit - start, |s| 2 * s.0).max(2);
    let mut best: Option<(f64, u64)> = None;
    let mut all_confident = true;
    for step in 0..=2 * reach {
        let offset = (step as i64 + 1) / 2 * if step % 2 == 1 { 1 } else { -1 };
        let Some(end) = centre.checked_add_signed(offset) else {
            continue;
        };
        if end <= start || end > limit {
            if end > limit && expected.is_none() {
                break;
            }
            continue;
        }
        if end == limit {
            if limit < capacity {
                // the next region's cursor found this boundary
                return Ok((Lbn(end), true));
            }
            continue; // the capacity: a boundary, but only if none comes earlier
        }
        let verdict = tester.remembered_test(Lbn(end - 1), Phase::EndTest)?;
        if verdict.crossing && verdict.confident {
            return Ok((Lbn(end), true));
        }
        all_confident &= verdict.confident;
        if verdict.crossing && best.is_none_or(|(d, _)| verdict.delta_ns > d) {
            best = Some((verdict.delta_ns, end));
        }
    }
    if limit == capacity && best.is_none() {
        // No boundary before the end of the disk: this is the last track (certain
        // only if every pair tested confidently shares a track).
        return Ok((Lbn(limit), all_confident));
    }
    Ok(best.map_or((Lbn(limit), false), |(_, end)| (Lbn(end), false)))
}
