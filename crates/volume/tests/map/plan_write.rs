//! Write plans: executed over bytes they keep parity equal to the XOR of the data,
//! healthy or degraded; full-stripe writes read nothing; the cheaper of
//! read-modify-write and reconstruct-write is chosen; the degraded cases by hand.

use crate::common::{member_sizes, parity_case, Rng};
use crate::executor::ByteArray;
use proptest::prelude::*;
use spinstack_sim::units::{Lbn, Sectors};
use spinstack_volume::map::plan::{
    nothing_cached, plan_read, plan_write, plan_write_into, ParityMethod, ReadOptions, WriteChoice,
    WriteKind, WritePlan,
};
use spinstack_volume::map::{MemberExtent, MemberIndex, ParityLayout, Raid5Map, StripeRange};

fn extent(member: u32, lbn: u64, sectors: u64) -> MemberExtent {
    MemberExtent {
        member: MemberIndex(member),
        lbn: Lbn(lbn),
        sectors: Sectors(sectors),
    }
}

/// A random range inside `stripe`'s data.
fn range_in(layout: &dyn ParityLayout, stripe: u64, rng: &mut Rng) -> StripeRange {
    let data = layout.stripe_data_sectors(stripe).0;
    let start = rng.range(0, data - 1);
    StripeRange {
        start: Sectors(start),
        sectors: Sectors(rng.range(1, data - start)),
    }
}

proptest! {
    // The plans are the crate's most intricate logic and each case is cheap.
    #![proptest_config(ProptestConfig::with_cases(2048))]

    // Proves that executing write plans (new parity computed only from what the plan
    // read or the cache held, by each run's formula) keeps every stripe's parity equal
    // to the XOR of its data, for random writes, random caches and a random failed
    // member (never read or written); and that a degraded read afterwards returns the
    // new data, the failed member's included (rebuilt from the new parity).
    #[test]
    fn writes_keep_parity_consistent(
        case in parity_case(),
        seed in any::<u64>(),
        failed in prop::option::of(0u32..6),
    ) {
        let layout = case.build();
        let mut rng = Rng::new(seed);
        let mut array = ByteArray::new(&*layout, &member_sizes(&case), &mut rng);
        array.failed = failed.map(|f| MemberIndex(f % layout.members()));
        let capacity = layout.capacity().0;
        for _ in 0..5 {
            let lbn = rng.range(0, capacity - 1);
            let length = rng.range(1, capacity - lbn);
            let data: Vec<u8> = (0..length).map(|_| rng.next() as u8).collect();
            let cache_seed = rng.next();
            let written = array.write(Lbn(lbn), &data, cache_seed);
            prop_assert_eq!(written, Ok(()), "write of {} at {}", length, lbn);
            let consistent = array.check_consistent();
            prop_assert_eq!(consistent, Ok(()), "after write of {} at {}", length, lbn);
        }
        let got = array.read(Lbn(0), Sectors(capacity), ReadOptions::default());
        prop_assert_eq!(got.as_deref(), Ok(array.volume.as_slice()));
    }

    // Proves a full-stripe write reads nothing and writes every live unit (parity
    // included unless it failed), with any one member failed or none.
    #[test]
    fn full_stripe_writes_read_nothing(case in parity_case(), failed in prop::option::of(0u32..6)) {
        let layout = case.build();
        let failed = failed.map(|f| MemberIndex(f % layout.members()));
        for stripe in 0..layout.stripes() {
            let sectors = layout.stripe_data_sectors(stripe);
            let range = StripeRange { start: Sectors(0), sectors };
            let plan = plan_write(&*layout, stripe, range, failed, &nothing_cached).unwrap();
            prop_assert!(plan.reads.is_empty(), "stripe {} reads {:?}", stripe, plan.reads);
            let parity_failed = failed == Some(layout.parity_member(stripe));
            let expect =
                if parity_failed { WriteKind::DegradedNoParity } else { WriteKind::FullStripe };
            prop_assert_eq!(plan.kind, expect);
            let live = layout.members() - u32::from(failed.is_some());
            prop_assert_eq!(plan.writes.len() as u32, live);
        }
    }

    // Proves the healthy choice reads no more member extents than either method forced
    // (and no more sectors when the extent counts tie), with or without a cache.
    #[test]
    fn cheapest_method_reads_least(case in parity_case(), seed in any::<u64>()) {
        let layout = case.build();
        let mut rng = Rng::new(seed);
        let stripe = rng.range(0, layout.stripes() - 1);
        let range = range_in(&*layout, stripe, &mut rng);
        let cached = move |m: MemberIndex, l: Lbn, _: Sectors| {
            seed % 2 == 0 && (l.0 + u64::from(m.0)).is_multiple_of(3)
        };
        let cost = |choice| {
            let mut plan = WritePlan::default();
            plan_write_into(&*layout, stripe, range, None, &cached, choice, &mut plan).unwrap();
            (plan.reads.len(), plan.reads.iter().map(|r| r.sectors.0).sum::<u64>())
        };
        let cheapest = cost(WriteChoice::Cheapest);
        prop_assert!(cheapest <= cost(WriteChoice::ReadModifyWrite));
        prop_assert!(cheapest <= cost(WriteChoice::ReconstructWrite));
    }
}

// Proves the choice by hand on md RAID-5 over 5 members, 8-sector chunks (stripe 0:
// data on members 0-3, parity on 4): 2 sectors of one unit cost read-modify-write 2
// extents (old data, old parity) against 3, so RMW; 3 whole units of 4 cost
// reconstruct-write 1 extent (the fourth unit) against 4, so RCW.
#[test]
fn choice_by_hand() {
    let map = Raid5Map::new(5, Sectors(8), Sectors(80)).unwrap();
    let small = StripeRange {
        start: Sectors(3),
        sectors: Sectors(2),
    };
    let plan = plan_write(&map, 0, small, None, &nothing_cached).unwrap();
    assert_eq!(plan.kind, WriteKind::ReadModifyWrite);
    assert_eq!(plan.reads, [extent(0, 3, 2), extent(4, 3, 2)]);
    assert_eq!(plan.writes, [extent(0, 3, 2), extent(4, 3, 2)]);
    let large = StripeRange {
        start: Sectors(0),
        sectors: Sectors(24),
    };
    let plan = plan_write(&map, 0, large, None, &nothing_cached).unwrap();
    assert_eq!(plan.kind, WriteKind::ReconstructWrite);
    assert_eq!(plan.reads, [extent(3, 0, 8)]);
    assert_eq!(plan.parity_writes(), [extent(4, 0, 8)]);
    assert_eq!(plan.data_writes().len(), 3);
}

// Proves cached old contents are not read: with everything cached a partial write
// reads nothing.
#[test]
fn cached_contents_are_not_read() {
    let map = Raid5Map::new(5, Sectors(8), Sectors(80)).unwrap();
    let range = StripeRange {
        start: Sectors(3),
        sectors: Sectors(2),
    };
    let plan = plan_write(&map, 0, range, None, &|_, _, _| true).unwrap();
    assert!(plan.reads.is_empty());
    assert_eq!(plan.writes.len(), 2);
}

// Proves the degraded cases by hand on md RAID-5 over 4 members, 4-sector chunks
// (stripe 0: data on members 0, 1, 2; parity on 3), writing stripe offsets 2..6
// (member 0's offsets 2..4, member 1's 0..2):
// - member 0 failed: offsets 2..4 (member 0 written) by reconstruct-write, reading
//   members 1 and 2 there; offsets 0..2 (member 0 unwritten, its old data unreadable)
//   by read-modify-write, reading member 1's old data and the parity; nothing read or
//   written on member 0;
// - member 3 (parity) failed: data written, nothing read.
#[test]
fn degraded_writes_by_hand() {
    let map = Raid5Map::new(4, Sectors(4), Sectors(40)).unwrap();
    let range = StripeRange {
        start: Sectors(2),
        sectors: Sectors(4),
    };
    let plan = plan_write(&map, 0, range, Some(MemberIndex(0)), &nothing_cached).unwrap();
    assert_eq!(plan.kind, WriteKind::DegradedMixed);
    assert_eq!(
        plan.reads,
        [extent(1, 0, 4), extent(2, 2, 2), extent(3, 0, 2)]
    );
    assert_eq!(plan.writes, [extent(1, 0, 2), extent(3, 0, 4)]);
    let methods: Vec<_> = plan
        .parity_runs
        .iter()
        .map(|r| (r.start.0, r.sectors.0, r.method))
        .collect();
    assert_eq!(
        methods,
        [
            (0, 2, ParityMethod::ReadModifyWrite),
            (2, 2, ParityMethod::ReconstructWrite)
        ]
    );
    let plan = plan_write(&map, 0, range, Some(MemberIndex(3)), &nothing_cached).unwrap();
    assert_eq!(plan.kind, WriteKind::DegradedNoParity);
    assert!(plan.reads.is_empty() && plan.parity_writes().is_empty());
    assert_eq!(plan.writes, [extent(0, 2, 2), extent(1, 0, 2)]);
}

// Proves a degraded read after a degraded write by hand: the failed member's new data
// is served from parity (the plan reads all other members).
#[test]
fn degraded_read_plan_after_write_reads_others() {
    let map = Raid5Map::new(4, Sectors(4), Sectors(40)).unwrap();
    let plan = plan_read(
        &map,
        Lbn(2),
        Sectors(2),
        Some(MemberIndex(0)),
        ReadOptions::default(),
    )
    .unwrap();
    let members: Vec<_> = plan.reads.iter().map(|r| r.member.0).collect();
    assert_eq!(members, [1, 2, 3]);
}
