//! What the timed volume layer costs per member request: a 5-member RAID-5 (64 KiB
//! chunks) of catalog Atlas 10K drives (queues of 16) serving random 4 KiB reads with 16 requests
//! outstanding, against the same member requests sent to the same five drives
//! directly (16 outstanding over the five). Each 4 KiB read of the volume is one
//! member request, so the two count the same items: the ratio of their times per
//! item is the layer's overhead (issue 8's bound: at most 1.5x).

use spinstack_disk::drive::{Drive, DriveOptions};
use spinstack_sim::device::BlockDevice;
use spinstack_sim::driver::{run, run_closed_loop, Host, Io, Issue, RequestSpec};
use spinstack_sim::engine::{DeviceCompletion, DeviceId, Engine, EngineError};
use spinstack_sim::request::Operation;
use spinstack_sim::rng::Xoshiro256StarStar;
use spinstack_sim::units::{Lbn, Nanoseconds, Sectors};
use spinstack_volume::map::{ParityLayout, Raid5Map};
use spinstack_volume::timed::{HostCost, Parity, ParityOptions};

fn main() {
    divan::main();
}

const REQUESTS: u64 = 20_000;
const DEPTH: u32 = 16;
const MEMBERS: u32 = 5;

fn drives() -> Vec<Drive> {
    let spec = spinstack_disk::catalog::get("atlas10k").expect("catalog drive");
    (0..MEMBERS)
        .map(|_| {
            let options = DriveOptions {
                queue_depth: Some(DEPTH),
                ..DriveOptions::default()
            };
            Drive::new(&spec, options).expect("drive builds")
        })
        .collect()
}

fn layout(drives: &[Drive]) -> Raid5Map {
    Raid5Map::new(MEMBERS, Sectors(128), drives[0].capacity()).expect("layout")
}

/// Random 4 KiB-aligned volume LBNs, the same stream for both benchmarks.
fn lbns(capacity: u64) -> impl FnMut() -> Lbn {
    let mut rng = Xoshiro256StarStar::seed_from_u64(7);
    move || Lbn(rng.below(capacity / 8) * 8)
}

#[divan::bench]
fn raid5_volume(bencher: divan::Bencher) {
    bencher
        .counter(divan::counter::ItemsCount::new(REQUESTS))
        .with_inputs(|| {
            let drives = drives();
            let layout = layout(&drives);
            Parity::new(
                drives,
                vec![None; MEMBERS as usize],
                layout,
                ParityOptions::md(),
                HostCost::NONE,
                None,
            )
        })
        .bench_local_values(|volume| {
            let mut next = lbns(volume.capacity().0);
            let mut engine = Engine::default();
            engine.add_device(volume);
            let mut left = REQUESTS;
            let mut source = |_| {
                left = left.checked_sub(1)?;
                Some(RequestSpec {
                    operation: Operation::Read,
                    lbn: next(),
                    sectors: Sectors(8),
                    think_after: Nanoseconds::ZERO,
                })
            };
            run_closed_loop(&mut engine, DEPTH, &mut source, |_| {}).expect("served")
        });
}

/// Keeps `DEPTH` requests outstanding over the drives, each going where the
/// RAID-5 map sends the volume read.
struct Direct<F: FnMut() -> Lbn> {
    layout: Raid5Map,
    next: F,
    left: u64,
}

impl<F: FnMut() -> Lbn> Direct<F> {
    fn issue(&mut self, io: &mut Io<'_, Drive>) -> Result<(), EngineError> {
        if self.left == 0 {
            return Ok(());
        }
        self.left -= 1;
        let (member, lbn) = self
            .layout
            .locate((self.next)())
            .expect("inside the volume");
        io.submit(
            DeviceId(member.0),
            Issue::new(Operation::Read, lbn, Sectors(8)),
        )?;
        Ok(())
    }
}

impl<F: FnMut() -> Lbn> Host<Drive> for Direct<F> {
    type Error = EngineError;
    fn start(&mut self, io: &mut Io<'_, Drive>) -> Result<(), EngineError> {
        for _ in 0..DEPTH {
            self.issue(io)?;
        }
        Ok(())
    }
    fn completed(
        &mut self,
        _: &DeviceCompletion,
        io: &mut Io<'_, Drive>,
    ) -> Result<(), EngineError> {
        self.issue(io)
    }
    fn woke(&mut self, _: u64, _: &mut Io<'_, Drive>) -> Result<(), EngineError> {
        Ok(())
    }
}

#[divan::bench]
fn drives_directly(bencher: divan::Bencher) {
    bencher
        .counter(divan::counter::ItemsCount::new(REQUESTS))
        .with_inputs(drives)
        .bench_local_values(|drives| {
            let layout = layout(&drives);
            let next = lbns(layout.capacity().0);
            let mut engine = Engine::default();
            for drive in drives {
                engine.add_device(drive);
            }
            let mut host = Direct {
                layout,
                next,
                left: REQUESTS,
            };
            run(&mut engine, &mut host).expect("served")
        });
}
