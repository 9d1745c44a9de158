//! Every `MapError` path returns an error with a message naming the bad value; none
//! panics.

use crate::common::sectors;
use spinstack_sim::units::{Lbn, Sectors};
use spinstack_volume::map::plan::{nothing_cached, plan_read, plan_write, ReadOptions};
use spinstack_volume::map::{
    stripe_segments, MapError, MemberIndex, MirrorMap, ParityLayout, Raid0Map, Raid10Map, Raid5Map,
    StripeRange, TrackAlignedLayout, UnitPolicy,
};

fn message(error: MapError) -> String {
    error.to_string()
}

// Proves each level rejects too few members, naming the level and the count.
#[test]
fn too_few_members() {
    let e = Raid0Map::new(1, Sectors(8), Sectors(64)).unwrap_err();
    assert_eq!(
        e,
        MapError::TooFewMembers {
            level: "RAID-0",
            members: 1,
            minimum: 2
        }
    );
    assert_eq!(message(e), "RAID-0 needs at least 2 members, got 1");
    assert!(matches!(
        MirrorMap::new(1, Sectors(64)),
        Err(MapError::TooFewMembers { .. })
    ));
    assert!(matches!(
        Raid10Map::new(1, Sectors(8), Sectors(64)),
        Err(MapError::TooFewMembers { .. })
    ));
    assert!(matches!(
        Raid5Map::new(2, Sectors(8), Sectors(64)),
        Err(MapError::TooFewMembers { .. })
    ));
    let two = vec![sectors(&[4]), sectors(&[4])];
    assert!(matches!(
        TrackAlignedLayout::new(two.clone(), UnitPolicy::WholeTrack),
        Err(MapError::TooFewMembers { .. })
    ));
    assert!(matches!(
        Raid5Map::with_largest_track_chunk(&two),
        Err(MapError::TooFewMembers { .. })
    ));
    assert!(matches!(
        TrackAlignedLayout::new(Vec::new(), UnitPolicy::WholeTrack),
        Err(MapError::TooFewMembers { .. })
    ));
}

// Proves RAID-10 rejects fewer than 2 copies and more copies than members.
#[test]
fn copies_out_of_range() {
    let e = Raid10Map::with_copies(3, 4, Sectors(8), Sectors(64)).unwrap_err();
    assert_eq!(
        message(e),
        "RAID-10 needs 2 <= copies <= members, got 4 copies on 3 members"
    );
    assert!(Raid10Map::with_copies(3, 1, Sectors(8), Sectors(64)).is_err());
}

// Proves a zero chunk and members too small for one unit are rejected.
#[test]
fn chunk_zero_and_member_too_small() {
    assert_eq!(
        Raid0Map::new(2, Sectors(0), Sectors(64)),
        Err(MapError::ChunkZero)
    );
    assert_eq!(
        Raid10Map::new(2, Sectors(0), Sectors(64)),
        Err(MapError::ChunkZero)
    );
    assert_eq!(
        Raid5Map::new(3, Sectors(0), Sectors(64)),
        Err(MapError::ChunkZero)
    );
    let e = Raid5Map::new(3, Sectors(128), Sectors(64)).unwrap_err();
    assert_eq!(
        message(e),
        "member capacity of 64 sectors is smaller than one stripe unit of 128 sectors"
    );
    assert!(matches!(
        Raid0Map::new(2, Sectors(128), Sectors(64)),
        Err(MapError::MemberTooSmall { .. })
    ));
    assert!(matches!(
        Raid10Map::new(2, Sectors(128), Sectors(64)),
        Err(MapError::MemberTooSmall { .. })
    ));
    assert!(matches!(
        MirrorMap::new(2, Sectors(0)),
        Err(MapError::MemberTooSmall { .. })
    ));
}

// Proves empty track lists and empty tracks are rejected, naming member and track.
#[test]
fn bad_track_lists() {
    let empty_list = vec![sectors(&[4]), Vec::new(), sectors(&[4])];
    let e = TrackAlignedLayout::new(empty_list.clone(), UnitPolicy::WholeTrack).unwrap_err();
    assert_eq!(message(e), "member 1 has an empty track list");
    assert!(Raid5Map::with_largest_track_chunk(&empty_list).is_err());
    let empty_track = vec![sectors(&[4]), sectors(&[4]), sectors(&[4, 0])];
    let e = TrackAlignedLayout::new(empty_track, UnitPolicy::SmallestTrack).unwrap_err();
    assert_eq!(message(e), "member 2 track 1 has zero sectors");
}

// Proves geometries whose sizes overflow 64 bits are rejected, not wrapped.
#[test]
fn too_large() {
    assert!(matches!(
        Raid0Map::new(4, Sectors(1), Sectors(u64::MAX)),
        Err(MapError::TooLarge { .. })
    ));
    assert!(matches!(
        Raid10Map::new(4, Sectors(1), Sectors(u64::MAX)),
        Err(MapError::TooLarge { .. })
    ));
    assert!(matches!(
        Raid5Map::new(4, Sectors(1), Sectors(u64::MAX)),
        Err(MapError::TooLarge { .. })
    ));
    let huge = vec![sectors(&[u64::MAX / 2, u64::MAX / 2]); 3];
    assert!(matches!(
        TrackAlignedLayout::new(huge.clone(), UnitPolicy::WholeTrack),
        Err(MapError::TooLarge { .. })
    ));
    assert!(matches!(
        Raid5Map::with_largest_track_chunk(&huge),
        Err(MapError::TooLarge { .. })
    ));
}

// Proves LBNs and ranges past the capacity (or overflowing u64) are rejected by
// every map's entry points, naming the LBN and the capacity.
#[test]
fn lbn_and_range_out_of_range() {
    let raid0 = Raid0Map::new(2, Sectors(8), Sectors(64)).unwrap();
    let e = raid0.locate(Lbn(128)).unwrap_err();
    assert_eq!(
        message(e),
        "LBN 128 is beyond the volume's capacity of 128 sectors"
    );
    let mut out = Vec::new();
    let e = raid0
        .split_into(Lbn(120), Sectors(9), &mut out)
        .unwrap_err();
    assert_eq!(
        message(e),
        "9 sectors starting at LBN 120 run past the volume's capacity of 128 sectors"
    );
    assert!(raid0
        .split_into(Lbn(1), Sectors(u64::MAX), &mut out)
        .is_err());
    assert!(raid0.split_into(Lbn(200), Sectors(1), &mut out).is_err());
    assert!(out.is_empty());
    let mirror = MirrorMap::new(2, Sectors(64)).unwrap();
    assert!(mirror.locate(Lbn(64)).is_err());
    assert!(mirror
        .split_copy_into(Lbn(60), Sectors(5), 0, &mut out)
        .is_err());
    let raid10 = Raid10Map::new(3, Sectors(8), Sectors(64)).unwrap();
    assert!(raid10.locate(Lbn(96)).is_err());
    assert!(raid10
        .split_copy_into(Lbn(90), Sectors(7), 0, &mut out)
        .is_err());
    let raid5 = Raid5Map::new(3, Sectors(8), Sectors(64)).unwrap();
    let track = TrackAlignedLayout::new(vec![sectors(&[4, 5]); 3], UnitPolicy::WholeTrack).unwrap();
    for layout in [&raid5 as &dyn ParityLayout, &track] {
        let end = Lbn(layout.capacity().0);
        assert!(matches!(
            layout.locate(end),
            Err(MapError::LbnOutOfRange { .. })
        ));
        assert!(layout.stripe_of(end).is_err());
        assert!(layout.split_into(end, Sectors(1), &mut out).is_err());
        assert!(stripe_segments(layout, Lbn(1), Sectors(u64::MAX)).is_err());
        assert!(plan_read(layout, end, Sectors(1), None, ReadOptions::default()).is_err());
    }
}

// Proves unknown members and copies are rejected by the plans and splits, and that
// inverses of unknown members answer "nothing here" instead of panicking.
#[test]
fn member_and_copy_out_of_range() {
    let raid5 = Raid5Map::new(3, Sectors(8), Sectors(64)).unwrap();
    let e = plan_read(
        &raid5,
        Lbn(0),
        Sectors(1),
        Some(MemberIndex(3)),
        ReadOptions::default(),
    )
    .unwrap_err();
    assert_eq!(
        message(e),
        "member 3 does not exist: the volume has 3 members"
    );
    let range = StripeRange {
        start: Sectors(0),
        sectors: Sectors(1),
    };
    assert!(matches!(
        plan_write(&raid5, 0, range, Some(MemberIndex(9)), &nothing_cached),
        Err(MapError::MemberOutOfRange { .. })
    ));
    let mut out = Vec::new();
    let raid10 = Raid10Map::new(3, Sectors(8), Sectors(64)).unwrap();
    let e = raid10
        .split_copy_into(Lbn(0), Sectors(1), 2, &mut out)
        .unwrap_err();
    assert_eq!(message(e), "copy 2 does not exist: the map keeps 2 copies");
    let mirror = MirrorMap::new(2, Sectors(64)).unwrap();
    assert!(matches!(
        mirror.split_copy_into(Lbn(0), Sectors(1), 2, &mut out),
        Err(MapError::CopyOutOfRange { .. })
    ));
    assert_eq!(raid10.inverse(MemberIndex(7), Lbn(0)), None);
    assert_eq!(mirror.inverse(MemberIndex(7), Lbn(0)), None);
}

// Proves write plans reject a missing stripe, a range past the stripe's data (or
// overflowing), and an empty write.
#[test]
fn bad_write_ranges() {
    let raid5 = Raid5Map::new(3, Sectors(8), Sectors(64)).unwrap();
    let one = StripeRange {
        start: Sectors(0),
        sectors: Sectors(1),
    };
    let e = plan_write(&raid5, 8, one, None, &nothing_cached).unwrap_err();
    assert_eq!(
        message(e),
        "stripe 8 does not exist: the layout has 8 stripes"
    );
    let past = StripeRange {
        start: Sectors(10),
        sectors: Sectors(7),
    };
    let e = plan_write(&raid5, 0, past, None, &nothing_cached).unwrap_err();
    assert_eq!(
        message(e),
        "7 sectors at offset 10 sectors run past stripe 0's 16 sectors of data"
    );
    let overflow = StripeRange {
        start: Sectors(u64::MAX),
        sectors: Sectors(2),
    };
    assert!(matches!(
        plan_write(&raid5, 0, overflow, None, &nothing_cached),
        Err(MapError::StripeRangeOutOfRange { .. })
    ));
    let empty = StripeRange {
        start: Sectors(0),
        sectors: Sectors(0),
    };
    assert_eq!(
        plan_write(&raid5, 0, empty, None, &nothing_cached).unwrap_err(),
        MapError::EmptyWrite
    );
}
