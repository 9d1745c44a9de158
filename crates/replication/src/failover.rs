//! Failover trials: a disaster at a random instant of the power-aware timeline.
//!
//! Recovery = finish or abort the transition in progress (a spin-up in progress
//! finishes; a spin-down in progress finishes and the drives spin up again), spin
//! up if asleep, then apply every record the secondary's log volume holds and the
//! data volume does not. The apply time is measured, not assumed: it is the time
//! the timeline's own windows covering those records took. A window that was being
//! applied at the disaster is finished: the sweep goes on as simulated, so it costs
//! the rest of its measured time. The last window, which holds only part of its records
//! at the disaster (the rest arrived later), is charged the least of its own time
//! and the time of every timeline window at least as long in log bytes as the part
//! held: a window of fewer bytes of the same log applies no slower than a longer
//! one (its pages are a subset's worth; assumed of a stationary log, and the
//! timeline's windows are all of the same log).
//!
//! RPO: a transaction is acknowledged one inter-site latency after its last record
//! reached the secondary's log volume. Lost = acknowledged transactions whose
//! records the log volume does not hold at the disaster; synchronous shipping makes
//! it zero, and every trial checks it.

use crate::timeline::{Arrivals, Timeline};
use serde::Serialize;
use spinstack_sim::rng::SplitMix64;
use spinstack_sim::units::Nanoseconds;

/// The outcome of all trials of one configuration.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Trials {
    pub trials: u32,
    pub rto_violations: u32,
    pub rpo_lost_transactions: u64,
    pub worst_recovery_s: f64,
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
/// warm-up cycle).
pub fn run_trials(timeline: &Timeline, arrivals: &Arrivals, config: &TrialConfig) -> Trials {
    let mut rng = SplitMix64::for_label(config.seed, "failover");
    let mut out = Trials {
        trials: config.trials,
        rto_violations: 0,
        rpo_lost_transactions: 0,
        worst_recovery_s: 0.0,
        mean_recovery_s: 0.0,
        charged_at_calibrated_rate: 0,
    };
    // Measured windows by log bytes, with the least time of any at least that long.
    let mut by_bytes: Vec<(u64, Nanoseconds)> = timeline
        .windows
        .iter()
        .map(|w| {
            (
                arrivals.bytes_between(w.start, w.end),
                w.applied.finished - w.applied.started,
            )
        })
        .collect();
    by_bytes.sort_unstable();
    for index in (0..by_bytes.len().saturating_sub(1)).rev() {
        by_bytes[index].1 = by_bytes[index].1.min(by_bytes[index + 1].1);
    }
    let bound = |bytes: u64| {
        let at = by_bytes.partition_point(|&(b, _)| b < bytes);
        by_bytes.get(at).map(|&(_, time)| time)
    };
    let mut total = 0.0;
    for _ in 0..config.trials {
        let at = timeline.measured_from + Nanoseconds(rng.below(timeline.span.0.max(1)));
        let held = arrivals.arrived(at);
        let applied = timeline
            .windows
            .partition_point(|w| w.applied.finished <= at);
        let applied_to = applied
            .checked_sub(1)
            .map_or(0, |i| timeline.windows[i].end);
        let mut apply = Nanoseconds::ZERO;
        let mut covered = applied_to;
        for window in &timeline.windows[applied..] {
            if window.start >= held {
                break;
            }
            let whole = window.applied.finished - window.applied.started;
            apply += if window.applied.started <= at {
                // In progress at the disaster: the rest of the sweep.
                window.applied.finished - at
            } else if window.end > held {
                let part = arrivals.bytes_between(window.start, held);
                bound(part).map_or(whole, |time| time.min(whole))
            } else {
                whole
            };
            covered = window.end;
        }
        if covered < held {
            let bytes = arrivals.bytes_between(covered, held) as f64;
            apply += Nanoseconds((bytes / config.calibrated_bytes_per_s * 1e9) as u64);
            out.charged_at_calibrated_rate += 1;
        }
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
    out.mean_recovery_s = total / f64::from(config.trials.max(1));
    out
}
