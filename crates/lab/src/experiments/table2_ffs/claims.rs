//! table2-ffs's claims: the paper's Table 2 and §5.3 numbers beside the run's,
//! each miss explained from the run.

use super::*;

/// §5.3: "unmodified FFS incurs 6.9 ms of overhead (seek + rotational latency +
/// track switch time) per request" in the diff.
const PAPER_DIFF_POSITIONING_UNMODIFIED_MS: f64 = 6.9;

/// `revolution_ms`: the testbed drive's revolution, for what the paper's
/// positioning leaves for its seek.
pub(super) fn claims(scans: &[Measured], diffs: &[Measured], revolution_ms: f64) -> Vec<Claim> {
    let source = "§5.3, Table 2";
    let [s_unmod, s_fast, s_trax] = [scans[0], scans[1], scans[2]];
    let [d_unmod, d_fast, d_trax] = [diffs[0], diffs[1], diffs[2]];
    let paper_ratio =
        |k: usize, which: fn((f64, f64)) -> f64| which(PAPER_SECONDS[k]) / which(PAPER_SECONDS[0]);
    let scan = |p: (f64, f64)| p.0;
    let diff = |p: (f64, f64)| p.1;
    // Per-track cost of each scan: a request's media transfer, rotation and
    // head switches, over the tracks it covers.
    let trax_per_request = s_trax.media_ms + s_trax.rotation_ms + s_trax.head_switch_ms;
    let unmod_switch = s_unmod.rotation_ms + s_unmod.head_switch_ms;
    let scan_note = format!(
        "Per request (drive breakdown): \
         unmodified FFS reads {:.0} KB in {:.2} ms of media transfer plus {:.2} ms of \
         rotation and head switch — the track switches inside its requests wait for the \
         Atlas 10K's 63-sector track skew (1.13 ms) to pass, as any sequential stream \
         must; traxtent FFS reads one traxtent ({:.0} KB) in {:.2} ms including {:.2} ms \
         rotation and {:.2} ms head switch: each request is a whole track less its \
         excluded block, so zero-latency access starts reading where the head lands after \
         the switch and the skew is never waited for. Per track the skew costs \
         unmodified FFS more than the excluded block (1 in {:.0} of the blocks) costs \
         traxtents. The paper instead says FFS 'reads at the maximum disk streaming rate' \
         and traxtents lose the excluded blocks: it implies the real drive streamed the \
         traxtent requests through its own prefetch (in LBN order, skew and excluded \
         sectors included) rather than as zero-latency track reads; the model's queued \
         next request always reaches the drive before the current one's media work ends, \
         so the drive never prefetches (no cache hits in either run). Not tuned.",
        s_unmod.mean_request_kb,
        s_unmod.media_ms,
        unmod_switch,
        s_trax.mean_request_kb,
        trax_per_request,
        s_trax.rotation_ms,
        s_trax.head_switch_ms,
        100.0 / s_trax.skipped_percent().max(1e-9),
    );
    vec![
        Claim::new(
            "scan, unmodified: bandwidth (MB/s)",
            source,
            "MB/s",
            4096.0 / PAPER_SECONDS[0].0,
            (SCAN_BLOCKS * 8) as f64 / 1024.0 / s_unmod.seconds,
        )
        .explain_if_missed(
            "Ours is the paper's 4 GB file from the drive's first group on; its rate \
             follows the zones it crosses (the catalog Atlas 10K's zone table, DIXtrac-\
             extracted).",
        ),
        Claim::new(
            "scan: fast start / unmodified time",
            source,
            "ratio",
            paper_ratio(1, scan),
            s_fast.seconds / s_unmod.seconds,
        ),
        Claim::new(
            "scan: traxtents / unmodified time",
            source,
            "ratio",
            paper_ratio(2, scan),
            s_trax.seconds / s_unmod.seconds,
        )
        .explain_if_missed(scan_note),
        Claim::with_tolerance(
            "scan: excluded blocks stepped over, % of the traxtent file's blocks",
            "§4.2.2, §5.3",
            "%",
            5.0,
            s_trax.skipped_percent(),
            Tolerance::Absolute(1.0),
        ),
        Claim::new(
            "diff: fast start / unmodified time",
            source,
            "ratio",
            paper_ratio(1, diff),
            d_fast.seconds / d_unmod.seconds,
        ),
        Claim::new(
            "diff: traxtents / unmodified time",
            source,
            "ratio",
            paper_ratio(2, diff),
            d_trax.seconds / d_unmod.seconds,
        )
        .explain_if_missed(format!(
            "Ours: unmodified {:.1} s against the paper's {:.1} s ({:+.0}%), traxtents \
             {:.1} s against {:.1} s ({:+.0}%). Every request of either variant seeks \
             between the two files ({:.2} ms unmodified, {:.2} ms traxtents). The paper's \
             traxtent FFS paid 2.2 ms per request for seek, rotation and head switch \
             together, less than our seek alone, so its two files lay closer together \
             than FreeBSD's rule puts them here. {}",
            d_unmod.seconds,
            PAPER_SECONDS[0].1,
            100.0 * (d_unmod.seconds / PAPER_SECONDS[0].1 - 1.0),
            d_trax.seconds,
            PAPER_SECONDS[2].1,
            100.0 * (d_trax.seconds / PAPER_SECONDS[2].1 - 1.0),
            d_unmod.seek_ms,
            d_trax.seek_ms,
            files_apart(&d_unmod, &d_trax)
        )),
        Claim::new(
            "diff: traxtents / unmodified I/O count",
            "§5.3",
            "ratio",
            PAPER_DIFF_IOS[2] / PAPER_DIFF_IOS[0],
            d_trax.requests as f64 / d_unmod.requests.max(1) as f64,
        ),
        Claim::new(
            "diff, traxtents: mean request size",
            "§5.3",
            "KB",
            160.0,
            d_trax.mean_request_kb,
        ),
        Claim::new(
            "diff, unmodified: mean request size",
            "§5.3 ('mostly 256 KB')",
            "KB",
            256.0,
            d_unmod.mean_request_kb,
        ),
        Claim::new(
            "diff, unmodified: positioning per request beyond media transfer",
            "§5.3",
            "ms",
            PAPER_DIFF_POSITIONING_UNMODIFIED_MS,
            d_unmod.positioning_ms(),
        )
        .explain_if_missed(format!(
            "Ours per request: seek {:.2} ms, rotation {:.2} ms, head switch {:.2} ms. \
             Each switch between the two 512 MB files is a seek plus a rotational wait; \
             the paper's 6.9 ms leaves {:.1} ms for its seek after half a revolution \
             ({:.2} ms) and our head switch, so its files lay closer than ours ({:.0} MB \
             apart on average; see the traxtent row).",
            d_unmod.seek_ms,
            d_unmod.rotation_ms,
            d_unmod.head_switch_ms,
            PAPER_DIFF_POSITIONING_UNMODIFIED_MS - revolution_ms / 2.0 - d_unmod.head_switch_ms,
            revolution_ms / 2.0,
            d_unmod.files_apart_mb
        )),
        Claim::new(
            "diff, traxtents: positioning per request beyond media transfer",
            "§5.3",
            "ms",
            2.2,
            d_trax.positioning_ms(),
        )
        .explain_if_missed(format!(
            "Ours per request: seek {:.2} ms (unmodified {:.2} ms), rotation {:.2} ms, \
             head switch {:.2} ms. A traxtent request starts where the head lands inside \
             its traxtent and wraps around the track, so every request waits while the \
             sectors of the track it does not read (the excluded blocks' parts at the \
             track's two ends) pass under the head. {}",
            d_trax.seek_ms,
            d_unmod.seek_ms,
            d_trax.rotation_ms,
            d_trax.head_switch_ms,
            files_apart(&d_unmod, &d_trax)
        )),
    ]
}

/// Where the diff's two files lie, measured, and how that departs from FreeBSD.
fn files_apart(unmodified: &Measured, traxtents: &Measured) -> String {
    format!(
        "Block k of the second file lies {:.0} MB from block k of the first on average \
         ({:.0} MB with traxtents): as FreeBSD's ffs_blkpref does, from its second \
         indirect block on, each of the second file's 16 MB pieces starts in the first \
         group with at least the average free count, which is past the first file's 32 \
         half-filled groups.",
        unmodified.files_apart_mb, traxtents.files_apart_mb
    )
}

pub(super) fn head_claims(heads: &[Measured]) -> Vec<Claim> {
    let source = "§5.3, Table 2 (head *)";
    let [unmodified, fast, traxtents] = [heads[0], heads[1], heads[2]];
    let per_request = |m: Measured| m.seconds * 1e3 / HEAD_FILES as f64;
    vec![
        Claim::new(
            "head *, unmodified: seconds",
            source,
            "s",
            PAPER_HEAD_SECONDS[0],
            unmodified.seconds,
        )
        .explain_if_missed(format!(
            "Ours per file: {:.2} ms ({} requests in all, mean {:.0} KB: the demand block \
             and FFS's one-block read-ahead in one cluster; per request seek {:.2} ms, \
             rotation {:.2} ms, media {:.2} ms). The paper predicts 5.6 ms per request \
             (a short seek and half a revolution). Ours is shorter because the model's \
             files lie one after another and nothing else is read: no inode or directory \
             blocks, no open/close CPU time, so the next file's first block is a short \
             way ahead of the head rather than at a random angle. (The paper disagrees \
             with itself here: Table 2 gives 4.6 s, its text 3.6 s, 'a 45% penalty for \
             traxtents (3.6 s vs. 5.2 s)'; ours misses both.)",
            per_request(unmodified),
            unmodified.requests,
            unmodified.mean_request_kb,
            unmodified.seek_ms,
            unmodified.rotation_ms,
            unmodified.media_ms
        )),
        Claim::new(
            "head *: traxtents / unmodified time",
            source,
            "ratio",
            PAPER_HEAD_SECONDS[2] / PAPER_HEAD_SECONDS[0],
            traxtents.seconds / unmodified.seconds,
        )
        .explain_if_missed(format!(
            "Ours per file: unmodified {:.2} ms, traxtents {:.2} ms (mean request {:.0} \
             vs {:.0} KB; media {:.2} vs {:.2} ms per request). The unmodified side is \
             short for the reasons of the line above, so the ratio is large; the \
             traxtent side fetches less than the paper's 'entire first traxtent (≈160 \
             KB)' because the model's allocator starts a file at the next free block, \
             not at a traxtent's start, so the first traxtent is clipped, and a cluster \
             stops at the indirect block after block 11 (96 KB). (Table 2's \
             5.2 / 4.6 s is the paper number here; its text's 5.2 / 3.6 s, the '45% \
             penalty', would be 1.44, which ours misses too.)",
            per_request(unmodified),
            per_request(traxtents),
            unmodified.mean_request_kb,
            traxtents.mean_request_kb,
            unmodified.media_ms,
            traxtents.media_ms
        )),
        Claim::new(
            "head *: fast start / unmodified time",
            source,
            "ratio",
            PAPER_HEAD_SECONDS[1] / PAPER_HEAD_SECONDS[0],
            fast.seconds / unmodified.seconds,
        )
        .explain_if_missed(format!(
            "Ours per file: fast start {:.2} ms (mean request {:.0} KB, {:.2} ms of media \
             transfer per request), unmodified {:.2} ms ({:.2} ms of media). Fast start \
             fetches a file's contiguous blocks on its first access: its first 12 (96 KB), \
             up to the indirect block FFS placed after them (a cluster is one contiguous \
             run, and FreeBSD's ufs_bmaparray ends a direct-block run at NDADDR = 12 \
             anyway). Its media transfer alone is {:.2} ms more per file than the \
             unmodified FFS's; the paper's fast start took {:.2} ms more per file in all \
             ({} vs {} s), so it cannot have fetched those blocks ahead of each next \
             file's read as the model does (the paper gives no breakdown).",
            per_request(fast),
            fast.mean_request_kb,
            fast.media_ms,
            per_request(unmodified),
            unmodified.media_ms,
            fast.media_ms - unmodified.media_ms,
            PAPER_HEAD_SECONDS[1] - PAPER_HEAD_SECONDS[0],
            PAPER_HEAD_SECONDS[1],
            PAPER_HEAD_SECONDS[0],
        )),
    ]
}
