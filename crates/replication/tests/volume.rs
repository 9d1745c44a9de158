//! The data volume's executor merges page I/Os that continue each other on a
//! drive into one request (at most `MAX_MERGED_PAGES` pages), as the block layer
//! does, and only those: a sorted sweep of adjacent pages becomes a few large
//! requests and finishes sooner than the same number of pages with gaps.

use spinstack_replication::log::PageId;
use spinstack_replication::volume::{DataVolume, PageIo, MAX_MERGED_PAGES};
use spinstack_sim::request::Operation;
use spinstack_sim::units::Nanoseconds;

fn sweep(pages: impl Iterator<Item = u64>) -> (u64, Nanoseconds) {
    let spec = spinstack_disk::catalog::get("ultrastar36z15").expect("catalog");
    let mut volume = DataVolume::new(&spec, 2, 10_000).expect("volume");
    let ios: Vec<PageIo> = pages
        .map(|page| PageIo {
            at: Nanoseconds::ZERO,
            operation: Operation::Read,
            page: PageId(page),
        })
        .collect();
    let queues = volume.queues(ios);
    let end = volume.execute(queues, 8).expect("runs");
    (volume.requests, end)
}

// Proves adjacent pages merge (pages 0, 2, 4, … are adjacent on drive 0 of two)
// up to the cap, gapped ones do not, and the merged sweep is faster.
#[test]
fn adjacent_pages_merge_and_gapped_do_not() {
    // 256 pages per drive, adjacent on each drive.
    let (merged, merged_time) = sweep(0..512);
    assert_eq!(merged, 2 * 256 / MAX_MERGED_PAGES);
    // 256 pages per drive with a page's gap between each two.
    let (gapped, gapped_time) = sweep((0..512).map(|k| 2 * k + (k % 2)));
    assert_eq!(gapped, 512);
    assert!(
        merged_time < gapped_time,
        "{merged_time:?} vs {gapped_time:?}"
    );
}

// Proves I/Os of different kinds are never merged, even when adjacent.
#[test]
fn reads_and_writes_do_not_merge() {
    let spec = spinstack_disk::catalog::get("ultrastar36z15").expect("catalog");
    let mut volume = DataVolume::new(&spec, 1, 1_000).expect("volume");
    let ios = (0..8u64).map(|page| PageIo {
        at: Nanoseconds::ZERO,
        operation: if page % 2 == 0 {
            Operation::Read
        } else {
            Operation::Write
        },
        page: PageId(page),
    });
    let queues = volume.queues(ios);
    volume.execute(queues, 8).expect("runs");
    assert_eq!(volume.requests, 8);
}
