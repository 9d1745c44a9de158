//! ext2-streams' trials: what one run measured, and the statistics over the
//! trials (each trial's knee, their median, 10-stream means near a stream
//! count over the trials that got there) that the claims and the evidence use.

use super::{GIVE_UP_S, WINDOW};
use spinstack_fs::streams::{StartUp, StreamReport};
use spinstack_sim::units::Nanoseconds;
use spinstack_volume::timed::MemberStats;

/// One variant's run: what the streams saw and what the drive did.
pub(super) struct Measured {
    pub(super) report: StreamReport,
    pub(super) drive: MemberStats,
    /// Tracks the file spans, and of them those holding one of its indirect
    /// blocks (a track-aligned window there is two requests).
    pub(super) tracks: u64,
    pub(super) tracks_with_indirect: u64,
}

/// Streams that started within the limit (those before the first that did not).
pub(super) fn within_limit(report: &StreamReport) -> usize {
    report.started_within(Nanoseconds::from_ms(GIVE_UP_S * 1000))
}

/// Mean of `values` over the `WINDOW` streams ending at stream `n`.
pub(super) fn mean_around<T: Copy>(values: &[T], n: usize, as_f64: impl Fn(T) -> f64) -> f64 {
    let end = n.min(values.len());
    let start = end.saturating_sub(WINDOW);
    let slice = &values[start..end];
    slice.iter().map(|&v| as_f64(v)).sum::<f64>() / slice.len().max(1) as f64
}

pub(super) fn latency_around(report: &StreamReport, n: usize) -> f64 {
    mean_around(&report.startup_latency(), n, |l| l.as_secs_f64())
}

/// Whether a trial started stream `n` and saw its first call return (a trial
/// stops at its first start-up over 3 s).
pub(super) fn reached(m: &Measured, n: usize) -> bool {
    m.report.startup_latency().len() >= n
}

/// Median of a non-empty list (the mean of the middle two for an even count).
pub(super) fn median(values: &[f64]) -> f64 {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let middle = sorted.len() / 2;
    if sorted.len().is_multiple_of(2) {
        (sorted[middle - 1] + sorted[middle]) / 2.0
    } else {
        sorted[middle]
    }
}

/// Each trial's knee: the streams it started within 3 s.
pub(super) fn knees(trials: &[Measured]) -> Vec<f64> {
    trials
        .iter()
        .map(|m| within_limit(&m.report) as f64)
        .collect()
}

/// What one variant's start-ups looked like near stream `n`, averaged over the
/// trials that reached it (`trials` counts them; the figures are NaN if none did).
pub(super) struct Near {
    pub(super) trials: usize,
    pub(super) latency_s: f64,
    pub(super) first_byte_s: f64,
    pub(super) waits: f64,
    pub(super) queued: f64,
    /// Over the whole runs: requests' mean size, the drive's time per request
    /// (busy time over requests), requests per call, calls' mean time, the time
    /// the drive was busy and the requests out on average.
    pub(super) request_kb: f64,
    pub(super) request_ms: f64,
    pub(super) requests_per_call: f64,
    pub(super) call_s: f64,
    pub(super) busy_share: f64,
    pub(super) in_flight: f64,
}

pub(super) fn near(trials: &[Measured], n: usize) -> Near {
    let reaching: Vec<&Measured> = trials.iter().filter(|m| reached(m, n)).collect();
    let mean = |f: &dyn Fn(&Measured) -> f64| {
        reaching.iter().map(|m| f(m)).sum::<f64>() / reaching.len() as f64
    };
    let of_startups =
        |f: fn(StartUp) -> f64| mean(&|m: &Measured| mean_around(&m.report.startups, n, f));
    Near {
        trials: reaching.len(),
        latency_s: mean(&|m: &Measured| latency_around(&m.report, n)),
        first_byte_s: of_startups(|s| s.first_byte.map_or(0.0, |f| f.as_secs_f64())),
        waits: of_startups(|s| f64::from(s.disk_waits)),
        queued: of_startups(|s| s.queued_at_start as f64),
        request_kb: mean(&|m: &Measured| {
            m.report.sectors as f64 / 2.0 / m.report.requests.max(1) as f64
        }),
        request_ms: mean(&|m: &Measured| {
            m.drive.busy.as_secs_f64() * 1e3 / m.drive.completed.max(1) as f64
        }),
        requests_per_call: mean(&|m: &Measured| {
            m.report.requests as f64 / m.report.calls_done.max(1) as f64
        }),
        call_s: mean(&|m: &Measured| {
            m.report.call_time.as_secs_f64() / m.report.calls_done.max(1) as f64
        }),
        busy_share: mean(&|m: &Measured| {
            m.drive.busy.as_secs_f64() / m.report.ended.as_secs_f64().max(1e-9)
        }),
        in_flight: mean(&|m: &Measured| m.report.mean_in_flight()),
    }
}

/// The cut in mean start-up latency near stream `n` against conventional ext2.
pub(super) fn cut(by_variant: &[Vec<Measured>], k: usize, n: usize) -> f64 {
    let base = near(&by_variant[0], n).latency_s;
    100.0 * (1.0 - near(&by_variant[k], n).latency_s / base.max(1e-12))
}

/// What the trials show near stream `n`, for the claims' evidence.
pub(super) fn describe(name: &str, trials: &[Measured], n: usize) -> String {
    let knees = knees(trials);
    let (low, high) = knees
        .iter()
        .fold((f64::MAX, 0.0f64), |(lo, hi), &k| (lo.min(k), hi.max(k)));
    let at = near(trials, n);
    format!(
        "{name}: {:.0} streams within 3 s (median of {} trials, {low:.0}–{high:.0}); \
         streams {}–{n} (the {} trials that got there): start-up {:.2} s (first byte \
         {:.2} s), {:.1} disk waits in the first call, {:.0} requests out when each \
         started ({:.0} on average over the runs); calls took {:.2} s on average, \
         {:.2} requests of {:.0} KB on average per call, the drive busy {:.1} ms per \
         request, {:.0}% of the time",
        median(&knees),
        trials.len(),
        n.saturating_sub(WINDOW) + 1,
        at.trials,
        at.latency_s,
        at.first_byte_s,
        at.waits,
        at.queued,
        at.in_flight,
        at.call_s,
        at.requests_per_call,
        at.request_kb,
        at.request_ms,
        100.0 * at.busy_share,
    )
}

/// The stream that ended each trial (its first call over 3 s) against the
/// streams just before it: whether the knee is the top of a rising curve or
/// one stream left waiting.
pub(super) struct Crossing {
    /// Trials that ended on such a stream (not at the cap).
    pub(super) trials: usize,
    /// Mean start-up latency of the `WINDOW` streams before it, seconds.
    pub(super) before_s: f64,
    /// Of those trials, the ones whose crossing stream had no byte within 3 s
    /// (its first request still waiting), and the mean first byte of the others.
    pub(super) no_byte: usize,
    pub(super) first_byte_s: f64,
    /// Requests out when it started, on average.
    pub(super) queued: f64,
}

pub(super) fn crossing(trials: &[Measured]) -> Crossing {
    let limit = Nanoseconds::from_ms(GIVE_UP_S * 1000);
    let mut out = Crossing {
        trials: 0,
        before_s: 0.0,
        no_byte: 0,
        first_byte_s: 0.0,
        queued: 0.0,
    };
    let mut with_byte = 0usize;
    for m in trials {
        let knee = within_limit(&m.report);
        let Some(stream) = m.report.startups.get(knee) else {
            continue;
        };
        out.trials += 1;
        out.before_s += latency_around(&m.report, knee);
        out.queued += stream.queued_at_start as f64;
        match stream.first_byte.filter(|&at| at <= limit) {
            Some(at) => {
                with_byte += 1;
                out.first_byte_s += at.as_secs_f64();
            }
            None => out.no_byte += 1,
        }
    }
    let count = out.trials.max(1) as f64;
    out.before_s /= count;
    out.queued /= count;
    out.first_byte_s /= with_byte.max(1) as f64;
    out
}
