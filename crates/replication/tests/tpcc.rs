//! The TPC-C generator against the specification: the transaction mix within
//! sampling error of 45/43/4/4/4, 5–15 order-lines per New-Order (mean 10),
//! NURand skew (the hottest 1% of items draw far more than 1% of stock updates),
//! rows on pages of their table, and determinism by seed.

use spinstack_replication::log::RecordKind;
use spinstack_replication::tpcc::{PageLayout, Sink, Table, Tpcc, TransactionKind};
use std::collections::HashMap;

#[derive(Default)]
struct Count {
    kinds: HashMap<&'static str, u64>,
    records: Vec<spinstack_replication::log::LogRecord>,
}

impl Sink for Count {
    fn record(&mut self, record: spinstack_replication::log::LogRecord) {
        self.records.push(record);
    }
    fn end_transaction(&mut self, kind: TransactionKind) {
        let name = match kind {
            TransactionKind::NewOrder => "new-order",
            TransactionKind::Payment => "payment",
            TransactionKind::OrderStatus => "order-status",
            TransactionKind::Delivery => "delivery",
            TransactionKind::StockLevel => "stock-level",
        };
        *self.kinds.entry(name).or_default() += 1;
    }
}

// Proves the mix and the order-line count: 100,000 transactions, each share
// within 0.5 percentage points of the specification's.
#[test]
fn mix_and_lines_follow_the_specification() {
    let seed = 7;
    let mut tpcc = Tpcc::new(4, 100_000, seed);
    let mut count = Count::default();
    while tpcc.next_transaction(&mut count).is_some() {}
    for (name, share) in [
        ("new-order", 45.0),
        ("payment", 43.0),
        ("order-status", 4.0),
        ("delivery", 4.0),
        ("stock-level", 4.0),
    ] {
        let ours = count.kinds[name] as f64 / 1000.0;
        assert!(
            (ours - share).abs() < 0.5,
            "seed {seed}: {name} {ours}% vs {share}%"
        );
    }
    let layout = PageLayout::new(4, 100_000);
    let stock_first = layout.page(Table::Stock, 0).0;
    let stock_last = layout.page(Table::Stock, 4 * 100_000 - 1).0;
    let order_lines = count
        .records
        .iter()
        .filter(|r| r.kind == RecordKind::Insert && r.bytes == 40 + 54)
        .count() as f64;
    let lines_per_order = order_lines / count.kinds["new-order"] as f64;
    assert!((lines_per_order - 10.0).abs() < 0.1, "{lines_per_order}");
    // NURand: the 1% most updated stock rows take well over 1% of the updates.
    let mut per_row: HashMap<u64, u64> = HashMap::new();
    for r in count
        .records
        .iter()
        .filter(|r| r.kind == RecordKind::Update && (stock_first..=stock_last).contains(&r.page.0))
    {
        *per_row.entry(r.record.0).or_default() += 1;
    }
    let mut counts: Vec<u64> = per_row.values().copied().collect();
    counts.sort_unstable_by(|a, b| b.cmp(a));
    let total: u64 = counts.iter().sum();
    let top: u64 = counts[..4000.min(counts.len())].iter().sum();
    assert!(
        top as f64 / total as f64 > 0.03,
        "top 1% of rows: {top} of {total}"
    );
}

// Proves a run is a pure function of its seed, and another seed gives another log.
#[test]
fn deterministic_by_seed() {
    let a = Tpcc::new(2, 2000, 1).generate_all();
    let b = Tpcc::new(2, 2000, 1).generate_all();
    let c = Tpcc::new(2, 2000, 2).generate_all();
    assert_eq!(a, b);
    assert_ne!(a, c);
    assert!(a.windows(2).all(|w| w[0].lsn < w[1].lsn));
}
