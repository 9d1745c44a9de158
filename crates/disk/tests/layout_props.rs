//! Property tests of the layout on RANDOM layouts: zoned (every sparing scheme
//! and surface order, zone gaps, empty zone fronts, skews, slips that overflow
//! into the next region, remapped defects) and serpentine (per-surface track
//! sizes, partial bands, cylinders in no zone). Each case is built from one
//! `u64` seed; proptest prints `seed = ...` for a failing case and the
//! assertion message prints the spec, so any failure can be replayed.
//!
//! Properties: LBNs and `Data` sectors are in bijection; `track_of(lbn)`
//! contains `lbn` and is exactly the set of LBNs whose home is that track;
//! `tracks()` partitions `0..capacity` in LBN order; where DiskSim's own
//! formulas (notes §2.4) are well defined, `lbn_to_pbn` agrees with them.

mod layout_common;

use layout_common::{
    check_everything, disksim_reference_position, zone_capacity, zone_position, Rng,
};
use proptest::prelude::*;
use spinstack_disk::layout::{Layout, LayoutError, SectorContent};
use spinstack_disk::spec::{
    LayoutSpec, SerpentineLayoutSpec, SerpentineZoneSpec, SparingScheme, SurfaceOrder, ZoneSpec,
    ZonedLayoutSpec,
};
use spinstack_sim::units::Lbn;

const SCHEMES: [SparingScheme; 6] = [
    SparingScheme::TracksPerZone,
    SparingScheme::SectorsPerCylinder,
    SparingScheme::SectorsPerTrack,
    SparingScheme::SlipToEndOfDisk,
    SparingScheme::SectorsPerCylinderRange,
    SparingScheme::SectorsPerZone,
];
const ORDERS: [SurfaceOrder; 3] = [
    SurfaceOrder::Fixed,
    SurfaceOrder::ReverseOnOddZoneCylinder,
    SurfaceOrder::ReverseOnOddCylinder,
];

/// Units (sectors, or tracks for scheme 1) and spare units per region of a zone.
fn zone_units(spec: &ZonedLayoutSpec, zone: &ZoneSpec) -> (u64, u64) {
    let tracks = u64::from(zone.last_cylinder - zone.first_cylinder + 1) * u64::from(spec.surfaces);
    let spt = u64::from(zone.sectors_per_track);
    let per_cylinder = spt * u64::from(spec.surfaces);
    match spec.sparing {
        SparingScheme::TracksPerZone => (tracks, tracks),
        SparingScheme::SectorsPerCylinder => (tracks * spt, per_cylinder),
        SparingScheme::SectorsPerTrack => (tracks * spt, spt),
        SparingScheme::SectorsPerCylinderRange => (
            tracks * spt,
            per_cylinder * u64::from(spec.sparing_range_cylinders),
        ),
        SparingScheme::SlipToEndOfDisk | SparingScheme::SectorsPerZone => {
            (tracks * spt, tracks * spt)
        }
    }
}

fn random_zone(rng: &mut Rng, spec: &ZonedLayoutSpec, first_cylinder: u32) -> ZoneSpec {
    let spt = rng.range(1, 12) as u32;
    let mut zone = ZoneSpec {
        first_cylinder,
        last_cylinder: first_cylinder + rng.range(0, 4) as u32,
        sectors_per_track: spt,
        first_block_offset_sectors: rng.range(0, u64::from(spt) - 1) as u32,
        empty_sectors_at_front: 0,
        track_skew_sectors: rng.range(0, u64::from(spt)) as u32,
        cylinder_skew_sectors: rng.range(0, u64::from(spt)) as u32,
        spares: 0,
        slips: Vec::new(),
        defects: Vec::new(),
    };
    let (units, region) = zone_units(spec, &zone);
    if spec.sparing != SparingScheme::SlipToEndOfDisk {
        zone.spares = rng.range(0, (region - 1).min(6));
    }
    // Usually no more slips than the zone can absorb; sometimes more (rejected
    // or carried), which exercises overflow and the error path.
    let per_region = matches!(
        spec.sparing,
        SparingScheme::SectorsPerCylinder
            | SparingScheme::SectorsPerTrack
            | SparingScheme::SectorsPerCylinderRange
    );
    let (slips, mut all): (u64, Vec<u64>) = if per_region && units > region && rng.range(0, 1) == 0
    {
        // Concentrate the slips in one region so that it may overflow (carry).
        let r = rng.range(0, units / region - 1);
        (
            rng.range(0, zone.spares + 2).min(region - 1),
            (r * region..(r + 1) * region).collect(),
        )
    } else {
        let extra = if rng.range(0, 7) == 0 {
            rng.range(1, 2)
        } else {
            0
        };
        (
            rng.range(0, zone.spares + extra).min(units - 1),
            (0..units).collect(),
        )
    };
    for _ in 0..slips {
        let i = rng.range(0, all.len() as u64 - 1) as usize;
        zone.slips.push(all.swap_remove(i));
    }
    if rng.range(0, 3) == 0 {
        zone.slips.sort_unstable();
    }
    let sectors = zone_units(spec, &zone).0
        * if spec.sparing == SparingScheme::TracksPerZone {
            u64::from(spt)
        } else {
            1
        };
    zone.empty_sectors_at_front = if rng.range(0, 2) == 0 {
        rng.range(0, sectors / 2)
    } else {
        0
    };
    zone
}

fn random_zoned(seed: u64) -> ZonedLayoutSpec {
    let mut rng = Rng::new(seed);
    let mut spec = ZonedLayoutSpec {
        surfaces: rng.range(1, 4) as u32,
        cylinders: 0,
        surface_order: ORDERS[rng.range(0, 2) as usize],
        sparing: SCHEMES[rng.range(0, 5) as usize],
        sparing_range_cylinders: rng.range(1, 3) as u32,
        zones: Vec::new(),
    };
    let mut next = 0;
    for _ in 0..rng.range(1, 4) {
        next += u32::from(rng.range(0, 3) == 0); // a cylinder in no zone
        let zone = random_zone(&mut rng, &spec, next);
        next = zone.last_cylinder + 1;
        spec.zones.push(zone);
    }
    spec.cylinders = next + rng.range(0, 1) as u32;
    spec
}

/// Adds up to a few valid (defective, replacement) pairs, found by trying
/// candidates against the built layout: data units for the defect, unused
/// non-slipped units for the replacement.
fn add_defects(rng: &mut Rng, spec: &mut ZonedLayoutSpec) {
    for _ in 0..rng.range(0, 3) {
        let layout = match Layout::new(&LayoutSpec::Zoned(spec.clone())) {
            Ok(l) => l,
            Err(_) => return,
        };
        let z = rng.range(0, spec.zones.len() as u64 - 1) as usize;
        let (data, unused) = classify_units(&layout, spec, z);
        if data.is_empty() || unused.is_empty() {
            continue;
        }
        let pair = (
            data[rng.range(0, data.len() as u64 - 1) as usize],
            unused[rng.range(0, unused.len() as u64 - 1) as usize],
        );
        spec.zones[z].defects.push(pair);
        if Layout::new(&LayoutSpec::Zoned(spec.clone())).is_err() {
            spec.zones[z].defects.pop();
        }
    }
}

/// Zone-relative units of zone `z` holding data, and unused units that are not slips.
fn classify_units(layout: &Layout, spec: &ZonedLayoutSpec, z: usize) -> (Vec<u64>, Vec<u64>) {
    let zone = &spec.zones[z];
    let per_track = spec.sparing == SparingScheme::TracksPerZone;
    let (mut data, mut unused) = (Vec::new(), Vec::new());
    for cylinder in zone.first_cylinder..=zone.last_cylinder {
        for surface in 0..spec.surfaces {
            let mut any_data = false;
            for sector in 0..zone.sectors_per_track {
                let pbn = spinstack_disk::layout::Pbn {
                    cylinder,
                    surface,
                    sector,
                };
                let position = zone_position(spec, zone, pbn);
                let content = layout.pbn_to_lbn(pbn).unwrap();
                any_data |= matches!(content, SectorContent::Data(_));
                if !per_track {
                    match content {
                        SectorContent::Data(_) => data.push(position),
                        SectorContent::Unused if !zone.slips.contains(&position) => {
                            unused.push(position)
                        }
                        _ => {}
                    }
                }
            }
            if per_track {
                let track = zone_position(
                    spec,
                    zone,
                    spinstack_disk::layout::Pbn {
                        cylinder,
                        surface,
                        sector: 0,
                    },
                ) / u64::from(zone.sectors_per_track);
                if any_data {
                    data.push(track);
                } else if !zone.slips.contains(&track) {
                    unused.push(track);
                }
            }
        }
    }
    (data, unused)
}

fn random_serpentine(seed: u64) -> SerpentineLayoutSpec {
    let mut rng = Rng::new(seed);
    let surfaces = rng.range(1, 4) as u32;
    let mut spec = SerpentineLayoutSpec {
        surfaces,
        cylinders: 0,
        band_cylinders: rng.range(1, 5) as u32,
        track_skew_sectors: rng.range(0, 5) as u32,
        surface_switch_skew_sectors: rng.range(0, 5) as u32,
        zones: Vec::new(),
    };
    let mut next = 0;
    for _ in 0..rng.range(1, 4) {
        next += u32::from(rng.range(0, 4) == 0);
        let first = next;
        next += rng.range(1, 6) as u32;
        spec.zones.push(SerpentineZoneSpec {
            first_cylinder: first,
            last_cylinder: next - 1,
            sectors_per_track_by_surface: (0..surfaces).map(|_| rng.range(1, 9) as u32).collect(),
        });
    }
    spec.cylinders = next + rng.range(0, 2) as u32;
    // A skew may be at most the shortest track (the layout refuses longer ones).
    let shortest = spec
        .zones
        .iter()
        .flat_map(|z| z.sectors_per_track_by_surface.iter().copied())
        .min()
        .unwrap_or(1);
    spec.track_skew_sectors = spec.track_skew_sectors.min(shortest);
    spec.surface_switch_skew_sectors = spec.surface_switch_skew_sectors.min(shortest);
    spec
}

/// Compares with DiskSim's literal forward map wherever DiskSim's formula is
/// well defined (it returns `None` where DiskSim would alias or overflow).
fn check_against_disksim(layout: &Layout, spec: &ZonedLayoutSpec) {
    let mut first_lbn = 0u64;
    for zone in &spec.zones {
        let lbns = zone_capacity(spec, zone);
        for relative in 0..lbns {
            let lbn = Lbn(first_lbn + relative);
            if layout.is_remapped(lbn).unwrap() {
                continue;
            }
            if let Some(expected) = disksim_reference_position(spec, zone, relative) {
                let got = zone_position(spec, zone, layout.lbn_to_pbn(lbn).unwrap());
                assert_eq!(
                    got, expected,
                    "{lbn}: position differs from DiskSim's formula\n{spec:#?}"
                );
            }
        }
        first_lbn += lbns;
    }
    assert_eq!(
        layout.capacity().0,
        first_lbn,
        "capacity vs the §2.2 table\n{spec:#?}"
    );
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 600, ..ProptestConfig::default() })]

    // Random zoned layouts: every property, for every LBN and every sector.
    #[test]
    fn random_zoned_layouts(seed in any::<u64>()) {
        let mut spec = random_zoned(seed);
        let mut rng = Rng::new(seed ^ 0x5eed);
        add_defects(&mut rng, &mut spec);
        match Layout::new(&LayoutSpec::Zoned(spec.clone())) {
            Ok(layout) => {
                check_everything(&layout, &format!("seed {seed}: {spec:#?}"));
                check_against_disksim(&layout, &spec);
            }
            // Only overflowing slips or an oversized empty front may be rejected.
            Err(LayoutError::Invalid(message)) => prop_assert!(
                message.contains("slipped") || message.contains("empty sectors"),
                "seed {}: unexpected rejection: {}\n{:#?}", seed, message, spec
            ),
            Err(other) => prop_assert!(false, "seed {}: {}", seed, other),
        }
    }

    // Random serpentine layouts: every property, for every LBN and every sector.
    #[test]
    fn random_serpentine_layouts(seed in any::<u64>()) {
        let spec = random_serpentine(seed);
        let layout = Layout::new(&LayoutSpec::Serpentine(spec.clone()))
            .unwrap_or_else(|e| panic!("seed {seed}: {e}\n{spec:#?}"));
        check_everything(&layout, &format!("seed {seed}: {spec:#?}"));
    }
}

// Proves the generators reach every case the properties are meant to cover:
// each sparing scheme and surface order builds, some layouts carry remapped
// defects, some overflow a region into the next (carry), some are rejected,
// some have zone gaps, and DiskSim's reference formula is compared often.
#[test]
fn generators_cover_every_case() {
    let (mut built, mut rejected, mut with_defects, mut carried, mut gaps, mut compared) =
        (0, 0, 0, 0, 0, 0u64);
    let mut schemes = std::collections::HashSet::new();
    let mut orders = std::collections::HashSet::new();
    for seed in 0..600u64 {
        let mut spec = random_zoned(seed);
        add_defects(&mut Rng::new(seed ^ 0x5eed), &mut spec);
        if Layout::new(&LayoutSpec::Zoned(spec.clone())).is_err() {
            rejected += 1;
            continue;
        }
        built += 1;
        schemes.insert(spec.sparing.disksim_number());
        orders.insert(format!("{:?}", spec.surface_order));
        with_defects += u32::from(spec.zones.iter().any(|z| !z.defects.is_empty()));
        gaps += u32::from(
            spec.zones
                .windows(2)
                .any(|w| w[1].first_cylinder > w[0].last_cylinder + 1),
        );
        for zone in &spec.zones {
            let lbns = zone_capacity(&spec, zone);
            compared += (0..lbns)
                .filter(|&r| disksim_reference_position(&spec, zone, r).is_some())
                .count() as u64;
            let (_, region) = zone_units(&spec, zone);
            let overflow = |s: &u64| {
                zone.slips
                    .iter()
                    .filter(|t| *t / region == s / region)
                    .count() as u64
                    > zone.spares
            };
            let per_region = matches!(
                spec.sparing,
                SparingScheme::SectorsPerCylinder
                    | SparingScheme::SectorsPerTrack
                    | SparingScheme::SectorsPerCylinderRange
            );
            carried += u32::from(per_region && zone.slips.iter().any(overflow));
        }
    }
    eprintln!("built {built} rejected {rejected} defects {with_defects} carried {carried} gaps {gaps} compared {compared}");
    assert_eq!(schemes.len(), 6, "{schemes:?}");
    assert_eq!(orders.len(), 3);
    assert!(
        built > 400 && rejected > 5,
        "built {built} rejected {rejected}"
    );
    assert!(with_defects > 50 && gaps > 50 && carried > 5 && compared > 20_000);
}
