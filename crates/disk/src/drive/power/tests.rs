use super::*;
use crate::spec::StandbyLevelSpec;

const S: u64 = 1_000_000_000;

fn ns(t: u64) -> Nanoseconds {
    Nanoseconds(t)
}

/// Two levels with round figures: level 0 "unload" (1 s in/out, 1 J each,
/// 4 W), level 1 "stop" (2 s down, 3 s up, 10 J / 30 J, 1 W); active 10 W, idle 5 W.
fn spec() -> PowerSpec {
    let level = |name: &str, watts, enter_s: f64, enter_joules, exit_s: f64, exit_joules| {
        StandbyLevelSpec {
            name: name.into(),
            watts,
            enter_ms: enter_s * 1e3,
            enter_joules,
            exit_ms: exit_s * 1e3,
            exit_joules,
        }
    };
    PowerSpec {
        active_watts: 10.0,
        idle_watts: 5.0,
        standby: vec![
            level("unload", 4.0, 1.0, 1.0, 1.0, 1.0),
            level("stop", 1.0, 2.0, 10.0, 3.0, 30.0),
        ],
    }
}

fn buckets_sum(r: &EnergyReport) -> u64 {
    r.active.0 + r.idle.0 + r.standby.0 + r.transition.0
}

// Proves time is split between active and idle and energy adds up per state.
#[test]
fn active_idle_split() {
    let mut m = PowerMeter::new(&spec());
    m.busy(ns(S), ns(2 * S));
    let r = m.report(ns(4 * S), None);
    assert_eq!((r.active, r.idle), (ns(S), ns(3 * S)));
    assert!((r.joules - (10.0 + 3.0 * 5.0)).abs() < 1e-9);
}

// Proves the idle timer spins the drive down at last-busy-end + timer, through the
// transition into standby, with the level's energies, and every nanosecond is in
// exactly one bucket.
#[test]
fn idle_timer_spins_down() {
    let mut m = PowerMeter::new(&spec());
    m.set_policy(
        ns(0),
        Some(IdlePolicy {
            idle_after: ns(10 * S),
            level: StandbyLevel(1),
        }),
    );
    m.busy(ns(0), ns(S));
    assert_eq!(m.state_at(ns(10 * S), None), PowerState::Idle);
    assert_eq!(
        m.state_at(ns(12 * S), None),
        PowerState::SpinningDown(StandbyLevel(1))
    );
    assert_eq!(
        m.state_at(ns(13 * S), None),
        PowerState::Standby(StandbyLevel(1))
    );
    let r = m.report(ns(20 * S), None);
    assert_eq!(r.spin_downs, 1);
    assert_eq!(r.by_level[1].spin_downs, 1);
    assert_eq!(
        (r.active, r.idle, r.transition, r.standby),
        (ns(S), ns(10 * S), ns(2 * S), ns(7 * S))
    );
    assert_eq!(buckets_sum(&r), 20 * S);
    let joules = 10.0 + 10.0 * 5.0 + 10.0 + 7.0 * 1.0;
    assert!((r.joules - joules).abs() < 1e-9, "{}", r.joules);
}

// Proves a request arriving mid spin-down waits for it to finish, then for the
// spin-up: its delay is the rest of the spin-down plus the exit time.
#[test]
fn request_during_spin_down_waits_for_both() {
    let mut m = PowerMeter::new(&spec());
    m.order_spin_down(ns(0), StandbyLevel(1), false);
    let delay = m.wake(ns(S / 2), ns(S / 2));
    assert_eq!(delay, ns(3 * S / 2 + 3 * S));
    assert_eq!(
        m.state_at(ns(3 * S), None),
        PowerState::SpinningUp(StandbyLevel(1))
    );
    m.busy(ns(S / 2), ns(6 * S));
    let r = m.report(ns(6 * S), None);
    assert_eq!((r.spin_downs, r.spin_ups), (1, 1));
    assert_eq!((r.transition, r.active), (ns(5 * S), ns(S)));
    assert_eq!(buckets_sum(&r), 6 * S);
}

// Proves a spin-down order given while the drive is busy waits for the work in
// progress, and a request that arrived before the drive went quiet keeps it up.
#[test]
fn order_waits_for_work_and_queued_requests() {
    let mut m = PowerMeter::new(&spec());
    m.busy(ns(0), ns(5 * S));
    m.order_spin_down(ns(S), StandbyLevel(0), true);
    assert_eq!(m.state_at(ns(4 * S), None), PowerState::Active);
    // A request queued at 4 s starts at 5 s: no spin cycle.
    assert_eq!(m.wake(ns(4 * S), ns(5 * S)), ns(0));
    m.busy(ns(5 * S), ns(6 * S));
    // Quiet from 6 s: the order fires then.
    assert_eq!(
        m.state_at(ns(6 * S + 1), None),
        PowerState::SpinningDown(StandbyLevel(0))
    );
    // The same meter asked with a request queued at 5.5 s stays up.
    assert_eq!(
        m.state_at(ns(8 * S), Some(ns(5 * S + S / 2))),
        PowerState::Idle
    );
}

// Proves an explicit spin-up leaves standby without a request, and a request
// arriving during it waits only for the rest of the spin-up.
#[test]
fn explicit_spin_up() {
    let mut m = PowerMeter::new(&spec());
    m.order_spin_down(ns(0), StandbyLevel(0), false);
    m.spin_up(ns(10 * S));
    assert_eq!(
        m.state_at(ns(10 * S + S / 2), None),
        PowerState::SpinningUp(StandbyLevel(0))
    );
    assert_eq!(
        m.wake(ns(10 * S + S / 4), ns(10 * S + S / 4)),
        ns(3 * S / 4)
    );
    let r = m.report(ns(12 * S), None);
    assert_eq!((r.by_level[0].spin_downs, r.by_level[0].spin_ups), (1, 1));
    assert_eq!(r.by_level[0].standby, ns(9 * S));
    assert_eq!(buckets_sum(&r), 12 * S);
}

// Proves a second spin-down order while down changes nothing.
#[test]
fn order_while_down_is_ignored() {
    let mut m = PowerMeter::new(&spec());
    m.order_spin_down(ns(0), StandbyLevel(0), false);
    m.order_spin_down(ns(5 * S), StandbyLevel(1), false);
    let r = m.report(ns(10 * S), None);
    assert_eq!(r.spin_downs, 1);
    assert_eq!(
        m.state_at(ns(10 * S), None),
        PowerState::Standby(StandbyLevel(0))
    );
}
