//! Eager compaction against a naive reference: replaying a compacted window must
//! leave every row with the final image (the LSN of its last change) or absence
//! that replaying the original window leaves, starting from any consistent state;
//! the output is sorted by page and holds at most one record per row. Logs are
//! generated consistent (inserts only of absent rows, updates and deletes only of
//! present ones) from a seeded model, and TPC-C windows are checked too.

use proptest::prelude::*;
use spinstack_replication::compact::Compactor;
use spinstack_replication::log::{LogRecord, Lsn, PageId, RecordId, RecordKind};
use spinstack_replication::tpcc::Tpcc;
use std::collections::HashMap;

/// Row → its image (the LSN that wrote it); absent rows are missing.
type Image = HashMap<u64, u64>;

fn replay(state: &mut Image, records: &[LogRecord]) {
    for r in records {
        match r.kind {
            RecordKind::Insert | RecordKind::Update => {
                state.insert(r.record.0, r.lsn.0);
            }
            RecordKind::Delete => {
                state.remove(&r.record.0);
            }
        }
    }
}

/// A consistent log of `ops` operations over `rows` rows, rows `0..rows/2`
/// present at the start; row r lives on page r / 3.
fn consistent_log(ops: &[(u8, u8)], rows: u64) -> (Image, Vec<LogRecord>) {
    let initial: Image = (0..rows / 2).map(|r| (r, u64::MAX - r)).collect();
    let mut present: Image = initial.clone();
    let mut log = Vec::new();
    for (lsn, &(row, op)) in ops.iter().enumerate() {
        let row = u64::from(row) % rows;
        let kind = match (present.contains_key(&row), op % 3) {
            (false, _) => RecordKind::Insert,
            (true, 0) => RecordKind::Delete,
            (true, _) => RecordKind::Update,
        };
        let record = LogRecord {
            lsn: Lsn(lsn as u64),
            record: RecordId::new(1, row),
            page: PageId(row / 3),
            bytes: 40 + u32::from(op),
            kind,
            ends_transaction: op % 2 == 0,
        };
        replay(&mut present, std::slice::from_ref(&record));
        log.push(record);
    }
    let initial = initial
        .into_iter()
        .map(|(row, image)| (RecordId::new(1, row).0, image))
        .collect();
    (initial, log)
}

fn check(initial: &Image, log: &[LogRecord]) -> Result<(), TestCaseError> {
    let mut compactor = Compactor::default();
    let mut compacted = Vec::new();
    let counts = compactor.compact(log, &mut compacted);
    let (mut expected, mut actual) = (initial.clone(), initial.clone());
    replay(&mut expected, log);
    replay(&mut actual, &compacted);
    prop_assert_eq!(&expected, &actual);
    prop_assert!(compacted
        .windows(2)
        .all(|w| (w[0].page, w[0].record) < (w[1].page, w[1].record)));
    prop_assert_eq!(counts.records_out as usize, compacted.len());
    prop_assert!(counts.records_out <= counts.records_in);
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    // Proves folding and sorting preserve every row's final image on arbitrary
    // consistent logs with many repeats of few rows.
    #[test]
    fn compaction_preserves_final_images(
        ops in proptest::collection::vec((any::<u8>(), any::<u8>()), 0..400),
        rows in 1u64..40,
    ) {
        let (initial, log) = consistent_log(&ops, rows);
        check(&initial, &log)?;
    }

    // Proves the same on TPC-C windows (any seed, warehouses, window start).
    #[test]
    fn tpcc_windows_preserve_final_images(seed in any::<u64>(), warehouses in 1u32..4, skip in 0usize..2000) {
        let log = Tpcc::new(warehouses, 400, seed).generate_all();
        let window = &log[skip.min(log.len())..];
        // Every TPC-C row a window updates or deletes exists before it: start
        // from all of them present (inserted rows are fresh).
        let mut initial = Image::new();
        for r in window {
            if r.kind != RecordKind::Insert {
                initial.entry(r.record.0).or_insert(u64::MAX);
            }
        }
        // Rows the window inserts are absent before it.
        check(&initial, window)?;
    }
}

// Proves the paper's example: insert, update, update of one row fold into one
// insert carrying the last image (a test that would fail if folding kept the
// first image or the update kind).
#[test]
fn paper_example_folds_into_one_insert() {
    let row = RecordId::new(2, 7);
    let make = |lsn, kind, bytes| LogRecord {
        lsn: Lsn(lsn),
        record: row,
        page: PageId(5),
        bytes,
        kind,
        ends_transaction: true,
    };
    let log = [
        make(1, RecordKind::Insert, 300),
        make(2, RecordKind::Update, 60),
        make(3, RecordKind::Update, 60),
    ];
    let mut out = Vec::new();
    Compactor::default().compact(&log, &mut out);
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].kind, RecordKind::Insert);
    assert_eq!(out[0].lsn, Lsn(3));
    assert_eq!(out[0].bytes, 300);
}
