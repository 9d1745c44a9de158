use super::common::*;
use spinstack_sim::request::{Operation, Status};
use spinstack_sim::units::{Nanoseconds, Sectors};
use spinstack_volume::timed::{HostCost, Striped};

// Proves a RAID-0 read spanning four chunks goes to four members at once and
// completes with the last of them; a flush reaches every member; a single drive
// sends each request as one member request.
#[test]
fn raid0_pieces_and_flush() {
    let volume = Striped::raid0(fixed(4), no_tracks(4), Sectors(8), HostCost::NONE, None).unwrap();
    let script = vec![issue(Operation::Read, 4, 32), issue(Operation::Flush, 0, 0)];
    let (engine, done) = play(volume, script, 1);
    // Member 0 serves two of the pieces, one after the other.
    assert_eq!(done[0].done, Nanoseconds(2 * SERVICE_NS));
    assert!(done
        .iter()
        .all(|c| c.status == Status::Ok && c.drive.is_none()));
    let stats = engine.devices()[0].stats();
    // 4..36 touches chunks 0..=4: members 0,1,2,3 and member 0 again (row 1).
    assert_eq!(stats.iter().map(|s| s.requests).sum::<u64>(), 5 + 4);
    assert_eq!(stats[0].sectors, 4 + 4);
    let single = Striped::single(fixed(1).remove(0), None, HostCost::NONE, None).unwrap();
    let (engine, _) = play(single, vec![issue(Operation::Write, 100, 500)], 1);
    let member = engine.devices()[0].stats()[0];
    assert_eq!(
        (member.requests, member.sectors, member.completed),
        (1, 500, 1)
    );
    assert_eq!(member.service, Nanoseconds(SERVICE_NS));
}

// Proves the host cost is paid per member request on one CPU: four member
// requests of a read cost four setups in a row before the last reaches its member.
#[test]
fn host_cost_per_member_request() {
    let cost = HostCost {
        fixed: Nanoseconds(100),
        per_kib: Nanoseconds(0),
    };
    let volume = Striped::raid0(fixed(4), no_tracks(4), Sectors(8), cost, None).unwrap();
    let (engine, done) = play(volume, vec![issue(Operation::Read, 0, 32)], 1);
    assert_eq!(done[0].done, Nanoseconds(400 + SERVICE_NS));
    assert_eq!(engine.devices()[0].host_busy(), Nanoseconds(400));
}
