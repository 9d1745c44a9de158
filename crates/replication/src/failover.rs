//! Failover trials: a disaster at a random instant of the power-aware timeline.
//!
//! Recovery = finish or abort the transition in progress (a spin-up in progress
//! finishes; a spin-down in progress finishes and the drives spin up again), spin
//! up if asleep, then apply every record the secondary's log volume holds and the
//! data volume does not. The apply time is measured, not assumed: it is the time
//! the timeline's own windows covering those records took. A window that was being
//! applied at the disaster is finished: the sweep goes on as simulated, so it costs
//! the rest of its measured time. The last window, which holds only part of its records
//! at the disaster (the rest arrived later), is charged the time its own prefix
//! took when the timeline applied it alone from the state the window started from
//! ([`crate::timeline::PREFIX_CUTS`]): the shortest measured prefix that holds the
//! part. That assumes only that applying a subset of a prefix's records is no
//! slower than applying the prefix (its pages are a subset of the prefix's pages).
//! Until 2026-11-28 the part was charged the fastest of all timeline windows at
//! least its size, which picked the luckiest window, not its own.
//!
//! **RPO is bookkeeping here, not a test.** A transaction is acknowledged one
//! inter-site latency after its last record reached the secondary's log volume;
//! lost = acknowledged transactions whose records the log volume does not hold at
//! the disaster. The arrivals are one function of time, so acknowledged ≤ held for
//! every instant and the count is zero by construction: the trials restate the
//! synchronous protocol, they exercise no log write in flight. The count is kept
//! (it is what the study reports), and the reports say it cannot fail.

use crate::timeline::{Arrivals, Timeline};
use serde::Serialize;
use spinstack_sim::rng::SplitMix64;
use spinstack_sim::units::Nanoseconds;

/// The outcome of all trials of one configuration.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Trials {
    /// Disasters at random instants.
    pub trials: u32,
    /// Disasters at each measured cycle's edges, beyond `trials`: just before its
    /// spin-up is ordered (the largest backlog, asleep) and as its spin-down is
    /// ordered (the longest transition penalty). Random instants come within a
    /// fraction of a second of these and miss them.
    pub at_cycle_edges: u32,
    pub rto_violations: u32,
    pub rpo_lost_transactions: u64,
    pub worst_recovery_s: f64,
    /// An upper bound: a part of a window beyond its largest measured prefix is
    /// charged the whole window (see [`crate::timeline::PREFIX_CUTS`]).
    pub mean_recovery_s: f64,
    /// Trials whose unapplied log reached past the measured windows (charged at
    /// the calibrated rate instead).
    pub charged_at_calibrated_rate: u32,
}

/// What the trials need beyond the timeline.
pub struct TrialConfig {
    pub trials: u32,
    pub seed: u64,
    pub rto: Nanoseconds,
    pub spin_up: Nanoseconds,
    pub spin_down: Nanoseconds,
    pub inter_site_latency: Nanoseconds,
    pub calibrated_bytes_per_s: f64,
}

/// Time lost to the power state at `at` before the drives can apply.
fn transition_penalty(timeline: &Timeline, config: &TrialConfig, at: Nanoseconds) -> Nanoseconds {
    let index = timeline
        .cycles
        .partition_point(|c| c.spin_up_ordered <= at)
        .saturating_sub(1);
    let cycle = timeline.cycles[index];
    if !cycle.sleeps {
        return Nanoseconds::ZERO;
    }
    if at < cycle.spin_up_ordered {
        // Before the first cycle: asleep.
        return config.spin_up;
    }
    if at < cycle.ready {
        return cycle.ready - at;
    }
    if at < cycle.applied {
        return Nanoseconds::ZERO;
    }
    let asleep = cycle.applied + config.spin_down;
    if at < asleep {
        return (asleep - at) + config.spin_up;
    }
    config.spin_up
}

/// Run `config.trials` disasters uniformly over the measured span (after the
/// warm-up cycle), then one at each edge of every measured cycle (see
/// [`Trials::at_cycle_edges`]).
pub fn run_trials(timeline: &Timeline, arrivals: &Arrivals, config: &TrialConfig) -> Trials {
    let mut rng = SplitMix64::for_label(config.seed, "failover");
    let mut out = Trials {
        trials: config.trials,
        at_cycle_edges: 0,
        rto_violations: 0,
        rpo_lost_transactions: 0,
        worst_recovery_s: 0.0,
        mean_recovery_s: 0.0,
        charged_at_calibrated_rate: 0,
    };
    let from = timeline.measured_from;
    let random = (0..config.trials).map(|_| from + Nanoseconds(rng.below(timeline.span.0.max(1))));
    let edges = cycle_edges(timeline);
    out.at_cycle_edges = edges.len() as u32;
    let mut total = 0.0;
    for at in random.chain(edges) {
        let held = arrivals.arrived(at);
        let (apply, beyond_windows) = time_to_apply(timeline, arrivals, config, at);
        out.charged_at_calibrated_rate += u32::from(beyond_windows);
        let recovery = transition_penalty(timeline, config, at) + apply;
        if recovery > config.rto {
            out.rto_violations += 1;
        }
        let acknowledged = arrivals
            .transactions_in(arrivals.arrived(at.saturating_sub(config.inter_site_latency)));
        let recovered = arrivals.transactions_in(held);
        out.rpo_lost_transactions += acknowledged.saturating_sub(recovered);
        let seconds = recovery.as_secs_f64();
        out.worst_recovery_s = out.worst_recovery_s.max(seconds);
        total += seconds;
    }
    out.mean_recovery_s = total / f64::from((out.trials + out.at_cycle_edges).max(1));
    out
}

/// The instants just before each measured cycle's spin-up order and at its spin-down
/// order (see [`Trials::at_cycle_edges`]), inside the measured span.
fn cycle_edges(timeline: &Timeline) -> Vec<Nanoseconds> {
    let (from, to) = (
        timeline.measured_from,
        timeline.measured_from + timeline.span,
    );
    timeline
        .cycles
        .iter()
        .filter(|c| c.sleeps)
        .flat_map(|c| [c.spin_up_ordered.saturating_sub(Nanoseconds(1)), c.applied])
        .filter(|&at| from <= at && at < to)
        .collect()
}

/// How long applying everything held at `at` and not yet applied takes (see the
/// module documentation), and whether some of it lay past the measured windows
/// (charged at the calibrated rate).
fn time_to_apply(
    timeline: &Timeline,
    arrivals: &Arrivals,
    config: &TrialConfig,
    at: Nanoseconds,
) -> (Nanoseconds, bool) {
    let held = arrivals.arrived(at);
    let applied = timeline
        .windows
        .partition_point(|w| w.applied.finished <= at);
    let mut covered = applied
        .checked_sub(1)
        .map_or(0, |i| timeline.windows[i].end);
    let mut apply = Nanoseconds::ZERO;
    for window in &timeline.windows[applied..] {
        if window.start >= held {
            break;
        }
        apply += if window.applied.started <= at {
            // In progress at the disaster: the rest of the sweep.
            window.applied.finished - at
        } else if window.end > held {
            window.time_to_apply_up_to(held)
        } else {
            window.applied.finished - window.applied.started
        };
        covered = window.end;
    }
    if covered >= held {
        return (apply, false);
    }
    let bytes = arrivals.bytes_between(covered, held) as f64;
    let rest = Nanoseconds((bytes / config.calibrated_bytes_per_s * 1e9) as u64);
    (apply + rest, true)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::apply::AppliedWindow;
    use crate::compact::CompactionCounts;
    use crate::log::{LogRecord, Lsn, PageId, RecordId, RecordKind};
    use crate::timeline::{Cycle, PrefixTime, Timeline, TimelineWindow};

    const SECOND: Nanoseconds = Nanoseconds(1_000_000_000);

    fn seconds(s: u64) -> Nanoseconds {
        Nanoseconds(s * SECOND.0)
    }

    /// A window of records [start, end) applied from `started` for `took` seconds.
    fn window(start: u64, end: u64, started: u64, took: u64) -> TimelineWindow {
        TimelineWindow {
            start,
            end,
            applied: AppliedWindow {
                counts: CompactionCounts::default(),
                page_ios: 0,
                requests: 0,
                started: seconds(started),
                finished: seconds(started + took),
            },
            prefixes: None,
        }
    }

    /// Disasters all at `at_s` on a timeline of two windows, the drives never asleep
    /// (no transition penalty): what recovery each is charged.
    fn recovery_at(at_s: u64) -> Trials {
        let records = one_a_second();
        let arrivals = Arrivals::new(&records, 1_000.0, 0.0);
        // The window a disaster before 600 s finds partly arrived took 100 s whole;
        // its own prefixes of 1/16 and 1/4 took 40 and 60 s. The next window is as long in
        // bytes and took 10 s (a luckier window).
        let mut own = window(0, 500, 600, 100);
        let cut = |end, took| PrefixTime {
            end,
            time: seconds(took),
        };
        own.prefixes = Some([cut(32, 40), cut(125, 60)]);
        let timeline = Timeline {
            cycles: vec![Cycle {
                spin_up_ordered: Nanoseconds::ZERO,
                ready: Nanoseconds::ZERO,
                applied: seconds(1_210),
                sleeps: false,
            }],
            windows: vec![own, window(500, 1_000, 1_200, 10)],
            energy: Vec::new(),
            measured_from: seconds(at_s),
            span: Nanoseconds(1),
            fell_behind: false,
        };
        run_trials(&timeline, &arrivals, &config())
    }

    /// 2,000 records of 1,000 bytes; at 1,000 bytes a second, one arrives a second.
    fn one_a_second() -> Vec<LogRecord> {
        (0..2_000)
            .map(|i| LogRecord {
                lsn: Lsn(i),
                record: RecordId(i),
                page: PageId(i),
                bytes: 1_000,
                kind: RecordKind::Update,
                ends_transaction: true,
            })
            .collect()
    }

    fn config() -> TrialConfig {
        TrialConfig {
            trials: 10,
            seed: 1,
            rto: seconds(50),
            spin_up: seconds(26),
            spin_down: seconds(15),
            inter_site_latency: Nanoseconds(1_000_000),
            calibrated_bytes_per_s: 1e9,
        }
    }

    // Guards the failover finding of 2026-11-28: a partly arrived window was charged
    // the fastest of all windows at least as long as the part (here the 10 s one), not
    // its own time. Proves that the part is charged its own window's shortest
    // measured prefix that holds it (30 records: the 32-record prefix, 40 s; 100
    // records: the 125-record one, 60 s), or its whole time past the last cut (450
    // records: 100 s), and that those over the RTO count as violations.
    #[test]
    fn a_partly_arrived_window_is_charged_its_own_prefix() {
        let first_cut = recovery_at(30);
        assert_eq!(first_cut.worst_recovery_s, 40.0, "{first_cut:?}");
        assert_eq!(first_cut.rto_violations, 0);
        let second_cut = recovery_at(100);
        assert_eq!(second_cut.worst_recovery_s, 60.0, "{second_cut:?}");
        assert_eq!(second_cut.rto_violations, 10);
        let past_the_cuts = recovery_at(450);
        assert_eq!(past_the_cuts.worst_recovery_s, 100.0, "{past_the_cuts:?}");
    }

    // Guards the failover finding of 2026-11-28 that random instants miss each
    // cycle's worst ones by a fraction of a second. Proves that with no random trial
    // at all, the trials still include the instant just before each spin-up order and
    // the instant of each spin-down order inside the measured span, and charge the
    // latter the whole transition penalty (spin-down 15 s, spin-up 26 s) on top of
    // the next window's 74 s.
    #[test]
    fn the_cycles_edges_are_always_tried() {
        let records = one_a_second();
        let arrivals = Arrivals::new(&records, 1_000.0, 0.0);
        let cycle = |order: u64, applied: u64| Cycle {
            spin_up_ordered: seconds(order),
            ready: seconds(order + 26),
            applied: seconds(applied),
            sleeps: true,
        };
        let timeline = Timeline {
            cycles: vec![cycle(0, 100), cycle(600, 700), cycle(1_500, 1_600)],
            windows: vec![
                window(0, 100, 26, 74),
                window(100, 626, 626, 74),
                window(626, 1_500, 1_526, 74),
            ],
            energy: Vec::new(),
            measured_from: seconds(500),
            span: seconds(1_000),
            fell_behind: false,
        };
        let config = TrialConfig {
            trials: 0,
            ..config()
        };
        let trials = run_trials(&timeline, &arrivals, &config);
        assert_eq!(trials.at_cycle_edges, 3, "{trials:?}");
        assert_eq!(trials.worst_recovery_s, 115.0, "{trials:?}");
        assert_eq!(trials.rto_violations, 3, "{trials:?}");
    }
}
