//! Allocation examples small enough to count by hand: traxtents and excluded
//! blocks, FFS's group switch, traxtent placement, ext2 preallocation, and the
//! presets on the Atlas 10K's true map.

mod common;

use common::{map_of, small};
use spinstack_fs::{
    AllocError, Allocator, AllocatorConfig, BlockNumber, BlockRun, BlockState, Placement,
    Preallocation, Traxtents,
};
use spinstack_sim::units::Sectors;

fn run(first: u64, blocks: u64) -> BlockRun {
    BlockRun {
        first: BlockNumber(first),
        blocks,
    }
}

/// Tracks of 10, 12 and 8 sectors in 4-sector blocks: blocks 2 and 5 hold the
/// boundaries at LBN 10 and 22; the traxtents are the whole blocks between.
#[test]
fn traxtents_and_excluded_blocks_by_hand() {
    let traxtents = Traxtents::new(&map_of(&[10, 12, 8]), small(64, None).block_size);
    assert_eq!(traxtents.block_count(), 7);
    assert_eq!(traxtents.excluded(), &[BlockNumber(2), BlockNumber(5)]);
    assert_eq!(traxtents.runs(), &[run(0, 2), run(3, 2), run(6, 1)]);
    assert_eq!(traxtents.index_of(BlockNumber(4)), Some(1));
    assert_eq!(traxtents.index_of(BlockNumber(5)), None);
    // From block 5: traxtent 2 starts 1 away, traxtent 1 starts 2 back, 0 is 5 back.
    assert_eq!(
        traxtents
            .by_distance_from(BlockNumber(5))
            .collect::<Vec<_>>(),
        vec![2, 1, 0]
    );
}

/// The excluded blocks are the extraction crate's `mke2fs -l` list (one
/// computation, not two), and match a block-by-block search, on a real map.
#[test]
fn excluded_blocks_are_the_bad_block_list_on_the_atlas_10k() {
    let map = atlas10k_map();
    for bytes in [4096, 8192] {
        let block = spinstack_fs::BlockSize::from_bytes(bytes).unwrap();
        let traxtents = Traxtents::new(&map, block);
        let listed = spinstack_extract::export::straddling_blocks(&map, bytes).unwrap();
        let ours: Vec<u64> = traxtents.excluded().iter().map(|b| b.0).collect();
        assert_eq!(ours, listed, "{bytes}-byte blocks");
        // Every whole block is in exactly one traxtent or excluded.
        let in_traxtents: u64 = traxtents.runs().iter().map(|r| r.blocks).sum();
        assert_eq!(
            in_traxtents + ours.len() as u64,
            traxtents.block_count(),
            "{bytes}-byte blocks"
        );
    }
}

/// The traxtents paper: "On average, one out of every twenty blocks of the
/// Quantum Atlas 10K is excluded" (§4.2.2), 8 KB blocks. Our true map gives a
/// share near that (this fails if it leaves 1/25..1/15).
#[test]
fn about_one_block_in_twenty_is_excluded_on_the_atlas_10k() {
    let map = atlas10k_map();
    let allocator = Allocator::new(&map, AllocatorConfig::traxtent_ffs()).unwrap();
    let excluded = allocator.traxtents().excluded().len() as f64;
    let share = excluded / allocator.block_count() as f64;
    eprintln!(
        "atlas10k: {excluded} of {} 8 KB blocks excluded ({:.2}%, 1 in {:.1})",
        allocator.block_count(),
        100.0 * share,
        1.0 / share
    );
    assert!((1.0 / 25.0..1.0 / 15.0).contains(&share), "share {share}");
}

fn atlas10k_map() -> spinstack_trackmap::TrackMap {
    let spec = spinstack_disk::catalog::get("atlas10k").expect("built-in drive");
    let layout = spinstack_disk::layout::Layout::new(&spec.layout).expect("valid layout");
    layout.track_map("atlas10k")
}

/// FFS's `maxbpg`: with 16-block groups (2 metadata blocks) and at most 6
/// blocks per group per file, a 20-block file takes 6 blocks in each of groups
/// 0, 1, 2 and the last 2 in group 3; with no limit it fills group 0 first.
#[test]
fn a_large_file_switches_group_after_max_blocks_per_group() {
    let map = map_of(&[64; 4]); // 256 sectors: 64 blocks, 4 groups
    let mut ffs = Allocator::new(&map, small(16, Some(6))).unwrap();
    let file = ffs.create(0).unwrap();
    let runs = ffs.allocate(file, 20).unwrap();
    assert_eq!(runs, vec![run(2, 6), run(18, 6), run(34, 6), run(50, 2)]);

    let mut unlimited = Allocator::new(&map, small(16, None)).unwrap();
    let file = unlimited.create(0).unwrap();
    assert_eq!(
        unlimited.allocate(file, 20).unwrap(),
        vec![run(2, 14), run(18, 6)]
    );
}

/// Regression (issue 9, the diff's second file): a file that spills into the
/// next group because its own is full keeps counting toward `maxbpg`, as
/// FreeBSD counts logical blocks, and then switches past the group the first
/// file half filled. 16-block groups, 2 metadata blocks, at most 10 blocks per
/// switch: the first file takes 2-11; the second takes 12-15, spills to 18-23
/// (10 counted), then moves to group 2 (14 free, above the average of 9)
/// instead of taking group 1's 24-27 as well.
#[test]
fn a_file_spilling_into_the_next_group_still_switches_at_max_blocks() {
    let map = map_of(&[64; 4]);
    let mut ffs = Allocator::new(&map, small(16, Some(10))).unwrap();
    let first = ffs.create(0).unwrap();
    assert_eq!(ffs.allocate(first, 10).unwrap(), vec![run(2, 10)]);
    let second = ffs.create(0).unwrap();
    assert_eq!(
        ffs.allocate(second, 14).unwrap(),
        vec![run(12, 4), run(18, 6), run(34, 4)]
    );
}

fn traxtent_config() -> AllocatorConfig {
    AllocatorConfig {
        exclude_track_crossing_blocks: true,
        placement: Placement::Traxtent,
        ..small(1000, None)
    }
}

/// Traxtent FFS: a large file's runs are separated by exactly the excluded
/// blocks (the preferred block excluded, the next traxtent's first block is
/// taken), and no excluded block is in the file. Tracks of 10 sectors, blocks
/// of 4: every fifth block, from block 2, is excluded.
#[test]
fn traxtent_ffs_jumps_excluded_blocks_to_the_next_traxtent() {
    let map = map_of(&[10; 40]);
    let mut allocator = Allocator::new(&map, traxtent_config()).unwrap();
    let file = allocator.create(0).unwrap();
    let runs = allocator.allocate(file, 30).unwrap();
    for pair in runs.windows(2) {
        let gap = pair[0].end();
        assert_eq!(pair[1].first, gap.plus(1), "runs {runs:?}");
        assert_eq!(allocator.state(gap), Some(BlockState::Excluded));
    }
    assert_eq!(runs.iter().map(|r| r.blocks).sum::<u64>(), 30);
    assert_eq!(
        runs[0].first,
        BlockNumber(3),
        "blocks 0, 1 are metadata, 2 excluded"
    );
}

/// A mid-size file that would straddle a traxtent at the preferred block is
/// placed in the closest traxtent that holds it whole; unmodified FFS puts it
/// right after the previous file, across the boundary. Tracks of 40 sectors
/// (10 blocks each, none excluded since 40 % 4 == 0).
#[test]
fn a_mid_size_file_fits_in_one_traxtent() {
    let map = map_of(&[40; 8]);
    for (placement, expected) in [
        (Placement::Traxtent, run(10, 8)),
        (Placement::NextFree, run(5, 8)),
    ] {
        let config = AllocatorConfig {
            placement,
            ..small(1000, None)
        };
        let mut allocator = Allocator::new(&map, config).unwrap();
        let first = allocator.create(0).unwrap();
        assert_eq!(allocator.allocate(first, 3).unwrap(), vec![run(2, 3)]);
        let second = allocator.create(0).unwrap();
        assert_eq!(
            allocator.allocate(second, 8).unwrap(),
            vec![expected],
            "{placement:?}"
        );
    }
}

/// ext2 preallocation: one block reserves the next (window - 1) blocks, which
/// another file cannot take and the owner's next blocks use; closing the file
/// frees what is left.
#[test]
fn ext2_preallocates_a_window_and_gives_it_back_on_close() {
    let map = map_of(&[40; 8]);
    let config = AllocatorConfig {
        preallocation: Preallocation::Blocks(4),
        ..small(1000, None)
    };
    let mut ext2 = Allocator::new(&map, config).unwrap();
    let (a, b) = (ext2.create(0).unwrap(), ext2.create(0).unwrap());
    let free_before = ext2.free_blocks();
    assert_eq!(ext2.allocate(a, 1).unwrap(), vec![run(2, 1)]);
    assert_eq!(ext2.preallocated(a), Some(run(3, 3)));
    assert_eq!(ext2.free_blocks(), free_before - 4);
    assert_eq!(
        ext2.allocate(b, 1).unwrap(),
        vec![run(6, 1)],
        "b skips a's window"
    );
    assert_eq!(
        ext2.allocate(a, 2).unwrap(),
        vec![run(3, 2)],
        "a's next blocks follow"
    );
    ext2.close(a).unwrap();
    assert_eq!(ext2.preallocated(a), None);
    assert_eq!(ext2.state(BlockNumber(5)), Some(BlockState::Free));
}

/// Track-aligned ext2 preallocates up to the track boundary: a block at the
/// start of a 10-block traxtent reserves the other 9.
#[test]
fn track_aligned_ext2_preallocates_to_the_track_boundary() {
    let map = map_of(&[40; 8]);
    let config = AllocatorConfig {
        exclude_track_crossing_blocks: true,
        preallocation: Preallocation::ToTrackBoundary,
        ..small(1000, None)
    };
    let mut ext2 = Allocator::new(&map, config).unwrap();
    let file = ext2.create(0).unwrap();
    assert_eq!(ext2.allocate(file, 1).unwrap(), vec![run(2, 1)]);
    assert_eq!(
        ext2.preallocated(file),
        Some(run(3, 7)),
        "to block 10, the boundary"
    );
    ext2.allocate(file, 8).unwrap();
    assert_eq!(
        ext2.preallocated(file),
        Some(run(11, 9)),
        "the next whole track"
    );
}

/// A request for more than is free fails, names the numbers, and changes
/// nothing; unknown files and groups and impossible layouts are errors.
#[test]
fn errors_leave_the_allocator_unchanged() {
    let map = map_of(&[40; 2]); // 20 blocks, groups of 10: 16 data blocks
    let mut allocator = Allocator::new(&map, small(10, None)).unwrap();
    let file = allocator.create(1).unwrap();
    assert_eq!(
        allocator.allocate(file, 17),
        Err(AllocError::NoSpace {
            file,
            wanted: 17,
            available: 16
        })
    );
    assert_eq!(allocator.free_blocks(), 16);
    assert_eq!(allocator.runs(file), Some(&[][..]));
    assert_eq!(
        allocator.allocate(file, 16).unwrap().len(),
        2,
        "groups 1 then 0 (wrap)"
    );
    assert!(matches!(
        allocator.create(2),
        Err(AllocError::UnknownGroup {
            group: 2,
            groups: 2
        })
    ));
    assert!(matches!(
        allocator.delete(spinstack_fs::FileId(9)),
        Err(AllocError::UnknownFile(_))
    ));
    let no_data = AllocatorConfig {
        metadata_blocks_per_group: 10,
        ..small(10, None)
    };
    assert!(matches!(
        Allocator::new(&map, no_data),
        Err(AllocError::BadConfig(_))
    ));
    let tiny = map_of(&[3]);
    assert!(matches!(
        Allocator::new(&tiny, small(10, None)),
        Err(AllocError::BadConfig(_))
    ));
    let _ = Sectors(0);
}

/// The presets carry the papers' parameters: FFS 8 KB blocks in 32 MB groups
/// with maxbpg 2048 (half a group); ext2 4 KB blocks, 32768-block groups,
/// an 8-block window.
#[test]
fn presets_carry_the_named_parameters() {
    let ffs = AllocatorConfig::ffs();
    assert_eq!(ffs.block_size.bytes(), 8192);
    assert_eq!(ffs.group_blocks, 4096);
    assert_eq!(
        ffs.max_blocks_per_group_per_file,
        Some(ffs.group_blocks / 2)
    );
    assert_eq!(ffs.metadata_blocks_per_group, 130);
    let ext2 = AllocatorConfig::ext2();
    assert_eq!(ext2.block_size.bytes(), 4096);
    assert_eq!(ext2.group_blocks, 32768);
    assert_eq!(ext2.preallocation, Preallocation::Blocks(8));
    assert_eq!(ext2.metadata_blocks_per_group, 516);
    assert!(AllocatorConfig::ext2_track_aligned().exclude_track_crossing_blocks);
}

/// With the real FFS preset on the Atlas 10K, a 64 MB file (8192 blocks) keeps
/// its blocks below `NDADDR + NINDIR` (12 + 2048) in group 0, then takes
/// `maxbpg` = 2048 blocks in each of groups 1, 2 and 3 (every later group is
/// emptier than average), each new group opening with the indirect block that
/// maps its blocks (the double-indirect block before the first); traxtent FFS
/// does the same, skipping only excluded blocks.
#[test]
fn a_64_mb_file_takes_2048_blocks_per_group_on_the_atlas_10k() {
    let map = atlas10k_map();
    for config in [AllocatorConfig::ffs(), AllocatorConfig::traxtent_ffs()] {
        let mut allocator = Allocator::new(&map, config).unwrap();
        let file = allocator.create(0).unwrap();
        allocator.allocate(file, 8192).unwrap();
        let mut per_group = std::collections::BTreeMap::new();
        for block in allocator.runs(file).unwrap().iter().flat_map(|r| r.iter()) {
            *per_group
                .entry(block.0 / config.group_blocks)
                .or_insert(0u64) += 1;
        }
        assert_eq!(
            per_group.into_iter().collect::<Vec<_>>(),
            vec![(0, 2060), (1, 2048), (2, 2048), (3, 2036)]
        );
        let indirect = allocator.indirect_blocks(file).unwrap();
        let groups: Vec<u64> = indirect.iter().map(|b| b.0 / config.group_blocks).collect();
        assert_eq!(groups, vec![0, 1, 1, 2, 3], "IND, DIND + IND, IND, IND");
        let runs = allocator.runs(file).unwrap();
        for pair in runs.windows(2) {
            let gap = pair[0].end();
            let switches_group =
                gap.0 / config.group_blocks != pair[1].first.0 / config.group_blocks;
            let state = allocator.state(gap);
            assert!(
                switches_group
                    || state == Some(BlockState::Indirect)
                    || (config.exclude_track_crossing_blocks
                        && state == Some(BlockState::Excluded)),
                "{pair:?}: {state:?}"
            );
        }
        if !config.exclude_track_crossing_blocks {
            assert_eq!(
                runs.len(),
                5,
                "split by the first indirect block, then one per group: {runs:?}"
            );
        }
    }
}

/// FFS and ext2 take a file's first indirect block when it first needs one, so
/// it lies between data blocks 11 and 12, and a reader's contiguous run (what
/// FreeBSD's `ufs_bmaparray` reports and read-ahead clusters by) ends at block
/// 11. ext2's preallocated blocks serve the indirect block as they serve data
/// (its preset leaves indirect blocks out for now, see `AllocatorConfig::ext2`).
#[test]
fn the_first_indirect_block_lies_between_data_blocks_11_and_12() {
    let map = atlas10k_map();
    let ext2 = AllocatorConfig {
        indirect: Some(spinstack_fs::config::EXT2_INDIRECT_4_KIB),
        ..AllocatorConfig::ext2()
    };
    for config in [AllocatorConfig::ffs(), ext2] {
        let mut allocator = Allocator::new(&map, config).unwrap();
        let file = allocator.create(0).unwrap();
        for _ in 0..25 {
            allocator.allocate(file, 1).unwrap();
        }
        let runs = allocator.runs(file).unwrap();
        let indirect = allocator.indirect_blocks(file).unwrap().to_vec();
        assert_eq!(indirect.len(), 1);
        assert_eq!(runs.len(), 2, "{runs:?}");
        assert_eq!(runs[0].blocks, 12);
        assert_eq!(indirect[0], runs[0].end());
        assert_eq!(runs[1].first, indirect[0].plus(1));
        assert_eq!(allocator.state(indirect[0]), Some(BlockState::Indirect));
        allocator.delete(file).unwrap();
        assert_eq!(allocator.state(indirect[0]), Some(BlockState::Free));
    }
}
