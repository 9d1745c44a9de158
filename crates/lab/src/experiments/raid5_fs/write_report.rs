//! The write phase's rows, bars, claim and notes in `raid5-bonnie`.

use super::write::WriteMeasured;
use super::{write_source, Measured, WritePhase, CONVENTIONAL, TRACK_ALIGNED, VARIANTS};
use crate::claim::{Claim, Tolerance};
use crate::plot::{Figure, Panel, PanelContent};
use crate::table::DataTable;

const WORKLOAD: &str = "bonnie block write 1 GB";

/// The members' figures of a write run, through the read phase's accounting
/// (the busy share over the time to the last write).
fn member_view(m: &WriteMeasured) -> Measured {
    Measured {
        seconds: m.all_written_seconds,
        members: m.members.clone(),
        ..Measured::default()
    }
}

/// One row per variant, in the read rows' columns (`cpu_seconds` is the
/// writer's; `member_busy_share` is over the time to the last write).
pub(super) fn push_rows(data: &mut DataTable, writes: &WritePhase) {
    let rows = VARIANTS
        .iter()
        .map(|v| v.name.to_string())
        .zip(&writes.per_variant)
        .chain(std::iter::once((
            format!("{} (evidence)", undelayed_name()),
            &writes.undelayed,
        )));
    for (name, m) in rows {
        let members = member_view(m);
        data.push(vec![
            WORKLOAD.into(),
            name.into(),
            m.seconds.into(),
            m.megabytes_per_second.into(),
            m.requests.into(),
            m.mean_request_kb.into(),
            m.mean_request_ms.into(),
            (members.member_requests() as u64).into(),
            members.mean_member_request_kb().into(),
            members.whole_track_share().into(),
            members.crossing_share().into(),
            m.member_busy_share().into(),
            members.member_us_per_kb().into(),
            m.cpu_seconds.into(),
            m.member_io_cpu_seconds.into(),
            0u64.into(),
            m.throttled_seconds.into(),
            m.full_stripe_share().into(),
            m.pre_read_mb().into(),
        ]);
    }
}

fn undelayed_name() -> &'static str {
    "track-aligned, stripe writes planned on arrival (md's delayed stripes off)"
}

/// The headline panel gets a write bar beside each read bar; a panel shows
/// where each write's time went.
pub(super) fn add_to_figure(figure: &mut Figure, writes: &WritePhase) {
    let per_variant = &writes.per_variant;
    if let Some(PanelContent::Bars(bars)) = figure.panels.first_mut().map(|p| &mut p.content) {
        if let Some((name, _)) = bars.components.first_mut() {
            *name = "block read".to_string();
        }
        bars.components.push((
            "block write (to the close)".to_string(),
            per_variant.iter().map(|m| m.megabytes_per_second).collect(),
        ));
    }
    if let Some(panel) = figure.panels.first_mut() {
        panel.title =
            "Bonnie sequential block read and write bandwidth (1 GB file, five-member RAID-5)"
                .to_string();
    }
    let Some(template) = figure.panels.get(1) else {
        return;
    };
    let split = vec![
        (
            "writer CPU (calls, copies)".to_string(),
            per_variant.iter().map(|m| m.cpu_seconds).collect(),
        ),
        (
            "writer throttled (write-back behind)".to_string(),
            per_variant.iter().map(|m| m.throttled_seconds).collect(),
        ),
        (
            "writer waiting otherwise".to_string(),
            per_variant
                .iter()
                .map(WriteMeasured::other_seconds)
                .collect(),
        ),
    ];
    let mut panel: Panel = template.clone();
    panel.title = "Where the write's time went (first write to close)".to_string();
    if let PanelContent::Bars(bars) = &mut panel.content {
        bars.components = split;
    }
    if let Some(read_panel) = figure.panels.get_mut(1) {
        read_panel.title = "Where the read's time went".to_string();
    }
    figure.panels.push(panel);
}

/// One write run's account.
fn account(m: &WriteMeasured) -> String {
    format!(
        "{:.2} s ({:.1} MB/s) = {:.2} s writer CPU + {:.2} s throttled + {:.2} s other; {} \
         write-back requests of {:.0} KB mean ({:.1} ms each); {} stripe writes, {:.1}% full \
         ({} read-modify-write, {} reconstruct-write), {:.0} MB read before writing; {:.1} \
         MB not yet on the members at the close, all written by {:.1} s; members busy \
         {:.0}% until then",
        m.seconds,
        m.megabytes_per_second,
        m.cpu_seconds,
        m.throttled_seconds,
        m.other_seconds(),
        m.requests,
        m.mean_request_kb,
        m.mean_request_ms,
        m.stripe_writes(),
        100.0 * m.full_stripe_share(),
        m.stripes.read_modify_write,
        m.stripes.reconstruct_write,
        m.pre_read_mb(),
        m.unwritten_at_close_mb,
        m.all_written_seconds,
        100.0 * m.member_busy_share(),
    )
}

/// Mean time a stripe write waited delayed, and mean time a released one took
/// to pre-read, in ms.
fn delay_means(m: &WriteMeasured) -> (f64, f64) {
    let s = &m.stripes;
    let released = s.released_by_timer + s.released_by_unplug + s.released_after_pre_reads;
    (
        s.delayed_time.as_secs_f64() * 1e3 / s.delayed.max(1) as f64,
        s.released_pre_read_time.as_secs_f64() * 1e3 / released.max(1) as f64,
    )
}

/// How md's delayed stripes went in a write run.
fn delay_account(m: &WriteMeasured) -> String {
    let s = &m.stripes;
    let (waited, pre_read) = delay_means(m);
    format!(
        "{} stripe writes delayed, {:.1} ms each on average ({} released by the \
         array's 3 ms plug timer, {} by unplugs of the volume, {} once the batch \
         released before had pre-read; a released one took {:.1} ms to pre-read), \
         {} writes joined a delayed one, {} delayed stripe writes left with nothing \
         to read",
        s.delayed,
        waited,
        s.released_by_timer,
        s.released_by_unplug,
        s.released_after_pre_reads,
        pre_read,
        s.joined,
        s.filled_while_delayed,
    )
}

/// What bounds the conventional RAID-5's writer, as the run shows it: its CPU when
/// it waits in the throttle for under a tenth of the run.
fn conventional_bound(m: &WriteMeasured) -> String {
    if m.throttled_seconds < 0.1 * m.seconds {
        "no pre-reads, and its writer is CPU-bound".to_string()
    } else {
        format!(
            "no pre-reads, yet its writer waits {:.2} s of {:.2} s in the throttle: write-back \
             to the members is slower than the writer's CPU",
            m.throttled_seconds, m.seconds
        )
    }
}

/// The write claim: "within a similar range" as track-aligned / conventional ≈ 1.
pub(super) fn claim(writes: &WritePhase) -> Claim {
    let index = |v: super::Variant| VARIANTS.iter().position(|w| w.name == v.name);
    let (Some(c), Some(t)) = (index(CONVENTIONAL), index(TRACK_ALIGNED)) else {
        unreachable!("both variants are in VARIANTS");
    };
    let [conventional, aligned] = [&writes.per_variant[c], &writes.per_variant[t]];
    let undelayed = &writes.undelayed;
    let full_share = |m: &WriteMeasured| 100.0 * m.full_stripe_share();
    Claim::with_tolerance(
        "Bonnie write: track-aligned / conventional RAID-5 bandwidth",
        "§3, Fig. 8 ('within a similar range due to buffered writes')",
        "ratio",
        1.0,
        aligned.megabytes_per_second / conventional.megabytes_per_second,
        Tolerance::Relative(0.10),
    )
    .explain_if_missed(format!(
        "Conventional: {}. Track-aligned: {}. The conventional RAID-5's 4 KB chunks make \
         each 1 MiB write-back request 64 full stripes: {}. The track-aligned stripe \
         holds about 2.2 MB of data and ext2 leaves the blocks crossing its boundaries \
         unallocated, so write-back reaches each stripe as two or three requests that \
         stop at its boundaries, and {:.1}% of its stripe writes are full. md 2.6.16 \
         delays a stripe write that needs pre-reads until the array's plug releases \
         it, so the rest of the stripe can join it: {}; the pre-reads are {:.0} MB \
         (a stripe joined whole still reads the few sectors ext2 left unallocated \
         at its ends; one released before its rest arrived reads more). Without \
         the delay (evidence: each stripe write planned on arrival) the track-aligned \
         RAID-5 writes {}, and the ratio is {:.3}: the pre-reads put {:.0} MB on the \
         members. What remains with the delay: the track-aligned writer waits {:.2} s \
         in the throttle against {:.2} s; its write-back requests take {:.1} ms from \
         issue to completion against {:.1} ms: a stripe write waits {:.1} ms delayed \
         on average, mostly for the batch released before it to pre-read (md \
         releases one batch at a time), and a batch's few small reads take {:.1} ms, \
         queued at the members behind the write-back sent before them (an \
         inference: the model's members serve reads and writes in one queue, with \
         no read-first elevator such as 2.6.16's default anticipatory one below \
         md); it also sends {} requests of {:.0} KB mean against {} of {:.0} KB, \
         as they stop at stripe boundaries. The paper's similar write bars fit \
         writers bound alike on every volume (by the host's CPU, or by write-back \
         of full stripes).",
        account(conventional),
        account(aligned),
        conventional_bound(conventional),
        full_share(aligned),
        delay_account(aligned),
        aligned.pre_read_mb(),
        account(undelayed),
        undelayed.megabytes_per_second / conventional.megabytes_per_second,
        undelayed.pre_read_mb(),
        aligned.throttled_seconds,
        conventional.throttled_seconds,
        aligned.mean_request_ms,
        conventional.mean_request_ms,
        delay_means(aligned).0,
        delay_means(aligned).1,
        aligned.requests,
        aligned.mean_request_kb,
        conventional.requests,
        conventional.mean_request_kb,
    ))
}

/// The setup and one evidence line per distinct write run.
pub(super) fn notes(writes: &WritePhase) -> Vec<String> {
    let setup = "Write phase: Bonnie's block write (16 KB writes, Bonnie.c's Chunk) of the \
        1 GB file with 128 MB, timed from the first write to the close with no fsync, as \
        Bonnie times it (data still dirty at the close counts as written). Linux 2.6.16 \
        write-back as ext2-bonnie's write phase (mm/page-writeback.c: 30 s expiry, 5 s \
        period, 10% background, 40% throttle of the cache, 1024-page passes; requests up \
        to 1 MiB), ext2 allocating as it writes (the same allocators as the read phase), \
        the members' write caches on (DiskSim fast-write level 2; §2.5 'We enabled SCSI \
        cache, disk caching, and prefetch', assumed to hold for §3) and the track-aligned \
        RAID-5's prefetch off as in the read phase, the timed RAID-5's \
        stripe cache of 256 stripes (md's NR_STRIPES counts 4 KB-per-member \
        stripe_heads: the same with 4 KB chunks, under two track-aligned stripes), \
        each stripe piece a full-stripe \
        write, or read-modify-write or reconstruct-write, whichever reads less; a piece \
        that must read waits as md 2.6.16 delays it (drivers/md/raid5.c STRIPE_DELAYED: \
        released when the array's plug goes, 3 ms after it was plugged or when the \
        volume is unplugged, and only once the batch released before has pre-read, md's \
        IO_THRESHOLD of 1), and later pieces of its stripe join it. CPU per \
        write call as per read call (the read phase's host). Read-ahead does not touch the \
        write path: the four-track window writes exactly as the conventional RAID-5 (one \
        run serves both), so its write ratio to the conventional one is 1 by \
        construction, not a finding."
        .to_string();
    let mut lines = Vec::new();
    for (index, variant) in VARIANTS.iter().enumerate() {
        let source = write_source(index);
        if source == index {
            let m = &writes.per_variant[index];
            let delays = if m.stripes.delayed > 0 {
                format!("; {}", delay_account(m))
            } else {
                String::new()
            };
            lines.push(format!("{}: {}{delays}", variant.name, account(m)));
        } else {
            lines.push(format!(
                "{}: as {} (same write path)",
                variant.name, VARIANTS[source].name
            ));
        }
    }
    lines.push(format!(
        "{} (evidence): {}",
        undelayed_name(),
        account(&writes.undelayed)
    ));
    vec![
        setup,
        format!("Where each write's time went. {}.", lines.join(". ")),
    ]
}
