//! Where a request's media time went (seek, head switch, rotational latency,
//! media transfer), read off the runs of the job that carried its blocks.

use crate::drive::*;

/// Whether a request's blocks came from media work, and how it met that work.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(in crate::drive) enum FromMedia {
    /// A full cache hit: only the bus transfer is the request's.
    No,
    /// Media work planned for the request, or a read-ahead it met at (or just
    /// before) its first block.
    Yes,
    /// A read-ahead the read met ahead of it (`almost_read_hits_ahead`): from the
    /// given instant (when the request reached the HDA) the head passes blocks that
    /// are not the read's before its first one, which is rotational latency.
    RidingFrom(Picoseconds),
}

impl Drive {
    /// Where the media time went, from the runs that carried the request's
    /// blocks (see [`TimeBreakdown`] for the definitions). `overhead` and `overlap`
    /// are left for the caller: overlap needs the bus timeline, and overhead is the
    /// rest of the response time.
    pub(in crate::drive) fn breakdown(
        &self,
        lbn: u64,
        end: u64,
        t0: Picoseconds,
        bus_ps: Picoseconds,
        from_media: FromMedia,
    ) -> TimeBreakdown {
        let mut b = TimeBreakdown {
            bus_transfer: ps_to_ns((end - lbn) as i64 * bus_ps),
            ..TimeBreakdown::default()
        };
        let Some(job) = self.job.as_ref().filter(|_| from_media != FromMedia::No) else {
            return b;
        };
        let riding_from = match from_media {
            FromMedia::RidingFrom(t) => Some(t),
            _ => None,
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
            if let (Some(from), None) = (riding_from, last_track) {
                // Riding from ahead: the head first passes the blocks before the
                // read's on the track it is on, then switches (a continuing
                // read-ahead's switch, not a seek of the read's own).
                if r.positioning_start_ps >= from {
                    rotation += r.positioning_start_ps - from;
                    switch += r.arrive_ps - r.positioning_start_ps;
                }
                cursor = Some(from.max(r.arrive_ps));
                last_track = Some(track);
            }
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
