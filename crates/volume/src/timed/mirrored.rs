//! RAID-1 (n-way mirror) and RAID-10 (md's "near" copies) in simulated time.
//!
//! **Reads** go to one copy per piece, chosen by [`ReadBalance`]: the copy whose
//! member has the fewest requests outstanding, or — like md's `read_balance` — the
//! copy whose member's head is nearest (md keeps the end of the last request sent
//! to each member as its head position; so do we). A read that fails on one copy is
//! retried on another live copy inside the completion handler.
//! **Writes and trims** go to every live copy; a flush to every live member.
//!
//! **Failure.** A member fails by a control command or by answering
//! `DeviceFailed`; it gets no request after that. A request completes `Ok` when
//! every piece was served by some copy, `DeviceFailed` when some piece has no live
//! copy left (never data claimed from a failed member).

use super::io::{MemberIo, MemberStats, PlugPolicy};
use super::{route_control, HostCost, MemberChange};
use crate::map::{MapError, MemberIndex, MirrorMap, Piece, Raid10Map, Replica, Replicas};
use spinstack_sim::device::{BlockDevice, Control, ControlError, DeviceError};
use spinstack_sim::driver::Issue;
use spinstack_sim::members::{MemberLimits, ParentId};
use spinstack_sim::request::{BlockRequest, Completion, Operation, Status};
use spinstack_sim::units::{Lbn, Nanoseconds, Sectors};
use spinstack_trackmap::TrackMap;

/// How a read picks its copy.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ReadBalance {
    /// The member with the fewest requests outstanding (ties: lowest copy).
    #[default]
    ShortestQueue,
    /// The member whose last request ended nearest the piece (md's rule).
    NearestHead,
}

/// The two mirrored maps behind one interface.
#[derive(Clone, Debug)]
pub enum MirrorLayout {
    Mirror(MirrorMap),
    Near(Raid10Map),
}

impl MirrorLayout {
    fn capacity(&self) -> Sectors {
        match self {
            MirrorLayout::Mirror(m) => m.capacity(),
            MirrorLayout::Near(m) => m.capacity(),
        }
    }
    fn copies(&self) -> u32 {
        match self {
            MirrorLayout::Mirror(m) => m.copies(),
            MirrorLayout::Near(m) => m.copies(),
        }
    }
    fn locate(&self, lbn: Lbn) -> Replicas {
        match self {
            MirrorLayout::Mirror(m) => m.locate(lbn),
            MirrorLayout::Near(m) => m.locate(lbn),
        }
        .expect("LBN inside the volume")
    }
    fn split_copy_into(&self, lbn: Lbn, sectors: Sectors, copy: u32, out: &mut Vec<Piece>) {
        match self {
            MirrorLayout::Mirror(m) => m.split_copy_into(lbn, sectors, copy, out),
            MirrorLayout::Near(m) => m.split_copy_into(lbn, sectors, copy, out),
        }
        .expect("range inside the volume")
    }
}

/// What a child request was for: the volume range its piece holds, and which
/// copies a read has tried (bit per copy).
#[derive(Clone, Copy, Debug)]
struct Tag {
    volume_lbn: Lbn,
    sectors: Sectors,
    tried: u32,
}

/// Whether some piece of the request has no live copy.
#[derive(Clone, Copy, Debug, Default)]
struct Lost(bool);

/// See the module documentation.
pub struct Mirrored<D: BlockDevice> {
    layout: MirrorLayout,
    io: MemberIo<D, Tag, Lost>,
    balance: ReadBalance,
    failed: Vec<bool>,
    head: Vec<Lbn>,
    pieces: Vec<Piece>,
}

impl<D: BlockDevice> Mirrored<D> {
    /// RAID-1 over all `members`, or RAID-10 near with `chunk` and `copies` when
    /// `chunk` is given.
    pub fn new(
        members: Vec<D>,
        tracks: Vec<Option<TrackMap>>,
        near: Option<(Sectors, u32)>,
        balance: ReadBalance,
        host: HostCost,
        plug: Option<PlugPolicy>,
    ) -> Result<Mirrored<D>, MapError> {
        let count = members.len() as u32;
        let capacity = members
            .iter()
            .map(|m| m.capacity())
            .min()
            .unwrap_or(Sectors(0));
        let layout = match near {
            None => MirrorLayout::Mirror(MirrorMap::new(count, capacity)?),
            Some((chunk, copies)) => {
                MirrorLayout::Near(Raid10Map::with_copies(count, copies, chunk, capacity)?)
            }
        };
        Ok(Mirrored {
            layout,
            io: MemberIo::new(members, tracks, host, plug, MemberLimits::default()),
            balance,
            failed: vec![false; count as usize],
            head: vec![Lbn(0); count as usize],
            pieces: Vec::new(),
        })
    }

    pub fn layout(&self) -> &MirrorLayout {
        &self.layout
    }
    pub fn members(&self) -> &[D] {
        self.io.members.members()
    }
    pub fn stats(&self) -> Vec<MemberStats> {
        self.io.stats()
    }
    /// Host CPU time spent on device I/Os so far.
    pub fn host_busy(&self) -> Nanoseconds {
        self.io.host_busy()
    }
    pub fn failed_members(&self) -> Vec<MemberIndex> {
        (0..self.failed.len() as u32)
            .filter(|&m| self.failed[m as usize])
            .map(MemberIndex)
            .collect()
    }

    /// The copy to read `lbn` from, among live copies not yet tried.
    fn choose(&self, lbn: Lbn, tried: u32) -> Option<Replica> {
        let usable = self
            .layout
            .locate(lbn)
            .filter(|r| !self.failed[r.member.index()] && tried & (1 << r.copy) == 0);
        match self.balance {
            ReadBalance::ShortestQueue => {
                usable.min_by_key(|r| (self.io.members.outstanding_at(r.member), r.copy))
            }
            ReadBalance::NearestHead => {
                usable.min_by_key(|r| (self.head[r.member.index()].0.abs_diff(r.lbn.0), r.copy))
            }
        }
    }

    fn live_copies(&self, lbn: Lbn) -> usize {
        self.layout
            .locate(lbn)
            .filter(|r| !self.failed[r.member.index()])
            .count()
    }

    fn send(&mut self, parent: ParentId, member: MemberIndex, issue: Issue, tag: Tag) {
        self.head[member.index()] = issue.lbn.offset(issue.sectors);
        // Children were counted before the parent was opened.
        let _ = self.io.send(parent, member, issue, tag);
    }

    /// Send a read of `sectors` from volume `lbn` to a copy not in `tried`; false
    /// when no live copy is left.
    fn read_piece(&mut self, parent: ParentId, lbn: Lbn, sectors: Sectors, tried: u32) -> bool {
        let Some(replica) = self.choose(lbn, tried) else {
            return false;
        };
        let issue = Issue::new(Operation::Read, replica.lbn, sectors);
        let tag = Tag {
            volume_lbn: lbn,
            sectors,
            tried: tried | 1 << replica.copy,
        };
        self.send(parent, replica.member, issue, tag);
        true
    }

    fn issue_request(&mut self, parent: ParentId, request: BlockRequest) {
        let mut lost = false;
        let mut pieces = std::mem::take(&mut self.pieces);
        match request.operation {
            Operation::Flush => {
                for member in 0..self.failed.len() as u32 {
                    if !self.failed[member as usize] {
                        let flush = Issue::new(Operation::Flush, Lbn(0), Sectors(0));
                        self.send(
                            parent,
                            MemberIndex(member),
                            flush,
                            self.tag(Lbn(0), Sectors(0)),
                        );
                    }
                }
            }
            Operation::Read => {
                self.layout
                    .split_copy_into(request.lbn, request.sectors, 0, &mut pieces);
                for piece in &pieces {
                    let lbn = request.lbn.offset(piece.offset);
                    lost |= !self.read_piece(parent, lbn, piece.extent.sectors, 0);
                }
            }
            Operation::Write | Operation::Trim => {
                for copy in 0..self.layout.copies() {
                    self.layout
                        .split_copy_into(request.lbn, request.sectors, copy, &mut pieces);
                    for piece in &pieces {
                        let lbn = request.lbn.offset(piece.offset);
                        lost |= copy == 0 && self.live_copies(lbn) == 0;
                        if self.failed[piece.extent.member.index()] {
                            continue;
                        }
                        let issue = Issue {
                            operation: request.operation,
                            lbn: piece.extent.lbn,
                            sectors: piece.extent.sectors,
                            force_unit_access: request.force_unit_access,
                        };
                        self.send(
                            parent,
                            piece.extent.member,
                            issue,
                            self.tag(lbn, piece.extent.sectors),
                        );
                    }
                }
            }
        }
        self.pieces = pieces;
        self.io.members.state_mut(parent).0 = lost;
        self.settle_status(parent);
        self.io.members.settle(parent);
    }

    fn tag(&self, volume_lbn: Lbn, sectors: Sectors) -> Tag {
        Tag {
            volume_lbn,
            sectors,
            tried: 0,
        }
    }

    /// The parent's status is the layer's verdict, not the last child's.
    fn settle_status(&mut self, parent: ParentId) {
        let lost = self.io.members.state(parent).0;
        let status = if lost {
            Status::DeviceFailed
        } else {
            Status::Ok
        };
        self.io.members.set_status(parent, status);
    }

    fn child_done(
        &mut self,
        parent: ParentId,
        member: MemberIndex,
        tag: Tag,
        completion: Completion,
    ) {
        if !completion.status.is_ok() {
            if completion.status == Status::DeviceFailed {
                self.failed[member.index()] = true;
            }
            let retried = match completion.request.operation {
                Operation::Read => self.read_piece(parent, tag.volume_lbn, tag.sectors, tag.tried),
                // A write survives while another copy of its piece lives.
                Operation::Write | Operation::Trim => self.live_copies(tag.volume_lbn) > 0,
                Operation::Flush => true,
            };
            if !retried {
                self.io.members.state_mut(parent).0 = true;
            }
        }
        self.settle_status(parent);
    }
}

impl<D: BlockDevice> BlockDevice for Mirrored<D> {
    fn capacity(&self) -> Sectors {
        self.layout.capacity()
    }
    fn submit(&mut self, request: BlockRequest) -> Result<(), DeviceError> {
        request.check(self.capacity())?;
        // At most one child per member per chunk touched, plus retries later.
        let chunks = match &self.layout {
            MirrorLayout::Mirror(_) => 1,
            MirrorLayout::Near(m) => request.sectors.0 / m.chunk().0 + 2,
        };
        let worst = chunks * u64::from(self.io.count());
        let parent = self.io.open(request, 2 * worst)?;
        self.issue_request(parent, request);
        Ok(())
    }
    fn next_event_time(&self) -> Option<Nanoseconds> {
        self.io.members.next_event_time()
    }
    fn advance(&mut self, now: Nanoseconds, completed: &mut Vec<Completion>) {
        while let Some(done) = self.io.next_child(now) {
            self.child_done(done.parent, done.member, done.tag, done.completion);
        }
        self.io.members.drain(completed);
    }
    fn control(
        &mut self,
        now: Nanoseconds,
        path: &[MemberIndex],
        command: Control,
    ) -> Result<(), ControlError> {
        match route_control(&mut self.io, "a mirrored volume", now, path, command)? {
            Some(MemberChange::Failed(member)) => self.failed[member.index()] = true,
            Some(MemberChange::Replaced(member)) => self.failed[member.index()] = false,
            None => {}
        }
        Ok(())
    }
}
