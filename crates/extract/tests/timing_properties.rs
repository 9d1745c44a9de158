//! Proves that timing-only extraction, with host jitter on, recovers the exact
//! track boundaries of random zoned (slips, spares, several zones and surface
//! orders) and serpentine (per-surface track sizes) layouts whose skews cover the
//! head switch, as real drives' do. Reads are timed by the analytic model (10,000
//! RPM, 0.3 ms head switch, 0.8 ms single-cylinder seek). proptest prints the seed.

use proptest::prelude::*;
use spinstack_disk::spec::{
    LayoutSpec, SerpentineLayoutSpec, SerpentineZoneSpec, SparingScheme, SurfaceOrder, ZoneSpec, ZonedLayoutSpec,
};
use spinstack_extract::map::compare;
use spinstack_extract::rng::Rng;
use spinstack_extract::sim_probe::{Jitter, SimulatedProbe};
use spinstack_extract::timing::{extract, TimingOptions};
use spinstack_extract::truth::true_map;

/// Sectors that pass in `ms` at 10,000 RPM on a track of `spt`, plus a margin.
fn skew_for(ms: f64, spt: u32) -> u32 {
    ((ms / (6.0 / f64::from(spt))).ceil() as u32 + 2).min(spt - 1)
}

fn random_zoned(rng: &mut Rng) -> LayoutSpec {
    let surfaces = 1 + rng.below(4) as u32;
    let sparing = if rng.below(2) == 0 { SparingScheme::SectorsPerZone } else { SparingScheme::SectorsPerTrack };
    let mut zones = Vec::new();
    let mut next = 0;
    for _ in 0..1 + rng.below(3) {
        let spt = 40 + rng.below(80) as u32;
        let cylinders = 2 + rng.below(5) as u32;
        let units = u64::from(cylinders * surfaces * spt);
        let spares = if sparing == SparingScheme::SectorsPerTrack { rng.below(3) } else { rng.below(spt.into()) };
        let slips = if sparing == SparingScheme::SectorsPerTrack { vec![] } else { (0..rng.below(spares + 1)).map(|_| rng.below(units / 2)).collect() };
        zones.push(ZoneSpec {
            first_cylinder: next,
            last_cylinder: next + cylinders - 1,
            sectors_per_track: spt,
            first_block_offset_sectors: rng.below(spt.into()) as u32,
            empty_sectors_at_front: 0,
            track_skew_sectors: skew_for(0.3, spt),
            cylinder_skew_sectors: skew_for(0.8, spt),
            spares,
            slips,
            defects: vec![],
        });
        next += cylinders;
    }
    for zone in &mut zones {
        zone.slips.sort_unstable();
        zone.slips.dedup();
    }
    LayoutSpec::Zoned(ZonedLayoutSpec {
        surfaces,
        cylinders: next,
        surface_order: [SurfaceOrder::Fixed, SurfaceOrder::ReverseOnOddCylinder][rng.below(2) as usize],
        sparing,
        sparing_range_cylinders: 1,
        zones,
    })
}

fn random_serpentine(rng: &mut Rng) -> LayoutSpec {
    let surfaces = 1 + rng.below(3) as u32;
    let mut zones = Vec::new();
    let mut next = 0;
    for _ in 0..1 + rng.below(3) {
        let cylinders = 2 + rng.below(6) as u32;
        zones.push(SerpentineZoneSpec {
            first_cylinder: next,
            last_cylinder: next + cylinders - 1,
            sectors_per_track_by_surface: (0..surfaces).map(|_| 40 + rng.below(80) as u32).collect(),
        });
        next += cylinders;
    }
    LayoutSpec::Serpentine(SerpentineLayoutSpec {
        surfaces,
        cylinders: next,
        band_cylinders: 1 + rng.below(4) as u32,
        track_skew_sectors: skew_for(0.8, 40),
        surface_switch_skew_sectors: skew_for(0.3, 40),
        zones,
    })
}

fn check(layout: LayoutSpec, seed: u64) -> Result<(), TestCaseError> {
    let Ok(mut probe) = SimulatedProbe::translate_only("random", &layout) else {
        return Ok(()); // a spec the layout rejects is no test case
    };
    probe.set_jitter(Some(Jitter::typical(seed)));
    let truth = true_map(probe.layout(), "random");
    let options = TimingOptions { regions: 3, ..TimingOptions::default() };
    let found = extract(&mut probe, &options).expect("extraction runs");
    let verdict = compare(&found.map, &truth);
    prop_assert!(verdict.exact, "seed {seed}: {:?}\nlayout {layout:?}", verdict.first_difference);
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(40))]

    #[test]
    fn zoned_layouts_time_exactly(seed in any::<u64>()) {
        check(random_zoned(&mut Rng::new(seed)), seed)?;
    }

    #[test]
    fn serpentine_layouts_time_exactly(seed in any::<u64>()) {
        check(random_serpentine(&mut Rng::new(seed)), seed)?;
    }
}
