//! raid5-streams' evidence sentences: what each run shows, and what the depth
//! sensitivity run and the cache evidence run say about the scaling miss.

use super::{latency_around, within_limit, Measured, EVIDENCE_CACHE_BYTES, WINDOW};

/// What a run shows, for the claims' evidence.
pub(super) fn describe(name: &str, m: &Measured, n: usize) -> String {
    let r = &m.report;
    format!(
        "{name}: {} streams within 3 s (start-up {:.2} s at streams {}–{n}); {} volume \
         requests of {:.0} KB on average ({:.2} per call), {:.1} member requests each; \
         member requests of {:.0} KB, {:.0}% whole tracks, {:.2} ms of member head time \
         each, {:.0} µs of member head time per KB delivered; members busy {:.0}% of the \
         run (its load grows from one stream); {:.0} MB of read-ahead evicted before it \
         was read",
        within_limit(r),
        latency_around(r, n),
        n.saturating_sub(WINDOW) + 1,
        r.requests,
        r.sectors as f64 / 2.0 / r.requests.max(1) as f64,
        r.requests as f64 / r.calls_done.max(1) as f64,
        m.fan_out(),
        m.member_request_kb(),
        100.0 * m.whole_track_share(),
        m.member_request_ms(),
        m.member_us_per_delivered_kb(),
        100.0 * m.member_busy_share(),
        m.evicted_unread_mb(),
    )
}

/// How the scaling depends on the queue: the run with many volume requests out
/// (`counts`, `ratio`) against the one with one at a time (`shallow`).
pub(super) fn depth_sentence(
    counts: [usize; 3],
    shallow: [usize; 3],
    ratio: f64,
    ratio_shallow: f64,
) -> String {
    let moved = format!(
        "conventional {} -> {} streams, track-aligned {} -> {}",
        counts[0], shallow[0], counts[2], shallow[2]
    );
    let rest = "The 2 GB page cache is another part (next); what else keeps the scaling \
                below the members' cost ratio (a new stream's first call queued behind \
                whole-stripe requests is one candidate) is not isolated by these runs.";
    if ratio > ratio_shallow {
        format!(
            "Keeping many requests at the members is part of it: with one volume request \
             at a time, every member held until its slowest piece is done (below; \
             {moved}), the scaling is {ratio_shallow:.2}×. {rest}"
        )
    } else {
        format!(
            "The queue depth is not what keeps it down: with one volume request at a \
             time (below; {moved}) the scaling is {ratio_shallow:.2}×. {rest}"
        )
    }
}

/// What the 2 GB cache costs the track-aligned RAID-5 (`measured[2]`), from the
/// evidence run with a cache that holds every read-ahead (`large_cache`).
pub(super) fn cache_sentence(
    measured: &[Measured],
    large_cache: &Measured,
    counts: [usize; 3],
) -> String {
    let aligned = &measured[2];
    let large = within_limit(&large_cache.report);
    format!(
        "The cache: a track-aligned stream keeps up to two whole \
         stripes of read-ahead in the cache (the stripe it reads and the next), and near \
         the knee the streams' read-ahead outgrows it: {:.0} MB of the track-aligned \
         RAID-5's read-ahead ({:.1}% of the {:.0} MB it read) was evicted before a \
         stream read it, and read again when its stream reached it (conventional: \
         {:.0} MB, four-track window: {:.0} MB). With a {} GB cache ({:.0} MB of \
         read-ahead evicted unread), the track-aligned RAID-5 starts {large} streams \
         instead of {}: a scaling of {:.2}× against the same conventional run. The \
         paper ran with 2 GB of RAM (less the kernel's share), so a track-aligned \
         read-ahead as large as this one met the same bound there.",
        aligned.evicted_unread_mb(),
        100.0 * aligned.evicted_unread_mb() / aligned.read_mb().max(1e-9),
        aligned.read_mb(),
        measured[0].evicted_unread_mb(),
        measured[1].evicted_unread_mb(),
        EVIDENCE_CACHE_BYTES >> 30,
        large_cache.evicted_unread_mb(),
        counts[2],
        large as f64 / counts[0].max(1) as f64,
    )
}
