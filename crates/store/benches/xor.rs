//! XOR throughput, the arithmetic under RAID-5 parity: `xor_into` over one source and
//! `xor_many` over 4 sources (a 5-disk RAID-5 full stripe), for a 4 KiB block, a
//! 64 KiB chunk (L1/L2-resident) and a 4 MiB buffer (past the L2 cache). The counter
//! is the bytes of *source* data consumed, so the figure compares directly with the
//! RAID-5 target of >= 2 GB/s of full-stripe writes on one core.

use divan::counter::BytesCount;
use divan::{black_box, Bencher};
use spinstack_store::xor::{xor_into, xor_many};

fn main() {
    divan::main();
}

const SIZES: [usize; 3] = [4 * 1024, 64 * 1024, 4 * 1024 * 1024];
const STRIPE_SOURCES: usize = 4;

/// Deterministic, non-zero filler (the value does not matter to XOR's speed).
fn filled(len: usize, seed: u8) -> Vec<u8> {
    (0..len)
        .map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed))
        .collect()
}

#[divan::bench(args = SIZES)]
fn xor_into_one_source(bencher: Bencher, len: usize) {
    let src = filled(len, 1);
    let mut dst = filled(len, 2);
    bencher
        .counter(BytesCount::new(len))
        .bench_local(|| xor_into(black_box(&mut dst), black_box(&src)));
}

#[divan::bench(args = SIZES)]
fn xor_many_four_sources(bencher: Bencher, len: usize) {
    let sources: Vec<Vec<u8>> = (0..STRIPE_SOURCES).map(|i| filled(len, i as u8)).collect();
    let views: Vec<&[u8]> = sources.iter().map(Vec::as_slice).collect();
    let mut dst = filled(len, 9);
    bencher
        .counter(BytesCount::new(len * STRIPE_SOURCES))
        .bench_local(|| xor_many(black_box(&mut dst), black_box(&views)));
}

/// A byte-at-a-time loop, the baseline the word-wise code is measured against.
#[divan::bench(args = [64 * 1024])]
fn bytewise_baseline(bencher: Bencher, len: usize) {
    let src = filled(len, 1);
    let mut dst = filled(len, 2);
    bencher.counter(BytesCount::new(len)).bench_local(|| {
        for (d, s) in black_box(&mut dst).iter_mut().zip(black_box(&src)) {
            // `black_box` per byte stops LLVM from vectorising the baseline itself.
            *d = black_box(*d ^ *s);
        }
    });
}
