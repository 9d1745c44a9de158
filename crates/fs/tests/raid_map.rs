//! The allocator over a RAID: a five-member track-aligned RAID-5 of Quantum
//! Atlas 10K drives (334-sector tracks, so most unit boundaries fall inside a
//! 4 KB block), through its logical track map
//! (`spinstack_array::tracks::logical_track_map`: each data unit of a stripe is
//! one whole member track). What it proves: track-aligned ext2 over that map
//! excludes the blocks that straddle a unit, never gives one, keeps every
//! block inside one unit (one member track), and preallocates to the unit's
//! end — the file-system half of the validation paper's §3 over any volume
//! with a track map.

use spinstack_array::tracks::logical_track_map;
use spinstack_array::{ArraySpec, Level};
use spinstack_fs::{Allocator, AllocatorConfig, BlockState};
use spinstack_sim::units::{Lbn, Sectors};
use std::path::Path;

#[test]
fn track_aligned_ext2_over_a_track_aligned_raid5() {
    let spec = ArraySpec {
        level: Level::Raid5TrackAligned,
        members: 5,
        member_size: Sectors(400_000),
        chunk: None,
        disks: vec!["atlas10k".into()],
        buffer: None,
        track_units: None,
    };
    let map = logical_track_map(Path::new("(test array)"), &spec)
        .expect("a track-aligned RAID-5 has a logical map");
    let config = AllocatorConfig {
        // Small groups, so the test volume holds several.
        group_blocks: 8192,
        metadata_blocks_per_group: 64,
        ..AllocatorConfig::ext2_track_aligned()
    };
    let mut allocator = Allocator::new(&map, config).expect("fits");
    assert!(
        !allocator.traxtents().excluded().is_empty(),
        "unit sizes are not all multiples of 4 KB"
    );
    let file = allocator.create(0).unwrap();
    let first = allocator.allocate(file, 1).unwrap()[0].first;
    let unit = map
        .track_containing(config.block_size.first_lbn(first))
        .unwrap();
    let reserved = allocator
        .preallocated(file)
        .expect("preallocated to the unit's end");
    let reserved_end = config.block_size.first_lbn(reserved.end());
    assert!(
        reserved_end <= unit.end() && unit.end().0 - reserved_end.0 < config.block_size.sectors().0
    );
    for _ in 0..200 {
        allocator.allocate(file, 50).unwrap();
    }
    let runs = allocator.runs(file).unwrap();
    let (start, end) = (runs[0].first, runs[runs.len() - 1].end());
    let excluded_in_span = allocator
        .traxtents()
        .excluded()
        .iter()
        .filter(|&&b| b >= start && b < end)
        .count();
    assert!(
        excluded_in_span > 100,
        "the file spans unit boundaries inside blocks: {excluded_in_span}"
    );
    let sectors = config.block_size.sectors();
    for block in allocator.runs(file).unwrap().iter().flat_map(|r| r.iter()) {
        assert_ne!(allocator.state(block), Some(BlockState::Excluded));
        let lbn = config.block_size.first_lbn(block);
        let last = Lbn(lbn.0 + sectors.0 - 1);
        assert_eq!(
            map.track_index_of(lbn),
            map.track_index_of(last),
            "{block} straddles a unit"
        );
    }
}
