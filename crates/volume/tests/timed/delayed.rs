//! md's delayed stripes in the timed RAID-5: a write that needs pre-reads waits
//! for the array's plug (3 ms), later writes to its stripe join it, and a stripe
//! they fill is written without reading. The member queues' plug is given a
//! threshold of one request here, so member requests go down at once and every
//! wait measured is the array's.

use super::common::*;
use spinstack_sim::device::{BlockDevice, Control, MemberIndex};
use spinstack_sim::driver::{run, Host, Io, Issue};
use spinstack_sim::engine::{DeviceCompletion, DeviceId, Engine, EngineError};
use spinstack_sim::fake::FixedServiceDevice;
use spinstack_sim::request::{Completion, Operation, Status};
use spinstack_sim::units::{Nanoseconds, Sectors};
use spinstack_volume::map::Raid5Map;
use spinstack_volume::timed::{HostCost, Parity, ParityOptions, PlugPolicy};

const MS: u64 = 1_000_000;
/// The array plug's delay (Linux 2.6's 3 ms).
const DELAY: u64 = 3 * MS;

/// What the host does at a time.
#[derive(Clone, Copy, Debug)]
enum Event {
    Submit(Issue),
    /// Unplug the volume (a process waiting for a page runs the queue).
    Unplug,
    /// Fail a member.
    Fail(u32),
}

/// A host that does each event at its time; completions in completion order.
struct Timed {
    events: Vec<(u64, Event)>,
    done: Vec<Completion>,
}

impl<D: BlockDevice> Host<D> for Timed {
    type Error = EngineError;
    fn start(&mut self, io: &mut Io<'_, D>) -> Result<(), EngineError> {
        for (token, &(at, _)) in self.events.iter().enumerate() {
            io.wake_at(Nanoseconds(at), token as u64)?;
        }
        Ok(())
    }
    fn completed(&mut self, done: &DeviceCompletion, _: &mut Io<'_, D>) -> Result<(), EngineError> {
        self.done.push(done.completion);
        Ok(())
    }
    fn woke(&mut self, token: u64, io: &mut Io<'_, D>) -> Result<(), EngineError> {
        match self.events[token as usize].1 {
            Event::Submit(issue) => io.submit(DeviceId(0), issue).map(|_| ()),
            Event::Unplug => io.control(DeviceId(0), &[], Control::Unplug),
            Event::Fail(member) => io.control(DeviceId(0), &[MemberIndex(member)], Control::Fail),
        }
    }
}

fn md5(options: ParityOptions) -> Parity<FixedServiceDevice, Raid5Map> {
    let layout = Raid5Map::new(5, Sectors(8), Sectors(1 << 20)).unwrap();
    let plug = PlugPolicy {
        threshold: 1,
        ..PlugPolicy::linux26()
    };
    Parity::new(
        fixed(5),
        no_tracks(5),
        layout,
        options,
        HostCost::NONE,
        Some(plug),
    )
}

fn write(lbn: u64, sectors: u64) -> Event {
    Event::Submit(issue(Operation::Write, lbn, sectors))
}

fn play_timed(
    options: ParityOptions,
    events: Vec<(u64, Event)>,
) -> (
    Engine<Parity<FixedServiceDevice, Raid5Map>>,
    Vec<Completion>,
) {
    let mut engine = Engine::default();
    engine.add_device(md5(options));
    let mut host = Timed {
        events,
        done: Vec::new(),
    };
    run(&mut engine, &mut host).unwrap();
    (engine, host.done)
}

fn member_totals(engine: &Engine<Parity<FixedServiceDevice, Raid5Map>>) -> (u64, u64) {
    let stats = engine.devices()[0].stats();
    (
        stats.iter().map(|s| s.requests).sum(),
        stats.iter().map(|s| s.sectors).sum(),
    )
}

// Proves a partial-stripe write followed by the rest of the stripe within the plug
// delay reads nothing: the first waits, the second joins it, the stripe is then
// full and written at once (4 data + 1 parity writes, 40 sectors), and both writes
// complete together when those writes are done.
#[test]
fn rest_of_the_stripe_within_the_delay_joins_and_reads_nothing() {
    let events = vec![(0, write(0, 16)), (MS, write(16, 16))];
    let (engine, done) = play_timed(ParityOptions::md(), events);
    let counters = engine.devices()[0].write_counters();
    assert_eq!(counters.pre_read_sectors, 0, "{counters:?}");
    assert_eq!(counters.full_stripe, 1, "{counters:?}");
    assert_eq!(
        counters.read_modify_write + counters.reconstruct_write,
        0,
        "{counters:?}"
    );
    assert_eq!(
        (
            counters.delayed,
            counters.joined,
            counters.filled_while_delayed
        ),
        (1, 1, 1),
        "{counters:?}"
    );
    assert_eq!(member_totals(&engine), (5, 40));
    assert_eq!(done.len(), 2);
    for completion in &done {
        assert_eq!(completion.status, Status::Ok);
        assert_eq!(completion.done.0, MS + SERVICE_NS, "{done:?}");
    }
}

// Proves a lone partial write waits no longer than the plug delay: the array's
// timer releases it at 3 ms, it reads old data and parity then (16 sectors), and it
// completes one read and one write later; without delayed stripes it goes at once.
#[test]
fn a_lone_partial_write_waits_the_plug_delay_then_pre_reads() {
    let (engine, done) = play_timed(ParityOptions::md(), vec![(0, write(0, 8))]);
    let counters = engine.devices()[0].write_counters();
    assert_eq!(
        (counters.delayed, counters.released_by_timer),
        (1, 1),
        "{counters:?}"
    );
    assert_eq!(counters.read_modify_write, 1, "{counters:?}");
    assert_eq!(counters.pre_read_sectors, 16, "{counters:?}");
    assert_eq!(done[0].status, Status::Ok);
    assert_eq!(done[0].done.0, DELAY + 2 * SERVICE_NS);
    let off = ParityOptions {
        delay_pre_reads: false,
        ..ParityOptions::md()
    };
    let (engine, done) = play_timed(off, vec![(0, write(0, 8))]);
    assert_eq!(done[0].done.0, 2 * SERVICE_NS);
    assert_eq!(engine.devices()[0].write_counters().delayed, 0);
}

// Proves an unplug of the volume releases a waiting stripe at once, and that while
// a released stripe is still pre-reading (md's IO_THRESHOLD of one) a second
// unplug releases nothing: the stripe delayed since waits until the first one's
// writes go, then pre-reads.
#[test]
fn unplug_releases_one_batch_of_pre_reads_at_a_time() {
    // Stripe 0's first chunk, then stripe 2's (LBN 64).
    let events = vec![
        (0, write(0, 8)),
        (MS, Event::Unplug),
        (MS, write(64, 8)),
        (MS, Event::Unplug),
    ];
    let (engine, done) = play_timed(ParityOptions::md(), events);
    let counters = engine.devices()[0].write_counters();
    assert_eq!(counters.released_by_unplug, 1, "{counters:?}");
    assert_eq!(counters.released_after_pre_reads, 1, "{counters:?}");
    assert_eq!(counters.released_by_timer, 0, "{counters:?}");
    let times: Vec<u64> = done.iter().map(|c| c.done.0).collect();
    assert_eq!(times, vec![MS + 2 * SERVICE_NS, MS + 3 * SERVICE_NS]);
}

// Proves a write apart from the waiting one joins it, leaving a gap: the stripe
// write then reads the gap (and the unit nobody writes) and writes the gap back,
// and both writes complete with it; a third write filling the gap makes the
// stripe full, read nothing, and go at once.
#[test]
fn a_write_apart_from_the_waiting_one_joins_and_its_gap_is_read() {
    // Stripe 0's chunks 0 and 2 (members 0 and 2): the gap is member 1's chunk.
    let events = vec![(0, write(0, 8)), (MS, write(16, 8))];
    let (engine, done) = play_timed(ParityOptions::md(), events);
    let counters = engine.devices()[0].write_counters();
    assert_eq!(counters.joined, 1, "{counters:?}");
    assert_eq!(
        (counters.reconstruct_write, counters.pre_read_sectors),
        (1, 16),
        "{counters:?}"
    );
    // Reads of members 1 and 3, writes of members 0..2 and the parity.
    assert_eq!(member_totals(&engine), (6, 48));
    let times: Vec<u64> = done.iter().map(|c| c.done.0).collect();
    assert_eq!(times, vec![DELAY + 2 * SERVICE_NS; 2]);

    let events = vec![(0, write(0, 8)), (MS, write(16, 16)), (2 * MS, write(8, 8))];
    let (engine, done) = play_timed(ParityOptions::md(), events);
    let counters = engine.devices()[0].write_counters();
    assert_eq!(
        (counters.joined, counters.full_stripe),
        (2, 1),
        "{counters:?}"
    );
    assert_eq!(counters.pre_read_sectors, 0, "{counters:?}");
    let times: Vec<u64> = done.iter().map(|c| c.done.0).collect();
    assert_eq!(times, vec![2 * MS + SERVICE_NS; 3]);
}

// Proves a write overlapping what the waiting write writes does not join (md's
// add_stripe_bio refuses an overlap): it waits for the stripe behind it, and each
// does its own pre-reads.
#[test]
fn an_overlapping_write_waits_its_turn() {
    let events = vec![(0, write(0, 16)), (MS, write(8, 16))];
    let (engine, done) = play_timed(ParityOptions::md(), events);
    let counters = engine.devices()[0].write_counters();
    assert_eq!(counters.joined, 0, "{counters:?}");
    assert_eq!(
        counters.read_modify_write + counters.reconstruct_write,
        2,
        "{counters:?}"
    );
    assert!(done.iter().all(|c| c.status == Status::Ok));
    assert!(done.iter().all(|c| c.done.0 > DELAY), "{done:?}");
}

// Proves the failed-member paths: a member failing while a write waits makes its
// release re-plan around it (the failed member is never sent anything: its data is
// reconstructed-written from the other three data members into parity); a second
// failure while two joined writes wait fails both; a gap between joined writes on
// a member that fails is rebuilt from the others.
#[test]
fn a_member_failing_while_a_write_waits() {
    // Stripe 0: data on members 0..3, parity on 4; the write is member 0's chunk.
    let events = vec![(0, write(0, 8)), (MS, Event::Fail(0))];
    let (engine, done) = play_timed(ParityOptions::md(), events);
    let volume = &engine.devices()[0];
    assert_eq!(done[0].status, Status::Ok);
    assert!(done[0].done.0 >= DELAY, "{done:?}");
    assert_eq!(volume.stats()[0].requests, 0);
    let counters = volume.write_counters();
    assert_eq!(
        (counters.delayed, counters.reconstruct_write),
        (1, 1),
        "{counters:?}"
    );
    // Reads of members 1..3, then the parity write.
    assert_eq!(member_totals(&engine), (4, 32));

    let events = vec![
        (0, write(0, 8)),
        (MS / 2, write(8, 8)),
        (MS, Event::Fail(1)),
        (MS, Event::Fail(2)),
    ];
    let (engine, done) = play_timed(ParityOptions::md(), events);
    assert_eq!(done.len(), 2);
    assert!(
        done.iter().all(|c| c.status == Status::DeviceFailed),
        "{done:?}"
    );
    assert_eq!(engine.devices()[0].write_counters().joined, 1);
    assert_eq!(member_totals(&engine), (0, 0));

    // A gap left by a join (member 1's chunk), then member 1 fails: the gap is
    // rebuilt from the other members, and member 1 is sent nothing.
    let events = vec![
        (0, write(0, 8)),
        (MS, write(16, 8)),
        (2 * MS, Event::Fail(1)),
    ];
    let (engine, done) = play_timed(ParityOptions::md(), events);
    assert!(done.iter().all(|c| c.status == Status::Ok), "{done:?}");
    assert_eq!(engine.devices()[0].stats()[1].requests, 0);
}
