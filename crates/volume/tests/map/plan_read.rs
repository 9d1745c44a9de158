//! Read plans: healthy reads follow the data map, degraded reads rebuild the right
//! bytes, fill-in and whole-unit widening behave as the validation paper describes.

use crate::common::{member_sizes, parity_case, Rng};
use crate::executor::ByteArray;
use proptest::prelude::*;
use spinstack_sim::units::{Lbn, Sectors};
use spinstack_volume::map::plan::{plan_read, ReadOptions, ReadPurpose};
use spinstack_volume::map::{MemberExtent, MemberIndex, ParityLayout, Raid5Map, Role};

fn options() -> impl Strategy<Value = ReadOptions> {
    (any::<bool>(), any::<bool>()).prop_map(|(fill_in_parity, whole_units)| ReadOptions {
        fill_in_parity,
        whole_units,
    })
}

/// The stripe a read extent belongs to, from its first sector (always used).
fn stripe_of_read(layout: &dyn ParityLayout, read: &MemberExtent) -> u64 {
    match layout.inverse(read.member, read.lbn) {
        Role::Data(lbn) => layout.stripe_of(lbn).unwrap(),
        Role::Parity { stripe, .. } => stripe,
        Role::Unused => panic!("read {read:?} starts on an unused sector"),
    }
}

proptest! {
    // The plans are the crate's most intricate logic and each case is cheap.
    #![proptest_config(ProptestConfig::with_cases(2048))]

    // Proves a healthy read without options reads exactly the data pieces of the
    // split, every use is data, and nothing is lost.
    #[test]
    fn healthy_read_is_the_split(case in parity_case(), a in any::<u64>(), b in any::<u64>()) {
        let layout = case.build();
        let lbn = Lbn(a % layout.capacity().0);
        let sectors = Sectors(b % (layout.capacity().0 - lbn.0 + 1));
        let plan = plan_read(&*layout, lbn, sectors, None, ReadOptions::default()).unwrap();
        let mut pieces = Vec::new();
        layout.split_into(lbn, sectors, &mut pieces).unwrap();
        let mut from_split: Vec<_> = pieces.iter().map(|p| p.extent).collect();
        let mut from_plan = plan.reads.clone();
        from_split.sort_by_key(|e| (e.member, e.lbn));
        from_plan.sort_by_key(|e| (e.member, e.lbn));
        prop_assert_eq!(from_plan, from_split);
        prop_assert!(plan.lost.is_empty());
        let all_data = plan.uses.iter().all(|u| matches!(u.purpose, ReadPurpose::Data { .. }));
        prop_assert!(all_data, "a healthy read has a non-data use");
    }

    // Proves executing a read plan returns the volume's bytes, healthy or with any one
    // member failed (lost data rebuilt from the other members), with or without
    // fill-in and whole units; never reads the failed member; every sector read is
    // explained by a use; reads of one member in one stripe are never contiguous
    // (they would have been one extent).
    #[test]
    fn reads_return_the_volume(
        case in parity_case(),
        seed in any::<u64>(),
        failed in prop::option::of(0u32..6),
        options in options(),
    ) {
        let layout = case.build();
        let mut rng = Rng::new(seed);
        let mut array = ByteArray::new(&*layout, &member_sizes(&case), &mut rng);
        array.failed = failed.map(|f| MemberIndex(f % layout.members()));
        for _ in 0..4 {
            let lbn = rng.range(0, layout.capacity().0 - 1);
            let sectors = rng.range(0, layout.capacity().0 - lbn);
            let got = array.read(Lbn(lbn), Sectors(sectors), options);
            let want = &array.volume[lbn as usize..(lbn + sectors) as usize];
            prop_assert_eq!(got.as_deref(), Ok(want), "read of {} at {}", sectors, lbn);
            let plan =
                plan_read(&*layout, Lbn(lbn), Sectors(sectors), array.failed, options).unwrap();
            for (i, x) in plan.reads.iter().enumerate() {
                for y in &plan.reads[i + 1..] {
                    let same_stripe = stripe_of_read(&*layout, x) == stripe_of_read(&*layout, y);
                    let touch = x.member == y.member && x.lbn <= y.end() && y.lbn <= x.end();
                    prop_assert!(!(same_stripe && touch), "reads {:?}, {:?} should be one", x, y);
                }
            }
        }
    }
}

// Proves fill-in by hand on md RAID-5 over 4 members, 4-sector chunks: a read of
// volume 2..10 touches all three data units of stripe 0, so parity (member 3) is read
// over the hull of the data offsets (0..4) and discarded; a read of 2..6 touches only
// two data units, so parity is not filled in.
#[test]
fn fill_in_reads_parity_when_it_is_the_only_member_left() {
    let map = Raid5Map::new(4, Sectors(4), Sectors(40)).unwrap();
    let fill = ReadOptions {
        fill_in_parity: true,
        whole_units: false,
    };
    let plan = plan_read(&map, Lbn(2), Sectors(8), None, fill).unwrap();
    let extent = |m, lbn, sectors| MemberExtent {
        member: MemberIndex(m),
        lbn: Lbn(lbn),
        sectors: Sectors(sectors),
    };
    assert_eq!(
        plan.reads,
        [
            extent(0, 2, 2),
            extent(1, 0, 4),
            extent(2, 0, 2),
            extent(3, 0, 4)
        ]
    );
    let fill_in: Vec<_> = plan
        .uses
        .iter()
        .filter(|u| u.purpose == ReadPurpose::FillIn)
        .collect();
    assert_eq!(fill_in.len(), 1);
    assert_eq!((fill_in[0].read, fill_in[0].sectors), (3, Sectors(4)));
    let plan = plan_read(&map, Lbn(2), Sectors(4), None, fill).unwrap();
    assert_eq!(plan.reads.len(), 2);
    let plan = plan_read(&map, Lbn(2), Sectors(8), None, ReadOptions::default()).unwrap();
    assert_eq!(plan.reads.len(), 3);
}

// Proves a degraded read by hand: with member 1 failed, reading volume 4..8 (member 1's
// whole stripe-0 unit) reads offsets 0..4 of members 0, 2 and 3 as reconstruction
// sources and lists the lost piece.
#[test]
fn degraded_read_uses_every_other_member() {
    let map = Raid5Map::new(4, Sectors(4), Sectors(40)).unwrap();
    let plan = plan_read(
        &map,
        Lbn(4),
        Sectors(4),
        Some(MemberIndex(1)),
        ReadOptions::default(),
    )
    .unwrap();
    let members: Vec<_> = plan
        .reads
        .iter()
        .map(|r| (r.member.0, r.lbn.0, r.sectors.0))
        .collect();
    assert_eq!(members, [(0, 0, 4), (2, 0, 4), (3, 0, 4)]);
    assert!(plan.uses.iter().all(|u| u.purpose
        == ReadPurpose::Reconstruct {
            volume_offset: Sectors(0)
        }));
    assert_eq!(plan.lost.len(), 1);
    assert_eq!(plan.lost[0].extent.member, MemberIndex(1));
}

// Proves fill-in reads parity over the hull of the data reads, not the whole unit: md
// RAID-5 over 3 members, 4-sector chunks, member 0 failed; a read of volume 5..7
// (member 1's unit offsets 1..3 in stripe 0) leaves parity (member 2) the only live
// member unread, so parity is read at unit offsets 1..3 only.
#[test]
fn fill_in_covers_the_hull_of_the_data_reads() {
    let map = Raid5Map::new(3, Sectors(4), Sectors(40)).unwrap();
    let fill = ReadOptions {
        fill_in_parity: true,
        whole_units: true,
    };
    let plan = plan_read(&map, Lbn(5), Sectors(2), Some(MemberIndex(0)), fill).unwrap();
    let extent = |m, lbn, sectors| MemberExtent {
        member: MemberIndex(m),
        lbn: Lbn(lbn),
        sectors: Sectors(sectors),
    };
    assert_eq!(plan.reads, [extent(1, 1, 2), extent(2, 1, 2)]);
    assert_eq!(plan.uses[1].purpose, ReadPurpose::FillIn);
}
