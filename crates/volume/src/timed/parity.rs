//! RAID-5 in simulated time over any [`ParityLayout`]: md's left-symmetric RAID-5,
//! the validation paper's track-aligned RAID-5 (stripes are the members' own
//! tracks) and the two alternatives it rejects, all with the same code.
//!
//! **Reads** follow the read plan ([`plan_read_into`]): the data pieces, plus —
//! when enabled — the parity of a stripe whose parity member is the only one not
//! read (fill-in: read and discarded, so every member's request stays whole) and
//! the unused tail of a unit read whole (so a whole-stripe read gives every member
//! its whole track). Member extents of one request that touch are merged before
//! they go down (md's stripe handling followed by the member queue's merging). With
//! one member failed the plan reconstructs from the others.
//!
//! **Writes** go stripe by stripe. A stripe is locked while one write works on it
//! (later writes to it wait in order, as md serialises a stripe_head). Each stripe
//! write follows the write plan ([`plan_write_into`]): a full-stripe write reads
//! nothing; otherwise read-modify-write or reconstruct-write, whichever reads fewer
//! member extents, skipping units the stripe cache holds.
//!
//! **Delayed stripes** (`delay_pre_reads`, md 2.6.16's `STRIPE_DELAYED`; see
//! [`delayed`] for md's rules and their sources): a write whose plan has pre-reads
//! does not read at once. It waits, holding its stripe, until the array's plug
//! lets it go — md plugs the array when a stripe is delayed and unplugs it 3 ms
//! later (the member queues' [`PlugPolicy`] delay; no plug policy, no delay), or
//! when something unplugs the volume — and then only while no earlier released
//! stripe is still pre-reading (md's `IO_THRESHOLD` of 1). A later write to the
//! same stripe that overlaps nothing the waiting one writes joins it (md's
//! `add_stripe_bio` onto the same stripe_head; a gap left between them is read and
//! written back): one stripe write serves both, and both parents complete when it
//! does. A stripe the joins make full writes at once, reading nothing. Its state
//! machine:
//!
//! | state | event | next |
//! |---|---|---|
//! | `Waiting` | the stripe's lock is free | planned: `Writing` (nothing to read), `Delayed` (a write with pre-reads, not yet released: on the delayed list, or waiting for md's stripe heads), or `Reading` |
//! | `Delayed` | a write to the stripe overlapping nothing it writes, none waiting behind it | joined; re-planned: `Writing` (nothing left to read: the stripe became full) or `Delayed` |
//! | `Delayed`, waiting for stripe heads | releases or joins free enough of md's stripe heads | re-planned: `Delayed` on the delayed list (or `Writing`) |
//! | `Delayed` | the array unplugs (timer, explicit unplug, or the released stripes' pre-reads done) with no released stripe still pre-reading | released, re-planned: `Reading` or `Writing` |
//! | `Reading` | last read done | `Writing` (the plan's data and parity writes); a released stripe stops counting as pre-reading |
//! | `Reading` | a read finds its member failed | re-planned degraded, `Reading` again |
//! | `Writing` | last write done | done: the cache learns the units, every parent joined loses its hold, the next `Waiting` write starts |
//!
//! The **stripe cache** holds up to `stripe_cache_stripes` stripes (LRU; md's
//! default is 256), remembering which members' units are known whole in memory
//! after being read or written; it is the `cached` answer the write plan asks.
//! **Trims** of whole stripes trim every unit; partial ones are written as zeros.
//! **Flush** goes to every live member.
//!
//! **Failure.** One failed member: reads reconstruct, writes keep parity right
//! (the plans know the failed member). A second failure: every request that needs
//! a lost unit completes `DeviceFailed`; none claims data it could not read.
//! `Replace` of a failed member (its rebuild done on the byte path) puts it back in
//! the plans; the model has no rebuild cursor, so a member is failed or whole.

use super::io::{IoEvent, MemberIo, MemberStats, PlugPolicy};
use super::{route_control, HostCost, MemberChange};
use crate::map::plan::{
    plan_read_into, plan_write_into, ReadOptions, ReadPlan, WriteChoice, WriteKind, WritePlan,
};
use crate::map::{
    stripe_segments, MemberExtent, MemberIndex, ParityLayout, StripeRange, StripeSegment,
};
use spinstack_sim::device::{BlockDevice, Control, ControlError, DeviceError};
use spinstack_sim::driver::Issue;
use spinstack_sim::members::{MemberLimits, ParentId};
use spinstack_sim::request::{BlockRequest, Completion, Operation, Status};
use spinstack_sim::units::{Lbn, Nanoseconds, Sectors};
use spinstack_trackmap::TrackMap;
use std::collections::{HashMap, VecDeque};

mod cache;
pub mod delayed;
mod write;
use cache::StripeCache;
use delayed::{ArrayPlug, Release};

/// The RAID-5 knobs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ParityOptions {
    pub fill_in_parity: bool,
    pub whole_units: bool,
    /// Cut member requests at the member's track boundaries (the validation
    /// paper's track-aware `make_request`); needs the members' track maps.
    pub split_at_tracks: bool,
    /// Stripes the cache holds; also md's `NR_STRIPES`, the stripe heads (one
    /// 4 KB page per member) delayed stripes may hold.
    pub stripe_cache_stripes: u32,
    pub write_choice: WriteChoice,
    /// Hold a stripe write that needs pre-reads until the array unplugs, so later
    /// writes can join it (md 2.6.16's delayed stripes; see [`delayed`]). Only
    /// with a plug policy: it gives the array plug's delay.
    pub delay_pre_reads: bool,
}

impl ParityOptions {
    /// md's RAID-5: no fill-in, 256 cached stripes, the cheaper write method,
    /// delayed stripes (md 2.6.16 delays every stripe that needs pre-reads).
    pub fn md() -> ParityOptions {
        ParityOptions {
            fill_in_parity: false,
            whole_units: false,
            split_at_tracks: false,
            stripe_cache_stripes: 256,
            write_choice: WriteChoice::Cheapest,
            delay_pre_reads: true,
        }
    }
    /// The validation paper's track-aligned RAID-5: fill-in parity reads,
    /// whole-track unit reads, member requests cut at track boundaries.
    pub fn track_aligned() -> ParityOptions {
        ParityOptions {
            fill_in_parity: true,
            whole_units: true,
            split_at_tracks: true,
            ..ParityOptions::md()
        }
    }
}

/// How the stripe writes went so far: which write plan each took and what
/// it read first (a full stripe reads nothing).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StripeWriteCounters {
    pub full_stripe: u64,
    pub read_modify_write: u64,
    pub reconstruct_write: u64,
    /// Degraded plans (a member failed).
    pub degraded: u64,
    /// Member sectors read for old data or parity before writing.
    pub pre_read_sectors: u64,
    /// Stripe writes that waited for the array to unplug before pre-reading
    /// (md's `STRIPE_DELAYED`), and writes that joined one waiting.
    pub delayed: u64,
    pub joined: u64,
    /// Waiting stripe writes that read nothing when they went (joins filled the
    /// stripe, or the stripe cache knew the rest by then).
    pub filled_while_delayed: u64,
    /// Time stripe writes spent delayed, from their first delay until they went;
    /// time released ones took from their release until their writes went.
    pub delayed_time: Nanoseconds,
    pub released_pre_read_time: Nanoseconds,
    /// Waiting stripe writes released by the array's unplug timer, by an unplug
    /// of the volume, and when the stripes released before them had pre-read.
    pub released_by_timer: u64,
    pub released_by_unplug: u64,
    pub released_after_pre_reads: u64,
    /// Times a delayed stripe write waited for md's stripe heads (taken by
    /// delayed stripes) before joining the delayed list; stripe writes whose
    /// pre-reads alone need more stripe heads than md has (pre-read at once).
    pub waited_for_heads: u64,
    pub too_large_to_delay: u64,
}

/// What a child request is for.
#[derive(Clone, Copy, Debug)]
enum Tag {
    /// A read of the parent's data; `attempt` counts re-plans after failures.
    Read {
        attempt: u8,
    },
    /// A read of old contents for stripe write `op`.
    OldData {
        op: u32,
    },
    /// A data or parity write of stripe write `op`.
    NewData {
        op: u32,
    },
    Flush,
}

/// The parent's own verdict (the layer decides, not the last child).
#[derive(Clone, Copy, Debug, Default)]
struct ParentState {
    status: Status,
    attempt: u8,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    Waiting,
    Delayed,
    Reading,
    Writing,
}

/// One stripe's share of a write or trim.
#[derive(Clone, Debug)]
struct StripeOp {
    /// The parent whose children this op's member requests are.
    parent: ParentId,
    /// Parents whose writes joined this one while it was delayed (each holds until
    /// the op is done; at most one per sector of the stripe, as joins never overlap).
    joined: Vec<ParentId>,
    stripe: u64,
    /// The stripe's data the op writes: all of `range`, less `gaps` (parts of it
    /// between joined writes, read and written back unchanged).
    range: StripeRange,
    gaps: Vec<StripeRange>,
    operation: Operation,
    force_unit_access: bool,
    phase: Phase,
    outstanding: u32,
    /// The member extents this op reads and writes (for the stripe cache): its
    /// plan's reads, then from `writes_from` its writes. The op keeps its own: the
    /// shared plan is another op's by the time this one's reads are done.
    touched: Vec<MemberExtent>,
    writes_from: usize,
    /// Released from the delayed list: may pre-read (md's `STRIPE_PREREAD_ACTIVE`);
    /// when.
    pre_read_allowed: bool,
    released_at: Nanoseconds,
    /// It has been delayed at least once; since when, until it goes.
    waited: bool,
    delayed_since: Option<Nanoseconds>,
}

/// See the module documentation.
pub struct Parity<D: BlockDevice, L: ParityLayout> {
    layout: L,
    io: MemberIo<D, Tag, ParentState>,
    options: ParityOptions,
    failed: Vec<MemberIndex>,
    ops: Vec<Option<StripeOp>>,
    free_ops: Vec<u32>,
    /// Per locked stripe: the ops waiting for it, in arrival order.
    locks: HashMap<u64, VecDeque<u32>>,
    cache: StripeCache,
    read_plan: ReadPlan,
    write_plan: WritePlan,
    extents: Vec<MemberExtent>,
    write_counters: StripeWriteCounters,
    /// The array's own plug and the delayed stripes it holds.
    array: ArrayPlug,
}

/// Most child requests one parity volume keeps track of (a large request on small
/// chunks fans out to many).
const CHILDREN_LIMIT: u32 = 1 << 20;

impl<D: BlockDevice, L: ParityLayout> Parity<D, L> {
    pub fn new(
        members: Vec<D>,
        tracks: Vec<Option<TrackMap>>,
        layout: L,
        options: ParityOptions,
        host: HostCost,
        plug: Option<PlugPolicy>,
    ) -> Parity<D, L> {
        assert_eq!(
            members.len() as u32,
            layout.members(),
            "one member per layout member"
        );
        let limits = MemberLimits {
            parents: 1024,
            children: CHILDREN_LIMIT,
        };
        Parity {
            cache: StripeCache::new(options.stripe_cache_stripes),
            layout,
            io: MemberIo::new(members, tracks, host, plug, limits),
            options,
            failed: Vec::new(),
            ops: Vec::new(),
            free_ops: Vec::new(),
            locks: HashMap::new(),
            read_plan: ReadPlan::default(),
            write_plan: WritePlan::default(),
            extents: Vec::new(),
            write_counters: StripeWriteCounters::default(),
            array: ArrayPlug::new(
                plug.filter(|_| options.delay_pre_reads)
                    .map(|policy| policy.delay),
                options.stripe_cache_stripes,
            ),
        }
    }

    pub fn layout(&self) -> &L {
        &self.layout
    }
    pub fn members(&self) -> &[D] {
        self.io.members.members()
    }
    pub fn stats(&self) -> Vec<MemberStats> {
        self.io.stats()
    }
    pub fn write_counters(&self) -> StripeWriteCounters {
        self.write_counters
    }
    pub fn failed_members(&self) -> &[MemberIndex] {
        &self.failed
    }
    pub fn host_busy(&self) -> Nanoseconds {
        self.io.host_busy()
    }

    /// The one failed member the plans work around (`None` healthy; with two or
    /// more the array has lost data and the plans are not asked).
    fn failed_one(&self) -> Option<MemberIndex> {
        self.failed.first().copied()
    }

    fn mark_failed(&mut self, member: MemberIndex) {
        if !self.failed.contains(&member) {
            self.failed.push(member);
        }
    }

    fn lost(&self) -> bool {
        self.failed.len() > 1
    }

    /// Send merged `extents` (sorted and coalesced) as `operation`, tagged `tag`.
    fn send_extents(&mut self, parent: ParentId, operation: Operation, fua: bool, tag: Tag) -> u32 {
        let mut extents = std::mem::take(&mut self.extents);
        coalesce(&mut extents);
        if self.options.split_at_tracks {
            extents = self.split_at_tracks(extents);
        }
        let mut sent = 0;
        for extent in &extents {
            if self.failed.contains(&extent.member) {
                continue;
            }
            let issue = Issue {
                operation,
                lbn: extent.lbn,
                sectors: extent.sectors,
                force_unit_access: fua,
            };
            // Children were counted before the parent was opened.
            let _ = self.io.send(parent, extent.member, issue, tag);
            sent += 1;
        }
        self.extents = extents;
        self.extents.clear();
        sent
    }

    fn issue_read(&mut self, parent: ParentId, request: BlockRequest, attempt: u8) {
        if self.lost() {
            self.io.members.state_mut(parent).status = Status::DeviceFailed;
            return;
        }
        if let Some(extent) = self.single_unit_read(request) {
            self.extents.push(extent);
            self.send_extents(parent, Operation::Read, false, Tag::Read { attempt });
            return;
        }
        let options = ReadOptions {
            fill_in_parity: self.options.fill_in_parity,
            whole_units: self.options.whole_units,
        };
        let failed = self.failed_one();
        plan_read_into(
            &self.layout,
            request.lbn,
            request.sectors,
            failed,
            options,
            &mut self.read_plan,
        )
        .expect("range checked at submit");
        self.extents.extend_from_slice(&self.read_plan.reads);
        self.send_extents(parent, Operation::Read, false, Tag::Read { attempt });
    }

    /// The one member extent of a read inside one data unit of a healthy array,
    /// when the read plan would add nothing to it (it is the common small read;
    /// the plan gives the same extent, found the long way).
    fn single_unit_read(&self, request: BlockRequest) -> Option<MemberExtent> {
        if !self.failed.is_empty() {
            return None;
        }
        let (member, lbn) = self.layout.locate(request.lbn).ok()?;
        let stripe = self.layout.stripe_of(request.lbn).ok()?;
        let unit = self.layout.unit(stripe, member);
        let inside = lbn.offset(request.sectors) <= unit.start.offset(unit.used);
        let whole = lbn == unit.start && request.sectors == unit.used;
        (inside && !(whole && self.options.whole_units)).then_some(MemberExtent {
            member,
            lbn,
            sectors: request.sectors,
        })
    }

    fn issue_flush(&mut self, parent: ParentId) {
        for member in 0..self.io.count() {
            self.extents.push(MemberExtent {
                member: MemberIndex(member),
                lbn: Lbn(0),
                sectors: Sectors(0),
            });
        }
        self.send_extents(parent, Operation::Flush, false, Tag::Flush);
    }

    fn child_done(
        &mut self,
        parent: ParentId,
        member: MemberIndex,
        tag: Tag,
        completion: Completion,
    ) {
        let failed_now = completion.status == Status::DeviceFailed;
        if failed_now {
            self.mark_failed(member);
        }
        match tag {
            Tag::Read { attempt } => {
                let state = *self.io.members.state(parent);
                if !completion.status.is_ok() && attempt == state.attempt {
                    // Re-plan the whole read around the failed member, once more.
                    let retry = attempt < 2 && failed_now && !self.lost();
                    if retry {
                        self.io.members.state_mut(parent).attempt += 1;
                        let request = self.io.members.request(parent);
                        self.issue_read(parent, request, attempt + 1);
                    } else {
                        let status = if self.lost() {
                            Status::DeviceFailed
                        } else {
                            completion.status
                        };
                        self.io.members.state_mut(parent).status = status;
                    }
                }
            }
            Tag::OldData { op } => {
                let entry = self.op(op);
                entry.outstanding -= 1;
                if entry.outstanding == 0 {
                    // Re-plan if a read found a member failed (the plan it made is
                    // void), else write.
                    if failed_now || !completion.status.is_ok() {
                        self.start_op(op);
                    } else {
                        self.send_writes(op);
                    }
                }
            }
            Tag::NewData { op } => {
                let entry = self.op(op);
                entry.outstanding -= 1;
                if entry.outstanding == 0 {
                    if self.lost() {
                        self.io.members.state_mut(parent).status = Status::DeviceFailed;
                    }
                    self.finish_op(op);
                }
            }
            Tag::Flush => {}
        }
        let status = self.io.members.state(parent).status;
        self.io.members.set_status(parent, status);
    }
}

impl<D: BlockDevice, L: ParityLayout> Parity<D, L> {
    /// Cut every extent at its member's track boundaries.
    fn split_at_tracks(&self, extents: Vec<MemberExtent>) -> Vec<MemberExtent> {
        let mut out = Vec::with_capacity(extents.len());
        for mut extent in extents {
            if let Some(map) = self.io.track_map(extent.member) {
                while let Some(next) = map.next_boundary_after(extent.lbn) {
                    if next >= extent.end() {
                        break;
                    }
                    let head = next.sectors_since(extent.lbn);
                    out.push(MemberExtent {
                        sectors: head,
                        ..extent
                    });
                    extent.lbn = next;
                    extent.sectors = Sectors(extent.sectors.0 - head.0);
                }
            }
            out.push(extent);
        }
        out
    }
}

/// Sort extents by member and LBN and merge those that touch (in place).
fn coalesce(extents: &mut Vec<MemberExtent>) {
    if extents.len() < 2 {
        return;
    }
    extents.sort_unstable_by_key(|e| (e.member, e.lbn));
    let mut kept = 0;
    for index in 1..extents.len() {
        let extent = extents[index];
        let last = &mut extents[kept];
        if last.member == extent.member && last.end() >= extent.lbn && extent.sectors.0 > 0 {
            let end = last.end().max(extent.end());
            last.sectors = end.sectors_since(last.lbn);
        } else {
            kept += 1;
            extents[kept] = extent;
        }
    }
    extents.truncate(kept + 1);
}

impl<D: BlockDevice, L: ParityLayout> BlockDevice for Parity<D, L> {
    fn capacity(&self) -> Sectors {
        self.layout.capacity()
    }
    fn submit(&mut self, request: BlockRequest) -> Result<(), DeviceError> {
        request.check(self.capacity())?;
        let stripes = match request.operation {
            Operation::Flush => 1,
            _ => {
                let first = self.layout.stripe_of(request.lbn).expect("range checked");
                let last = self
                    .layout
                    .stripe_of(Lbn(request.end().0 - 1))
                    .expect("range checked");
                last - first + 1
            }
        };
        let worst = stripes.saturating_mul(3 * u64::from(self.layout.members()));
        let parent = self.io.open(request, worst)?;
        match request.operation {
            Operation::Read => self.issue_read(parent, request, 0),
            Operation::Flush => self.issue_flush(parent),
            Operation::Write | Operation::Trim => self.issue_write(parent, request),
        }
        let status = self.io.members.state(parent).status;
        self.io.members.set_status(parent, status);
        self.io.members.settle(parent);
        Ok(())
    }
    fn next_event_time(&self) -> Option<Nanoseconds> {
        self.io.members.next_event_time()
    }
    fn advance(&mut self, now: Nanoseconds, completed: &mut Vec<Completion>) {
        while let Some(event) = self.io.next_event(now) {
            match event {
                IoEvent::Child(done) => {
                    self.child_done(done.parent, done.member, done.tag, done.completion)
                }
                IoEvent::Wake(token) => self.array_wake(token),
            }
        }
        self.io.members.drain(completed);
    }
    fn control(
        &mut self,
        now: Nanoseconds,
        path: &[MemberIndex],
        command: Control,
    ) -> Result<(), ControlError> {
        if path.is_empty() && command == Control::Unplug {
            // md's raid5_unplug_device: the delayed stripes go first, then the
            // member queues (route_control) send what they and the plugs hold.
            self.io.members.catch_up(now);
            self.unplug_array(Release::Unplug);
        }
        match route_control(&mut self.io, "a RAID-5 volume", now, path, command)? {
            Some(MemberChange::Failed(member)) => self.mark_failed(member),
            Some(MemberChange::Replaced(member)) => self.failed.retain(|&m| m != member),
            None => {}
        }
        Ok(())
    }
}
