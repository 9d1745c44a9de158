//! Model-based test of `blocks_ready` (one pass over a range) against
//! `block_ready` (one block at a time, the reference it replaced in `serve_read`;
//! inputs finding 9): on every catalog drive, under a seeded mix of sequential and
//! random reads and writes that leaves read-ahead jobs running, both give the same
//! time for every block of every segment around the requests.

use crate::drive::{Drive, DriveOptions};
use spinstack_sim::device::BlockDevice;
use spinstack_sim::request::{BlockRequest, Operation, RequestId};
use spinstack_sim::rng::SplitMix64;
use spinstack_sim::units::{Lbn, Nanoseconds, Sectors};

/// Compares both lookups over `[lbn, end)` of every segment.
fn check_ranges(drive: &Drive, lbn: u64, end: u64, seed: u64, drive_name: &str) {
    const MISSING: i64 = i64::MAX;
    let mut bulk = Vec::new();
    for index in 0..drive.cache.segments.len() {
        drive.blocks_ready(index, lbn, end, MISSING, &mut bulk);
        for (i, b) in (lbn..end).enumerate() {
            let reference = drive.block_ready(index, b).unwrap_or(MISSING);
            assert_eq!(
                bulk[i], reference,
                "seed {seed:#x}, {drive_name}, segment {index}, block {b}"
            );
        }
    }
}

#[test]
fn blocks_ready_matches_block_ready_on_every_catalog_drive() {
    for name in crate::catalog::names() {
        let seed = 0xB10C_4EAD ^ name.len() as u64;
        let spec = crate::catalog::get(name).expect("catalog drive");
        let mut drive = Drive::new(&spec, DriveOptions::default()).expect("drive builds");
        let capacity = drive.capacity().0;
        let mut rng = SplitMix64::new(seed);
        let mut now = Nanoseconds(0);
        let mut next_lbn = rng.below(capacity / 2);
        let mut completed = Vec::new();
        for id in 0..150u64 {
            let sectors = 1 + rng.below(600);
            let lbn = if rng.below(3) == 0 {
                rng.below(capacity - sectors)
            } else {
                next_lbn.min(capacity - sectors)
            };
            next_lbn = lbn + sectors;
            let operation = if rng.below(5) == 0 {
                Operation::Write
            } else {
                Operation::Read
            };
            let request =
                BlockRequest::new(RequestId(id), operation, Lbn(lbn), Sectors(sectors), now);
            drive.submit(request).expect("in range");
            // Around the request, and across where its read-ahead runs.
            let from = lbn.saturating_sub(rng.below(700));
            let to = (lbn + sectors + rng.below(2000)).min(capacity);
            check_ranges(&drive, from, to, seed, name);
            // Sometimes catch the next request while the read-ahead still runs.
            let think = Nanoseconds(rng.below(3_000_000));
            while let Some(t) = drive.next_event_time() {
                drive.advance(t, &mut completed);
                if completed.len() as u64 > id {
                    break;
                }
            }
            now = completed.last().map_or(now, |c| c.done) + think;
        }
    }
}
