//! Random drive layouts for the property tests: zoned (every sparing scheme and
//! surface order, skews, slips, remapped defects, empty zone fronts) and serpentine
//! (per-surface track sizes). Every spec is built from a seed so that a failure
//! names the seed that reproduces it.
#![allow(dead_code)]

use spinstack_disk::layout::Layout;
use spinstack_disk::spec::{
    LayoutSpec, SerpentineLayoutSpec, SerpentineZoneSpec, SparingScheme, SurfaceOrder, ZoneSpec,
    ZonedLayoutSpec,
};
use spinstack_sim::rng::SplitMix64;

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

fn range(rng: &mut SplitMix64, low: u64, high: u64) -> u64 {
    low + rng.below(high - low + 1)
}

/// Sparing units in a zone (tracks for scheme 1, sectors otherwise).
fn zone_units(spec: &ZonedLayoutSpec, zone: &ZoneSpec) -> u64 {
    let tracks = u64::from(zone.last_cylinder - zone.first_cylinder + 1) * u64::from(spec.surfaces);
    match spec.sparing {
        SparingScheme::TracksPerZone => tracks,
        _ => tracks * u64::from(zone.sectors_per_track),
    }
}

fn random_zone(rng: &mut SplitMix64, spec: &ZonedLayoutSpec, first_cylinder: u32) -> ZoneSpec {
    let spt = range(rng, 1, 40) as u32;
    let mut zone = ZoneSpec {
        first_cylinder,
        last_cylinder: first_cylinder + range(rng, 0, 12) as u32,
        sectors_per_track: spt,
        first_block_offset_sectors: range(rng, 0, u64::from(spt) - 1) as u32,
        empty_sectors_at_front: 0,
        track_skew_sectors: range(rng, 0, u64::from(spt)) as u32,
        cylinder_skew_sectors: range(rng, 0, u64::from(spt)) as u32,
        spares: 0,
        slips: Vec::new(),
        defects: Vec::new(),
    };
    if spec.sparing != SparingScheme::SlipToEndOfDisk {
        zone.spares = range(rng, 0, 3);
    }
    let units = zone_units(spec, &zone);
    for _ in 0..range(rng, 0, 4) {
        zone.slips.push(rng.below(units));
    }
    zone.slips.sort_unstable();
    zone.slips.dedup();
    if rng.below(4) == 0 {
        zone.empty_sectors_at_front = rng.below(u64::from(spt) * 2);
    }
    zone
}

fn random_zoned_spec(rng: &mut SplitMix64) -> ZonedLayoutSpec {
    let mut spec = ZonedLayoutSpec {
        surfaces: range(rng, 1, 5) as u32,
        cylinders: 0,
        surface_order: ORDERS[rng.below(3) as usize],
        sparing: SCHEMES[rng.below(6) as usize],
        sparing_range_cylinders: range(rng, 1, 3) as u32,
        zones: Vec::new(),
    };
    let mut next = 0;
    for _ in 0..range(rng, 1, 4) {
        let zone = random_zone(rng, &spec, next);
        next = zone.last_cylinder + 1;
        spec.zones.push(zone);
    }
    spec.cylinders = next;
    spec
}

/// Add remapped defects that the layout accepts (a defect must hold data and its
/// replacement must be an unused spare; random pairs that break this are dropped).
///
/// Scheme 1 (whole spare tracks) is left without defects: a remapped whole track
/// leaves no data sector on its home track from which reverse translation could
/// name the moved LBNs, a limitation of the defect-list step (see scsi.rs).
fn add_defects(rng: &mut SplitMix64, spec: &mut ZonedLayoutSpec) {
    if spec.sparing == SparingScheme::TracksPerZone {
        return;
    }
    for _ in 0..range(rng, 0, 40) {
        let z = rng.below(spec.zones.len() as u64) as usize;
        let units = zone_units(spec, &spec.zones[z]);
        // With an empty zone front the layout reports a defect whose unit lies in
        // the front as Remapped though no LBN moved (reported to the layout
        // owner); the generator keeps defects out of such zones.
        if spec.zones[z].empty_sectors_at_front > 0 {
            continue;
        }
        let pair = (rng.below(units), rng.below(units));
        if pair.0 == pair.1 {
            continue; // a defect replaced by itself is no remap (the layout accepts it)
        }
        spec.zones[z].defects.push(pair);
        let accepted = Layout::new(&LayoutSpec::Zoned(spec.clone()))
            .map(|layout| !has_fully_remapped_track(&layout))
            .unwrap_or(false);
        if !accepted {
            spec.zones[z].defects.pop();
        }
    }
}

/// Whether some track has every one of its LBNs remapped away: reverse translation
/// then finds no data sector on it to name them by (a documented limitation).
fn has_fully_remapped_track(layout: &Layout) -> bool {
    layout.tracks().iter().any(|t| {
        (t.first.0..t.end().0)
            .all(|lbn| layout.is_remapped(spinstack_sim::units::Lbn(lbn)) == Ok(true))
    })
}

/// A random zoned layout the layout model accepts, with slips dropped zone by zone
/// until it does; `None` when even a slip-free version is rejected.
pub fn random_zoned(seed: u64) -> Option<LayoutSpec> {
    let mut rng = SplitMix64::new(seed);
    let mut spec = random_zoned_spec(&mut rng);
    for z in 0..spec.zones.len() {
        while Layout::new(&LayoutSpec::Zoned(spec.clone())).is_err()
            && !spec.zones[z].slips.is_empty()
        {
            spec.zones[z].slips.pop();
        }
    }
    Layout::new(&LayoutSpec::Zoned(spec.clone())).ok()?;
    add_defects(&mut rng, &mut spec);
    let layout = LayoutSpec::Zoned(spec);
    let built = Layout::new(&layout).ok()?;
    (built.capacity().0 > 0).then_some(layout)
}

pub fn random_serpentine(seed: u64) -> Option<LayoutSpec> {
    let mut rng = SplitMix64::new(seed);
    let surfaces = range(&mut rng, 1, 4) as u32;
    let mut spec = SerpentineLayoutSpec {
        surfaces,
        cylinders: 0,
        band_cylinders: range(&mut rng, 1, 6) as u32,
        track_skew_sectors: range(&mut rng, 0, 5) as u32,
        surface_switch_skew_sectors: range(&mut rng, 0, 5) as u32,
        zones: Vec::new(),
    };
    let mut next = 0;
    for _ in 0..range(&mut rng, 1, 4) {
        let first = next;
        next += range(&mut rng, 1, 14) as u32;
        spec.zones.push(SerpentineZoneSpec {
            first_cylinder: first,
            last_cylinder: next - 1,
            sectors_per_track_by_surface: (0..surfaces)
                .map(|_| range(&mut rng, 1, 40) as u32)
                .collect(),
        });
    }
    spec.cylinders = next;
    let layout = LayoutSpec::Serpentine(spec);
    Layout::new(&layout).ok().map(|_| layout)
}
