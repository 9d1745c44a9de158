//! The commands that move no data of their own: flush (SYNCHRONIZE CACHE) and
//! trim (UNMAP).

use super::*;

impl Drive {
    /// A flush (SYNCHRONIZE CACHE) completes when the write-back data buffered
    /// before it is on the media: it waits for a flush job in progress, holding
    /// the HDA, then sends its completion. With nothing dirty it costs the command
    /// overheads only.
    pub(super) fn serve_flush(&mut self, t0: Picoseconds) -> Outcome {
        let hda = t0.max(self.hda_free_ps);
        let fw = &self.firmware;
        let overhead_done = t0 + fw.write_hit[self.last_was_write as usize];
        let media_done = self.wait_for_flush(hda).unwrap_or(hda);
        let done_ps = overhead_done.max(media_done) + self.firmware.write_completion_ps;
        Outcome {
            done_ps,
            hda_free_ps: media_done,
            cache_hit: false,
            breakdown: TimeBreakdown::default(),
        }
    }

    /// A trim (UNMAP): the model has no map of allocated sectors, so a trim costs
    /// the command overheads and drops cached copies of the range (they would be
    /// stale: trimmed sectors read back as zeros). It waits for no media work.
    pub(super) fn serve_trim(&mut self, req: &BlockRequest, t0: Picoseconds) -> Outcome {
        let fw = &self.firmware;
        let done_ps = t0 + fw.write_hit[self.last_was_write as usize] + fw.write_completion_ps;
        let (lbn, end) = (req.lbn.0, req.end().0);
        let busy = self.job.as_ref().map(|j| j.segment);
        for index in 0..self.cache.segments.len() {
            let segment = self.cache.segments[index];
            let overlaps = segment.start < end && lbn < segment.end;
            // A segment a background job is filling or draining stays: the job
            // owns it until it ends.
            if overlaps && segment.state == SegmentState::Clean && busy != Some(index) {
                self.cache.clear(index);
            }
        }
        Outcome {
            done_ps,
            hda_free_ps: t0,
            cache_hit: false,
            breakdown: TimeBreakdown::default(),
        }
    }
}
