//! Eager compaction (the paper's §3.2): fold the records of one window that touch
//! the same row into one, and sort what is left by physical page.
//!
//! **Folding rules** for the records of one row within a window, oldest first
//! (a consistent log inserts only absent rows and updates or deletes only present
//! ones):
//!
//! | first | last | result |
//! |---|---|---|
//! | insert | insert / update | one insert of the final image (full row) |
//! | insert | delete | nothing (the row neither existed before nor after) |
//! | update / delete | delete | one delete |
//! | update | update, no delete between | one update of the final image |
//! | update / delete | insert / update, a delete between | one insert of the final image |
//!
//! A folded update's size is the largest of the updates it folds (TPC-C's
//! transactions change the same columns of a row each time; assumed); a folded
//! insert is the size of the last insert it folds (a consistent log has one).
//!
//! The result is sorted by (page, row), so each page is visited once and pages in
//! ascending order; its LSN is the last folded record's, so replaying it leaves
//! every row with the image the original log leaves (property-tested against a
//! naive replay in `tests/compaction.rs`).

use crate::log::{LogRecord, RecordKind};

/// What compaction did to one window.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct CompactionCounts {
    pub records_in: u64,
    pub records_out: u64,
    pub bytes_in: u64,
    pub bytes_out: u64,
    /// Distinct pages the output touches.
    pub pages: u64,
}

/// Reusable scratch space, so compacting window after window allocates once.
#[derive(Clone, Default)]
pub struct Compactor {
    keys: Vec<(u64, u64, u32)>,
}

impl Compactor {
    /// Fold and sort `window` (in LSN order) into `out` (cleared first).
    pub fn compact(&mut self, window: &[LogRecord], out: &mut Vec<LogRecord>) -> CompactionCounts {
        assert!(window.len() < u32::MAX as usize, "window too large");
        out.clear();
        self.keys.clear();
        self.keys.extend(
            window
                .iter()
                .enumerate()
                .map(|(index, r)| (r.page.0, r.record.0, index as u32)),
        );
        // The index breaks ties, so records of a row stay in LSN order.
        self.keys.sort_unstable();
        let mut counts = CompactionCounts {
            records_in: window.len() as u64,
            ..CompactionCounts::default()
        };
        let mut last_page = None;
        let mut start = 0;
        while start < self.keys.len() {
            let (page, record, _) = self.keys[start];
            let mut end = start + 1;
            while end < self.keys.len() && self.keys[end].0 == page && self.keys[end].1 == record {
                end += 1;
            }
            if let Some(folded) = fold(window, &self.keys[start..end]) {
                if last_page != Some(page) {
                    counts.pages += 1;
                    last_page = Some(page);
                }
                counts.bytes_out += u64::from(folded.bytes);
                out.push(folded);
            }
            start = end;
        }
        counts.records_out = out.len() as u64;
        counts.bytes_in = crate::log::log_bytes(window);
        counts
    }
}

/// The one record (or none) that the records of one row, `group` (indices into
/// `window` in LSN order), fold into.
fn fold(window: &[LogRecord], group: &[(u64, u64, u32)]) -> Option<LogRecord> {
    let first = window[group[0].2 as usize];
    if group.len() == 1 {
        return Some(first);
    }
    let last = window[group[group.len() - 1].2 as usize];
    let records = || group.iter().map(|&(_, _, i)| &window[i as usize]);
    let deleted_between = records().any(|r| r.kind == RecordKind::Delete);
    let mut folded = last;
    match (first.kind, last.kind) {
        (RecordKind::Insert, RecordKind::Delete) => return None,
        (_, RecordKind::Delete) => {}
        (RecordKind::Update, RecordKind::Update) if !deleted_between => {
            folded.bytes = records().map(|r| r.bytes).max().unwrap_or(last.bytes);
        }
        _ => {
            folded.kind = RecordKind::Insert;
            folded.bytes = records()
                .rfind(|r| r.kind == RecordKind::Insert)
                .map_or(last.bytes, |r| r.bytes);
        }
    }
    Some(folded)
}
