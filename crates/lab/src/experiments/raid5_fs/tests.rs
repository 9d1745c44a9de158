//! `raid5_fs`'s own tests: which variants share a write run, and where the
//! track-aligned allocator cuts files.

use super::write::writes_alike;
use super::*;
use crate::experiments::file_layout::lay_out;
use spinstack_fs::BlockRun;

// Proves the write phase shares runs only where the write path is the same:
// each window variant reuses the run of its variant without the window, and
// no two variants differing in RAID, plug or CPU share one (seven runs for
// eight variants plus the evidence run without delayed stripes).
#[test]
fn write_runs_are_shared_only_across_read_ahead() {
    let window = |v: Variant| VARIANTS.iter().position(|w| w.name == v.name).unwrap();
    assert_eq!(
        write_source(window(FOUR_TRACK_WINDOW)),
        window(CONVENTIONAL)
    );
    assert_eq!(
        write_source(window(FOUR_TRACK_WINDOW_NO_CPU)),
        window(CONVENTIONAL_NO_CPU)
    );
    for (index, variant) in VARIANTS.iter().enumerate() {
        let source = VARIANTS[write_source(index)];
        assert!(writes_alike(*variant, source), "{}", variant.name);
        if variant.window_tracks.is_none() {
            assert_eq!(write_source(index), index, "{}", variant.name);
        }
    }
    assert_eq!(write_runs_needed(), 7);
}

// Proves the track-aligned variant's wiring: ext2 over the stripe map cuts a
// 64 MB file only at stripe boundaries and at its indirect blocks (each other
// gap between two runs is one block holding a stripe boundary), so a
// whole-stripe fetch is one request per run; over the data-unit map the same
// file is cut at (nearly) every member track as well.
#[test]
fn track_aligned_files_are_cut_only_at_stripe_boundaries() {
    let blocks = 16_384;
    let cuts = |variant: Variant| {
        let volume = build(&volume_spec(variant), &DriveOptions::default())
            .unwrap()
            .volume;
        let (allocation, stripes) = maps(variant, &volume).unwrap();
        let config = AllocatorConfig::ext2_track_aligned();
        let mut allocator = Allocator::new(&allocation, config).unwrap();
        let (runs, indirect) = lay_out(&mut allocator, 1, blocks).unwrap().remove(0);
        assert_eq!(runs.iter().map(|r| r.blocks).sum::<u64>(), blocks);
        // Cuts after an indirect block are the file system's own, not the map's.
        let cuts: Vec<&[BlockRun]> = runs
            .windows(2)
            .filter(|pair| !indirect.contains(&pair[0].end()))
            .collect();
        let at_stripes = cuts
            .iter()
            .filter(|pair| {
                let gap_first = config.block_size.first_lbn(pair[0].end());
                let gap_end = config.block_size.first_lbn(pair[1].first);
                let boundary = stripes.next_boundary_after(gap_first);
                boundary.is_some_and(|b| b < gap_end)
            })
            .count();
        // 16,384 blocks: indirect blocks at 12, 1036 (with the double
        // indirect one), then every 1,024 blocks.
        assert_eq!(indirect.len(), 17);
        (cuts.len(), at_stripes)
    };
    let (stripe_cuts, at_stripes) = cuts(TRACK_ALIGNED);
    assert_eq!(
        stripe_cuts, at_stripes,
        "every other cut holds a stripe boundary"
    );
    // 64 MB over ~2.2 MB stripes: about 29 stripes, fewer than one cut per stripe
    // where a boundary falls on a block boundary.
    assert!((20..=35).contains(&stripe_cuts), "{stripe_cuts} cuts");
    let (unit_cuts, _) = cuts(PER_UNIT_EXCLUSION);
    assert!(
        unit_cuts >= 3 * stripe_cuts,
        "per-unit exclusion: {unit_cuts} cuts, stripe map {stripe_cuts}"
    );
}
