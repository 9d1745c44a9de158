//! The drive's power policy against the power paper's Table 2
//! (../shared/papers/power-aware-remote-replication-goda.txt): a drive idle past its
//! timer spins down, the next request pays the spin-up (as its own breakdown
//! component), and the energy of every state and transition is the paper's figure,
//! for the Ultrastar 36Z15 and each of the Deskstar T7K250's three standby levels.
//! The figures below are typed in from the paper's table, independently of the
//! catalog files they are checked against.

use spinstack_disk::drive::{Drive, DriveOptions, PowerState};
use spinstack_sim::device::{Control, IdlePolicy, StandbyLevel};
use spinstack_sim::driver::{run_open_loop, Arrival};
use spinstack_sim::engine::{DeviceId, Engine, EngineOptions};
use spinstack_sim::request::{Completion, Operation};
use spinstack_sim::units::{Lbn, Nanoseconds, Sectors};

const SECOND: u64 = 1_000_000_000;

/// One standby mode of Table 2: power, and the time and energy of each transition.
struct Mode {
    watts: f64,
    down_s: f64,
    down_joules: f64,
    up_s: f64,
    up_joules: f64,
}

/// Table 2, IBM Ultrastar 36Z15.
const ULTRASTAR_ACTIVE_W: f64 = 39.0;
const ULTRASTAR_IDLE_W: f64 = 22.3;
const ULTRASTAR_STANDBY: Mode = Mode {
    watts: 4.15,
    down_s: 15.0,
    down_joules: 62.25,
    up_s: 26.0,
    up_joules: 904.8,
};

/// Table 2, HGST Deskstar T7K250: unloaded (U), low RPM (L), non-spinning (N).
const DESKSTAR_ACTIVE_W: f64 = 9.7;
const DESKSTAR_IDLE_W: f64 = 5.24;
const DESKSTAR_MODES: [(&str, Mode); 3] = [
    (
        "unload",
        Mode {
            watts: 4.04,
            down_s: 0.7,
            down_joules: 3.5,
            up_s: 0.7,
            up_joules: 3.5,
        },
    ),
    (
        "low-rpm",
        Mode {
            watts: 2.72,
            down_s: 17.0,
            down_joules: 19.0,
            up_s: 17.0,
            up_joules: 19.0,
        },
    ),
    (
        "non-spinning",
        Mode {
            watts: 0.93,
            down_s: 0.7,
            down_joules: 3.5,
            up_s: 0.7,
            up_joules: 3.5,
        },
    ),
];

fn engine_with(name: &str, idle_policy: Option<IdlePolicy>) -> Engine<Drive> {
    let spec = spinstack_disk::catalog::get(name).expect("catalog drive");
    let options = DriveOptions {
        idle_policy,
        ..DriveOptions::default()
    };
    let mut engine = Engine::new(EngineOptions::default());
    engine.add_device(Drive::new(&spec, options).expect("drive builds"));
    engine
}

/// One 8-sector read at `at`; returns its completion.
fn read_at(engine: &mut Engine<Drive>, at: u64) -> Completion {
    let mut done = Vec::new();
    let arrival = Arrival {
        time: Nanoseconds(at),
        device: DeviceId(0),
        operation: Operation::Read,
        lbn: Lbn(1_000),
        sectors: Sectors(8),
    };
    run_open_loop(engine, [arrival], |c| done.push(c.completion)).expect("read served");
    done[0]
}

// Proves the Ultrastar 36Z15 with a 60 s idle timer: idle for the first minute
// after a request, spinning down for Table 2's 15 s, in standby after; a request in
// standby waits Table 2's 26 s spin-up and the breakdown says so; and over the whole
// run the energy is exactly active W x active + idle W x idle + standby W x standby
// + 62.25 J + 904.8 J.
#[test]
fn ultrastar_idle_timer_spin_up_and_energy() {
    let policy = IdlePolicy {
        idle_after: Nanoseconds(60 * SECOND),
        level: StandbyLevel(0),
    };
    let mut engine = engine_with("ultrastar36z15", Some(policy));
    let first = read_at(&mut engine, 0);
    let drive = &engine.devices()[0];
    // The drive goes quiet when its read-ahead after the read ends: the busy time
    // of a request that started at 0.
    let quiet = drive.energy(Nanoseconds(first.done.0 + SECOND)).active.0;
    assert!(quiet >= first.done.0);
    let at = |seconds: u64| Nanoseconds(quiet + seconds * SECOND);
    assert_eq!(drive.power_state(at(59)), PowerState::Idle);
    assert_eq!(
        drive.power_state(at(61)),
        PowerState::SpinningDown(StandbyLevel(0))
    );
    assert_eq!(
        drive.power_state(at(76)),
        PowerState::Standby(StandbyLevel(0))
    );

    let second = read_at(&mut engine, at(200).0);
    let spin_up = second.breakdown().spin_up;
    assert_eq!(
        spin_up,
        Nanoseconds(26 * SECOND),
        "{:?}",
        second.breakdown()
    );
    assert!(second.response_time() > spin_up);

    let end = Nanoseconds(second.done.0 + 10 * SECOND);
    let report = engine.devices()[0].energy(end);
    assert_eq!((report.spin_downs, report.spin_ups), (1, 1));
    assert_eq!(report.standby, Nanoseconds(at(200).0 - at(75).0));
    assert_eq!(report.transition, Nanoseconds(41 * SECOND));
    assert_eq!(
        report.active.0 + report.idle.0 + report.standby.0 + report.transition.0,
        end.0
    );
    let m = ULTRASTAR_STANDBY;
    let expected = report.active.as_secs_f64() * ULTRASTAR_ACTIVE_W
        + report.idle.as_secs_f64() * ULTRASTAR_IDLE_W
        + report.standby.as_secs_f64() * m.watts
        + m.down_joules
        + m.up_joules;
    assert!((report.joules - expected).abs() < 1e-6, "{report:?}");
    assert_eq!((m.down_s, m.up_s), (15.0, 26.0));
}

// Proves each of the Deskstar T7K250's standby levels, entered by a control
// command through the engine, costs Table 2's transition times and energies and
// draws its standby power: 100 s in the level, then a request wakes it.
#[test]
fn deskstar_three_standby_levels() {
    for (level, (name, mode)) in DESKSTAR_MODES.iter().enumerate() {
        let level = StandbyLevel(level as u8);
        let mut engine = engine_with("deskstar-t7k250", None);
        let first = read_at(&mut engine, 0);
        let quiet = first.done.0 + SECOND;
        engine.run_until(Nanoseconds(quiet), &mut Vec::new());
        engine
            .control(DeviceId(0), &[], Control::SpinDown(level))
            .expect("level exists");
        let down_ns = (mode.down_s * 1e9) as u64;
        let up_ns = (mode.up_s * 1e9) as u64;
        let wake_at = quiet + down_ns + 100 * SECOND;
        let drive = &engine.devices()[0];
        assert_eq!(
            drive.power_state(Nanoseconds(quiet + down_ns / 2)),
            PowerState::SpinningDown(level),
            "{name}"
        );
        assert_eq!(
            drive.power_state(Nanoseconds(wake_at - 1)),
            PowerState::Standby(level),
            "{name}"
        );
        let second = read_at(&mut engine, wake_at);
        assert_eq!(second.breakdown().spin_up, Nanoseconds(up_ns), "{name}");
        let end = Nanoseconds(second.done.0 + SECOND);
        let report = engine.devices()[0].energy(end);
        let tally = report.by_level[level.0 as usize];
        assert_eq!((tally.spin_downs, tally.spin_ups), (1, 1), "{name}");
        assert_eq!(tally.standby, Nanoseconds(100 * SECOND), "{name}");
        assert_eq!(report.transition, Nanoseconds(down_ns + up_ns), "{name}");
        let expected = report.active.as_secs_f64() * DESKSTAR_ACTIVE_W
            + report.idle.as_secs_f64() * DESKSTAR_IDLE_W
            + 100.0 * mode.watts
            + mode.down_joules
            + mode.up_joules;
        assert!(
            (report.joules - expected).abs() < 1e-6,
            "{name}: {report:?}"
        );
    }
}

// Proves a level the drive does not have is refused with an error naming it.
#[test]
fn unknown_standby_level_is_refused() {
    let mut engine = engine_with("ultrastar36z15", None);
    let error = engine
        .control(DeviceId(0), &[], Control::SpinDown(StandbyLevel(3)))
        .unwrap_err();
    assert!(error.to_string().contains("standby level 3"), "{error}");
    let spec = spinstack_disk::catalog::get("ultrastar36z15").unwrap();
    let bad = DriveOptions {
        idle_policy: Some(IdlePolicy {
            idle_after: Nanoseconds(1),
            level: StandbyLevel(1),
        }),
        ..DriveOptions::default()
    };
    assert!(Drive::new(&spec, bad).is_err());
}
