//! Proves the comparison of an extracted map with the truth is element by
//! element — first LBN, length and location of every track — so that a map
//! differing from the truth in a single track is never reported exact.
//!
//! Regression (the "first-LBN-only comparison" bug): `compare` used to look each
//! extracted track up by its first LBN and call the map exact when every one was
//! found and the counts agreed, so a map with one track twice and another
//! missing was exact. `TrackMap` now refuses to hold such a map, and `compare`
//! checks the tracks pairwise anyway.

use spinstack_extract::compare::compare;
use spinstack_sim::units::{Lbn, Sectors};
use spinstack_trackmap::{RemappedLbn, SectorLocation, Track, TrackLocation, TrackMap};

/// A map of back-to-back tracks of these sizes, each on (cylinder, surface), or
/// with no locations (as timing-only extraction finds them) when `located` is false.
fn map_of(sizes: &[u64], located: bool) -> TrackMap {
    let mut first = 0;
    let tracks = sizes
        .iter()
        .enumerate()
        .map(|(index, &size)| {
            let track = Track {
                first: Lbn(first),
                sectors: Sectors(size),
                location: located.then_some(TrackLocation {
                    cylinder: index as u32 / 2,
                    surface: index as u32 % 2,
                }),
                uncertain: false,
            };
            first += size;
            track
        })
        .collect();
    TrackMap::new("d", "m", Sectors(first), tracks, Vec::new()).expect("back-to-back tracks tile")
}

/// The same map with track `index` changed by `change`.
fn with_track(map: &TrackMap, index: usize, change: impl Fn(&mut Track)) -> TrackMap {
    let mut tracks = map.tracks().to_vec();
    change(&mut tracks[index]);
    TrackMap::new(
        map.drive(),
        map.method(),
        map.capacity(),
        tracks,
        map.remapped().to_vec(),
    )
    .expect("the change keeps the tiling")
}

/// The truth compared with itself is exact, every track matching; a timing map
/// (no locations) with the true boundaries is exact too.
#[test]
fn identical_maps_are_exact() {
    let truth = map_of(&[10, 10, 12, 12, 9], true);
    let same = compare(&truth, &truth);
    assert!(same.exact, "{same:?}");
    assert_eq!(same.matching_tracks, 5);
    assert_eq!(same.first_difference, None);
    let timed = compare(&map_of(&[10, 10, 12, 12, 9], false), &truth);
    assert!(timed.exact, "{timed:?}");
}

/// Regression for the first-LBN-only comparison: one track on another surface
/// makes the map inexact, and the difference is named.
#[test]
fn one_track_elsewhere_is_not_exact() {
    let truth = map_of(&[10, 10, 12, 12, 9], true);
    let moved = with_track(&truth, 2, |t| {
        t.location = Some(TrackLocation {
            cylinder: 1,
            surface: 1,
        })
    });
    let verdict = compare(&moved, &truth);
    assert!(!verdict.exact, "{verdict:?}");
    assert_eq!(verdict.matching_tracks, 4);
    assert_eq!(
        verdict.first_difference.as_deref(),
        Some("track at LBN 20 is on cylinder 1 surface 1, truly on cylinder 1 surface 0")
    );
}

/// Regression for the first-LBN-only comparison: the last track one sector
/// longer (so the whole map one sector larger) is not exact, whether or not
/// the maps know locations.
#[test]
fn one_track_longer_is_not_exact() {
    for located in [true, false] {
        let truth = map_of(&[10, 10, 12, 12, 9], located);
        let longer = map_of(&[10, 10, 12, 12, 10], located);
        let verdict = compare(&longer, &truth);
        assert!(!verdict.exact, "{verdict:?}");
        assert_eq!(verdict.matching_tracks, 4);
        assert_eq!(
            verdict.first_difference.as_deref(),
            Some("track at LBN 44 has 10 sectors, truly 9")
        );
        // And the other way round: all extracted tracks match, but one is missing
        // its last sector.
        assert!(!compare(&truth, &longer).exact);
    }
}

/// Moving a boundary (one track shorter, the next longer) is not exact, and
/// the first track that does not start where a true one does is named.
#[test]
fn one_boundary_moved_is_not_exact() {
    let truth = map_of(&[10, 10, 12, 12, 9], true);
    let moved = map_of(&[10, 9, 13, 12, 9], true);
    let verdict = compare(&moved, &truth);
    assert!(!verdict.exact);
    assert_eq!(verdict.matching_tracks, 3);
    assert_eq!(
        verdict.first_difference.as_deref(),
        Some("track at LBN 10 has 9 sectors, truly 10")
    );
}

/// An uncertain track, or a remapped LBN missed by a method that sees physical
/// addresses, keeps a map with the true boundaries from being exact.
#[test]
fn uncertainty_and_missed_remaps_are_not_exact() {
    let truth = map_of(&[10, 10, 12], true);
    let unsure = with_track(&map_of(&[10, 10, 12], false), 1, |t| t.uncertain = true);
    assert!(!compare(&unsure, &truth).exact);
    let remapped = RemappedLbn {
        lbn: Lbn(4),
        stored_at: SectorLocation {
            cylinder: 1,
            surface: 0,
            sector: 12,
        },
    };
    let defective_truth = TrackMap::new(
        "d",
        "truth",
        truth.capacity(),
        truth.tracks().to_vec(),
        vec![remapped],
    )
    .expect("tiles");
    let verdict = compare(&truth, &defective_truth);
    assert!(!verdict.exact);
    assert_eq!(
        verdict.first_difference.as_deref(),
        Some("remapped LBNs differ: extracted 0, truly 1")
    );
}
