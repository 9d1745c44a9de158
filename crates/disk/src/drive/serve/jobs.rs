//! The background job's lifecycle and the read-ahead: a prefetch or flush is
//! planned, grown lazily one track at a time as simulated time reaches it,
//! pre-empted or waited for, and settled into the cache once over.

use super::Start;
use crate::drive::*;

impl Drive {
    /// Finish the background job if it is over by `t`.
    pub(in crate::drive) fn settle(&mut self, t: Picoseconds) {
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
    pub(in crate::drive) fn media(&self) -> Media<'_> {
        Media {
            mechanics: &self.mechanics,
            layout: &self.layout,
            tracks: &self.tracks,
        }
    }

    /// An empty run list, reusing a finished job's allocation.
    pub(in crate::drive) fn take_runs(&mut self) -> Vec<Run> {
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
    pub(in crate::drive) fn cut_prefetch(&mut self, t: Picoseconds) {
        if !self
            .job
            .as_ref()
            .is_some_and(|j| j.kind == JobKind::Prefetch)
        {
            return;
        }
        if let Some(job) = self.job.take() {
            let cut = cut_at(
                &job.runs,
                t,
                (job.arm_before, job.arm_after),
                self.firmware.abandon_read_ahead_positioning,
            );
            self.merge_into(job.segment, cut.done.iter().copied(), job.anchor);
            self.arm = cut.arm;
            self.recycle(job.runs);
        }
    }

    /// A request queued behind another's media work stops that request's
    /// read-ahead before it begins: the firmware starts no prefetch while its queue
    /// holds a request (DiskSim WD's stop condition, notes §4.3), so no head switch
    /// or seek towards read-ahead tracks is spent at the instant the HDA frees.
    pub(in crate::drive) fn stop_read_ahead_if_queued(&mut self, at: Start) {
        if at.hda <= at.t0 {
            return;
        }
        if let Some(job) = self.job.as_mut().filter(|j| j.kind == JobKind::Prefetch) {
            job.limit = job.limit.min(job.planned_end);
        }
    }

    /// If a flush holds the arm at `t`, wait for it: returns its end.
    pub(in crate::drive) fn wait_for_flush(&mut self, t: Picoseconds) -> Option<Picoseconds> {
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

    /// The read-ahead limit for a read of `[lbn, end)` into a segment starting at
    /// `segment_start` (notes §4.3, `get_max_readahead`).
    pub(super) fn read_ahead_limit(
        &self,
        lbn: u64,
        end: u64,
        segment_start: u64,
    ) -> Result<u64, LayoutError> {
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
    pub(super) fn plan_read(
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
    /// for `limit` (a hit that inherits it). A read whose blocks the prefetch has
    /// planned already (`must_end` within the track it is reading) needs nothing
    /// planned now: with `read_hit_keeps_read_ahead` the prefetch goes on growing
    /// a track at a time towards its raised limit (`grow_prefetch`), as DiskSim's
    /// take-over leaves the media access running; without it, it ends with that
    /// track (spinstack's older rule, kept for the imported drives: see
    /// `CacheSpec::read_hit_keeps_read_ahead`).
    pub(super) fn extend_prefetch(&mut self, must_end: u64, limit: u64) -> Result<(), LayoutError> {
        let keep_going = self.firmware.read_hit_keeps_read_ahead;
        if let Some(job) = self.job.as_mut() {
            job.limit = job.limit.max(limit);
            if must_end <= job.planned_end {
                if !keep_going {
                    job.limit = job.limit.min(job.planned_end);
                }
                return Ok(());
            }
        }
        self.extend_job(must_end, 0)
    }

    /// How a read-ahead reads the tracks it goes on to.
    fn continuing_mode(&self) -> AccessMode {
        AccessMode {
            is_write: false,
            immediate: self.firmware.immediate_read,
            free_blocks: false,
            data_ready_ps: 0,
            data_block_ps: 0,
            data_from: 0,
            data_min_blocks: 0,
            stop: self.track_stop(),
            min_first_positioning_ps: 0,
        }
    }

    /// When the running prefetch, left to go on, starts reading `lbn`: from its
    /// plan, or (beyond it) from planning on towards its limit into a scratch
    /// list. None if it stops first.
    pub(super) fn prefetch_reaches(
        &mut self,
        lbn: u64,
    ) -> Result<Option<Picoseconds>, LayoutError> {
        let Some(job) = self.job.as_ref().filter(|j| j.kind == JobKind::Prefetch) else {
            return Ok(None);
        };
        let start_of = |r: &Run| r.start_ps + (lbn - r.first) as i64 * r.sector_ps;
        if let Some(r) = job.runs.iter().find(|r| r.contains(lbn)) {
            return Ok(Some(start_of(r)));
        }
        let (arm, from, limit) = (job.arm_after, job.planned_end, job.limit);
        if !(from..limit).contains(&lbn) {
            return Ok(None);
        }
        let mut runs = std::mem::take(&mut self.spare_runs);
        runs.clear();
        let span = Span {
            read_ahead_tracks: 0,
            continuing: true,
        };
        let planned = self.media().plan(
            arm,
            from,
            limit,
            lbn + 1,
            self.continuing_mode(),
            span,
            &mut runs,
        );
        let reached = runs.iter().find(|r| r.contains(lbn)).map(start_of);
        self.spare_runs = runs;
        planned.map(|_| reached)
    }

    /// Plan the running prefetch up to `must_end` plus `tracks` more tracks.
    fn extend_job(&mut self, must_end: u64, tracks: usize) -> Result<(), LayoutError> {
        let mode = self.continuing_mode();
        let Some(job) = self.job.as_mut() else {
            return Ok(());
        };
        if job.planned_end >= job.limit {
            return Ok(());
        }
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
            // Asked for a track beyond what must be read, and given none: the
            // read-ahead stop rule ended it here.
            None if tracks > 0 && must_end <= from => job.limit = from,
            None => {}
        }
        Ok(())
    }

    /// Plan the running prefetch lazily, one track at a time, until it reaches
    /// beyond `t` or its limit.
    pub(in crate::drive) fn grow_prefetch(&mut self, t: Picoseconds) -> Result<(), LayoutError> {
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
}
