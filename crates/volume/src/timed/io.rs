//! The path from a timed volume to its members: the shared member bookkeeping
//! ([`Members`]) plus what every level adds on the way down — the host CPU cost of
//! each device I/O, the member queues' plug (Linux 2.6 holds requests a few
//! milliseconds to merge adjacent ones; optionally aware of track boundaries, as
//! the validation paper made it), and per-member statistics (requests, sectors,
//! requests that cover exactly one whole track).
//!
//! **Plug** (per member): a request that cannot merge into a queued one waits in
//! the member's plug queue; the queue is sent (unplugged) when its first request
//! has waited `delay`, when it holds `threshold` requests, or — track-aware only —
//! at once for every queued request that ends on a track boundary. A track-aware
//! plug never merges across a track boundary and cuts a piece that crosses one.
//! Merged requests go down as one member request serving each parent's part.
//! Flushes are never plugged: they unplug their member first (earlier writes go
//! down before them).

use super::host::{HostCost, HostCpu};
use spinstack_sim::device::{BlockDevice, MemberIndex};
use spinstack_sim::driver::Issue;
use spinstack_sim::members::MemberEvent;
use spinstack_sim::members::{MemberCounters, MemberLimits, Members, MembersError, ParentId};
use spinstack_sim::request::{BlockRequest, Completion, DeviceError, Operation};
use spinstack_sim::units::{Lbn, Nanoseconds, Sectors};
use spinstack_trackmap::TrackMap;

/// How a member queue holds requests back to merge them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct PlugPolicy {
    /// How long the first queued request may wait (Linux 2.6: 3 ms).
    pub delay: Nanoseconds,
    /// Queued requests that unplug at once (Linux 2.6 `unplug_thresh`: 4).
    pub threshold: u32,
    /// Largest merged request.
    pub max_request: Sectors,
    /// Respect track boundaries (the validation paper's change).
    pub track_aware: bool,
}

impl PlugPolicy {
    /// Linux 2.6's plug: 3 ms, 4 requests, 1 MiB requests, blind to tracks.
    pub fn linux26() -> PlugPolicy {
        PlugPolicy {
            delay: Nanoseconds::from_ms(3),
            threshold: 4,
            max_request: Sectors(2048),
            track_aware: false,
        }
    }
}

/// What one member was sent and how long it took.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct MemberStats {
    pub requests: u64,
    pub sectors: u64,
    /// Member requests that cover exactly one whole track of the member.
    pub whole_track_requests: u64,
    /// Member requests that cross a track boundary of the member.
    pub track_crossing_requests: u64,
    /// Requests the member completed, and the sum of their response times there.
    pub completed: u64,
    pub service: Nanoseconds,
    /// Time the member had requests outstanding (its head time).
    pub busy: Nanoseconds,
}

/// A child request's completion, for the level to handle.
#[derive(Clone, Copy, Debug)]
pub struct ChildDone<T> {
    pub parent: ParentId,
    pub member: MemberIndex,
    pub tag: T,
    pub completion: Completion,
}

/// Wake-up tokens at or above this are the plug's (member index below it);
/// tokens below it are the level's own (see [`MemberIo::next_event`]).
const PLUG_TOKEN: u64 = 1 << 62;

/// What [`MemberIo::next_event`] hands the level: a child's completion, or a
/// wake-up the level set for itself (a token below `1 << 62`).
#[derive(Clone, Copy, Debug)]
pub enum IoEvent<T> {
    Child(ChildDone<T>),
    Wake(u64),
}

/// A request waiting in a plug queue.
#[derive(Clone, Debug)]
struct Plugged<T> {
    issue: Issue,
    parts: Vec<(ParentId, T)>,
}

impl<T> Plugged<T> {
    fn end(&self) -> Lbn {
        self.issue.lbn.offset(self.issue.sectors)
    }
}

/// See the module documentation.
pub struct MemberIo<D: BlockDevice, T: Copy, P> {
    pub members: Members<D, T, P>,
    tracks: Vec<Option<TrackMap>>,
    whole_tracks: Vec<u64>,
    crossings: Vec<u64>,
    cpu: HostCpu,
    plug: Option<PlugPolicy>,
    queues: Vec<Vec<Plugged<T>>>,
    /// When each member's plug queue got its first request (None: empty).
    queued_since: Vec<Option<Nanoseconds>>,
}

impl<D: BlockDevice, T: Copy, P: Default> MemberIo<D, T, P> {
    /// `tracks[k]`: member k's track map, when known (for whole-track statistics
    /// and a track-aware plug).
    pub fn new(
        members: Vec<D>,
        tracks: Vec<Option<TrackMap>>,
        host: HostCost,
        plug: Option<PlugPolicy>,
        limits: MemberLimits,
    ) -> MemberIo<D, T, P> {
        let count = members.len();
        assert_eq!(tracks.len(), count, "one track map slot per member");
        MemberIo {
            members: Members::new(members, limits),
            tracks,
            whole_tracks: vec![0; count],
            crossings: vec![0; count],
            cpu: HostCpu::new(host),
            plug,
            queues: (0..count).map(|_| Vec::new()).collect(),
            queued_since: vec![None; count],
        }
    }

    pub fn count(&self) -> u32 {
        self.members.count()
    }

    pub fn track_map(&self, member: MemberIndex) -> Option<&TrackMap> {
        self.tracks.get(member.index()).and_then(Option::as_ref)
    }

    /// Per-member statistics so far.
    pub fn stats(&self) -> Vec<MemberStats> {
        self.members
            .counters()
            .iter()
            .zip(self.whole_tracks.iter().zip(&self.crossings))
            .map(|(counters, (&whole, &crossing))| {
                let MemberCounters {
                    requests,
                    sectors,
                    completed,
                    service,
                    busy,
                } = *counters;
                MemberStats {
                    requests,
                    sectors,
                    whole_track_requests: whole,
                    track_crossing_requests: crossing,
                    completed,
                    service,
                    busy,
                }
            })
            .collect()
    }

    /// Host CPU time spent on device I/Os so far.
    pub fn host_busy(&self) -> Nanoseconds {
        self.cpu.busy()
    }

    /// Accept `request` as a parent if the tables have room for it and for
    /// `children` more member requests; a level's `submit` refuses with
    /// `QueueFull` otherwise (before anything is sent, so nothing is half done).
    pub fn open(&mut self, request: BlockRequest, children: u64) -> Result<ParentId, DeviceError> {
        let limits = self.members.limits();
        if children > u64::from(limits.children) {
            return Err(DeviceError::TooLarge {
                id: request.id.0,
                sectors: request.sectors.0,
                children,
                limit: limits.children,
            });
        }
        let full = DeviceError::QueueFull {
            depth: limits.parents as usize,
        };
        if !self.members.has_room() || u64::from(self.members.children_available()) < children {
            return Err(full);
        }
        self.members.open(request).map_err(|_| full)
    }

    /// The next child completion due by `now`, the plug's wake-ups handled on the
    /// way (sending what a plug held cannot overflow the tables: its children were
    /// counted when their parents were opened).
    pub fn next_child(&mut self, now: Nanoseconds) -> Option<ChildDone<T>> {
        match self.next_event(now)? {
            IoEvent::Child(done) => Some(done),
            IoEvent::Wake(token) => {
                debug_assert!(false, "wake-up {token} of a level that sets none");
                self.next_child(now)
            }
        }
    }

    /// The next child completion or level wake-up due by `now`, the plug's
    /// wake-ups handled on the way (for a level with timers of its own).
    pub fn next_event(&mut self, now: Nanoseconds) -> Option<IoEvent<T>> {
        loop {
            match self.members.poll(now)? {
                MemberEvent::Wake { token, .. } => match self.take_wake(token) {
                    Ok(true) => {}
                    Ok(false) => return Some(IoEvent::Wake(token)),
                    Err(error) => debug_assert!(false, "a plug's member refused: {error}"),
                },
                MemberEvent::Child {
                    parent,
                    member,
                    tag,
                    completion,
                    ..
                } => {
                    return Some(IoEvent::Child(ChildDone {
                        parent,
                        member,
                        tag,
                        completion,
                    }))
                }
            }
        }
    }

    /// Send `issue` for `parent` to `member` (through the plug, if any).
    pub fn send(
        &mut self,
        parent: ParentId,
        member: MemberIndex,
        issue: Issue,
        tag: T,
    ) -> Result<(), MembersError> {
        let Some(policy) = self.plug else {
            return self.dispatch(member, issue, &[(parent, tag)]);
        };
        if issue.operation == Operation::Flush {
            self.unplug(member)?;
            return self.dispatch(member, issue, &[(parent, tag)]);
        }
        let mut rest = issue;
        while rest.sectors.0 > 0 {
            let take = self.plug_piece_sectors(member, rest, policy);
            let piece = Issue {
                sectors: take,
                ..rest
            };
            self.plug_piece(parent, member, piece, tag, policy)?;
            rest.lbn = rest.lbn.offset(take);
            rest.sectors = Sectors(rest.sectors.0 - take.0);
        }
        Ok(())
    }

    /// How much of `issue` goes into the plug as one piece: all of it, or up to
    /// the next track boundary for a track-aware plug.
    fn plug_piece_sectors(&self, member: MemberIndex, issue: Issue, policy: PlugPolicy) -> Sectors {
        let boundary = policy
            .track_aware
            .then(|| self.track_map(member)?.next_boundary_after(issue.lbn))
            .flatten();
        match boundary {
            Some(next) if next < issue.lbn.offset(issue.sectors) => next.sectors_since(issue.lbn),
            _ => issue.sectors,
        }
    }

    fn plug_piece(
        &mut self,
        parent: ParentId,
        member: MemberIndex,
        piece: Issue,
        tag: T,
        policy: PlugPolicy,
    ) -> Result<(), MembersError> {
        self.members.hold(parent);
        let queue = &mut self.queues[member.index()];
        let fits = |q: &Plugged<T>| {
            q.issue.operation == piece.operation
                && q.issue.force_unit_access == piece.force_unit_access
                && q.issue.sectors.0 + piece.sectors.0 <= policy.max_request.0
        };
        if let Some(q) = queue.iter_mut().find(|q| fits(q) && q.end() == piece.lbn) {
            q.issue.sectors = Sectors(q.issue.sectors.0 + piece.sectors.0);
            q.parts.push((parent, tag));
        } else if let Some(q) = queue
            .iter_mut()
            .find(|q| fits(q) && piece.lbn.offset(piece.sectors) == q.issue.lbn)
        {
            q.issue.lbn = piece.lbn;
            q.issue.sectors = Sectors(q.issue.sectors.0 + piece.sectors.0);
            q.parts.insert(0, (parent, tag));
        } else {
            if queue.is_empty() {
                let now = self.members.now();
                self.queued_since[member.index()] = Some(now);
                self.members
                    .wake_at(now + policy.delay, PLUG_TOKEN + u64::from(member.0));
            }
            queue.push(Plugged {
                issue: piece,
                parts: vec![(parent, tag)],
            });
        }
        if queue.len() >= policy.threshold as usize {
            return self.unplug(member);
        }
        if policy.track_aware {
            self.unplug_track_ends(member)?;
        }
        Ok(())
    }

    /// Send every queued request of `member` that ends on a track boundary.
    fn unplug_track_ends(&mut self, member: MemberIndex) -> Result<(), MembersError> {
        let Some(map) = self.tracks[member.index()].as_ref() else {
            return Ok(());
        };
        let ends_track = |q: &Plugged<T>| {
            map.track_containing(q.issue.lbn)
                .is_some_and(|track| track.end() == q.end())
        };
        let queue = std::mem::take(&mut self.queues[member.index()]);
        let (done, keep): (Vec<_>, Vec<_>) = queue.into_iter().partition(ends_track);
        if keep.is_empty() {
            self.queued_since[member.index()] = None;
        }
        self.queues[member.index()] = keep;
        for plugged in done {
            self.dispatch_plugged(member, plugged)?;
        }
        Ok(())
    }

    /// Send everything queued at `member`, lowest LBN first.
    pub fn unplug(&mut self, member: MemberIndex) -> Result<(), MembersError> {
        let mut queue = std::mem::take(&mut self.queues[member.index()]);
        self.queued_since[member.index()] = None;
        queue.sort_by_key(|q| q.issue.lbn);
        for plugged in queue {
            self.dispatch_plugged(member, plugged)?;
        }
        Ok(())
    }

    fn dispatch_plugged(
        &mut self,
        member: MemberIndex,
        plugged: Plugged<T>,
    ) -> Result<(), MembersError> {
        self.dispatch(member, plugged.issue, &plugged.parts)?;
        for &(parent, _) in &plugged.parts {
            self.members.release(parent);
        }
        Ok(())
    }

    /// A wake-up `poll` returned: true when it was the plug's (and is handled).
    pub fn take_wake(&mut self, token: u64) -> Result<bool, MembersError> {
        if token < PLUG_TOKEN {
            return Ok(false);
        }
        let member = MemberIndex((token - PLUG_TOKEN) as u32);
        let delay = self.plug.map_or(Nanoseconds::ZERO, |p| p.delay);
        // A wake-up set for an earlier queue (sent since by the threshold) may
        // find a younger queue: it waits out its own delay.
        // (the younger queue set a wake-up of its own when it started).
        if let Some(since) = self.queued_since[member.index()] {
            if since + delay <= self.members.now() {
                self.unplug(member)?;
            }
        }
        Ok(true)
    }

    /// Send one member request now, after its host cost.
    fn dispatch(
        &mut self,
        member: MemberIndex,
        issue: Issue,
        parts: &[(ParentId, T)],
    ) -> Result<(), MembersError> {
        if let Some(map) = self.tracks.get(member.index()).and_then(Option::as_ref) {
            if issue.operation != Operation::Flush {
                if map.whole_tracks(issue.lbn, issue.sectors) == Some(1) {
                    self.whole_tracks[member.index()] += 1;
                }
                let end = issue.lbn.offset(issue.sectors);
                if map.next_boundary_after(issue.lbn).is_some_and(|b| b < end) {
                    self.crossings[member.index()] += 1;
                }
            }
        }
        let at = self.cpu.run(self.members.now(), issue.sectors);
        self.members.issue_merged_at(at, member, issue, parts)
    }
}
