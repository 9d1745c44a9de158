//! The member queue's plug (Linux 2.6 holds requests up to 3 ms to merge them) and
//! the validation paper's track-aware change to it, on a single drive with tracks
//! of 100 sectors.

use super::common::*;
use spinstack_sim::driver::{run, Issue};
use spinstack_sim::engine::Engine;
use spinstack_sim::fake::FixedServiceDevice;
use spinstack_sim::request::{Completion, Operation};
use spinstack_sim::units::{Lbn, Nanoseconds, Sectors};
use spinstack_trackmap::{Track, TrackMap};
use spinstack_volume::timed::{HostCost, PlugPolicy, Striped};

const TRACK: u64 = 100;
const CAPACITY: u64 = 100_000;

fn tracks() -> TrackMap {
    let tracks = (0..CAPACITY / TRACK)
        .map(|k| Track {
            first: Lbn(k * TRACK),
            sectors: Sectors(TRACK),
            location: None,
            uncertain: false,
        })
        .collect();
    TrackMap::new("test", "test", Sectors(CAPACITY), tracks, Vec::new()).unwrap()
}

fn run_plugged(
    track_aware: bool,
    script: Vec<Issue>,
) -> (Engine<Striped<FixedServiceDevice>>, Vec<Completion>) {
    let plug = PlugPolicy {
        track_aware,
        ..PlugPolicy::linux26()
    };
    let device = FixedServiceDevice::new(Sectors(CAPACITY), Nanoseconds(SERVICE_NS), 64);
    let volume = Striped::single(device, Some(tracks()), HostCost::NONE, Some(plug)).unwrap();
    let mut engine = Engine::default();
    engine.add_device(volume);
    let mut host = Script {
        script: script.into_iter(),
        depth: 4,
        done: Vec::new(),
    };
    run(&mut engine, &mut host).unwrap();
    (engine, host.done)
}

// Proves the plain plug merges adjacent requests of different parents into one
// member request (even across a track boundary) and holds it for its 3 ms.
#[test]
fn plain_plug_merges_and_waits() {
    let script = vec![
        issue(Operation::Read, 50, 50),
        issue(Operation::Read, 100, 50),
    ];
    let (engine, done) = run_plugged(false, script);
    let member = engine.devices()[0].stats()[0];
    assert_eq!((member.requests, member.sectors), (1, 100));
    assert_eq!(member.track_crossing_requests, 1);
    assert!(
        done.iter()
            .all(|c| c.done == Nanoseconds(3_000_000 + SERVICE_NS)),
        "{done:?}"
    );
}

// Proves the track-aware plug cuts a request at the track boundary, sends at once
// the piece that ends the track, never merges across a boundary, and lets only the
// unfinished track's piece wait out the delay.
#[test]
fn track_aware_plug_respects_boundaries() {
    let script = vec![issue(Operation::Read, 50, 80)];
    let (engine, done) = run_plugged(true, script);
    let member = engine.devices()[0].stats()[0];
    assert_eq!((member.requests, member.sectors), (2, 80));
    assert_eq!(member.track_crossing_requests, 0);
    assert_eq!(done[0].done, Nanoseconds(3_000_000 + SERVICE_NS));
    // A whole track goes down at once, as one whole-track request.
    let (engine, done) = run_plugged(true, vec![issue(Operation::Read, 200, 100)]);
    assert_eq!(done[0].done, Nanoseconds(SERVICE_NS));
    assert_eq!(engine.devices()[0].stats()[0].whole_track_requests, 1);
}

/// Issues its reads at start, then, after `unplug_after`, tells the volume to
/// unplug (a process starting to wait for a page).
struct Waiter {
    reads: Vec<Issue>,
    unplug_after: Nanoseconds,
    done: Vec<Completion>,
}

impl<D: spinstack_sim::device::BlockDevice> spinstack_sim::driver::Host<D> for Waiter {
    type Error = spinstack_sim::engine::EngineError;
    fn start(&mut self, io: &mut spinstack_sim::driver::Io<'_, D>) -> Result<(), Self::Error> {
        for read in &self.reads {
            io.submit(spinstack_sim::engine::DeviceId(0), *read)?;
        }
        io.wake_at(self.unplug_after, 0)
    }
    fn completed(
        &mut self,
        done: &spinstack_sim::engine::DeviceCompletion,
        _: &mut spinstack_sim::driver::Io<'_, D>,
    ) -> Result<(), Self::Error> {
        self.done.push(done.completion);
        Ok(())
    }
    fn woke(
        &mut self,
        _: u64,
        io: &mut spinstack_sim::driver::Io<'_, D>,
    ) -> Result<(), Self::Error> {
        io.control(
            spinstack_sim::engine::DeviceId(0),
            &[],
            spinstack_sim::device::Control::Unplug,
        )
    }
}

// Proves `Control::Unplug` sends what the plug holds at once (merged as the plug
// merges it), instead of at the end of the 3 ms delay: Linux runs the queue when
// a process waits for a page.
#[test]
fn unplug_sends_the_queue_at_once() {
    let device = FixedServiceDevice::new(Sectors(CAPACITY), Nanoseconds(SERVICE_NS), 64);
    let volume = Striped::single(
        device,
        Some(tracks()),
        HostCost::NONE,
        Some(PlugPolicy::linux26()),
    )
    .unwrap();
    let mut engine = Engine::default();
    engine.add_device(volume);
    let unplug_after = Nanoseconds(1_000_000);
    let mut host = Waiter {
        reads: vec![
            issue(Operation::Read, 50, 50),
            issue(Operation::Read, 100, 50),
        ],
        unplug_after,
        done: Vec::new(),
    };
    run(&mut engine, &mut host).unwrap();
    let member = engine.devices()[0].stats()[0];
    assert_eq!((member.requests, member.sectors), (1, 100), "still merged");
    assert_eq!(host.done.len(), 2);
    assert!(
        host.done
            .iter()
            .all(|c| c.done == Nanoseconds(unplug_after.0 + SERVICE_NS)),
        "{:?}",
        host.done
    );
}
