//! A single drive or a RAID-0 in simulated time: each request is cut into the
//! pieces of the chunk map ([`Raid0Map`]); every piece goes to its member; the
//! request completes when its last piece does. A single drive is a RAID-0 of one
//! member (the map then gives one piece per request), so it pays the same host
//! cost per device I/O as any RAID, which makes the comparison fair. A flush goes
//! to every member. No redundancy: a failed member fails the requests that need it.

use super::io::{MemberIo, MemberStats, PlugPolicy};
use super::{route_control, HostCost};
use crate::map::{MapError, MemberExtent, MemberIndex, Piece, Raid0Map};
use spinstack_sim::device::{BlockDevice, Control, ControlError, DeviceError};
use spinstack_sim::driver::Issue;
use spinstack_sim::members::MemberLimits;
use spinstack_sim::request::{BlockRequest, Completion, Operation};
use spinstack_sim::units::{Lbn, Nanoseconds, Sectors};
use spinstack_trackmap::TrackMap;

/// A single drive's trivial map, or RAID-0's.
#[derive(Clone, Debug)]
pub enum StripedMap {
    Single(Sectors),
    Raid0(Raid0Map),
}

impl StripedMap {
    pub fn capacity(&self) -> Sectors {
        match self {
            StripedMap::Single(capacity) => *capacity,
            StripedMap::Raid0(map) => map.capacity(),
        }
    }

    fn split_into(&self, lbn: Lbn, sectors: Sectors, out: &mut Vec<Piece>) {
        match self {
            StripedMap::Single(_) => {
                out.clear();
                out.push(Piece {
                    offset: Sectors(0),
                    extent: MemberExtent {
                        member: MemberIndex(0),
                        lbn,
                        sectors,
                    },
                });
            }
            StripedMap::Raid0(map) => map
                .split_into(lbn, sectors, out)
                .expect("range checked at submit"),
        }
    }
}

/// See the module documentation.
pub struct Striped<D: BlockDevice> {
    map: StripedMap,
    io: MemberIo<D, (), ()>,
    pieces: Vec<Piece>,
}

impl<D: BlockDevice> Striped<D> {
    /// A RAID-0 of `members` with `chunk`, over the smallest member's capacity.
    pub fn raid0(
        members: Vec<D>,
        tracks: Vec<Option<TrackMap>>,
        chunk: Sectors,
        host: HostCost,
        plug: Option<PlugPolicy>,
    ) -> Result<Striped<D>, MapError> {
        let capacity = members
            .iter()
            .map(|m| m.capacity())
            .min()
            .unwrap_or(Sectors(0));
        let map = StripedMap::Raid0(Raid0Map::new(members.len() as u32, chunk, capacity)?);
        Ok(Striped {
            map,
            io: MemberIo::new(members, tracks, host, plug, MemberLimits::default()),
            pieces: Vec::new(),
        })
    }

    /// One drive behind the host path (host cost, plug, statistics).
    pub fn single(
        member: D,
        track: Option<TrackMap>,
        host: HostCost,
        plug: Option<PlugPolicy>,
    ) -> Result<Striped<D>, MapError> {
        Ok(Striped {
            map: StripedMap::Single(member.capacity()),
            io: MemberIo::new(
                vec![member],
                vec![track],
                host,
                plug,
                MemberLimits::default(),
            ),
            pieces: Vec::new(),
        })
    }

    pub fn map(&self) -> &StripedMap {
        &self.map
    }
    pub fn members(&self) -> &[D] {
        self.io.members.members()
    }
    pub fn stats(&self) -> Vec<MemberStats> {
        self.io.stats()
    }
    pub fn host_busy(&self) -> Nanoseconds {
        self.io.host_busy()
    }

    fn issue_pieces(&mut self, request: BlockRequest) -> Result<(), DeviceError> {
        let mut pieces = std::mem::take(&mut self.pieces);
        pieces.clear();
        if request.operation == Operation::Flush {
            for member in 0..self.io.count() {
                pieces.push(Piece {
                    offset: Sectors(0),
                    extent: MemberExtent {
                        member: MemberIndex(member),
                        lbn: request.lbn,
                        sectors: Sectors(0),
                    },
                });
            }
        } else {
            self.map
                .split_into(request.lbn, request.sectors, &mut pieces);
        }
        let opened = self.io.open(request, pieces.len() as u64);
        if let Ok(parent) = opened {
            for piece in &pieces {
                let issue = Issue {
                    operation: request.operation,
                    lbn: piece.extent.lbn,
                    sectors: piece.extent.sectors,
                    force_unit_access: request.force_unit_access,
                };
                // The children were counted when the parent was opened.
                let sent = self.io.send(parent, piece.extent.member, issue, ());
                debug_assert!(sent.is_ok(), "{sent:?}");
            }
            self.io.members.settle(parent);
        }
        self.pieces = pieces;
        opened.map(|_| ())
    }
}

impl<D: BlockDevice> BlockDevice for Striped<D> {
    fn capacity(&self) -> Sectors {
        self.map.capacity()
    }
    fn submit(&mut self, request: BlockRequest) -> Result<(), DeviceError> {
        request.check(self.capacity())?;
        self.issue_pieces(request)
    }
    fn next_event_time(&self) -> Option<Nanoseconds> {
        self.io.members.next_event_time()
    }
    fn advance(&mut self, now: Nanoseconds, completed: &mut Vec<Completion>) {
        // Children carry nothing to handle: the bookkeeping completes the parents.
        while self.io.next_child(now).is_some() {}
        self.io.members.drain(completed);
    }
    fn control(
        &mut self,
        now: Nanoseconds,
        path: &[MemberIndex],
        command: Control,
    ) -> Result<(), ControlError> {
        route_control(&mut self.io, "a striped volume", now, path, command).map(|_| ())
    }
}
