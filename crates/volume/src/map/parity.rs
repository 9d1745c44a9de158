//! The parity-layout contract shared by every RAID-5 flavour, and what is computed
//! from it once for all: `locate`, `split_into` and [`stripe_segments`].
//!
//! A parity layout cuts the volume into *stripes*. Stripe `s` has one *unit* on every
//! member: `members - 1` data units (data index `0..members-1`) and one parity unit.
//! A unit occupies `allocated` sectors from member LBN `start`, of which the first
//! `used` hold data or parity; `used..allocated` is unused (a whole track is allocated
//! in the track-aligned layouts even when less of it is used).
//!
//! Invariants every implementation keeps (property-tested for each):
//! - the stripe's data is the data units' `used` sectors concatenated in data-index
//!   order, so stripe `s` covers volume LBNs `stripe_start(s)..` for
//!   `stripe_data_sectors(s)`, and stripes tile `0..capacity` in order;
//! - the parity unit's `used` is the largest data `used`; parity sector `i` is the XOR
//!   of the data units' sector `i`, a unit shorter than `i` counting as zeros;
//! - `used <= allocated`; units never overlap on a member;
//! - `inverse` gives each member sector exactly the role the units give it, and
//!   `raw_sectors() == capacity() + parity_sectors() + unused_sectors()`.
//!
//! Stripe and member arguments of the accessors (`unit`, `parity_member`, ...) must be
//! in range (`stripe < stripes()`, `member < members()`); they come from `stripe_of`
//! or [`stripe_segments`], which validate the caller's LBNs. Entry points that take
//! addresses from outside (`locate`, `split_into`, the plans) return a [`MapError`].

use super::{check_range, push_piece, MapError, MemberExtent, MemberIndex, Piece};
use serde::{Deserialize, Serialize};
use spinstack_sim::units::{Lbn, Sectors};

/// What one member contributes to one stripe.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Unit {
    /// First member LBN of the unit.
    pub start: Lbn,
    /// Sectors from `start` holding data (or parity).
    pub used: Sectors,
    /// Sectors from `start` the unit occupies; `used..allocated` is unused.
    pub allocated: Sectors,
}

impl Unit {
    /// The member extent of unit offsets `offset..offset + sectors`.
    pub fn extent(&self, member: MemberIndex, offset: Sectors, sectors: Sectors) -> MemberExtent {
        debug_assert!(offset.0 + sectors.0 <= self.allocated.0);
        MemberExtent {
            member,
            lbn: self.start.offset(offset),
            sectors,
        }
    }
}

/// What a member sector holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Role {
    /// Data of this volume LBN.
    Data(Lbn),
    /// Parity sector `offset` of stripe `stripe`.
    Parity { stripe: u64, offset: Sectors },
    /// Allocated but unused, beyond every stripe, or not on the member at all.
    Unused,
}

/// A parity RAID address layout (see the module docs for the contract).
pub trait ParityLayout {
    fn members(&self) -> u32;
    fn stripes(&self) -> u64;
    /// Data sectors of the volume.
    fn capacity(&self) -> Sectors;
    /// The stripe holding volume `lbn`.
    fn stripe_of(&self, lbn: Lbn) -> Result<u64, MapError>;
    /// First volume LBN of `stripe`.
    fn stripe_start(&self, stripe: u64) -> Lbn;
    /// Data sectors in `stripe`: the sum of its data units' `used`.
    fn stripe_data_sectors(&self, stripe: u64) -> Sectors;
    fn parity_member(&self, stripe: u64) -> MemberIndex;
    /// The member holding data unit `data_index` (`0..members-1`) of `stripe`.
    fn data_member(&self, stripe: u64, data_index: u32) -> MemberIndex;
    /// `member`'s unit in `stripe` (data or parity).
    fn unit(&self, stripe: u64, member: MemberIndex) -> Unit;
    /// What sector `lbn` of `member` holds.
    fn inverse(&self, member: MemberIndex, lbn: Lbn) -> Role;
    /// Sectors of all members together.
    fn raw_sectors(&self) -> Sectors;
    /// Sectors holding parity (the parity units' `used`, over all stripes).
    fn parity_sectors(&self) -> Sectors;
    /// Sectors holding neither data nor parity: allocated-but-unused parts of units,
    /// tracks or chunks beyond the last stripe, and each member's tail.
    fn unused_sectors(&self) -> Sectors;

    /// The data index of `member` in `stripe`, or `None` for the parity member.
    fn data_index(&self, stripe: u64, member: MemberIndex) -> Option<u32> {
        (0..self.members() - 1).find(|&d| self.data_member(stripe, d) == member)
    }

    /// The member and member LBN holding volume `lbn`.
    fn locate(&self, lbn: Lbn) -> Result<(MemberIndex, Lbn), MapError> {
        let stripe = self.stripe_of(lbn)?;
        let offset = lbn.sectors_since(self.stripe_start(stripe));
        let mut found = None;
        data_runs(
            self,
            stripe,
            StripeRange {
                start: offset,
                sectors: Sectors(1),
            },
            |run| {
                found = Some((run.member, run.unit.start.offset(run.unit_offset)));
            },
        );
        debug_assert!(found.is_some(), "{lbn} not in stripe {stripe}");
        found.ok_or(MapError::LbnOutOfRange {
            lbn,
            capacity: self.capacity(),
        })
    }

    /// Replaces `out` with the data pieces of the request (`sectors` from `lbn`), in
    /// volume order, one per contiguous member run. Parity is not touched: this is a
    /// healthy read's map; [`super::plan`] covers parity and failures.
    fn split_into(&self, lbn: Lbn, sectors: Sectors, out: &mut Vec<Piece>) -> Result<(), MapError> {
        out.clear();
        for segment in stripe_segments(self, lbn, sectors)? {
            data_runs(self, segment.stripe, segment.range, |run| {
                let offset = Sectors(segment.volume_offset.0 + run.range_offset.0);
                let extent = run.unit.extent(run.member, run.unit_offset, run.sectors);
                push_piece(out, Piece { offset, extent });
            });
        }
        Ok(())
    }
}

/// A range of a stripe's data: sectors `start..start + sectors` of the stripe's data
/// (0 is the stripe's first volume LBN).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct StripeRange {
    pub start: Sectors,
    pub sectors: Sectors,
}

impl StripeRange {
    pub fn end(&self) -> Sectors {
        Sectors(self.start.0 + self.sectors.0)
    }
}

/// The part of a volume request inside one stripe.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct StripeSegment {
    pub stripe: u64,
    pub range: StripeRange,
    /// Sectors from the start of the volume request to this segment.
    pub volume_offset: Sectors,
}

/// Cuts `sectors` from volume `lbn` into per-stripe segments, in volume order. One
/// `stripe_of` lookup, then the following stripes in turn (no allocation).
pub fn stripe_segments<L: ParityLayout + ?Sized>(
    layout: &L,
    lbn: Lbn,
    sectors: Sectors,
) -> Result<StripeSegments<'_, L>, MapError> {
    check_range(lbn, sectors, layout.capacity())?;
    let (stripe, start) = if sectors.0 == 0 {
        (0, Sectors(0))
    } else {
        let stripe = layout.stripe_of(lbn)?;
        (stripe, lbn.sectors_since(layout.stripe_start(stripe)))
    };
    Ok(StripeSegments {
        layout,
        stripe,
        start,
        done: 0,
        total: sectors.0,
    })
}

/// Iterator of [`stripe_segments`].
#[derive(Clone, Debug)]
pub struct StripeSegments<'a, L: ?Sized> {
    layout: &'a L,
    stripe: u64,
    start: Sectors,
    done: u64,
    total: u64,
}

impl<L: ParityLayout + ?Sized> Iterator for StripeSegments<'_, L> {
    type Item = StripeSegment;
    fn next(&mut self) -> Option<StripeSegment> {
        if self.done >= self.total {
            return None;
        }
        let stripe_data = self.layout.stripe_data_sectors(self.stripe).0;
        debug_assert!(self.start.0 < stripe_data);
        let take = (stripe_data - self.start.0).min(self.total - self.done);
        let segment = StripeSegment {
            stripe: self.stripe,
            range: StripeRange {
                start: self.start,
                sectors: Sectors(take),
            },
            volume_offset: Sectors(self.done),
        };
        self.done += take;
        self.stripe += 1;
        self.start = Sectors(0);
        Some(segment)
    }
}

/// One data unit's share of a stripe range.
#[derive(Clone, Copy, Debug)]
pub(crate) struct DataRun {
    pub member: MemberIndex,
    pub unit: Unit,
    /// First unit offset of the share.
    pub unit_offset: Sectors,
    pub sectors: Sectors,
    /// Sectors from the start of the stripe range to the share.
    pub range_offset: Sectors,
}

/// Calls `visit` for each data unit `range` touches, in data-index order.
pub(crate) fn data_runs<L: ParityLayout + ?Sized>(
    layout: &L,
    stripe: u64,
    range: StripeRange,
    mut visit: impl FnMut(DataRun),
) {
    let end = range.end().0;
    let mut unit_base = 0;
    for data_index in 0..layout.members() - 1 {
        if unit_base >= end {
            break;
        }
        let member = layout.data_member(stripe, data_index);
        let unit = layout.unit(stripe, member);
        let unit_end = unit_base + unit.used.0;
        let from = range.start.0.max(unit_base);
        let to = end.min(unit_end);
        if from < to {
            visit(DataRun {
                member,
                unit,
                unit_offset: Sectors(from - unit_base),
                sectors: Sectors(to - from),
                range_offset: Sectors(from - range.start.0),
            });
        }
        unit_base = unit_end;
    }
}

/// md's left-symmetric parity placement: stripe `s`'s parity is on member
/// `members - 1 - s % members`, so parity walks from the last member to the first.
pub(crate) fn left_symmetric_parity(stripe: u64, members: u32) -> MemberIndex {
    MemberIndex(members - 1 - (stripe % u64::from(members)) as u32)
}

/// md's left-symmetric data placement: data index `d` follows the parity member
/// cyclically, so consecutive chunks of the volume visit every member in turn.
pub(crate) fn left_symmetric_data(stripe: u64, members: u32, data_index: u32) -> MemberIndex {
    debug_assert!(data_index < members - 1);
    let parity = left_symmetric_parity(stripe, members).0;
    MemberIndex((parity + 1 + data_index) % members)
}

/// The inverse of [`left_symmetric_data`]; `None` for the parity member.
pub(crate) fn left_symmetric_data_index(
    stripe: u64,
    members: u32,
    member: MemberIndex,
) -> Option<u32> {
    let parity = left_symmetric_parity(stripe, members).0;
    (member.0 != parity).then(|| (member.0 + members - parity - 1) % members)
}
