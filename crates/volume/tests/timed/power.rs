//! Power commands reach drives through a volume: to the volume they go to every
//! member, with a path to one member only; a request to a sleeping volume pays
//! the spin-up (Ultrastar 36Z15: 26 s, the power paper's Table 2).

use super::common::*;
use spinstack_disk::drive::{Drive, DriveOptions, PowerState};
use spinstack_sim::device::{Control, IdlePolicy, MemberIndex, StandbyLevel};
use spinstack_sim::engine::{DeviceId, Engine};
use spinstack_sim::request::{Operation, Status};
use spinstack_sim::units::Nanoseconds;
use spinstack_volume::timed::{HostCost, Mirrored, ReadBalance};

const SECOND: u64 = 1_000_000_000;

fn raid1() -> Engine<Mirrored<Drive>> {
    let spec = spinstack_disk::catalog::get("ultrastar36z15").unwrap();
    let drives = (0..2)
        .map(|_| Drive::new(&spec, DriveOptions::default()).unwrap())
        .collect();
    let volume = Mirrored::new(
        drives,
        no_tracks(2),
        None,
        ReadBalance::ShortestQueue,
        HostCost::NONE,
        None,
    )
    .unwrap();
    let mut engine = Engine::default();
    engine.add_device(volume);
    engine
}

fn states(engine: &Engine<Mirrored<Drive>>, at: u64) -> Vec<PowerState> {
    engine.devices()[0]
        .members()
        .iter()
        .map(|d| d.power_state(Nanoseconds(at)))
        .collect()
}

// Proves a spin-down sent to the volume reaches both members, a spin-up sent to
// member 1 only wakes member 1, and a read then served by member 0 waits the 26 s
// spin-up; a level the drives lack is refused through the volume.
#[test]
fn spin_down_and_up_through_a_volume() {
    let mut engine = raid1();
    let down = StandbyLevel(0);
    engine
        .control(DeviceId(0), &[], Control::SpinDown(down))
        .unwrap();
    assert_eq!(
        states(&engine, 20 * SECOND),
        vec![PowerState::Standby(down); 2]
    );
    engine.run_until(Nanoseconds(20 * SECOND), &mut Vec::new());
    engine
        .control(DeviceId(0), &[MemberIndex(1)], Control::SpinUp)
        .unwrap();
    assert_eq!(
        states(&engine, 21 * SECOND),
        vec![PowerState::Standby(down), PowerState::SpinningUp(down)]
    );
    // At one request outstanding the read goes to member 0 (first copy).
    let mut host = Script {
        script: vec![issue(Operation::Read, 1000, 8)].into_iter(),
        depth: 1,
        done: Vec::new(),
    };
    spinstack_sim::driver::run(&mut engine, &mut host).unwrap();
    let read = host.done[0];
    assert_eq!(read.status, Status::Ok);
    assert!(
        read.response_time() >= Nanoseconds(26 * SECOND),
        "{}",
        read.response_time()
    );
    assert!(engine
        .control(DeviceId(0), &[], Control::SpinDown(StandbyLevel(4)))
        .is_err());
}

// Proves an idle policy set on the volume spins every member down after the idle
// time, and failing the volume as a whole (rather than a member) is refused.
#[test]
fn idle_policy_for_the_whole_volume() {
    let mut engine = raid1();
    let policy = IdlePolicy {
        idle_after: Nanoseconds(30 * SECOND),
        level: StandbyLevel(0),
    };
    engine
        .control(DeviceId(0), &[], Control::SetIdlePolicy(Some(policy)))
        .unwrap();
    assert_eq!(states(&engine, 29 * SECOND), vec![PowerState::Idle; 2]);
    assert_eq!(
        states(&engine, 100 * SECOND),
        vec![PowerState::Standby(StandbyLevel(0)); 2]
    );
    assert!(engine.control(DeviceId(0), &[], Control::Fail).is_err());
}
