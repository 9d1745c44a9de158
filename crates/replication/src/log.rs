//! Log records: what the secondary receives, one per row change.
//!
//! A record names the row it changes ([`RecordId`]) and the 8 KB page that row lives
//! on ([`PageId`]). Its LSN also names the row's after-image (each change produces
//! a new one), so a test can check that replaying a compacted log leaves every row
//! with the same final image as replaying the original.

use serde::Serialize;

/// Bytes in one database page (TPC-C rows are placed on pages of this size).
pub const PAGE_BYTES: u64 = 8192;

/// A log sequence number: the order the primary wrote the records in.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct Lsn(pub u64);

/// A row: its table in the top 8 bits, its row number below.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct RecordId(pub u64);

impl RecordId {
    pub fn new(table: u8, row: u64) -> RecordId {
        debug_assert!(row < 1 << 56);
        RecordId((u64::from(table) << 56) | row)
    }
}

/// A database page (8 KB), numbered across the whole database.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct PageId(pub u64);

/// What a record does to its row.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub enum RecordKind {
    /// The row did not exist; the record carries its full image.
    Insert,
    /// The row exists; the record carries the after-image of the changed columns.
    Update,
    /// The row exists and is removed.
    Delete,
}

/// One log record.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct LogRecord {
    /// Its place in the log, and the name of the after-image it writes.
    pub lsn: Lsn,
    pub record: RecordId,
    pub page: PageId,
    /// Size of the record in the log.
    pub bytes: u32,
    pub kind: RecordKind,
    /// Whether this is the transaction's last record (its commit is acknowledged
    /// once the secondary's log volume holds it).
    pub ends_transaction: bool,
}

/// Sum of the records' sizes in bytes.
pub fn log_bytes(records: &[LogRecord]) -> u64 {
    records.iter().map(|r| u64::from(r.bytes)).sum()
}
