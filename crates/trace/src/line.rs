//! What a format's line parser hands the shared reader: the one type both sides of
//! that boundary name, kept apart so the parsers need nothing else of the reader.

use crate::TraceRecord;

/// What one line of a trace holds.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Line {
    Record(TraceRecord),
    /// A line with no request: blank, a header, an event of another kind, the
    /// lines of blkparse's closing summary.
    Skip,
}
