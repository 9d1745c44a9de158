use super::common::*;
use spinstack_sim::fake::FixedServiceDevice;
use spinstack_sim::request::{Operation, Status};
use spinstack_sim::units::{Nanoseconds, Sectors};
use spinstack_volume::timed::{DabCounters, DmaBuffer, HostCost, Striped, WritePolicy};

fn dab(blocks: u32, policy: WritePolicy) -> DmaBuffer<Striped<FixedServiceDevice>> {
    let below = Striped::single(fixed(1).remove(0), None, HostCost::NONE, None).unwrap();
    DmaBuffer::new(below, Sectors(256), blocks, policy, HostCost::NONE)
}

// Proves the DAB paper's sequential small reads: 512 reads of 1 KB (512 KB) fetch
// each 128 KB block once (four fetches, each one device I/O of 256 sectors) and
// serve everything else from memory: 4 misses (case 4) and 508 hits (case 1).
#[test]
fn sequential_small_reads_fetch_each_block_once() {
    let script = (0..512).map(|k| issue(Operation::Read, 2 * k, 2)).collect();
    let (engine, done) = play(dab(64, WritePolicy::WriteBack), script, 1);
    assert!(done.iter().all(|c| c.status == Status::Ok));
    let buffer = &engine.devices()[0];
    assert_eq!(
        buffer.counters(),
        DabCounters {
            hits: 508,
            misses: 4,
            block_fetches: 4,
            requests: 512,
            ..DabCounters::default()
        }
    );
    let below = buffer.stats();
    assert_eq!((below[0].requests, below[0].sectors), (4, 1024));
    // A hit costs no device time: the run lasts four fetches.
    assert_eq!(done.last().unwrap().done, Nanoseconds(4 * SERVICE_NS));
}

// Proves the partial cases: a request whose first block is buffered and last is
// not fetches only the latter block (case 2), and the reverse (case 3).
#[test]
fn partial_hits_fetch_the_missing_block() {
    let script = vec![
        issue(Operation::Read, 0, 8),    // miss: block 0
        issue(Operation::Read, 250, 12), // first in block 0, last in block 1: case 2
        issue(Operation::Read, 1020, 8), // block 3, 4: miss (case 4)
        issue(Operation::Read, 760, 20), // block 2 (missing) and 3 (buffered): case 3
    ];
    let (engine, _) = play(dab(8, WritePolicy::WriteThrough), script, 1);
    let counters = engine.devices()[0].counters();
    assert_eq!(
        (
            counters.misses,
            counters.first_present_last_missing,
            counters.first_missing_last_present
        ),
        (2, 1, 1)
    );
    assert_eq!(counters.block_fetches, 5);
}

// Proves write-back: writes are absorbed in the buffer (a missed partial block is
// fetched first, a whole block is not), and a flush writes the dirty blocks back
// whole and then flushes below.
#[test]
fn write_back_and_flush() {
    let script = vec![
        issue(Operation::Write, 10, 4),    // partial block 0: fetch, dirty
        issue(Operation::Write, 256, 256), // whole block 1: no fetch, dirty
        issue(Operation::Flush, 0, 0),
    ];
    let (engine, done) = play(dab(8, WritePolicy::WriteBack), script, 1);
    assert!(done.iter().all(|c| c.status == Status::Ok));
    let counters = engine.devices()[0].counters();
    assert_eq!((counters.block_fetches, counters.write_backs), (1, 2));
    let below = engine.devices()[0].stats()[0];
    // 1 fetch + 2 write-backs + 1 flush.
    assert_eq!(below.requests, 4);
    // The writes completed from memory, before the flush's work below.
    assert!(done[1].done.0 <= SERVICE_NS);
}

// Proves eviction of a dirty block writes it back before its slot takes the new
// block, and write-through sends every write below.
#[test]
fn eviction_and_write_through() {
    let script = vec![
        issue(Operation::Write, 0, 4),
        issue(Operation::Read, 256, 4),
    ];
    let (engine, _) = play(dab(1, WritePolicy::WriteBack), script, 1);
    let counters = engine.devices()[0].counters();
    assert_eq!((counters.block_fetches, counters.write_backs), (2, 1));
    let script = vec![issue(Operation::Write, 0, 4), issue(Operation::Write, 8, 4)];
    let (engine, _) = play(dab(4, WritePolicy::WriteThrough), script, 1);
    assert_eq!(engine.devices()[0].stats()[0].requests, 2);
}
