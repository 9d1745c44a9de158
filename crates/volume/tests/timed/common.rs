//! Shared helpers: devices, a host that plays a script, track maps of catalog drives.

use spinstack_disk::drive::{Drive, DriveOptions};
use spinstack_sim::device::BlockDevice;
use spinstack_sim::driver::{run, Host, Io, Issue};
use spinstack_sim::engine::{DeviceCompletion, DeviceId, Engine, EngineError};
use spinstack_sim::fake::FixedServiceDevice;
use spinstack_sim::request::{Completion, Operation};
use spinstack_sim::units::{Lbn, Nanoseconds, Sectors};
use spinstack_trackmap::TrackMap;

pub const SERVICE_NS: u64 = 1_000;

pub fn fixed(count: usize) -> Vec<FixedServiceDevice> {
    (0..count)
        .map(|_| FixedServiceDevice::new(Sectors(1 << 20), Nanoseconds(SERVICE_NS), 64))
        .collect()
}

pub fn no_tracks(count: usize) -> Vec<Option<TrackMap>> {
    vec![None; count]
}

pub fn issue(operation: Operation, lbn: u64, sectors: u64) -> Issue {
    Issue::new(operation, Lbn(lbn), Sectors(sectors))
}

/// Plays `script` keeping `depth` requests at device 0; returns completions in
/// completion order.
pub struct Script {
    pub script: std::vec::IntoIter<Issue>,
    pub depth: u32,
    pub done: Vec<Completion>,
}

impl<D: BlockDevice> Host<D> for Script {
    type Error = EngineError;
    fn start(&mut self, io: &mut Io<'_, D>) -> Result<(), EngineError> {
        for _ in 0..self.depth {
            self.next(io)?;
        }
        Ok(())
    }
    fn completed(
        &mut self,
        done: &DeviceCompletion,
        io: &mut Io<'_, D>,
    ) -> Result<(), EngineError> {
        self.done.push(done.completion);
        self.next(io)
    }
    fn woke(&mut self, _: u64, _: &mut Io<'_, D>) -> Result<(), EngineError> {
        Ok(())
    }
}

impl Script {
    fn next<D: BlockDevice>(&mut self, io: &mut Io<'_, D>) -> Result<(), EngineError> {
        match self.script.next() {
            Some(issue) => io.submit(DeviceId(0), issue).map(|_| ()),
            None => Ok(()),
        }
    }
}

/// Run `script` at `depth` on `volume`; returns the engine (to read the volume
/// back) and the completions.
pub fn play<D: BlockDevice>(
    volume: D,
    script: Vec<Issue>,
    depth: u32,
) -> (Engine<D>, Vec<Completion>) {
    let mut engine = Engine::default();
    engine.add_device(volume);
    let mut host = Script {
        script: script.into_iter(),
        depth,
        done: Vec::new(),
    };
    run(&mut engine, &mut host).expect("the volume accepts the script");
    (engine, host.done)
}

/// A catalog drive and its true track map.
pub fn drive_with_map(name: &str) -> (Drive, TrackMap) {
    let spec = spinstack_disk::catalog::get(name).expect("catalog drive");
    let drive = Drive::new(&spec, DriveOptions::default()).expect("drive builds");
    let map = drive.layout().track_map(name);
    (drive, map)
}
