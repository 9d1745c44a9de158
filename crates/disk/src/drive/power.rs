//! Power states, the idle timer and energy.
//!
//! **State machine** (one spindle; `L` is a standby level of the drive's list):
//!
//! | from | event | to |
//! |---|---|---|
//! | `Idle` | a request starts | `Active` until its media and bus work end |
//! | `Active` | its work ends | `Idle` |
//! | `Idle` | idle timer expires, or a spin-down order (at once if idle, else when the work in progress ends) | `SpinningDown(L)` for L's enter time |
//! | `SpinningDown(L)` | enter time over | `Standby(L)` |
//! | `SpinningDown(L)` | a request or a spin-up order | finishes spinning down, then `SpinningUp(L)` |
//! | `Standby(L)` | a request or a spin-up order | `SpinningUp(L)` for L's exit time |
//! | `SpinningUp(L)` | exit time over | `Idle` (or `Active` for the request that woke it) |
//!
//! A spin-down order while already down (at any level) changes nothing.
//!
//! **Lazy timer.** No event is scheduled for the idle timer: the spin-down instant
//! is a pure function of the last busy end, the policy and when it was set, so it is
//! applied when the next request arrives or when someone asks for the state or the
//! energy. A request that arrived before the timer expired (even one still waiting
//! in the queue) means the drive was never idle that long.
//!
//! **Energy** = active W × active time + idle W × idle time + Σ standby W(L) ×
//! time in L + Σ (transitions into L × L's enter joules + out of L × exit joules).
//! Transition time is its own bucket (paid by the transition's joules, not by a
//! wattage), so active + idle + standby + transition = elapsed time.

use crate::spec::{PowerSpec, MAX_STANDBY_LEVELS};
use spinstack_sim::device::{IdlePolicy, StandbyLevel};
use spinstack_sim::units::Nanoseconds;

/// The spindle/electronics power state at an instant.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PowerState {
    /// Spinning, servicing a request (seek, transfer, background flush or prefetch).
    Active,
    /// Spinning, nothing to do.
    Idle,
    SpinningDown(StandbyLevel),
    Standby(StandbyLevel),
    SpinningUp(StandbyLevel),
}

/// Time and transitions of one standby level.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct LevelTally {
    pub standby: Nanoseconds,
    pub spin_downs: u64,
    pub spin_ups: u64,
}

/// Time per state and energy so far.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct EnergyReport {
    pub active: Nanoseconds,
    pub idle: Nanoseconds,
    /// In any standby level.
    pub standby: Nanoseconds,
    /// Spinning down or up.
    pub transition: Nanoseconds,
    pub spin_downs: u64,
    pub spin_ups: u64,
    pub by_level: [LevelTally; MAX_STANDBY_LEVELS],
    pub joules: f64,
}

/// What the spindle is doing between events.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Spindle {
    /// Spinning; media work possible from `ready_ns` (later than now only while
    /// spinning up from `woke_from`).
    Spinning {
        ready_ns: u64,
        woke_from: StandbyLevel,
    },
    /// Left for `level` at `since_ns`: spinning down until `since_ns` + its enter
    /// time, in standby after.
    Down { level: StandbyLevel, since_ns: u64 },
}

/// A level's times in integer nanoseconds.
#[derive(Clone, Copy, Debug)]
struct Level {
    watts: f64,
    enter_ns: u64,
    enter_joules: f64,
    exit_ns: u64,
    exit_joules: f64,
}

impl EnergyReport {
    /// What the meter booked between an `earlier` reading and this one: each time,
    /// count and energy less the earlier's (a run's books with a warm-up left out).
    /// Panics if `earlier` is not an earlier reading of the same meter.
    pub fn since(&self, earlier: &EnergyReport) -> EnergyReport {
        let minus = |later: Nanoseconds, before: Nanoseconds| {
            Nanoseconds(
                later
                    .0
                    .checked_sub(before.0)
                    .expect("an energy reading before the earlier one"),
            )
        };
        let count = |later: u64, before: u64| {
            later
                .checked_sub(before)
                .expect("an energy reading before the earlier one")
        };
        let mut by_level = self.by_level;
        for (level, before) in by_level.iter_mut().zip(&earlier.by_level) {
            level.standby = minus(level.standby, before.standby);
            level.spin_downs = count(level.spin_downs, before.spin_downs);
            level.spin_ups = count(level.spin_ups, before.spin_ups);
        }
        EnergyReport {
            active: minus(self.active, earlier.active),
            idle: minus(self.idle, earlier.idle),
            standby: minus(self.standby, earlier.standby),
            transition: minus(self.transition, earlier.transition),
            spin_downs: count(self.spin_downs, earlier.spin_downs),
            spin_ups: count(self.spin_ups, earlier.spin_ups),
            by_level,
            joules: self.joules - earlier.joules,
        }
    }
}

/// The power model of one drive. See the module documentation.
#[derive(Clone, Debug)]
pub struct PowerMeter {
    active_watts: f64,
    idle_watts: f64,
    levels: Vec<Level>,
    spindle: Spindle,
    /// Up to when time has been put into the report's buckets.
    accounted_ns: u64,
    /// The end of the last busy interval recorded (busy time is merged).
    busy_until_ns: u64,
    /// The idle timer and when it was set (it counts from then at the earliest).
    policy: Option<(IdlePolicy, u64)>,
    /// A spin-down order waiting for the work in progress: (level, when given).
    order: Option<(StandbyLevel, u64)>,
    report: EnergyReport,
}

fn ms_to_ns(ms: f64) -> u64 {
    (ms * 1e6).round().max(0.0) as u64
}

impl PowerMeter {
    pub fn new(spec: &PowerSpec) -> PowerMeter {
        let levels = spec
            .standby
            .iter()
            .map(|l| Level {
                watts: l.watts,
                enter_ns: ms_to_ns(l.enter_ms),
                enter_joules: l.enter_joules,
                exit_ns: ms_to_ns(l.exit_ms),
                exit_joules: l.exit_joules,
            })
            .collect();
        PowerMeter {
            active_watts: spec.active_watts,
            idle_watts: spec.idle_watts,
            levels,
            spindle: Spindle::Spinning {
                ready_ns: 0,
                woke_from: StandbyLevel(0),
            },
            accounted_ns: 0,
            busy_until_ns: 0,
            policy: None,
            order: None,
            report: EnergyReport::default(),
        }
    }

    pub fn standby_levels(&self) -> usize {
        self.levels.len()
    }

    fn level(&self, level: StandbyLevel) -> &Level {
        &self.levels[level.0 as usize]
    }

    /// Put `[accounted, to)` into the buckets of the current spindle mode (busy
    /// time is put in by `busy`).
    fn account_to(&mut self, to: u64) {
        let from = self.accounted_ns;
        if to <= from {
            return;
        }
        match self.spindle {
            Spindle::Spinning { ready_ns, .. } => {
                let split = ready_ns.clamp(from, to);
                self.report.transition.0 += split - from;
                self.report.idle.0 += to - split;
            }
            Spindle::Down { level, since_ns } => {
                let standby_from = (since_ns + self.level(level).enter_ns).clamp(from, to);
                self.report.transition.0 += standby_from - from;
                self.report.standby.0 += to - standby_from;
                self.report.by_level[level.0 as usize].standby.0 += to - standby_from;
            }
        }
        self.accounted_ns = to;
    }

    /// When the spindle would start spinning down if nothing arrives: the pending
    /// order's or the idle timer's instant, whichever is first.
    fn next_spin_down(&self) -> Option<(u64, StandbyLevel)> {
        let Spindle::Spinning { ready_ns, .. } = self.spindle else {
            return None;
        };
        let quiet_from = self.busy_until_ns.max(ready_ns);
        let ordered = self.order.map(|(level, at)| (quiet_from.max(at), level));
        let timed = self
            .policy
            .map(|(policy, set_at)| (quiet_from.max(set_at) + policy.idle_after.0, policy.level));
        match (ordered, timed) {
            (Some(a), Some(b)) => Some(if b.0 < a.0 { b } else { a }),
            (a, b) => a.or(b),
        }
    }

    /// Apply a spin-down due at or before `until` (the next arrival, or the
    /// instant someone looks).
    fn apply_timers(&mut self, until: u64) {
        let Some((at, level)) = self.next_spin_down() else {
            return;
        };
        if at > until {
            return;
        }
        self.account_to(at);
        self.order = None;
        self.spindle = Spindle::Down {
            level,
            since_ns: at,
        };
        self.report.spin_downs += 1;
        self.report.by_level[level.0 as usize].spin_downs += 1;
    }

    /// Leave standby at `at` (after a spin-down in progress ends); returns when
    /// the spindle is ready.
    fn leave_standby(&mut self, at: u64) -> u64 {
        match self.spindle {
            Spindle::Spinning { ready_ns, .. } => ready_ns.max(at),
            Spindle::Down { level, since_ns } => {
                let start_up = at.max(since_ns + self.level(level).enter_ns);
                self.account_to(start_up);
                let ready_ns = start_up + self.level(level).exit_ns;
                self.spindle = Spindle::Spinning {
                    ready_ns,
                    woke_from: level,
                };
                self.report.spin_ups += 1;
                self.report.by_level[level.0 as usize].spin_ups += 1;
                ready_ns
            }
        }
    }

    /// A request that arrived at `arrival` starts at `start`: returns how long it
    /// waits for the spindle (the rest of a spin-down, then the spin-up).
    pub fn wake(&mut self, arrival: Nanoseconds, start: Nanoseconds) -> Nanoseconds {
        self.apply_timers(arrival.0.saturating_sub(1));
        let ready = self.leave_standby(start.0);
        Nanoseconds(ready.saturating_sub(start.0))
    }

    /// Record that the drive is busy over `[from, to)` (intervals come in time
    /// order; the part before the spindle is ready is the spin-up's).
    pub fn busy(&mut self, from: Nanoseconds, to: Nanoseconds) {
        let (from_ns, to_ns) = (from.0, to.0);
        let ready = match self.spindle {
            Spindle::Spinning { ready_ns, .. } => ready_ns,
            Spindle::Down { .. } => u64::MAX,
        };
        let from = from_ns.max(self.busy_until_ns).max(ready.min(to_ns));
        self.account_to(from);
        if to_ns > from {
            self.report.active.0 += to_ns - from;
            self.accounted_ns = to_ns;
            self.busy_until_ns = to_ns;
        }
    }

    /// Order a spin-down to `level` at `now`: at once if the drive is idle, else
    /// when its work in progress ends (`busy_queued`: requests are waiting).
    pub fn order_spin_down(&mut self, now: Nanoseconds, level: StandbyLevel, busy_queued: bool) {
        self.apply_timers(now.0);
        if matches!(self.spindle, Spindle::Down { .. }) {
            return;
        }
        self.order = Some((level, now.0));
        if !busy_queued {
            self.apply_timers(now.0);
        }
    }

    /// Spin up at `now` if down (no request needed).
    pub fn spin_up(&mut self, now: Nanoseconds) {
        self.apply_timers(now.0);
        self.order = None;
        self.leave_standby(now.0);
    }

    /// Set (or clear) the idle timer at `now`.
    pub fn set_policy(&mut self, now: Nanoseconds, policy: Option<IdlePolicy>) {
        self.apply_timers(now.0);
        self.policy = policy.map(|p| (p, now.0));
    }

    /// The state at `now`; `earliest_queued` is the arrival of the oldest request
    /// still waiting to start, if any (its arrival keeps the timer from firing).
    pub fn state_at(&self, now: Nanoseconds, earliest_queued: Option<Nanoseconds>) -> PowerState {
        let mut meter = self.clone();
        meter.apply_timers(earliest_queued.map_or(now.0, |q| q.0.min(now.0)));
        let now = now.0;
        match meter.spindle {
            Spindle::Down { level, since_ns } if now < since_ns + meter.level(level).enter_ns => {
                PowerState::SpinningDown(level)
            }
            Spindle::Down { level, .. } => PowerState::Standby(level),
            Spindle::Spinning {
                ready_ns,
                woke_from,
            } if now < ready_ns => PowerState::SpinningUp(woke_from),
            Spindle::Spinning { .. } if now < meter.busy_until_ns => PowerState::Active,
            Spindle::Spinning { .. } => PowerState::Idle,
        }
    }

    /// The report up to `now` (see `state_at` for `earliest_queued`).
    pub fn report(&self, now: Nanoseconds, earliest_queued: Option<Nanoseconds>) -> EnergyReport {
        let mut meter = self.clone();
        meter.apply_timers(earliest_queued.map_or(now.0, |q| q.0.min(now.0)));
        meter.account_to(now.0);
        let mut r = meter.report;
        r.joules =
            r.active.as_secs_f64() * self.active_watts + r.idle.as_secs_f64() * self.idle_watts;
        for (tally, level) in r.by_level.iter().zip(&self.levels) {
            r.joules += tally.standby.as_secs_f64() * level.watts
                + tally.spin_downs as f64 * level.enter_joules
                + tally.spin_ups as f64 * level.exit_joules;
        }
        r
    }
}

#[cfg(test)]
mod tests;
