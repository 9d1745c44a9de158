//! Speed of the log generator and of eager compaction, in records per second
//! (issue 10 asks for at least 5 million per second each): TPC-C at W = 16 and
//! W = 160, 20,000 transactions (about 350,000 records), and compaction of those
//! records as one window (the 512 MB window of a full run holds more records, and
//! sorting is n log n, so a larger window is a little slower per record).

use divan::counter::ItemsCount;
use divan::Bencher;
use spinstack_replication::compact::Compactor;
use spinstack_replication::tpcc::Tpcc;

fn main() {
    divan::main();
}

const TRANSACTIONS: u64 = 20_000;

#[divan::bench(args = [16, 160])]
fn generate(bencher: Bencher, warehouses: u32) {
    let records = Tpcc::new(warehouses, TRANSACTIONS, 1).generate_all().len();
    bencher
        .counter(ItemsCount::new(records))
        .bench(|| Tpcc::new(warehouses, TRANSACTIONS, 1).generate_all());
}

#[divan::bench(args = [16, 160])]
fn compact(bencher: Bencher, warehouses: u32) {
    let records = Tpcc::new(warehouses, TRANSACTIONS, 1).generate_all();
    let mut compactor = Compactor::default();
    let mut out = Vec::new();
    bencher
        .counter(ItemsCount::new(records.len()))
        .bench_local(|| compactor.compact(&records, &mut out));
}
