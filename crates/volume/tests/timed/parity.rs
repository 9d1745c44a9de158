use super::common::*;
use spinstack_sim::device::{Control, MemberIndex};
use spinstack_sim::engine::{DeviceId, Engine};
use spinstack_sim::fake::FixedServiceDevice;
use spinstack_sim::request::{Operation, Status};
use spinstack_sim::units::Sectors;
use spinstack_volume::map::Raid5Map;
use spinstack_volume::timed::{HostCost, Parity, ParityOptions};

fn md5(options: ParityOptions) -> Parity<FixedServiceDevice, Raid5Map> {
    let layout = Raid5Map::new(5, Sectors(8), Sectors(1 << 20)).unwrap();
    Parity::new(
        fixed(5),
        no_tracks(5),
        layout,
        options,
        HostCost::NONE,
        None,
    )
}

fn totals(volume: &Parity<FixedServiceDevice, Raid5Map>) -> (u64, u64) {
    let stats = volume.stats();
    (
        stats.iter().map(|s| s.requests).sum(),
        stats.iter().map(|s| s.sectors).sum(),
    )
}

// Proves a full-stripe write reads nothing (4 data + 1 parity writes), a
// one-chunk write on a cold stripe does read-modify-write (2 reads, 2 writes), and
// the same write again finds both units in the stripe cache (2 writes only).
#[test]
fn full_stripe_rmw_and_cache() {
    let (engine, done) = play(
        md5(ParityOptions::md()),
        vec![issue(Operation::Write, 0, 32)],
        1,
    );
    assert_eq!(done[0].status, Status::Ok);
    assert_eq!(totals(&engine.devices()[0]), (5, 40));
    let script = vec![
        issue(Operation::Write, 32, 8),
        issue(Operation::Write, 32, 8),
    ];
    let (engine, done) = play(md5(ParityOptions::md()), script, 1);
    assert!(done.iter().all(|c| c.status == Status::Ok));
    assert_eq!(totals(&engine.devices()[0]), (4 + 2, 48));
    let no_cache = ParityOptions {
        stripe_cache_stripes: 0,
        ..ParityOptions::md()
    };
    let script = vec![
        issue(Operation::Write, 32, 8),
        issue(Operation::Write, 32, 8),
    ];
    let (engine, _) = play(md5(no_cache), script, 1);
    assert_eq!(totals(&engine.devices()[0]).0, 8);
}

// Proves the stripe-write counters name each plan and count what it pre-read: a
// full stripe (nothing read), a cold one-chunk write (read-modify-write: old data
// and old parity, 16 sectors), the same write again (its units now cached: still
// read-modify-write, nothing read).
#[test]
fn stripe_write_counters_follow_the_plans() {
    let script = vec![
        issue(Operation::Write, 0, 32),
        issue(Operation::Write, 32, 8),
        issue(Operation::Write, 32, 8),
    ];
    let (engine, done) = play(md5(ParityOptions::md()), script, 1);
    assert!(done.iter().all(|c| c.status == Status::Ok));
    let counters = engine.devices()[0].write_counters();
    assert_eq!(counters.full_stripe, 1, "{counters:?}");
    assert_eq!(counters.read_modify_write, 2, "{counters:?}");
    assert_eq!(counters.reconstruct_write, 0, "{counters:?}");
    assert_eq!(counters.pre_read_sectors, 16, "{counters:?}");
}

// Proves writes to one stripe are serialised by its lock: two writes to the same
// chunk issued together finish one after the other, each after its reads.
#[test]
fn stripe_lock_serialises() {
    let no_cache = ParityOptions {
        stripe_cache_stripes: 0,
        ..ParityOptions::md()
    };
    let script = vec![
        issue(Operation::Write, 32, 8),
        issue(Operation::Write, 32, 8),
    ];
    let (_, done) = play(md5(no_cache), script, 2);
    let times: Vec<u64> = done.iter().map(|c| c.done.0).collect();
    assert_eq!(times, vec![2 * SERVICE_NS, 4 * SERVICE_NS]);
}

// Proves a large read on 4 KB chunks leaves as one merged request per member
// (stripes' chunks coalesced), skipping parity without fill-in and covering it
// with fill-in.
#[test]
fn large_reads_merge_and_fill_in() {
    // Stripes 0..10 (10 rows x 32 data sectors).
    let (engine, _) = play(
        md5(ParityOptions::md()),
        vec![issue(Operation::Read, 0, 320)],
        1,
    );
    let stats = engine.devices()[0].stats();
    // Each member is parity in 2 of the 10 rows: runs broken there.
    assert!(
        stats.iter().all(|s| s.requests >= 2 && s.sectors == 64),
        "{stats:?}"
    );
    let fill_in = ParityOptions {
        fill_in_parity: true,
        ..ParityOptions::md()
    };
    let (engine, _) = play(md5(fill_in), vec![issue(Operation::Read, 0, 320)], 1);
    let stats = engine.devices()[0].stats();
    assert!(
        stats.iter().all(|s| s.requests == 1 && s.sectors == 80),
        "{stats:?}"
    );
}

// Proves degraded operation: with member 2 failed a read of its chunk is rebuilt
// from the four others, writes complete, and a second failure makes requests that
// need a lost unit fail with DeviceFailed.
#[test]
fn degraded_then_lost() {
    let mut engine = Engine::default();
    engine.add_device(md5(ParityOptions::md()));
    engine
        .control(DeviceId(0), &[MemberIndex(2)], Control::Fail)
        .unwrap();
    // Stripe 0: parity on member 4, data 0..3 on members 0..3: LBN 16 is on member 2.
    let mut host = Script {
        script: vec![
            issue(Operation::Read, 16, 8),
            issue(Operation::Write, 16, 8),
            issue(Operation::Read, 0, 32),
        ]
        .into_iter(),
        depth: 1,
        done: Vec::new(),
    };
    spinstack_sim::driver::run(&mut engine, &mut host).unwrap();
    assert!(
        host.done.iter().all(|c| c.status == Status::Ok),
        "{:?}",
        host.done
    );
    assert_eq!(engine.devices()[0].stats()[2].requests, 0);
    engine
        .control(DeviceId(0), &[MemberIndex(0)], Control::Fail)
        .unwrap();
    let mut host = Script {
        script: vec![
            issue(Operation::Read, 16, 8),
            issue(Operation::Write, 40, 8),
        ]
        .into_iter(),
        depth: 1,
        done: Vec::new(),
    };
    spinstack_sim::driver::run(&mut engine, &mut host).unwrap();
    assert!(
        host.done.iter().all(|c| c.status == Status::DeviceFailed),
        "{:?}",
        host.done
    );
}

// Proves a replaced member is used again: with member 2 failed a read of its unit
// reconstructs from the others and sends it nothing; once a new drive replaces it
// (the pacer after an online rebuild) the same read goes to member 2 alone. A
// replace of the volume itself is refused (members are replaced one by one).
#[test]
fn replaced_member_is_read_again() {
    let mut engine = Engine::default();
    engine.add_device(md5(ParityOptions::md()));
    assert!(engine.control(DeviceId(0), &[], Control::Replace).is_err());
    engine
        .control(DeviceId(0), &[MemberIndex(2)], Control::Fail)
        .unwrap();
    let read_member_2 = || Script {
        // Stripe 0: LBN 16 is on member 2 (parity on member 4).
        script: vec![issue(Operation::Read, 16, 8)].into_iter(),
        depth: 1,
        done: Vec::new(),
    };
    let mut host = read_member_2();
    spinstack_sim::driver::run(&mut engine, &mut host).unwrap();
    assert_eq!(host.done[0].status, Status::Ok);
    let requests = |engine: &Engine<Parity<FixedServiceDevice, Raid5Map>>| -> Vec<u64> {
        engine.devices()[0]
            .stats()
            .iter()
            .map(|s| s.requests)
            .collect()
    };
    let degraded = requests(&engine);
    assert_eq!(degraded[2], 0, "a failed member is sent nothing");
    assert!(degraded[0] > 0, "the read reconstructs from the others");
    engine
        .control(DeviceId(0), &[MemberIndex(2)], Control::Replace)
        .unwrap();
    let mut host = read_member_2();
    spinstack_sim::driver::run(&mut engine, &mut host).unwrap();
    assert_eq!(host.done[0].status, Status::Ok);
    let healthy = requests(&engine);
    let sent: Vec<u64> = healthy.iter().zip(&degraded).map(|(h, d)| h - d).collect();
    assert_eq!(
        sent,
        vec![0, 0, 1, 0, 0],
        "the unit is read from member 2 alone"
    );
}

// Proves each stripe write sends its own data and parity writes when several are in
// flight: two cold one-chunk writes to different stripes issued together put the
// same sectors on each member as when issued one after the other (the writes after
// a write's reads are that write's, not those of the write planned last).
#[test]
fn concurrent_stripe_writes_write_their_own_units() {
    let no_cache = ParityOptions {
        stripe_cache_stripes: 0,
        ..ParityOptions::md()
    };
    // Stripe 0's data index 0 and stripe 1's data index 2: different members,
    // different parity members.
    let script = || {
        vec![
            issue(Operation::Write, 0, 8),
            issue(Operation::Write, 48, 8),
        ]
    };
    let per_member = |depth| {
        let (engine, done) = play(md5(no_cache), script(), depth);
        assert!(done.iter().all(|c| c.status == Status::Ok));
        let stats = engine.devices()[0].stats();
        stats.iter().map(|s| s.sectors).collect::<Vec<_>>()
    };
    let one_at_a_time = per_member(1);
    assert_eq!(one_at_a_time.iter().sum::<u64>(), 64, "{one_at_a_time:?}");
    assert_eq!(per_member(2), one_at_a_time);
}
