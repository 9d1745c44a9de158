//! Random mixes of reads, writes, trims and flushes on every level over
//! fixed-service devices, at queue depth 8, with a member failing part way for the
//! redundant levels: every request completes exactly once (the engine asserts
//! it), and with at most one failure every request completes Ok.

use super::common::*;
use spinstack_sim::device::{BlockDevice, Control, MemberIndex};
use spinstack_sim::driver::Issue;
use spinstack_sim::engine::{DeviceId, Engine};
use spinstack_sim::fake::FixedServiceDevice;
use spinstack_sim::request::{Operation, Status};
use spinstack_sim::rng::Xoshiro256StarStar;
use spinstack_sim::units::{Lbn, Sectors};
use spinstack_volume::map::{Raid5Map, TrackAlignedLayout, UnitPolicy};
use spinstack_volume::timed::{
    DmaBuffer, HostCost, Mirrored, Parity, ParityOptions, PlugPolicy, ReadBalance, Striped,
    WritePolicy,
};

fn script(rng: &mut Xoshiro256StarStar, capacity: u64, count: usize) -> Vec<Issue> {
    (0..count)
        .map(|_| {
            let operation = match rng.below(10) {
                0..=4 => Operation::Read,
                5..=7 => Operation::Write,
                8 => Operation::Trim,
                _ => Operation::Flush,
            };
            if operation == Operation::Flush {
                return issue(Operation::Flush, 0, 0);
            }
            let sectors = 1 + rng.below(200);
            let lbn = rng.below(capacity - sectors);
            Issue::new(operation, Lbn(lbn), Sectors(sectors))
        })
        .collect()
}

/// Run two halves of a random script, failing `fail` (if any) between them.
fn check<D: BlockDevice>(name: &str, volume: D, fail: Option<MemberIndex>, seed: u64) {
    let mut rng = Xoshiro256StarStar::seed_from_u64(seed);
    let capacity = volume.capacity().0.min(1 << 18);
    let mut engine = Engine::default();
    engine.add_device(volume);
    for half in 0..2 {
        if half == 1 {
            if let Some(member) = fail {
                engine
                    .control(DeviceId(0), &[member], Control::Fail)
                    .unwrap();
            }
        }
        let mut host = Script {
            script: script(&mut rng, capacity, 400).into_iter(),
            depth: 8,
            done: Vec::new(),
        };
        spinstack_sim::driver::run(&mut engine, &mut host).unwrap();
        assert_eq!(host.done.len(), 400, "{name}, seed {seed}");
        for c in &host.done {
            assert_eq!(c.status, Status::Ok, "{name}, seed {seed}: {c:?}");
        }
    }
}

fn tracks(members: usize, seed: u64) -> Vec<Vec<Sectors>> {
    let mut rng = Xoshiro256StarStar::seed_from_u64(seed);
    (0..members)
        .map(|_| (0..4000).map(|_| Sectors(40 + rng.below(25))).collect())
        .collect()
}

#[test]
fn every_level_completes_every_request() {
    for seed in 0..6 {
        let plug = (seed % 2 == 1).then(PlugPolicy::linux26);
        let host = HostCost::NONE;
        check(
            "single",
            Striped::single(fixed(1).remove(0), None, host, plug).unwrap(),
            None,
            seed,
        );
        check(
            "raid0",
            Striped::raid0(fixed(3), no_tracks(3), Sectors(16), host, plug).unwrap(),
            None,
            seed,
        );
        let raid1 = Mirrored::new(
            fixed(3),
            no_tracks(3),
            None,
            ReadBalance::NearestHead,
            host,
            plug,
        )
        .unwrap();
        check("raid1", raid1, Some(MemberIndex(1)), seed);
        let raid10 = Mirrored::new(
            fixed(5),
            no_tracks(5),
            Some((Sectors(16), 2)),
            ReadBalance::ShortestQueue,
            host,
            plug,
        )
        .unwrap();
        check("raid10", raid10, Some(MemberIndex(3)), seed);
        let layout = Raid5Map::new(5, Sectors(8), Sectors(1 << 20)).unwrap();
        let raid5 = Parity::new(
            fixed(5),
            no_tracks(5),
            layout,
            ParityOptions::md(),
            host,
            plug,
        );
        check("raid5", raid5, Some(MemberIndex(seed as u32 % 5)), seed);
        let layout = TrackAlignedLayout::new(tracks(4, seed), UnitPolicy::WholeTrack).unwrap();
        let aligned = Parity::new(
            fixed(4),
            no_tracks(4),
            layout,
            ParityOptions::track_aligned(),
            host,
            plug,
        );
        check("raid5-track-aligned", aligned, Some(MemberIndex(2)), seed);
        let below = Parity::new(
            fixed(5),
            no_tracks(5),
            Raid5Map::new(5, Sectors(8), Sectors(1 << 20)).unwrap(),
            ParityOptions::md(),
            host,
            plug,
        );
        let policy = if seed % 3 == 0 {
            WritePolicy::WriteThrough
        } else {
            WritePolicy::WriteBack
        };
        let dab: DmaBuffer<Parity<FixedServiceDevice, Raid5Map>> = DmaBuffer::new(
            below,
            Sectors(64),
            16,
            policy,
            HostCost::windows2000_buffered(),
        );
        check("dab over raid5", dab, Some(MemberIndex(0)), seed);
    }
}
