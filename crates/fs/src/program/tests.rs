//! The write-back progress check (`Program::check_write_back_progress`), driven
//! directly: a bookkeeping bug that leaves pages dirty after the last step used to
//! re-arm the periodic pass forever and hang the run.

use super::*;
use crate::cache::Replacement;
use crate::{AllocatorConfig, BlockSize, Placement, Preallocation};
use spinstack_sim::units::{Lbn, Sectors};
use spinstack_trackmap::Track;

fn map() -> TrackMap {
    let tracks = (0..8)
        .map(|t| Track {
            first: Lbn(t * 64),
            sectors: Sectors(64),
            location: None,
            uncertain: false,
        })
        .collect();
    TrackMap::new("test", "sizes", Sectors(512), tracks, Vec::new()).expect("tiles")
}

// Proves a page left dirty with no write for twice (age limit + interval) after the
// last step is an error naming the stall, and that anything shorter is not.
#[test]
fn dirty_pages_with_no_write_back_after_the_last_step_are_an_error() {
    let map = map();
    let config = AllocatorConfig {
        block_size: BlockSize::from_sectors(Sectors(8)).unwrap(),
        group_blocks: 64,
        metadata_blocks_per_group: 0,
        max_blocks_per_group_per_file: None,
        exclude_track_crossing_blocks: false,
        placement: Placement::NextFree,
        preallocation: Preallocation::None,
        indirect: None,
    };
    let setup = ProgramSetup {
        device: DeviceId(0),
        map: &map,
        allocator: Allocator::new(&map, config).unwrap(),
        cache: PageCache::new(16 * 4096, 4096, Replacement::Lru).unwrap(),
        writeback: WritePolicy::linux_2_6_16(),
        read_ahead: Policy::linux_default(),
        cost: ReadCost::pentium3_buffered(),
    };
    let mut program = Program::new(setup, Vec::new());
    program.state = Process::Done;
    let key = PageKey {
        file: FileId(0),
        index: 0,
    };
    program.setup.cache.write(key, Nanoseconds::ZERO).unwrap();
    // linux_2_6_16: 30 s age limit, 5 s interval; the stall bound is 70 s.
    let at = Nanoseconds::from_ms;
    assert!(program.check_write_back_progress(at(5_000)).is_ok());
    assert!(program.check_write_back_progress(at(75_000)).is_ok());
    match program.check_write_back_progress(at(75_001)) {
        Err(ProgramError::WriteBackStalled { dirty_pages: 1, .. }) => {}
        other => panic!("expected a write-back stall, got {other:?}"),
    }
}
