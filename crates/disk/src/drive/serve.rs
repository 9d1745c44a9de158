//! One request's timeline: cache lookup, overheads, media plan, host transfer
//! (notes §4.2, §4.3). Background jobs are resolved lazily here.

use super::*;

/// Per-block "in the buffer" time for a block already cached.
const CACHED: Picoseconds = i64::MIN;

/// When a request reaches the controller (`t0`, after its per-request overhead)
/// and when the HDA is first free for it (`hda`: later than `t0` only for a
/// request queued behind another's media work).
#[derive(Clone, Copy, Debug)]
pub(super) struct Start {
    pub(super) t0: Picoseconds,
    pub(super) hda: Picoseconds,
}

impl Drive {
    /// Finish the background job if it is over by `t`.
    pub(super) fn settle(&mut self, t: Picoseconds) {
        if self.job.as_ref().is_some_and(|j| j.arm_after.free_ps <= t) {
            if let Some(job) = self.job.take() {
                self.finish_job(job);
            }
        }
    }

    fn finish_job(&mut self, job: Job) {
        match job.kind {
            JobKind::Prefetch => {
                let done = job.runs.iter().map(|r| (r.first, r.count));
                self.merge_into(job.segment, done, job.anchor);
            }
            JobKind::Flush => {
                if self.firmware.read_hits_on_write_data {
                    let seg = self.cache.segments[job.segment];
                    self.cache
                        .set(job.segment, seg.start, seg.end, SegmentState::Clean);
                } else {
                    self.cache.clear(job.segment);
                }
            }
        }
        self.arm = job.arm_after;
        self.recycle(job.runs);
    }

    /// The media planner over this drive's mechanics, layout and track cache.
    pub(super) fn media(&self) -> Media<'_> {
        Media {
            mechanics: &self.mechanics,
            layout: &self.layout,
            tracks: &self.tracks,
        }
    }

    /// An empty run list, reusing a finished job's allocation.
    pub(super) fn take_runs(&mut self) -> Vec<Run> {
        let mut runs = std::mem::take(&mut self.spare_runs);
        runs.clear();
        runs
    }

    fn recycle(&mut self, runs: Vec<Run>) {
        if runs.capacity() > self.spare_runs.capacity() {
            self.spare_runs = runs;
        }
    }

    fn merge_into<I>(&mut self, index: usize, done: I, anchor: u64)
    where
        I: Iterator<Item = (u64, u32)> + Clone,
    {
        let seg = self.cache.segments[index];
        let (start, end) = if seg.state == SegmentState::Empty {
            merge_ranges(0, 0, done, anchor)
        } else {
            merge_ranges(seg.start, seg.end, done, anchor)
        };
        self.cache.set(index, start, end, SegmentState::Clean);
    }

    /// Pre-empt a running prefetch at `t`: keep the blocks read so far. It stops
    /// at once, mid-sector: DiskSim does so in practice (notes §4.1) even with
    /// `Stop prefetch in sector`, and finishing the sector under the head measured
    /// no better (st41601n 0.082 -> 0.117 ms, hp_c3323a 0.307 -> 0.287, dec_rz26
    /// 0.436 -> 0.428), so that flag is read from the spec but not modelled.
    pub(super) fn cut_prefetch(&mut self, t: Picoseconds) {
        if !self
            .job
            .as_ref()
            .is_some_and(|j| j.kind == JobKind::Prefetch)
        {
            return;
        }
        if let Some(job) = self.job.take() {
            let cut = cut_at(&job.runs, t, job.arm_before, job.arm_after);
            self.merge_into(job.segment, cut.done.iter().copied(), job.anchor);
            self.arm = cut.arm;
            self.recycle(job.runs);
        }
    }

    /// A request queued behind another's media work stops that request's
    /// read-ahead before it begins: the firmware starts no prefetch while its queue
    /// holds a request (DiskSim WD's stop condition, notes §4.3), so no head switch
    /// or seek towards read-ahead tracks is spent at the instant the HDA frees.
    pub(super) fn stop_read_ahead_if_queued(&mut self, at: Start) {
        if at.hda <= at.t0 {
            return;
        }
        if let Some(job) = self.job.as_mut().filter(|j| j.kind == JobKind::Prefetch) {
            job.limit = job.limit.min(job.planned_end);
        }
    }

    /// If a flush holds the arm at `t`, wait for it: returns its end.
    pub(super) fn wait_for_flush(&mut self, t: Picoseconds) -> Option<Picoseconds> {
        let end = self
            .job
            .as_ref()
            .filter(|j| j.kind == JobKind::Flush && j.arm_after.free_ps > t)
            .map(|j| j.arm_after.free_ps)?;
        if let Some(job) = self.job.take() {
            self.finish_job(job);
        }
        Some(end)
    }

    /// When block `lbn` is (or will be) in segment `index`'s buffer.
    fn block_ready(&self, index: usize, lbn: u64) -> Option<Picoseconds> {
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

    /// The read-ahead limit for a read of `[lbn, end)` into a segment starting at
    /// `segment_start` (notes §4.3, `get_max_readahead`).
    fn read_ahead_limit(&self, lbn: u64, end: u64, segment_start: u64) -> Result<u64, LayoutError> {
        let fw = &self.firmware;
        let limit = match fw.read_ahead {
            ReadAheadMode::Off => end,
            ReadAheadMode::ToEndOfNextTrack => {
                if end >= self.capacity {
                    end
                } else {
                    let (t, _) = self.tracks.get(&self.layout, end)?;
                    let mut limit = t.end().0;
                    if segment_start < t.first.0 {
                        limit += self.tracks.get(&self.layout, lbn)?.0.sectors.0;
                    }
                    limit
                }
            }
            _ if fw.max_read_ahead > 0 => end + fw.max_read_ahead,
            _ => end + fw.segment_sectors,
        };
        Ok(limit.min(self.capacity).max(end))
    }

    fn track_stop(&self) -> TrackStop {
        match self.firmware.read_ahead {
            ReadAheadMode::StopAtTrackEnd => TrackStop::AtTrackChange,
            ReadAheadMode::StopAtCylinderEnd => TrackStop::AtCylinderChange,
            _ => TrackStop::Never,
        }
    }

    /// Plan a new prefetching read of `[from, limit)` (blocks up to `must_end` are
    /// the request's) into segment `index`, starting at `start` from `self.arm`.
    fn plan_read(
        &mut self,
        index: usize,
        from: u64,
        must_end: u64,
        limit: u64,
        start: Picoseconds,
        free_blocks: bool,
    ) -> Result<(), LayoutError> {
        let mut arm = self.arm;
        arm.free_ps = start;
        let mode = AccessMode {
            is_write: false,
            immediate: self.firmware.immediate_read,
            free_blocks,
            data_ready_ps: 0,
            data_block_ps: 0,
            data_from: 0,
            data_min_blocks: 0,
            stop: self.track_stop(),
            min_first_positioning_ps: 0,
        };
        let mut runs = self.take_runs();
        let media = self.media();
        // Only the request's tracks now; read-ahead tracks are planned lazily
        // (`grow_prefetch`) when time reaches them.
        let span = Span {
            read_ahead_tracks: 0,
            continuing: false,
        };
        let after = media.plan(arm, from, limit, must_end, mode, span, &mut runs)?;
        let planned_end = runs.iter().map(Run::end_lbn).max().unwrap_or(from);
        self.job = Some(Job {
            kind: JobKind::Prefetch,
            segment: index,
            runs,
            arm_before: arm,
            arm_after: after,
            planned_end,
            anchor: from,
            limit,
        });
        Ok(())
    }

    /// Continue the running prefetch so that it covers `[.., must_end)` and aims
    /// for `limit` (a hit that inherits it).
    fn extend_prefetch(&mut self, must_end: u64, limit: u64) -> Result<(), LayoutError> {
        if let Some(job) = self.job.as_mut() {
            job.limit = job.limit.max(limit);
        }
        self.extend_job(must_end, 0)
    }

    /// Plan the running prefetch up to `must_end` plus `tracks` more tracks.
    fn extend_job(&mut self, must_end: u64, tracks: usize) -> Result<(), LayoutError> {
        let stop = self.track_stop();
        let immediate = self.firmware.immediate_read;
        let Some(job) = self.job.as_mut() else {
            return Ok(());
        };
        if job.planned_end >= job.limit {
            return Ok(());
        }
        let mode = AccessMode {
            is_write: false,
            immediate,
            free_blocks: false,
            data_ready_ps: 0,
            data_block_ps: 0,
            data_from: 0,
            data_min_blocks: 0,
            stop,
            min_first_positioning_ps: 0,
        };
        // Field borrows: `job` holds `self.job` mutably.
        let media = Media {
            mechanics: &self.mechanics,
            layout: &self.layout,
            tracks: &self.tracks,
        };
        let from = job.planned_end;
        let span = Span {
            read_ahead_tracks: tracks,
            continuing: true,
        };
        let before = job.runs.len();
        job.arm_after = media.plan(
            job.arm_after,
            from,
            job.limit,
            must_end.max(from),
            mode,
            span,
            &mut job.runs,
        )?;
        match job.runs[before..].iter().map(Run::end_lbn).max() {
            Some(end) => job.planned_end = end,
            // The read-ahead stop rule ended it here.
            None if must_end <= from => job.limit = from,
            None => {}
        }
        Ok(())
    }

    /// Plan the running prefetch lazily, one track at a time, until it reaches
    /// beyond `t` or its limit.
    pub(super) fn grow_prefetch(&mut self, t: Picoseconds) -> Result<(), LayoutError> {
        while let Some(job) = self.job.as_ref() {
            let growing = job.kind == JobKind::Prefetch
                && job.planned_end < job.limit
                && job.arm_after.free_ps <= t;
            if !growing {
                break;
            }
            let before = (job.planned_end, job.limit);
            self.extend_job(job.planned_end, 1)?;
            let job = self.job.as_ref().expect("job still there");
            if (job.planned_end, job.limit) == before {
                break;
            }
        }
        Ok(())
    }

    /// Choose a segment for a read miss (empty, then clean, least recently used).
    fn segment_for_miss(&self) -> Option<usize> {
        self.cache.choose(|_, s| match s.state {
            SegmentState::Empty => 3,
            SegmentState::Clean => 2,
            SegmentState::Dirty => 0,
        })
    }

    /// The best read hit at `t0`: (segment, whole).
    fn find_read_hit(&self, lbn: u64, end: u64, t0: Picoseconds) -> Option<(usize, bool)> {
        if !self.firmware.caching {
            return None;
        }
        let mut best: Option<(usize, bool)> = None;
        for i in 0..self.cache.segments.len() {
            if self.block_ready(i, lbn).is_none_or(|t| t > t0) {
                if self.almost_hit(i, lbn, t0) {
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

    /// Whether `lbn` is the next block the read-ahead running on segment `i` will
    /// bring after `t0` (with `Allow almost read hits`): the block before it is in
    /// by then and `lbn` is planned (DiskSim `src/disksim_diskcache.c:830-839`).
    fn almost_hit(&self, i: usize, lbn: u64, t0: Picoseconds) -> bool {
        let prefetching = self
            .job
            .as_ref()
            .is_some_and(|j| j.kind == JobKind::Prefetch && j.segment == i);
        self.firmware.almost_read_hits
            && prefetching
            && lbn > 0
            && self.block_ready(i, lbn - 1).is_some_and(|t| t <= t0)
            && self.block_ready(i, lbn).is_some()
    }

    pub(super) fn serve_read(
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
        let hit = self.find_read_hit(lbn, end, hda);
        let (index, flush_end) = self.place_read(lbn, end, Start { t0, hda }, hit)?;
        self.cache.touch(index);
        let mut ready = std::mem::take(&mut self.scratch_ready);
        ready.clear();
        // A block goes to the host only after every block before it: keep the
        // running maximum (in LBN order).
        let mut latest = CACHED;
        for b in lbn..end {
            latest = latest.max(self.block_ready(index, b).unwrap_or(CACHED));
            ready.push(latest);
        }
        let last_ready = ready.last().copied().filter(|&t| t != CACHED);
        let hda_free_ps = last_ready.unwrap_or(t0).max(flush_end.unwrap_or(t0));
        let (done_ps, overlap) = self.read_transfer(&ready, hit, t0, flush_end, hda_free_ps);
        self.scratch_ready = ready;
        let cache_hit = matches!(hit, Some((_, true)));
        let bus = self.firmware.bus_read_ps;
        let mut breakdown = self.breakdown(lbn, end, t0, bus, !cache_hit);
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
    /// (`Read-ahead on idle hit`) or stops. A hit on an idle drive starts no
    /// read-ahead from the segment's end, whatever that flag says: the notes
    /// describe it only for hits on a running prefetch, and starting one measured
    /// worse (hp_c3323a 0.305 -> 0.307 ms, hp_c2247a 0.0911 -> 0.0915; dec_rz26
    /// unchanged; st41601n 0.0836 -> 0.0829).
    fn full_hit(
        &mut self,
        s: usize,
        lbn: u64,
        end: u64,
        hda: Picoseconds,
        on_active: bool,
    ) -> Result<(usize, Option<Picoseconds>), LayoutError> {
        if on_active && self.firmware.read_ahead_on_idle_hit {
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

    /// When new media work may start: after the overhead and any seek in flight
    /// (DiskSim adds the two waits), or after a flush the request waited for. A
    /// queued request whose overhead ran while the HDA served the previous request
    /// starts at the later of the two (they overlap).
    pub(super) fn media_start(
        &self,
        at: Start,
        overhead_done: Picoseconds,
        flush_end: Option<Picoseconds>,
    ) -> Picoseconds {
        let Start { t0, hda } = at;
        match flush_end {
            Some(f) => f.max(overhead_done),
            None if hda > t0 => overhead_done.max(self.arm.free_ps).max(hda),
            None => t0 + (overhead_done - t0).max(0) + (self.arm.free_ps - t0).max(0),
        }
    }

    /// The earliest a request that reaches the controller at `t0` may connect to
    /// the bus at `connect`: if the previous request still holds the bus (queue
    /// depth > 1), after its completion message and a reselection.
    pub(super) fn bus_connect(&self, t0: Picoseconds, connect: Picoseconds) -> Picoseconds {
        if self.bus_free_ps > t0 {
            let fw = &self.firmware;
            connect.max(self.bus_free_ps + fw.reselect_ps + fw.data_prep_ps)
        } else {
            connect
        }
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

    /// Where the media time went, from the runs that carried the request's
    /// blocks (see [`TimeBreakdown`] for the definitions). `overhead` and `overlap`
    /// are left for the caller: overlap needs the bus timeline, and overhead is the
    /// rest of the response time.
    pub(super) fn breakdown(
        &self,
        lbn: u64,
        end: u64,
        t0: Picoseconds,
        bus_ps: Picoseconds,
        from_media: bool,
    ) -> TimeBreakdown {
        let mut b = TimeBreakdown {
            bus_transfer: ps_to_ns((end - lbn) as i64 * bus_ps),
            ..TimeBreakdown::default()
        };
        let Some(job) = self.job.as_ref().filter(|_| from_media) else {
            return b;
        };
        let (mut seek, mut switch, mut rotation, mut media) = (0, 0, 0, 0);
        // Where the head's time is accounted up to (None before the first run).
        let mut cursor: Option<Picoseconds> = None;
        let mut last_track = None;
        for r in job
            .runs
            .iter()
            .filter(|r| r.first < end && r.end_lbn() > lbn)
        {
            let track = (r.cylinder, r.surface, r.arrive_ps);
            // Positioning done before the request arrived (an inherited read-ahead)
            // is not this request's.
            if last_track != Some(track) && r.positioning_start_ps >= t0 {
                let positioning = r.arrive_ps - r.positioning_start_ps;
                if cursor.is_none() && r.moved_arm {
                    seek += positioning;
                } else {
                    switch += positioning;
                }
                cursor = Some(r.arrive_ps);
                last_track = Some(track);
            }
            // The request's part of the run; passing other sectors is a wait.
            let lo = r.first.max(lbn);
            let hi = r.end_lbn().min(end);
            let from = r.start_ps + (lo - r.first) as i64 * r.sector_ps;
            let to = from + (hi - lo) as i64 * r.sector_ps;
            if let Some(c) = cursor {
                rotation += (from - c).max(0);
            }
            media += to - from;
            cursor = Some(cursor.map_or(to, |c| c.max(to)));
        }
        b.seek = ps_to_ns(seek);
        b.head_switch = ps_to_ns(switch);
        b.rotational_latency = ps_to_ns(rotation);
        b.media_transfer = ps_to_ns(media);
        b
    }
}
