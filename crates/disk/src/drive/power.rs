//! Power states and energy. State machine:
//! `Idle` --request--> `Active` --done--> `Idle`; `Idle` --spin_down--> `SpinningDown`
//! --(spin-down time)--> `Standby` --request--> `SpinningUp` --(spin-up time)--> `Active`.
//! Time in every state is accumulated in nanoseconds; energy is
//! `watts × seconds` per steady state plus the fixed spin-up/spin-down joules.

use crate::spec::PowerSpec;
use spinstack_sim::units::Nanoseconds;

/// The spindle/electronics power state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PowerState {
    /// Spinning, servicing a request (seek, transfer, background flush or prefetch).
    Active,
    /// Spinning, nothing to do.
    Idle,
    /// Spun down.
    Standby,
}

/// Time per state and energy so far.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct EnergyReport {
    pub active: Nanoseconds,
    pub idle: Nanoseconds,
    pub standby: Nanoseconds,
    pub spin_ups: u64,
    pub spin_downs: u64,
    pub joules: f64,
}

/// Accumulates busy intervals; everything not busy and not spun down is idle.
#[derive(Clone, Debug)]
pub struct PowerMeter {
    spec: PowerSpec,
    /// Up to when time has been accounted.
    accounted_ns: u64,
    /// The end of the last busy interval recorded (busy time is merged).
    busy_until_ns: u64,
    standby_since_ns: Option<u64>,
    report: EnergyReport,
}

impl PowerMeter {
    pub fn new(spec: &PowerSpec) -> PowerMeter {
        PowerMeter {
            spec: spec.clone(),
            accounted_ns: 0,
            busy_until_ns: 0,
            standby_since_ns: None,
            report: EnergyReport::default(),
        }
    }

    pub fn spin_up_ns(&self) -> u64 {
        (self.spec.spin_up_ms * 1e6) as u64
    }

    pub fn state_at(&self, now_ns: u64) -> PowerState {
        if self.standby_since_ns.is_some() {
            PowerState::Standby
        } else if now_ns < self.busy_until_ns {
            PowerState::Active
        } else {
            PowerState::Idle
        }
    }

    /// Record that the drive is busy over `[from, to)` (intervals come in time order).
    pub fn busy(&mut self, from_ns: u64, to_ns: u64) {
        let from = from_ns.max(self.busy_until_ns).max(self.accounted_ns);
        if from > self.accounted_ns {
            self.report.idle.0 += from - self.accounted_ns;
        }
        if to_ns > from {
            self.report.active.0 += to_ns - from;
            self.accounted_ns = to_ns;
            self.busy_until_ns = to_ns;
        } else {
            self.accounted_ns = self.accounted_ns.max(from);
        }
    }

    /// Spin down at `now` (after any busy time); returns false if already down.
    pub fn spin_down(&mut self, now_ns: u64) -> bool {
        if self.standby_since_ns.is_some() {
            return false;
        }
        let at = now_ns.max(self.busy_until_ns);
        self.busy(at, at);
        self.report.spin_downs += 1;
        self.standby_since_ns = Some(at);
        true
    }

    /// Spin up at `now` if spun down; returns the delay before the drive can work.
    pub fn wake(&mut self, now_ns: u64) -> u64 {
        let Some(since) = self.standby_since_ns.take() else {
            return 0;
        };
        let down = (self.spec.spin_down_ms * 1e6) as u64;
        let standby = now_ns.saturating_sub(since + down);
        self.report.standby.0 += standby;
        self.report.spin_ups += 1;
        let up = self.spin_up_ns();
        self.accounted_ns = now_ns + up;
        self.busy_until_ns = now_ns + up;
        up
    }

    /// The report up to `now` (idle time up to `now` included).
    pub fn report(&self, now_ns: u64) -> EnergyReport {
        let mut r = self.report;
        if let Some(since) = self.standby_since_ns {
            let down = (self.spec.spin_down_ms * 1e6) as u64;
            r.standby.0 += now_ns.saturating_sub(since + down);
        } else if now_ns > self.accounted_ns {
            r.idle.0 += now_ns - self.accounted_ns;
        }
        let s = &self.spec;
        r.joules = r.active.as_secs_f64() * s.active_watts
            + r.idle.as_secs_f64() * s.idle_watts
            + r.standby.as_secs_f64() * s.standby_watts
            + r.spin_ups as f64 * s.spin_up_joules
            + r.spin_downs as f64 * s.spin_down_joules;
        r
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // Proves time is split between active and idle and energy adds up per state.
    #[test]
    fn active_idle_split() {
        let mut m = PowerMeter::new(&PowerSpec::default());
        m.busy(1_000_000_000, 2_000_000_000);
        let r = m.report(4_000_000_000);
        assert_eq!(r.active, Nanoseconds(1_000_000_000));
        assert_eq!(r.idle, Nanoseconds(3_000_000_000));
        let s = PowerSpec::default();
        assert!((r.joules - (s.active_watts + 3.0 * s.idle_watts)).abs() < 1e-9);
    }

    // Proves a spin-down/up cycle counts standby time and both transition energies.
    #[test]
    fn spin_cycle() {
        let s = PowerSpec::default();
        let mut m = PowerMeter::new(&s);
        assert!(m.spin_down(0));
        assert_eq!(m.state_at(5), PowerState::Standby);
        let delay = m.wake(100_000_000_000);
        assert_eq!(delay, (s.spin_up_ms * 1e6) as u64);
        let r = m.report(100_000_000_000 + delay);
        assert_eq!(r.spin_ups, 1);
        assert!(r.standby.0 > 0);
    }
}
