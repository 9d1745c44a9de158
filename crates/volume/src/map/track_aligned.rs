//! Track-aligned RAID-5 (the Linux validation paper, §3): stripe `s` is track `s` of
//! every member, so a stripe-aligned read or write gives each member whole tracks.
//!
//! Each member is given as its track sizes in LBN order; tracks tile the member from
//! LBN 0. The layout has `stripes = min(track count)` stripes; parity rotates
//! left-symmetrically as in [`super::Raid5Map`]. Members' track sizes differ (the
//! paper found four numberings among six drives of one model), and parity needs
//! units of equal length, so a [`UnitPolicy`] decides how much of each track is used:
//!
//! - [`UnitPolicy::WholeTrack`]: every unit is allocated its member's whole track `s`;
//!   a data unit uses `min(own track, parity member's track)` so parity always fits
//!   in the parity member's track, and parity uses the largest data `used`. Sectors
//!   are left unused only where a data track is longer than the parity track.
//! - [`UnitPolicy::SmallestTrack`]: the paper's rejected "chunk = the smallest track,
//!   leaving sectors unused": every unit uses `C` sectors, `C` being the smallest of
//!   all members' tracks `0..stripes`, and is allocated its whole track.
//!
//! (The paper's other rejected option, "chunk = the largest track", is not a track
//! layout at all: it is [`super::Raid5Map::with_largest_track_chunk`].)
//!
//! Invariants (beyond the [`ParityLayout`] contract): every unit starts on a track
//! boundary of its member and is allocated exactly that track; tracks beyond the
//! stripe count are unused. Lookups are binary searches on prefix sums (a Maxtor
//! Atlas 10K V member has about 152,704 tracks); construction is linear.

use super::parity::{left_symmetric_data, left_symmetric_data_index, left_symmetric_parity};
use super::{check_lbn, MapError, MemberIndex, ParityLayout, Role, Unit};
use serde::{Deserialize, Serialize};
use spinstack_sim::units::{Lbn, Sectors};

/// How much of each track a track-aligned unit uses (see the module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum UnitPolicy {
    /// Units use as much of their track as the stripe's parity track allows.
    WholeTrack,
    /// Units use the smallest track size over all members' striped tracks.
    SmallestTrack,
}

/// A track-aligned RAID-5 (see the module docs).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TrackAlignedLayout {
    members: u32,
    policy: UnitPolicy,
    stripes: u64,
    /// Member `m`'s track `t` starts at member LBN `track_starts[m * (stripes + 1) + t]`,
    /// `t = 0..=stripes` (the last entry ends the last striped track).
    track_starts: Vec<u64>,
    /// Stripe `s` starts at volume LBN `stripe_starts[s]`, `s = 0..=stripes`.
    stripe_starts: Vec<u64>,
    smallest_track: Sectors,
    raw: Sectors,
    parity: Sectors,
    unused: Sectors,
}

/// Checks a list of members' track sizes: enough members, no empty list, no empty track.
pub(crate) fn validate_member_tracks(
    member_tracks: &[Vec<Sectors>],
    level: &'static str,
    minimum: u32,
) -> Result<(), MapError> {
    let members = u32::try_from(member_tracks.len()).unwrap_or(u32::MAX);
    if members < minimum {
        return Err(MapError::TooFewMembers {
            level,
            members,
            minimum,
        });
    }
    for (m, tracks) in member_tracks.iter().enumerate() {
        let member = MemberIndex(m as u32);
        if tracks.is_empty() {
            return Err(MapError::TrackListEmpty { member });
        }
        if let Some(track) = tracks.iter().position(|t| t.0 == 0) {
            return Err(MapError::TrackEmpty {
                member,
                track: track as u64,
            });
        }
    }
    Ok(())
}

impl TrackAlignedLayout {
    /// Fewest members (two data units and parity).
    pub const MIN_MEMBERS: u32 = 3;

    /// A layout over members given as their track sizes in LBN order.
    pub fn new(member_tracks: Vec<Vec<Sectors>>, policy: UnitPolicy) -> Result<Self, MapError> {
        validate_member_tracks(&member_tracks, "track-aligned RAID-5", Self::MIN_MEMBERS)?;
        let members = member_tracks.len() as u32;
        let stripes = member_tracks
            .iter()
            .map(|t| t.len() as u64)
            .min()
            .unwrap_or(0);
        let too_large = |what| MapError::TooLarge { what };
        let mut track_starts = Vec::with_capacity(member_tracks.len() * (stripes as usize + 1));
        let mut raw = 0u64;
        let mut beyond_stripes = 0u64;
        let mut smallest_track = u64::MAX;
        for tracks in &member_tracks {
            let (striped, beyond) = tracks.split_at(stripes as usize);
            let mut start = 0u64;
            for track in striped {
                track_starts.push(start);
                smallest_track = smallest_track.min(track.0);
                start = start
                    .checked_add(track.0)
                    .ok_or(too_large("a member's capacity"))?;
            }
            track_starts.push(start);
            let mut member_end = start;
            for track in beyond {
                member_end = member_end
                    .checked_add(track.0)
                    .ok_or(too_large("a member's capacity"))?;
            }
            raw = raw
                .checked_add(member_end)
                .ok_or(too_large("the members' total capacity"))?;
            // Cannot overflow: a part of `raw`, which fits.
            beyond_stripes += member_end - start;
        }
        let mut layout = TrackAlignedLayout {
            members,
            policy,
            stripes,
            track_starts,
            stripe_starts: Vec::with_capacity(stripes as usize + 1),
            smallest_track: Sectors(smallest_track),
            raw: Sectors(raw),
            parity: Sectors(0),
            unused: Sectors(0),
        };
        layout.account(beyond_stripes);
        Ok(layout)
    }

    /// Fills `stripe_starts` and the capacity accounting by summing every unit.
    fn account(&mut self, beyond_stripes: u64) {
        let mut data = 0u64;
        let mut parity = 0u64;
        let mut unused_in_units = 0u64;
        self.stripe_starts.push(0);
        for stripe in 0..self.stripes {
            for m in 0..self.members {
                let unit = self.unit(stripe, MemberIndex(m));
                debug_assert!(unit.used.0 > 0 && unit.used <= unit.allocated);
                unused_in_units += unit.allocated.0 - unit.used.0;
                if MemberIndex(m) == self.parity_member(stripe) {
                    parity += unit.used.0;
                } else {
                    data += unit.used.0;
                }
            }
            self.stripe_starts.push(data);
        }
        self.parity = Sectors(parity);
        self.unused = Sectors(unused_in_units + beyond_stripes);
        debug_assert_eq!(self.raw.0, data + parity + self.unused.0);
    }

    pub fn policy(&self) -> UnitPolicy {
        self.policy
    }
    /// The smallest track among all members' tracks `0..stripes` (the unit size under
    /// [`UnitPolicy::SmallestTrack`]).
    pub fn smallest_track(&self) -> Sectors {
        self.smallest_track
    }

    /// Member `member`'s track `track` (`track < stripes`) as (start, size).
    fn track(&self, member: MemberIndex, track: u64) -> (u64, u64) {
        debug_assert!(member.0 < self.members && track < self.stripes);
        let base = member.index() * (self.stripes as usize + 1) + track as usize;
        let start = self.track_starts[base];
        (start, self.track_starts[base + 1] - start)
    }

    /// The member's striped track starts, `0..=stripes`.
    fn member_track_starts(&self, member: MemberIndex) -> &[u64] {
        let base = member.index() * (self.stripes as usize + 1);
        &self.track_starts[base..base + self.stripes as usize + 1]
    }

    /// A data unit's `used` under [`UnitPolicy::WholeTrack`]: its track, clipped to
    /// the parity track so that parity (the longest data unit) fits there.
    fn whole_track_data_used(&self, stripe: u64, member: MemberIndex) -> u64 {
        let (_, own) = self.track(member, stripe);
        let (_, parity) = self.track(self.parity_member(stripe), stripe);
        own.min(parity)
    }

    fn used(&self, stripe: u64, member: MemberIndex) -> u64 {
        match self.policy {
            UnitPolicy::SmallestTrack => self.smallest_track.0,
            UnitPolicy::WholeTrack if member == self.parity_member(stripe) => (0..self.members - 1)
                .map(|d| self.whole_track_data_used(stripe, self.data_member(stripe, d)))
                .max()
                .unwrap_or(0),
            UnitPolicy::WholeTrack => self.whole_track_data_used(stripe, member),
        }
    }
}

impl ParityLayout for TrackAlignedLayout {
    fn members(&self) -> u32 {
        self.members
    }
    fn stripes(&self) -> u64 {
        self.stripes
    }
    fn capacity(&self) -> Sectors {
        Sectors(self.stripe_starts[self.stripes as usize])
    }
    fn stripe_of(&self, lbn: Lbn) -> Result<u64, MapError> {
        check_lbn(lbn, self.capacity())?;
        // stripe_starts[0] == 0 <= lbn, so the partition point is at least 1.
        Ok(self.stripe_starts.partition_point(|&start| start <= lbn.0) as u64 - 1)
    }
    fn stripe_start(&self, stripe: u64) -> Lbn {
        Lbn(self.stripe_starts[stripe as usize])
    }
    fn stripe_data_sectors(&self, stripe: u64) -> Sectors {
        let s = stripe as usize;
        Sectors(self.stripe_starts[s + 1] - self.stripe_starts[s])
    }
    fn parity_member(&self, stripe: u64) -> MemberIndex {
        left_symmetric_parity(stripe, self.members)
    }
    fn data_member(&self, stripe: u64, data_index: u32) -> MemberIndex {
        left_symmetric_data(stripe, self.members, data_index)
    }
    fn data_index(&self, stripe: u64, member: MemberIndex) -> Option<u32> {
        left_symmetric_data_index(stripe, self.members, member)
    }
    fn unit(&self, stripe: u64, member: MemberIndex) -> Unit {
        let (start, size) = self.track(member, stripe);
        Unit {
            start: Lbn(start),
            used: Sectors(self.used(stripe, member)),
            allocated: Sectors(size),
        }
    }
    fn inverse(&self, member: MemberIndex, lbn: Lbn) -> Role {
        if member.0 >= self.members {
            return Role::Unused;
        }
        let starts = self.member_track_starts(member);
        if lbn.0 >= starts[self.stripes as usize] {
            return Role::Unused;
        }
        let stripe = (starts.partition_point(|&start| start <= lbn.0) - 1) as u64;
        let offset = lbn.0 - starts[stripe as usize];
        if offset >= self.used(stripe, member) {
            return Role::Unused;
        }
        let Some(data_index) = self.data_index(stripe, member) else {
            return Role::Parity {
                stripe,
                offset: Sectors(offset),
            };
        };
        let before: u64 = (0..data_index)
            .map(|d| self.used(stripe, self.data_member(stripe, d)))
            .sum();
        Role::Data(Lbn(self.stripe_starts[stripe as usize] + before + offset))
    }
    fn raw_sectors(&self) -> Sectors {
        self.raw
    }
    fn parity_sectors(&self) -> Sectors {
        self.parity
    }
    fn unused_sectors(&self) -> Sectors {
        self.unused
    }
}
