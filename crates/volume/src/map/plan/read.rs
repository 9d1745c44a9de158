//! Read plans: the member extents a volume read issues, and what each part is for.
//!
//! Per stripe segment of the request, in this order:
//! 1. each touched data unit on a live member is wanted at the touched unit offsets,
//!    tagged [`ReadPurpose::Data`];
//! 2. a touched data unit on the failed member is *lost*: it is listed in
//!    [`ReadPlan::lost`], and the same unit offsets of every other member (data and
//!    parity) are wanted as [`ReadPurpose::Reconstruct`] sources, each clipped to its
//!    unit's `used` (a shorter unit contributes zeros past its end, parity never does);
//! 3. fill-in ([`ReadOptions::fill_in_parity`]): if the parity member is live, not yet
//!    wanted, and every live data member is, parity is wanted over the hull of the data
//!    wants' unit offsets and discarded ([`ReadPurpose::FillIn`]);
//! 4. wants of one member that overlap or touch merge into one read extent;
//! 5. whole units ([`ReadOptions::whole_units`]): an extent covering its unit's whole
//!    `used` range grows to the unit's `allocated` range, the tail tagged
//!    [`ReadPurpose::UnusedTail`] and discarded.
//!
//! Reads are in stripe order, then member order, then LBN order. To execute a plan
//! over bytes: zero the output at every `lost` piece, copy each `Data` use to its
//! volume offset, XOR each `Reconstruct` use into its volume offset, drop the rest.

use super::super::parity::data_runs;
use super::super::{MapError, MemberExtent, MemberIndex, ParityLayout, Piece, Unit};
use super::{check_failed, load_units, stripe_segments, StripeSegment};
use spinstack_sim::units::{Lbn, Sectors};

/// Optional widenings of a read plan (both off by default).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct ReadOptions {
    /// Read (and discard) a stripe's parity when it is the only live member the stripe
    /// would not read, so every member gets a request (validation paper §3).
    pub fill_in_parity: bool,
    /// Widen a read covering a unit's whole `used` range to its `allocated` range, so a
    /// whole-stripe read gives every member its whole track.
    pub whole_units: bool,
}

/// What some sectors of a read are for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ReadPurpose {
    /// Volume data: the request's sectors from `volume_offset` on.
    Data { volume_offset: Sectors },
    /// A reconstruction source: XOR into the (zeroed) output from `volume_offset` on.
    Reconstruct { volume_offset: Sectors },
    /// Parity read only to keep the stripe's member requests whole; discard.
    FillIn,
    /// A unit's allocated-but-unused tail, read to keep the request whole; discard.
    UnusedTail,
}

/// `sectors` sectors of read `read`, starting `skip` sectors into it, serve `purpose`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ReadUse {
    /// Index into [`ReadPlan::reads`].
    pub read: usize,
    pub skip: Sectors,
    pub sectors: Sectors,
    pub purpose: ReadPurpose,
}

/// A read plan (see the module docs). Reuse one across calls: it keeps its buffers.
#[derive(Clone, Debug, Default)]
pub struct ReadPlan {
    /// Member extents to read; never on the failed member.
    pub reads: Vec<MemberExtent>,
    /// What each part of each read is for; every sector of every read is covered.
    pub uses: Vec<ReadUse>,
    /// Request pieces held by the failed member, rebuilt from `Reconstruct` uses.
    pub lost: Vec<Piece>,
    units: Vec<Unit>,
    wants: Vec<Want>,
}

/// A wanted range of one member's unit in the current stripe, in unit offsets.
#[derive(Clone, Copy, Debug)]
struct Want {
    member: MemberIndex,
    from: u64,
    to: u64,
    purpose: ReadPurpose,
}

/// Plans a read of `sectors` from volume `lbn` with `failed` (if any) unreadable.
pub fn plan_read<L: ParityLayout + ?Sized>(
    layout: &L,
    lbn: Lbn,
    sectors: Sectors,
    failed: Option<MemberIndex>,
    options: ReadOptions,
) -> Result<ReadPlan, MapError> {
    let mut plan = ReadPlan::default();
    plan_read_into(layout, lbn, sectors, failed, options, &mut plan)?;
    Ok(plan)
}

/// [`plan_read`] into a reused plan (cleared first; empty after an error).
pub fn plan_read_into<L: ParityLayout + ?Sized>(
    layout: &L,
    lbn: Lbn,
    sectors: Sectors,
    failed: Option<MemberIndex>,
    options: ReadOptions,
    plan: &mut ReadPlan,
) -> Result<(), MapError> {
    plan.reads.clear();
    plan.uses.clear();
    plan.lost.clear();
    check_failed(layout, failed)?;
    for segment in stripe_segments(layout, lbn, sectors)? {
        load_units(layout, segment.stripe, &mut plan.units);
        plan.wants.clear();
        want_data(layout, &segment, failed, plan);
        if options.fill_in_parity {
            want_fill_in(layout, segment.stripe, failed, &mut plan.wants);
        }
        emit_reads(plan, options.whole_units);
    }
    debug_assert!(plan.reads.iter().all(|r| Some(r.member) != failed));
    debug_assert!(plan.uses.iter().all(|u| {
        let read = plan.reads[u.read];
        u.sectors.0 > 0 && u.skip.0 + u.sectors.0 <= read.sectors.0
    }));
    Ok(())
}

/// Steps 1 and 2: data wants, and reconstruction sources for lost data.
fn want_data<L: ParityLayout + ?Sized>(
    layout: &L,
    segment: &StripeSegment,
    failed: Option<MemberIndex>,
    plan: &mut ReadPlan,
) {
    let (units, wants, lost) = (&plan.units, &mut plan.wants, &mut plan.lost);
    data_runs(layout, segment.stripe, segment.range, |run| {
        let volume_offset = Sectors(segment.volume_offset.0 + run.range_offset.0);
        let from = run.unit_offset.0;
        let to = from + run.sectors.0;
        if Some(run.member) != failed {
            let purpose = ReadPurpose::Data { volume_offset };
            wants.push(Want {
                member: run.member,
                from,
                to,
                purpose,
            });
            return;
        }
        let extent = run.unit.extent(run.member, run.unit_offset, run.sectors);
        lost.push(Piece {
            offset: volume_offset,
            extent,
        });
        for (m, unit) in units.iter().enumerate() {
            let member = MemberIndex(m as u32);
            if member != run.member && from < unit.used.0 {
                let purpose = ReadPurpose::Reconstruct { volume_offset };
                wants.push(Want {
                    member,
                    from,
                    to: to.min(unit.used.0),
                    purpose,
                });
            }
        }
    });
}

/// Step 3: the fill-in parity read, when parity is the only live member left unread.
fn want_fill_in<L: ParityLayout + ?Sized>(
    layout: &L,
    stripe: u64,
    failed: Option<MemberIndex>,
    wants: &mut Vec<Want>,
) {
    let parity = layout.parity_member(stripe);
    let wanted = |member: MemberIndex| wants.iter().any(|w| w.member == member);
    if Some(parity) == failed || wanted(parity) || wants.is_empty() {
        return;
    }
    let every_live_data_read = (0..layout.members() - 1)
        .map(|d| layout.data_member(stripe, d))
        .all(|member| Some(member) == failed || wanted(member));
    if !every_live_data_read {
        return;
    }
    let from = wants.iter().map(|w| w.from).min().unwrap_or(0);
    let to = wants.iter().map(|w| w.to).max().unwrap_or(0);
    wants.push(Want {
        member: parity,
        from,
        to,
        purpose: ReadPurpose::FillIn,
    });
}

/// Steps 4 and 5: merge each member's wants into extents, widen whole units, record
/// the uses.
fn emit_reads(plan: &mut ReadPlan, whole_units: bool) {
    plan.wants.sort_unstable_by_key(|w| (w.member, w.from));
    let wants = &plan.wants;
    let mut first = 0;
    while first < wants.len() {
        let member = wants[first].member;
        let from = wants[first].from;
        let mut to = wants[first].to;
        let mut past = first;
        while past < wants.len() && wants[past].member == member && wants[past].from <= to {
            to = to.max(wants[past].to);
            past += 1;
        }
        let read = plan.reads.len();
        for want in &wants[first..past] {
            plan.uses.push(ReadUse {
                read,
                skip: Sectors(want.from - from),
                sectors: Sectors(want.to - want.from),
                purpose: want.purpose,
            });
        }
        let unit = plan.units[member.index()];
        debug_assert!(
            to <= unit.used.0,
            "a want reaches past its unit's used range"
        );
        if whole_units && from == 0 && to == unit.used.0 && unit.allocated > unit.used {
            plan.uses.push(ReadUse {
                read,
                skip: unit.used,
                sectors: Sectors(unit.allocated.0 - unit.used.0),
                purpose: ReadPurpose::UnusedTail,
            });
            to = unit.allocated.0;
        }
        plan.reads
            .push(unit.extent(member, Sectors(from), Sectors(to - from)));
        first = past;
    }
}
