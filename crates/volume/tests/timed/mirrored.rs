use super::common::*;
use spinstack_sim::device::{Control, MemberIndex};
use spinstack_sim::engine::{DeviceId, Engine};
use spinstack_sim::request::{Operation, Status};
use spinstack_sim::units::Sectors;
use spinstack_volume::timed::{HostCost, Mirrored, ReadBalance};

fn raid1(copies: usize, balance: ReadBalance) -> Mirrored<spinstack_sim::fake::FixedServiceDevice> {
    Mirrored::new(
        fixed(copies),
        no_tracks(copies),
        None,
        balance,
        HostCost::NONE,
        None,
    )
    .unwrap()
}

// Proves a RAID-1 write goes to every copy, and reads at depth 6 spread over
// the three members by shortest queue (two each; at depth 1 every queue is empty
// and the first copy wins).
#[test]
fn writes_everywhere_reads_balanced() {
    let script = vec![issue(Operation::Write, 0, 8), issue(Operation::Read, 0, 8)];
    let (engine, done) = play(raid1(3, ReadBalance::ShortestQueue), script, 1);
    assert!(done.iter().all(|c| c.status == Status::Ok));
    let stats = engine.devices()[0].stats();
    assert_eq!(
        stats.iter().map(|s| s.requests).collect::<Vec<_>>(),
        vec![2, 1, 1]
    );
    let (engine, _) = play(
        raid1(3, ReadBalance::ShortestQueue),
        (0..6).map(|k| issue(Operation::Read, 100 * k, 8)).collect(),
        6,
    );
    let stats = engine.devices()[0].stats();
    assert_eq!(
        stats.iter().map(|s| s.requests).collect::<Vec<_>>(),
        vec![2, 2, 2]
    );
}

// Proves nearest-head balancing sends a read to the member whose last request
// ended nearest it (md's head position): alternating far-apart reads settle one
// region on each member.
#[test]
fn nearest_head() {
    let script = vec![
        issue(Operation::Read, 500_000, 8), // heads both at 0: copy 0 (member 0)
        issue(Operation::Read, 0, 8),       // member 1's head (0) is nearest
        issue(Operation::Read, 500_008, 8), // member 0's head is at 500,008
        issue(Operation::Read, 8, 8),       // member 1's head is at 8
    ];
    let (engine, _) = play(raid1(2, ReadBalance::NearestHead), script, 1);
    let stats = engine.devices()[0].stats();
    assert_eq!(
        stats.iter().map(|s| s.requests).collect::<Vec<_>>(),
        vec![2, 2]
    );
}

// Proves a RAID-10 keeps serving with one member failed (reads go to the other
// copy, writes skip the failed member), and fails requests only when both copies
// of a chunk are gone.
#[test]
fn survives_one_failure_per_pair() {
    let volume = Mirrored::new(
        fixed(4),
        no_tracks(4),
        Some((Sectors(8), 2)),
        ReadBalance::ShortestQueue,
        HostCost::NONE,
        None,
    )
    .unwrap();
    let mut engine = Engine::default();
    engine.add_device(volume);
    engine
        .control(DeviceId(0), &[MemberIndex(1)], Control::Fail)
        .unwrap();
    let script: Vec<_> = (0..16)
        .flat_map(|k| {
            [
                issue(Operation::Write, 8 * k, 8),
                issue(Operation::Read, 8 * k, 8),
            ]
        })
        .collect();
    let done = play_on(&mut engine, script);
    assert!(done.iter().all(|c| c.status == Status::Ok), "{done:?}");
    assert_eq!(engine.devices()[0].stats()[1].requests, 0);
    // Member 0 holds the other copy of chunk 0 (near-2: devices 0 and 1).
    engine
        .control(DeviceId(0), &[MemberIndex(0)], Control::Fail)
        .unwrap();
    // Chunk 1 lives on members 2 and 3; chunk 2 on members 0 and 1 (row 1).
    let done = play_on(
        &mut engine,
        vec![issue(Operation::Read, 8, 8), issue(Operation::Read, 16, 8)],
    );
    assert_eq!(done[0].status, Status::Ok);
    assert_eq!(done[1].status, Status::DeviceFailed);
}

// Proves a replaced mirror member gets writes again: with member 1 failed the
// writes reach only its partner; after a new drive replaces it (the pacer after an
// online rebuild), every write reaches both copies.
#[test]
fn replaced_mirror_member_is_written_again() {
    let mut engine = Engine::default();
    engine.add_device(raid1(2, ReadBalance::ShortestQueue));
    engine
        .control(DeviceId(0), &[MemberIndex(1)], Control::Fail)
        .unwrap();
    let writes = || (0..4).map(|k| issue(Operation::Write, 8 * k, 8)).collect();
    let done = play_on(&mut engine, writes());
    assert!(done.iter().all(|c| c.status == Status::Ok), "{done:?}");
    assert_eq!(engine.devices()[0].stats()[1].requests, 0);
    engine
        .control(DeviceId(0), &[MemberIndex(1)], Control::Replace)
        .unwrap();
    let done = play_on(&mut engine, writes());
    assert!(done.iter().all(|c| c.status == Status::Ok), "{done:?}");
    let stats = engine.devices()[0].stats();
    assert_eq!(stats[1].requests, 4, "every write reaches the new copy");
    assert_eq!(stats[0].requests, 8);
}

fn play_on<D: spinstack_sim::device::BlockDevice>(
    engine: &mut Engine<D>,
    script: Vec<spinstack_sim::driver::Issue>,
) -> Vec<spinstack_sim::request::Completion> {
    let mut host = Script {
        script: script.into_iter(),
        depth: 1,
        done: Vec::new(),
    };
    spinstack_sim::driver::run(engine, &mut host).unwrap();
    host.done
}

// Proves a read that finds its member failed (the member fails between two
// requests, unknown to the volume) is retried on the other copy and succeeds.
#[test]
fn read_retried_on_the_other_copy() {
    let mut devices = fixed(2);
    devices[0]
        .control(spinstack_sim::units::Nanoseconds::ZERO, &[], Control::Fail)
        .unwrap();
    use spinstack_sim::device::BlockDevice;
    let volume = Mirrored::new(
        devices,
        no_tracks(2),
        None,
        ReadBalance::ShortestQueue,
        HostCost::NONE,
        None,
    )
    .unwrap();
    let (engine, done) = play(
        volume,
        vec![issue(Operation::Read, 0, 8), issue(Operation::Read, 8, 8)],
        1,
    );
    assert!(done.iter().all(|c| c.status == Status::Ok), "{done:?}");
    assert_eq!(engine.devices()[0].failed_members(), vec![MemberIndex(0)]);
}
