//! Real-bytes RAID-5 throughput on one core over memory stores: a 5-member array of
//! 64 KiB chunks (256 KiB of data per stripe), 64 MiB per member, every page
//! allocated beforehand so the figures are the RAID's work, not the allocator's.
//! Each benchmark runs without and with a write-intent record (regions of 16
//! stripes; no flush during the run, so bits set once stay set, as between md's
//! bitmap daemon passes).
//!
//! - `full_stripe_write`: 1 MiB writes (four full stripes), sequential;
//! - `sequential_read`: 1 MiB reads, healthy;
//! - `degraded_read`: 1 MiB reads with member 2 failed (a quarter of the data rebuilt
//!   by XOR of four units);
//! - `random_4k_write`: 4 KiB writes at scattered 4 KiB-aligned LBNs
//!   (read-modify-write of one data unit and the parity).

use divan::counter::{BytesCount, ItemsCount};
use divan::{black_box, Bencher};
use spinstack_sim::units::{Lbn, Sectors, SECTOR_BYTES};
use spinstack_store::intent::record_sectors;
use spinstack_store::{BlockStore, MemoryStore};
use spinstack_volume::bytes::Raid5Volume;
use spinstack_volume::map::{MemberIndex, Raid5Map};

fn main() {
    divan::main();
}

const MEMBERS: usize = 5;
const CHUNK_SECTORS: u64 = 128;
const MEMBER_BYTES: u64 = 64 << 20;
const REQUEST_BYTES: usize = 1 << 20;
const STRIPES_PER_REGION: u64 = 16;

type Volume = Raid5Volume<MemoryStore, Raid5Map>;

fn volume(with_intent: bool) -> Volume {
    let member_sectors = MEMBER_BYTES / SECTOR_BYTES;
    let stores: Vec<MemoryStore> = (0..MEMBERS)
        .map(|_| MemoryStore::new(Sectors(member_sectors)).expect("valid size"))
        .collect();
    let mut volume = Raid5Volume::new(Sectors(CHUNK_SECTORS), stores).expect("valid array");
    if with_intent {
        let regions = 1 << 12;
        let record = MemoryStore::new(record_sectors(regions).expect("fits")).expect("valid size");
        volume = volume
            .with_intent(record, STRIPES_PER_REGION)
            .expect("record");
    }
    let chunk = vec![0x5au8; REQUEST_BYTES];
    let capacity_bytes = volume.capacity().bytes();
    for offset in (0..capacity_bytes).step_by(REQUEST_BYTES) {
        let len = (capacity_bytes - offset).min(REQUEST_BYTES as u64) as usize;
        volume
            .write(Lbn(offset / SECTOR_BYTES), &chunk[..len])
            .expect("in range");
    }
    volume
}

/// The `step`-th sequential 1 MiB request, wrapping at the end of the volume.
fn sequential_lbn(volume: &Volume, step: u64) -> Lbn {
    let requests = volume.capacity().bytes() / REQUEST_BYTES as u64;
    Lbn((step % requests) * REQUEST_BYTES as u64 / SECTOR_BYTES)
}

#[divan::bench(args = [false, true])]
fn full_stripe_write(bencher: Bencher, with_intent: bool) {
    let mut volume = volume(with_intent);
    let data = vec![0xa5u8; REQUEST_BYTES];
    let mut step = 0;
    bencher
        .counter(BytesCount::new(REQUEST_BYTES))
        .bench_local(|| {
            let lbn = sequential_lbn(&volume, step);
            step += 1;
            volume.write(lbn, black_box(&data)).expect("in range");
        });
}

#[divan::bench(args = [false, true])]
fn sequential_read(bencher: Bencher, with_intent: bool) {
    let mut volume = volume(with_intent);
    let mut data = vec![0u8; REQUEST_BYTES];
    let mut step = 0;
    bencher
        .counter(BytesCount::new(REQUEST_BYTES))
        .bench_local(|| {
            let lbn = sequential_lbn(&volume, step);
            step += 1;
            volume.read(lbn, black_box(&mut data)).expect("in range");
        });
}

#[divan::bench(args = [false, true])]
fn degraded_read(bencher: Bencher, with_intent: bool) {
    let mut volume = volume(with_intent);
    volume.fail_member(MemberIndex(2)).expect("member exists");
    let mut data = vec![0u8; REQUEST_BYTES];
    let mut step = 0;
    bencher
        .counter(BytesCount::new(REQUEST_BYTES))
        .bench_local(|| {
            let lbn = sequential_lbn(&volume, step);
            step += 1;
            volume.read(lbn, black_box(&mut data)).expect("in range");
        });
}

#[divan::bench(args = [false, true])]
fn random_4k_write(bencher: Bencher, with_intent: bool) {
    let mut volume = volume(with_intent);
    let data = vec![0xa5u8; 4096];
    let slots = volume.capacity().bytes() / 4096;
    let mut step = 0u64;
    bencher.counter(ItemsCount::new(1usize)).bench_local(|| {
        step += 1;
        let lbn = Lbn((step.wrapping_mul(0x9E37_79B9_7F4A_7C15) % slots) * 8);
        volume.write(lbn, black_box(&data)).expect("in range");
    });
}
