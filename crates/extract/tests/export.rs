//! Proves the exporters: the bad-blocks list holds exactly the blocks that
//! straddle a track boundary, and the summary finds zones, sizes and serpentine
//! numbering.

use spinstack_extract::export::{bad_blocks_list, straddling_blocks, summarize};
use spinstack_sim::units::{Lbn, Sectors};
use spinstack_trackmap::{Track, TrackLocation, TrackMap};

fn map_of(sizes: &[u64], locations: Option<&[(u32, u32)]>) -> TrackMap {
    let mut first = 0;
    let tracks = sizes
        .iter()
        .enumerate()
        .map(|(i, &s)| {
            let t = Track {
                first: Lbn(first),
                sectors: Sectors(s),
                location: locations.map(|l| TrackLocation {
                    cylinder: l[i].0,
                    surface: l[i].1,
                }),
                uncertain: false,
            };
            first += s;
            t
        })
        .collect();
    TrackMap::new("d", "m", Sectors(first), tracks, vec![]).expect("back-to-back tracks tile")
}

/// The bad-blocks list (block size in bytes) lists exactly the blocks a track
/// boundary lies strictly inside, and refuses sizes that are not whole sectors.
#[test]
fn bad_blocks_are_exactly_the_straddling_blocks() {
    // Boundaries at 10, 16, 30 with 8-sector (4 KiB) blocks: block 1 = [8,16)
    // straddles 10; 16 is aligned; block 3 = [24,32) straddles 30.
    let map = map_of(&[10, 6, 14, 10], None);
    assert_eq!(straddling_blocks(&map, 4096).unwrap(), vec![1, 3]);
    assert_eq!(bad_blocks_list(&map, 4096).unwrap(), "1\n3\n");
    // Brute force for every block size: a block is listed iff a boundary is inside it.
    for block in [512u64, 1024, 2048, 4096, 8192] {
        let k = block / 512;
        let listed = straddling_blocks(&map, block).unwrap();
        let boundaries: Vec<u64> = map.tracks().iter().skip(1).map(|t| t.first.0).collect();
        let expected: Vec<u64> = (0..map.capacity().0.div_ceil(k))
            .filter(|b| boundaries.iter().any(|&x| x > b * k && x < (b + 1) * k))
            .collect();
        assert_eq!(listed, expected, "block size {block}");
    }
    assert!(straddling_blocks(&map, 1000).is_err());
    assert!(straddling_blocks(&map, 0).is_err());
}

/// The summary keeps a slipped track inside its zone, opens a zone where the
/// size changes for good, and tells serpentine from cylinder-major numbering.
#[test]
fn summary_finds_zones_sizes_and_serpentine() {
    let mut sizes = vec![20u64; 12];
    sizes.push(17); // a slipped track stays in its zone
    sizes.extend(vec![20u64; 10]);
    sizes.extend(vec![16u64; 12]);
    let map = map_of(&sizes, None);
    let s = summarize(&map);
    assert_eq!(s.zones.len(), 2, "{:?}", s.zones);
    assert_eq!(s.zones[0].sectors_per_track, vec![20]);
    assert_eq!(s.zones[0].tracks, 23);
    assert_eq!(s.track_sizes.get(&17), Some(&1));
    assert_eq!(s.serpentine, None);
    // Serpentine: the surface stays, the cylinder steps.
    let serp: Vec<(u32, u32)> = (0..8)
        .map(|i| if i < 4 { (3 - i, 0) } else { (i - 4, 1) })
        .collect();
    let cylinder_major: Vec<(u32, u32)> = (0..8).map(|i| (i / 2, i % 2)).collect();
    assert_eq!(
        summarize(&map_of(&[5; 8], Some(&serp))).serpentine,
        Some(true)
    );
    assert_eq!(
        summarize(&map_of(&[5; 8], Some(&cylinder_major))).serpentine,
        Some(false)
    );
}
