//! Helpers the test files share: small track maps and small allocator
//! configurations whose groups, limits and windows are easy to count.
#![allow(dead_code)]

use spinstack_fs::{AllocatorConfig, BlockSize, Placement, Preallocation};
use spinstack_sim::units::{Lbn, Sectors};
use spinstack_trackmap::{Track, TrackMap};

/// A map whose tracks have these sizes, in order.
pub fn map_of(sizes: &[u64]) -> TrackMap {
    let mut tracks = Vec::new();
    let mut first = 0;
    for &sectors in sizes {
        tracks.push(Track {
            first: Lbn(first),
            sectors: Sectors(sectors),
            location: None,
            uncertain: false,
        });
        first += sectors;
    }
    TrackMap::new("test", "sizes", Sectors(first), tracks, Vec::new()).expect("sizes tile")
}

/// A small FFS-like configuration: 4-sector blocks, groups of `group_blocks`
/// with 2 metadata blocks, at most `max_per_group` blocks per file per group.
pub fn small(group_blocks: u64, max_per_group: Option<u64>) -> AllocatorConfig {
    AllocatorConfig {
        block_size: BlockSize::from_sectors(Sectors(4)).unwrap(),
        group_blocks,
        metadata_blocks_per_group: 2,
        max_blocks_per_group_per_file: max_per_group,
        exclude_track_crossing_blocks: false,
        placement: Placement::NextFree,
        preallocation: Preallocation::None,
        indirect: None,
    }
}

/// The four policies over the small layout: FFS, traxtent FFS, ext2 with a
/// 3-block window, track-aligned ext2.
pub fn small_policies(group_blocks: u64) -> Vec<(&'static str, AllocatorConfig)> {
    let ffs = small(group_blocks, Some(6));
    let traxtent = AllocatorConfig {
        exclude_track_crossing_blocks: true,
        placement: Placement::Traxtent,
        ..ffs
    };
    let ext2 = AllocatorConfig {
        max_blocks_per_group_per_file: None,
        preallocation: Preallocation::Blocks(3),
        ..ffs
    };
    let ext2_aligned = AllocatorConfig {
        exclude_track_crossing_blocks: true,
        preallocation: Preallocation::ToTrackBoundary,
        ..ext2
    };
    vec![
        ("ffs", ffs),
        ("traxtent-ffs", traxtent),
        ("ext2", ext2),
        ("ext2-track-aligned", ext2_aligned),
    ]
}

/// Blocks (of `block_sectors`) holding a track start strictly inside, found by
/// looking at every block: the reference for excluded blocks.
pub fn crossing_by_brute_force(map: &TrackMap, block_sectors: u64) -> Vec<u64> {
    let blocks = map.capacity().0 / block_sectors;
    (0..blocks)
        .filter(|&b| {
            map.tracks()
                .iter()
                .any(|t| t.first.0 > b * block_sectors && t.first.0 < (b + 1) * block_sectors)
        })
        .collect()
}

/// The traxtents paper's FFS host reading one page of `block_size` per call:
/// its Pentium III's copy cost and 128 MB of LRU page cache.
pub fn ffs_scan_setup(
    device: spinstack_sim::engine::DeviceId,
    map: &TrackMap,
    block_size: BlockSize,
) -> spinstack_fs::scan::ScanSetup<'_> {
    spinstack_fs::scan::ScanSetup {
        device,
        map,
        block_size,
        read_pages: 1,
        cost: spinstack_fs::scan::ReadCost::pentium3_buffered(),
        cache: spinstack_fs::cache::PageCache::new(
            128 << 20,
            block_size.bytes(),
            spinstack_fs::cache::Replacement::Lru,
        )
        .expect("a valid cache"),
    }
}
