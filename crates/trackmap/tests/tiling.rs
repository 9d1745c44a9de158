//! Proves that `TrackMap::new` accepts exactly the track lists that tile
//! `[0, capacity)` — no empty track, no gap, no overlap, ending at the capacity —
//! with remapped LBNs inside it, and names the first violation.

use spinstack_sim::units::{Lbn, Sectors};
use spinstack_trackmap::{RemappedLbn, SectorLocation, TilingError, Track, TrackMap};

fn tracks(spans: &[(u64, u64)]) -> Vec<Track> {
    spans
        .iter()
        .map(|&(first, sectors)| Track {
            first: Lbn(first),
            sectors: Sectors(sectors),
            location: None,
            uncertain: false,
        })
        .collect()
}

fn build(capacity: u64, spans: &[(u64, u64)]) -> Result<TrackMap, TilingError> {
    TrackMap::new("d", "m", Sectors(capacity), tracks(spans), Vec::new())
}

fn remapped_at(lbn: u64) -> RemappedLbn {
    RemappedLbn {
        lbn: Lbn(lbn),
        stored_at: SectorLocation {
            cylinder: 0,
            surface: 0,
            sector: 0,
        },
    }
}

/// Back-to-back tracks from 0 to the capacity make a map, and its accessors
/// give back what went in; an empty drive with no tracks is a map too.
#[test]
fn tiling_lists_are_accepted() {
    let map = build(25, &[(0, 10), (10, 10), (20, 5)]).expect("tiles");
    assert_eq!(map.drive(), "d");
    assert_eq!(map.method(), "m");
    assert_eq!(map.capacity(), Sectors(25));
    assert_eq!(map.track_count(), 3);
    assert_eq!(map.tracks(), &tracks(&[(0, 10), (10, 10), (20, 5)])[..]);
    assert_eq!(
        map.track_sizes().collect::<Vec<_>>(),
        vec![Sectors(10), Sectors(10), Sectors(5)]
    );
    let empty = build(0, &[]).expect("nothing to tile");
    assert_eq!(empty.track_count(), 0);
    assert_eq!(empty.track_index_of(Lbn(0)), None);
    assert_eq!(empty.next_boundary_after(Lbn(0)), None);
}

/// Each way of failing to tile is rejected with the index of the first track
/// at fault.
#[test]
fn each_violation_is_named() {
    assert_eq!(
        build(20, &[(0, 10), (10, 0), (10, 10)]),
        Err(TilingError::EmptyTrack {
            index: 1,
            first: Lbn(10)
        })
    );
    assert_eq!(
        build(20, &[(1, 19)]),
        Err(TilingError::Gap {
            index: 0,
            first: Lbn(1),
            expected: Lbn(0)
        })
    );
    assert_eq!(
        build(20, &[(0, 10), (12, 8)]),
        Err(TilingError::Gap {
            index: 1,
            first: Lbn(12),
            expected: Lbn(10)
        })
    );
    // A duplicated track is an overlap.
    assert_eq!(
        build(20, &[(0, 10), (0, 10), (10, 10)]),
        Err(TilingError::Overlap {
            index: 1,
            first: Lbn(0),
            expected: Lbn(10)
        })
    );
    assert_eq!(
        build(20, &[(0, 10), (10, 11)]),
        Err(TilingError::PastCapacity {
            index: 1,
            first: Lbn(10),
            sectors: Sectors(11),
            capacity: Sectors(20)
        })
    );
    // A length near u64::MAX must be rejected, not overflow.
    assert!(matches!(
        build(20, &[(0, 10), (10, u64::MAX)]),
        Err(TilingError::PastCapacity { index: 1, .. })
    ));
    assert_eq!(
        build(20, &[(0, 10)]),
        Err(TilingError::Incomplete {
            end: Lbn(10),
            capacity: Sectors(20)
        })
    );
    assert_eq!(
        build(20, &[]),
        Err(TilingError::Incomplete {
            end: Lbn(0),
            capacity: Sectors(20)
        })
    );
}

/// A remapped LBN must be one of the map's own LBNs.
#[test]
fn remapped_lbns_stay_inside_the_capacity() {
    let inside = TrackMap::new(
        "d",
        "m",
        Sectors(20),
        tracks(&[(0, 20)]),
        vec![remapped_at(0), remapped_at(19)],
    );
    assert_eq!(inside.expect("inside").remapped().len(), 2);
    let past = TrackMap::new(
        "d",
        "m",
        Sectors(20),
        tracks(&[(0, 20)]),
        vec![remapped_at(3), remapped_at(20)],
    );
    assert_eq!(
        past,
        Err(TilingError::RemappedPastCapacity {
            index: 1,
            lbn: Lbn(20),
            capacity: Sectors(20)
        })
    );
}
