//! `MemoryStore` throughput: sequential 1 MiB writes and reads over a 256 MiB store
//! (pages already allocated, so the figure is the copy, not the allocator), and 4 KiB
//! random-ish writes (page lookup cost per small request).

use divan::counter::BytesCount;
use divan::{black_box, Bencher};
use spinstack_sim::units::{Lbn, Sectors, SECTOR_BYTES};
use spinstack_store::{BlockStore, MemoryStore};

fn main() {
    divan::main();
}

const STORE_BYTES: u64 = 256 << 20;
const REQUEST_BYTES: usize = 1 << 20;

fn full_store() -> MemoryStore {
    let mut store = MemoryStore::new(Sectors(STORE_BYTES / SECTOR_BYTES)).expect("valid size");
    let chunk = vec![0x5au8; REQUEST_BYTES];
    for index in 0..STORE_BYTES / REQUEST_BYTES as u64 {
        let lbn = Lbn(index * REQUEST_BYTES as u64 / SECTOR_BYTES);
        store.write(lbn, &chunk).expect("in range");
    }
    store
}

/// LBN of the `step`-th request of `request_bytes` after a multiplicative scramble,
/// so successive requests land far apart.
fn scattered_lbn(step: u64, request_bytes: u64) -> Lbn {
    let slots = STORE_BYTES / request_bytes;
    Lbn((step.wrapping_mul(0x9E37_79B9) % slots) * request_bytes / SECTOR_BYTES)
}

#[divan::bench]
fn write_1mib_sequential(bencher: Bencher) {
    let mut store = full_store();
    let data = vec![0xa5u8; REQUEST_BYTES];
    let mut step = 0u64;
    bencher
        .counter(BytesCount::new(REQUEST_BYTES))
        .bench_local(|| {
            let lbn = Lbn((step % (STORE_BYTES / REQUEST_BYTES as u64)) * 2048);
            step += 1;
            store.write(lbn, black_box(&data)).expect("in range");
        });
}

#[divan::bench]
fn read_1mib_sequential(bencher: Bencher) {
    let mut store = full_store();
    let mut data = vec![0u8; REQUEST_BYTES];
    let mut step = 0u64;
    bencher
        .counter(BytesCount::new(REQUEST_BYTES))
        .bench_local(|| {
            let lbn = Lbn((step % (STORE_BYTES / REQUEST_BYTES as u64)) * 2048);
            step += 1;
            store.read(lbn, black_box(&mut data)).expect("in range");
        });
}

#[divan::bench]
fn write_4kib_scattered(bencher: Bencher) {
    let mut store = full_store();
    let data = vec![0xa5u8; 4096];
    let mut step = 0u64;
    bencher.counter(BytesCount::new(4096usize)).bench_local(|| {
        step += 1;
        store
            .write(scattered_lbn(step, 4096), black_box(&data))
            .expect("in range");
    });
}
