//! Write plans: what one stripe's write reads first, what it writes, and how the new
//! parity is computed.
//!
//! The written range touches some data units at some unit offsets; parity changes only
//! at the *affected* offsets (where at least one unit is written). Those offsets are
//! cut into intervals over which the set of written units and the set of units that
//! exist (a unit shorter than an offset counts as zeros there) are constant, and each
//! interval's parity is computed by one [`ParityMethod`]:
//! - read-modify-write reads the old data of the units written there and the old
//!   parity: `P' = P ^ old ^ new` over the written units;
//! - reconstruct-write reads the old data of the existing units *not* written there:
//!   `P' =` XOR of every existing unit's new-or-old data.
//!
//! The cases ([`WriteKind`]):
//! - **full stripe**: every data unit is written whole; nothing is read;
//! - **healthy, partial**: one method for every interval, whichever reads fewer member
//!   extents (ties: fewer sectors; still tied: reconstruct-write, as md);
//! - **failed data member**: it is never read or written. Where its unit is written,
//!   reconstruct-write is forced (its old data is not needed, the others are read);
//!   where its unit exists but is not written, read-modify-write is forced
//!   (reconstruct-write would need its old data); elsewhere the cheaper method as
//!   above. The failed unit's new data lives on only in the parity, from which a
//!   degraded read rebuilds it. A mix of forced methods is [`WriteKind::DegradedMixed`];
//! - **failed parity member**: the data is written, nothing is read, no parity.
//!
//! Sectors the `cached` predicate reports as held by the caller (a stripe cache) are
//! not read: it is asked once per member per interval, for the member extent the
//! method needs; the caller takes those old contents from its cache.
//!
//! The executor identifies what it read and writes through the layout: a member
//! extent's unit offset is `lbn - unit(stripe, member).start`, and a data sector's
//! volume LBN is `inverse(member, lbn)`.

use super::super::parity::data_runs;
use super::super::{MapError, MemberExtent, MemberIndex, ParityLayout, StripeRange, Unit};
use super::{check_failed, load_units};
use spinstack_sim::units::{Lbn, Sectors};

/// Which case a write plan is (see the module docs).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum WriteKind {
    /// Every data unit written whole: no reads; parity is the XOR of the new data.
    #[default]
    FullStripe,
    /// Every interval by read-modify-write.
    ReadModifyWrite,
    /// Every interval by reconstruct-write.
    ReconstructWrite,
    /// A failed data member forced different methods on different intervals.
    DegradedMixed,
    /// The parity member failed: data writes only.
    DegradedNoParity,
}

/// How one interval's new parity is computed (see the module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ParityMethod {
    /// `P' = P ^ old ^ new` over the units written in the interval.
    ReadModifyWrite,
    /// `P' =` XOR over the units existing in the interval of their new-or-old data.
    ReconstructWrite,
}

/// New parity at parity unit offsets `start..start + sectors`, computed by `method`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ParityRun {
    pub start: Sectors,
    pub sectors: Sectors,
    pub method: ParityMethod,
}

/// The method a partial write should use where not forced by a failure.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "kebab-case")]
pub enum WriteChoice {
    /// Whichever reads fewer member extents (ties: fewer sectors, then reconstruct).
    #[default]
    Cheapest,
    ReadModifyWrite,
    ReconstructWrite,
}

/// A write plan (see the module docs). Reuse one across calls: it keeps its buffers.
#[derive(Clone, Debug, Default)]
pub struct WritePlan {
    pub kind: WriteKind,
    pub stripe: u64,
    /// Old contents to read before writing, merged per member; never the failed member.
    pub reads: Vec<MemberExtent>,
    /// New contents: the data writes in data-index order, then the parity writes.
    pub writes: Vec<MemberExtent>,
    /// How to compute new parity, in unit-offset order; together they cover exactly
    /// the parity writes.
    pub parity_runs: Vec<ParityRun>,
    data_writes: usize,
    scratch: Scratch,
}

impl WritePlan {
    /// Empties the plan for a new stripe, keeping its buffers.
    fn reset(&mut self, stripe: u64) {
        self.kind = WriteKind::default();
        self.stripe = stripe;
        self.reads.clear();
        self.writes.clear();
        self.parity_runs.clear();
        self.data_writes = 0;
    }
    /// The data part of [`WritePlan::writes`].
    pub fn data_writes(&self) -> &[MemberExtent] {
        &self.writes[..self.data_writes]
    }
    /// The parity part of [`WritePlan::writes`].
    pub fn parity_writes(&self) -> &[MemberExtent] {
        &self.writes[self.data_writes..]
    }
}

#[derive(Clone, Debug, Default)]
struct Scratch {
    units: Vec<Unit>,
    /// Per member: the unit offsets written, for written data units.
    written: Vec<Option<(u64, u64)>>,
    cuts: Vec<u64>,
    intervals: Vec<Interval>,
    needs: Vec<Need>,
    other_reads: Vec<MemberExtent>,
}

/// Affected unit offsets `from..to` with one written set and one set of existing units.
#[derive(Clone, Copy, Debug)]
struct Interval {
    from: u64,
    to: u64,
    forced: Option<ParityMethod>,
}

#[derive(Clone, Copy, Debug)]
struct Need {
    member: MemberIndex,
    from: u64,
    to: u64,
}

/// A `cached` predicate for callers without a cache.
pub fn nothing_cached(_: MemberIndex, _: Lbn, _: Sectors) -> bool {
    false
}

/// Plans a write of `range` of `stripe` with `failed` (if any) unusable; `cached` says
/// which member extents' old contents the caller already holds.
pub fn plan_write<L: ParityLayout + ?Sized>(
    layout: &L,
    stripe: u64,
    range: StripeRange,
    failed: Option<MemberIndex>,
    cached: &dyn Fn(MemberIndex, Lbn, Sectors) -> bool,
) -> Result<WritePlan, MapError> {
    let mut plan = WritePlan::default();
    plan_write_into(
        layout,
        stripe,
        range,
        failed,
        cached,
        WriteChoice::Cheapest,
        &mut plan,
    )?;
    Ok(plan)
}

/// [`plan_write`] into a reused plan, with the method for unforced intervals chosen
/// by `choice` (a full-stripe write reads nothing whatever the choice). The plan is
/// emptied first and stays empty after an error.
pub fn plan_write_into<L: ParityLayout + ?Sized>(
    layout: &L,
    stripe: u64,
    range: StripeRange,
    failed: Option<MemberIndex>,
    cached: &dyn Fn(MemberIndex, Lbn, Sectors) -> bool,
    choice: WriteChoice,
    plan: &mut WritePlan,
) -> Result<(), MapError> {
    plan.reset(stripe);
    check_failed(layout, failed)?;
    check_stripe_range(layout, stripe, range)?;
    let parity = layout.parity_member(stripe);
    let scratch = &mut plan.scratch;
    load_units(layout, stripe, &mut scratch.units);
    mark_written(layout, stripe, range, failed, scratch, &mut plan.writes);
    plan.data_writes = plan.writes.len();
    if failed == Some(parity) {
        plan.kind = WriteKind::DegradedNoParity;
        return Ok(());
    }
    cut_intervals(parity, failed, scratch);
    let full = is_full_stripe(parity, scratch);
    let reading = Reading {
        parity,
        failed,
        cached,
    };
    let chosen = match (full, choice) {
        (false, WriteChoice::Cheapest) => cheaper_method(&reading, scratch, &mut plan.reads),
        (false, WriteChoice::ReadModifyWrite) => {
            reading.collect(ParityMethod::ReadModifyWrite, scratch, &mut plan.reads);
            ParityMethod::ReadModifyWrite
        }
        // A full stripe reads nothing by reconstruct-write (every unit is new).
        (true, _) | (false, WriteChoice::ReconstructWrite) => {
            reading.collect(ParityMethod::ReconstructWrite, scratch, &mut plan.reads);
            ParityMethod::ReconstructWrite
        }
    };
    emit_parity(
        parity,
        chosen,
        scratch,
        &mut plan.parity_runs,
        &mut plan.writes,
    );
    plan.kind = classify(full, &plan.parity_runs);
    debug_assert!(plan.reads.iter().all(|r| Some(r.member) != failed));
    debug_assert_eq!(
        plan.parity_runs.iter().map(|r| r.sectors.0).sum::<u64>(),
        plan.parity_writes()
            .iter()
            .map(|w| w.sectors.0)
            .sum::<u64>()
    );
    Ok(())
}

/// Whether every data unit is written over its whole `used` range.
fn is_full_stripe(parity: MemberIndex, scratch: &Scratch) -> bool {
    let units = scratch.written.iter().zip(&scratch.units).enumerate();
    units
        .filter(|(m, _)| *m != parity.index())
        .all(|(_, (written, unit))| *written == Some((0, unit.used.0)))
}

fn check_stripe_range<L: ParityLayout + ?Sized>(
    layout: &L,
    stripe: u64,
    range: StripeRange,
) -> Result<(), MapError> {
    if stripe >= layout.stripes() {
        return Err(MapError::StripeOutOfRange {
            stripe,
            stripes: layout.stripes(),
        });
    }
    if range.sectors.0 == 0 {
        return Err(MapError::EmptyWrite);
    }
    let stripe_data = layout.stripe_data_sectors(stripe);
    match range.start.0.checked_add(range.sectors.0) {
        Some(end) if end <= stripe_data.0 => Ok(()),
        _ => Err(MapError::StripeRangeOutOfRange {
            stripe,
            start: range.start,
            sectors: range.sectors,
            stripe_data,
        }),
    }
}

/// Records each data unit's written unit offsets and pushes the live data writes.
fn mark_written<L: ParityLayout + ?Sized>(
    layout: &L,
    stripe: u64,
    range: StripeRange,
    failed: Option<MemberIndex>,
    scratch: &mut Scratch,
    writes: &mut Vec<MemberExtent>,
) {
    scratch.written.clear();
    scratch.written.resize(scratch.units.len(), None);
    let written = &mut scratch.written;
    data_runs(layout, stripe, range, |run| {
        let from = run.unit_offset.0;
        written[run.member.index()] = Some((from, from + run.sectors.0));
        if Some(run.member) != failed {
            writes.push(run.unit.extent(run.member, run.unit_offset, run.sectors));
        }
    });
}

/// Whether `member`'s written range covers unit offsets `from..to`.
fn covers(written: &[Option<(u64, u64)>], member: usize, from: u64, to: u64) -> bool {
    matches!(written[member], Some((a, b)) if a <= from && to <= b)
}

/// Cuts the affected offsets at every written-range end and every data unit's end,
/// and decides which intervals a failed data member forces.
fn cut_intervals(parity: MemberIndex, failed: Option<MemberIndex>, scratch: &mut Scratch) {
    let Scratch {
        units,
        written,
        cuts,
        intervals,
        ..
    } = scratch;
    cuts.clear();
    cuts.push(0);
    for (m, unit) in units.iter().enumerate() {
        if m != parity.index() {
            cuts.push(unit.used.0);
            if let Some((a, b)) = written[m] {
                cuts.extend([a, b]);
            }
        }
    }
    cuts.sort_unstable();
    cuts.dedup();
    intervals.clear();
    for pair in cuts.windows(2) {
        let (from, to) = (pair[0], pair[1]);
        if !(0..units.len()).any(|m| covers(written, m, from, to)) {
            continue;
        }
        let forced = failed
            .filter(|f| *f != parity && units[f.index()].used.0 > from)
            .map(|f| match covers(written, f.index(), from, to) {
                true => ParityMethod::ReconstructWrite,
                false => ParityMethod::ReadModifyWrite,
            });
        intervals.push(Interval { from, to, forced });
    }
}

/// What collecting a method's reads depends on besides the scratch.
struct Reading<'a> {
    parity: MemberIndex,
    failed: Option<MemberIndex>,
    cached: &'a dyn Fn(MemberIndex, Lbn, Sectors) -> bool,
}

impl Reading<'_> {
    /// The merged member extents `method` (where not forced) must read.
    fn collect(&self, method: ParityMethod, scratch: &mut Scratch, out: &mut Vec<MemberExtent>) {
        let Scratch {
            units,
            written,
            intervals,
            needs,
            ..
        } = scratch;
        needs.clear();
        for interval in intervals.iter() {
            let (from, to) = (interval.from, interval.to);
            let data = (0..units.len()).filter(|&m| m != self.parity.index());
            match interval.forced.unwrap_or(method) {
                ParityMethod::ReadModifyWrite => {
                    for m in data.filter(|&m| covers(written, m, from, to)) {
                        debug_assert!(Some(MemberIndex(m as u32)) != self.failed);
                        needs.push(Need {
                            member: MemberIndex(m as u32),
                            from,
                            to,
                        });
                    }
                    needs.push(Need {
                        member: self.parity,
                        from,
                        to,
                    });
                }
                ParityMethod::ReconstructWrite => {
                    let unwritten = data.filter(|&m| {
                        Some(MemberIndex(m as u32)) != self.failed
                            && units[m].used.0 > from
                            && !covers(written, m, from, to)
                    });
                    for m in unwritten {
                        needs.push(Need {
                            member: MemberIndex(m as u32),
                            from,
                            to,
                        });
                    }
                }
            }
        }
        needs.retain(|need| {
            let unit = &units[need.member.index()];
            !(self.cached)(
                need.member,
                unit.start.offset(Sectors(need.from)),
                Sectors(need.to - need.from),
            )
        });
        merge_needs(needs, units, out);
    }
}

/// Sorts `needs` and merges each member's overlapping or touching needs into extents.
fn merge_needs(needs: &mut [Need], units: &[Unit], out: &mut Vec<MemberExtent>) {
    out.clear();
    needs.sort_unstable_by_key(|n| (n.member, n.from));
    let mut current: Option<Need> = None;
    for need in needs.iter() {
        match &mut current {
            Some(c) if c.member == need.member && need.from <= c.to => c.to = c.to.max(need.to),
            _ => {
                if let Some(c) = current.replace(*need) {
                    out.push(units[c.member.index()].extent(
                        c.member,
                        Sectors(c.from),
                        Sectors(c.to - c.from),
                    ));
                }
            }
        }
    }
    if let Some(c) = current {
        out.push(units[c.member.index()].extent(c.member, Sectors(c.from), Sectors(c.to - c.from)));
    }
}

/// Collects both methods' reads and keeps the cheaper in `reads`: fewer extents, then
/// fewer sectors, then reconstruct-write.
fn cheaper_method(
    reading: &Reading<'_>,
    scratch: &mut Scratch,
    reads: &mut Vec<MemberExtent>,
) -> ParityMethod {
    let mut rmw = std::mem::take(&mut scratch.other_reads);
    reading.collect(ParityMethod::ReadModifyWrite, scratch, &mut rmw);
    reading.collect(ParityMethod::ReconstructWrite, scratch, reads);
    let cost = |extents: &[MemberExtent]| {
        (
            extents.len(),
            extents.iter().map(|e| e.sectors.0).sum::<u64>(),
        )
    };
    let method = if cost(&rmw) < cost(reads) {
        std::mem::swap(&mut rmw, reads);
        ParityMethod::ReadModifyWrite
    } else {
        ParityMethod::ReconstructWrite
    };
    scratch.other_reads = rmw;
    method
}

/// Turns the intervals into parity runs (merged when adjacent with one method) and
/// parity writes (merged when adjacent).
fn emit_parity(
    parity: MemberIndex,
    chosen: ParityMethod,
    scratch: &Scratch,
    runs: &mut Vec<ParityRun>,
    writes: &mut Vec<MemberExtent>,
) {
    let unit = scratch.units[parity.index()];
    let first_parity_write = writes.len();
    for interval in &scratch.intervals {
        let method = interval.forced.unwrap_or(chosen);
        let sectors = Sectors(interval.to - interval.from);
        match runs.last_mut() {
            Some(run) if run.start.0 + run.sectors.0 == interval.from && run.method == method => {
                run.sectors = Sectors(run.sectors.0 + sectors.0);
            }
            _ => runs.push(ParityRun {
                start: Sectors(interval.from),
                sectors,
                method,
            }),
        }
        let extent = unit.extent(parity, Sectors(interval.from), sectors);
        match writes[first_parity_write..].last_mut() {
            Some(last) if last.end() == extent.lbn => {
                last.sectors = Sectors(last.sectors.0 + sectors.0)
            }
            _ => writes.push(extent),
        }
    }
}

fn classify(full: bool, runs: &[ParityRun]) -> WriteKind {
    let all = |method| runs.iter().all(|run| run.method == method);
    if full {
        WriteKind::FullStripe
    } else if all(ParityMethod::ReadModifyWrite) {
        WriteKind::ReadModifyWrite
    } else if all(ParityMethod::ReconstructWrite) {
        WriteKind::ReconstructWrite
    } else {
        WriteKind::DegradedMixed
    }
}
