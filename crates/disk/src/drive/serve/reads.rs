//! One read's timeline: where its blocks come from (a full or partial cache hit,
//! the running read-ahead, or a miss that plans new media work), when each is in
//! the buffer, and the host transfer that follows.

use super::breakdown::FromMedia;
use super::{media_start_with_arm, Start};
use crate::drive::*;

/// Per-block "in the buffer" time for a block already cached.
pub(super) const CACHED: Picoseconds = i64::MIN;

impl Drive {
    /// When block `lbn` is (or will be) in segment `index`'s buffer.
    pub(super) fn block_ready(&self, index: usize, lbn: u64) -> Option<Picoseconds> {
        let seg = &self.cache.segments[index];
        if seg.state != SegmentState::Empty && seg.start <= lbn && lbn < seg.end {
            return Some(CACHED);
        }
        let job = self.job.as_ref()?;
        if job.segment != index || job.kind != JobKind::Prefetch {
            return None;
        }
        job.runs
            .iter()
            .find(|r| r.contains(lbn))
            .map(|r| r.done_ps(lbn))
    }

    /// [`Drive::block_ready`] of every block of `[lbn, end)` into `ready`, with
    /// `missing` for a block neither buffered nor planned. One pass over the runs and
    /// the blocks: looking each block up in the runs cost a 1 GiB read 10 s of wall
    /// time, quadratic in its size (inputs finding 9). As in `block_ready`, a
    /// buffered block is `CACHED` and otherwise the first run holding it decides,
    /// so the runs are written last to first.
    pub(super) fn blocks_ready(
        &self,
        index: usize,
        lbn: u64,
        end: u64,
        missing: Picoseconds,
        ready: &mut Vec<Picoseconds>,
    ) {
        ready.clear();
        ready.resize((end - lbn) as usize, missing);
        let job = self
            .job
            .as_ref()
            .filter(|j| j.segment == index && j.kind == JobKind::Prefetch);
        for run in job.iter().flat_map(|j| j.runs.iter().rev()) {
            for b in run.first.max(lbn)..run.end_lbn().min(end) {
                ready[(b - lbn) as usize] = run.done_ps(b);
            }
        }
        let seg = &self.cache.segments[index];
        if seg.state != SegmentState::Empty {
            for b in seg.start.max(lbn)..seg.end.min(end) {
                ready[(b - lbn) as usize] = CACHED;
            }
        }
    }

    /// With `whole_track_before_bus`: a track that the media work on segment
    /// `index` reads out of LBN order (a zero-latency read that began mid-track: a
    /// run of higher LBNs read before a run of lower LBNs on the same track) makes
    /// none of those blocks ready for the host before the later run ends.
    /// `ready[i]` is block `lbn + i`'s buffered time.
    fn hold_out_of_order_tracks(&self, index: usize, lbn: u64, ready: &mut [Picoseconds]) {
        let Some(job) = self
            .job
            .as_ref()
            .filter(|j| j.segment == index && j.kind == JobKind::Prefetch)
        else {
            return;
        };
        let end = lbn + ready.len() as u64;
        for (i, first_read) in job.runs.iter().enumerate() {
            for then_read in &job.runs[i + 1..] {
                let same_track = first_read.cylinder == then_read.cylinder
                    && first_read.surface == then_read.surface;
                if !same_track
                    || then_read.first >= first_read.first
                    || then_read.start_ps <= first_read.start_ps
                {
                    continue;
                }
                let release = first_read.end_ps().max(then_read.end_ps());
                let (from, to) = (then_read.first.max(lbn), first_read.end_lbn().min(end));
                for b in from..to {
                    let slot = &mut ready[(b - lbn) as usize];
                    *slot = (*slot).max(release);
                }
            }
        }
    }

    /// Choose a segment for a read miss (empty, then clean, least recently used).
    fn segment_for_miss(&self) -> Option<usize> {
        self.cache.choose(|_, s| match s.state {
            SegmentState::Empty => 3,
            SegmentState::Clean => 2,
            SegmentState::Dirty => 0,
        })
    }

    /// The best read hit at `t0`: (segment, whole). `ahead`: almost hits may lie
    /// ahead of the read-ahead (`almost_read_hits_ahead`).
    fn find_read_hit(
        &self,
        lbn: u64,
        end: u64,
        t0: Picoseconds,
        ahead: bool,
    ) -> Option<(usize, bool)> {
        if !self.firmware.caching {
            return None;
        }
        let mut best: Option<(usize, bool)> = None;
        for i in 0..self.cache.segments.len() {
            if self.block_ready(i, lbn).is_none_or(|t| t > t0) {
                if self.almost_hit(i, lbn, t0, ahead) {
                    best = best.or(Some((i, false)));
                }
                continue;
            }
            let whole = (lbn..end).all(|b| self.block_ready(i, b).is_some_and(|t| t <= t0));
            if best.is_none_or(|(_, w)| whole && !w) {
                best = Some((i, whole));
            }
        }
        best
    }

    /// Whether the read-ahead running on segment `i` will bring `lbn` (not in the
    /// buffer at `t0`), so that a read starting there rides it. With `Allow almost
    /// read hits`: `lbn` is the next block, i.e. the block before it is in by `t0`
    /// and `lbn` is planned (DiskSim `src/disksim_diskcache.c:830-839`). With
    /// `ahead` (`almost_read_hits_ahead`): `lbn` is anywhere the read-ahead has
    /// still to read, planned or up to its limit (the blocks before it are read on
    /// the way; whether that is sooner than a new positioning is decided after).
    fn almost_hit(&self, i: usize, lbn: u64, t0: Picoseconds, ahead: bool) -> bool {
        let Some(job) = self
            .job
            .as_ref()
            .filter(|j| j.kind == JobKind::Prefetch && j.segment == i)
        else {
            return false;
        };
        let planned = self.block_ready(i, lbn).is_some();
        let next = self.firmware.almost_read_hits
            && lbn > 0
            && self.block_ready(i, lbn - 1).is_some_and(|t| t <= t0)
            && planned;
        let ahead = ahead && (planned || (job.planned_end..job.limit).contains(&lbn));
        next || ahead
    }

    /// Whether riding the running read-ahead brings block `lbn` (ahead of it)
    /// under the head no later than a new read would: the firmware knows where
    /// its head is and where the block is, and does not wait revolutions for a
    /// block it can position to within one. A new read stops the read-ahead when
    /// the request reaches the HDA, pays the command overhead and positions.
    fn riding_pays(&mut self, lbn: u64, at: Start) -> Result<bool, LayoutError> {
        let Some(ride) = self.prefetch_reaches(lbn)? else {
            return Ok(false);
        };
        let Some(job) = self.job.as_ref() else {
            return Ok(false);
        };
        let abandon = self.firmware.abandon_read_ahead_positioning;
        let mut arm = cut_at(&job.runs, at.hda, (job.arm_before, job.arm_after), abandon).arm;
        let overhead_done = at.t0 + self.firmware.read_miss[self.last_was_write as usize];
        arm.free_ps = media_start_with_arm(at, overhead_done, arm.free_ps);
        let reposition = arm.free_ps + self.media().positioning_time(arm, lbn, false)?;
        Ok(ride <= reposition)
    }

    pub(in crate::drive) fn serve_read(
        &mut self,
        req: &BlockRequest,
        t0: Picoseconds,
    ) -> Result<Outcome, LayoutError> {
        // A queued request reaches the HDA (and the cache's state) only once the
        // previous request's media work is done.
        let hda = t0.max(self.hda_free_ps);
        self.stop_read_ahead_if_queued(Start { t0, hda });
        self.grow_prefetch(hda)?;
        self.settle(hda);
        let (lbn, end) = (req.lbn.0, req.end().0);
        let ahead = self.firmware.almost_read_hits_ahead;
        let mut hit = self.find_read_hit(lbn, end, hda, ahead);
        // A read that rides the read-ahead from ahead of it (neither its first
        // block nor the one before is in yet) waits while the head passes blocks
        // that are not its own: only if that reaches its first block no later
        // than a new positioning would.
        let in_by = |s: usize, b: u64| self.block_ready(s, b).is_some_and(|t| t <= hda);
        let mut riding_ahead = hit
            .is_some_and(|(s, whole)| !whole && !in_by(s, lbn) && (lbn == 0 || !in_by(s, lbn - 1)));
        if riding_ahead && !self.riding_pays(lbn, Start { t0, hda })? {
            hit = self.find_read_hit(lbn, end, hda, false);
            riding_ahead = false;
        }
        let (index, flush_end) = self.place_read(lbn, end, Start { t0, hda }, hit)?;
        self.cache.touch(index);
        let mut ready = std::mem::take(&mut self.scratch_ready);
        self.blocks_ready(index, lbn, end, CACHED, &mut ready);
        if self.firmware.whole_track_before_bus {
            self.hold_out_of_order_tracks(index, lbn, &mut ready);
        }
        // A block goes to the host only after every block before it: keep the
        // running maximum (in LBN order).
        let mut latest = CACHED;
        for t in ready.iter_mut() {
            latest = latest.max(*t);
            *t = latest;
        }
        let last_ready = ready.last().copied().filter(|&t| t != CACHED);
        let hda_free_ps = last_ready.unwrap_or(t0).max(flush_end.unwrap_or(t0));
        let (done_ps, overlap) = self.read_transfer(&ready, hit, t0, flush_end, hda_free_ps);
        self.scratch_ready = ready;
        let cache_hit = matches!(hit, Some((_, true)));
        let bus = self.firmware.bus_read_ps;
        let media = match (cache_hit, riding_ahead) {
            (true, _) => FromMedia::No,
            (false, true) => FromMedia::RidingFrom(hda),
            (false, false) => FromMedia::Yes,
        };
        let mut breakdown = self.breakdown(lbn, end, t0, bus, media);
        if !cache_hit {
            breakdown.overlap = ps_to_ns(overlap);
        }
        if !self.firmware.caching {
            self.drop_after_use(index, done_ps);
        }
        Ok(Outcome {
            done_ps,
            hda_free_ps,
            cache_hit,
            breakdown,
        })
    }

    /// Decide where a read's blocks come from and start any media work: returns
    /// the segment and the end of a flush the read had to wait for.
    fn place_read(
        &mut self,
        lbn: u64,
        end: u64,
        at: Start,
        hit: Option<(usize, bool)>,
    ) -> Result<(usize, Option<Picoseconds>), LayoutError> {
        let Start { t0, hda } = at;
        let overhead_done = t0 + self.firmware.read_miss[self.last_was_write as usize];
        let active = self
            .job
            .as_ref()
            .filter(|j| j.kind == JobKind::Prefetch)
            .map(|j| j.segment);
        match hit {
            Some((s, true)) => self.full_hit(s, lbn, end, hda, active == Some(s)),
            Some((s, false)) if active == Some(s) => {
                // Inherit the running read-ahead: no new seek.
                let limit = self.read_ahead_limit(lbn, end, self.cache.segments[s].start)?;
                self.extend_prefetch(end, limit.max(end))?;
                Ok((s, None))
            }
            Some((s, false)) => {
                self.cut_prefetch(hda);
                let flush_end = self.wait_for_flush(hda);
                let seg = self.cache.segments[s];
                let start = self.media_start(at, overhead_done, flush_end);
                let limit = self.read_ahead_limit(lbn, end, seg.start)?;
                self.plan_read(s, seg.end, end, limit, start, false)?;
                if let Some(j) = self.job.as_mut() {
                    j.anchor = lbn;
                }
                Ok((s, flush_end))
            }
            None => {
                self.cut_prefetch(hda);
                let flush_end = self.wait_for_flush(hda);
                let s = self.segment_for_miss().unwrap_or_default();
                self.cache.set(s, lbn, lbn, SegmentState::Empty);
                let start = self.media_start(at, overhead_done, flush_end);
                let limit = if self.firmware.caching {
                    self.read_ahead_limit(lbn, end, lbn)?
                } else {
                    end
                };
                let free_blocks = self.firmware.read_any_free_blocks;
                self.plan_read(s, lbn, end, limit, start, free_blocks)?;
                Ok((s, flush_end))
            }
        }
    }

    /// A read wholly in segment `s`: the read-ahead running on it continues
    /// (`Read-ahead on idle hit`, or `read_hit_keeps_read_ahead`, which also
    /// keeps it going past the track it is reading) or stops. A hit on an idle
    /// drive starts no read-ahead from the segment's end, whatever that flag
    /// says (DiskSim starts one: that flag is about this very case, a hit on a
    /// segment whose access has stopped, `disk_check_hda_pending`): starting one
    /// measured worse (hp_c3323a 0.305 -> 0.307 ms, hp_c2247a 0.0911 -> 0.0915;
    /// dec_rz26 unchanged; st41601n 0.0836 -> 0.0829).
    fn full_hit(
        &mut self,
        s: usize,
        lbn: u64,
        end: u64,
        hda: Picoseconds,
        on_active: bool,
    ) -> Result<(usize, Option<Picoseconds>), LayoutError> {
        let fw = &self.firmware;
        if on_active && (fw.read_ahead_on_idle_hit || fw.read_hit_keeps_read_ahead) {
            let limit = self.read_ahead_limit(lbn, end, self.cache.segments[s].start)?;
            self.extend_prefetch(end, limit)?;
        } else if on_active {
            self.cut_prefetch(hda);
        }
        let flush_end = self.wait_for_flush(hda);
        Ok((s, flush_end))
    }

    /// With caching off, the segment holds nothing once the host has the data.
    fn drop_after_use(&mut self, index: usize, done: Picoseconds) {
        self.settle(done);
        if let Some(job) = self.job.take() {
            self.arm = job.arm_after;
        }
        self.cache.clear(index);
    }

    /// The host transfer of a read and its completion message: (completion, bus
    /// time before `media_end`, i.e. overlapped with the media work).
    fn read_transfer(
        &self,
        ready: &[Picoseconds],
        hit: Option<(usize, bool)>,
        t0: Picoseconds,
        flush_end: Option<Picoseconds>,
        media_end: Picoseconds,
    ) -> (Picoseconds, Picoseconds) {
        let fw = &self.firmware;
        let last = self.last_was_write as usize;
        let reconnect = fw.reselect_ps + fw.data_prep_ps;
        let n = ready.len() as u64;
        let water_mark = fw.read_water_mark_blocks(n);
        let mut plan = BusPlan {
            connect_ps: 0,
            per_block_ps: fw.bus_read_ps,
            hold: fw.hold_bus_read || fw.never_disconnect,
            water_mark,
            reconnect_ps: reconnect,
            disconnect_ps: fw.read_disconnect[last],
        };
        if hit.is_some() {
            plan.connect_ps = t0 + fw.read_hit[last] + fw.data_prep_ps;
            if let Some(f) = flush_end {
                plan.connect_ps = plan.connect_ps.max(f + reconnect);
            }
        } else if fw.never_disconnect {
            plan.connect_ps = t0 + fw.read_miss[last] + fw.data_prep_ps;
        } else {
            let need = firmware::water_mark_time(ready, water_mark);
            plan.connect_ps =
                (t0 + fw.read_miss[last] + fw.read_disconnect[last]).max(need) + reconnect;
        }
        plan.connect_ps = self.bus_connect(t0, plan.connect_ps);
        let (end, _, overlap) = bus_pipeline_until(ready, plan, media_end);
        (end + fw.read_completion_ps, overlap)
    }
}
