//! One request's timeline: cache lookup, overheads, media plan, host transfer
//! (notes §4.2, §4.3). Background jobs are resolved lazily here.
//!
//! The rooms: `jobs` (the background job's lifecycle and the read-ahead),
//! `reads` (a read's hit, miss and host transfer), `writes` (write-back and
//! write-through), `breakdown` (where a request's media time went). This file
//! holds what reads and writes share: when a request starts, when media work
//! may start, and when it may connect to the bus.

mod breakdown;
mod jobs;
mod reads;
#[cfg(test)]
mod ready_tests;
mod writes;

use crate::drive::*;

/// [`Drive::media_start`] with no flush to wait for and the arm free at
/// `arm_free`.
pub(in crate::drive) fn media_start_with_arm(
    at: Start,
    overhead_done: Picoseconds,
    arm_free: Picoseconds,
) -> Picoseconds {
    let Start { t0, hda } = at;
    if hda > t0 {
        overhead_done.max(arm_free).max(hda)
    } else {
        t0 + (overhead_done - t0).max(0) + (arm_free - t0).max(0)
    }
}

/// When a request reaches the controller (`t0`, after its per-request overhead)
/// and when the HDA is first free for it (`hda`: later than `t0` only for a
/// request queued behind another's media work).
#[derive(Clone, Copy, Debug)]
pub(in crate::drive) struct Start {
    pub(in crate::drive) t0: Picoseconds,
    pub(in crate::drive) hda: Picoseconds,
}

impl Drive {
    /// When new media work may start: after the overhead and any seek in flight
    /// (DiskSim adds the two waits), or after a flush the request waited for. A
    /// queued request whose overhead ran while the HDA served the previous request
    /// starts at the later of the two (they overlap).
    pub(in crate::drive) fn media_start(
        &self,
        at: Start,
        overhead_done: Picoseconds,
        flush_end: Option<Picoseconds>,
    ) -> Picoseconds {
        match flush_end {
            Some(f) => f.max(overhead_done),
            None => media_start_with_arm(at, overhead_done, self.arm.free_ps),
        }
    }

    /// The earliest a request that reaches the controller at `t0` may connect to
    /// the bus at `connect`: if the previous request still holds the bus (queue
    /// depth > 1), after its completion message and a reselection.
    pub(in crate::drive) fn bus_connect(
        &self,
        t0: Picoseconds,
        connect: Picoseconds,
    ) -> Picoseconds {
        if self.bus_free_ps > t0 {
            let fw = &self.firmware;
            connect.max(self.bus_free_ps + fw.reselect_ps + fw.data_prep_ps)
        } else {
            connect
        }
    }
}
