//! Member bookkeeping for any layer over member devices (RAID levels, a buffer,
//! a replica's volumes): the one place that splits a parent request into child
//! requests on members and puts the answers back together.
//!
//! **What it keeps.** The members run in an [`Engine`] of their own, so a layer
//! over thousands of drives finds its next event in O(log n). A parent table (a
//! slab, bounded) holds each request the layer accepted, with a per-parent state
//! `P` the layer owns and a count of children outstanding; a child table maps each
//! child request id back to its parent and a layer-chosen tag `T`. A member that
//! answers `QueueFull` gets the child in a per-member FIFO, sent on as soon as that
//! member completes something. Delayed work (a child issued after a host cost, a
//! parent completed after a memory copy, a layer's own wake-up such as a plug
//! timer) waits in one time-ordered queue.
//!
//! **How a layer uses it.** On `submit` it calls [`Members::open`] and issues
//! children ([`Members::issue`], [`Members::issue_merged_at`]) or completes the parent
//! itself ([`Members::complete_at`]). On `advance(now)` it calls [`Members::poll`]
//! until it returns `None`, handling each [`MemberEvent`] (it may issue more
//! children for the same parent, e.g. the writes after a read-modify-write's
//! reads), then [`Members::drain`] for the parents that finished.
//!
//! **Invariants (asserted).** A parent completes exactly once: when its last child
//! has completed and the layer issued no more in response (checked at the next
//! `poll` or `drain`, so a handler can always follow up), or when the layer
//! completes it explicitly. Its status is the first failed child's unless the layer
//! sets it. Its completion time is its last child's (or the explicit time), never
//! before its arrival or its last hold's release. Every table and queue has a fixed bound; exceeding one is
//! an error the layer reports as `QueueFull`, never growth.

use crate::device::{BlockDevice, Control, DeviceError, MemberIndex};
use crate::driver::Issue;
use crate::engine::{DeviceCompletion, DeviceId, Engine, EngineError, EngineOptions};
use crate::request::{BlockRequest, Completion, RequestId, Status};
use crate::units::{Nanoseconds, Sectors};
use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

/// A parent request's slot in the table.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ParentId(pub u32);

/// Bounds of the tables and queues.
#[derive(Clone, Copy, Debug)]
pub struct MemberLimits {
    /// Parent requests open at once (the layer's queue depth).
    pub parents: u32,
    /// Child requests outstanding or waiting at once, over all members.
    pub children: u32,
}

impl Default for MemberLimits {
    fn default() -> Self {
        MemberLimits {
            parents: 1024,
            children: 16 * 1024,
        }
    }
}

/// Something that happened below a layer, for the layer to handle.
#[derive(Clone, Copy, Debug)]
pub enum MemberEvent<T> {
    /// A child completed. `parent_outstanding` counts the parent's other children
    /// still outstanding.
    Child {
        parent: ParentId,
        member: MemberIndex,
        tag: T,
        completion: Completion,
        parent_outstanding: u32,
    },
    /// A wake-up the layer set with [`Members::wake_at`] is due.
    Wake { token: u64, at: Nanoseconds },
}

/// Requests and sectors sent to one member, and the time they took there.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct MemberCounters {
    pub requests: u64,
    pub sectors: u64,
    /// Requests the member has completed.
    pub completed: u64,
    /// Sum of their response times at the member (arrival there to completion).
    pub service: Nanoseconds,
    /// Time the member had at least one request outstanding: its head time, also
    /// when requests queue there.
    pub busy: Nanoseconds,
}

#[derive(Clone, Debug)]
struct Parent<P> {
    request: BlockRequest,
    outstanding: u32,
    status: Status,
    /// When the last child completed (the parent's completion time by default).
    last_done: Nanoseconds,
    open: bool,
    /// Holds the layer put on it (pieces waiting in a plug queue, a stripe lock,
    /// an explicit completion pending): no automatic completion while any remain.
    holds: u32,
    /// The layer completes it itself (`complete_at`).
    explicit: bool,
    state: P,
}

impl<P> Parent<P> {
    /// Whether the slot can be reused: completed, no child in flight, no
    /// explicit completion pending.
    fn is_free(&self) -> bool {
        !self.open && self.outstanding == 0 && self.holds == 0 && !self.explicit
    }
}

/// A child request: the member it went to and the parent part(s) it serves (more
/// than one when the layer merged adjacent requests of several parents).
#[derive(Clone, Copy, Debug)]
struct Child<T> {
    member: MemberIndex,
    parent: ParentId,
    tag: T,
    /// The next part in `parts`, or `NO_PART`.
    more: u32,
}

/// A further parent part of a merged child.
#[derive(Clone, Copy, Debug)]
struct Part<T> {
    parent: ParentId,
    tag: T,
    more: u32,
}

const NO_PART: u32 = u32::MAX;

/// Work that waits for a time.
#[derive(Clone, Copy, Debug)]
enum Delayed {
    /// Send child `slot` (already in the table) to its member.
    Issue {
        slot: u32,
        issue: Issue,
    },
    Complete {
        parent: ParentId,
    },
    Wake {
        token: u64,
    },
}

/// See the module documentation.
pub struct Members<D: BlockDevice, T: Copy, P = ()> {
    engine: Engine<D>,
    limits: MemberLimits,
    parents: Vec<Parent<P>>,
    free_parents: Vec<u32>,
    children: Vec<Option<Child<T>>>,
    free_children: Vec<u32>,
    parts: Vec<Part<T>>,
    free_parts: Vec<u32>,
    /// Events of merged children's further parts, handed out before anything else.
    events: VecDeque<MemberEvent<T>>,
    waiting: Vec<VecDeque<BlockRequest>>,
    delayed: BinaryHeap<Reverse<(Nanoseconds, u64, DelayedKey)>>,
    delayed_work: Vec<Option<Delayed>>,
    free_delayed: Vec<u32>,
    next_delay_order: u64,
    /// Child completions taken from the engine (filled by the engine directly, no
    /// copy); those before `arrived_next` are handled.
    arrived: Vec<DeviceCompletion>,
    arrived_next: usize,
    /// Parents whose outstanding count reached zero: checked at the next poll.
    maybe_done: Vec<ParentId>,
    /// Parents completed, in completion order, for `drain`.
    finished: VecDeque<Completion>,
    counters: Vec<MemberCounters>,
    /// Per member: since when it has had requests outstanding (None: idle).
    busy_since: Vec<Option<Nanoseconds>>,
}

/// Index of delayed work in `delayed_work` (the heap holds only plain data).
type DelayedKey = u32;

/// Why a layer could not accept a request or issue a child.
#[derive(Clone, Debug, thiserror::Error, PartialEq, Eq)]
pub enum MembersError {
    #[error("the layer already holds {limit} requests")]
    ParentsFull { limit: u32 },
    #[error("the layer already has {limit} member requests outstanding or waiting")]
    ChildrenFull { limit: u32 },
    #[error("{member} does not exist (the layer has {members})")]
    NoSuchMember { member: MemberIndex, members: u32 },
    #[error("{member} refused a request: {error}")]
    Refused {
        member: MemberIndex,
        error: DeviceError,
    },
}

impl<D: BlockDevice, T: Copy, P: Default> Members<D, T, P> {
    pub fn new(members: Vec<D>, limits: MemberLimits) -> Members<D, T, P> {
        let count = members.len();
        let mut engine = Engine::new(EngineOptions {
            max_outstanding_per_device: limits.children,
        });
        for member in members {
            engine.add_device(member);
        }
        Members {
            engine,
            limits,
            parents: Vec::new(),
            free_parents: Vec::new(),
            children: Vec::new(),
            free_children: Vec::new(),
            parts: Vec::new(),
            free_parts: Vec::new(),
            events: VecDeque::new(),
            waiting: (0..count).map(|_| VecDeque::new()).collect(),
            delayed: BinaryHeap::new(),
            delayed_work: Vec::new(),
            free_delayed: Vec::new(),
            next_delay_order: 0,
            arrived: Vec::new(),
            arrived_next: 0,
            maybe_done: Vec::new(),
            finished: VecDeque::new(),
            counters: vec![MemberCounters::default(); count],
            busy_since: vec![None; count],
        }
    }

    pub fn count(&self) -> u32 {
        self.engine.device_count() as u32
    }

    pub fn members(&self) -> &[D] {
        self.engine.devices()
    }

    /// Requests and sectors sent to each member so far.
    pub fn counters(&self) -> &[MemberCounters] {
        &self.counters
    }

    /// The smallest member capacity.
    pub fn smallest_capacity(&self) -> Sectors {
        self.members()
            .iter()
            .map(|m| m.capacity())
            .min()
            .unwrap_or(Sectors(0))
    }

    pub fn limits(&self) -> MemberLimits {
        self.limits
    }

    /// Children outstanding or waiting at `member`.
    pub fn outstanding_at(&self, member: MemberIndex) -> u32 {
        self.engine.outstanding(DeviceId(member.0)) + self.waiting[member.index()].len() as u32
    }

    /// The per-parent state the layer keeps.
    pub fn state(&self, parent: ParentId) -> &P {
        &self.parents[parent.0 as usize].state
    }
    pub fn state_mut(&mut self, parent: ParentId) -> &mut P {
        &mut self.parents[parent.0 as usize].state
    }
    pub fn request(&self, parent: ParentId) -> BlockRequest {
        self.parents[parent.0 as usize].request
    }

    /// Bring the members' clock to `now` (a layer does this before acting on a
    /// request that arrived at `now`). Completions due by then wait in order for
    /// the next `poll`.
    pub fn catch_up(&mut self, now: Nanoseconds) {
        if now <= self.engine.now() {
            return;
        }
        self.engine.run_until(now, &mut self.arrived);
    }

    /// Accept `request` as a parent (its arrival is now).
    pub fn open(&mut self, request: BlockRequest) -> Result<ParentId, MembersError> {
        self.catch_up(request.arrival);
        let parent = Parent {
            request,
            outstanding: 0,
            status: Status::Ok,
            last_done: request.arrival,
            open: true,
            holds: 0,
            explicit: false,
            state: P::default(),
        };
        let slot = match self.free_parents.pop() {
            Some(slot) => {
                self.parents[slot as usize] = parent;
                slot
            }
            None if (self.parents.len() as u32) < self.limits.parents => {
                self.parents.push(parent);
                self.parents.len() as u32 - 1
            }
            None => {
                return Err(MembersError::ParentsFull {
                    limit: self.limits.parents,
                })
            }
        };
        Ok(ParentId(slot))
    }

    /// Child requests that can still be issued before the table is full.
    pub fn children_available(&self) -> u32 {
        self.limits.children - (self.children.len() - self.free_children.len()) as u32
    }

    /// Whether one more parent fits.
    pub fn has_room(&self) -> bool {
        !self.free_parents.is_empty() || (self.parents.len() as u32) < self.limits.parents
    }

    /// A child slot for `member` serving `parts` (at least one).
    fn new_child(
        &mut self,
        member: MemberIndex,
        parts: &[(ParentId, T)],
    ) -> Result<u32, MembersError> {
        if member.0 >= self.count() {
            return Err(MembersError::NoSuchMember {
                member,
                members: self.count(),
            });
        }
        let full = MembersError::ChildrenFull {
            limit: self.limits.children,
        };
        let (&(parent, tag), rest) = parts.split_first().ok_or(full.clone())?;
        let slot = match self.free_children.pop() {
            Some(slot) => slot,
            None if (self.children.len() as u32) < self.limits.children => {
                self.children.push(None);
                self.children.len() as u32 - 1
            }
            None => return Err(full),
        };
        let mut more = NO_PART;
        for &(parent, tag) in rest.iter().rev() {
            let part = Part { parent, tag, more };
            more = match self.free_parts.pop() {
                Some(index) => {
                    self.parts[index as usize] = part;
                    index
                }
                None => {
                    self.parts.push(part);
                    self.parts.len() as u32 - 1
                }
            };
        }
        self.children[slot as usize] = Some(Child {
            member,
            parent,
            tag,
            more,
        });
        for &(parent, _) in parts {
            self.parents[parent.0 as usize].outstanding += 1;
        }
        Ok(slot)
    }

    /// Issue a child of `parent` to `member` now.
    pub fn issue(
        &mut self,
        parent: ParentId,
        member: MemberIndex,
        issue: Issue,
        tag: T,
    ) -> Result<(), MembersError> {
        self.issue_merged(member, issue, &[(parent, tag)])
    }

    /// Issue one member request that serves several parents' parts at once (the
    /// layer merged adjacent requests, as an elevator does): each part gets its own
    /// `MemberEvent::Child` when it completes.
    pub fn issue_merged(
        &mut self,
        member: MemberIndex,
        issue: Issue,
        parts: &[(ParentId, T)],
    ) -> Result<(), MembersError> {
        let slot = self.new_child(member, parts)?;
        self.send(slot, issue)
    }

    /// `issue_merged` at `at` (not before now): after a host-side cost, or when a
    /// plug lets it go.
    pub fn issue_merged_at(
        &mut self,
        at: Nanoseconds,
        member: MemberIndex,
        issue: Issue,
        parts: &[(ParentId, T)],
    ) -> Result<(), MembersError> {
        let slot = self.new_child(member, parts)?;
        if at <= self.engine.now() {
            return self.send(slot, issue);
        }
        self.delay(at, Delayed::Issue { slot, issue });
        Ok(())
    }

    /// The members' clock (the time of the last event served below the layer).
    pub fn now(&self) -> Nanoseconds {
        self.engine.now()
    }

    /// Complete `parent` at `at` (not before now) with its status so far, whatever
    /// children it has (a buffer hit, a request the layer answers itself).
    pub fn complete_at(&mut self, at: Nanoseconds, parent: ParentId) {
        self.parents[parent.0 as usize].explicit = true;
        self.delay(at.max(self.engine.now()), Delayed::Complete { parent });
    }

    /// Set the parent's status (a layer that recovered from a child's failure sets
    /// `Ok`; one that knows better sets the failure).
    pub fn set_status(&mut self, parent: ParentId, status: Status) {
        self.parents[parent.0 as usize].status = status;
    }

    /// The layer's own wake-up: `poll` returns `MemberEvent::Wake` at `at`.
    pub fn wake_at(&mut self, at: Nanoseconds, token: u64) {
        self.delay(at.max(self.engine.now()), Delayed::Wake { token });
    }

    /// Keep `parent` open with no children outstanding (a piece waits for a plug
    /// timer, a stripe lock, ...): holds count, and it completes automatically only
    /// once every hold is released.
    pub fn hold(&mut self, parent: ParentId) {
        self.parents[parent.0 as usize].holds += 1;
    }

    /// Release one hold: the parent completes when its children are done, and not
    /// before now (a parent held while another parent's children do its work has
    /// none of its own to date its completion).
    pub fn release(&mut self, parent: ParentId) {
        let now = self.engine.now();
        let slot = &mut self.parents[parent.0 as usize];
        assert!(slot.holds > 0, "release of {parent:?} without a hold");
        slot.holds -= 1;
        slot.last_done = slot.last_done.max(now);
        self.settle(parent);
    }

    /// Complete `parent` now if it has no children outstanding (a layer calls
    /// this after issuing a request's children, in case there were none).
    pub fn settle(&mut self, parent: ParentId) {
        let slot = &self.parents[parent.0 as usize];
        if slot.outstanding == 0 && slot.holds == 0 {
            self.maybe_done.push(parent);
        }
    }

    fn delay(&mut self, at: Nanoseconds, work: Delayed) {
        let key = match self.free_delayed.pop() {
            Some(key) => {
                self.delayed_work[key as usize] = Some(work);
                key
            }
            None => {
                self.delayed_work.push(Some(work));
                self.delayed_work.len() as u32 - 1
            }
        };
        self.next_delay_order += 1;
        self.delayed.push(Reverse((at, self.next_delay_order, key)));
        let bound = (self.limits.parents + self.limits.children) as usize + 1024;
        assert!(self.delayed.len() <= bound, "delayed work bound");
    }

    /// Send child `slot` to its member now, or queue it behind the member's FIFO.
    fn send(&mut self, slot: u32, issue: Issue) -> Result<(), MembersError> {
        let child = self.children[slot as usize].expect("child slot in use");
        let request = BlockRequest {
            id: RequestId(u64::from(slot)),
            operation: issue.operation,
            lbn: issue.lbn,
            sectors: issue.sectors,
            arrival: self.engine.now(),
            force_unit_access: issue.force_unit_access,
        };
        let member = child.member;
        let since = &mut self.busy_since[member.index()];
        if since.is_none() {
            *since = Some(self.engine.now());
        }
        let counters = &mut self.counters[member.index()];
        counters.requests += 1;
        counters.sectors += issue.sectors.0;
        if !self.waiting[member.index()].is_empty() {
            self.waiting[member.index()].push_back(request);
            return Ok(());
        }
        self.submit_to_member(member, request)
    }

    fn submit_to_member(
        &mut self,
        member: MemberIndex,
        request: BlockRequest,
    ) -> Result<(), MembersError> {
        match self.engine.submit(DeviceId(member.0), request) {
            Ok(()) => Ok(()),
            Err(EngineError::Device {
                error: DeviceError::QueueFull { .. },
                ..
            })
            | Err(EngineError::TooManyOutstanding { .. }) => {
                self.waiting[member.index()].push_front(request);
                Ok(())
            }
            Err(EngineError::Device { error, .. }) => {
                // The layer computed a member request the member refuses (a bug in
                // its map): the parent fails rather than waiting forever.
                debug_assert!(false, "{member} refused {request:?}: {error}");
                let failed = Completion::new(request, self.engine.now(), Status::DeviceFailed);
                self.child_done(DeviceCompletion {
                    device: DeviceId(member.0),
                    completion: failed,
                });
                Err(MembersError::Refused { member, error })
            }
            Err(other) => panic!("member engine: {other}"),
        }
    }

    /// Send on what waits behind `member`'s full queue, oldest first.
    fn drain_waiting(&mut self, member: MemberIndex) {
        while let Some(mut request) = self.waiting[member.index()].pop_front() {
            request.arrival = self.engine.now();
            let before = self.waiting[member.index()].len();
            // A refusal has failed the child's parent already.
            let _ = self.submit_to_member(member, request);
            if self.waiting[member.index()].len() > before {
                return;
            }
        }
    }

    /// Send a control command to `member` (and on down `path`) at `now`.
    pub fn control(
        &mut self,
        now: Nanoseconds,
        member: MemberIndex,
        path: &[MemberIndex],
        command: Control,
    ) -> Result<(), crate::device::ControlError> {
        if member.0 >= self.count() {
            return Err(crate::device::ControlError::NoSuchMember {
                device: "this volume",
                member,
                members: self.count(),
            });
        }
        self.catch_up(now);
        match self.engine.control(DeviceId(member.0), path, command) {
            Ok(()) => Ok(()),
            Err(EngineError::Control { error, .. }) => Err(error),
            Err(other) => panic!("member engine: {other}"),
        }
    }
}

mod events;

#[cfg(test)]
mod tests;
