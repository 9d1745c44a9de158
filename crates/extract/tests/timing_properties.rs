//! Proves that timing-only extraction, with host jitter on, recovers the exact
//! track boundaries of random zoned (slips, spares, several zones and surface
//! orders) and serpentine (per-surface track sizes) layouts whose skews cover the
//! head switch, as real drives' do. Reads are timed by the analytic model (10,000
//! RPM, 0.3 ms head switch, 0.8 ms single-cylinder seek); the rate of inexact maps
//! is measured and bounded rather than claimed to be zero. Track sizes of
//! neighbouring zones and surfaces stay within 20% of each other, as on real
//! drives: the common-case test cannot tell one track of S sectors from two
//! tracks whose sizes add up to S (see the limits in timing.rs). proptest prints
//! the seed.

use proptest::test_runner::TestCaseError;
use spinstack_disk::spec::{
    LayoutSpec, SerpentineLayoutSpec, SerpentineZoneSpec, SparingScheme, SurfaceOrder, ZoneSpec,
    ZonedLayoutSpec,
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
    let sparing = if rng.below(2) == 0 {
        SparingScheme::SectorsPerZone
    } else {
        SparingScheme::SectorsPerTrack
    };
    let mut zones = Vec::new();
    let mut next = 0;
    // Neighbouring zones differ by a few percent on real drives; within 20% here.
    let mut spt = 50 + rng.below(70) as u32;
    for _ in 0..1 + rng.below(3) {
        spt = spt * (90 + rng.below(21) as u32) / 100;
        let cylinders = 2 + rng.below(5) as u32;
        let units = u64::from(cylinders * surfaces * spt);
        let spares = if sparing == SparingScheme::SectorsPerTrack {
            rng.below(3)
        } else {
            rng.below(spt.into())
        };
        // Isolated single-sector slips, as on real media (a run of slipped sectors
        // is as long as a short head switch and timing cannot tell them apart).
        let slips = if sparing == SparingScheme::SectorsPerTrack {
            vec![]
        } else {
            (0..rng.below(spares.min(3) + 1))
                .map(|i| i * units / 4 + rng.below(units / 8))
                .collect()
        };
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
        surface_order: [SurfaceOrder::Fixed, SurfaceOrder::ReverseOnOddCylinder]
            [rng.below(2) as usize],
        sparing,
        sparing_range_cylinders: 1,
        zones,
    })
}

fn random_serpentine(rng: &mut Rng) -> LayoutSpec {
    let surfaces = 1 + rng.below(3) as u32;
    let mut zones = Vec::new();
    let mut next = 0;
    let mut widest = 40;
    let base = 50 + rng.below(70) as u32;
    for _ in 0..1 + rng.below(3) {
        let cylinders = 2 + rng.below(6) as u32;
        zones.push(SerpentineZoneSpec {
            first_cylinder: next,
            last_cylinder: next + cylinders - 1,
            // Per-surface sizes within 20% of each other (Maxtor 10K V: 1025-1196).
            sectors_per_track_by_surface: (0..surfaces)
                .map(|_| base * (90 + rng.below(21) as u32) / 100)
                .collect(),
        });
        widest = widest.max(
            *zones
                .last()
                .unwrap()
                .sectors_per_track_by_surface
                .iter()
                .max()
                .unwrap(),
        );
        next += cylinders;
    }
    LayoutSpec::Serpentine(SerpentineLayoutSpec {
        surfaces,
        cylinders: next,
        band_cylinders: 1 + rng.below(4) as u32,
        // One skew for every track size: enough to cover the move on the widest.
        track_skew_sectors: skew_for(0.8, widest),
        surface_switch_skew_sectors: skew_for(0.3, widest),
        zones,
    })
}

fn check(layout: LayoutSpec, seed: u64) -> Result<(), TestCaseError> {
    let Ok(mut probe) = SimulatedProbe::translate_only("random", &layout) else {
        return Ok(()); // a spec the layout rejects is no test case
    };
    probe.set_jitter(Some(Jitter::typical(seed)));
    let truth = true_map(probe.layout(), "random");
    let options = TimingOptions {
        regions: 3,
        ..TimingOptions::default()
    };
    let found = extract(&mut probe, &options).expect("extraction runs");
    let verdict = compare(&found.map, &truth);
    if !verdict.exact {
        return Err(TestCaseError::fail(format!(
            "seed {seed}: {:?}, {} uncertain\nlayout {layout:?}",
            verdict.first_difference,
            found.map.uncertain_tracks()
        )));
    }
    Ok(())
}

/// Proves the generators are not vacuous: most seeds give a layout the model
/// accepts, with several tracks, slips and serpentine orders among them.
#[test]
fn generators_give_real_layouts() {
    let mut accepted = 0;
    let mut tracks = 0;
    for seed in 0..100 {
        let mut rng = Rng::new(seed);
        let layout = if seed % 2 == 0 {
            random_zoned(&mut rng)
        } else {
            random_serpentine(&mut rng)
        };
        if let Ok(probe) = SimulatedProbe::translate_only("random", &layout) {
            accepted += 1;
            tracks += probe.layout().tracks().len();
        }
    }
    println!("{accepted} of 100 layouts accepted, {tracks} tracks");
    assert!(
        accepted >= 80,
        "only {accepted} of 100 random layouts are valid"
    );
    assert!(tracks >= 80 * 8);
}

/// Measures, over 800 random layouts (fixed seeds, so CI draws the same ones), how
/// often timing extraction is not exact, and bounds it at 2%. The known failure:
/// a short zone-end track plus the next track whose sizes add up to the size the
/// extractor expects, or the outward search meeting the later of two boundaries
/// where the span check cannot see the earlier one. Each failure prints its seed.
#[test]
fn inexact_layouts_are_rare() {
    let mut failures = Vec::new();
    for seed in 0..400 {
        for layout in [
            random_zoned(&mut Rng::new(seed)),
            random_serpentine(&mut Rng::new(seed)),
        ] {
            if let Err(e) = check(layout, seed) {
                failures.push(e.to_string().lines().next().unwrap_or_default().to_string());
            }
        }
    }
    println!("{} of 800 layouts not exact: {failures:#?}", failures.len());
    assert!(
        failures.len() <= 16,
        "{} of 800 layouts not exact",
        failures.len()
    );
}
