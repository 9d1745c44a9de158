//! One write's timeline: write-back (completion once the data is buffered, the
//! media write a background flush) or write-through (completion after the media
//! write; also every force-unit-access write), with block-by-block data arrival.

use super::breakdown::FromMedia;
use super::Start;
use crate::drive::*;

impl Drive {
    pub(in crate::drive) fn serve_write(
        &mut self,
        req: &BlockRequest,
        t0: Picoseconds,
    ) -> Result<Outcome, LayoutError> {
        let at = Start {
            t0,
            hda: t0.max(self.hda_free_ps),
        };
        self.stop_read_ahead_if_queued(at);
        self.grow_prefetch(at.hda)?;
        self.settle(at.hda);
        // A force-unit-access write completes only once on the media.
        if self.firmware.write_back && !req.force_unit_access {
            self.serve_write_back(req, at)
        } else {
            self.serve_write_through(req, at)
        }
    }

    /// DiskSim's "extra write disconnect" drives write nothing until 10 blocks
    /// (or the whole request, if smaller; 15 for requests of 45 blocks or more) are
    /// buffered.
    fn write_min_buffered(&self, blocks: u64) -> u64 {
        let extra = if !self.firmware.extra_write_disconnect {
            1
        } else if blocks < 45 {
            blocks.min(10)
        } else {
            15
        };
        // The write ("low") water mark does not gate the media write: DiskSim
        // does not do it, and it measured mixed (hp_c3323a 0.305 -> 0.254 ms but
        // hp_c2247a 0.088 -> 0.256, others unchanged).
        extra
    }

    /// Media mode of a write whose data starts arriving at `connect` (one bus block
    /// time per block from `from`).
    fn write_mode(
        &self,
        connect: Picoseconds,
        from: u64,
        blocks: u64,
        min_first: Picoseconds,
    ) -> AccessMode {
        let per_block = self.firmware.bus_write_ps;
        // Write data reaches the buffer block by block (as on a physical drive),
        // not in one chunk at the end of the host transfer (as in DiskSim).
        let (data_ready_ps, data_block_ps) = (connect + per_block, per_block);
        AccessMode {
            is_write: true,
            immediate: self.firmware.immediate_write,
            free_blocks: false,
            data_ready_ps,
            data_block_ps,
            data_from: from,
            data_min_blocks: self.write_min_buffered(blocks),
            stop: TrackStop::Never,
            min_first_positioning_ps: min_first,
        }
    }

    /// Choose and fill the segment that receives a write's data.
    fn segment_for_write(&mut self, lbn: u64, end: u64, state: SegmentState) -> usize {
        let s = self
            .cache
            .choose(|_, s| match s.state {
                SegmentState::Clean if s.start < end && lbn < s.end => 4,
                SegmentState::Empty => 3,
                SegmentState::Clean => 2,
                SegmentState::Dirty => 0,
            })
            .unwrap_or(0);
        self.cache.set(s, lbn, end, state);
        self.cache.invalidate_overlaps(s, lbn, end);
        self.cache.touch(s);
        s
    }

    fn serve_write_back(&mut self, req: &BlockRequest, at: Start) -> Result<Outcome, LayoutError> {
        let Start { t0, hda } = at;
        let last = self.last_was_write as usize;
        let (lbn, n) = (req.lbn.0, req.sectors.0);
        let end = lbn + n;
        let fw = &self.firmware;
        let overhead_done = t0 + fw.write_hit[last];
        let (dp, bus, reconnect) = (
            fw.data_prep_ps,
            fw.bus_write_ps,
            fw.reselect_ps + fw.data_prep_ps,
        );
        let completion = fw.write_completion_ps;
        let appending = fw.combine_sequential_writes
            && self.job.as_ref().is_some_and(|j| {
                j.kind == JobKind::Flush && self.cache.segments[j.segment].end == lbn
            });
        if appending {
            let connect = self.bus_connect(t0, t0 + fw.write_hit[last] + dp);
            let data_ready = connect + n as i64 * bus;
            let mode = self.write_mode(connect, lbn, n, 0);
            if let Some(job) = self.job.as_mut() {
                let media = Media {
                    mechanics: &self.mechanics,
                    layout: &self.layout,
                    tracks: &self.tracks,
                };
                let mut arm = job.arm_after;
                arm.free_ps = arm.free_ps.max(overhead_done);
                job.arm_after = media.plan(arm, lbn, end, end, mode, Span::ALL, &mut job.runs)?;
                job.limit = end;
                job.planned_end = end;
                let s = job.segment;
                let start = self.cache.segments[s].start;
                self.cache.set(s, start, end, SegmentState::Dirty);
                self.cache.touch(s);
            }
            let breakdown = self.breakdown(lbn, end, t0, bus, FromMedia::No);
            return Ok(Outcome {
                done_ps: data_ready + completion,
                hda_free_ps: data_ready + completion,
                cache_hit: true,
                breakdown,
            });
        }
        self.cut_prefetch(hda);
        let flush_end = self.wait_for_flush(hda);
        let mut connect = self.bus_connect(t0, t0 + self.firmware.write_hit[last] + dp);
        if let Some(f) = flush_end {
            connect = connect.max(f + reconnect);
        }
        let data_ready = connect + n as i64 * bus;
        let start = self.media_start(at, overhead_done, flush_end);
        let s = self.segment_for_write(lbn, end, SegmentState::Dirty);
        let mut arm = self.arm;
        arm.free_ps = start;
        let mode = self.write_mode(connect, lbn, n, self.firmware.min_seek_delay_ps);
        let mut runs = self.take_runs();
        let media = self.media();
        let after = media.plan(arm, lbn, end, end, mode, Span::ALL, &mut runs)?;
        self.job = Some(Job::flush(s, runs, (arm, after), lbn..end));
        let done_ps = data_ready + completion;
        // The media write happens after completion: not part of the response.
        let breakdown = self.breakdown(lbn, end, t0, bus, FromMedia::No);
        // The flush is background work the next request waits for (or appends
        // to): the HDA counts as busy until the completion, as without overlap.
        Ok(Outcome {
            done_ps,
            hda_free_ps: done_ps,
            cache_hit: true,
            breakdown,
        })
    }

    fn serve_write_through(
        &mut self,
        req: &BlockRequest,
        at: Start,
    ) -> Result<Outcome, LayoutError> {
        let Start { t0, hda } = at;
        let last = self.last_was_write as usize;
        let (lbn, n) = (req.lbn.0, req.sectors.0);
        let end = lbn + n;
        self.cut_prefetch(hda);
        let flush_end = self.wait_for_flush(hda);
        let fw = &self.firmware;
        let overhead = fw.write_miss[last];
        let connect = self.bus_connect(t0, t0 + overhead + fw.data_prep_ps);
        let data_ready = connect + n as i64 * fw.bus_write_ps;
        // DiskSim waives the minimum seek delay only for a write appended to a
        // stream in the same instant, which a write-through write never is.
        let min_first = fw.min_seek_delay_ps;
        // With `seek_after_write_data` the media work waits for the whole transfer.
        let media_may_start = if fw.seek_after_write_data {
            data_ready
        } else {
            t0 + overhead
        };
        let start = self.media_start(at, media_may_start, flush_end);
        let mut arm = self.arm;
        arm.free_ps = start;
        let mode = self.write_mode(connect, lbn, n, min_first);
        let mut runs = self.take_runs();
        let media = self.media();
        let after = media.plan(arm, lbn, end, end, mode, Span::ALL, &mut runs)?;
        let media_end = after.free_ps;
        let fw = &self.firmware;
        let done_ps = if fw.never_disconnect {
            media_end.max(data_ready) + fw.write_completion_ps
        } else {
            media_end.max(data_ready + fw.write_disconnect_ps)
                + fw.reselect_ps
                + fw.write_completion_ps
        };
        let bus = fw.bus_write_ps;
        // The runs are kept as a finished job only to report the breakdown.
        let keep = fw.caching && fw.read_hits_on_write_data;
        let s = self.segment_for_write(lbn, end, SegmentState::Clean);
        if !keep {
            self.cache.clear(s);
        }
        self.job = Some(Job::flush(s, runs, (arm, after), lbn..end));
        let mut breakdown = self.breakdown(lbn, end, t0, bus, FromMedia::Yes);
        // Write data crossing the bus while the arm positions and writes.
        breakdown.overlap = ps_to_ns((data_ready.min(media_end) - connect.max(start)).max(0));
        if let Some(job) = self.job.take() {
            self.arm = job.arm_after;
        }
        Ok(Outcome {
            done_ps,
            hda_free_ps: media_end,
            cache_hit: false,
            breakdown,
        })
    }
}
