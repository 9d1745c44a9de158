//! Proves that timing-only extraction, with host jitter on, never accepts a wrong
//! track as certain on random zoned (slips, spares, several zones and surface
//! orders) and serpentine (per-surface track sizes) layouts whose skews cover the
//! head switch, as real drives' do: every track is exact or flagged uncertain.
//! Reads are timed by the analytic model (10,000 RPM, 0.3 ms head switch, 0.8 ms
//! single-cylinder seek). Track sizes of neighbouring zones and surfaces stay
//! within 20% of each other, as on real drives. Failures print their seed.
//!
//! Two host links: a fast one (0.01 ms a sector, faster than any media sector)
//! and a slow one, slower than the media on every track of the layout as on the
//! Atlas 10K (`TIMING_PROPERTY_LINK=slow` for the long run; a short slow run is
//! in every test run). On a slow link a long read ends when its bytes reach the
//! host, so only the chains and the boundary tests see a track's interior.

use spinstack_disk::spec::{
    LayoutSpec, SerpentineLayoutSpec, SerpentineZoneSpec, SparingScheme, SurfaceOrder, ZoneSpec,
    ZonedLayoutSpec,
};
use spinstack_extract::compare::compare;
use spinstack_extract::sim_probe::{Jitter, SimulatedProbe};
use spinstack_extract::timing::{extract, TimingOptions};
use spinstack_sim::rng::SplitMix64;
use std::collections::HashSet;

/// Sectors that pass in `ms` at 10,000 RPM on a track of `spt`, plus a margin.
fn skew_for(ms: f64, spt: u32) -> u32 {
    ((ms / (6.0 / f64::from(spt))).ceil() as u32 + 2).min(spt - 1)
}

fn random_zoned(rng: &mut SplitMix64, link: Link) -> LayoutSpec {
    let surfaces = 1 + rng.below(4) as u32;
    let sparing = if rng.below(2) == 0 {
        SparingScheme::SectorsPerZone
    } else {
        SparingScheme::SectorsPerTrack
    };
    let mut zones = Vec::new();
    let mut next = 0;
    // Neighbouring zones differ by a few percent on real drives; within 20% here.
    let mut spt = link.fewest_base_sectors() + rng.below(70) as u32;
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

fn random_serpentine(rng: &mut SplitMix64, link: Link) -> LayoutSpec {
    let surfaces = 1 + rng.below(3) as u32;
    let mut zones = Vec::new();
    let mut next = 0;
    let mut widest = 40;
    let base = link.fewest_base_sectors() + rng.below(70) as u32;
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

/// What one extraction on a random layout gave.
#[derive(Default)]
struct Outcome {
    exact: bool,
    /// Tracks accepted as certain that are not true tracks (must never happen).
    false_acceptances: usize,
    uncertain: usize,
    tracks: usize,
    first_false: Option<String>,
}

/// The host link of a property run.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Link {
    /// 0.01 ms a sector: the link keeps up with the media.
    Fast,
    /// Slower than the slowest media sector of the layout (see [`slow_link_ms`]).
    Slow,
}

impl Link {
    /// The least track size a random layout starts from. On a slow link the
    /// same-track δ is one bus sector, and the threshold sits 2.5 of them up: a
    /// skew of 0.3 ms plus three sectors clears it only on tracks of about 70
    /// sectors or more (the Atlas 10K has 229 to 334), so slow-link layouts
    /// start from 120.
    fn fewest_base_sectors(self) -> u32 {
        match self {
            Link::Fast => 50,
            Link::Slow => 120,
        }
    }
}

/// The longest a media sector passes on `layout` at 10,000 RPM (6 ms a turn).
fn largest_media_sector_ms(layout: &LayoutSpec) -> f64 {
    let fewest = match layout {
        LayoutSpec::Zoned(z) => z.zones.iter().map(|z| z.sectors_per_track).min(),
        LayoutSpec::Serpentine(s) => s
            .zones
            .iter()
            .flat_map(|z| z.sectors_per_track_by_surface.iter().copied())
            .min(),
    };
    6.0 / f64::from(fewest.unwrap_or(1).max(1))
}

/// A slow link's sector time: more than twice the longest media sector (so that
/// a read of a whole track ends when its bytes reach the host, as on the Atlas
/// 10K, whose link is 5.5 times slower than its platter), yet short enough
/// that a head switch's skew still stands out of a same-track δ, which on such
/// a link is one bus sector: the random layouts' skews cover the switch with
/// two sectors to spare, and a link 5.5 times slower than their sparsest
/// tracks would drown it.
fn slow_link_ms(layout: &LayoutSpec) -> f64 {
    2.2 * largest_media_sector_ms(layout)
}

fn check(layout: &LayoutSpec, seed: u64, link: Link) -> Option<Outcome> {
    let mut probe = match link {
        Link::Fast => SimulatedProbe::translate_only("random", layout),
        Link::Slow => {
            SimulatedProbe::translate_only_with_link("random", layout, slow_link_ms(layout))
        }
    }
    .ok()?;
    probe.set_jitter(Some(Jitter::typical(seed)));
    let truth = probe.layout().track_map("random");
    let options = TimingOptions {
        regions: 3,
        ..TimingOptions::default()
    };
    let found = extract(&mut probe, &options).expect("extraction runs");
    let true_tracks: HashSet<(u64, u64)> = truth
        .tracks()
        .iter()
        .map(|t| (t.first.0, t.sectors.0))
        .collect();
    let mut outcome = Outcome {
        exact: compare(&found.map, &truth).exact,
        tracks: found.map.track_count(),
        uncertain: found.map.uncertain_track_count(),
        ..Outcome::default()
    };
    for t in found.map.tracks().iter().filter(|t| !t.uncertain) {
        if !true_tracks.contains(&(t.first.0, t.sectors.0)) {
            outcome.false_acceptances += 1;
            outcome.first_false.get_or_insert(format!(
                "certain track at {} with {} sectors is not a true track",
                t.first, t.sectors.0
            ));
        }
    }
    Some(outcome)
}

/// Proves the generators are not vacuous: most seeds give a layout the model
/// accepts, with several tracks, slips and serpentine orders among them.
#[test]
fn generators_give_real_layouts() {
    let mut accepted = 0;
    let mut tracks = 0;
    for seed in 0..100 {
        let mut rng = SplitMix64::new(seed);
        let layout = if seed % 2 == 0 {
            random_zoned(&mut rng, Link::Fast)
        } else {
            random_serpentine(&mut rng, Link::Fast)
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

/// Seeds of the property run: `default` (fixed, so CI draws the same layouts),
/// or the range `FROM..TO` in `TIMING_PROPERTY_SEEDS`, for validating a change on
/// layouts it was never tuned on.
fn seed_range(default: std::ops::Range<u64>) -> std::ops::Range<u64> {
    let Ok(text) = std::env::var("TIMING_PROPERTY_SEEDS") else {
        return default;
    };
    let parsed = text
        .split_once("..")
        .and_then(|(a, b)| Some(a.trim().parse().ok()?..b.trim().parse().ok()?));
    parsed.unwrap_or_else(|| panic!("TIMING_PROPERTY_SEEDS={text:?} is not FROM..TO"))
}

/// The link of the long run: fast unless `TIMING_PROPERTY_LINK=slow`.
fn link_from_environment() -> Link {
    match std::env::var("TIMING_PROPERTY_LINK").as_deref() {
        Ok("slow") => Link::Slow,
        Ok("fast") | Err(_) => Link::Fast,
        Ok(other) => panic!("TIMING_PROPERTY_LINK={other:?} is neither fast nor slow"),
    }
}

/// Proves that timing extraction never accepts a wrong track as certain: over
/// 4,000 random layouts (fixed seeds, so CI draws the same ones) every track the
/// extractor does not flag `uncertain` is a true track, and an inexact map always
/// has its uncertain tracks flagged. The uncertain rate is measured and printed;
/// it is bounded loosely (1% of tracks) only so that a regression that gives up
/// on everything fails. Each failure prints the seed that reproduces it.
/// `TIMING_PROPERTY_LINK=slow` runs the same on a host link slower than the media.
#[test]
fn no_false_acceptances() {
    property_run(link_from_environment(), seed_range(0..2000).collect());
}

/// Slow-link seeds on which the extractor once accepted a wrong track (found
/// on seeds 1200000..1220000 before the tile reads): zone changes hidden from
/// the chains after 4- and 2-LBN zone-end tracks, and a jitter seed whose
/// calibration puts the threshold above the layout's head-switch skews.
const SLOW_LINK_REGRESSION_SEEDS: [u64; 3] = [1_203_315, 1_210_176, 1_214_477];

/// Proves the same on a host link slower than the media (as on the Atlas 10K),
/// where a read of a whole track says nothing of its interior: about 600
/// layouts (seeds 0..300, fixed) plus the seeds that once failed, so that every
/// test run covers the slow link; the long run is `TIMING_PROPERTY_LINK=slow`
/// with `no_false_acceptances`.
#[test]
fn no_false_acceptances_on_a_slow_link() {
    if std::env::var("TIMING_PROPERTY_SEEDS").is_ok() {
        return; // the long run is no_false_acceptances's
    }
    property_run(
        Link::Slow,
        (0..300).chain(SLOW_LINK_REGRESSION_SEEDS).collect(),
    );
}

fn property_run(link: Link, seeds: Vec<u64>) {
    let (mut layouts, mut tracks, mut uncertain, mut inexact) = (0, 0, 0, 0);
    let mut uncertain_layouts = 0;
    let mut failures = Vec::new();
    let (first, last) = (seeds.first().copied(), seeds.last().copied());
    println!(
        "{link:?} link, {} seeds from {first:?} to {last:?} (set TIMING_PROPERTY_SEEDS=FROM..TO \
         for fresh ones)",
        seeds.len()
    );
    for seed in seeds {
        for (kind, layout) in [
            ("zoned", random_zoned(&mut SplitMix64::new(seed), link)),
            (
                "serpentine",
                random_serpentine(&mut SplitMix64::new(seed), link),
            ),
        ] {
            let Some(outcome) = check(&layout, seed, link) else {
                continue; // a spec the layout rejects is no test case
            };
            layouts += 1;
            tracks += outcome.tracks;
            uncertain += outcome.uncertain;
            uncertain_layouts += usize::from(outcome.uncertain > 0);
            inexact += usize::from(!outcome.exact);
            if outcome.false_acceptances > 0 || (!outcome.exact && outcome.uncertain == 0) {
                failures.push(format!(
                    "{link:?} link, {kind} seed {seed}: {} false acceptances ({}), exact {}, {} uncertain",
                    outcome.false_acceptances,
                    outcome.first_false.unwrap_or_default(),
                    outcome.exact,
                    outcome.uncertain
                ));
            }
        }
    }
    println!(
        "{layouts} layouts, {tracks} tracks: {} false acceptances, {uncertain} uncertain tracks \
         in {uncertain_layouts} layouts, {inexact} layouts not exact",
        failures.len()
    );
    assert!(failures.is_empty(), "{failures:#?}");
    assert!(
        uncertain * 100 <= tracks,
        "{uncertain} of {tracks} tracks uncertain"
    );
}
