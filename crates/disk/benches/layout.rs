//! Layout lookup cost on the catalog's Atlas 10K (24 zones, 64 slips): each
//! benchmark resolves 4096 random LBNs, the access pattern of random 4 KiB reads,
//! through one query. `track_geometry` replaces the planner's `track_of` +
//! `sectors_per_track` + `angle_of` sequence with one zone lookup.

use spinstack_disk::layout::{Layout, Pbn};
use spinstack_sim::rng::SplitMix64;
use spinstack_sim::units::Lbn;

fn main() {
    divan::main();
}

const LOOKUPS: usize = 4096;

/// The Atlas 10K layout and `LOOKUPS` random LBNs from a fixed seed (SplitMix64).
fn setup() -> (Layout, Vec<Lbn>) {
    let spec = spinstack_disk::catalog::get("atlas10k").expect("catalog has atlas10k");
    let layout = Layout::new(&spec.layout).expect("atlas10k layout builds");
    let capacity = layout.capacity().0;
    let mut rng = SplitMix64::new(7);
    let lbns = (0..LOOKUPS)
        .map(|_| Lbn(rng.next_u64() % capacity))
        .collect();
    (layout, lbns)
}

/// The setup's LBNs as physical addresses.
fn setup_pbns() -> (Layout, Vec<Pbn>) {
    let (layout, lbns) = setup();
    let pbns = lbns
        .iter()
        .map(|&l| layout.lbn_to_pbn(l).expect("in range"))
        .collect();
    (layout, pbns)
}

#[divan::bench]
fn track_of(bencher: divan::Bencher) {
    let (layout, lbns) = setup();
    bencher
        .counter(divan::counter::ItemsCount::new(LOOKUPS))
        .bench(|| {
            lbns.iter()
                .map(|&l| layout.track_of(l).expect("in range").sectors.0)
                .sum::<u64>()
        });
}

#[divan::bench]
fn lbn_to_pbn(bencher: divan::Bencher) {
    let (layout, lbns) = setup();
    bencher
        .counter(divan::counter::ItemsCount::new(LOOKUPS))
        .bench(|| {
            lbns.iter()
                .map(|&l| layout.lbn_to_pbn(l).expect("in range").sector)
                .sum::<u32>()
        });
}

#[divan::bench]
fn angle_of(bencher: divan::Bencher) {
    let (layout, pbns) = setup_pbns();
    bencher
        .counter(divan::counter::ItemsCount::new(LOOKUPS))
        .bench(|| {
            pbns.iter()
                .map(|&p| layout.angle_of(p).expect("valid").0)
                .fold(0u32, u32::wrapping_add)
        });
}

#[divan::bench]
fn sectors_per_track(bencher: divan::Bencher) {
    let (layout, pbns) = setup_pbns();
    bencher
        .counter(divan::counter::ItemsCount::new(LOOKUPS))
        .bench(|| {
            pbns.iter()
                .map(|&p| {
                    layout
                        .sectors_per_track(p.cylinder, p.surface)
                        .expect("valid")
                })
                .sum::<u32>()
        });
}

/// What the planner does per track today: extent, size, then two sector angles.
#[divan::bench]
fn planner_sequence_separate(bencher: divan::Bencher) {
    let (layout, lbns) = setup();
    bencher
        .counter(divan::counter::ItemsCount::new(LOOKUPS))
        .bench(|| {
            let mut sum = 0u32;
            for &l in &lbns {
                let track = layout.track_of(l).expect("in range");
                let spt = layout
                    .sectors_per_track(track.cylinder, track.surface)
                    .expect("valid");
                let sector = (l.0 - track.first.0) as u32;
                for s in [sector, (sector + 7).min(spt - 1)] {
                    let pbn = Pbn {
                        cylinder: track.cylinder,
                        surface: track.surface,
                        sector: s,
                    };
                    sum = sum.wrapping_add(layout.angle_of(pbn).expect("valid").0);
                }
            }
            sum
        });
}

/// The same answers from one `track_geometry` lookup.
#[divan::bench]
fn planner_sequence_geometry(bencher: divan::Bencher) {
    let (layout, lbns) = setup();
    bencher
        .counter(divan::counter::ItemsCount::new(LOOKUPS))
        .bench(|| {
            let mut sum = 0u32;
            for &l in &lbns {
                let track = layout.track_geometry(l).expect("in range");
                let sector = (l.0 - track.extent.first.0) as u32;
                for s in [sector, (sector + 7).min(track.sectors_per_track - 1)] {
                    sum = sum.wrapping_add(track.angle_of_sector(s).0);
                }
            }
            sum
        });
}

/// What a shortest-positioning-time scheduler needs per queued request:
/// where the LBN's sector is and its angle, as two queries.
#[divan::bench]
fn position_separate(bencher: divan::Bencher) {
    let (layout, lbns) = setup();
    bencher
        .counter(divan::counter::ItemsCount::new(LOOKUPS))
        .bench(|| {
            lbns.iter()
                .map(|&l| {
                    let pbn = layout.lbn_to_pbn(l).expect("in range");
                    layout.angle_of(pbn).expect("valid").0 ^ pbn.cylinder
                })
                .fold(0u32, u32::wrapping_add)
        });
}

/// The same from one `locate` lookup.
#[divan::bench]
fn position_locate(bencher: divan::Bencher) {
    let (layout, lbns) = setup();
    bencher
        .counter(divan::counter::ItemsCount::new(LOOKUPS))
        .bench(|| {
            lbns.iter()
                .map(|&l| {
                    let (pbn, angle) = layout.locate(l).expect("in range");
                    angle.0 ^ pbn.cylinder
                })
                .fold(0u32, u32::wrapping_add)
        });
}
