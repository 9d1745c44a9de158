//! Hand-built layouts, one per sparing scheme, surface order and the
//! serpentine numbering, with expected values worked out by hand in the
//! comments. Positions are DiskSim's zone-relative sector indices:
//! `((cylinder - first) * surfaces + logical surface) * spt + sector`.

use spinstack_disk::layout::{Angle, Layout, LayoutError, Pbn, SectorContent, TrackExtent};
use spinstack_disk::spec::{
    LayoutSpec, SerpentineLayoutSpec, SerpentineZoneSpec, SparingScheme, SurfaceOrder, ZoneSpec,
    ZonedLayoutSpec,
};
use spinstack_sim::units::{Lbn, Sectors};

fn zone(first: u32, last: u32, spt: u32) -> ZoneSpec {
    ZoneSpec {
        first_cylinder: first,
        last_cylinder: last,
        sectors_per_track: spt,
        first_block_offset_sectors: 0,
        empty_sectors_at_front: 0,
        track_skew_sectors: 0,
        cylinder_skew_sectors: 0,
        spares: 0,
        slips: Vec::new(),
        defects: Vec::new(),
    }
}

fn zoned(
    surfaces: u32,
    cylinders: u32,
    sparing: SparingScheme,
    zones: Vec<ZoneSpec>,
) -> ZonedLayoutSpec {
    ZonedLayoutSpec {
        surfaces,
        cylinders,
        surface_order: SurfaceOrder::Fixed,
        sparing,
        sparing_range_cylinders: 1,
        zones,
    }
}

fn build(spec: ZonedLayoutSpec) -> Layout {
    Layout::new(&LayoutSpec::Zoned(spec)).unwrap()
}

fn p(cylinder: u32, surface: u32, sector: u32) -> Pbn {
    Pbn {
        cylinder,
        surface,
        sector,
    }
}

fn at(layout: &Layout, lbn: u64) -> Pbn {
    layout.lbn_to_pbn(Lbn(lbn)).unwrap()
}

fn content(layout: &Layout, pbn: Pbn) -> SectorContent {
    layout.pbn_to_lbn(pbn).unwrap()
}

fn extent(layout: &Layout, lbn: u64) -> (u64, u64, u32, u32) {
    let t: TrackExtent = layout.track_of(Lbn(lbn)).unwrap();
    (t.first.0, t.sectors.0, t.cylinder, t.surface)
}

fn width(spt: u64) -> u32 {
    ((1u64 << 32) / spt) as u32
}

// Scheme 9, 2 surfaces, 4 sectors/track: zone 0 = cylinders 0-1 (16 sectors),
// 3 spares, slips at positions 2 and 9, 1 empty sector at the front, track skew
// 1, cylinder skew 2. Capacity 16 - 3 - 1 = 12. LBN l sits at the (l+1)-th good
// position; good positions 0,1,3,4,5,6,7,8,10,11,12,13,14 (15 is a spare).
// Zone 1 = cylinder 3 (cylinder 2 is in no zone), 3 sectors/track, offset 1.
#[test]
fn scheme_9_spares_at_zone_end() {
    let mut z0 = zone(0, 1, 4);
    z0.spares = 3;
    z0.slips = vec![2, 9];
    z0.empty_sectors_at_front = 1;
    z0.track_skew_sectors = 1;
    z0.cylinder_skew_sectors = 2;
    let mut z1 = zone(3, 3, 3);
    z1.first_block_offset_sectors = 1;
    let layout = build(zoned(2, 4, SparingScheme::SectorsPerZone, vec![z0, z1]));
    assert_eq!(layout.capacity(), Sectors(12 + 6));
    assert_eq!(layout.cylinders(), 4);
    assert_eq!(at(&layout, 0), p(0, 0, 1)); // v 1 -> position 1
    assert_eq!(at(&layout, 1), p(0, 0, 3)); // v 2 -> position 3 (2 slipped)
    assert_eq!(at(&layout, 5), p(0, 1, 3)); // v 6 -> position 7
    assert_eq!(at(&layout, 7), p(1, 0, 2)); // v 8 -> position 10 (9 slipped)
    assert_eq!(at(&layout, 11), p(1, 1, 2)); // v 12 -> position 14
    assert_eq!(at(&layout, 12), p(3, 0, 0)); // zone 1 starts at cylinder 3
    for unused in [p(0, 0, 0), p(0, 0, 2), p(1, 0, 1), p(1, 1, 3)] {
        assert_eq!(
            content(&layout, unused),
            SectorContent::Unused,
            "{unused:?}"
        );
    }
    // Tracks: positions 0-3 hold LBNs 0,1; 4-7 hold 2..5; 8-11 hold 6..8; 12-15 hold 9..11.
    assert_eq!(extent(&layout, 1), (0, 2, 0, 0));
    assert_eq!(extent(&layout, 3), (2, 4, 0, 1));
    assert_eq!(extent(&layout, 7), (6, 3, 1, 0));
    assert_eq!(extent(&layout, 11), (9, 3, 1, 1));
    // (1,0,2): 1 track switch (skew 1) + 1 cylinder switch (skew 2) + sector 2
    // = 5 sectors = 1 sector after a full turn; 2^32/4 leaves no gap.
    assert_eq!(layout.angle_of(p(1, 0, 2)), Ok(Angle(1 << 30)));
    // Zone 1 restarts at its own offset: 1 sector of 3.
    assert_eq!(layout.angle_of(p(3, 0, 0)), Ok(Angle(width(3))));
    assert_eq!(
        layout.pbn_to_lbn(p(2, 0, 0)),
        Err(LayoutError::PbnOutOfRange { pbn: p(2, 0, 0) })
    );
    assert!(layout.sectors_per_track(2, 0).is_err());
    assert_eq!(
        layout.lbn_to_pbn(Lbn(18)),
        Err(LayoutError::LbnOutOfRange {
            lbn: Lbn(18),
            capacity: Sectors(18)
        })
    );
}

// Scheme 7, 1 surface, 4 sectors/track, cylinders 0-2, slips 1 and 5: the
// zone loses 2 LBNs (capacity 10); good positions 0,2,3,4,6,7,8,9,10,11.
#[test]
fn scheme_7_slips_shift_to_zone_end() {
    let mut z = zone(0, 2, 4);
    z.slips = vec![1, 5];
    let layout = build(zoned(1, 3, SparingScheme::SlipToEndOfDisk, vec![z]));
    assert_eq!(layout.capacity(), Sectors(10));
    assert_eq!(at(&layout, 1), p(0, 0, 2));
    assert_eq!(at(&layout, 3), p(1, 0, 0)); // pushed across the cylinder boundary
    assert_eq!(at(&layout, 4), p(1, 0, 2));
    assert_eq!(at(&layout, 9), p(2, 0, 3));
    assert_eq!(extent(&layout, 4), (3, 3, 1, 0)); // positions 4,6,7
    let mut spares = zone(0, 2, 4);
    spares.spares = 1;
    assert!(Layout::new(&LayoutSpec::Zoned(zoned(
        1,
        3,
        SparingScheme::SlipToEndOfDisk,
        vec![spares]
    )))
    .is_err());
}

// Scheme 2, 2 surfaces, 3 sectors/track (6 per cylinder), 1 spare per
// cylinder (5 LBNs each), cylinders 0-2, slips at positions 4, 6 and 7.
// Cylinder 0: good 0,1,2,3,5 hold LBNs 0-4, so LBN 4 takes the spare at 5 =
// (0,1,2) (DiskSim would alias it to (1,0,0)). Cylinder 1: slips 6,7 leave 4
// good positions 8-11 for 5 LBNs: LBNs 5-8 there, LBN 9 carries to cylinder 2,
// which then holds LBNs 9-14 in all 6 positions. Capacity 15.
#[test]
fn scheme_2_spares_per_cylinder_with_carry() {
    let mut z = zone(0, 2, 3);
    z.spares = 1;
    z.slips = vec![4, 6, 7];
    let layout = build(zoned(2, 3, SparingScheme::SectorsPerCylinder, vec![z]));
    assert_eq!(layout.capacity(), Sectors(15));
    assert_eq!(at(&layout, 3), p(0, 1, 0));
    assert_eq!(at(&layout, 4), p(0, 1, 2));
    assert_eq!(at(&layout, 5), p(1, 0, 2));
    assert_eq!(at(&layout, 8), p(1, 1, 2));
    assert_eq!(at(&layout, 9), p(2, 0, 0));
    assert_eq!(at(&layout, 14), p(2, 1, 2));
    assert_eq!(content(&layout, p(0, 1, 1)), SectorContent::Unused); // slip 4
    assert_eq!(content(&layout, p(1, 0, 0)), SectorContent::Unused); // slip 6
    assert_eq!(extent(&layout, 4), (3, 2, 0, 1));
    assert_eq!(extent(&layout, 5), (5, 1, 1, 0));
    assert_eq!(extent(&layout, 9), (9, 3, 2, 0));
    // Cylinder 2 is rotated by the 3 slips before it: 3 sectors of 3, where
    // floor(2^32/3) * 3 = 2^32 - 1 does not wrap; one more sector wraps and
    // adds the 1-unit gap back: exactly one sector width.
    assert_eq!(layout.angle_of(p(2, 0, 0)), Ok(Angle(3 * width(3))));
    assert_eq!(layout.angle_of(p(2, 0, 1)), Ok(Angle(width(3))));
}

// Scheme 3, 1 surface, 5 sectors/track, 1 spare per track (4 LBNs), cylinders
// 0-2, slips 1, 5, 6. Track 0: good 0,2,3,4 hold LBNs 0-3. Track 1: slips 5,6
// leave 7,8,9 for LBNs 4-6; LBN 7 carries to track 2, which holds 7-11.
#[test]
fn scheme_3_spares_per_track() {
    let mut z = zone(0, 2, 5);
    z.spares = 1;
    z.slips = vec![1, 5, 6];
    z.track_skew_sectors = 1;
    z.cylinder_skew_sectors = 2;
    let layout = build(zoned(1, 3, SparingScheme::SectorsPerTrack, vec![z]));
    assert_eq!(layout.capacity(), Sectors(12));
    assert_eq!(at(&layout, 1), p(0, 0, 2));
    assert_eq!(at(&layout, 3), p(0, 0, 4));
    assert_eq!(at(&layout, 4), p(1, 0, 2));
    assert_eq!(at(&layout, 7), p(2, 0, 0));
    assert_eq!(at(&layout, 11), p(2, 0, 4));
    assert_eq!(extent(&layout, 5), (4, 3, 1, 0));
    // One surface: a track change is a cylinder change (track switches =
    // 0 + 0*c). (2,0,0): 2 cylinder skews of 2 + 3 earlier slips = 7 sectors of
    // 5; 7*floor(2^32/5) wraps once and regains the 1-unit gap: 2 sectors.
    assert_eq!(layout.angle_of(p(2, 0, 0)), Ok(Angle(2 * width(5))));
}

// Scheme 8, 1 surface, 2 sectors/track, ranges of 2 cylinders (4 sectors, 1
// spare, 3 LBNs), cylinders 0-4: two whole ranges and a 1-cylinder remainder
// without spares (DiskSim: spares * (5 / 2)). Capacity 10 - 2 = 8. Slip 1:
// range 0 holds LBNs 0-2 at 0,2,3; range 1 holds 3-5 at 4,5,6 (7 spare); the
// remainder holds 6,7 at 8,9. Defect (5 -> 7): LBN 4 moves to (3,0,1).
#[test]
fn scheme_8_spares_per_range_with_defect() {
    let mut z = zone(0, 4, 2);
    z.spares = 1;
    z.slips = vec![1];
    z.defects = vec![(5, 7)];
    let mut spec = zoned(1, 5, SparingScheme::SectorsPerCylinderRange, vec![z]);
    spec.sparing_range_cylinders = 2;
    let layout = build(spec.clone());
    assert_eq!(layout.capacity(), Sectors(8));
    assert_eq!(at(&layout, 1), p(1, 0, 0));
    assert_eq!(at(&layout, 3), p(2, 0, 0));
    assert_eq!(at(&layout, 4), p(3, 0, 1));
    assert_eq!(at(&layout, 5), p(3, 0, 0));
    assert_eq!(at(&layout, 7), p(4, 0, 1));
    assert_eq!(content(&layout, p(2, 0, 1)), SectorContent::Remapped);
    assert_eq!(content(&layout, p(3, 0, 1)), SectorContent::Data(Lbn(4)));
    assert_eq!(layout.is_remapped(Lbn(4)), Ok(true));
    assert_eq!(layout.is_remapped(Lbn(3)), Ok(false));
    // The boundary query ignores the remap: LBN 4 belongs to cylinder 2's track.
    assert_eq!(extent(&layout, 4), (3, 2, 2, 0));
    // A replacement outside the defect's range is rejected.
    let mut bad = spec;
    bad.zones[0].defects = vec![(5, 1)];
    assert!(Layout::new(&LayoutSpec::Zoned(bad)).is_err());
}

// Scheme 1, 2 surfaces, 3 sectors/track, cylinders 0-2 (6 tracks), 2 spare
// tracks, track 1 slipped, 2 empty sectors at the front: capacity
// (6-2)*3 - 2 = 10. LBN l has v = l+2 on data track v/3 of the good tracks
// 0,2,3,4 (5 is a spare). Defect (2 -> 5) moves LBNs 1-3 to track 5 = (2,1).
#[test]
fn scheme_1_spare_tracks_with_defect() {
    let mut z = zone(0, 2, 3);
    z.spares = 2;
    z.slips = vec![1];
    z.empty_sectors_at_front = 2;
    let layout = build(zoned(2, 3, SparingScheme::TracksPerZone, vec![z.clone()]));
    assert_eq!(layout.capacity(), Sectors(10));
    assert_eq!(at(&layout, 0), p(0, 0, 2));
    assert_eq!(at(&layout, 1), p(1, 0, 0));
    assert_eq!(at(&layout, 9), p(2, 0, 2));
    assert_eq!(content(&layout, p(0, 1, 0)), SectorContent::Unused); // slipped track
    assert_eq!(content(&layout, p(2, 1, 2)), SectorContent::Unused); // spare track
    assert_eq!(extent(&layout, 0), (0, 1, 0, 0));
    z.defects = vec![(2, 5)];
    let layout = build(zoned(2, 3, SparingScheme::TracksPerZone, vec![z]));
    assert_eq!(at(&layout, 1), p(2, 1, 0));
    assert_eq!(at(&layout, 3), p(2, 1, 2));
    assert_eq!(content(&layout, p(1, 0, 0)), SectorContent::Remapped);
    assert_eq!(content(&layout, p(2, 1, 1)), SectorContent::Data(Lbn(2)));
    assert_eq!(extent(&layout, 2), (1, 3, 1, 0));
}

// Surface orders, 3 surfaces, 5 sectors/track (15 per cylinder), zone 0 =
// cylinders 0-2 (LBNs 0-44), zone 1 = cylinders 3-4. LBN 45 starts cylinder 3:
// order 1 counts parity from the zone start (offset 0: head 0), order 2 from
// cylinder 0 (odd: head 2). LBN 60 starts cylinder 4: order 1 head 2, order 2
// head 0. Its angle uses the logical surface either way: 2 track skews + 1
// cylinder skew = 3 sectors of 5.
#[test]
fn surface_orders() {
    let mut z1 = zone(3, 4, 5);
    z1.track_skew_sectors = 1;
    z1.cylinder_skew_sectors = 1;
    let mut spec = zoned(3, 5, SparingScheme::SectorsPerZone, vec![zone(0, 2, 5), z1]);
    let expect = [
        (SurfaceOrder::Fixed, [0, 0, 0]),
        (SurfaceOrder::ReverseOnOddZoneCylinder, [2, 0, 2]),
        (SurfaceOrder::ReverseOnOddCylinder, [2, 2, 0]),
    ];
    for (order, [head15, head45, head60]) in expect {
        spec.surface_order = order;
        let layout = build(spec.clone());
        assert_eq!(at(&layout, 15), p(1, head15, 0), "{order:?}");
        assert_eq!(at(&layout, 45), p(3, head45, 0), "{order:?}");
        assert_eq!(at(&layout, 60), p(4, head60, 0), "{order:?}");
        assert_eq!(
            layout.angle_of(p(4, head60, 0)),
            Ok(Angle(3 * width(5))),
            "{order:?}"
        );
        assert_eq!(extent(&layout, 61), (60, 5, 4, head60));
    }
}

// Serpentine, 2 surfaces, 5 cylinders, bands of 2; cylinders 0-2 have 3 and 2
// sectors on surfaces 0 and 1, cylinders 3-4 have 2 and 4. Track order (LBNs):
// (1,0) 0-2, (0,0) 3-5, (0,1) 6-7, (1,1) 8-9 | band 1 reversed: (3,1) 10-13,
// (2,1) 14-15, (2,0) 16-18, (3,0) 19-20 | band 2: (4,0) 21-22, (4,1) 23-26.
#[test]
fn serpentine_order_sizes_and_skews() {
    let spec = SerpentineLayoutSpec {
        surfaces: 2,
        cylinders: 5,
        band_cylinders: 2,
        track_skew_sectors: 1,
        surface_switch_skew_sectors: 2,
        zones: vec![
            SerpentineZoneSpec {
                first_cylinder: 0,
                last_cylinder: 2,
                sectors_per_track_by_surface: vec![3, 2],
            },
            SerpentineZoneSpec {
                first_cylinder: 3,
                last_cylinder: 4,
                sectors_per_track_by_surface: vec![2, 4],
            },
        ],
    };
    let layout = Layout::new(&LayoutSpec::Serpentine(spec)).unwrap();
    assert_eq!(layout.capacity(), Sectors(27));
    assert_eq!(at(&layout, 0), p(1, 0, 0));
    assert_eq!(at(&layout, 5), p(0, 0, 2));
    assert_eq!(at(&layout, 10), p(3, 1, 0));
    assert_eq!(at(&layout, 18), p(2, 0, 2));
    assert_eq!(at(&layout, 26), p(4, 1, 3));
    assert_eq!(extent(&layout, 12), (10, 4, 3, 1));
    assert_eq!(layout.sectors_per_track(3, 1), Ok(4));
    let starts: Vec<u64> = layout.tracks().iter().map(|t| t.first.0).collect();
    assert_eq!(starts, [0, 3, 6, 8, 10, 14, 16, 19, 21, 23]);
    // (0,0): same surface, +1 sector of 3. (0,1): surface switch, +2 sectors of
    // 2 = one full turn (no gap for 2 sectors), so the angle stays.
    assert_eq!(layout.angle_of(p(0, 0, 0)), Ok(Angle(width(3))));
    assert_eq!(layout.angle_of(p(0, 1, 0)), Ok(Angle(width(3))));
    assert_eq!(layout.angle_of(p(0, 1, 1)), Ok(Angle(width(3) + width(2))));
    assert!(layout.pbn_to_lbn(p(0, 1, 2)).is_err());
}

// Bad specs are errors naming the problem, never panics.
#[test]
fn invalid_specs_are_rejected() {
    let check = |spec: ZonedLayoutSpec, needle: &str| match Layout::new(&LayoutSpec::Zoned(spec)) {
        Err(LayoutError::Invalid(message)) => assert!(message.contains(needle), "{message}"),
        other => panic!("expected an error containing {needle:?}, got {other:?}"),
    };
    check(
        zoned(
            2,
            5,
            SparingScheme::SectorsPerZone,
            vec![zone(0, 2, 4), zone(2, 3, 4)],
        ),
        "overlap",
    );
    let mut z = zone(0, 0, 4);
    z.slips = vec![8];
    check(
        zoned(2, 1, SparingScheme::SectorsPerZone, vec![z.clone()]),
        "beyond",
    );
    z.slips = vec![3, 3];
    z.spares = 2;
    check(
        zoned(2, 1, SparingScheme::SectorsPerZone, vec![z.clone()]),
        "twice",
    );
    z.slips = vec![1, 2];
    z.spares = 1;
    check(
        zoned(2, 1, SparingScheme::SectorsPerZone, vec![z.clone()]),
        "slipped",
    );
    z.slips.clear();
    z.defects = vec![(1, 2)];
    check(
        zoned(2, 1, SparingScheme::SectorsPerZone, vec![z.clone()]),
        "not an unused spare",
    );
    z.defects.clear();
    z.empty_sectors_at_front = 8;
    check(
        zoned(2, 1, SparingScheme::SectorsPerZone, vec![z]),
        "empty sectors",
    );
    let serpentine = SerpentineLayoutSpec {
        surfaces: 2,
        cylinders: 2,
        band_cylinders: 1,
        track_skew_sectors: 0,
        surface_switch_skew_sectors: 0,
        zones: vec![SerpentineZoneSpec {
            first_cylinder: 0,
            last_cylinder: 1,
            sectors_per_track_by_surface: vec![3],
        }],
    };
    assert!(matches!(
        Layout::new(&LayoutSpec::Serpentine(serpentine)),
        Err(LayoutError::Invalid(_))
    ));
}
