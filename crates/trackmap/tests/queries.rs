//! Proves the queries the upper layers allocate with — which track holds an LBN,
//! the next boundary after it, whether a range is whole tracks, and which
//! file-system blocks cross a boundary — against brute force on random maps,
//! and on a map as large as a real drive's.

use proptest::prelude::*;
use spinstack_sim::units::{Lbn, Sectors};
use spinstack_trackmap::{Track, TrackMap};

fn map_of(sizes: &[u64]) -> TrackMap {
    let mut first = 0;
    let tracks = sizes
        .iter()
        .map(|&size| {
            let track = Track {
                first: Lbn(first),
                sectors: Sectors(size),
                location: None,
                uncertain: false,
            };
            first += size;
            track
        })
        .collect();
    TrackMap::new("d", "m", Sectors(first), tracks, Vec::new()).expect("back-to-back tracks tile")
}

/// Track starts, by brute force.
fn starts(map: &TrackMap) -> Vec<u64> {
    map.tracks().iter().map(|t| t.first.0).collect()
}

/// The small worked example: tracks [0,10) [10,22) [22,30).
#[test]
fn worked_example() {
    let map = map_of(&[10, 12, 8]);
    assert_eq!(map.track_index_of(Lbn(0)), Some(0));
    assert_eq!(map.track_index_of(Lbn(21)), Some(1));
    assert_eq!(map.track_index_of(Lbn(29)), Some(2));
    assert_eq!(map.track_index_of(Lbn(30)), None);
    assert_eq!(
        map.track_containing(Lbn(22)).map(|t| t.sectors),
        Some(Sectors(8))
    );
    assert_eq!(map.track_containing(Lbn(u64::MAX)), None);
    assert_eq!(map.next_boundary_after(Lbn(0)), Some(Lbn(10)));
    assert_eq!(map.next_boundary_after(Lbn(9)), Some(Lbn(10)));
    assert_eq!(map.next_boundary_after(Lbn(10)), Some(Lbn(22)));
    assert_eq!(map.next_boundary_after(Lbn(22)), None);
    assert_eq!(map.next_boundary_after(Lbn(u64::MAX)), None);
    assert_eq!(map.whole_tracks(Lbn(10), Sectors(12)), Some(1));
    assert_eq!(map.whole_tracks(Lbn(0), Sectors(30)), Some(3));
    assert_eq!(map.whole_tracks(Lbn(10), Sectors(11)), None);
    assert_eq!(map.whole_tracks(Lbn(11), Sectors(11)), None);
    assert_eq!(map.whole_tracks(Lbn(22), Sectors(9)), None);
    assert_eq!(map.whole_tracks(Lbn(10), Sectors(0)), None);
    assert_eq!(map.whole_tracks(Lbn(22), Sectors(u64::MAX)), None);
    assert!(map.is_track_aligned(Lbn(22), Sectors(8)));
    assert!(!map.is_track_aligned(Lbn(30), Sectors(1)));
    assert_eq!(
        map.boundary_crossing_blocks(Sectors(4)).collect::<Vec<_>>(),
        vec![2, 5]
    );
    assert_eq!(map.boundary_crossing_blocks(Sectors(2)).count(), 0);
    // One 64-sector block holds both boundaries: listed once.
    assert_eq!(
        map.boundary_crossing_blocks(Sectors(64))
            .collect::<Vec<_>>(),
        vec![0]
    );
}

/// A block of 0 sectors is a caller's mistake, not an empty list.
#[test]
#[should_panic(expected = "a block of 0 sectors")]
fn zero_sector_blocks_panic() {
    let _ = map_of(&[10]).boundary_crossing_blocks(Sectors(0));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    /// Every LBN (and a few past the end) finds the track a linear scan finds,
    /// and the first start after it.
    #[test]
    fn lookups_match_brute_force(sizes in proptest::collection::vec(1u64..12, 1..30)) {
        let map = map_of(&sizes);
        let starts = starts(&map);
        for lbn in 0..map.capacity().0 + 3 {
            let expected = map.tracks().iter().position(|t| t.contains(Lbn(lbn)));
            prop_assert_eq!(map.track_index_of(Lbn(lbn)), expected);
            prop_assert_eq!(
                map.track_containing(Lbn(lbn)),
                expected.map(|i| map.tracks()[i])
            );
            let next = starts.iter().copied().find(|&s| s > lbn).map(Lbn);
            prop_assert_eq!(map.next_boundary_after(Lbn(lbn)), next);
        }
    }

    /// Every range (empty, inside, reaching past the end) is whole tracks exactly
    /// when both its ends are boundaries, and covers as many tracks as start in it.
    #[test]
    fn whole_tracks_match_brute_force(sizes in proptest::collection::vec(1u64..6, 1..12)) {
        let map = map_of(&sizes);
        let capacity = map.capacity().0;
        let starts = starts(&map);
        let is_boundary = |lbn: u64| lbn == capacity || starts.contains(&lbn);
        for lbn in 0..=capacity + 1 {
            for sectors in 0..=capacity + 2 - lbn {
                let end = lbn + sectors;
                let expected = (sectors > 0
                    && end <= capacity
                    && starts.contains(&lbn)
                    && is_boundary(end))
                .then(|| starts.iter().filter(|&&s| s >= lbn && s < end).count());
                prop_assert_eq!(map.whole_tracks(Lbn(lbn), Sectors(sectors)), expected);
                prop_assert_eq!(
                    map.is_track_aligned(Lbn(lbn), Sectors(sectors)),
                    expected.is_some()
                );
            }
        }
    }

    /// A block is listed exactly when a track boundary lies strictly inside it,
    /// in increasing order.
    #[test]
    fn crossing_blocks_match_brute_force(
        sizes in proptest::collection::vec(1u64..40, 1..30),
        block_sectors in 1u64..20,
    ) {
        let map = map_of(&sizes);
        let boundaries: Vec<u64> = starts(&map).into_iter().skip(1).collect();
        let expected: Vec<u64> = (0..map.capacity().0.div_ceil(block_sectors))
            .filter(|b| {
                boundaries
                    .iter()
                    .any(|&x| x > b * block_sectors && x < (b + 1) * block_sectors)
            })
            .collect();
        let listed: Vec<u64> = map.boundary_crossing_blocks(Sectors(block_sectors)).collect();
        prop_assert_eq!(listed, expected);
    }
}

/// On a map the size of a large drive's (150,000 tracks of varying size), every
/// track is found from its first and last LBN, each boundary leads to the next,
/// and each track is exactly one whole track; a linear search per query would
/// make this test take minutes, binary search keeps it well under a second.
#[test]
fn large_map_answers_every_track() {
    let sizes: Vec<u64> = (0..150_000u64).map(|i| 300 + (i * 7919) % 400).collect();
    let map = map_of(&sizes);
    for (index, track) in map.tracks().iter().enumerate() {
        let last = Lbn(track.end().0 - 1);
        assert_eq!(map.track_index_of(track.first), Some(index));
        assert_eq!(map.track_index_of(last), Some(index));
        let next = map.tracks().get(index + 1).map(|t| t.first);
        assert_eq!(map.next_boundary_after(track.first), next);
        assert_eq!(map.next_boundary_after(last), next);
        assert_eq!(map.whole_tracks(track.first, track.sectors), Some(1));
    }
    assert_eq!(map.whole_tracks(Lbn(0), map.capacity()), Some(150_000));
}
