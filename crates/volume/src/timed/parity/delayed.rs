//! md's delayed stripes: a stripe write that needs pre-reads waits for the array
//! to unplug, so the rest of a write-back pass can join it and spare the reads.
//!
//! **What md 2.6.16 does** (drivers/md/raid5.c; read in the 2.6.11 and 2.6.18-era
//! sources, which agree on all of this, and in the June 2006 patch that changed
//! `get_active_stripe`'s wait after 2.6.16):
//! - `handle_stripe` counts the blocks read-modify-write and reconstruct-write
//!   would read; when the cheaper needs any and the stripe is not
//!   `STRIPE_PREREAD_ACTIVE`, it issues no read but sets `STRIPE_DELAYED`;
//!   `__release_stripe` then puts the stripe on `delayed_list` and plugs the array's
//!   queue (`blk_plug_device`: the unplug timer starts if the queue was not
//!   plugged; `blk_queue_make_request` sets its delay to 3 ms);
//! - a later bio for the same stripe finds the same stripe_head in the stripe cache
//!   (`get_active_stripe`) and `add_stripe_bio` queues it there unless it overlaps
//!   a write already queued on that block; `handle_stripe` runs again, and a stripe
//!   whose blocks are now all overwritten needs no read and is written at once;
//! - `raid5_unplug_device` (the queue's unplug function: the 3 ms timer, or anyone
//!   running the queue, e.g. a process waiting for a page) removes the plug and,
//!   if it was plugged, `raid5_activate_delayed` moves every delayed stripe to the
//!   handle list marked `STRIPE_PREREAD_ACTIVE` — but only while fewer than
//!   `IO_THRESHOLD` (1) such stripes are active; then it unplugs the members
//!   (`unplug_slaves`);
//! - a stripe stops counting as pre-read-active when its writes are issued;
//!   `raid5d` then releases the delayed stripes if the queue is not plugged and
//!   none is pre-read-active, and unplugs the members;
//! - the unplug threshold (4 requests) never applies to md's queue: it counts
//!   requests in an elevator, and md takes bios directly (`make_request`);
//! - stripe_heads are one 4 KB page per member, `NR_STRIPES` = 256 of them; in
//!   2.6.16 a bio that finds none free waits (`get_active_stripe`, unplugging only
//!   the members) until a quarter are free again.
//!
//! **What the model does.** The same rules on whole stripes: a stripe write whose
//! plan reads is `Delayed` (the stripe stays locked) and plugs the array; a write
//! to its stripe (nothing waiting behind it) joins it and re-plans it; the
//! array unplugs at its plug policy's delay after it was plugged, or when the
//! volume is told to unplug, and releases every delayed stripe while none released
//! earlier is still pre-reading; the last of those writing releases the next batch
//! if the array is not plugged. A delayed stripe holds, of md's 256 stripe heads,
//! the page rows its pre-reads cover (rows a write covers whole need none); one
//! that finds too few free waits for them, still `Delayed` and open to joins,
//! first come first served, as md's submitter waits in `get_active_stripe`; it
//! joins the delayed list (and plugs the array) when releases free room.
//!
//! A join must not overlap what the waiting write writes (md's `add_stripe_bio`
//! refuses an overlap; the write then waits its turn). A piece apart from the
//! waiting one leaves a gap between them, which the model reads and writes back
//! unchanged, where md would read it only for parity; on a degraded array only
//! touching pieces join.
//!
//! Simplifications, stated: trims are never delayed (md 2.6.16 has none); md
//! writes the rows a write covers whole at once and delays only the rows that
//! need reads, where the model's whole-stripe write waits with its reads; only
//! delayed stripes count against the stripe heads (md's reading and writing
//! stripes hold theirs too), and a stripe write waiting for heads holds up only
//! itself and writes to its stripe, where md's submitter holds up everything it
//! submits after; a stripe write whose pre-reads alone need more rows than md has
//! pre-reads at once (counted: `too_large_to_delay`).
//!
//! **Bounds.** The delayed list holds at most `NR_STRIPES` stripe heads' worth of
//! stripes; the stripe writes waiting for heads are stripe ops, bounded as the
//! stripe locks' queues are (by the parent table); at most one array wake-up is
//! pending at a time.

use super::*;
use crate::map::data_runs;

/// md's `IO_THRESHOLD`: delayed stripes are released only while fewer stripes
/// than this are pre-reading.
pub const IO_THRESHOLD: u32 = 1;
/// Sectors of one stripe head's page per member (md's `STRIPE_SIZE`, 4 KB).
pub const STRIPE_HEAD_SECTORS: u64 = 8;
/// The array plug's wake-up token (a level token: below the member plug's).
const ARRAY_PLUG_TOKEN: u64 = 0;

/// Why the delayed stripes were released.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Release {
    /// The array's unplug timer.
    Timer,
    /// An unplug of the volume itself (`Control::Unplug`).
    Unplug,
    /// The stripes released before finished pre-reading (md's `raid5d`).
    PreReadsDone,
}

/// Join `new` to the op's range if it overlaps nothing the op writes: touching it,
/// inside one of its gaps, or (with `apart`) away from it, leaving a gap. True when
/// joined.
fn join_range(op: &mut StripeOp, new: StripeRange, apart: bool) -> bool {
    let range = op.range;
    let hull = |start: Sectors, end: Sectors| StripeRange {
        start,
        sectors: Sectors(end.0 - start.0),
    };
    if new.end() <= range.start {
        if new.end() < range.start && !apart {
            return false;
        }
        if new.end() < range.start {
            op.gaps.push(hull(new.end(), range.start));
        }
        op.range = hull(new.start, range.end());
        return true;
    }
    if new.start >= range.end() {
        if new.start > range.end() && !apart {
            return false;
        }
        if new.start > range.end() {
            op.gaps.push(hull(range.end(), new.start));
        }
        op.range = hull(range.start, new.end());
        return true;
    }
    let Some(at) = op
        .gaps
        .iter()
        .position(|g| g.start <= new.start && new.end() <= g.end())
    else {
        return false;
    };
    let gap = op.gaps.swap_remove(at);
    for part in [hull(gap.start, new.start), hull(new.end(), gap.end())] {
        if part.sectors.0 > 0 {
            op.gaps.push(part);
        }
    }
    true
}

/// A delayed op, by its stripe.
#[derive(Clone, Copy, Debug)]
struct Held {
    index: u32,
    /// Stripe heads its pre-reads need.
    heads: u64,
    /// On the delayed list (holding its heads), or waiting for heads.
    listed: bool,
}

/// The array's plug and the stripes it holds back.
pub(super) struct ArrayPlug {
    /// The plug's delay; `None`: no plug, nothing is delayed.
    delay: Option<Nanoseconds>,
    /// When the array was plugged (`None`: not plugged).
    since: Option<Nanoseconds>,
    /// A wake-up is pending (at most one: a later plug re-arms it when it fires).
    wake_pending: bool,
    /// Delayed ops holding stripe heads, in the order they were listed; those
    /// waiting for heads, in arrival order; both by stripe.
    list: VecDeque<u32>,
    waiting_for_heads: VecDeque<u32>,
    by_stripe: HashMap<u64, Held>,
    /// Stripe heads the listed ops hold, and md's total (`NR_STRIPES`).
    heads: u64,
    heads_limit: u64,
    /// Released ops still pre-reading (md's `preread_active_stripes`).
    pre_reading: u32,
}

impl ArrayPlug {
    pub(super) fn new(delay: Option<Nanoseconds>, stripe_heads: u32) -> ArrayPlug {
        ArrayPlug {
            delay,
            since: None,
            wake_pending: false,
            list: VecDeque::new(),
            waiting_for_heads: VecDeque::new(),
            by_stripe: HashMap::new(),
            heads: 0,
            heads_limit: u64::from(stripe_heads),
            pre_reading: 0,
        }
    }
}

impl<D: BlockDevice, L: ParityLayout> Parity<D, L> {
    /// Stripe heads md would hold delayed for a stripe write whose plan reads
    /// `reads`: one per page row (4 KB of every unit at the same unit offset)
    /// that any pre-read covers. Rows the write covers whole need no read: md
    /// writes them at once and holds only the rest.
    fn pre_read_rows(&self, stripe: u64, reads: &[MemberExtent]) -> u64 {
        let mut rows: Vec<(u64, u64)> = reads
            .iter()
            .map(|read| {
                let unit = self.layout.unit(stripe, read.member);
                let offset = read.lbn.sectors_since(unit.start).0;
                let first = offset / STRIPE_HEAD_SECTORS;
                (
                    first,
                    (offset + read.sectors.0).div_ceil(STRIPE_HEAD_SECTORS),
                )
            })
            .collect();
        rows.sort_unstable();
        let (mut total, mut reach) = (0, 0);
        for (first, end) in rows {
            let first = first.max(reach);
            if end > first {
                total += end - first;
                reach = end;
            }
        }
        total
    }

    /// Called with a planned op whose plan (the shared `write_plan`) reads: delay
    /// it if md would. True when it is now `Delayed` (listed, or waiting for
    /// stripe heads).
    pub(super) fn try_delay(&mut self, index: u32) -> bool {
        if self.array.delay.is_none() {
            return false;
        }
        let op = self.op(index);
        if op.operation != Operation::Write || op.pre_read_allowed {
            return false;
        }
        let (stripe, first_time) = (op.stripe, !op.waited);
        let heads = self.pre_read_rows(stripe, &self.write_plan.reads);
        if heads > self.array.heads_limit {
            self.write_counters.too_large_to_delay += 1;
            return false;
        }
        let listed = self.array.heads + heads <= self.array.heads_limit;
        let now = self.io.members.now();
        let op = self.op(index);
        op.phase = Phase::Delayed;
        op.waited = true;
        if first_time {
            op.delayed_since = Some(now);
            self.write_counters.delayed += 1;
        }
        let held = Held {
            index,
            heads,
            listed,
        };
        self.array.by_stripe.insert(stripe, held);
        if listed {
            self.array.heads += heads;
            self.array.list.push_back(index);
            self.plug_array();
        } else {
            self.write_counters.waited_for_heads += 1;
            self.array.waiting_for_heads.push_back(index);
        }
        true
    }

    /// Take a delayed op off the delayed list or the wait for heads (it is being
    /// joined, listed or released).
    fn undelay(&mut self, index: u32) {
        let stripe = self.op(index).stripe;
        let Some(held) = self.array.by_stripe.remove(&stripe) else {
            return;
        };
        if held.listed {
            self.array.heads -= held.heads;
            self.array.list.retain(|&i| i != index);
        } else {
            self.array.waiting_for_heads.retain(|&i| i != index);
        }
    }

    /// Join `segment` of `parent`'s write to the delayed op of its stripe, if
    /// there is one it does not overlap and nothing waits behind it. True when joined (the
    /// op is re-planned: written now if it reads nothing any more).
    pub(super) fn try_join(
        &mut self,
        parent: ParentId,
        segment: StripeSegment,
        request: &BlockRequest,
    ) -> bool {
        let Some(held) = self.array.by_stripe.get(&segment.stripe).copied() else {
            return false;
        };
        if self
            .locks
            .get(&segment.stripe)
            .is_some_and(|q| !q.is_empty())
        {
            return false;
        }
        // Pieces apart from the op's leave gaps, read and written back: only on
        // a healthy array (a gap on a failed member would need reconstructing).
        let healthy = self.failed.is_empty();
        let op = self.op(held.index);
        let same_kind = request.operation == Operation::Write
            && op.force_unit_access == request.force_unit_access;
        if !same_kind || !join_range(op, segment.range, healthy) {
            return false;
        }
        op.joined.push(parent);
        self.write_counters.joined += 1;
        self.undelay(held.index);
        self.start_op(held.index);
        self.list_waiting();
        true
    }

    /// Add to the shared write plan the reads of the op's gaps its plan does not
    /// read already (the plan covers the whole range as if written). A gap on a
    /// member failed since is rebuilt from the other members' same offsets.
    pub(super) fn read_gaps(&mut self, index: u32) {
        let (stripe, gaps) = {
            let op = self.op(index);
            (op.stripe, op.gaps.clone())
        };
        let mut wanted = Vec::new();
        for gap in gaps {
            data_runs(&self.layout, stripe, gap, |run| {
                wanted.push(run.unit.extent(run.member, run.unit_offset, run.sectors));
            });
        }
        for extent in wanted {
            let offset = extent
                .lbn
                .sectors_since(self.layout.unit(stripe, extent.member).start);
            let sources: Vec<MemberExtent> = if self.failed.contains(&extent.member) {
                // Units shorter than the offsets count as zeros there.
                (0..self.layout.members())
                    .map(MemberIndex)
                    .filter(|m| !self.failed.contains(m))
                    .filter_map(|m| {
                        let unit = self.layout.unit(stripe, m);
                        let end = unit.used.0.min(offset.0 + extent.sectors.0);
                        (end > offset.0).then(|| unit.extent(m, offset, Sectors(end - offset.0)))
                    })
                    .collect()
            } else {
                vec![extent]
            };
            for source in sources {
                let covered = self.write_plan.reads.iter().any(|r| {
                    r.member == source.member && r.lbn <= source.lbn && source.end() <= r.end()
                });
                if !covered {
                    self.write_plan.reads.push(source);
                }
            }
        }
        if self.write_plan.kind == WriteKind::FullStripe && !self.write_plan.reads.is_empty() {
            self.write_plan.kind = WriteKind::ReconstructWrite;
        }
    }

    /// Stripe writes waiting for heads join the delayed list, first come first
    /// served, while there is room (each re-planned: it may read less now).
    fn list_waiting(&mut self) {
        for _ in 0..self.array.waiting_for_heads.len() {
            let Some(&index) = self.array.waiting_for_heads.front() else {
                break;
            };
            let stripe = self.op(index).stripe;
            let needs = self.array.by_stripe.get(&stripe).map_or(0, |h| h.heads);
            if self.array.heads + needs > self.array.heads_limit {
                break;
            }
            self.undelay(index);
            self.start_op(index);
        }
    }

    /// Plug the array (md's `blk_plug_device`): its timer starts if it was not
    /// plugged.
    fn plug_array(&mut self) {
        let Some(delay) = self.array.delay else {
            return;
        };
        if self.array.since.is_some() {
            return;
        }
        let now = self.io.members.now();
        self.array.since = Some(now);
        if !self.array.wake_pending {
            self.array.wake_pending = true;
            self.io.members.wake_at(now + delay, ARRAY_PLUG_TOKEN);
        }
    }

    /// The array's wake-up: unplug if the plug has waited its delay, else wait
    /// for the plug made since.
    pub(super) fn array_wake(&mut self, token: u64) {
        debug_assert_eq!(token, ARRAY_PLUG_TOKEN, "the array plug's token");
        self.array.wake_pending = false;
        let (Some(since), Some(delay)) = (self.array.since, self.array.delay) else {
            return;
        };
        if since + delay <= self.io.members.now() {
            self.unplug_array(Release::Timer);
            self.unplug_members();
        } else {
            self.array.wake_pending = true;
            self.io.members.wake_at(since + delay, ARRAY_PLUG_TOKEN);
        }
    }

    /// md's `raid5_unplug_device` for the array itself: if it was plugged, the
    /// plug goes and the delayed stripes are released (while fewer than
    /// `IO_THRESHOLD` are pre-reading).
    pub(super) fn unplug_array(&mut self, why: Release) {
        if self.array.since.take().is_some() && self.array.pre_reading < IO_THRESHOLD {
            self.release_delayed(why);
        }
    }

    /// Every listed op may pre-read now: each is re-planned and sent; those
    /// waiting for heads take the room.
    fn release_delayed(&mut self, why: Release) {
        let list = std::mem::take(&mut self.array.list);
        let now = self.io.members.now();
        for &index in &list {
            let op = self.op(index);
            op.pre_read_allowed = true;
            op.released_at = now;
            let stripe = op.stripe;
            self.array.by_stripe.remove(&stripe);
        }
        self.array.heads = 0;
        let released = list.len() as u64;
        let counter = match why {
            Release::Timer => &mut self.write_counters.released_by_timer,
            Release::Unplug => &mut self.write_counters.released_by_unplug,
            Release::PreReadsDone => &mut self.write_counters.released_after_pre_reads,
        };
        *counter += released;
        self.array.pre_reading += released as u32;
        for index in list {
            self.start_op(index);
        }
        self.list_waiting();
    }

    /// The op's writes are going (or it ended): it no longer pre-reads; the last
    /// such releases the next delayed batch if the array is not plugged (md's
    /// `raid5d`, which then unplugs the members).
    pub(super) fn end_pre_read(&mut self, index: u32) {
        let op = self.op(index);
        if !op.pre_read_allowed {
            return;
        }
        op.pre_read_allowed = false;
        let released_at = op.released_at;
        let now = self.io.members.now();
        self.write_counters.released_pre_read_time += now.saturating_sub(released_at);
        self.array.pre_reading -= 1;
        let next = self.array.pre_reading < IO_THRESHOLD
            && self.array.since.is_none()
            && !self.array.list.is_empty();
        if next {
            self.release_delayed(Release::PreReadsDone);
            self.unplug_members();
        }
    }

    /// md's `unplug_slaves`: every member queue sends what its plug holds.
    fn unplug_members(&mut self) {
        for member in 0..self.io.count() {
            let sent = self.io.unplug(MemberIndex(member));
            debug_assert!(sent.is_ok(), "a member refused what its plug held");
        }
    }
}
